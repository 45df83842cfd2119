"""Primal-dual Frank-Wolfe learning of a kernel that is linear in a PSD matrix P (paper 003, Algorithm 2).

The saddle problem (paper 003, Eq. (8)):  min_{P PSD, trace(P) = T}  max_{alpha}  kappa(alpha) - 1/2 w^T K(P) w,
with w = y * alpha (classification) or w = beta (regression), is solved by Frank-Wolfe on f(P) = OPT_A(P):

- alpha-step: OPT_A(P_k), the SVM / SVR dual with kernel K(P_k): by default LIBSVM (:mod:`tkbench.methods._shared.svm`)
  from scratch on the formed matrix; ``dual_solver="smo"``: our SMO (:mod:`tkbench.methods._shared.smo`, LIBSVM's
  algorithm and stopping rule, double precision), warm-started from the solution at the line search's start and
  reading its kernels (1 - g) K_k + g K(S_k) from the two matrices without forming them (issue 21: not yet faster
  than LIBSVM on Airfoil, so not the default);
- P-step (Theorem 15): OPT_P(alpha_k) = min_P kappa - 1/2 <P, D(w_k)> is attained at S_k = T v v^T with v the
  eigenvector of the *largest* eigenvalue of D(w_k) (D(w) is PSD and enters with a minus sign; the paper's
  "minimum singular value" refers to -D/2), so OPT_P(alpha_k) = kappa - T lambda_max / 2;
- step: gamma in [0, 1] minimising the convex phi(gamma) = OPT_A(P_k + gamma (S_k - P_k)). The kernel is linear in
  P, so K_gamma = (1 - gamma) K_k + gamma K(S_k) needs no new kernel evaluation; phi'(gamma) =
  -1/2 w_gamma^T (K(S_k) - K_k) w_gamma (Danskin), and the root of phi' is found by safeguarded regula falsi; the
  accepted step updates K_k in place;
- stop when the certified gap OPT_A(P_k) - max_{j <= k} OPT_P(alpha_j) relative to |OPT_A(P_k)| falls below ``tol``
  (1e-2 in the paper), or after ``max_iter`` iterations. A gap computed from an SVM solve that stopped at LIBSVM's
  iteration cap is not certified (its OPT_A is only a lower bound) and never ends the run.

OPT_P(alpha) <= OPT* for every feasible alpha and OPT* <= OPT_A(P_k): so the best lower bound so far brackets the
optimum with the current iterate's value, and that is the gap the stop rule tests. The paper's rule reads the
iterate's own Frank-Wolfe gap OPT_A(P_k) - OPT_P(alpha_k), which is not monotone (Jaggi 2013, section 2): on
Gas Turbine at m = 29 386 it fell to 0.023 at iteration 18 and rose to 0.76-2.1 at iterations 19-23 while the best
bound certified 0.008 at iteration 21 (issue 21). Both are recorded in the history: ``gap`` / ``relative_gap`` the
certificate (as the booster's history, :mod:`tkbench.methods.tk.apd`), ``fw_gap`` the iterate's own gap, ``dual`` the
iterate's OPT_P(alpha_k) and ``best_dual`` the largest so far. A stop by the certificate is never later than a stop
by the iterate's gap.

Checkpoints (``checkpoint``, :mod:`tkbench.methods._shared.checkpoint`): after every iteration the state -- P, the dual
variables, the previous step, the history and the counters -- is saved; a run started on the same problem with the
same file continues from it: K(P) is recomputed from P (one kernel pass; it equals the in-place updated K up to
rounding) and the dual re-solved from the saved variables (a warm start that is already optimal up to that
rounding with the SMO solver; LIBSVM starts from zero). ``history[i]["seconds"]`` counts the earlier sessions' time.

The 2nd-stage booster (paper 003 section 5.5; ``booster_step``): once an accepted step falls below
``booster_step``, the accelerated primal-dual method of :mod:`tkbench.methods.tk.apd` takes over from the current
(P, alpha) with the same tolerance on a certified gap; its certifications are appended to the history with
``"booster": True`` (not checkpointed: a killed run resumes at the switch).
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tkbench.methods._shared.checkpoint import Checkpoint
from tkbench.methods._shared.line_search import minimise_on_segment
from tkbench.methods._shared.smo import CommonForm, WarmStart, smo_dual
from tkbench.methods._shared.svm import DUAL_SOLVERS, DualSolution, solve_dual
from tkbench.methods.tk.apd import apd_booster
from tkbench.methods.tk.kernel_pair import quadratic_difference


@dataclass
class FWResult:
    P: np.ndarray
    solution: DualSolution
    n_iter: int
    converged: bool
    history: list[dict] = field(default_factory=list)
    n_svm_solves: int = 0
    n_kernel_evals: int = 0
    n_svm_capped: int = 0  # SVM solves stopped at LIBSVM's iteration cap (see tkbench.methods._shared.svm)
    resumed: dict | None = None  # {"iteration": k, "seconds": s} when continued from a checkpoint
    tracked: np.ndarray | None = None  # the ``track`` vector at P (see frank_wolfe)

    @property
    def primal(self) -> float:
        return self.history[-1]["primal"]

    @property
    def dual(self) -> float:
        """The best lower bound on the optimum (``primal - dual == gap``, the certificate of the stop rule)."""
        last = self.history[-1]
        return last.get("best_dual", last["dual"])

    @property
    def gap(self) -> float:
        return self.history[-1]["gap"]


def frank_wolfe(
    kernel: Callable[[np.ndarray], np.ndarray],
    gradient: Callable[[np.ndarray], np.ndarray],
    size: int,
    y: np.ndarray,
    *,
    task: str,
    C: float,
    epsilon: float = 0.1,
    trace: float | None = None,
    tol: float = 1e-2,
    max_iter: int = 100,
    svm_tol: float | None = None,
    line_search_steps: int = 6,
    callback: Callable[[dict], None] | None = None,
    dual_solver: str = "libsvm",
    checkpoint: Checkpoint | None = None,
    booster_step: float | None = None,
    booster_max_iter: int = 1000,
    track: Callable[[], np.ndarray] | None = None,
) -> FWResult:
    """Minimise OPT_A(P) over {P PSD, trace(P) = trace} (default trace = size, P_0 = I).

    ``kernel(P)`` returns the training kernel matrix K(P); ``gradient(w)`` returns D(w) with <P, D(w)> = w^T K(P) w.
    ``track()``, called after each ``kernel`` evaluation, returns a vector linear in that evaluation's P (the TK
    learner: the raw kernel's row means, for its intercept); it is combined along with K and returned for the
    final P in ``FWResult.tracked``, which spares a kernel pass at the end.
    """
    T = float(size if trace is None else trace)
    svm_tol = min(1e-3, tol / 10) if svm_tol is None else svm_tol
    if dual_solver not in DUAL_SOLVERS:
        raise ValueError(f"dual_solver {dual_solver!r}: expected one of {', '.join(DUAL_SOLVERS)}")
    solves = capped = 0

    def solve(K: np.ndarray, KS: np.ndarray | None = None, g: float = 0.0,
              warm: WarmStart | None = None) -> DualSolution:
        """OPT_A on (1 - g) K + g KS (KS None: K), warm-started from ``warm`` with the SMO solver."""
        nonlocal solves, capped
        solves += 1
        if dual_solver == "smo":
            sol, _ = smo_dual(K, y, task=task, C=C, epsilon=epsilon, tol=svm_tol, KS=KS, g=g, warm=warm)
        else:
            formed = K if KS is None or g == 0.0 else KS if g == 1.0 else (1 - g) * K + g * KS
            sol = solve_dual(formed, y, task=task, C=C, epsilon=epsilon, tol=svm_tol)
        capped += sol.capped
        return sol

    saved = checkpoint.load() if checkpoint is not None else None
    history: list[dict] = []
    converged = False
    gamma = 0.5  # the line search's first trial is twice the previous step: 1 at the first iteration
    first, resumed, evals = 0, None, 1
    t0 = time.perf_counter()
    if saved is None:
        P = np.eye(size) * (T / size)
        K = kernel(P)
        tracked = track() if track is not None else None
        sol = solve(K)
    else:
        arrays, facts = saved
        P, history, gamma = arrays["P"], facts["history"], facts["gamma"]
        first, solves, capped, evals = facts["iteration"], facts["solves"], facts["capped"], facts["evals"] + 1
        t0 -= facts["seconds"]
        resumed = {"iteration": first, "seconds": facts["seconds"]}
        K = kernel(P)
        tracked = track() if track is not None else None
        sol = solve(K, warm=WarmStart(arrays["alpha"]) if "alpha" in arrays else None)
    best_dual = max((h["dual"] for h in history), default=-np.inf)  # resumed: the earlier iterations' bounds
    for it in range(first, max_iter + 1):
        D = gradient(sol.w)
        lam_max, v = top_eigenpair(D)
        primal = float(sol.value)
        dual = float(sol.kappa - 0.5 * T * lam_max)  # a lower bound on OPT* for any feasible alpha, capped or not
        best_dual = max(best_dual, dual)
        gap = primal - best_dual
        rel = float(gap / max(abs(primal), 1e-12))
        entry = {"iteration": it, "primal": primal, "dual": dual, "best_dual": best_dual, "gap": gap,
                 "relative_gap": rel, "fw_gap": primal - dual, "seconds": time.perf_counter() - t0}
        history.append(entry)
        if sol.capped:
            entry["svm_capped"] = True
        elif rel <= tol:
            converged = True
            break
        if it == max_iter:
            break
        S = T * np.outer(v, v)
        KS = kernel(S)
        tracked_S = track() if track is not None else None
        evals += 1
        gamma, sol = _line_search(K, KS, sol, solve, line_search_steps, first=2 * gamma)
        entry["step"] = gamma
        if callback is not None:
            callback(entry)
        if gamma <= 0.0:
            break  # no progress possible at this SVM accuracy
        P = (1 - gamma) * P + gamma * S
        K *= 1 - gamma  # in place (K(S_k) is not needed again): no third m x m matrix
        KS *= gamma
        K += KS
        if tracked is not None:
            tracked = (1 - gamma) * tracked + gamma * tracked_S
        del KS  # before the next K(S): else three m x m matrices at once (20 GB at m = 29 386, measured)
        if booster_step is not None and gamma < booster_step:  # paper 003 section 5.5: the 2nd stage
            boosted = apd_booster(kernel, gradient, K, P, _warm(sol, y, task), y, task=task, C=C,
                                  epsilon=epsilon, trace=T, tol=tol, max_iter=booster_max_iter, svm_tol=svm_tol,
                                  track=track, tracked=tracked)
            offset = history[-1]["seconds"]
            for h in boosted.history:
                history.append({**h, "iteration": it + h["iteration"], "seconds": offset + h["seconds"],
                                "booster": True})
            P, sol, converged, tracked = boosted.P, boosted.solution, boosted.converged, boosted.tracked
            evals += boosted.n_kernel_evals
            break
        if checkpoint is not None:
            arrays = {"P": P} if sol.state is None else {"P": P, "alpha": sol.state.alpha}
            checkpoint.save(arrays, {"iteration": it + 1, "gamma": gamma, "history": history, "solves": solves,
                                     "capped": capped, "evals": evals, "seconds": time.perf_counter() - t0})
    return FWResult(P, sol, history[-1]["iteration"], converged, history, solves, evals, capped, resumed, tracked)


def _warm(sol: DualSolution, y: np.ndarray, task: str) -> DualSolution:
    """``sol`` with the common-form dual variables as its state (LIBSVM's solutions carry only w)."""
    if sol.state is not None:
        return sol
    return dataclasses.replace(sol, state=WarmStart(CommonForm.of(y, task).variables(sol.w)))


def top_eigenpair(D: np.ndarray) -> tuple[float, np.ndarray]:
    """The largest eigenvalue of the symmetric D and a unit eigenvector (LAPACK syevr for that pair only: the P-step
    needs no other; a symmetric solver, never a general one, whose eigenvectors can come out complex)."""
    from scipy.linalg import eigh

    n = D.shape[0]
    lam, vecs = eigh(D, subset_by_index=[n - 1, n - 1], driver="evr")
    return float(lam[0]), vecs[:, 0]


def _line_search(K, KS, sol0: DualSolution, solve, steps: int, first: float | None = None
                 ) -> tuple[float, DualSolution]:
    """argmin over [0, 1] of phi(g) = OPT_A((1 - g) K + g KS), with phi'(g) = -1/2 w_g^T (KS - K) w_g; a solve
    at g starts from the solution at the nearest g solved so far (a warm-startable solver; on Airfoil this beat
    starting every trial from g = 0 by 15 % of SMO iterations, and starting g = 1 from zero was worse still).
    The first trial is ``first`` (twice the previous step; g = 1 at the first iteration), expanded 4x while the
    objective still decreases (:func:`tkbench.methods._shared.line_search.minimise_on_segment`)."""
    solved = {0.0: sol0}

    def slope(w: np.ndarray) -> float:  # entry by entry, without an m x m difference matrix (issue 21)
        return -0.5 * quadratic_difference(K, KS, w)

    def evaluate(g: float):
        nearest = min(solved, key=lambda h: abs(h - g))
        sol = solve(K, KS, g, solved[nearest].state)
        solved[g] = sol
        return sol.value, slope(sol.w), sol

    slope0 = slope(sol0.w)
    gamma, sol, _ = minimise_on_segment(evaluate, sol0.value, slope0, sol0, 1.0, steps, first=first)
    return gamma, sol
