"""One L-BFGS ascent of Eq. (5) (paper 004) in compiled code: Algorithm 2's local searches without SciPy.

Algorithm 2 (GlobalSearchForLocals) runs up to T3 = 500 short ascents per outer iteration of Algorithm 1. Through
SciPy's L-BFGS-B (the default, ``search="scipy"``) each step costs SciPy's compiled ``setulb`` about 50 us
whatever the dimension, several times the function itself (O(l n)): on heart with beta = 1e-6, 28 000 starts
took 300 of a 555 s fit in ``setulb`` alone. Here a whole ascent -- the function, its gradient and the optimiser
-- is one compiled call (``search="compiled"``).

The optimiser is an ordinary L-BFGS (Nocedal & Wright 2006, Algorithms 7.4/7.5): ``memory`` curvature pairs (17,
section 9), initial scaling s^T y / y^T y, the first step min(1, 1/||g||), a line search for the weak Wolfe
conditions (c1 = 1e-4, c2 = 0.9) by bisection and doubling with at most ``max_linesearch`` = 20 trial steps
(section 9), keeping the best sufficient-decrease point when the curvature condition is not met in time; a pair
with s^T y <= 1e-12 ||s|| ||y|| is skipped. It stops when the gradient's largest entry is at most ``gtol`` (the
absolute test of section 9), when a step decreases -f by at most ``ftol`` max(|f|, 1), when the line search fails,
or after ``max_iter`` steps. The paper used liblbfgs (Nocedal's L-BFGS with More-Thuente's line search); neither
this nor SciPy's L-BFGS-B is that code, so the two searches find the same kind of local maxima from the same
starts but not always the same ones (tests/methods/sikl/test_lbfgs_compiled.py measures how often).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def cosine_value_grad_compiled(gamma, X, w, beta, grad):
    """alpha^T G(gamma) alpha of Eq. (5) and its gradient (into ``grad``), as
    :func:`tkbench.methods.sikl.cosine.cosine_value_grad`, in one pass over the points."""
    m, n = X.shape
    c = 0.0
    s = 0.0
    dc = np.zeros(n)
    ds = np.zeros(n)
    for u in range(m):
        phase = 0.0
        for k in range(n):
            phase += X[u, k] * gamma[k]
        cu = math.cos(phase)
        su = math.sin(phase)
        c += w[u] * cu
        s += w[u] * su
        for k in range(n):
            dc[k] -= w[u] * su * X[u, k]
            ds[k] += w[u] * cu * X[u, k]
    gg = 0.0
    for k in range(n):
        gg += gamma[k] * gamma[k]
    stab = math.exp(-beta * gg)
    power = c * c + s * s
    for k in range(n):
        grad[k] = power * (-2.0 * beta * stab) * gamma[k] + 2.0 * stab * (c * dc[k] + s * ds[k])
    return power * stab


@njit(cache=True)
def _negative(x, X, w, beta, g):
    v = cosine_value_grad_compiled(x, X, w, beta, g)
    for k in range(g.shape[0]):
        g[k] = -g[k]
    return -v


@njit(cache=True)
def cosine_ascent(X, w, beta, x0, memory, max_linesearch, gtol, ftol, max_iter):
    """Maximise Eq. (5) from ``x0``. Returns (point, value, steps, evaluations)."""
    n = x0.shape[0]
    x = x0.copy()
    g = np.empty(n)
    f = _negative(x, X, w, beta, g)
    evals = 1
    S = np.zeros((memory, n))
    Y = np.zeros((memory, n))
    rho = np.zeros(memory)
    alphas = np.zeros(memory)
    count = 0
    steps = 0
    d = np.empty(n)
    x_new = np.empty(n)
    g_new = np.empty(n)
    cand = np.empty(n)
    g_c = np.empty(n)
    if np.max(np.abs(g)) <= gtol:
        return x, -f, steps, evals
    for _ in range(max_iter):
        # two-loop recursion: d = -H g
        q = g.copy()
        stored = min(count, memory)
        for j in range(stored):
            slot = (count - 1 - j) % memory
            a = rho[slot] * np.dot(S[slot], q)
            alphas[j] = a
            q -= a * Y[slot]
        scale = 1.0
        if stored > 0:
            newest = (count - 1) % memory
            yy = np.dot(Y[newest], Y[newest])
            if yy > 0.0:
                scale = np.dot(S[newest], Y[newest]) / yy
        r = scale * q
        for j in range(stored - 1, -1, -1):
            slot = (count - 1 - j) % memory
            b = rho[slot] * np.dot(Y[slot], r)
            r += (alphas[j] - b) * S[slot]
        for k in range(n):
            d[k] = -r[k]
        slope = np.dot(g, d)
        if slope >= 0.0:  # not a descent direction (rounding): restart from the gradient
            for k in range(n):
                d[k] = -g[k]
            slope = -np.dot(g, g)
            count = 0
        step = 1.0
        if count == 0:
            gn = math.sqrt(np.dot(g, g))
            step = min(1.0, 1.0 / max(gn, 1e-300))
        lo = 0.0
        hi = math.inf
        accepted = False
        f_new = f
        for _ls in range(max_linesearch):  # weak Wolfe conditions by bisection / doubling
            for k in range(n):
                cand[k] = x[k] + step * d[k]
            fc = _negative(cand, X, w, beta, g_c)
            evals += 1
            armijo = fc <= f + 1e-4 * step * slope
            if armijo:
                x_new[:] = cand
                g_new[:] = g_c
                f_new = fc
                accepted = True
                if np.dot(g_c, d) >= 0.9 * slope:
                    break
                lo = step
                step = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * step
            else:
                hi = step
                step = 0.5 * (lo + hi)
        if not accepted:  # the line search failed: stop where we are
            break
        sk = x_new - x
        yk = g_new - g
        sy = np.dot(sk, yk)
        if sy > 1e-12 * math.sqrt(np.dot(sk, sk)) * math.sqrt(np.dot(yk, yk)):
            slot = count % memory
            S[slot] = sk
            Y[slot] = yk
            rho[slot] = 1.0 / sy
            count += 1
        decrease = f - f_new
        x[:] = x_new
        g[:] = g_new
        f = f_new
        steps += 1
        if np.max(np.abs(g)) <= gtol or decrease <= ftol * max(abs(f), 1.0):
            break
    return x, -f, steps, evals
