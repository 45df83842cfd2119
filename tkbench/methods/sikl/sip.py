"""The semi-infinite program of paper 004 (SIKL), solved by its Algorithm 1.

Paper 004 (Ghiasi-Shirazi, Safabakhsh & Shamsi, JMLR 2010) learns a kernel and the 2-norm soft-margin weight tau
by solving P_tau(Gamma_beta), problem (19) (with Gaussian atoms: P_tau(Gamma, Omega) of section 4.7):

    min_{alpha, t} t   s.t.  t >= alpha^T G(gamma) alpha  for every frequency gamma,
                             t >= alpha^T G_omega alpha   for every Gaussian width omega >= 0 (CGM, GM),
                             t >= alpha^T alpha,
                             alpha in A = {0 <= alpha <= C, alpha^T y = 0, alpha^T e = 2}.

The learned kernel is sum_j mu_j G_beta(||gamma_j||) cos(gamma_j^T (x - z)) + sum_k nu_k k_omega_k + tau delta,
where mu, nu, tau are the multipliers of the constraints (Corollary 13; they sum to 1).

Algorithm 1 (section 5), as implemented in :func:`solve_sip`:

1. alpha^(0) = 1/l1 on the positive class, 1/l2 on the negative one; t^(0) = 1/l1 + 1/l2 (section 5.1).
2. Iteration i: R with 4 G_beta(R) = t^(i-1) (no constraint beyond R can be violated: alpha^T G(gamma) alpha <=
   (sum alpha)^2 G_beta = 4 G_beta, Eq. (5)); GlobalSearchForLocals (Algorithm 2, :func:`global_search`) at
   alpha^(i-1); the finite QCQP P_tau(Gamma^(i-1) + new points) in its rank-2 form (21) (:func:`solve_qcqp`:
   cvxpy, or with Gaussians exact alternatives through the dual or by tangent cuts); local adaptation of the
   frequencies and weights (section 5.4, :func:`local_adaptation`); elimination of zero multipliers; stop when t^(i) - t^(i-1) < epsilon t^(i-1) or i = T1.

Choices where the paper is silent (each is a parameter):

- Algorithm 2 adds only the local maxima that violate the current constraint (value > t^(i-1)): section 5.2 says
  the search "attempts to gather a subset of unsatisfied constraints". Two maxima are the same point when
  min(||g1 - g2||, ||g1 + g2||) <= ``same_tol`` (1 + ||g1||): gamma and -gamma give the same cosine.
- L-BFGS (SciPy's L-BFGS-B, ``search="scipy"``, the default; or ``search="compiled"``: one compiled ascent per
  start, :mod:`tkbench.methods.sikl.lbfgs_compiled`) keeps 17 curvature pairs and tries at most 20 line-search steps (section 9), and stops
  on an absolute projected-gradient norm (``gtol``), as the paper changed liblbfgs's relative test to an absolute
  one; the number of iterations of local adaptation is capped by ``local_iter``.
- Local adaptation maximises J(rho, gamma) of (25)-(26) with mu_i = rho_i^2 / rho^T rho; J is evaluated by the
  intermediate SVM (27) in its rank-2 form, solved by Clarabel directly (:func:`solve_svm_qp`); its gradient is
  (28)-(29) in the O(m (nsv + n)) form of section 5.5 (Danskin's theorem: alpha is held at the optimum). The
  paper solves (27) by MOSEK; here LIBSVM on the one l x l matrix (up to 4000 rows, 10-20 times faster) or
  Clarabel on the rank-2 form (O(l m) memory), both checked against each other and cvxpy. Consecutive
  evaluations are close: each first tries the exact active-set polish from the previous evaluation's alpha, and
  runs LIBSVM only when that does not certify, and Clarabel when LIBSVM's cascade does not (same certified
  answer, see :func:`solve_svm_qp`). In (29)
  the printed sum uses c_j, s_j inside the sum over i; the derivative of J has c_i, s_i (the gradient test checks
  this against finite differences).
- t^(i) is J at the adapted point, which is the value of P_tau at the adapted atoms with the adapted weights;
  multipliers below ``prune_tol`` are eliminated (Lemma 14: zero multipliers do not change the solution). Atoms
  whose QCQP multiplier is zero are removed before local adaptation (their rho would stay 0: d J / d rho_j is
  proportional to rho_j).
- Support vectors for the O(nsv) sums are the alpha above ``1e-9 * max(alpha)``.
- C = infinity (the paper's CM and CGM) is the problem without the upper bound alpha <= C; tau > 0 keeps it
  bounded (a hard margin in the feature space of k + tau delta).

The intercept is the one of the SVM with kernel k + tau delta: with lambda_+ / 2 and lambda_- / 2 the values of
y_u (Q alpha)_u on the free support vectors of each class (KKT of (27)), b = -(lambda_+ - lambda_-) / 4, the middle
of the two supporting hyperplanes (:func:`intercept`).
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from tkbench.methods.sikl.active_set import LowRankPlusDiagonal, polish
from tkbench.methods.sikl.cosine import (
    cosine_rows,
    cosine_value_grad,
    gaussian_value_grad,
    squared_distances,
    stabilizer,
)
from tkbench.methods.sikl.lbfgsb_driver import minimize_lbfgsb

LBFGS_MEMORY = 17  # section 9: "the 17 most recent curvature information"
LBFGS_LINESEARCH = 20  # section 9: "the maximum number of line-search tries is set to 20"
QCQP_SOLVERS = ("CLARABEL", "SCS", "MOSEK", "bundle", "cuts", "auto")  # cvxpy solvers, solve_qcqp's own, or auto
SEARCHES = ("scipy", "compiled")


class SIPError(RuntimeError):
    """A sub-problem solver did not reach an optimal solution; ``reason``: what the solver said, without the
    problem's description (an error that names several solvers' failures joins their reasons)."""

    def __init__(self, message: str, reason: str | None = None):
        super().__init__(message)
        self.reason = message if reason is None else reason


@dataclass
class Mixture:
    """A learned kernel: cosine atoms (frequencies ``gammas``, weights ``mu``), Gaussian atoms (``omegas``,
    weights ``nu``) and the delta weight ``tau``."""

    gammas: np.ndarray
    mu: np.ndarray
    omegas: np.ndarray
    nu: np.ndarray
    tau: float

    @property
    def m(self) -> int:
        return len(self.mu)

    @property
    def m_gauss(self) -> int:
        return len(self.nu)

    def prune(self, tol: float) -> Mixture:
        keep_c = self.mu > tol
        keep_g = self.nu > tol
        return Mixture(self.gammas[keep_c], self.mu[keep_c], self.omegas[keep_g], self.nu[keep_g], self.tau)


@dataclass
class Problem:
    """The training data and the kernel class of one SIP."""

    X: np.ndarray
    y: np.ndarray  # +-1
    beta: float
    eta: float
    C: float  # math.inf: no upper bound
    cosines: bool
    gaussians: bool
    D: np.ndarray | None = None  # squared distances, for Gaussian atoms

    def __post_init__(self):
        if self.gaussians and self.D is None:
            self.D = squared_distances(self.X, self.X)

    @property
    def l(self) -> int:  # noqa: E743
        return len(self.y)

    def gauss_matrix(self, omega: float) -> np.ndarray:
        """diag(y) K_omega diag(y) exp(-eta omega^2): alpha^T (this) alpha is the Gaussian constraint's value."""
        K = np.exp(-omega * self.D) * math.exp(-self.eta * omega * omega)
        return K * np.outer(self.y, self.y)


# ---------------------------------------------------------------------------------------------------------------
# the finite QCQP P_tau(Gamma), problem (21)


def _psd_factor(M: np.ndarray) -> np.ndarray:
    """L with L L^T = M (M symmetric PSD), from the eigenvalues above 1e-12 of the largest."""
    vals, vecs = np.linalg.eigh(M)
    keep = vals > 1e-12 * max(vals[-1], 1e-300)
    return vecs[:, keep] * np.sqrt(vals[keep])


@dataclass
class QCQPSolution:
    t: float
    alpha: np.ndarray
    mixture: Mixture
    seconds: float
    solver: str = "CLARABEL"  # the solver that produced this solution
    cuts: int = 0  # the bundle's oracle calls or the cutting planes' solves (0 for a cvxpy solver)
    status: str = "optimal"  # a cvxpy solver's status: "optimal", or "optimal_inaccurate" (accepted, counted)


def solve_qcqp(prob: Problem, gammas: np.ndarray, omegas: np.ndarray, solver: str = "CLARABEL",
               warm: np.ndarray | None = None) -> QCQPSolution:
    """P_tau(Gamma) for finite sets of frequencies and widths in the rank-2 form (21) (no l x l matrix per cosine:
    t >= c_i^2 + s_i^2 with c = Vc alpha, s = Vs alpha), solved by cvxpy. The multipliers of the cosine, Gaussian
    and alpha^T alpha constraints are mu, nu and tau (Corollary 13).

    ``solver="bundle"``: the same problem through its dual, max over the weights of the intermediate SVM's value,
    by :func:`tkbench.methods.sikl.level_bundle.level_bundle` (each cut one warm exact solve of (27)); alpha is the
    convex combination of the cuts' SVM solutions given by the final LP's multipliers (feasible for (21)), t the
    largest constraint value at it, certified within ``BUNDLE_TOL`` (relative) of the optimum; an error when
    ``BUNDLE_MAX_CUTS`` cuts do not certify it.

    ``solver="cuts"``: each Gaussian constraint by tangent cuts t >= 2 a_k^T G a - a_k^T G a_k (outer
    approximation, Kelley's cutting planes), the cosines exactly, by Clarabel, a cut added at each solution until
    the solution's largest true constraint value is within ``CUTS_TOL`` (relative) of the relaxation's t (a lower
    bound on the optimum); the Gaussian's multiplier is the sum of its cuts' multipliers. The first cuts are at
    ``warm`` (the previous iteration's alpha), if given. An error when ``CUTS_MAX`` solves do not certify it.

    ``solver="auto"``: Clarabel when the problem has no Gaussian constraint. With Gaussians: up to
    ``BUNDLE_MAX_WEIGHTS`` weights the bundle; beyond, up to ``AUTO_CUTS`` cutting-plane solves (fewer when their
    gap stalls: :func:`_cuts_stalled`), then the bundle; then Clarabel if neither certified. Clarabel's cost grows
    with the Gaussians' dense l x l factors; the bundle's with the number of weights; the cuts' with the Gaussians'
    weight (a Gaussian the optimum barely uses needs few cuts). Measured (one process beside two sweeps): German
    (l = 700) GM, two Gaussians: Clarabel 13 s, the bundle 1.2 s (18 cuts); German CGM, 29 cosines and a Gaussian
    of weight 2e-6: Clarabel 9 s, the bundle 425 cuts and 20 s, the cuts 0.4 s (3 solves); Image (l = 1300), 20
    random cosines and a Gaussian of weight 0.41: Clarabel 48 s, the bundle 3.7 s (45 cuts), the cuts 36 s (62
    solves); the same t to 1e-6 throughout."""
    t0 = time.perf_counter()
    gammas = np.asarray(gammas, float).reshape(-1, prob.X.shape[1])
    omegas = np.asarray(omegas, float)
    n_weights = len(gammas) + len(omegas) + 1
    if solver == "auto":
        if not len(omegas):
            solver = "CLARABEL"
        else:
            attempts = ([_solve_qcqp_bundle] if n_weights <= BUNDLE_MAX_WEIGHTS else
                        [partial(_solve_qcqp_cuts, max_solves=AUTO_CUTS), _solve_qcqp_bundle])
            for attempt in attempts:
                try:
                    sol = attempt(prob, gammas, omegas, t0, warm)
                except SIPError:  # a relaxation the interior point could not solve: try the next
                    sol = None
                if sol is not None:
                    return sol
            return _solve_qcqp_clarabel_or_scs(prob, gammas, omegas, t0)
    if solver in ("bundle", "cuts"):
        sol = (_solve_qcqp_bundle if solver == "bundle" else _solve_qcqp_cuts)(prob, gammas, omegas, t0, warm)
        if sol is None:
            tol, cap = (BUNDLE_TOL, BUNDLE_MAX_CUTS) if solver == "bundle" else (CUTS_TOL, CUTS_MAX)
            raise SIPError(f"QCQP (21) with {len(gammas)} cosines, {len(omegas)} Gaussians: the {solver} method did "
                           f"not certify a relative gap of {tol:g} in {cap} steps")
        return sol
    if solver == "CLARABEL":
        return _solve_qcqp_clarabel_or_scs(prob, gammas, omegas, t0)
    return _solve_qcqp_cvxpy(prob, gammas, omegas, solver, t0)


SCS_FALLBACK_EPS = 1e-7  # SCS's eps_abs and eps_rel when it stands in for a failed Clarabel solve
SCS_FALLBACK_MAX_ITERS = 200_000


def _solve_qcqp_clarabel_or_scs(prob: Problem, gammas: np.ndarray, omegas: np.ndarray, t0: float) -> QCQPSolution:
    """(21) by Clarabel; when Clarabel fails numerically (cvxpy's SolverError, or a status other than optimal /
    optimal_inaccurate), by SCS at ``SCS_FALLBACK_EPS`` (paper 004 is silent on the solver: tkbench's choice).
    The solution says which solver produced it (``QCQPSolution.solver``: the fit's trace and diagnostics count
    the fallbacks), and the error names both solvers when neither solved it. Why: one kernel_benchmark run
    (German, SIKL CGM, split 1, 4 cosines and 2 Gaussians) failed on Clarabel alone (2026-11-30); a first-order
    method does not factor the KKT system that an interior point can find singular. The problem is the same;
    SCS's optimum agrees with Clarabel's to about its tolerance where both solve (tested)."""
    try:
        return _solve_qcqp_cvxpy(prob, gammas, omegas, "CLARABEL", t0)
    except SIPError as first:
        try:
            return _solve_qcqp_cvxpy(prob, gammas, omegas, "SCS", t0, solver_options={
                "eps_abs": SCS_FALLBACK_EPS, "eps_rel": SCS_FALLBACK_EPS, "max_iters": SCS_FALLBACK_MAX_ITERS})
        except SIPError as second:
            raise SIPError(f"{first}; then {second.reason}", reason=f"{first.reason}; then {second.reason}") \
                from second


def _solve_qcqp_cvxpy(prob: Problem, gammas: np.ndarray, omegas: np.ndarray, solver: str, t0: float,
                      cuts: list[list[tuple[np.ndarray, float]]] | None = None,
                      rows: tuple[np.ndarray, np.ndarray] | None = None,
                      solver_options: dict | None = None) -> QCQPSolution:
    """(21) by a cvxpy solver (``solver_options``: passed to it; Clarabel's QDLDL by default); with ``cuts`` (per Gaussian, a list of (g, c): t >= g^T alpha - c) the Gaussian
    constraints are replaced by those cuts (a relaxation), and t is the relaxation's value. ``rows``: the cosine
    rows (Vc, Vs) when the caller already has them (the cutting-plane loop solves many relaxations)."""
    import cvxpy as cp

    l = prob.l  # noqa: E741
    alpha = cp.Variable(l, nonneg=True)
    t = cp.Variable()
    delta = cp.sum_squares(alpha) <= t
    cons = [delta, prob.y @ alpha == 0, cp.sum(alpha) == 2]
    if math.isfinite(prob.C):
        cons.append(alpha <= prob.C)
    cos_con = None
    if len(gammas):
        Vc, Vs = rows if rows is not None else cosine_rows(gammas, prob.X, prob.y, prob.beta)
        cos_con = cp.square(Vc @ alpha) + cp.square(Vs @ alpha) <= t
        cons.append(cos_con)
    gauss_cons = []
    for k, omega in enumerate(omegas):
        if cuts is None:
            L = _psd_factor(prob.gauss_matrix(float(omega)))
            gauss_cons.append(cp.sum_squares(L.T @ alpha) <= t)
        elif cuts[k]:
            g = np.array([cut[0] for cut in cuts[k]])
            gauss_cons.append(g @ alpha - np.array([cut[1] for cut in cuts[k]]) <= t)
        else:
            gauss_cons.append(None)
    cons.extend(c for c in gauss_cons if c is not None)
    problem = cp.Problem(cp.Minimize(t), cons)
    # Clarabel's QDLDL factorisation: on German CM's QCQPs (l = 560, 44-278 cosines, whose dense rows fill the KKT
    # factor) 1.5 times faster than its default (faer) with the same optimum to 1e-6 (2026-11-28, six instances)
    options = solver_options if solver_options is not None else (
        {"direct_solve_method": "qdldl"} if solver == "CLARABEL" else {})
    try:
        problem.solve(solver=solver, **options)
    except cp.error.SolverError as exc:
        reason = f"{solver} failed: {exc}"
        raise SIPError(f"QCQP (21) with {len(gammas)} cosines, {len(omegas)} Gaussians: {reason}", reason) from exc
    if problem.status not in ("optimal", "optimal_inaccurate"):
        reason = f"{solver} status {problem.status}"
        raise SIPError(f"QCQP (21) with {len(gammas)} cosines, {len(omegas)} Gaussians: {reason}", reason)
    mu = np.maximum(np.atleast_1d(cos_con.dual_value), 0.0) if cos_con is not None else np.zeros(0)
    nu = np.array([0.0 if c is None else max(float(np.sum(c.dual_value)), 0.0) for c in gauss_cons])
    tau = max(float(np.ravel(delta.dual_value)[0]), 0.0)
    a = np.maximum(np.asarray(alpha.value, float), 0.0)
    mixture = Mixture(gammas, mu, omegas, nu, tau)
    return QCQPSolution(float(t.value), a, mixture, time.perf_counter() - t0, solver=solver,
                        status=str(problem.status))


CUTS_TOL = 1e-6  # the relative certified gap at which the cutting-plane solver of (21) stops
CUTS_MAX = 200  # ... or gives up
AUTO_CUTS = 40  # ``auto``'s budget of cutting-plane solves before it tries the bundle ...
CUTS_RATE_WINDOW = 5  # ... which it leaves earlier when, at the rate of the last this-many solves, the gap would
# not reach CUTS_TOL within that budget. The cuts converge linearly or stall: on an image CGM fit (l = 1040, soft
# margin, tau = 0.42) the gap halved per solve and 14-27 solves certified, where a stop at 10 sent two QCQPs to the
# bundle (300 cuts, no certificate) and then to Clarabel on the dense Gaussian factors (40 s each): the fit took
# 98 s, 47 s with this rule; on ringnorm CGM (l = 320, tau ~ 0: a hard margin) the gap sat at 1e-2 after 40
# solves, and this rule gives up after 6-11 (2026-11-26).


def _solve_qcqp_cuts(prob: Problem, gammas: np.ndarray, omegas: np.ndarray, t0: float,
                     warm: np.ndarray | None = None, max_solves: int | None = None) -> QCQPSolution | None:
    """(21) with the Gaussian constraints by tangent cuts (see :func:`solve_qcqp`); None when not certified."""
    G = [prob.gauss_matrix(float(omega)) for omega in omegas]
    cuts: list[list[tuple[np.ndarray, float]]] = [[] for _ in omegas]
    rows = cosine_rows(gammas, prob.X, prob.y, prob.beta) if len(gammas) else None  # once for every relaxation

    def add_cuts(a: np.ndarray) -> np.ndarray:
        values = np.empty(len(G))
        for k, Gk in enumerate(G):
            Ga = Gk @ a
            values[k] = float(a @ Ga)
            cuts[k].append((2.0 * Ga, values[k]))
        return values

    if warm is not None and len(warm) == prob.l:
        add_cuts(np.asarray(warm, float))
    budget = CUTS_MAX if max_solves is None else max_solves
    best: list[float] = []  # the smallest relative gap so far, per solve
    for n in range(1, budget + 1):
        relaxed = _solve_qcqp_cvxpy(prob, gammas, omegas, "CLARABEL", t0, cuts=cuts, rows=rows)
        a, mix = relaxed.alpha, relaxed.mixture
        vg = add_cuts(a)
        vc = (rows[0] @ a) ** 2 + (rows[1] @ a) ** 2 if rows is not None else np.zeros(0)  # Eq. (5), from the rows
        upper = float(max(np.max(vc, initial=-np.inf), np.max(vg), float(a @ a)))  # alpha is feasible with this t
        if upper - relaxed.t <= CUTS_TOL * abs(relaxed.t):
            return QCQPSolution(upper, a, mix, time.perf_counter() - t0, solver="cuts", cuts=n)
        gap = (upper - relaxed.t) / max(abs(relaxed.t), 1e-300)
        best.append(min(gap, best[-1]) if best else gap)
        if max_solves is not None and _cuts_stalled(best, budget):
            return None
    return None


def _cuts_stalled(best: list[float], budget: int) -> bool:
    """True when the cutting planes would not certify within ``budget`` solves at the rate (geometric, per solve)
    of their best relative gap over the last ``CUTS_RATE_WINDOW`` solves (``AUTO_CUTS``' note)."""
    n, w = len(best), CUTS_RATE_WINDOW
    if n <= w:
        return False
    rate = (best[-1] / best[-1 - w]) ** (1.0 / w)
    if rate >= 1.0:
        return True
    return n + math.log(CUTS_TOL / best[-1]) / math.log(rate) > budget


BUNDLE_TOL = 1e-6  # the relative certified gap at which the bundle solver of (21) stops
BUNDLE_MAX_CUTS = 300  # ... or gives up (``auto`` then falls back to Clarabel)
BUNDLE_MAX_WEIGHTS = 16  # ``auto`` uses the bundle up to this many weights (cosines + Gaussians + tau)


def _solve_qcqp_bundle(prob: Problem, gammas: np.ndarray, omegas: np.ndarray, t0: float,
                       warm: np.ndarray | None = None) -> QCQPSolution | None:
    """(21) by the level-bundle method on its dual (see :func:`solve_qcqp`); None when not certified. ``warm``
    starts the first SVM solve."""
    from tkbench.methods.sikl.level_bundle import level_bundle

    m, g = len(gammas), len(omegas)
    Vc, Vs = cosine_rows(gammas, prob.X, prob.y, prob.beta) if m else (None, None)
    last: dict[str, np.ndarray | None] = {"alpha": warm if warm is not None and len(warm) == prob.l else None}

    def mixture_of(theta: np.ndarray) -> Mixture:
        return Mixture(gammas, theta[:m].copy(), omegas, theta[m : m + g].copy(), float(theta[-1]))

    def oracle(theta: np.ndarray):
        mix = mixture_of(theta)
        alpha, value = solve_svm_qp(prob, mix, Vc=Vc, Vs=Vs, warm=last["alpha"])
        last["alpha"] = alpha
        vc, vg, v0 = constraint_values(prob, mix, alpha)
        q = np.concatenate([vc, vg, [v0]])
        return value, q, float(q.max()), alpha

    res = level_bundle(oracle, m + g + 1, tol=BUNDLE_TOL, max_cuts=BUNDLE_MAX_CUTS)
    if not res.converged:
        return None
    alpha = np.asarray(res.cut_weights @ np.array(res.states), float)  # the recovered primal point
    mix = mixture_of(res.theta)
    vc, vg, v0 = constraint_values(prob, mix, alpha)
    t = float(max(np.max(vc, initial=-np.inf), np.max(vg, initial=-np.inf), v0))  # in [lower, upper]
    return QCQPSolution(t, alpha, mix, time.perf_counter() - t0, solver="bundle", cuts=res.cuts)


def constraint_values(prob: Problem, mixture: Mixture, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(alpha^T G(gamma_j) alpha, alpha^T G_omega_k alpha, alpha^T alpha) by Eq. (5) and the Gaussian sums."""
    if mixture.m:
        Vc, Vs = cosine_rows(mixture.gammas, prob.X, prob.y, prob.beta)
        vc = (Vc @ alpha) ** 2 + (Vs @ alpha) ** 2
    else:
        vc = np.zeros(0)
    vg = np.array([float(alpha @ prob.gauss_matrix(float(o)) @ alpha) for o in mixture.omegas])
    return vc, vg, float(alpha @ alpha)


# ---------------------------------------------------------------------------------------------------------------
# the intermediate SVM (27) and the intercept


SVM_SOLVERS = ("auto", "libsvm", "clarabel")
LIBSVM_MAX_ROWS = 4000  # "auto" forms the l x l matrix for LIBSVM up to this many training rows
LIBSVM_LOOSE_TOL = 1e-3  # LIBSVM's stopping tolerance before the active-set polish
# (tol, SMO iterations per training row (at least 100 rows), polish steps): LIBSVM then the exact active-set
# step, at a loose and then a medium tolerance, before Clarabel (and the step from its answer). With a tiny learned tau (heart, beta = 0.3: 2e-9) the step from
# the loose start can need 75-1585 iterations where from the 1e-6 start it certifies in a few; LIBSVM at 1e-10 took
# 0.2-3.7 s on those 170-row problems, at 1e-6 0.02-0.1 s.
LIBSVM_CASCADE = ((LIBSVM_LOOSE_TOL, 100, 50), (1e-6, 1000, 200))


def solve_svm_qp(prob: Problem, mixture: Mixture, *, Vc: np.ndarray | None = None, Vs: np.ndarray | None = None,
                 tol: float = 1e-10, method: str = "auto", warm: np.ndarray | None = None
                 ) -> tuple[np.ndarray, float]:
    """min_alpha alpha^T Q alpha over A with Q = sum_j mu_j G(gamma_j) + sum_k nu_k G_omega_k + tau I: problem (27).
    Returns (alpha, alpha^T Q alpha).

    ``clarabel``: the rank-2 form of section 5.5 (variables alpha and z = F alpha, F the stacked sqrt(mu_j) v_c,
    sqrt(mu_j) v_s rows; O(l m) memory), solved by Clarabel. ``libsvm``: LIBSVM (scikit-learn) on the one l x l
    matrix Q: for C = infinity, (27) is the hard-margin SVM with kernel k + tau delta up to scale (beta = 2 alpha
    / t; checked: no beta reaches LIBSVM's bound); for a finite C, it is nu-SVC with nu = 2 / (C l) (alpha = C
    alpha', e^T alpha' = nu l, 0 <= alpha' <= 1). Both are normalised to sum 1 per class. ``auto``: LIBSVM up to
    LIBSVM_MAX_ROWS training rows (10-20 times faster than the interior point here), Clarabel beyond.

    ``warm``: the solution of a nearby problem, e.g. the previous evaluation of local adaptation; the exact
    active-set polish (:func:`tkbench.methods.sikl.active_set.polish`) is tried from it first (on the rank-2 form
    without forming Q when there are no Gaussians; else on the formed Q, which LIBSVM then reuses), and LIBSVM or
    Clarabel run only when that does not certify. Either way the answer is the KKT-certified minimiser, so
    ``warm`` changes the time, not the result (up to the polish's 1e-9 tolerance)."""
    l = prob.l  # noqa: E741
    if mixture.m:
        if Vc is None:
            Vc, Vs = cosine_rows(mixture.gammas, prob.X, prob.y, prob.beta)
        root = np.sqrt(mixture.mu)[:, None]
        F = np.vstack([root * Vc, root * Vs])
    else:
        F = np.zeros((0, l))
    if method not in SVM_SOLVERS:
        raise ValueError(f"svm solver {method!r}: expected one of {', '.join(SVM_SOLVERS)}")
    Qa = None  # the Gaussian and delta part of Q, when there are Gaussians (dense l x l)
    if mixture.m_gauss:
        Qa = mixture.tau * np.eye(l)
        for omega, weight in zip(mixture.omegas, mixture.nu, strict=True):
            Qa += weight * prob.gauss_matrix(float(omega))
    Q = None  # the formed l x l matrix, only when there are Gaussians (Qa is dense already) or for LIBSVM
    if warm is not None:  # the exact step from the nearby solution; rank-2 form, no l x l matrix, without Gaussians
        Q = _formed_q(mixture, F, Qa) if Qa is not None else None
        alpha = polish(Q if Q is not None else LowRankPlusDiagonal(F, mixture.tau), prob.y, warm, prob.C)
        if alpha is not None:
            return alpha, _qp_value(mixture, F, Qa, alpha)
    if method == "libsvm" or (method == "auto" and l <= LIBSVM_MAX_ROWS):
        Q = Q if Q is not None else _formed_q(mixture, F, Qa)
        alpha = _svm_libsvm(prob, Q)
        if alpha is not None:
            return alpha, _qp_value(mixture, F, Qa, alpha)
    alpha = _svm_clarabel(prob, mixture, F, Qa, tol)
    if Q is not None:  # Q is formed (LIBSVM's cascade failed, or the warm step had Gaussians): make it exact
        exact = polish(Q, prob.y, alpha, prob.C, max_iter=LIBSVM_CASCADE[-1][2])
        alpha = exact if exact is not None else alpha
    return alpha, _qp_value(mixture, F, Qa, alpha)


def _qp_value(mixture: Mixture, F: np.ndarray, Qa: np.ndarray | None, alpha: np.ndarray) -> float:
    """alpha^T Q alpha = ||F alpha||^2 + alpha^T Qa alpha (Qa = tau I without Gaussians)."""
    z = F @ alpha
    rest = float(alpha @ Qa @ alpha) if Qa is not None else mixture.tau * float(alpha @ alpha)
    return float(z @ z) + rest


def _formed_q(mixture: Mixture, F: np.ndarray, Qa: np.ndarray | None) -> np.ndarray:
    """The l x l matrix Q of (27): F^T F plus the Gaussian and delta part (tau I without Gaussians)."""
    Q = F.T @ F
    if Qa is None:
        Q[np.diag_indices(Q.shape[0])] += mixture.tau
    else:
        Q += Qa
    return Q


def _svm_libsvm(prob: Problem, Q: np.ndarray) -> np.ndarray | None:
    """(27) by LIBSVM on the precomputed kernel Q (k + tau delta, signs removed); None when the hard-margin bound
    was reached or nothing certified (the caller then uses Clarabel, and polishes its answer). LIBSVM runs at a
    loose tolerance and :func:`tkbench.methods.sikl.active_set.polish` makes its answer exact (KKT-certified); when
    polishing fails, the same at 1e-6 (``LIBSVM_CASCADE``). On an ill-conditioned Q (tiny learned tau) this is
    10-40 times faster than SMO at 1e-10 and at least as accurate.

    When neither certifies, the last resort used to be LIBSVM at 1e-10; in the hard-margin regime (German, beta =
    0.3: tau ~ 1e-5, Q of rank <= 2m < l) that took 16-88 s per call (92 % of a 374 s fit, cProfile, 2026-11-26),
    where the interior point on the rank-2 form takes 0.6-1.1 s for the same optimum (to 1e-9 relative, checked
    on 40 such calls)."""
    l = prob.l  # noqa: E741
    K = Q * np.outer(prob.y, prob.y)
    for tol, per_row, steps in LIBSVM_CASCADE:
        start = _libsvm_alpha(prob, K, tol, max_iter=per_row * max(l, 100))
        if start is not None:
            alpha = polish(Q, prob.y, start, prob.C, max_iter=steps)
            if alpha is not None:
                return alpha
    return None


def _libsvm_alpha(prob: Problem, K: np.ndarray, tol: float, max_iter: int = -1) -> np.ndarray | None:
    """LIBSVM's solution of (27) at stopping tolerance ``tol`` (at most ``max_iter`` SMO steps, -1: no cap),
    normalised to sum 1 per class; None when the hard-margin bound was reached."""
    from sklearn.svm import SVC, NuSVC

    l = prob.l  # noqa: E741
    bound = 1e12
    if math.isfinite(prob.C):
        svm = NuSVC(kernel="precomputed", nu=min(1.0, 2.0 / (prob.C * l)), tol=tol, shrinking=True,
                    max_iter=max_iter)
    else:
        svm = SVC(kernel="precomputed", C=bound, tol=tol, shrinking=True, max_iter=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a capped loose answer is only a guess for polish
        svm.fit(K, prob.y)
    coef = np.zeros(l)
    coef[svm.support_] = np.abs(svm.dual_coef_[0])
    if not math.isfinite(prob.C) and coef.max() >= 0.5 * bound:
        return None
    alpha = coef.copy()
    for cls in (1.0, -1.0):
        part = prob.y == cls
        total = alpha[part].sum()
        if total <= 0:
            return None
        alpha[part] /= total
    return alpha


def _svm_clarabel(prob: Problem, mixture: Mixture, F: np.ndarray, Qa: np.ndarray | None, tol: float) -> np.ndarray:
    import clarabel

    l = prob.l  # noqa: E741
    k = F.shape[0]
    if Qa is None:
        P_alpha = sp.diags(np.full(l, 2.0 * mixture.tau))
    else:
        P_alpha = sp.csc_matrix(np.triu(2.0 * Qa))
    P = sp.block_diag([P_alpha, sp.identity(k) * 2.0], format="csc")
    P = sp.triu(P, format="csc")
    q = np.zeros(l + k)
    # equalities: z - F alpha = 0, y^T alpha = 0, e^T alpha = 2
    A_eq = sp.vstack([
        sp.hstack([sp.csr_matrix(-F), sp.identity(k)]),
        sp.hstack([sp.csr_matrix(prob.y.reshape(1, -1).astype(float)), sp.csr_matrix((1, k))]),
        sp.hstack([sp.csr_matrix(np.ones((1, l))), sp.csr_matrix((1, k))]),
    ])
    b_eq = np.concatenate([np.zeros(k), [0.0, 2.0]])
    blocks = [A_eq, sp.hstack([-sp.identity(l), sp.csr_matrix((l, k))])]
    rhs = [b_eq, np.zeros(l)]
    cones = [clarabel.ZeroConeT(k + 2), clarabel.NonnegativeConeT(l)]
    if math.isfinite(prob.C):
        blocks.append(sp.hstack([sp.identity(l), sp.csr_matrix((l, k))]))
        rhs.append(np.full(l, prob.C))
        cones.append(clarabel.NonnegativeConeT(l))
    A = sp.vstack(blocks, format="csc")
    b = np.concatenate(rhs)
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = tol
    settings.tol_gap_rel = tol
    settings.tol_feas = tol
    solver = clarabel.DefaultSolver(P, q, A, b, cones, settings)
    sol = solver.solve()
    status = str(sol.status)
    if status not in ("Solved", "AlmostSolved"):
        raise SIPError(f"intermediate SVM (27), l = {l}, {mixture.m} cosines: Clarabel status {status}")
    return np.maximum(np.asarray(sol.x[:l]), 0.0)


def q_alpha(prob: Problem, mixture: Mixture, alpha: np.ndarray) -> np.ndarray:
    """Q alpha (the half gradient of (27)) without forming Q: y_u f'(x_u), f' the kernel expansion with k + tau
    delta."""
    w = alpha * prob.y
    out = mixture.tau * alpha
    if mixture.m:
        Vc, Vs = cosine_rows(mixture.gammas, prob.X, prob.y, prob.beta)
        out = out + Vc.T @ (mixture.mu * (Vc @ alpha)) + Vs.T @ (mixture.mu * (Vs @ alpha))
    for omega, weight in zip(mixture.omegas, mixture.nu, strict=True):
        K = np.exp(-omega * prob.D) * math.exp(-prob.eta * omega * omega)
        out = out + weight * prob.y * (K @ w)
    return out


def intercept(prob: Problem, mixture: Mixture, alpha: np.ndarray, sv_tol: float = 1e-9) -> float:
    """b of the SVM with kernel k + tau delta from the KKT conditions of (27): on each class, lambda_c / 2 is
    (Q alpha)_u on the free support vectors (0 < alpha_u < C), or the middle of its bounds when there is none;
    the classifier sign(f(x) + b) puts its threshold midway: b = -(lambda_+ - lambda_-) / 4."""
    g = q_alpha(prob, mixture, alpha)
    top = alpha.max() if len(alpha) else 0.0
    halves = []
    for cls in (1, -1):
        inc = prob.y == cls
        a, gc = alpha[inc], g[inc]
        lo_b = a > sv_tol * top
        hi_b = a < prob.C - sv_tol * max(prob.C, 1.0) if math.isfinite(prob.C) else np.ones_like(lo_b)
        free = lo_b & hi_b
        if free.any():
            halves.append(float(np.average(gc[free], weights=a[free])))
        else:  # alpha = C: (Q alpha)_u <= lambda / 2; alpha = 0: >=
            upper = gc[~lo_b].min() if (~lo_b).any() else np.inf
            lower = gc[~hi_b].max() if (~hi_b).any() else -np.inf
            halves.append(float(0.5 * (upper + lower)) if np.isfinite(upper + lower) else
                          float(upper if np.isfinite(upper) else lower))
    return -(halves[0] - halves[1]) / 2.0


# ---------------------------------------------------------------------------------------------------------------
# Algorithm 2: global search for local maxima


def _same(a: np.ndarray, b: np.ndarray, tol: float, symmetric: bool) -> bool:
    d = np.linalg.norm(a - b)
    if symmetric:
        d = min(d, np.linalg.norm(a + b))
    return d <= tol * (1.0 + np.linalg.norm(a))


class _Maxima:
    """The distinct maxima found so far (points and values, in the order found) and the repeat count of
    Algorithm 2. :meth:`record` matches a new maximum against the first stored one that :func:`_same` calls the
    same point: the distances to all of them at once, with a margin, pick the candidates and :func:`_same` itself
    decides, so the answer is that of testing them one by one (O(T3^2) norm calls per search before: 12 % of a CM
    fit); a repeat keeps the better of the two."""

    def __init__(self, capacity: int, dim: int, tol: float, symmetric: bool):
        self.Q = np.empty((capacity, dim))
        self.norms = np.empty(capacity)
        self.values = np.empty(capacity)
        self.size = self.repeats = 0
        self.tol, self.symmetric = tol, symmetric

    def _put(self, k: int, p: np.ndarray, v: float) -> None:
        self.Q[k], self.norms[k], self.values[k] = p, np.linalg.norm(p), v

    def match(self, p: np.ndarray) -> int | None:
        if self.size == 0:
            return None
        Q = self.Q[: self.size]
        d = np.sqrt(np.einsum("ij,ij->i", Q - p, Q - p))
        if self.symmetric:
            d = np.minimum(d, np.sqrt(np.einsum("ij,ij->i", Q + p, Q + p)))
        near = np.flatnonzero(d <= self.tol * (1.0 + self.norms[: self.size]) * (1.0 + 1e-6) + 1e-300)
        return next((int(k) for k in near if _same(self.Q[k], p, self.tol, self.symmetric)), None)

    def record(self, p: np.ndarray, v: float) -> bool:
        """Add the maximum (p, v), or count it as a repeat of a stored one (keeping the better of the two);
        returns whether it was a repeat."""
        hit = self.match(p)
        if hit is None:
            self._put(self.size, p, v)
            self.size += 1
            return False
        self.repeats += 1
        if v > self.values[hit]:
            self._put(hit, p, v)
        return True

    def done(self, T2: int) -> bool:
        return self.repeats - self.size >= T2

    def result(self, starts: int, evaluations: int) -> SearchResult:
        order = np.argsort(self.values[: self.size])[::-1]
        return SearchResult(self.Q[order].copy(), self.values[order].copy(), starts, self.repeats, evaluations)


@dataclass
class SearchResult:
    points: np.ndarray  # distinct local maxima found (rows), best first
    values: np.ndarray
    starts: int
    repeats: int
    evaluations: int


def global_search(value_grad, dim: int, R: float, rng: np.random.Generator, *, T2: int, T3: int,
                  gtol: float, same_tol: float, symmetric: bool, nonneg: bool = False,
                  ascent=None) -> SearchResult:
    """Algorithm 2 (GlobalSearchForLocals): random starts gamma_0 = r x / ||x|| (x standard normal, r uniform in
    [0, R]; for a width omega >= 0 simply r), an L-BFGS ascent from each, counting repeated maxima; stop when the
    repeats exceed the distinct maxima by T2 or after T3 starts. ``value_grad(p) -> (value, gradient)``.

    With ``ascent(start) ->
    (point, value, evaluations)`` (the compiled L-BFGS of :mod:`tkbench.methods.sikl.lbfgs_compiled`) one such call per
    start, in the same order and with the same draws as SciPy's. Otherwise one SciPy L-BFGS-B run per start."""
    evaluations = 0
    starts = 0

    def negative(p):
        nonlocal evaluations
        evaluations += 1
        v, g = value_grad(p)
        return -v, -g

    bounds = [(0.0, None)] * dim if nonneg else None
    found = _Maxima(T3, dim, same_tol, symmetric)
    for j in range(1, T3 + 1):
        starts = j
        if nonneg:
            start = rng.uniform(0.0, R, size=dim)
        else:
            start = _draw_start(rng, dim, R)
        if ascent is not None and not nonneg:
            p, v, used = ascent(start)
            evaluations += used
        else:
            res = minimize_lbfgsb(negative, start, bounds=bounds, maxcor=LBFGS_MEMORY, maxls=LBFGS_LINESEARCH,
                                  gtol=gtol, ftol=1e-15, maxiter=1000)
            p, v = res.x, -float(res.fun)
        found.record(p, float(v))
        if found.done(T2):
            break
    return found.result(starts, evaluations)


def _draw_start(rng: np.random.Generator, dim: int, R: float) -> np.ndarray:
    x = rng.standard_normal(dim)
    return rng.uniform(0.0, R) * x / max(np.linalg.norm(x), 1e-300)


def search_radius(t: float, scale: float) -> float:
    """R with 4 exp(-scale R^2) = t: beyond it no atom can violate t >= value (Algorithm 1 step 3)."""
    if t >= 4.0:
        return 0.0
    return math.sqrt(math.log(4.0 / t) / scale)


# ---------------------------------------------------------------------------------------------------------------
# local adaptation (section 5.4)


@dataclass
class LocalResult:
    mixture: Mixture
    alpha: np.ndarray
    J: float
    J0: float
    evaluations: int
    seconds: float


def local_objective(prob: Problem, m: int, mg: int, svm_solver: str = "auto"):
    """J(theta) and its gradient, theta = (rho_0, rho_cos (m), rho_gauss (mg), gammas (m x n), omegas (mg)):
    problem (25)-(26), by the SVM (27) and the gradient (28)-(29) of section 5.5. Returns
    (function(theta) -> (J, grad, alpha), pack(mixture) -> theta, unpack(theta) -> mixture)."""
    n = prob.X.shape[1]

    def unpack(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        rho0 = theta[:1]
        rc = theta[1:1 + m]
        rg = theta[1 + m:1 + m + mg]
        gammas = theta[1 + m + mg:1 + m + mg + m * n].reshape(m, n)
        omegas = theta[1 + m + mg + m * n:]
        return rho0, rc, rg, gammas, omegas

    def mixture_of(theta: np.ndarray) -> Mixture:
        rho0, rc, rg, gammas, omegas = unpack(theta)
        rr = float(theta[:1 + m + mg] @ theta[:1 + m + mg])
        return Mixture(gammas.copy(), rc**2 / rr, omegas.copy(), rg**2 / rr, float(rho0[0] ** 2 / rr))

    def pack(mix: Mixture) -> np.ndarray:
        return np.concatenate([[math.sqrt(mix.tau)], np.sqrt(mix.mu), np.sqrt(mix.nu), mix.gammas.ravel(),
                               mix.omegas])

    last: list[np.ndarray] = []  # the previous evaluation's alpha: the intermediate SVM's warm start

    def evaluate(theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        rho0, rc, rg, gammas, omegas = unpack(theta)
        rho = theta[:1 + m + mg]
        rr = float(rho @ rho)
        mix = mixture_of(theta)
        Vc = Vs = None
        if m:
            Vc, Vs = cosine_rows(gammas, prob.X, prob.y, prob.beta)
        alpha, _ = solve_svm_qp(prob, mix, Vc=Vc, Vs=Vs, method=svm_solver, warm=last[-1] if last else None)
        last[:] = [alpha]
        sv = alpha > 1e-9 * alpha.max()
        w = (alpha * prob.y)[sv]
        Xs = prob.X[sv]
        v0 = float(alpha @ alpha)
        grad = np.zeros_like(theta)
        vc = np.zeros(m)
        if m:
            phase = Xs @ gammas.T  # nsv x m
            cos, sin = np.cos(phase), np.sin(phase)
            c, s = w @ cos, w @ sin
            G = stabilizer(gammas, prob.beta)
            power = c * c + s * s
            vc = power * G
            dc = -(Xs.T @ (w[:, None] * sin))  # n x m: c'_j
            ds = Xs.T @ (w[:, None] * cos)  # s'_j
            dgam = (power * (-2.0 * prob.beta * G))[:, None] * gammas + (2.0 * G)[:, None] * (c * dc + s * ds).T
            grad[1 + m + mg:1 + m + mg + m * n] = (mix.mu[:, None] * dgam).ravel()  # (28)
        vg = np.zeros(mg)
        if mg:
            Ds = prob.D[np.ix_(sv, sv)]
            dom = np.zeros(mg)
            for k in range(mg):
                vg[k], dom[k] = gaussian_value_grad(float(omegas[k]), Ds, w, prob.eta)
            grad[1 + m + mg + m * n:] = mix.nu * dom
        J = float(mix.tau * v0 + mix.mu @ vc + mix.nu @ vg)
        values = np.concatenate([[v0], vc, vg])
        grad[:1 + m + mg] = 2.0 * rho / rr * (values - J)  # (29), with c_i, s_i inside the sum
        return J, grad, alpha

    return evaluate, pack, mixture_of


def local_adaptation(prob: Problem, mixture: Mixture, *, max_iter: int, gtol: float,
                     svm_solver: str = "auto") -> LocalResult:
    """Section 5.4: maximise J(rho, gamma, omega) of (25) from the QCQP's solution by L-BFGS (widths kept >= 0)."""
    t0 = time.perf_counter()
    m, mg = mixture.m, mixture.m_gauss
    evaluate, pack, mixture_of = local_objective(prob, m, mg, svm_solver)
    theta0 = pack(mixture)
    cache: dict[str, Any] = {}

    def negative(theta):
        J, grad, alpha = evaluate(theta)
        cache["n"] = cache.get("n", 0) + 1
        if "best" not in cache or J > cache["best"][0]:
            cache["best"] = (J, theta.copy(), alpha)
        if "J0" not in cache:
            cache["J0"] = J
        return -J, -grad

    n = prob.X.shape[1]
    bounds = [(None, None)] * (1 + m + mg + m * n) + [(0.0, None)] * mg
    if max_iter > 0:
        minimize(negative, theta0, jac=True, method="L-BFGS-B", bounds=bounds,
                 options={"maxcor": LBFGS_MEMORY, "maxls": LBFGS_LINESEARCH, "gtol": gtol, "ftol": 1e-12,
                          "maxiter": max_iter})
    else:
        negative(theta0)
    J, theta, alpha = cache["best"]
    return LocalResult(mixture_of(theta), alpha, J, cache["J0"], cache["n"], time.perf_counter() - t0)


# ---------------------------------------------------------------------------------------------------------------
# Algorithm 1


@dataclass
class SIPResult:
    mixture: Mixture
    alpha: np.ndarray
    t: float
    intercept: float
    iterations: int
    converged: bool
    trace: list[dict[str, Any]] = field(default_factory=list)
    stages: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Expansion:
    """The classifier f(x) = sum_u alpha_u y_u k(x, x_u) + b in the form of section 7: the cosine part is
    sum_i (coef_cos_i cos(gamma_i^T x) + coef_sin_i sin(gamma_i^T x)) with constant coefficients (O(m n) per point,
    whatever the number of support vectors); the Gaussian atoms keep their support-vector sums."""

    gammas: np.ndarray
    coef_cos: np.ndarray
    coef_sin: np.ndarray
    omegas: np.ndarray
    nu: np.ndarray
    eta: float
    X_sv: np.ndarray
    w_sv: np.ndarray  # alpha_u y_u on the support vectors
    intercept: float

    def __call__(self, X: np.ndarray) -> np.ndarray:
        out = np.full(len(X), self.intercept, dtype=float)
        if len(self.gammas):
            phase = X @ self.gammas.T
            out += np.cos(phase) @ self.coef_cos + np.sin(phase) @ self.coef_sin
        if len(self.omegas):
            D = squared_distances(X, self.X_sv)
            for omega, weight in zip(self.omegas, self.nu, strict=True):
                out += weight * math.exp(-self.eta * omega * omega) * (np.exp(-omega * D) @ self.w_sv)
        return out


def expansion(prob: Problem, mixture: Mixture, alpha: np.ndarray, b: float) -> Expansion:
    """The section 7 expansion of the SVM (alpha, b) with the learned kernel."""
    sv = alpha > 0
    w, Xs = (alpha * prob.y)[sv], prob.X[sv]
    if mixture.m:
        phase = Xs @ mixture.gammas.T
        scale = mixture.mu * stabilizer(mixture.gammas, prob.beta)
        coef_cos, coef_sin = scale * (w @ np.cos(phase)), scale * (w @ np.sin(phase))
    else:
        coef_cos = coef_sin = np.zeros(0)
    return Expansion(mixture.gammas, coef_cos, coef_sin, mixture.omegas, mixture.nu, prob.eta, Xs, w, b)


def decision_values(prob: Problem, mixture: Mixture, alpha: np.ndarray, b: float, X: np.ndarray) -> np.ndarray:
    """f(x) for the rows of X through :func:`expansion`."""
    return expansion(prob, mixture, alpha, b)(X)


def solve_sip(prob: Problem, *, T1: int = 1000, T2: int = 4, T3: int = 500, epsilon: float = 1e-3,
              local_iter: int = 50, gtol: float = 1e-6, same_tol: float = 1e-3, prune_tol: float = 1e-7,
              qcqp_solver: str = "CLARABEL", svm_solver: str = "auto", search: str = "scipy",
              rng: np.random.Generator | None = None, keep_stages: bool = False) -> SIPResult:
    """Algorithm 1 of paper 004 on ``prob``. The trace has one row per iteration: m (cosines), m_gauss, nsv,
    t^(i), s^(i) (the largest value the global search found), the training error of the classifier, the number
    of starts / repeats / new atoms of the search, and the seconds spent in each step."""
    rng = np.random.default_rng(0) if rng is None else rng
    y = prob.y
    l1, l2 = int((y > 0).sum()), int((y < 0).sum())
    if l1 == 0 or l2 == 0:
        raise ValueError("the SIP needs both classes in the training data")
    if math.isfinite(prob.C) and prob.C <= max(1.0 / l1, 1.0 / l2):
        raise ValueError(f"C = {prob.C} must exceed max(1/l1, 1/l2) = {max(1.0 / l1, 1.0 / l2):.4g} (Corollary 3)")
    n = prob.X.shape[1]
    alpha = np.where(y > 0, 1.0 / l1, 1.0 / l2)  # section 5.1
    t = 1.0 / l1 + 1.0 / l2
    mixture = Mixture(np.zeros((0, n)), np.zeros(0), np.zeros(0), np.zeros(0), 1.0)
    trace: list[dict[str, Any]] = []
    stages: list[dict[str, Any]] = []
    converged = False
    if T1 < 1:
        raise ValueError(f"T1 = {T1}: Algorithm 1 needs at least one iteration")
    for i in range(1, T1 + 1):  # noqa: B007  (i is the iteration count after the loop)
        t_start = time.perf_counter()
        sv = alpha > 1e-9 * alpha.max()
        w, Xs = (alpha * y)[sv], prob.X[sv]
        new_gammas, new_omegas = np.zeros((0, n)), np.zeros(0)
        s_value = 0.0
        starts = repeats = 0
        if prob.cosines:
            found = global_search(partial(_cos_vg, X=Xs, w=w, beta=prob.beta), n,
                                  search_radius(t, prob.beta), rng, T2=T2, T3=T3, gtol=gtol, same_tol=same_tol,
                                  symmetric=True,
                                  ascent=_compiled_ascent(Xs, w, prob.beta, gtol) if search == "compiled" else None)
            starts, repeats = found.starts, found.repeats
            if len(found.values):
                s_value = max(s_value, float(found.values[0]))
            new_gammas = found.points[found.values > t]
        if prob.gaussians:
            Ds = prob.D[np.ix_(sv, sv)]
            found_g = global_search(partial(_gauss_vg, D=Ds, w=w, eta=prob.eta), 1, search_radius(t, prob.eta), rng,
                                    T2=T2, T3=T3, gtol=gtol, same_tol=same_tol, symmetric=False, nonneg=True)
            starts, repeats = starts + found_g.starts, repeats + found_g.repeats
            if len(found_g.values):
                s_value = max(s_value, float(found_g.values[0]))
            new_omegas = found_g.points[found_g.values > t].ravel()
        t_search = time.perf_counter()
        qcqp = solve_qcqp(prob, np.vstack([mixture.gammas, new_gammas]),
                          np.concatenate([mixture.omegas, new_omegas]), solver=qcqp_solver, warm=alpha)
        t_qcqp = time.perf_counter()
        local = local_adaptation(prob, qcqp.mixture.prune(prune_tol), max_iter=local_iter, gtol=gtol,
                                 svm_solver=svm_solver)
        t_local = time.perf_counter()
        mixture = local.mixture.prune(prune_tol)
        t_new = local.J
        alpha = local.alpha
        b = intercept(prob, mixture, alpha)
        train_err = float(np.mean(np.sign(decision_values(prob, mixture, alpha, b, prob.X)) != y))
        trace.append({
            "iteration": i, "m": mixture.m, "m_gauss": mixture.m_gauss, "nsv": int((alpha > 1e-9 * alpha.max()).sum()),
            "t": t_new, "t_qcqp": qcqp.t, "s": s_value, "tau": mixture.tau, "train_error": train_err,
            "new_atoms": int(len(new_gammas) + len(new_omegas)), "starts": starts, "repeats": repeats,
            "local_evaluations": local.evaluations, "search_seconds": t_search - t_start,
            "qcqp_seconds": t_qcqp - t_search, "qcqp_solver": qcqp.solver, "qcqp_cuts": qcqp.cuts,
            "qcqp_status": qcqp.status,
            "local_seconds": t_local - t_qcqp,
        })
        if keep_stages:
            stages.append({"mixture": mixture, "alpha": alpha.copy(), "intercept": b})
        stop = t_new - t < epsilon * t
        t = t_new
        if stop:
            converged = True
            break
    return SIPResult(mixture, alpha, t, b, i, converged, trace, stages)


def _compiled_ascent(X: np.ndarray, w: np.ndarray, beta: float, gtol: float):
    """One compiled L-BFGS ascent of Eq. (5) per call (:mod:`tkbench.methods.sikl.lbfgs_compiled`), the options of the
    SciPy search."""
    from tkbench.methods.sikl.lbfgs_compiled import cosine_ascent

    X = np.ascontiguousarray(X, dtype=float)
    w = np.ascontiguousarray(w, dtype=float)

    def run(start: np.ndarray) -> tuple[np.ndarray, float, int]:
        p, v, _steps, evals = cosine_ascent(X, w, float(beta), np.ascontiguousarray(start, dtype=float),
                                            LBFGS_MEMORY, LBFGS_LINESEARCH, gtol, 1e-15, 1000)
        return p, float(v), int(evals)

    return run


def _cos_vg(gamma: np.ndarray, X: np.ndarray, w: np.ndarray, beta: float) -> tuple[float, np.ndarray]:
    return cosine_value_grad(gamma, X, w, beta)


def _gauss_vg(omega: np.ndarray, D: np.ndarray, w: np.ndarray, eta: float) -> tuple[float, np.ndarray]:
    v, g = gaussian_value_grad(float(omega[0]), D, w, eta)
    return v, np.array([g])
