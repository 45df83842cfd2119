"""Compiled loops for the max(x, y) part of the tessellated kernel (see :mod:`tkbench.methods.tk.kernel`).

One pass over the m_x x m_y pairs computes, for every group g of z-exponent sums s_g,
T_g(max(x, y)) = prod_k (b_k^(s_gk+1) - max(x_k, y_k)^(s_gk+1)) / (s_gk + 1), and either adds
sum_g T_g * (Phi_x^T R_g[:, j]) to K (kernel; the low-rank part is a BLAS product) or accumulates Psi^T T_g Psi (gradient), without m x m temporaries.
A row i meets the columns j in blocks of ``BLOCK``: per coordinate the factors for every exponent 1..e_max are
built once for the whole block and shared by all groups, and every inner loop runs over contiguous columns (the
other set's points and coefficients are passed transposed), which LLVM vectorises: 2-2.5x faster than the
former pair-by-pair loops (one thread; CCPP m = 8000 basis x, Airfoil basis zx). The NumPy implementation in ``tessellated.py`` is the reference these are tested against.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

# reassociation lets LLVM vectorise the sums over a block (rounding-level differences only; no assumptions about
# NaN or infinity)
_FAST = {"reassoc", "contract", "nsz"}
BLOCK = 256  # columns j per inner pass: the factor arrays (n x top x BLOCK) stay in the L1 / L2 cache


@njit(cache=True, inline="always", fastmath=_FAST)
def _block_factors(XT, xi, j0, nb, bpow, F):
    """F[k, e, jj] = (b_k^e - max(xi_k, x_j,k)^e) / e for e = 1..top-1 and the columns j = j0 + jj < j0 + nb
    (F[k, 0, :] holds the max). Loops over jj are innermost and contiguous (XT is n x m), so LLVM vectorises
    them."""
    n, top = F.shape[0], F.shape[1]
    for k in range(n):
        xik = xi[k]
        for jj in range(nb):
            v = XT[k, j0 + jj]
            F[k, 0, jj] = v if v > xik else xik
        b1 = bpow[k, 1]
        for jj in range(nb):
            F[k, 1, jj] = b1 - F[k, 0, jj]
        for e in range(2, top):
            be = bpow[k, e]
            for jj in range(nb):
                power = F[k, 0, jj]
                for _ in range(e - 1):
                    power *= F[k, 0, jj]
                F[k, e, jj] = be - power / e


@njit(cache=True, inline="always", fastmath=_FAST)
def _group_factor(F, expo_g, nb, t):
    """t[jj] = T_g(max(xi, x_j)) = prod_k F[k, expo_g[k], jj] for one group g."""
    for jj in range(nb):
        t[jj] = F[0, expo_g[0], jj]
    for k in range(1, F.shape[0]):
        e = expo_g[k]
        for jj in range(nb):
            t[jj] *= F[k, e, jj]


@njit(cache=True, inline="always", fastmath=_FAST)
def _max_row(XT, xi, phi_i, RTT, j0, nb, bpow, expo, F, t, dot, out):
    """out[jj] += sum_g T_g(max(xi, x_j)) * phi_i . RTT[g, :, j] for the columns j0 .. j0 + nb - 1."""
    p = phi_i.shape[0]
    if expo.shape[0] == 1 and bpow.shape[1] == 2:  # one group, exponents 1 (basis x, d <= 1): no factor table
        n = XT.shape[0]
        for jj in range(nb):
            t[jj] = 1.0
        for k in range(n):
            xik = xi[k]
            b1 = bpow[k, 1]
            for jj in range(nb):
                v = XT[k, j0 + jj]
                t[jj] *= b1 - (v if v > xik else xik)
        for jj in range(nb):
            dot[jj] = 0.0
        for u in range(p):
            c = phi_i[u]
            for jj in range(nb):
                dot[jj] += c * RTT[0, u, j0 + jj]
        for jj in range(nb):
            out[jj] += t[jj] * dot[jj]
        return
    _block_factors(XT, xi, j0, nb, bpow, F)
    for g in range(expo.shape[0]):
        _group_factor(F, expo[g], nb, t)
        for jj in range(nb):
            dot[jj] = 0.0
        for u in range(p):
            c = phi_i[u]
            for jj in range(nb):
                dot[jj] += c * RTT[g, u, j0 + jj]
        for jj in range(nb):
            out[jj] += t[jj] * dot[jj]


@njit(parallel=True, cache=True, fastmath=_FAST)
def add_max_part(X, YT, bpow, expo, PhiX, RTT, K):
    """K[i, j] += sum_g T_g(max(X[i], Y[j])) * PhiX[i] . RTT[g, :, j]; expo[g, k] = s_gk + 1.

    YT is Y transposed (n x m_y) and RTT is laid out (G, p, m_y), so that every inner loop runs over contiguous
    columns j. The low-rank part of the kernel is a plain matrix product and is left to BLAS (the caller puts it
    in K first)."""
    mx, n = X.shape
    my = YT.shape[1]
    top = bpow.shape[1]
    for i in prange(mx):
        F = np.empty((n, top, BLOCK))
        t = np.empty(BLOCK)
        dot = np.empty(BLOCK)
        out = np.empty(BLOCK)
        for j0 in range(0, my, BLOCK):
            nb = min(BLOCK, my - j0)
            for jj in range(nb):
                out[jj] = 0.0
            _max_row(YT, X[i], PhiX[i], RTT, j0, nb, bpow, expo, F, t, dot, out)
            for jj in range(nb):
                K[i, j0 + jj] += out[jj]


@njit(parallel=True, cache=True, fastmath=_FAST)
def symmetric_kernel(X, XT, bpow, expo, Phi, RTT, LX, WLT, K, chunks):
    """The training kernel K(X, X) in one pass over the pairs j <= i: K[i, j] += LX[i] . WLT[:, j] (a low-rank
    part; the caller may instead put it in K by BLAS and pass LX with no columns) + sum_g T_g(max(X[i], X[j])) Phi[i] . RTT[g, :, j]; the
    strict upper triangle is then copied from the lower one in tiles. For a symmetric P both parts are
    symmetric, so this is the matrix :func:`add_max_part` gives, for half the pairs. Rows are interleaved between
    threads (``chunks``: a few per thread; triangular work)."""
    m, n = X.shape
    r = LX.shape[1]
    top = bpow.shape[1]
    for c in prange(chunks):
        F = np.empty((n, top, BLOCK))
        t = np.empty(BLOCK)
        dot = np.empty(BLOCK)
        out = np.empty(BLOCK)
        for i in range(c, m, chunks):
            for j0 in range(0, i + 1, BLOCK):
                nb = min(BLOCK, i + 1 - j0)
                for jj in range(nb):
                    out[jj] = K[i, j0 + jj]
                for u in range(r):
                    c_u = LX[i, u]
                    for jj in range(nb):
                        out[jj] += c_u * WLT[u, j0 + jj]
                _max_row(XT, X[i], Phi[i], RTT, j0, nb, bpow, expo, F, t, dot, out)
                for jj in range(nb):
                    K[i, j0 + jj] = out[jj]
    tile = 64
    tiles = (m + tile - 1) // tile
    for bi in prange(tiles):
        for bj in range(bi + 1):
            for i in range(bi * tile, min(m, (bi + 1) * tile)):
                for j in range(bj * tile, min(i, (bj + 1) * tile)):
                    K[j, i] = K[i, j]


@njit(parallel=True, cache=True, fastmath=_FAST)
def max_part_gradient(X, XT, bpow, expo, PsiT, chunks):
    """E[g] = Psi^T T_g(max(X, X)) Psi, accumulated per chunk of rows (one chunk per thread).

    T_g(max(x_i, x_j)) is symmetric in (i, j), so only the pairs j <= i are visited: row i accumulates
    sum_{j < i} T_ij Psi_j (and half its diagonal term), and E = F + F^T with F = sum_i Psi_i row_i^T. Chunks are
    interleaved rows (i = c, c + chunks, ...) so that the triangular work is balanced between threads; the
    columns j run in contiguous blocks (XT: n x m, PsiT: p x m)."""
    m, n = X.shape
    G = expo.shape[0]
    p = PsiT.shape[0]
    top = bpow.shape[1]
    partial = np.zeros((chunks, G, p, p))
    for c in prange(chunks):
        row = np.zeros((G, p))
        F = np.empty((n, top, BLOCK))
        t = np.empty(BLOCK)
        for i in range(c, m, chunks):
            row[:, :] = 0.0
            for j0 in range(0, i + 1, BLOCK):
                nb = min(BLOCK, i + 1 - j0)
                _block_factors(XT, X[i], j0, nb, bpow, F)
                for g in range(G):
                    _group_factor(F, expo[g], nb, t)
                    if j0 + nb == i + 1:  # the diagonal pair counts half
                        t[nb - 1] *= 0.5
                    for v in range(p):
                        acc = 0.0
                        for jj in range(nb):
                            acc += t[jj] * PsiT[v, j0 + jj]
                        row[g, v] += acc
            for g in range(G):
                for u in range(p):
                    for v in range(p):
                        partial[c, g, u, v] += PsiT[u, i] * row[g, v]
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
