"""Compiled loops for the per-feature Gaussian base kernels of NKRR (see :mod:`tkbench.methods.nkrr.combination`).

Neither loop stores a kernel matrix per feature: the combined kernel and the p weighted forms are accumulated pair
by pair, O(m^2 p) time and O(m^2) memory.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def gaussian_feature_sum(Y, X, mu, gamma):
    """S[i, j] = sum_k mu_k exp(-gamma (Y_ik - X_jk)^2)."""
    ny, nx, p = Y.shape[0], X.shape[0], X.shape[1]
    out = np.zeros((ny, nx))
    for i in prange(ny):
        for j in range(nx):
            acc = 0.0
            for k in range(p):
                if mu[k] != 0.0:
                    d = Y[i, k] - X[j, k]
                    acc += mu[k] * np.exp(-gamma * d * d)
            out[i, j] = acc
    return out


@njit(parallel=True, cache=True)
def gaussian_feature_forms(X, alpha, W, gamma, full):
    """out[k] = sum_{i,j} alpha_i alpha_j W_ij exp(-gamma (X_ik - X_jk)^2) for a symmetric W (all ones when not
    ``full``): each unordered pair once, doubled."""
    m, p = X.shape
    out = np.zeros(p)
    for k in prange(p):
        total = 0.0
        for i in range(m):
            ai = alpha[i]
            acc = 0.0
            for j in range(i):
                d = X[i, k] - X[j, k]
                w = W[i, j] if full else 1.0
                acc += alpha[j] * w * np.exp(-gamma * d * d)
            wii = W[i, i] if full else 1.0
            total += ai * (2.0 * acc + ai * wii)
        out[k] = total
    return out
