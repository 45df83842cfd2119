"""Compiled loops of :class:`tkbench.kernels.hierarchical.BlockState`: one fused pass per annealing proposal.

The state keeps, per node n, its exponent S and kernel K on the block (rows x columns) in two buffers
``S[b, n]``, ``K[b, n]``; ``active[n]`` says which buffer holds the current values. A proposal writes the nodes on
the path from the changed node to the root into their inactive buffers and returns f = K_top alpha (the
objective needs nothing else); committing flips ``active`` for those nodes: no copy.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True, fastmath=True)
def propose_path(S, K, active, path, wsq, is_leaf, change, xcol, zcol, child, alpha):
    """The path's new S and K in the inactive buffers, and f = K_top_new @ alpha.

    Level 0 is the node that owns the changed weight: a leaf gets S += change (x_j - z_j)^2 (xcol, zcol: feature
    j), an inner node S += change (1 - K_child); each ancestor at level l gets S += wsq[l] (K_old - K_new) of the
    level below, K = exp(-2 S) (a leaf: exp(-S))."""
    m, mp = S.shape[2], S.shape[3]
    depth = path.shape[0]
    f = np.zeros(m)
    n0 = path[0]
    a0 = active[n0]
    ac = active[child] if child >= 0 else 0
    for u in prange(m):
        acc = 0.0
        for v in range(mp):
            if is_leaf:
                d = xcol[u] - zcol[v]
                s = S[a0, n0, u, v] + change * d * d
                k = np.exp(-s)
            else:
                s = S[a0, n0, u, v] + change * (1.0 - K[ac, child, u, v])
                k = np.exp(-2.0 * s)
            S[1 - a0, n0, u, v] = s
            K[1 - a0, n0, u, v] = k
            k_old = K[a0, n0, u, v]
            for level in range(1, depth):
                p = path[level]
                ap = active[p]
                s = S[ap, p, u, v] + wsq[level] * (k_old - k)
                k_old = K[ap, p, u, v]
                k = np.exp(-2.0 * s)
                S[1 - ap, p, u, v] = s
                K[1 - ap, p, u, v] = k
            acc += k * alpha[v]
        f[u] = acc
    return f
