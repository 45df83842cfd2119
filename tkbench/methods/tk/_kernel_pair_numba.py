"""The compiled loops of :mod:`tkbench.methods.tk.kernel_pair` (imported at first use: importing numba costs about
0.3 s, see :mod:`tkbench.methods._shared.compiled`)."""
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
