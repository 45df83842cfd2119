"""The hinge SVM without offset (paper 002's inner SVM (9) with the hinge loss): against cvxpy and its KKT rules."""
from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from tkbench.methods.hgk.hinge_svm import hinge_svm


def _problem(seed=0, m=60):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=m) > 0, 1.0, -1.0)
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-0.5 * sq), y


def _primal(K, y, lam, beta):
    f = K @ beta
    return lam * beta @ K @ beta + np.mean(np.maximum(0.0, 1.0 - y * f))


@pytest.mark.parametrize("lam", [1e-3, 1e-2, 1e-1])
def test_hinge_svm_solves_its_dual_qp_as_cvxpy_does(lam):
    K, y = _problem()
    m = len(y)
    res = hinge_svm(K, y, lam, tol=1e-9)
    assert res.converged and res.violation <= 1e-9
    C = 1.0 / (2.0 * lam * m)
    a = cp.Variable(m)
    L = np.linalg.cholesky(K + 1e-12 * np.eye(m))
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ cp.multiply(a, y)) - cp.sum(a)), [a >= 0, a <= C])
    problem.solve(solver=cp.CLARABEL)
    ours = 0.5 * (res.dual * y) @ K @ (res.dual * y) - res.dual.sum()
    assert ours == pytest.approx(problem.value, rel=1e-6, abs=1e-9)
    # strong duality: the primal objective of beta, divided by 2 lambda, equals minus the dual optimum
    assert _primal(K, y, lam, res.coef) / (2.0 * lam) == pytest.approx(-ours, rel=1e-6)
    np.testing.assert_allclose(K @ res.coef, K @ (a.value * y), atol=1e-4)
    # KKT: margin >= 1 where a = 0, <= 1 where a = C, = 1 in between
    f = K @ res.coef
    margin = y * f
    assert np.all(margin[res.dual <= 1e-12] >= 1 - 1e-7)
    assert np.all(margin[res.dual >= C - 1e-12] <= 1 + 1e-7)
    free = (res.dual > 1e-9) & (res.dual < C - 1e-9)
    np.testing.assert_allclose(margin[free], 1.0, atol=1e-7)


def test_hinge_svm_columns_are_independent_problems_and_bad_labels_are_refused():
    K, y = _problem(1)
    Y = np.column_stack([y, -y, np.where(np.arange(len(y)) % 3 == 0, 1.0, -1.0)])
    both = hinge_svm(K, Y, 1e-2)
    for c in range(3):
        np.testing.assert_allclose(both.coef[:, c], hinge_svm(K, Y[:, c], 1e-2).coef)
    with pytest.raises(ValueError, match="-1 or \\+1"):
        hinge_svm(K, y * 0.5, 1e-2)
