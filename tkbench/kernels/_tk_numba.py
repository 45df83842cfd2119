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


@njit(cache=True, inline="always")
def _max_term(xi, yj, bpow, expo, phi_i, rt_j, F):
    """sum_g T_g(max(xi, yj)) * phi_i . rt_j[g, :] for one pair (F: scratch for :func:`_factors`)."""
    _factors(xi, yj, bpow, F)
    n = F.shape[0]
    acc = 0.0
    for g in range(expo.shape[0]):
        t = 1.0
        for k in range(n):
            t *= F[k, expo[g, k]]
        dot = 0.0
        for u in range(phi_i.shape[0]):
            dot += phi_i[u] * rt_j[g, u]
        acc += t * dot
    return acc


@njit(parallel=True, cache=True)
def add_max_part(X, Y, bpow, expo, PhiX, RT, K):
    """K[i, j] += sum_g T_g(max(X[i], Y[j])) * PhiX[i] . RT[j, g, :]; expo[g, k] = s_gk + 1.

    RT is laid out (m_y, G, p) so that the coefficients of one column j are contiguous. The low-rank part of the
    kernel is a plain matrix product and is left to BLAS (the caller puts it in K first).
    """
    mx, n = X.shape
    top = bpow.shape[1]
    for i in prange(mx):
        F = np.empty((n, top))
        for j in range(Y.shape[0]):
            K[i, j] += _max_term(X[i], Y[j], bpow, expo, PhiX[i], RT[j], F)


@njit(parallel=True, cache=True)
def symmetric_kernel(X, bpow, expo, Phi, RT, LX, WLT, K, chunks):
    """The training kernel K(X, X) in one pass over the pairs j <= i: K[i, j] = LX[i] . WLT[:, j] (the low-rank
    part, fused here instead of an m x m BLAS product) + sum_g T_g(max(X[i], X[j])) Phi[i] . RT[j, g, :]; the
    strict upper triangle is then copied from the lower one in tiles. For a symmetric P both parts are
    symmetric, so this is the matrix :func:`add_max_part` gives, for half the pairs. Rows are interleaved between
    threads (``chunks``: a few per thread; triangular work)."""
    m, n = X.shape
    r = LX.shape[1]
    top = bpow.shape[1]
    for c in prange(chunks):
        F = np.empty((n, top))
        for i in range(c, m, chunks):
            for j in range(i + 1):
                low = 0.0
                for u in range(r):
                    low += LX[i, u] * WLT[u, j]
                K[i, j] = low + _max_term(X[i], X[j], bpow, expo, Phi[i], RT[j], F)
    tile = 64
    tiles = (m + tile - 1) // tile
    for bi in prange(tiles):
        for bj in range(bi + 1):
            for i in range(bi * tile, min(m, (bi + 1) * tile)):
                for j in range(bj * tile, min(i, (bj + 1) * tile)):
                    K[j, i] = K[i, j]


@njit(parallel=True, cache=True)
def max_part_gradient(X, bpow, expo, Psi, chunks):
    """E[g] = Psi^T T_g(max(X, X)) Psi, accumulated per chunk of rows (one chunk per thread).

    T_g(max(x_i, x_j)) is symmetric in (i, j), so only the pairs j <= i are visited: row i accumulates
    sum_{j < i} T_ij Psi_j (and half its diagonal term), and E = F + F^T with F = sum_i Psi_i row_i^T. Chunks are
    interleaved rows (i = c, c + chunks, ...) so that the triangular work is balanced between threads.
    """
    m, n = X.shape
    G = expo.shape[0]
    p = Psi.shape[1]
    top = bpow.shape[1]
    partial = np.zeros((chunks, G, p, p))
    for c in prange(chunks):
        row = np.zeros((G, p))
        F = np.empty((n, top))
        for i in range(c, m, chunks):
            row[:, :] = 0.0
            for j in range(i + 1):
                _factors(X[i], X[j], bpow, F)
                half = 0.5 if j == i else 1.0
                for g in range(G):
                    t = half
                    for k in range(n):
                        t *= F[k, expo[g, k]]
                    for v in range(p):
                        row[g, v] += t * Psi[j, v]
            for g in range(G):
                for u in range(p):
                    for v in range(p):
                        partial[c, g, u, v] += Psi[i, u] * row[g, v]
    F_all = partial.sum(axis=0)
    out = np.empty_like(F_all)
    for g in range(G):
        out[g] = F_all[g] + F_all[g].T
    return out


def b_powers(b: np.ndarray, top: int) -> np.ndarray:
    """bpow[k, e] = b_k^e / e for e = 1..top-1 (column 0 unused)."""
    e = np.arange(top, dtype=float)
    e[0] = 1.0
    return np.ascontiguousarray(b[:, None] ** np.arange(top)[None, :] / e[None, :])
