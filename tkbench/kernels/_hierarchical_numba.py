"""Compiled loops of :class:`tkbench.kernels.hierarchical.BlockState`: one fused pass per annealing proposal.

The state keeps, per node n, its kernel K on the block (rows x columns) in two buffers ``K[b, n]``;
``active[n]`` says which buffer holds the current values. A proposal writes the nodes on
the path from the changed node to the root into their inactive buffers and returns f = K_top alpha (the
objective needs nothing else); committing flips ``active`` for those nodes: no copy.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True, fastmath=True)
def propose_path(K, active, path, wsq, is_leaf, change, xcol, zcol, child, alpha):
    """The path's new kernels in the inactive buffers, and F = K_top_new @ alpha (alpha: columns x outputs).

    Level 0 is the node that owns the changed weight: a leaf gets K *= exp(-change (x_j - z_j)^2) (xcol, zcol:
    feature j), an inner node K *= exp(-2 change (1 - K_child)); each ancestor at level l gets
    K *= exp(-2 wsq[l] (K_old - K_new)) of the level below (Eqs. (4) and (7): the exponents are sums, so a change
    of one term is one factor)."""
    m, mp = K.shape[2], K.shape[3]
    n_out = alpha.shape[1]
    depth = path.shape[0]
    f = np.zeros((m, n_out))
    n0 = path[0]
    a0 = active[n0]
    ac = active[child] if child >= 0 else 0
    for u in prange(m):
        acc = np.zeros(n_out)
        for v in range(mp):
            k_old = K[a0, n0, u, v]
            if is_leaf:
                d = xcol[u] - zcol[v]
                k = k_old * np.exp(-change * d * d)
            else:
                k = k_old * np.exp(-2.0 * change * (1.0 - K[ac, child, u, v]))
            K[1 - a0, n0, u, v] = k
            for level in range(1, depth):
                p = path[level]
                ap = active[p]
                parent_old = K[ap, p, u, v]
                k = parent_old * np.exp(-2.0 * wsq[level] * (k_old - k))
                k_old = parent_old
                K[1 - ap, p, u, v] = k
            for c in range(n_out):
                acc[c] += k * alpha[v, c]
        f[u, :] = acc
    return f
