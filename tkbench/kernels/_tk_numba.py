"""Compiled loops for the max(x, y) part of the tessellated kernel (see :mod:`tkbench.kernels.tessellated`).

One pass over the m_x x m_y pairs computes, for every group g of z-exponent sums s_g,
T_g(max(x, y)) = prod_k (b_k^(s_gk+1) - max(x_k, y_k)^(s_gk+1)) / (s_gk + 1), and either adds
sum_g T_g * (Phi_x^T R_g[:, j]) to K (kernel; the low-rank part is a BLAS product) or accumulates Psi^T T_g Psi (gradient), without m x m temporaries.
Per pair, the per-coordinate factors for every exponent 1..e_max are built once by repeated multiplication and
shared by all groups. The NumPy implementation in ``tessellated.py`` is the reference these are tested against.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, inline="always")
def _factors(xi, yj, bpow, F):
    """F[k, e] = (b_k^e - max(xi_k, yj_k)^e) / e for e = 1..e_max (bpow[k, e] = b_k^e / e)."""
    n, top = F.shape
    for k in range(n):
        pk = xi[k] if xi[k] > yj[k] else yj[k]
        power = 1.0
        for e in range(1, top):
            power *= pk
            F[k, e] = bpow[k, e] - power / e


@njit(parallel=True, cache=True)
def add_max_part(X, Y, bpow, expo, PhiX, RT, K):
    """K[i, j] += sum_g T_g(max(X[i], Y[j])) * PhiX[i] . RT[j, g, :]; expo[g, k] = s_gk + 1.

    RT is laid out (m_y, G, p) so that the coefficients of one column j are contiguous. The low-rank part of the
    kernel is a plain matrix product and is left to BLAS (the caller puts it in K first).
    """
    mx, n = X.shape
    my = Y.shape[0]
    G = expo.shape[0]
    p = PhiX.shape[1]
    top = bpow.shape[1]
    for i in prange(mx):
        F = np.empty((n, top))
        for j in range(my):
            _factors(X[i], Y[j], bpow, F)
            acc = 0.0
            for g in range(G):
                t = 1.0
                for k in range(n):
                    t *= F[k, expo[g, k]]
                dot = 0.0
                for u in range(p):
                    dot += PhiX[i, u] * RT[j, g, u]
                acc += t * dot
            K[i, j] += acc


@njit(parallel=True, cache=True)
def max_part_gradient(X, bpow, expo, Psi, chunks):
    """E[g] = Psi^T T_g(max(X, X)) Psi, accumulated per chunk of rows (one chunk per thread)."""
    m, n = X.shape
    G = expo.shape[0]
    p = Psi.shape[1]
    top = bpow.shape[1]
    partial = np.zeros((chunks, G, p, p))
    size = (m + chunks - 1) // chunks
    for c in prange(chunks):
        row = np.zeros((G, p))
        F = np.empty((n, top))
        for i in range(c * size, min(m, (c + 1) * size)):
            row[:, :] = 0.0
            for j in range(m):
                _factors(X[i], X[j], bpow, F)
                for g in range(G):
                    t = 1.0
                    for k in range(n):
                        t *= F[k, expo[g, k]]
                    for v in range(p):
                        row[g, v] += t * Psi[j, v]
            for g in range(G):
                for u in range(p):
                    for v in range(p):
                        partial[c, g, u, v] += Psi[i, u] * row[g, v]
    return partial.sum(axis=0)


def b_powers(b: np.ndarray, top: int) -> np.ndarray:
    """bpow[k, e] = b_k^e / e for e = 1..top-1 (column 0 unused)."""
    e = np.arange(top, dtype=float)
    e[0] = 1.0
    return np.ascontiguousarray(b[:, None] ** np.arange(top)[None, :] / e[None, :])
