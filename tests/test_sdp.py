"""TK learning by SDP (paper 000 Opt. (24)): same optimum as Frank-Wolfe, trace mapping, memory guard, solvers."""
from __future__ import annotations

import numpy as np
import pytest

from tkbench.data import load_dataset
from tkbench.errors import MissingDependencyError, TkbenchError
from tkbench.kernels.tessellated import box, n_basis, tk_basis_kernels, tk_gradient, tk_kernel
from tkbench.solvers.frank_wolfe import frank_wolfe
from tkbench.solvers.sdp import SDPTooLarge, check_solver, estimate_memory_bytes, solve_tk_sdp


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
