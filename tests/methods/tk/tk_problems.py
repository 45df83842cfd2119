"""The small TK saddle problems the Frank-Wolfe, booster and SDP tests share, and their optimum by an independent
convex program (cvxpy + Clarabel), computed once per session: the regression program (an LMI of size 2m + 1)
takes about 15 s at m = 40, and three tests compare against the same one."""
from __future__ import annotations

import functools

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
    """min_{P PSD, tr P = T} OPT_A(P): the inner dual QP max {c^T x - 1/2 x^T H(P) x : 0 <= x <= C, E x = 0}
    replaced by its Lagrange dual min u^T lam + t/2 s.t. [[H(P), g], [g^T, t]] PSD, g = c - A^T lam - E^T eta
    (Schur complement), H(P) linear in P."""
    m = len(y)
    size = basis_kernels.shape[0]
    P = cp.Variable((size, size), symmetric=True)
    K = sum(P[i, j] * basis_kernels[i, j] for i in range(size) for j in range(size))
    if task == "classification":
        J = np.diag(y.astype(float))
        c = np.ones(m)
        E = y.astype(float)[None, :]
    else:
        J = np.hstack([np.eye(m), -np.eye(m)])
        c = np.concatenate([y - epsilon, -y - epsilon])
        E = np.concatenate([np.ones(m), -np.ones(m)])[None, :]
    nx = J.shape[1]
    H = J.T @ K @ J
    lam_hi, lam_lo, eta, t = cp.Variable(nx, nonneg=True), cp.Variable(nx, nonneg=True), cp.Variable(1), cp.Variable()
    g = c - lam_hi + lam_lo - E.T @ eta
    M = cp.bmat([[H, cp.reshape(g, (nx, 1), order="F")], [cp.reshape(g, (1, nx), order="F"), cp.reshape(t, (1, 1), order="F")]])
    Msym = (M + M.T) / 2
    prob = cp.Problem(cp.Minimize(C * cp.sum(lam_hi) + t / 2), [Msym >> 0, P >> 0, cp.trace(P) == trace])
    prob.solve(solver=cp.CLARABEL)
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
