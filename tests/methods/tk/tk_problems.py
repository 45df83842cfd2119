"""The small TK saddle problems the Frank-Wolfe, booster and SDP tests share, and their optimum by an independent
convex program (cvxpy + Clarabel), computed once per session and argument set (about 1 s each at m = 40: an LMI of
size m + 1 for both tasks; the regression program's earlier (2m + 1) form took 20 s), which three tests share."""
from __future__ import annotations

import functools
import warnings

import cvxpy as cp
import numpy as np

from tkbench.data import load_dataset
from tkbench.methods.tk.kernel import box, n_basis, tk_kernel


def _small(task, m, seed=0):
    rng = np.random.default_rng(seed)
    if task == "classification":
        ds = load_dataset("circle", {"n_samples": m, "noise": 0.1, "seed": seed})
        X, y = ds.X, ds.y
    else:
        X = rng.uniform(-1, 1, (m, 2))
        y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.standard_normal(m)
    X = (X - X.min(0)) / (X.max(0) - X.min(0))
    return X, y


def saddle_by_cvxpy(basis_kernels, y, task, C, epsilon, trace):
    """min_{P PSD, tr P = T} OPT_A(P), with the SVM dual replaced by its Lagrange dual (Schur complement), linear in P.

    Classification: the dual max {1^T x - 1/2 x^T H(P) x : 0 <= x <= C, y^T x = 0}, H = diag(y) K(P) diag(y), becomes
    min C 1^T lam + t/2 s.t. [[H(P), g], [g^T, t]] PSD, g = 1 - lam + mu - y eta, lam, mu >= 0.
    Regression: the epsilon-SVR dual in beta = alpha - alpha*, max {y^T beta - eps |beta|_1 - 1/2 beta^T K(P) beta :
    |beta| <= C, 1^T beta = 0}, with -eps |beta|_1 = min_{|s| <= eps} -s^T beta and the min and max swapped (a
    convex-concave saddle on compact sets), becomes min C 1^T (lam + mu) + t/2 s.t. [[K(P), g], [g^T, t]] PSD,
    g = y - s - lam + mu - 1 eta, |s| <= eps: an (m+1) x (m+1) matrix inequality, where the (alpha, alpha*) form
    needs (2m+1) x (2m+1) (20 s of Clarabel at m = 40, against about 1 s)."""
    m = len(y)
    size = basis_kernels.shape[0]
    P = cp.Variable((size, size), symmetric=True)
    lam, mu, eta, t = cp.Variable(m, nonneg=True), cp.Variable(m, nonneg=True), cp.Variable(), cp.Variable()
    extra = []
    if task == "classification":
        J, c, E = np.diag(y.astype(float)), np.ones(m), y.astype(float)
        box = C * cp.sum(lam)  # 0 <= x: mu is the multiplier of a bound with zero right-hand side
    else:
        s = cp.Variable(m)
        J, c, E = np.eye(m), y - s, np.ones(m)
        box = C * cp.sum(lam + mu)
        extra = [cp.abs(s) <= epsilon]
    # H(P) = J^T K(P) J with K(P) = sum_ij P_ij B_ij, one numeric linear map on vec(P) (column-major, as cp.vec)
    lift = np.stack([(J.T @ basis_kernels[i, j] @ J).ravel(order="F") for j in range(size) for i in range(size)],
                    axis=1)
    H = cp.reshape(lift @ cp.vec(P, order="F"), (m, m), order="F")
    g = c - lam + mu - E * eta
    M = cp.bmat([[H, cp.reshape(g, (m, 1), order="F")], [cp.reshape(g, (1, m), order="F"), cp.reshape(t, (1, 1), order="F")]])
    prob = cp.Problem(cp.Minimize(box + t / 2), [(M + M.T) / 2 >> 0, P >> 0, cp.trace(P) == trace, *extra])
    with warnings.catch_warnings():
        # Clarabel stops the regression problem "AlmostSolved" at a gap of 6e-9 and a dual residual of 1.6e-8 (its
        # tolerance 1e-8); the booster's certified bounds bracket the value it returns (test_apd)
        warnings.filterwarnings("ignore", "Solution may be inaccurate")
        prob.solve(solver=cp.CLARABEL)
    assert prob.status in ("optimal", "optimal_inaccurate"), prob.status
    return prob.value


def _basis_kernels(X, a, b, d, basis):
    size = 2 * n_basis(X.shape[1], d, basis)
    out = np.zeros((size, size, len(X), len(X)))
    for i in range(size):
        for j in range(i, size):
            E = np.zeros((size, size))
            E[i, j] = E[j, i] = 1.0
            Kij = tk_kernel(X, None, E, a, b, d, basis)
            if i == j:
                out[i, i] = Kij
            else:
                out[i, j] = out[j, i] = Kij / 2
    return out


@functools.cache
def convex_optimum(task: str, m: int, C: float, epsilon: float = 0.1, seed: int = 0) -> float:
    """min over P of OPT_A(P) for ``_small(task, m, seed)`` with the degree-1 "x" basis on the 0.1-box, trace 2q:
    :func:`saddle_by_cvxpy`, solved once per argument set."""
    X, y = _small(task, m, seed)
    a, b = box(2, 0.1)
    size = 2 * n_basis(2, 1, "x")
    return saddle_by_cvxpy(_basis_kernels(X, a, b, 1, "x"), y, task, C, epsilon, float(size))
