"""Arithmetic on the pair of stored kernel matrices (K, K_S) of a Frank-Wolfe line search, without forming their
blend or their difference (issue 21: at m = 30 000 one more m x m matrix is 7 GB in float64).

Either matrix may be float32 (storage only: every product and sum here is accumulated in float64).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True, fastmath={"reassoc", "contract", "nsz"})
def _quadratic_difference(K, KS, w, chunks):
    """sum_i w_i^2 (KS_ii - K_ii) + 2 sum_{j < i} w_i w_j (KS_ij - K_ij): the lower triangle only (both matrices
    are symmetric training kernels), rows interleaved between threads (triangular work); the inner sums may be
    reordered (vectorised) but every difference is taken entry by entry."""
    m = w.shape[0]
    parts = np.zeros(chunks)
    for c in prange(chunks):
        total = 0.0
        for i in range(c, m, chunks):
            if w[i] == 0.0:
                continue
            a = K[i]
            b = KS[i]
            acc = 0.0
            for j in range(i):
                acc += (np.float64(b[j]) - np.float64(a[j])) * w[j]
            total += w[i] * (2.0 * acc + (np.float64(b[i]) - np.float64(a[i])) * w[i])
        parts[c] = total
    return parts.sum()


def quadratic_difference(K: np.ndarray, KS: np.ndarray, w: np.ndarray) -> float:
    """w^T (KS - K) w for symmetric K and KS, the difference taken entry by entry (the difference of the two
    quadratic forms would cancel: near the optimum of a line search it is many orders below either form); one
    pass over the lower triangle, rows with w_i = 0 skipped."""
    if K.shape != KS.shape or K.shape[0] != K.shape[1] or K.shape[0] != len(w):
        raise ValueError(f"quadratic_difference: K {K.shape}, KS {KS.shape} and w ({len(w)},) do not match")
    from numba import get_num_threads

    return float(_quadratic_difference(K, KS, np.ascontiguousarray(w, dtype=np.float64), 4 * get_num_threads()))


@njit(parallel=True, cache=True)
def _matvec(K, w):
    m = K.shape[0]
    out = np.zeros(m)
    for i in prange(m):
        row = K[i]
        acc = 0.0
        for j in range(K.shape[1]):
            acc += np.float64(row[j]) * w[j]
        out[i] = acc
    return out


def matvec(K: np.ndarray, w: np.ndarray) -> np.ndarray:
    """K @ w accumulated in float64 whatever K's storage (NumPy would copy a float32 K to float64 first: 7 GB at
    m = 30 000); BLAS for a float64 K."""
    w = np.ascontiguousarray(w, dtype=np.float64)
    if K.dtype == np.float64:
        return K @ w
    return _matvec(K, w)
