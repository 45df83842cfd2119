"""The active-set polish of the normalised SVM dual (tkbench.methods.sikl.active_set) against cvxpy and LIBSVM."""
from __future__ import annotations

import math
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from tkbench.methods.sikl.active_set import LowRankPlusDiagonal, polish


def _factors(l, rank, seed):  # noqa: E741
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(l) < 0.5, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    # Q = F^T F + tau I as in (27): F's rows (the cosine factors) with decaying weights, plus a tiny ridge
    return rng.normal(size=(rank, l)) * y * np.logspace(0, -4, rank)[:, None], y


def _problem(l, rank, tau, seed):  # noqa: E741
    F, y = _factors(l, rank, seed)
    return F.T @ F + tau * np.eye(l), y


def _cvxpy(Q, y, C):
    a = cp.Variable(len(y))
    cons = [y @ a == 0, cp.sum(a) == 2, a >= 0] + ([a <= C] if math.isfinite(C) else [])
    cp.Problem(cp.Minimize(cp.quad_form(a, cp.psd_wrap(Q))), cons).solve(solver="CLARABEL")
    return a.value


def _loose_libsvm(Q, y, tol=1e-3, max_iter=10_000):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # SMO may stop at the cap: the start is only a guess
        svm = SVC(kernel="precomputed", C=1e12, tol=tol, max_iter=max_iter).fit(Q * np.outer(y, y), y)
    a = np.zeros(len(y))
    a[svm.support_] = np.abs(svm.dual_coef_[0])
    for c in (1.0, -1.0):
        a[y == c] /= a[y == c].sum()
    return a


@pytest.mark.parametrize("tau", [1e-2, 1e-8, 1e-12])
def test_polish_is_exact_from_a_loose_libsvm_start(tau):
    Q, y = _problem(60, 80, tau, seed=1)
    a = polish(Q, y, _loose_libsvm(Q, y))
    assert a is not None
    ref = _cvxpy(Q, y, math.inf)
    assert abs(float(y @ a)) < 1e-10 and abs(a.sum() - 2.0) < 1e-10 and a.min() >= 0.0
    assert a @ Q @ a <= ref @ Q @ ref + 1e-8 * (ref @ Q @ ref)


@pytest.mark.parametrize("C, bounds_active", [(0.05, True), (0.2, False)])
def test_polish_with_a_finite_box_from_a_poor_start(C, bounds_active):
    Q, y = _problem(50, 10, 1e-3, seed=2)
    start = np.where(y > 0, 1.0 / (y > 0).sum(), 1.0 / (y < 0).sum())  # every point free: far from the answer
    a = polish(Q, y, start, C)
    assert a is not None
    ref = _cvxpy(Q, y, C)
    assert a.max() <= C and a.min() >= 0.0
    assert ref @ Q @ ref * (1 - 1e-4) <= a @ Q @ a <= ref @ Q @ ref * (1 + 1e-9)  # exact: never above Clarabel
    assert (np.sum(a == C) + np.sum(a == 0.0) > 0) == bounds_active  # at C = 0.05 the sets had to change


def test_polish_refuses_what_it_cannot_certify():
    Q, y = _problem(20, 5, 1e-3, seed=3)
    start = np.where(y > 0, 1.0, 0.0)  # no free point in the negative class
    assert polish(Q, y, start) is None


@pytest.mark.parametrize("C", [math.inf, 0.05])
def test_polish_on_the_rank_2_form_equals_the_dense_one(C):
    """The cosine mixture's Q = F^T F + tau I as an operator (no l x l matrix): the same iterates, so the same
    answer as on the formed matrix, from a poor start that makes the active sets change."""
    F, y = _factors(70, 12, seed=4)
    tau = 1e-3
    start = np.where(y > 0, 1.0 / (y > 0).sum(), 1.0 / (y < 0).sum())
    Q = LowRankPlusDiagonal(F, tau)
    rows, cols = np.array([3, 0, 5]), np.array([5, 1, 3, 0])
    dense = F.T @ F + tau * np.eye(70)
    np.testing.assert_allclose(Q.block(rows, cols), dense[np.ix_(rows, cols)], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(Q @ start, dense @ start, rtol=1e-12)
    a_op, a_dense = polish(Q, y, start, C), polish(dense, y, start, C)
    assert a_op is not None and a_dense is not None
    np.testing.assert_allclose(a_op, a_dense, atol=1e-10)
    ref = _cvxpy(dense, y, C)
    assert a_op @ dense @ a_op <= ref @ dense @ ref * (1 + 1e-9)


@pytest.mark.parametrize(("tau", "C"), [(1e-1, math.inf), (1e-3, math.inf), (1e-2, 0.05), (1e-4, math.inf)])
def test_woodbury_solve_of_the_free_system_equals_the_dense_one(tau, C):
    """Many free points, few factor rows (the soft margin of a large training set): the Woodbury solve of the KKT
    system equals the dense one, and the polish's answer on the operator equals the dense polish's (cvxpy's
    optimum or better)."""
    from tkbench.methods.sikl import active_set

    F, y = _factors(300, 6, seed=9)
    Q = LowRankPlusDiagonal(F, tau)
    dense = F.T @ F + tau * np.eye(300)
    rng = np.random.default_rng(1)
    free = rng.random(300) < 0.8
    upper = ~free & (rng.random(300) < 0.5) if math.isfinite(C) else np.zeros(300, dtype=bool)
    alpha = np.where(upper, C, 0.0) if math.isfinite(C) else np.zeros(300)
    assert free.sum() >= active_set.WOODBURY_RATIO * F.shape[0]
    got = active_set._solve_free_woodbury(Q, y, alpha, np.flatnonzero(free), upper)
    ref = active_set._solve_free(active_set._Dense(dense), y, alpha, free, upper)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-7, atol=1e-9 * np.abs(ref[0]).max())
    np.testing.assert_allclose(got[1:], ref[1:], rtol=1e-6, atol=1e-12)
    start = np.where(y > 0, 1.0 / (y > 0).sum(), 1.0 / (y < 0).sum())
    a_op, a_dense = polish(Q, y, start, C), polish(dense, y, start, C)
    assert a_op is not None and a_dense is not None
    np.testing.assert_allclose(a_op, a_dense, atol=1e-8)
    best = _cvxpy(dense, y, C)
    assert a_op @ dense @ a_op <= best @ dense @ best * (1 + 1e-8)
