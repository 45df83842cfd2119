"""Exact polishing of a normalised SVM dual by a primal-dual active-set method.

The SIKL criterion's inner problem (paper 004, Eq. (26)-(27)) is the quadratic program

    min_alpha  alpha^T Q alpha   s.t.  y^T alpha = 0,  e^T alpha = 2,  0 <= alpha <= C   (C may be infinite),

with Q = (K + tau I) o y y^T. LIBSVM's SMO solves it, but when the learned tau is tiny (1e-12 on heart with
beta = 0.1: the cosines interpolate the training set) Q is ill-conditioned and SMO needs ~10^6 iterations for
tol = 1e-10 (0.6 s at l = 170), while tol = 1e-3 takes 5 ms and already finds almost the right support set.
:func:`polish` starts from such a loose solution and solves the QP exactly: with the sets L (alpha = 0),
U (alpha = C) and F (free) fixed, the KKT conditions are the linear system

    [Q_FF  y_F  e_F] [alpha_F]   [-Q_FU alpha_U]
    [y_F^T  0    0 ] [ -lam1 ] = [-y_U^T alpha_U]
    [e_F^T  0    0 ] [ -lam2 ]   [2 - e_U^T alpha_U],

and the sets are updated from the primal (alpha_F outside [0, C]) and dual (reduced gradient
r = Q alpha - lam1 y - lam2 e of the wrong sign on L or U) violations until there are none (the primal-dual
active-set method of Hintermueller, Ito & Kunisch 2002, a semismooth Newton method: a few iterations from a
good guess). The answer is certified by the KKT conditions (feasibility, r >= 0 on L, r <= 0 on U, r = 0 on F
up to ``tol`` relative to the objective); when the iteration cycles, meets a singular system or cannot certify,
:func:`polish` returns None and the caller solves the QP another way.

``Q`` is a dense matrix or a :class:`LowRankPlusDiagonal` Q = F^T F + tau I (the cosine mixture's rank-2 form,
paper 004 section 5.5): then no l x l matrix is formed; an iteration costs O(k^2 r + k^3 + l r) for k free points
and F of r rows, instead of the O(l^2 r) of forming Q; and when the free points far outnumber F's rows
(``WOODBURY_RATIO``), the system is solved through the Woodbury identity
Q_FF^-1 = (I - U (tau I_r + U^T U)^-1 U^T) / tau, U = F_F^T, and a 2 x 2 system for the multipliers: O(k r^2)
instead of O(k^3). That is the soft-margin regime of a large training set (MNIST, 10000 rows: thousands of free
points and a few dozen cosines), where the dense k x k solves took all of a fit's time (2026-11-26); with a tiny
tau the free points are few (at most about r + 1), so the dense solve stays. Both are checked by the same KKT
test, so the choice changes the time, not the certified answer.

Written by hand: no allowed library offers a warm-started active-set QP (cvxpy's interior-point solvers cannot
start from a guess and do not return a vertex-exact support set).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.linalg


class LowRankPlusDiagonal:
    """Q = F^T F + tau I without forming it: the blocks and products :func:`polish` needs."""

    def __init__(self, F: np.ndarray, tau: float):
        self.F = np.ascontiguousarray(F, dtype=float)
        self.tau = float(tau)

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        return self.F.T @ (self.F @ v) + self.tau * v

    def block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        out = self.F[:, rows].T @ self.F[:, cols]
        out[rows[:, None] == cols[None, :]] += self.tau
        return out


class _Dense:
    def __init__(self, Q: np.ndarray):
        self.Q = Q

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        return self.Q @ v

    def block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return self.Q[np.ix_(rows, cols)]


def polish(Q, y: np.ndarray, alpha0: np.ndarray, C: float = math.inf, *, max_iter: int = 50,
           tol: float = 1e-9) -> np.ndarray | None:
    """The exact minimiser of alpha^T Q alpha over {y^T alpha = 0, e^T alpha = 2, 0 <= alpha <= C} from the
    guess ``alpha0`` (its zero and bound entries give the first active sets), or None (see the module doc)."""
    l = len(y)  # noqa: E741
    y = np.asarray(y, dtype=float)
    if isinstance(Q, np.ndarray):
        Q = _Dense(Q)
    finite = math.isfinite(C)
    small = 1e-8 * max(float(np.max(alpha0)), 1e-300)
    lower = alpha0 <= small
    upper = (alpha0 >= C - small) & ~lower if finite else np.zeros(l, dtype=bool)
    seen: set[bytes] = set()
    for _ in range(max_iter):
        key = np.packbits(lower).tobytes() + np.packbits(upper).tobytes()
        if key in seen:
            return None  # cycling
        seen.add(key)
        free = ~(lower | upper)
        yf = y[free]
        if not (np.any(yf > 0) and np.any(yf < 0)):
            return None  # the equality constraints need a free point in each class
        alpha = np.zeros(l)
        if finite:
            alpha[upper] = C
        solved = _solve_free(Q, y, alpha, free, upper)
        if solved is None:
            return None
        alpha, lam1, lam2 = solved
        Qa = Q @ alpha
        r = Qa - lam1 * y - lam2
        scale = max(float(alpha @ Qa), 1e-300)
        below = free & (alpha < 0.0)
        above = free & (alpha > C) if finite else np.zeros(l, dtype=bool)
        wrong_lower = lower & (r < -tol * scale)
        wrong_upper = upper & (r > tol * scale)
        if not (below.any() or above.any() or wrong_lower.any() or wrong_upper.any()):
            return alpha if _certified(Q, y, alpha, C, r, free, lower, upper, tol, scale) else None
        lower = (lower & ~wrong_lower) | below
        upper = (upper & ~wrong_upper) | above
    return None


WOODBURY_RATIO = 4  # the low-rank form solves by Woodbury when the free points number this many times F's rows


def _solve_free(Q, y: np.ndarray, alpha: np.ndarray, free: np.ndarray,
                upper: np.ndarray) -> tuple[np.ndarray, float, float] | None:
    """alpha_F and the two multipliers from the KKT system with the bound sets fixed (module doc)."""
    idx = np.flatnonzero(free)
    k = len(idx)
    if isinstance(Q, LowRankPlusDiagonal) and Q.tau > 0.0 and k >= WOODBURY_RATIO * max(Q.F.shape[0], 1):
        return _solve_free_woodbury(Q, y, alpha, idx, upper)
    M = np.zeros((k + 2, k + 2))
    M[:k, :k] = Q.block(idx, idx)
    M[:k, k] = M[k, :k] = y[idx]
    M[:k, k + 1] = M[k + 1, :k] = 1.0
    rhs = np.zeros(k + 2)
    if upper.any():
        up = np.flatnonzero(upper)
        rhs[:k] = -Q.block(idx, up) @ alpha[up]
        rhs[k] = -float(y[upper] @ alpha[upper])
        rhs[k + 1] = 2.0 - float(alpha[upper].sum())
    else:
        rhs[k + 1] = 2.0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            sol = scipy.linalg.solve(M, rhs, assume_a="sym", check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return None
    if not np.all(np.isfinite(sol)):
        return None
    out = alpha.copy()
    out[idx] = sol[:k]
    return out, -float(sol[k]), -float(sol[k + 1])


def _solve_free_woodbury(Q: LowRankPlusDiagonal, y: np.ndarray, alpha: np.ndarray, idx: np.ndarray,
                         upper: np.ndarray) -> tuple[np.ndarray, float, float] | None:
    """:func:`_solve_free` for Q = F^T F + tau I by the Woodbury identity (module doc): alpha_F = W_b + lam1 W_y +
    lam2 W_e with W_v = Q_FF^-1 v_F, the multipliers from y_F^T alpha_F and e_F^T alpha_F."""
    U = Q.F[:, idx].T  # k x r
    yf = y[idx]
    b = np.zeros(len(idx))
    c_y, c_e = 0.0, 2.0
    if upper.any():
        up = np.flatnonzero(upper)
        b = -(U @ (Q.F[:, up] @ alpha[up]))  # -Q_FU alpha_U (F and U disjoint: no tau term)
        c_y = -float(y[upper] @ alpha[upper])
        c_e = 2.0 - float(alpha[upper].sum())
    V = np.column_stack([b, yf, np.ones(len(idx))])
    S = Q.tau * np.eye(U.shape[1]) + U.T @ U
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            W = (V - U @ scipy.linalg.solve(S, U.T @ V, assume_a="pos", check_finite=False)) / Q.tau
            A = np.array([[yf @ W[:, 1], yf @ W[:, 2]], [W[:, 1].sum(), W[:, 2].sum()]])
            lam = scipy.linalg.solve(A, np.array([c_y - yf @ W[:, 0], c_e - W[:, 0].sum()]), check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return None
    a_free = W[:, 0] + lam[0] * W[:, 1] + lam[1] * W[:, 2]
    if not np.all(np.isfinite(a_free)):
        return None
    out = alpha.copy()
    out[idx] = a_free
    return out, float(lam[0]), float(lam[1])


def _certified(Q, y, alpha, C, r, free, lower, upper, tol, scale) -> bool:
    """The KKT conditions of the QP at ``alpha`` with multipliers giving the reduced gradient ``r``."""
    feasible = (abs(float(y @ alpha)) <= 1e-9 and abs(float(alpha.sum()) - 2.0) <= 1e-9
                and float(alpha.min()) >= 0.0 and (not math.isfinite(C) or float(alpha.max()) <= C))
    stationary = float(np.max(np.abs(r[free]), initial=0.0)) <= tol * scale
    return bool(feasible and stationary and np.all(r[lower] >= -tol * scale) and np.all(r[upper] <= tol * scale))
