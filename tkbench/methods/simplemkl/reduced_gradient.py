"""SimpleMKL: reduced-gradient descent on the simplex of kernel weights (Rakotomamonjy et al., JMLR 2008).

J(d) = OPT_A(sum_k d_k K_k), the SVM / SVR dual value with the combined kernel, is convex and differentiable in d
with dJ/dd_k = -1/2 w^T K_k w at the dual solution w (Danskin). On the simplex {d >= 0, sum d = 1}:

- reduced gradient with respect to the largest weight d_mu: r_k = g_k - g_mu (k != mu);
- direction: D_k = -r_k, except D_k = 0 where d_k = 0 and r_k > 0; D_mu = -sum_{k != mu} D_k (stays on the simplex);
- step: gamma in [0, gamma_max] (gamma_max: the first weight reaches 0) minimising J(d + gamma D), by regula falsi
  on the directional derivative (one SVM solve per evaluation); a weight that reaches 0 is set to 0 exactly, and
  while J still decreases there the descent goes on from that point with a new direction (the paper's inner loop);
  weights below 1e-6 are set to 0 at the start of each iteration (one solve for all of them, where zeroing them one
  segment at a time takes steps of ~1e-12 that no SVM solve resolves);
- stop: relative duality gap (max_k w^T K_k w - sum_k d_k w^T K_k w) / 2 / J(d) <= tol (1e-2 in paper 003), or
  max_iter (never on a gap from an SVM solve stopped at LIBSVM's iteration cap). The MKL dual value
  kappa - 1/2 max_k w^T K_k w is a lower bound on min_d J(d) at every iteration.

Dual solver (``dual_solver``): ``"libsvm"`` (the default; every J(d) from scratch on the combined matrix) or
``"smo"``: our warm-startable SMO (:mod:`tkbench.methods._shared.smo`, issue 21: "the same solver serves SimpleMKL"), each
solve starting from the previous solve's dual variables (the line search's trials and the next iteration's start
are kernels close to the last one solved). Same stopping rule and tolerance; ``n_svm_iterations`` counts the SMO
iterations of all solves of either solver.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from tkbench.methods._shared.library import Library
from tkbench.methods._shared.line_search import minimise_on_segment
from tkbench.methods._shared.smo import smo_dual
from tkbench.methods._shared.svm import DUAL_SOLVERS, DualSolution, solve_dual

WEIGHT_FLOOR = 1e-6  # kernel weights (summing to 1) below this are set to 0 at the start of each iteration


@dataclass
class MKLResult:
    weights: np.ndarray
    solution: DualSolution
    n_iter: int
    converged: bool
    history: list[dict] = field(default_factory=list)
    n_svm_solves: int = 0
    n_svm_capped: int = 0  # SVM solves stopped at LIBSVM's iteration cap (see tkbench.methods._shared.svm)
    n_svm_iterations: int = 0  # SMO iterations summed over all solves


def simple_mkl(library: Library, y: np.ndarray, *, task: str, C: float, epsilon: float = 0.1, tol: float = 1e-2,
               max_iter: int = 100, svm_tol: float | None = None, line_search_steps: int = 6,
               init: np.ndarray | None = None, dual_solver: str = "libsvm") -> MKLResult:
    """Minimise J(d) over the simplex, from uniform weights or from ``init`` (a warm start, e.g. the weights
    found for a neighbouring C: the problem is convex, so the optimum is the same and only the path is shorter)."""
    if dual_solver not in DUAL_SOLVERS:
        raise ValueError(f"dual_solver {dual_solver!r}: expected one of {', '.join(DUAL_SOLVERS)}")
    M = len(library)
    svm_tol = min(1e-3, tol / 10) if svm_tol is None else svm_tol
    solves = capped = iterations = 0
    last = None  # the previous solve's dual variables: the SMO solver's warm start

    def evaluate(d: np.ndarray) -> tuple[DualSolution, np.ndarray]:
        nonlocal solves, capped, iterations, last
        solves += 1
        if dual_solver == "smo":
            sol, last = smo_dual(library.combined(d), y, task=task, C=C, epsilon=epsilon, tol=svm_tol, warm=last)
        else:
            sol = solve_dual(library.combined(d), y, task=task, C=C, epsilon=epsilon, tol=svm_tol)
        capped += sol.capped
        iterations += sol.n_iter
        return sol, library.quadratic_forms(sol.w)

    d = np.full(M, 1.0 / M)
    if init is not None:
        start = np.maximum(np.asarray(init, dtype=float).ravel(), 0.0)
        if start.shape == (M,) and start.sum() > 0:
            d = start / start.sum()
    sol, quad = evaluate(d)
    history: list[dict] = []
    converged = False
    t0 = time.perf_counter()
    for it in range(max_iter + 1):
        tiny = (d > 0) & (d < WEIGHT_FLOOR)
        if tiny.any():
            # Weights left at 1e-10..1e-7 by a long step each block the next direction at a step of ~1e-12, where
            # no SVM solve can resolve the change of J: the descent stalled with a gap of 1.4 on standardised
            # Airfoil (70 such weights). Zero them together (the kernel moves by less than M * 1e-6) and re-solve.
            d = np.where(tiny, 0.0, d)
            d /= d.sum()
            sol, quad = evaluate(d)
        primal = float(sol.value)
        dual = float(sol.kappa - 0.5 * quad.max())
        gap = primal - dual
        rel = gap / max(abs(primal), 1e-12)
        history.append({"iteration": it, "primal": primal, "dual": dual, "gap": gap, "relative_gap": rel,
                        "n_active": int(np.count_nonzero(d)), "seconds": time.perf_counter() - t0})
        if sol.capped:  # an uncertified gap (OPT_A only bounded below) never ends the run
            history[-1]["svm_capped"] = True
        elif rel <= tol:
            converged = True
            break
        if it == max_iter:
            break
        value_before, zeroed = sol.value, 0
        while True:  # descend, zeroing weights one after another while J keeps decreasing (SimpleMKL's inner loop)
            D = _direction(d, -0.5 * quad)
            if not np.any(D):
                break
            step, d_new, sol_new, quad_new, at_end = _line_search(d, D, sol, quad, evaluate, line_search_steps)
            if sol_new.value >= sol.value:
                break
            d, sol, quad = d_new, sol_new, quad_new
            if not at_end:
                break
            zeroed += 1
        history[-1]["zeroed"] = zeroed
        if sol.value >= value_before:  # no decrease possible at this SVM accuracy
            break
    return MKLResult(d, sol, len(history) - 1, converged, history, solves, capped, iterations)


def _direction(d: np.ndarray, grad: np.ndarray) -> np.ndarray:
    mu = int(np.argmax(d))
    reduced = grad - grad[mu]
    D = -reduced
    D[(d <= 0) & (reduced > 0)] = 0.0
    D[mu] = 0.0
    D[mu] = -D.sum()
    return D


def _line_search(d, D, sol0, quad0, evaluate, steps):
    """Minimise J(d + g D) over [0, g_max], with J'(g) = -1/2 sum_k D_k w_g^T K_k w_g.

    Returns (step, weights, solution, quadratic forms, whether the minimum is at g_max with J still decreasing).
    """
    neg = D < 0
    ratios = -d[neg] / D[neg]
    g_max = float(ratios.min())
    hitting = np.flatnonzero(neg)[ratios <= g_max * (1 + 1e-12)]

    def point(g):
        p = np.maximum(d + g * D, 0.0)
        if g >= g_max:
            p[hitting] = 0.0
        return p / p.sum()

    def at(g):
        p = point(g)
        sol, quad = evaluate(p)
        return sol.value, float(-0.5 * D @ quad), (p, sol, quad)

    g, (p, sol, quad), at_end = minimise_on_segment(at, sol0.value, float(-0.5 * D @ quad0), (d, sol0, quad0),
                                                    g_max, steps)
    return g, p, sol, quad, at_end
