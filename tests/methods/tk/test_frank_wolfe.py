"""Frank-Wolfe TK learning against the same saddle problem solved as one convex program (cvxpy + Clarabel)."""
from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from sklearn.svm import SVC, SVR

from tests.methods.tk.tk_problems import _small, convex_optimum
from tkbench.methods._shared.svm import solve_dual
from tkbench.methods.tk.frank_wolfe import frank_wolfe, top_eigenpair
from tkbench.methods.tk.kernel import box, n_basis, tk_gradient, tk_kernel


@pytest.mark.parametrize("task,C", [("classification", 2.0), ("regression", 1.0)])
def test_fw_brackets_the_convex_program_optimum(task, C):
    X, y = _small(task, 40)
    a, b = box(2, 0.1)
    d, basis = 1, "x"
    size = 2 * n_basis(2, d, basis)
    res = frank_wolfe(lambda P: tk_kernel(X, None, P, a, b, d, basis), lambda w: tk_gradient(X, w, a, b, d, basis),
                      size, y, task=task, C=C, epsilon=0.1, tol=1e-5, max_iter=400, svm_tol=1e-8)
    opt = convex_optimum(task, 40, C)  # this problem (d = 1, basis "x"), solved once per session
    assert res.converged
    assert res.dual <= opt * (1 + 1e-4) + 1e-6 and opt <= res.primal * (1 + 1e-4) + 1e-6
    assert res.primal == pytest.approx(opt, rel=1e-4)
    # the bounds hold at every iteration, and the primal never increases
    primal = [h["primal"] for h in res.history]
    assert all(h["dual"] <= opt * (1 + 1e-4) for h in res.history)
    assert all(p2 <= p1 * (1 + 1e-6) for p1, p2 in zip(primal, primal[1:], strict=False))


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_svm_dual_value_matches_a_qp(task):
    X, y = _small(task, 30, seed=2)
    K = np.exp(-3 * ((X[:, None] - X[None]) ** 2).sum(-1))
    C, eps = 3.0, 0.1
    sol = solve_dual(K, y, task=task, C=C, epsilon=eps, tol=1e-8)
    L = np.linalg.cholesky(K + 1e-10 * np.eye(len(y)))
    w = cp.Variable(len(y))
    if task == "classification":
        alpha = cp.multiply(y, w)
        prob = cp.Problem(cp.Maximize(cp.sum(alpha) - 0.5 * cp.sum_squares(L.T @ w)),
                          [alpha >= 0, alpha <= C, cp.sum(w) == 0])
        model = SVC(kernel="precomputed", C=C, tol=1e-8).fit(K, y)
    else:
        prob = cp.Problem(cp.Maximize(y @ w - eps * cp.norm1(w) - 0.5 * cp.sum_squares(L.T @ w)),
                          [cp.abs(w) <= C, cp.sum(w) == 0])
        model = SVR(kernel="precomputed", C=C, epsilon=eps, tol=1e-8).fit(K, y)
    prob.solve(solver=cp.CLARABEL)
    assert sol.value == pytest.approx(prob.value, rel=1e-5)
    np.testing.assert_allclose(K @ sol.w + sol.intercept, model.decision_function(K) if task == "classification"
                               else model.predict(K), atol=1e-8)


def test_top_eigenpair_matches_the_full_decomposition():
    rng = np.random.default_rng(5)
    A = rng.normal(size=(40, 40))
    D = A @ A.T
    lam, v = top_eigenpair(D)
    full, vecs = np.linalg.eigh(D)
    assert lam == pytest.approx(full[-1], rel=1e-12)
    assert abs(v @ vecs[:, -1]) == pytest.approx(1.0, abs=1e-10)  # the same unit vector up to sign


def test_svm_solve_reports_libsvm_iteration_cap():
    """LIBSVM's own cap max(10^7, 100 m) is the default; a capped solve says so and stays feasible (a lower bound)."""
    from tkbench.methods._shared.svm import libsvm_iteration_cap

    assert libsvm_iteration_cap(485) == 10_000_000 and libsvm_iteration_cap(200_000) == 20_000_000
    X, y = _small("classification", 40, seed=3)
    K = np.exp(-3 * ((X[:, None] - X[None]) ** 2).sum(-1))
    full = solve_dual(K, y, task="classification", C=100.0, tol=1e-8)
    cut = solve_dual(K, y, task="classification", C=100.0, tol=1e-8, max_iter=3)
    assert not full.capped and full.n_iter > 3
    assert cut.capped and cut.n_iter == 3
    alpha = y * cut.w
    assert alpha.min() >= -1e-12 and alpha.max() <= 100.0 + 1e-9 and abs(cut.w.sum()) < 1e-9
    assert cut.value < full.value


@pytest.mark.parametrize("capped", [False, True])
def test_fw_never_certifies_a_gap_from_a_capped_svm_solve(cap_every_svm_solve, capped):
    """With a loose tol FW stops at iteration 0; when every SVM solve hit the cap it must not call that converged."""
    import tkbench.methods.tk.frank_wolfe as fw_module

    if capped:
        cap_every_svm_solve(fw_module)
    X, y = _small("classification", 30)
    a, b = box(2, 0.1)
    size = 2 * n_basis(2, 1, "x")
    res = frank_wolfe(lambda P: tk_kernel(X, None, P, a, b, 1, "x"), lambda w: tk_gradient(X, w, a, b, 1, "x"),
                      size, y, task="classification", C=1.0, tol=10.0, max_iter=3)
    if capped:
        assert not res.converged and res.n_iter == 3 and res.n_svm_capped == res.n_svm_solves > 0
        assert all(h.get("svm_capped") for h in res.history)
    else:
        assert res.converged and res.n_iter == 0 and res.n_svm_capped == 0


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_fw_stops_on_the_best_bound_so_far_not_the_iterates_own_gap(monkeypatch, task):
    """The stop rule's gap is OPT_A(P_k) minus the largest OPT_P(alpha_j), j <= k (every one a lower bound on OPT*):
    with the lower bound of every other iteration weakened tenfold (a valid but loose bound, as the non-monotone
    FW gap of Gas Turbine gave, issue 21), the certificate keeps the earlier bound, and the run stops within the
    same tolerance of the convex program's optimum."""
    import tkbench.methods.tk.frank_wolfe as fw_module

    calls = []

    def loose_on_odd_calls(D):
        lam, v = top_eigenpair(D)
        calls.append(lam)
        return (10 * lam if len(calls) % 2 == 0 else lam), v

    monkeypatch.setattr(fw_module, "top_eigenpair", loose_on_odd_calls)
    X, y = _small(task, 40)
    a, b = box(2, 0.1)
    size = 2 * n_basis(2, 1, "x")
    res = frank_wolfe(lambda P: tk_kernel(X, None, P, a, b, 1, "x"), lambda w: tk_gradient(X, w, a, b, 1, "x"),
                      size, y, task=task, C=1.0, epsilon=0.1, tol=1e-3, max_iter=400, svm_tol=1e-8)
    opt = convex_optimum(task, 40, 1.0)
    best = -np.inf
    for h in res.history:
        best = max(best, h["dual"])
        assert h["best_dual"] == best and h["gap"] == pytest.approx(h["primal"] - best)
        assert h["relative_gap"] == pytest.approx((h["primal"] - best) / abs(h["primal"]))
        assert h["fw_gap"] == pytest.approx(h["primal"] - h["dual"]) and h["fw_gap"] >= h["gap"]
        assert best <= opt * (1 + 1e-4) + 1e-6
    assert any(h["best_dual"] > h["dual"] for h in res.history), "no weakened bound was carried over"
    assert res.converged and res.history[-1]["relative_gap"] <= 1e-3
    assert res.primal == pytest.approx(opt, rel=2e-3)
