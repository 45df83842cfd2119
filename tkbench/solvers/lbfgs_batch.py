"""Many independent L-BFGS minimisations run in lockstep (one vectorised function call per iteration for all).

Algorithm 2 of paper 004 starts up to T3 = 500 local searches per outer iteration, each a few dozen L-BFGS steps
on a function that costs O(l n). Run one by one through SciPy, most of the time is SciPy's per-step overhead
(measured: about 90 us of overhead per evaluation of a 50 us function; 500 starts, 3.5 s on heart). Here the
starts share every step: ``fun(X) -> (values, gradients)`` evaluates a whole batch of points (rows), the two-loop
recursion and the line search are numpy operations over the batch.

Each row is an ordinary L-BFGS run (Nocedal & Wright 2006, Algorithm 7.4/7.5): ``memory`` curvature pairs (17 in
paper 004), initial scaling s^T y / y^T y, a line search for the weak Wolfe conditions (c1 = 1e-4, c2 = 0.9) by
bisection and doubling, at most ``max_linesearch`` = 20 trial steps (paper 004's 20 line-search tries), keeping
the best sufficient-decrease point if the curvature condition is not met in time; a pair with
s^T y <= 1e-12 ||s|| ||y|| is skipped, so the inverse-Hessian approximation stays positive definite. A row stops
when its gradient's largest entry is below ``gtol`` (the absolute test paper 004 uses), when a step no longer
decreases f by more than ``ftol`` (relative), when its line search fails, or after ``max_iter`` steps.
The results are checked against SciPy's L-BFGS-B from the same starts (tests/test_sikl.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class BatchResult:
    x: np.ndarray  # (S, n) final points
    f: np.ndarray  # (S,) final values
    iterations: np.ndarray  # (S,) steps taken
    evaluations: int  # points evaluated in all


def minimize_batch(fun, x0: np.ndarray, *, memory: int = 17, max_linesearch: int = 20, gtol: float = 1e-6,
                   ftol: float = 1e-15, max_iter: int = 1000) -> BatchResult:
    """Minimise ``fun`` from every row of ``x0``; ``fun(X) -> (f (S,), grad (S, n))`` for any batch of rows."""
    x = np.array(x0, dtype=float, copy=True)
    S, n = x.shape
    f, g = fun(x)
    evaluations = S
    s_hist = np.zeros((memory, S, n))
    y_hist = np.zeros((memory, S, n))
    rho = np.zeros((memory, S))
    count = np.zeros(S, dtype=int)  # curvature pairs stored per row (the newest at (count - 1) % memory)
    iterations = np.zeros(S, dtype=int)
    active = np.abs(g).max(axis=1) > gtol
    for _ in range(max_iter):
        idx = np.flatnonzero(active)
        if len(idx) == 0:
            break
        gi = g[idx]
        d = -_two_loop(gi, s_hist[:, idx], y_hist[:, idx], rho[:, idx], count[idx], memory)
        slope = np.einsum("ij,ij->i", gi, d)
        bad = slope >= 0  # not a descent direction (rounding): restart from the gradient
        if bad.any():
            d[bad] = -gi[bad]
            slope[bad] = -np.einsum("ij,ij->i", gi[bad], gi[bad])
            count[idx[bad]] = 0
        step = np.where(count[idx] == 0, np.minimum(1.0, 1.0 / np.maximum(np.linalg.norm(gi, axis=1), 1e-300)), 1.0)
        accepted = np.zeros(len(idx), dtype=bool)
        x_new = x[idx].copy()
        f_new = f[idx].copy()
        g_new = gi.copy()
        lo = np.zeros(len(idx))
        hi = np.full(len(idx), np.inf)
        trying = np.ones(len(idx), dtype=bool)
        for _ls in range(max_linesearch):  # weak Wolfe conditions by bisection / doubling
            t = np.flatnonzero(trying)
            if len(t) == 0:
                break
            cand = x[idx[t]] + step[t, None] * d[t]
            fc, gc = fun(cand)
            evaluations += len(t)
            armijo = fc <= f[idx[t]] + 1e-4 * step[t] * slope[t]
            curvature = np.einsum("ij,ij->i", gc, d[t]) >= 0.9 * slope[t]
            good = t[armijo]  # the best sufficient-decrease point so far is kept
            x_new[good], f_new[good], g_new[good] = cand[armijo], fc[armijo], gc[armijo]
            accepted[good] = True
            done_ = armijo & curvature
            trying[t[done_]] = False
            short = t[armijo & ~curvature]  # too short: move the lower end up
            lo[short] = step[short]
            step[short] = np.where(np.isfinite(hi[short]), 0.5 * (lo[short] + hi[short]), 2.0 * step[short])
            long_ = t[~armijo]  # too long: move the upper end down
            hi[long_] = step[long_]
            step[long_] = 0.5 * (lo[long_] + hi[long_])
        # rows whose line search failed stop where they are
        failed = idx[~accepted]
        active[failed] = False
        acc = np.flatnonzero(accepted)
        rows = idx[acc]
        s_k = x_new[acc] - x[rows]
        y_k = g_new[acc] - g[rows]
        sy = np.einsum("ij,ij->i", s_k, y_k)
        keep = sy > 1e-12 * np.linalg.norm(s_k, axis=1) * np.linalg.norm(y_k, axis=1)
        slot = count[rows] % memory
        upd = rows[keep]
        s_hist[slot[keep], upd] = s_k[keep]
        y_hist[slot[keep], upd] = y_k[keep]
        rho[slot[keep], upd] = 1.0 / sy[keep]
        count[upd] += 1
        decrease = f[rows] - f_new[acc]
        x[rows], f[rows], g[rows] = x_new[acc], f_new[acc], g_new[acc]
        iterations[rows] += 1
        small = (np.abs(g[rows]).max(axis=1) <= gtol) | (decrease <= ftol * np.maximum(np.abs(f[rows]), 1.0))
        active[rows[small]] = False
    return BatchResult(x, f, iterations, evaluations)


def _two_loop(g: np.ndarray, s_hist: np.ndarray, y_hist: np.ndarray, rho: np.ndarray, count: np.ndarray,
              memory: int) -> np.ndarray:
    """H g by the L-BFGS two-loop recursion, row by row with each row's own number of stored pairs."""
    q = g.copy()
    S = len(g)
    rows = np.arange(S)
    stored = np.minimum(count, memory)
    alphas = np.zeros((memory, S))
    order = []  # newest first: slot (count - 1 - j) % memory, valid while j < stored
    for j in range(memory):
        valid = j < stored
        if not valid.any():
            break
        slot = (count - 1 - j) % memory
        s = s_hist[slot, rows]
        y = y_hist[slot, rows]
        a = np.where(valid, rho[slot, rows] * np.einsum("ij,ij->i", s, q), 0.0)
        q -= a[:, None] * y
        alphas[j] = a
        order.append((j, slot, valid))
    newest = (count - 1) % memory
    s0, y0 = s_hist[newest, rows], y_hist[newest, rows]
    yy = np.einsum("ij,ij->i", y0, y0)
    gamma = np.where((stored > 0) & (yy > 0), np.einsum("ij,ij->i", s0, y0) / np.maximum(yy, 1e-300), 1.0)
    r = gamma[:, None] * q
    for j, slot, valid in reversed(order):
        s = s_hist[slot, rows]
        y = y_hist[slot, rows]
        b = rho[slot, rows] * np.einsum("ij,ij->i", y, r)
        r += np.where(valid, alphas[j] - b, 0.0)[:, None] * s
    return r
