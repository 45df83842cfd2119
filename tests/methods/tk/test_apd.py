"""The 2nd-stage primal-dual booster of TK learning (paper 003 section 5.5; tkbench.methods.tk.apd)."""
from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from tests.methods.tk.tk_problems import _basis_kernels, _small, convex_optimum
from tkbench.methods._shared.svm import solve_dual
from tkbench.methods.tk import apd
from tkbench.methods.tk.apd import apd_booster, project_box_hyperplane, project_spectraplex
from tkbench.methods.tk.frank_wolfe import frank_wolfe
from tkbench.methods.tk.kernel import box, n_basis, tk_gradient, tk_kernel


@pytest.mark.parametrize("seed", range(4))
def test_projection_onto_the_box_and_hyperplane_equals_cvxpy(seed):
    rng = np.random.default_rng(seed)
    n, C = 30, 0.7
    v = 2 * rng.standard_normal(n)
    s = rng.choice([-1.0, 1.0], n)
    a = project_box_hyperplane(v, s, C)
    x = cp.Variable(n)
    cp.Problem(cp.Minimize(cp.sum_squares(x - v)), [x >= 0, x <= C, s @ x == 0]).solve(solver=cp.CLARABEL)
    assert abs(s @ a) < 1e-10 and a.min() >= 0 and a.max() <= C
    np.testing.assert_allclose(a, x.value, atol=1e-5)  # Clarabel's own accuracy
    assert np.sum((a - v) ** 2) <= np.sum((x.value - v) ** 2) + 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_projection_onto_the_spectraplex_equals_cvxpy(seed):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((6, 6))
    P = project_spectraplex(M, 6.0)
    X = cp.Variable((6, 6), symmetric=True)
    cp.Problem(cp.Minimize(cp.sum_squares(X - (M + M.T) / 2)), [X >> 0, cp.trace(X) == 6.0]).solve(
        solver=cp.CLARABEL)
    assert np.trace(P) == pytest.approx(6.0) and np.linalg.eigvalsh(P).min() > -1e-12
    np.testing.assert_allclose(P, X.value, atol=1e-5)


def _problem(task):
    X, y = _small(task, 40)
    a, b = box(2, 0.1)
    size = 2 * n_basis(2, 1, "x")
    return (X, y, size, lambda P: tk_kernel(X, None, P, a, b, 1, "x"),
            lambda w: tk_gradient(X, w, a, b, 1, "x"), _basis_kernels(X, a, b, 1, "x"))


@pytest.mark.parametrize("task,C", [("classification", 2.0), ("regression", 1.0)])
def test_the_booster_reaches_the_convex_program_optimum_with_a_certified_gap(task, C):
    X, y, size, kernel, gradient, basis = _problem(task)
    fw = frank_wolfe(kernel, gradient, size, y, task=task, C=C, epsilon=0.1, tol=1e-2, max_iter=50,
                     svm_tol=1e-8, dual_solver="smo")
    res = apd_booster(kernel, gradient, kernel(fw.P), fw.P, fw.solution, y, task=task, C=C, epsilon=0.1,
                      trace=size, tol=1e-5, max_iter=3000, certify_every=20, svm_tol=1e-8)
    assert res.converged and res.history[-1]["relative_gap"] <= 1e-5
    opt = convex_optimum(task, 40, C)  # = saddle_by_cvxpy(basis, y, task, C, 0.1, size), solved once
    last = res.history[-1]
    assert last["dual"] <= opt * (1 + 1e-6) and opt <= last["primal"] * (1 + 1e-6)
    # the certified primal is the SVM optimum at the returned P, recomputed independently with LIBSVM
    svm = solve_dual(kernel(res.P), y, task=task, C=C, epsilon=0.1, tol=1e-10)
    assert svm.value == pytest.approx(last["primal"], rel=1e-6)
    assert np.linalg.eigvalsh(res.P).min() > -1e-10 and np.trace(res.P) == pytest.approx(size)


def test_the_booster_never_stops_on_an_uncertified_gap(monkeypatch):
    """SVM solves that stop at their iteration cap certify nothing: with every certification capped the booster
    must run to its iteration limit and report no convergence, although uncapped it reaches this tolerance
    (2e-5 at iteration 20) from a start whose certified gap is above it (1.4e-3)."""
    X, y, size, kernel, gradient, _ = _problem("classification")
    fw = frank_wolfe(kernel, gradient, size, y, task="classification", C=2.0, tol=1e-2, max_iter=50,
                     svm_tol=1e-8, dual_solver="smo")
    real = apd.smo_dual

    def capped(*args, **kw):
        sol, warm = real(*args, **kw)
        sol.capped = True
        return sol, warm

    monkeypatch.setattr(apd, "smo_dual", capped)
    res = apd_booster(kernel, gradient, kernel(fw.P), fw.P, fw.solution, y, task="classification", C=2.0,
                      epsilon=0.1, trace=size, tol=1e-4, max_iter=40, certify_every=10, svm_tol=1e-8)
    assert not res.converged and res.n_iter == 40
    assert res.solution is fw.solution  # only the starting (certified) point is ever returned


@pytest.mark.parametrize("task,tol", [("classification", 1e-6), ("regression", 1e-4)])
def test_frank_wolfe_switches_to_the_booster_below_the_step_threshold(task, tol):
    # (regression at 1e-4: 320 booster iterations, 32 certified; at 1e-6 it took 1490 and 15 s of the CI's suite.
    # The booster's accuracy to 1e-5 against cvxpy's optimum is the test above.)
    X, y, size, kernel, gradient, _ = _problem(task)
    res = frank_wolfe(kernel, gradient, size, y, task=task, C=1.0, epsilon=0.1, tol=tol, max_iter=200,
                      svm_tol=1e-9, dual_solver="smo", booster_step=1.01, booster_max_iter=4000)
    boosted = [h for h in res.history if h.get("booster")]
    plain = [h for h in res.history if not h.get("booster")]
    assert boosted and plain[-1]["step"] < 1.01 and len(plain) == 1  # every step is below 1.01
    assert res.converged and boosted[-1]["relative_gap"] <= tol
    assert res.n_iter == boosted[-1]["iteration"]


def test_figure_2b_plots_the_certified_gap_against_time_with_the_switch(tmp_path):
    import pandas as pd

    from tkbench.report.plots import booster_plots

    plain = [{"iteration": i, "primal": 1 + 2.0 ** -i, "dual": 1.0, "seconds": float(i)} for i in range(6)]
    boosted = plain[:3] + [{"iteration": 3 + 10 * k, "primal": 1 + 2.0 ** -(3 + k), "dual": 1.0,
                            "seconds": 3.0 + k, "booster": True} for k in range(3)]
    rows = pd.DataFrame([
        {"status": "ok", "dataset": "cancer", "method": "fw", "split": 0, "trace": plain},
        {"status": "ok", "dataset": "cancer", "method": "fw_booster", "split": 0, "trace": boosted},
        {"status": "ok", "dataset": "pima", "method": "fw", "split": 0, "trace": plain},  # no booster: no figure
    ])
    written = booster_plots(rows, tmp_path)
    assert {p.stem for p in written} == {"booster_cancer"} and all(p.exists() for p in written)
