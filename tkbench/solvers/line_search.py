"""Exact-ish line search for a convex function along a segment, from its derivative (one solve per evaluation).

Used by Frank-Wolfe (paper 003, Algorithm 2, step 2) and SimpleMKL (Rakotomamonjy et al. 2008): each evaluation of
phi(g) is an SVM solve that also gives phi'(g) by Danskin's theorem. The root of phi' in [0, g_max] is bracketed
and found by regula falsi (Illinois variant), stopping when |phi'| falls to 5% of |phi'(0)| at a point that improves
on phi(0). If no trial point improves on phi(0) although phi'(0) < 0 (the minimiser lies below the regula falsi's
smallest trial step, as when the new direction's kernel is orders of magnitude larger than the current one), the
step is backtracked geometrically (g / 10, up to ``backtrack`` times) before giving up with g = 0.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any


def minimise_on_segment(evaluate: Callable[[float], tuple[float, float, Any]], value0: float, slope0: float,
                        start: Any, g_max: float = 1.0, steps: int = 6, backtrack: int = 8
                        ) -> tuple[float, Any, bool]:
    """Minimise a convex phi on [0, g_max] given phi(0) = value0, phi'(0) = slope0 (payload ``start``).

    ``evaluate(g)`` returns (phi(g), phi'(g), payload). Returns (g, payload of the best point, whether the best point
    is g_max with phi still decreasing there).
    """
    best_g, best_value, best = 0.0, value0, start
    if slope0 >= 0:
        return best_g, best, False
    lo, hi, s_lo = 0.0, g_max, slope0
    value, s_hi, payload = evaluate(g_max)
    if value < best_value:
        best_g, best_value, best = g_max, value, payload
    if s_hi <= 0:
        return best_g, best, best_g == g_max
    side = 0
    for _ in range(steps - 1):
        g = (lo * s_hi - hi * s_lo) / (s_hi - s_lo)
        g = min(max(g, lo + 0.01 * (hi - lo)), hi - 0.01 * (hi - lo))
        value, s_g, payload = evaluate(g)
        if value < best_value:
            best_g, best_value, best = g, value, payload
        if abs(s_g) <= 0.05 * abs(slope0) and best_g > 0:
            break
        if s_g < 0:
            lo, s_lo = g, s_g
            if side == -1:
                s_hi /= 2
            side = -1
        else:
            hi, s_hi = g, s_g
            if side == 1:
                s_lo /= 2
            side = 1
    g = hi
    for _ in range(backtrack if best_g == 0.0 else 0):
        g /= 10
        value, _, payload = evaluate(g)
        if value < best_value:
            return g, payload, False
    return best_g, best, False
