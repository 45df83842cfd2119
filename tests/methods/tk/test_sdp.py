"""TK learning by SDP (paper 000 Opt. (24)): same optimum as Frank-Wolfe, trace mapping, memory guard, solvers."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from tkbench.data import load_dataset
from tkbench.errors import MissingDependencyError, TkbenchError
from tkbench.methods._shared.conic import check_solver
from tkbench.methods.tk.frank_wolfe import frank_wolfe
from tkbench.methods.tk.kernel import box, n_basis, tk_basis_kernels, tk_gradient, tk_kernel
from tkbench.methods.tk.sdp import SDPTooLarge, estimate_memory_bytes, solve_tk_sdp


def _problem(task, m=30):
    if task == "classification":
        ds = load_dataset("spiral", {"n_samples": m, "noise": 0.05, "seed": 1})
        X, y = ds.X, ds.y
    else:
        rng = np.random.default_rng(1)
        X = rng.uniform(0, 1, (m, 2))
        y = np.cos(4 * X[:, 0]) * X[:, 1] + 0.05 * rng.standard_normal(m)
    X = (X - X.min(0)) / (X.max(0) - X.min(0))
    return X, y


@pytest.mark.parametrize("task,C", [("classification", 1.0), ("regression", 2.0)])
def test_sdp_and_frank_wolfe_reach_the_same_optimum(task, C):
    X, y = _problem(task)
    a, b = box(2, 0.1)
    size = 2 * n_basis(2, 1, "x")
    sdp = solve_tk_sdp(tk_basis_kernels(X, a, b, 1, "x"), size, y, task=task, C=C)
    fw = frank_wolfe(lambda P: tk_kernel(X, None, P, a, b, 1, "x"), lambda w: tk_gradient(X, w, a, b, 1, "x"),
                     size, y, task=task, C=C, tol=1e-5, max_iter=400, svm_tol=1e-8)
    assert fw.dual <= sdp.value * (1 + 1e-4) and sdp.value <= fw.primal * (1 + 1e-4)
    assert np.trace(sdp.P) == pytest.approx(size, rel=1e-6)
    assert np.linalg.eigvalsh(sdp.P).min() > -1e-6 * size


def test_trace_normalisation_maps_C():
    """trace(P) = T with penalty C has value OPT_1(T C) / T under trace(P) = 1 (paper 000's normalisation)."""
    X, y = _problem("classification", 24)
    a, b = box(2, 0.1)
    basis = tk_basis_kernels(X, a, b, 1, "x")
    size = 2 * n_basis(2, 1, "x")
    big = solve_tk_sdp(basis, size, y, task="classification", C=0.5)
    unit = solve_tk_sdp(basis, size, y, task="classification", C=0.5 * size, trace=1.0)
    assert big.value == pytest.approx(unit.value / size, rel=1e-4)


def test_memory_guard_refuses_what_cannot_fit():
    assert estimate_memory_bytes(150, "classification") == pytest.approx(6.8e9, rel=0.05)
    assert estimate_memory_bytes(200, "classification") > 20e9  # the size that aborted the process here
    X, y = _problem("classification", 20)
    a, b = box(2, 0.1)
    with pytest.raises(SDPTooLarge, match="needs about .* GiB .* use solver 'fw'"):
        solve_tk_sdp(tk_basis_kernels(X, a, b, 1, "x"), 6, y, task="classification", C=1.0, memory_limit=1e6)


def test_solver_choice_is_checked():
    assert check_solver("clarabel") == "CLARABEL" and check_solver("scs") == "SCS"
    with pytest.raises(TkbenchError, match="expected one of clarabel, scs, mosek"):
        check_solver("cvxopt")
    try:
        import mosek  # noqa: F401
    except ImportError:
        with pytest.raises(MissingDependencyError, match="not installed .* clarabel is the default"):
            check_solver("mosek")
    else:  # installed: either licensed (returns) or a clear message naming the alternatives
        try:
            check_solver("mosek")
        except MissingDependencyError as exc:
            assert "licence" in str(exc) and "clarabel" in str(exc)


def test_clarabel_uses_the_runs_thread_budget(monkeypatch):
    """faer (Clarabel's factorisation) has its own thread pool: it gets the run's BLAS limit, not every core."""
    import cvxpy as cp
    from threadpoolctl import threadpool_limits

    from tkbench.methods._shared.conic import thread_budget

    seen = []
    real = cp.Problem.solve

    def spy(self, *args, **kwargs):
        seen.append(kwargs.get("max_threads"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cp.Problem, "solve", spy)
    X, y = _problem("classification", 20)
    a, b = box(2, 0.1)
    with threadpool_limits(limits=1):
        assert thread_budget() == 1
        solve_tk_sdp(tk_basis_kernels(X, a, b, 1, "x"), 6, y, task="classification", C=1.0)
    assert seen == [1]


def test_clarabel_numerical_error_is_retried_with_more_regularisation(monkeypatch):
    import cvxpy as cp

    real, calls = cp.Problem.solve, []

    def first_fails(self, *args, **kwargs):
        calls.append(kwargs)
        if len(calls) == 1:
            raise cp.error.SolverError("Solver 'CLARABEL' failed.")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cp.Problem, "solve", first_fails)
    X, y = _problem("classification", 20)
    a, b = box(2, 0.1)
    basis = tk_basis_kernels(X, a, b, 1, "x")
    res = solve_tk_sdp(basis, 6, y, task="classification", C=1.0)
    assert res.retried and calls[1]["static_regularization_constant"] == 1e-7
    monkeypatch.setattr(cp.Problem, "solve", lambda self, *a, **k: (_ for _ in ()).throw(cp.error.SolverError("x")))
    with pytest.raises(TkbenchError, match="numerical error, also when retried .* try sdp_solver: scs"):
        solve_tk_sdp(basis, 6, y, task="classification", C=1.0)


def test_cancer_subsample_that_stopped_clarabel_is_solved_to_the_frank_wolfe_optimum():
    """Cancer, 25 points (tkl2021_table1, split 0): Clarabel 0.11 stopped at its first step with a numerical error.
    With the retry the TK learner's SDP is solved, to the value Frank-Wolfe reaches on the same problem."""
    from threadpoolctl import threadpool_limits

    from tkbench.bench.plan import make_plan
    from tkbench.config import load_config
    from tkbench.data.splits import train_test_indices, training_subset
    from tkbench.methods.registry import get_family
    from tkbench.methods.tk.estimators import TKClassifier

    spec = next(s for s in make_plan(load_config("configs/tkl2021_table1.yaml"))
                if s.dataset == "cancer" and s.method == "tk_sdp" and s.size == 25 and s.split == 0)
    ds = load_dataset("cancer", {})
    train, _ = train_test_indices(ds.y, test_fraction=0.2, seed=spec.seed, stratify=True)
    train = training_subset(train, 25, spec.seed + 1)
    X, y = ds.X[train], ds.y[train]
    with threadpool_limits(limits=1):
        sdp = TKClassifier(C=1.0, delta=0.1, solver="sdp").fit(X, y)
    fw = TKClassifier(C=1.0, delta=0.1, solver="fw", tol=1e-6, max_iter=2000, svm_tol=1e-9).fit(X, y)
    assert get_family("tk").diagnostics(sdp)["sdp_status"].startswith("optimal")
    s, f = sdp.gap_history_[-1], fw.gap_history_[-1]
    # both certify an interval [dual, primal] around the same optimum; the SDP's is the wider one (its gap <= 1e-2)
    assert s["relative_gap"] <= 1e-2 and f["relative_gap"] <= 1e-5
    assert s["dual"] <= f["primal"] * (1 + 1e-9) and f["dual"] <= s["primal"] * (1 + 1e-9)


@pytest.mark.parametrize("capped", [False, True])
def test_sdp_refit_capped_by_libsvm_certifies_nothing(cap_every_svm_solve, capped):
    """The SDP route's convergence is the refitted SVM's gap on K(P*); a refit stopped at the cap cannot give it."""
    import tkbench.methods.tk.estimators as tk_module
    from tkbench.methods.registry import get_family

    if capped:
        cap_every_svm_solve(tk_module)
    X, y = _problem("classification", m=20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = tk_module.TKClassifier(C=1.0, delta=0.1, solver="sdp", tol=1.0).fit(X, y)
    diag = get_family("tk").diagnostics(clf)
    assert diag["n_svm_capped"] == int(capped) and diag["converged"] is (not capped)
    said = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    if capped:  # the warning says why a tiny gap is not a certificate, instead of contradicting itself
        (text,) = said
        assert "1 with SVM solves stopped at LIBSVM's iteration cap: a gap from a capped solve certifies nothing" in text
    else:
        assert said == []
