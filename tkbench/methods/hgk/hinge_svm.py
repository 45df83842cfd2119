"""The hinge-loss SVM without offset, on a precomputed kernel: the inner SVM (9) of paper 002 with the hinge loss.

Paper 002's SVMs (Eq. (9)) have no offset: f = argmin_f lambda ||f||_H^2 + (1/m) sum_i L(y_i, f(x_i)). With the
hinge loss L(y, t) = max(0, 1 - y t) this is the C-SVM without offset, C = 1 / (2 lambda m) (divide the objective
by 2 lambda), whose dual has the box constraints only (no alpha^T y = 0, since there is no offset):

    min_a  D(a) = 1/2 a^T Q a - e^T a,   0 <= a_i <= C,   Q_ij = y_i y_j K_ij,   f = sum_i a_i y_i k(x_i, .).

Solved by dual coordinate descent (Hsieh et al. 2008, there for linear SVMs; each coordinate minimised exactly:
a_i <- clip(a_i - G_i / Q_ii, 0, C), G_i = y_i f(x_i) - 1), keeping f = K (a * y) up to date, in a compiled loop
(O(m) per update, no other matrix than K). LIBSVM cannot be used: it always has the offset. Stops when the largest
violation of the projected gradient (the KKT conditions: G_i >= 0 at a_i = 0, G_i <= 0 at a_i = C, G_i = 0 in
between) is below ``tol``; the coordinates are visited in a seeded random order, so a solve is deterministic.
Tested against cvxpy's solution of the same QP and by its KKT conditions (tests/methods/hgk/test_hinge_svm.py).
Several label columns (the one-vs-all problems of a shared kernel) are solved one after the other.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit


@dataclass
class HingeSVMResult:
    coef: np.ndarray  # beta = a * y: f = K beta (a vector, or m x k for k label columns)
    dual: np.ndarray  # a
    epochs: int
    violation: float  # the largest projected-gradient violation at the end
    converged: bool


@njit(cache=True)
def _dcd(K, y, C, order, tol, max_epochs):
    m = y.shape[0]
    a = np.zeros(m)
    f = np.zeros(m)
    violation = np.inf
    epochs = 0
    for epoch in range(max_epochs):
        epochs = epoch + 1
        violation = 0.0
        for t in range(m):
            i = order[epoch % order.shape[0], t]
            G = y[i] * f[i] - 1.0
            ai = a[i]
            if ai <= 0.0:
                pg = min(G, 0.0)
            elif ai >= C:
                pg = max(G, 0.0)
            else:
                pg = G
            if abs(pg) > violation:
                violation = abs(pg)
            if pg != 0.0 and K[i, i] > 0.0:
                new = min(max(ai - G / K[i, i], 0.0), C)
                step = (new - ai) * y[i]
                if step != 0.0:
                    a[i] = new
                    for u in range(m):
                        f[u] += step * K[u, i]
        if violation <= tol:
            break
    return a, epochs, violation


def hinge_svm(K: np.ndarray, y: np.ndarray, lam: float, *, tol: float = 1e-6, max_epochs: int = 10_000,
              seed: int = 0) -> HingeSVMResult:
    """The hinge SVM (9) without offset on kernel K with labels y in {-1, +1} (a vector, or m x k columns) and
    regularisation lambda: C = 1 / (2 lambda m). Returns f's coefficients beta = a * y (f(x) = k(x, X) beta)."""
    K = np.ascontiguousarray(K, dtype=float)
    Y = np.asarray(y, dtype=float)
    cols = Y.reshape(len(Y), -1)
    if not np.all(np.isin(cols, (-1.0, 1.0))):
        raise ValueError("hinge_svm: labels must be -1 or +1")
    m = len(cols)
    C = 1.0 / (2.0 * lam * m)
    rng = np.random.default_rng(seed)
    order = np.vstack([rng.permutation(m) for _ in range(8)])  # epochs cycle through 8 seeded orders
    coefs, duals, epochs, worst, ok = [], [], 0, 0.0, True
    for c in range(cols.shape[1]):
        yc = np.ascontiguousarray(cols[:, c])
        a, n_epochs, violation = _dcd(K, yc, C, order, tol, max_epochs)
        coefs.append(a * yc)
        duals.append(a)
        epochs = max(epochs, int(n_epochs))
        worst = max(worst, float(violation))
        ok = ok and violation <= tol
    if Y.ndim == 1:
        return HingeSVMResult(coefs[0], duals[0], epochs, worst, ok)
    return HingeSVMResult(np.column_stack(coefs), np.column_stack(duals), epochs, worst, ok)
