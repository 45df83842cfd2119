"""Weights of a hierarchical Gaussian kernel by simulated annealing and gradient descent (paper 002, section 4,
Algorithm 1).

The inner learner is the SVM with the least-squares loss of (9)-(10) (kernel ridge regression on labels in
[-1, 1]): f(x) = sum_u alpha_u k_W(x_u, x) with alpha = (K_W + m lambda I)^-1 y on the m points of D1. The objective
(11) is R_{L,D2}(lambda, gamma, alpha, W) = mean over D2 of (y - f(x))^2 with alpha fixed, so a change of W only
changes the block k_W(D2, D1) (:class:`tkbench.methods.hgk.kernel.BlockState`: one elementwise pass per
ancestor of the changed weight, never a rebuild).

Algorithm 1, with the paper's parameters (section 5: L = 10, M = 15, N1 = 1000, N2 = 500, N3 = 10; D1 / D2 / D3 =
44.44 / 22.22 / 33.33 % of the training part): M outer rounds, each: the SVM on D1 with grid search for lambda
and gamma, N1 annealing steps on R_{L,D2}, then L rounds of N2 annealing steps when the previous round ended in a
local minimum, else N3 gradient-descent steps with an Armijo-Goldstein line search; after each of those L rounds
the D3 error (alpha fixed) is computed and the best W kept; D1 / D2 are reshuffled when the D3 error did not
decrease during the round. Annealing (section 4): one randomly picked weight is changed per step and the change
is kept when Delta < 0 or r < 0.5 exp(-(100 i / sqrt(N)) Delta / R_i), r uniform on [0, 1], i the step and N the
number of steps of the round.

Where the paper is silent, our choices (tested):
- how a weight is changed: multiplied by exp(s z), z standard normal, s = ``step_scale`` (0.3): weights stay
  positive and a step is relative to the weight's size;
- the initial weights: :meth:`Architecture.initial_weights` (1/sqrt(children) or 1/sqrt(features) per node);
- the (lambda, gamma) grid of step 3: lambda in 1e-8 .. 1e-2 by decades, gamma in (0.5, 1, 2) (``LAMBDAS``,
  ``GAMMAS`` below: why this lambda range);
- gamma: the top-layer weights are divided by gamma (the paper notes gamma "can be consumed by the weights"), so
  the grid search for gamma rescales them and the chosen gamma is absorbed into W;
- the grid search of step 3 ("train an SVM on D1 including grid search for lambda and gamma"; the paper calls
  CV the usual way to grid-search, and liquidSVM defaults to 5-fold CV on the training data): ``grid_search``
  "d2" scores each (lambda, gamma) by the error on D2 of the SVM trained on D1 (our first reading), "cv" by
  5-fold CV within D1 (contiguous folds of D1's random order, so no extra random draw; A = K + m_fold lambda I
  per fold) and then trains the SVM with the chosen pair on all of D1. "cv" costs about 2.5 times the
  Cholesky work of "d2" per outer iteration (5 x 0.8^3 per pair). ``configs/investigate_grid_search.yaml``
  compares them;
- "achieved local minimum in the previous iteration": the previous round was gradient descent and its line search
  found no decrease (or the gradient vanished); the first of the L rounds follows the annealing of step 4, which
  is not a local minimum, so it is gradient descent;
- the Armijo-Goldstein line search: backtracking by halving from a first trial step, accepting the first eta
  with R(W - eta g) <= R(W) - 1e-4 eta ||g||^2. ``line_search="fixed"`` (our first choice, used until
  2026-11-26) starts every step at eta = 1, so it accepts the largest eta in {1, 1/2, 1/4, ...} that satisfies
  the condition. ``"warm"`` (the default since) starts at min(1, 2 eta_prev), eta_prev the step accepted at
  the previous step (carried over the consecutive descent rounds of an outer iteration, reset to 1 after
  annealing): it accepts the same eta as "fixed" whenever that eta is at most twice the previous one (the larger
  trials, which "fixed" tries first, are then the ones that fail), and skips the failing trials above it.
  Measured (``configs/investigate_line_search.yaml``: the first draw of every Table 1 set, depth2:4, M = 2):
  "fixed" spent 4.7 to 14.3 risk evaluations per step on 9 of the 11 sets (2.0 on pendigits, 1.3 on cycle),
  "warm" 1.3 to 2.2; Algorithm 1 ran 1.4 to 3.6 times faster on those 9 sets, with D3 and test errors equal or
  within 0.6 % in both directions;
- the D3 error is the least-squares error of the SVM on D1 (alpha fixed) on D3, unclipped like the objective;
- fewer rows than the three parts need (fewer than about 5): the initial weights and the smallest lambda.

The objective of the gradient steps (``objective``; issue 50). The paper's (11), ``"fixed_alpha"``, holds alpha at
step 3's SVM while W moves. Step 3 picks lambda for the current weights, and on smooth, low-noise problems it picks
lambda = 1e-8 .. 1e-7: alpha is then huge and nearly cancelling, K21(W) alpha is sharp in W, and neither annealing
(3-7 of 1000 steps accepted) nor descent (steps of ~1e-3) moves W. Measured on y = sin(3 x0) + x1^2 + noise, 8
uniform features, 1000 rows (tests/methods/hgk/test_annealing.py): the weights stay at 0.17-0.18 on all eight
features, test MSE 0.0071, where scikit-learn's anisotropic GP finds the two features and gets 0.0034 (the noise's
variance ~0.0033). With lambda held at 1e-3 the same algorithm does learn the features (MSE 0.0049), so the
step sizes and the acceptance temperature are not the cause: the fixed alpha is. ``"refit"`` (the estimators'
default through ``"auto"``) descends R(W) = the D2 error of the SVM *retrained* on D1 for W, with alpha(W), at
step 3's lambda (:func:`refit_risk_gradient`: one m1 x m1 Cholesky per evaluation, gradient by the adjoint, checked
against finite differences and a dense solve). On the problem above it reaches MSE 0.0035-0.0037 over four
random states (the GP's 0.0034), the informative features' mean weight 4.6-7.5x the others'. Because each evaluation
costs a factorisation, "refit" also changes the budget (named deviations from Algorithm 1's fixed counts):
- a descent round's first trial moves W by 0.3 ||W|| (no cap eta0 = 1: the refit gradient's scale is the risk's),
  then "warm" as below; a round ends as a local minimum at the first step that lowers R by at most 1e-3 R;
- step 4's N1 annealing steps stay on (11) with alpha = alpha(W) at the round's start (cheap: one block update
  per step), after which alpha is refitted; the L rounds end at the first local minimum of the descent, without
  the N2 annealing rounds (measured on four problems, 1000-2000 rows: with the N2 rounds the test errors were
  within -9 / +2 % of those without, at 1.3-4x the time; without step 4's annealing as well, cycle at depth2:4
  stayed at its initial error, 0.0118 against 0.0068);
- the D3 error is that of alpha(W), the SVM the final fit trains;
- Algorithm 1 stops after an outer iteration (from the second on) that lowers the best D3 error by less than 1e-3
  (relative), recorded as a "stop" step in the history (M stays the cap). Measured on the problem above (this
  machine, other processes running): 2.6-5.1 s for the default fit, 7 s with "fixed_alpha" (which learns
  nothing), 11-17 s with the N2 rounds and 41 s without the outer stop as well, the same test MSE; on Table 1
  sets at 2000 rows, 4.6x less time than "fixed_alpha" and a lower test error on 6 of 8 (docs/methods/hgk.md).
The hinge loss has no differentiable alpha(W): "refit" needs ``loss="ls"``, and "auto" uses "fixed_alpha" with
the hinge loss.

The hinge loss (``loss="hinge"``, classification, labels +-1; the issue's option, the paper's Table 1 uses the
least-squares loss): the SVM of step 3 is the hinge SVM (9) without offset (:mod:`tkbench.methods.hgk.hinge_svm`),
and every risk of Algorithm 1 (step 3's grid search on D2, the objective (11) for annealing and gradient descent,
the D3 error) is the mean hinge loss max(0, 1 - y f) of the unclipped f = k_W(., D1) alpha. The hinge loss is not
differentiable at a margin of 1; gradient descent uses the subgradient that is 0 there (derivative -y below 1),
and its Armijo-Goldstein backtracking still only accepts steps that decrease the risk.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any

import numpy as np
import scipy.linalg

from tkbench.methods.hgk.kernel import (
    Architecture,
    BlockState,
    kernel,
    kernel_predict,
    risk_and_gradient,
    weighted_gradient,
)

SPLIT = (4.0 / 9.0, 2.0 / 9.0)  # D1, D2 (D3 the rest): 44.44 / 22.22 / 33.33 %
# Step 3's lambda grid (A = K + m lambda I on D1). The paper does not print it (liquidSVM's default grid). Until
# 2026-11-26 it was 1e-4 .. 1e-1, and every Table 1 fit chose its floor 1e-4: the least-squares SVM baseline's CV
# picks lambda = alpha / m of 7.5e-8 (thyroid) to 1e-4 (bank) on the same sets, and on cpusmall's first draw
# (inhomogeneous kernel, M = 3) the wider grid chose 1e-6 and moved the test error from 0.00412 to 0.00346.
LAMBDAS = (1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2)
GAMMAS = (0.5, 1.0, 2.0)  # step 3's top-layer width grid: a rescaling of the learned top weights
REFRESH_EVERY = 2000  # accepted annealing steps between from-scratch recomputations of the kernel block
REFRESH_EVERY_32 = 250  # the same for float32 blocks (annealing_dtype="float32"), whose roundings are larger
ANNEALING_DTYPES = ("float64", "float32")


def ls_svm_coefficients(K: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """alpha = (K + m lambda I)^-1 y: the least-squares SVM (9)-(10) without offset, by Cholesky, K a Gram matrix
    (symmetric). The shift is added to a copy's diagonal and factorised in place (the same matrix as K + m lambda I,
    bit for bit, without the m x m identity and the sum: 2 % of an HGK outer iteration on bank's 3111 D1 rows,
    cProfile, 2026-12-02). The copy is of K^T in Fortran order, the same bytes as K in C order: a straight copy,
    where a Fortran-ordered copy of K is a transposing one (0.04 s against 0.15 s at 3111 rows, one thread,
    2026-12-03). The factorisation reads the lower triangle of K^T, i.e. K's upper one: the same matrix where K is
    exactly symmetric (the mirrored passes), and to rounding where it is not (a single Gaussian's full pass)."""
    m = len(y)

    def shifted() -> np.ndarray:
        A = np.array(np.asarray(K, dtype=float).T, order="F", copy=True)  # LAPACK factorises it without a copy
        A[np.diag_indices(m)] += m * lam
        return A

    try:
        c = scipy.linalg.cho_factor(shifted(), lower=True, overwrite_a=True, check_finite=False)
        return scipy.linalg.cho_solve(c, y, check_finite=False)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(shifted(), y, rcond=None)[0]


def scaled_top(arch: Architecture, weights: np.ndarray, gamma: float) -> np.ndarray:
    """W with the top-layer weights divided by gamma: k_{W, gamma} of Eq. (7)."""
    out = np.array(weights, float)
    root = arch.root
    out[root.offset:root.offset + root.size] /= gamma
    return out


def risk_of(y: np.ndarray, F: np.ndarray, loss: str = "ls") -> float:
    """The mean loss of decision values F on labels y (over points and outputs): (y - F)^2, or the hinge loss
    max(0, 1 - y F)."""
    if loss == "hinge":
        return float(np.mean(np.maximum(0.0, 1.0 - y * F)))
    return float(np.mean((y - F) ** 2))


def svm_coefficients(K: np.ndarray, y: np.ndarray, lam: float, loss: str = "ls") -> np.ndarray:
    """The inner SVM (9) without offset on kernel K: f = K coefficients (least-squares or hinge loss)."""
    if loss == "hinge":
        from tkbench.methods.hgk.hinge_svm import hinge_svm

        return hinge_svm(K, y, lam).coef
    return ls_svm_coefficients(K, y, lam)


def annealing_accepts(delta: float, risk: float, step: int, n_steps: int, r: float) -> bool:
    """The acceptance rule of section 4: Delta < 0, or r < 0.5 exp(-(100 i / sqrt(N)) Delta / R_i)."""
    if delta < 0:
        return True
    if risk <= 0:
        return False
    return r < 0.5 * math.exp(-(100.0 * step / math.sqrt(n_steps)) * delta / risk)


@dataclass
class AnnealingResult:
    weights: np.ndarray
    risk: float
    accepted: int
    steps: int


def anneal(state: BlockState, alpha: np.ndarray, y2: np.ndarray, n_steps: int, rng: np.random.Generator,
           step_scale: float = 0.3, loss: str = "ls") -> AnnealingResult:
    """N annealing steps on R_{L,D2} = mean loss of K alpha on y2 (K = the state's block k_W(D2, D1))."""
    alpha = np.ascontiguousarray(alpha, float)
    risk = risk_of(y2, state.kernel @ alpha, loss)
    accepted = 0
    every = REFRESH_EVERY if state.dtype == np.float64 else REFRESH_EVERY_32
    for i in range(1, n_steps + 1):
        index = int(rng.integers(state.arch.n_weights))
        value = float(state.weights[index] * math.exp(step_scale * rng.normal()))
        new_risk = risk_of(y2, state.propose_predict(index, value, alpha), loss)
        if annealing_accepts(new_risk - risk, risk, i, n_steps, float(rng.random())):
            state.commit()
            risk = new_risk
            accepted += 1
            if accepted % every == 0:
                state.refresh()  # the incremental products drift by rounding (once per `every` commits)
    return AnnealingResult(state.weights.copy(), risk, accepted, n_steps)


def risk_gradient(arch: Architecture, weights: np.ndarray, X2: np.ndarray, y2: np.ndarray, X1: np.ndarray,
                  alpha: np.ndarray, loss: str = "ls") -> tuple[float, np.ndarray]:
    """R_{L,D2} and its gradient in W: dR/dtheta = -(2/m2) (y2 - f)^T (dK/dtheta) alpha (Lemma 4.1 for dK),
    contracted without storing dK/dtheta per weight (memory O(depth x m2 x m1)). With k outputs (y2: m2 x k,
    alpha: m1 x k; one-vs-all problems sharing the kernel) R is the mean over points and outputs and the
    contraction weight is -(2 / (m2 k)) (Y2 - F) alpha^T. One compiled pass over the block (a row's residual
    needs only that row), no m2 x m1 matrix stored. ``loss="hinge"``: the hinge risk and its subgradient."""
    return risk_and_gradient(arch, weights, X2, X1, y2, alpha, loss)


class Refit:
    """The SVM of step 3 retrained on D1 for weights W at a fixed lambda: alpha(W) = (K11(W) + m1 lambda I)^-1 y1,
    its risk on D2 and the gradient of that risk in W (``objective="refit"``). The gradient (two compiled passes,
    most of an evaluation's time when W has many weights) is computed when first read: a line search reads it
    only at the trial it accepts, so a rejected trial costs the factorisation and the residual only (the same
    numbers, bit for bit, as computing it at once)."""

    def __init__(self, risk: float, alpha: np.ndarray, gradient: Callable[[], np.ndarray]):
        self.risk = risk
        self.alpha = alpha
        self._gradient = gradient

    @cached_property
    def gradient(self) -> np.ndarray:
        g = self._gradient()
        self._gradient = None  # the factor and K21 it held are freed
        return g


def refit_risk_gradient(arch: Architecture, weights: np.ndarray, X1: np.ndarray, y1: np.ndarray, X2: np.ndarray,
                        y2: np.ndarray, lam: float) -> Refit:
    """R(W) = mean over D2 of (y2 - K21(W) alpha(W))^2 with alpha(W) the least-squares SVM on D1 for W (the D2
    error of the retrained SVM, our ``objective="refit"``; the paper's (11) holds alpha fixed), and its gradient
    by the adjoint: with r = (2 / (m2 k)) (K21 alpha - y2) and v = A^-1 K21^T r (A = K11 + m1 lambda I, the same
    Cholesky factor), dR/dW = r^T (dK21/dW) alpha - v^T (dK11/dW) alpha (dalpha = -A^-1 dK11 alpha). Both
    contractions are one compiled pass (Lemma 4.1) over their block (K11's over its upper triangle, by symmetry:
    half the work); K11 is formed for the factorisation, K21 for the residual. Costs one m1 x m1 Cholesky per
    evaluation; the gradient is computed when ``Refit.gradient`` is first read (:class:`Refit`)."""
    m1 = len(y1)
    weights = np.array(weights, float)
    K11 = kernel(arch, weights, X1)
    K11[np.diag_indices(m1)] += m1 * lam
    factor = scipy.linalg.cho_factor(K11.T, lower=True, overwrite_a=True, check_finite=False)  # in place (K11.T:
    # Fortran order; a C-ordered K11 is first copied transposed, 0.56 against 0.43 s at 3111 rows, one thread)
    alpha = scipy.linalg.cho_solve(factor, y1, check_finite=False)
    K21 = kernel(arch, weights, X2, X1)
    Y2 = y2.reshape(len(y2), -1)
    residual = (K21 @ alpha).reshape(Y2.shape) - Y2
    risk = float(np.mean(residual ** 2))

    def gradient() -> np.ndarray:
        r = residual * (2.0 / residual.size)
        v = scipy.linalg.cho_solve(factor, K21.T @ r, check_finite=False)
        return (weighted_gradient(arch, weights, X2, X1, r, alpha)
                - weighted_gradient(arch, weights, X1, None, v, alpha))  # K11's term from its upper triangle

    return Refit(risk, alpha, gradient)


@dataclass
class DescentResult:
    weights: np.ndarray
    risk: float
    steps: int
    local_minimum: bool
    evaluations: int = 0  # risk-and-gradient passes, the first one included
    next_eta: float = 1.0  # the first trial step of a following descent round ("warm": min(eta0, 2 eta_last))


LINE_SEARCHES = ("warm", "fixed")


def check_line_search(line_search: str) -> None:
    """The one check of a ``line_search`` value (descent, Algorithm 1 and the HGK learners)."""
    if line_search not in LINE_SEARCHES:
        raise ValueError(f"line_search = {line_search!r}: expected one of {LINE_SEARCHES}")


def gradient_descent(arch: Architecture, weights: np.ndarray, X2: np.ndarray, y2: np.ndarray, X1: np.ndarray,
                     alpha: np.ndarray, n_steps: int, *, eta0: float = 1.0, c: float = 1e-4,
                     shrink: float = 0.5, max_backtracks: int = 30, gtol: float = 1e-10,
                     loss: str = "ls", line_search: str = "warm", eta_start: float | None = None,
                     evaluate: Callable[[np.ndarray], tuple[float, np.ndarray]] | None = None,
                     relative_step: float | None = None, rtol: float = 0.0) -> DescentResult:
    """N3 steps W <- W - eta grad R_{L,D2}, eta by backtracking (halving) to the Armijo-Goldstein condition
    R(W - eta g) <= R(W) - c eta ||g||^2; stops at a local minimum (no step decreases R, or ||g|| <= gtol). The
    first trial (module doc): ``"fixed"``: ``eta0`` at every step; ``"warm"``: ``eta_start`` (default ``eta0``) at
    the first step, then min(eta0, 2 eta_prev). Each trial point is evaluated with its gradient in the same
    compiled pass, so an accepted trial needs no second pass. ``evaluate(W) -> (risk, gradient)`` replaces the
    fixed-alpha risk (11) (``objective="refit"``: :func:`refit_risk_gradient`); its gradient may be a callable,
    called only where the descent goes on from a point: the start and the accepted trials before the last
    step (a rejected trial's gradient, and the final point's, are never computed)."""
    check_line_search(line_search)
    if evaluate is None:
        def evaluate(wts):
            return risk_gradient(arch, wts, X2, y2, X1, alpha, loss)

    def gradient_of(g) -> np.ndarray:
        return g() if callable(g) else g

    w = np.array(weights, float)
    risk, grad = evaluate(w)
    grad = gradient_of(grad)
    evaluations = 1
    first = eta0 if eta_start is None or line_search == "fixed" else min(eta0, float(eta_start))
    if eta_start is None and relative_step is not None:  # a first trial that moves W by relative_step ||W||
        gnorm = math.sqrt(float(grad @ grad))
        if gnorm > 0:
            first = min(eta0, relative_step * math.sqrt(float(w @ w)) / gnorm)
    for step in range(n_steps):
        g2 = float(grad @ grad)
        if g2 <= gtol ** 2:
            return DescentResult(w, risk, step, True, evaluations, eta0)
        eta = first
        for _ in range(max_backtracks):
            trial = w - eta * grad
            trial_risk, trial_grad = evaluate(trial)
            evaluations += 1
            if trial_risk <= risk - c * eta * g2:
                break
            trial_grad = None  # a lazy gradient holds its evaluation's factor: released before the next trial
            eta *= shrink
        else:
            return DescentResult(w, risk, step, True, evaluations, eta0)
        stalled = risk - trial_risk <= rtol * risk
        w, risk, grad = trial, trial_risk, trial_grad
        first = eta0 if line_search == "fixed" else min(eta0, 2.0 * eta)
        if rtol > 0 and stalled:  # a step that decreased R by at most rtol R: a local minimum
            return DescentResult(w, risk, step + 1, True, evaluations, first)
        if step + 1 < n_steps:  # the last step's gradient is not read
            grad = gradient_of(grad)
    return DescentResult(w, risk, n_steps, False, evaluations, first)


@dataclass
class HGKFitResult:
    weights: np.ndarray  # gamma absorbed
    lam: float
    d3_risk: float
    initial_d3_risk: float
    history: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class RoundState:
    """Algorithm 1 after ``rounds`` outer iterations: everything the next iteration reads (the random stream's
    state, the D1 + D2 / D3 partition, the current and the best weights, the history), so that a run killed with
    its session continues at its next outer iteration with the uninterrupted run's result."""
    rounds: int
    rng: dict  # numpy's ``bit_generator.state``
    part12: np.ndarray
    part3: np.ndarray
    weights: np.ndarray
    best_weights: np.ndarray
    best_risk: float
    best_lam: float
    initial: float
    history: list[dict[str, Any]]

    _ARRAYS = ("part12", "part3", "weights", "best_weights")

    def to_saved(self, prefix: str = "round_") -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The state as a checkpoint's arrays (names with ``prefix``) and JSON-able facts."""
        arrays = {prefix + name: getattr(self, name) for name in self._ARRAYS}
        facts = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in self._ARRAYS}
        return arrays, facts

    @classmethod
    def from_saved(cls, arrays: dict[str, np.ndarray], facts: dict[str, Any], prefix: str = "round_") -> RoundState:
        return cls(**{name: arrays[prefix + name] for name in cls._ARRAYS}, **facts)


OBJECTIVES = ("refit", "fixed_alpha")
REFIT_RTOL = 1e-3  # objective="refit": a step or an outer iteration that gains less than this (relative) ends
REFIT_DESCENT = {"eta0": math.inf, "relative_step": 0.3, "rtol": REFIT_RTOL}


def check_objective(objective: str, loss: str = "ls") -> None:
    """The one check of an ``objective`` value (Algorithm 1 and the HGK learners): "refit" needs the least-squares
    loss (the hinge SVM's coefficients are not differentiable in W)."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective = {objective!r}: expected one of {OBJECTIVES}")
    if objective == "refit" and loss != "ls":
        raise ValueError(f"objective = 'refit' needs loss = 'ls' (got {loss!r}): use objective = 'fixed_alpha'")


GRID_SEARCHES = ("d2", "cv")
CV_FOLDS = 5  # step 3's folds within D1 (grid_search="cv"): liquidSVM's default, the paper's baselines' CV


def check_grid_search(grid_search: str) -> None:
    """The one check of a ``grid_search`` value (Algorithm 1 and the HGK learners)."""
    if grid_search not in GRID_SEARCHES:
        raise ValueError(f"grid_search = {grid_search!r}: expected one of {GRID_SEARCHES}")


def _cv_risks(K11: np.ndarray, y1: np.ndarray, lambdas, loss: str, folds: int) -> np.ndarray:
    """The mean held-out risk per lambda of the SVM trained on the other folds of D1 (``folds`` contiguous folds of
    D1, whose order is already random)."""
    n1 = len(y1)
    parts = np.array_split(np.arange(n1), min(folds, n1))
    risks = np.zeros(len(lambdas))
    for held in parts:
        train = np.setdiff1d(np.arange(n1), held, assume_unique=True)
        K_train, K_held = K11[np.ix_(train, train)], K11[np.ix_(held, train)]
        for j, lam in enumerate(lambdas):
            coef = svm_coefficients(K_train, y1[train], lam, loss)
            risks[j] += risk_of(y1[held], K_held @ coef, loss) * len(held) / n1
    return risks


def select_lambda_gamma(arch: Architecture, weights: np.ndarray, X1, y1, X2, y2, lambdas, gammas, loss: str = "ls",
                        grid_search: str = "d2", folds: int = CV_FOLDS):
    """Step 3's grid search: the (lambda, gamma) with the least error (the loss's) of the SVM, and that SVM
    trained on all of D1. ``grid_search="d2"``: the error on D2 of the SVM trained on D1; ``"cv"``: the
    ``folds``-fold CV error within D1 (D2 unused; needs 2 rows in D1, else "d2"). Returns (score, lambda, gamma,
    the weights with gamma absorbed, alpha)."""
    check_grid_search(grid_search)
    cv = grid_search == "cv" and len(y1) >= 2
    best = None
    for gamma in gammas:
        w = scaled_top(arch, weights, gamma)
        K11 = kernel(arch, w, X1)
        if cv:
            risks = _cv_risks(K11, y1, lambdas, loss, folds)
            j = int(np.argmin(risks))  # the first of equal risks: as the d2 loop below
            if best is None or risks[j] < best[0]:
                best = (float(risks[j]), lambdas[j], gamma, w, K11)
            continue
        K21 = kernel(arch, w, X2, X1)
        for lam in lambdas:
            alpha = svm_coefficients(K11, y1, lam, loss)
            risk = risk_of(y2, K21 @ alpha, loss)
            if best is None or risk < best[0]:
                best = (risk, lam, gamma, w, alpha)
    if cv:
        score, lam, gamma, w, K11 = best
        best = (score, lam, gamma, w, svm_coefficients(K11, y1, lam, loss))
    return best


def optimise_weights(arch: Architecture, X: np.ndarray, y: np.ndarray, *, L: int = 10, M: int = 15,
                     N1: int = 1000, N2: int = 500, N3: int = 10, lambdas=LAMBDAS,
                     gammas=GAMMAS, step_scale: float = 0.3, rng: np.random.Generator | None = None,
                     weights: np.ndarray | None = None, loss: str = "ls",
                     line_search: str = "warm", grid_search: str = "d2", objective: str = "fixed_alpha",
                     on_round: Callable[[RoundState], None] | None = None,
                     resume: RoundState | None = None, annealing_dtype: str = "float64") -> HGKFitResult:
    """Algorithm 1 on the training part (X, y), labels in [-1, 1]; y a vector, or an (n, k) matrix of k outputs
    sharing one kernel (the one-vs-all problems of a multi-class set: every risk is then the mean over points and
    outputs). Returns the weights with the least D3 error (gamma absorbed), never worse on D3 than the initial
    weights (they are the first candidate). ``loss``: "ls" (the paper's) or "hinge" (labels +-1; see the module).

    ``on_round`` is called with the :class:`RoundState` after each outer iteration (a checkpoint may save it);
    ``resume`` continues from such a state: ``rng`` is set to the state's stream, so the result is the one the
    uninterrupted call returns.

    ``annealing_dtype``: the precision of the annealing's kernel blocks (:class:`BlockState`): "float64" (the
    default) or "float32" (not the paper's: about 3x faster proposals, and the annealing then chooses from
    proposals whose risks carry relative errors of about 1e-6; everything else stays in double precision)."""
    if loss not in ("ls", "hinge"):
        raise ValueError(f"loss = {loss!r}: expected 'ls' or 'hinge'")
    check_line_search(line_search)
    check_grid_search(grid_search)
    check_objective(objective, loss)
    if annealing_dtype not in ANNEALING_DTYPES:
        raise ValueError(f"annealing_dtype = {annealing_dtype!r}: expected one of {', '.join(ANNEALING_DTYPES)}")
    if loss == "hinge" and not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("loss = 'hinge' needs labels -1 / +1")
    rng = rng or np.random.default_rng(0)
    n = len(y)
    n1, n2 = int(round(SPLIT[0] * n)), int(round(SPLIT[1] * n))
    w = arch.initial_weights() if weights is None else np.array(weights, float)
    history: list[dict[str, Any]] = []
    best_w, best_risk, best_lam, initial = None, math.inf, None, None
    if resume is None:
        order = rng.permutation(n)
        part12, part3 = order[:n1 + n2], order[n1 + n2:]
        first = 0
    else:
        rng.bit_generator.state = resume.rng
        part12, part3, w, best_w = (resume.part12.copy(), resume.part3.copy(), resume.weights.copy(),
                                    resume.best_weights.copy())
        best_risk, best_lam, initial, first = resume.best_risk, resume.best_lam, resume.initial, resume.rounds
        history = [dict(e) for e in resume.history]
    X3, y3 = X[part3], y[part3]
    if min(n1, n2, len(part3)) < 1:  # too few rows for D1 / D2 / D3: nothing to optimise on
        return HGKFitResult(w, float(min(lambdas)), math.nan, math.nan,
                            [{"round": 0, "step": "none", "note": f"{n} rows: too few for the D1/D2/D3 split"}])

    def d3_risk(wts: np.ndarray, X1: np.ndarray, alpha: np.ndarray) -> float:
        return risk_of(y3, kernel_predict(arch, wts, X3, X1, alpha), loss)

    if history and history[-1]["step"] == "stop":  # resumed after the refit objective's stopping rule
        first = M
    for outer in range(first, M):
        best_before = best_risk
        p1, p2 = part12[:n1], part12[n1:]
        X1, y1, X2, y2 = X[p1], y[p1], X[p2], y[p2]
        _, lam, gamma, w, alpha = select_lambda_gamma(arch, w, X1, y1, X2, y2, lambdas, gammas, loss, grid_search)
        if initial is None:
            initial = d3_risk(w, X1, alpha)
            best_w, best_risk, best_lam = w.copy(), initial, lam
        refit = objective == "refit"

        last: dict = {}  # the last evaluation (its W, alpha and Refit), reused when a descent ends or starts on its W

        def evaluate(wts, X1=X1, y1=y1, X2=X2, y2=y2, lam=lam, last=last):
            """The refit risk at W and its gradient, computed when the descent reads it; the last evaluation's
            when it was at W (a descent round starting where the previous one stopped: the same numbers)."""
            if "w" in last and np.array_equal(last["w"], wts):
                r = last["refit"]
            else:
                last.clear()  # one evaluation's factor and K21 held at a time
                r = refit_risk_gradient(arch, wts, X1, y1, X2, y2, lam)
                last["w"], last["alpha"], last["refit"] = np.array(wts, copy=True), r.alpha, r
            return r.risk, lambda: r.gradient

        def refitted(wts, X1=X1, y1=y1, lam=lam, last=last):
            """alpha(W) on D1: the last evaluation's when it was at W (the same Cholesky solve, bit for bit),
            else computed."""
            if "w" in last and np.array_equal(last["w"], wts):
                return last["alpha"]
            return ls_svm_coefficients(kernel(arch, wts, X1), y1, lam)

        state = BlockState(arch, w, X2, X1, annealing_dtype)
        result = anneal(state, alpha, y2, N1, rng, step_scale, loss)
        w = result.weights
        if refit and result.accepted:
            alpha = ls_svm_coefficients(kernel(arch, w, X1), y1, lam)
        history.append({"round": outer, "step": "anneal", "lambda": lam, "gamma": gamma, "d2": result.risk,
                        "accepted": result.accepted})
        improved, local_minimum, eta = False, False, None  # "warm": the first trial step, carried between rounds
        for _ in range(L):
            if local_minimum:
                state = BlockState(arch, w, X2, X1, annealing_dtype)
                result = anneal(state, alpha, y2, N2, rng, step_scale, loss)
                w, d2 = result.weights, result.risk
                if refit and result.accepted:
                    alpha = ls_svm_coefficients(kernel(arch, w, X1), y1, lam)
                local_minimum, eta = False, None  # after annealing: from eta0 again
                history.append({"round": outer, "step": "anneal", "d2": d2, "accepted": result.accepted})
            else:
                descent = gradient_descent(arch, w, X2, y2, X1, alpha, N3, loss=loss, line_search=line_search,
                                           eta_start=eta, evaluate=evaluate if refit else None,
                                           **(REFIT_DESCENT if refit else {}))
                w, d2, local_minimum, eta = descent.weights, descent.risk, descent.local_minimum, descent.next_eta
                if refit and descent.steps:
                    alpha = refitted(w)
                history.append({"round": outer, "step": "descent", "d2": d2, "steps": descent.steps,
                                "evaluations": descent.evaluations, "local_minimum": local_minimum})
            r3 = d3_risk(w, X1, alpha)
            history[-1]["d3"] = r3
            if r3 < best_risk:
                best_w, best_risk, best_lam, improved = w.copy(), r3, lam, True
            if refit and local_minimum:  # "refit": no N2 annealing rounds; the next outer iteration instead
                break
        if not improved:
            part12 = rng.permutation(part12)  # reshuffle D1 / D2
        if objective == "refit" and outer > 0 and not best_risk < (1.0 - REFIT_RTOL) * best_before:
            history.append({"round": outer, "step": "stop",
                            "note": f"the best D3 error fell by less than {REFIT_RTOL:g} (relative) in this round"})
        if on_round is not None:
            on_round(RoundState(outer + 1, dict(rng.bit_generator.state), part12.copy(), part3.copy(), w.copy(),
                                best_w.copy(), float(best_risk), float(best_lam), float(initial),
                                [dict(e) for e in history]))
        if history[-1]["step"] == "stop":
            break
    return HGKFitResult(best_w, float(best_lam), best_risk, float(initial), history)
