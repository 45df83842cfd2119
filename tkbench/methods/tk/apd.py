"""The 2nd-stage primal-dual booster of TK learning (paper 003, section 5.5): an accelerated primal-dual (APD)
method for the Frank-Wolfe saddle problem, after Hamedani & Aybat ("A primal-dual algorithm with line search for
general convex-concave saddle point problems", SIAM J. Optim. 2021; arXiv 1803.01401).

Paper 003 says only that the booster is "based on the minimax momentum-style algorithms proposed in (Hamedani &
Aybat, 2020)", that it starts when the Frank-Wolfe step length falls below a threshold, and that its details are
in a supplement we do not have. This module is our design from that method; the choices are ours and are stated
here.

The saddle problem, in the common form of :mod:`tkbench.methods._shared.smo` (a in R^n, n = m for the C-SVC, 2m for the
epsilon-SVR with a = (a+, a-)):

    min_{P in S}  max_{a in A}  L(P, a) = -p^T a - 1/2 w(a)^T K(P) w(a),
    S = {P PSD, trace(P) = T},   A = {0 <= a <= C, s^T a = 0},

with s the signs (the labels; (1, -1) for the SVR's halves), w(a) = s * a (C-SVC) or a+ - a- (SVR), so that
a^T Q(P) a = w^T K(P) w. L is linear in P and concave in a. APD (Hamedani & Aybat's Algorithm 1, f and h the
indicators of S and A, Phi = L) with the momentum on the coupling gradient:

    G_k = grad_a L(P_k, a_k) = -p - s * (K(P_k) w_k)          (per copy for the SVR)
    a_{k+1} = Proj_A(a_k + sigma (G_k + theta (G_k - G_{k-1})))  (dual ascent with momentum, theta = 1)
    P_{k+1} = Proj_S(P_k + tau / 2 D(w_{k+1}))                   (primal descent: grad_P L = -1/2 D(w))

Step rules (ours, from the method's constant-step conditions): sigma = 1 / L_aa with L_aa = lambda_max(Q(P))
(power iteration, refreshed at each certification); tau by backtracking on the local form of the coupling
condition, tau sigma ||grad_a L(P_{k+1}, a_{k+1}) - grad_a L(P_k, a_{k+1})||^2 <= delta^2 ||P_{k+1} - P_k||_F^2
(delta = 0.9): a step that violates it is halved and redone; an accepted step lets tau grow by 1.2 for the next one
(the line search of Hamedani & Aybat, with their test replaced by this local Lipschitz estimate of the coupling).
K is linear in P, so K(P_{k+1}) = K(P_k) + K(P_{k+1} - P_k): one kernel evaluation per trial step (the second
m x m matrix, as Frank-Wolfe's K(S_k)), and the test's left side is ||K(dP) w_{k+1}|| from it.

Projections: onto A by bisection on the multiplier of s^T a = 0 (a = clip(v - lambda s, 0, C), monotone in
lambda); onto S by an eigendecomposition of the small 2q x 2q matrix and the projection of its eigenvalues onto the
simplex {lambda >= 0, sum = T}.

Certified gap. Every ``certify_every`` iterations the SVM dual is solved at P_k (our SMO, warm-started from a_k):
OPT_A(P_k) >= OPT* >= OPT_P(a) = -p^T a - T/2 lambda_max(D(w(a))) for every feasible a seen. The booster stops
when OPT_A(P_k) - max OPT_P <= tol |OPT_A(P_k)|, computed from a finished (uncapped) SVM solve, never from the
APD iterates alone, and returns the certified point with the smallest OPT_A (and its SVM solution).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tkbench.methods._shared.smo import CommonForm, WarmStart, smo_dual
from tkbench.methods._shared.svm import DualSolution
from tkbench.methods.tk.kernel_pair import matvec

DELTA = 0.9  # the coupling condition's margin
GROW = 1.2  # tau's growth after an accepted step


@dataclass
class BoosterResult:
    P: np.ndarray
    solution: DualSolution
    converged: bool
    history: list[dict] = field(default_factory=list)  # one entry per certification
    n_iter: int = 0
    n_kernel_evals: int = 0
    n_backtracks: int = 0
    tracked: np.ndarray | None = None  # the track vector at P (see frank_wolfe)


def project_box_hyperplane(v: np.ndarray, s: np.ndarray, C: float, tol: float = 1e-12) -> np.ndarray:
    """argmin ||a - v|| over {0 <= a <= C, s^T a = 0} (s in {-1, +1}^n): a = clip(v - lam s, 0, C) with lam the
    root of the non-increasing g(lam) = s^T clip(v - lam s, 0, C), found by bisection on a bracket that holds it."""
    def g(lam):
        return float(s @ np.clip(v - lam * s, 0.0, C))

    lo, hi = -1.0, 1.0
    while g(lo) < 0:
        lo *= 2
    while g(hi) > 0:
        hi *= 2
    scale = max(1.0, float(np.max(np.abs(v))) + C)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if g(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= tol * scale:
            break
    a = np.clip(v - 0.5 * (lo + hi) * s, 0.0, C)
    # the bisection leaves |s^T a| at rounding level; put the remainder on a free variable if there is one
    r = float(s @ a)
    free = np.flatnonzero((a > 0) & (a < C))
    if free.size and r != 0.0:
        t = free[np.argmax(np.minimum(a[free], C - a[free]))]
        a[t] = np.clip(a[t] - s[t] * r, 0.0, C)
    return a


def project_spectraplex(M: np.ndarray, trace: float) -> np.ndarray:
    """argmin ||P - M||_F over {P PSD, trace(P) = trace}: the eigenvalues of sym(M) projected onto the simplex."""
    lam, V = np.linalg.eigh((M + M.T) / 2)
    u = np.sort(lam)[::-1]
    cumulative = np.cumsum(u) - trace
    k = np.arange(1, len(u) + 1)
    rho = np.flatnonzero(u - cumulative / k > 0)[-1]
    shift = cumulative[rho] / (rho + 1)
    mu = np.maximum(lam - shift, 0.0)
    return (V * mu) @ V.T


def _lam_max(K: np.ndarray, v: np.ndarray, iterations: int = 30) -> tuple[float, np.ndarray]:
    """The largest eigenvalue of the PSD K by power iteration from v (returns it and the last vector)."""
    v = v / max(np.linalg.norm(v), 1e-300)
    lam = 0.0
    for _ in range(iterations):
        u = matvec(K, v)
        lam = float(np.linalg.norm(u))
        if lam == 0.0:
            break
        v = u / lam
    return lam, v


def apd_booster(kernel: Callable[[np.ndarray], np.ndarray], gradient: Callable[[np.ndarray], np.ndarray],
                K: np.ndarray, P: np.ndarray, start: DualSolution, y: np.ndarray, *, task: str, C: float,
                epsilon: float, trace: float, tol: float, max_iter: int = 1000, certify_every: int = 10,
                svm_tol: float = 1e-3, callback=None, track=None, tracked=None) -> BoosterResult:
    """Run the booster from (P, a) = (P, ``start``'s dual variables) with ``K`` = K(P) (updated in place).

    ``kernel(M)`` returns the (linear) training kernel matrix of any symmetric M; ``gradient(w)`` returns D(w).
    ``track`` / ``tracked``: as in :func:`tkbench.methods.tk.frank_wolfe.frank_wolfe` (a vector linear in P, kept
    along with K; its value at the returned P is in the result).
    """
    prob = CommonForm.of(y, task, epsilon)
    T = float(trace)
    if start.state is None:
        raise ValueError("the booster starts from a warm-startable (SMO) solution")
    a = np.array(start.state.alpha, float)
    t0 = time.perf_counter()

    def certify(a):  # OPT_A at the current P: the SVM solved to LIBSVM's rule, warm from the APD iterate
        sol, _ = smo_dual(K, y, task=task, C=C, epsilon=epsilon, tol=svm_tol, warm=WarmStart(a.copy()))
        return sol

    best_sol = start
    best_P = P.copy()
    best_tracked = None if tracked is None else tracked.copy()
    best_primal = float(start.value) if not start.capped else np.inf  # a capped solve certifies nothing
    w = prob.w(a)
    Kw = matvec(K, w)
    D = gradient(w)
    best_dual = float(-prob.p @ a - 0.5 * T * np.linalg.eigvalsh(D)[-1])
    lam, vec = _lam_max(K, np.ones(prob.m) + np.arange(prob.m) % 3)
    sigma = 1.0 / max(prob.q_scale * lam, 1e-300)
    tau = 1.0
    G_prev = G = -prob.p - prob.unfold(Kw)
    history: list[dict] = []
    evals = backtracks = 0
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        a_new = project_box_hyperplane(a + sigma * (2 * G - G_prev), prob.signs, C)
        w_new = prob.w(a_new)
        D = gradient(w_new)
        best_dual = max(best_dual, float(-prob.p @ a_new - 0.5 * T * np.linalg.eigvalsh(D)[-1]))
        while True:  # tau by backtracking on the coupling condition
            P_new = project_spectraplex(P + 0.5 * tau * D, T)
            dP = P_new - P
            norm_dP = float(np.linalg.norm(dP))
            if norm_dP == 0.0:
                Kd = None
                break
            Kd = kernel(dP)
            td = track() if track is not None else None
            evals += 1
            coupling = float(np.linalg.norm(prob.unfold(matvec(Kd, w_new))))
            if tau * sigma * coupling ** 2 <= DELTA ** 2 * norm_dP ** 2:
                break
            backtracks += 1
            tau /= 2
        if Kd is not None:
            K += Kd
            del Kd
            if tracked is not None:
                tracked = tracked + td
        P, a = P_new, a_new
        G_prev, G = G, -prob.p - prob.unfold(matvec(K, w_new))
        tau *= GROW
        if it % certify_every == 0 or it == max_iter:
            sol = certify(a)
            primal = float(sol.value)
            best_dual = max(best_dual, float(sol.kappa - 0.5 * T * np.linalg.eigvalsh(gradient(sol.w))[-1]))
            if not sol.capped and primal < best_primal:
                best_primal, best_P, best_sol = primal, P.copy(), sol
                best_tracked = None if tracked is None else tracked.copy()
            gap = best_primal - best_dual
            rel = gap / max(abs(best_primal), 1e-12)
            entry = {"iteration": it, "primal": best_primal, "dual": best_dual, "gap": gap, "relative_gap": rel,
                     "tau": tau, "sigma": sigma, "seconds": time.perf_counter() - t0}
            history.append(entry)
            if callback is not None:
                callback(entry)
            if rel <= tol:
                converged = True
                break
            lam, vec = _lam_max(K, vec, iterations=5)
            sigma = 1.0 / max(prob.q_scale * lam, 1e-300)
    return BoosterResult(best_P, best_sol, converged, history, it, evals, backtracks, best_tracked)

