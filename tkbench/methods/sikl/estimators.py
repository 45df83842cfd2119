"""SIKL learners (paper 004): an SVM whose translation-invariant kernel is learned as a cosine mixture.

``SIKLClassifier(variant=...)`` solves the semi-infinite program of paper 004 by its Algorithm 1
(:mod:`tkbench.methods.sikl.sip`) and classifies with the learned kernel plus tau delta (the 2-norm soft margin):

- ``"cm"`` (cosine mixture, section 4.6): cosines G_beta(||gamma||) cos(gamma^T (x - z)), beta a parameter (the
  paper chooses it by CV), C = infinity;
- ``"cgm"`` (section 4.7): cosines and stabilised isotropic Gaussians exp(-omega ||x - z||^2) exp(-eta omega^2),
  eta = 0.03, C = infinity;
- ``"gm"`` (Gaussian mixture, the generalisation of Gehler & Nowozin 2008 in section 9.1): Gaussians only,
  eta = 0.001, C a parameter (the paper chooses it by CV).

``C=None`` means C = infinity (the paper's hard margin in the feature space of k + tau delta: the learned tau is
the only softness), not a large finite C. A finite C must exceed max(1/l1, 1/l2) (Corollary 3: with
alpha^T e = 2 the criterion's C lives in [max(1/l1, 1/l2), 2]).

Fitted attributes: ``gammas_`` (m x n, one frequency per row), ``mu_`` (their weights), ``omegas_`` and ``nu_``
(Gaussian widths and weights), ``tau_``, ``alpha_`` (the dual variables in A), ``intercept_``, ``coef_cos_`` and
``coef_sin_`` (the section 7 expansion: f(x) = sum_i coef_cos_i cos(gamma_i^T x) + coef_sin_i sin(gamma_i^T x) +
Gaussian terms + b), ``t_`` (the criterion's value), ``trace_`` (one dict per iteration of Algorithm 1: m, nsv,
t, s, training error, seconds per step; Figures 1-3 of the paper plot it), ``n_iter_``, ``converged_``.

Prediction uses the cosine expansion (O(m n) per test point, whatever the number of support vectors); the
kernel expansion over the support vectors is :meth:`SIKLClassifier.decision_function_kernel` (the test checks
that both agree to 1e-10). ``keep_stages=True`` keeps each iteration's model, so that
:meth:`SIKLClassifier.staged_decision_function` can give test-error trajectories (Figures 1-3).

Inputs are used as given (the family's default pre-processing is ``standard``; the Raetsch sets are already
standardised and the paper's Table 2 config uses them as they are). Two classes; more use one-vs-rest.
"""
from __future__ import annotations

import math
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from tkbench.methods._shared.binary import SignedTargetsMixin
from tkbench.methods._shared.report import SolverReport
from tkbench.methods.family import Family, register
from tkbench.methods.sikl.cosine import cosine_kernel, gaussian_kernel
from tkbench.methods.sikl.sip import (
    QCQP_SOLVERS,
    SEARCHES,
    SVM_SOLVERS,
    Mixture,
    Problem,
    decision_values,
    expansion,
    solve_sip,
)

VARIANTS = {"cm": (True, False), "cgm": (True, True), "gm": (False, True)}
DEFAULT_ETA = {"cm": 0.03, "cgm": 0.03, "gm": 0.001}  # section 9.1


class SIKLClassifier(SignedTargetsMixin, ClassifierMixin, BaseEstimator):
    """An SVM with a translation-invariant kernel learned by semi-infinite programming (paper 004, Algorithm 1).

    Parameters
    ----------
    variant : {'cgm', 'cm', 'gm'}, default='cm'
        cm, cgm, gm.
    beta : float > 0, default=1.0
        the stabiliser exp(-beta ||gamma||^2).
    eta : float > 0 or None, default=None
        the Gaussians' stabiliser; None: 0.03 for cgm, 0.001 for gm.
    C : float > 0 or None, default=None
        None: infinity.
    T1 : int >= 1, default=1000
        outer iterations.
    T2 : int >= 1, default=4
        Algorithm 2's repeats.
    T3 : int >= 1, default=500
        its random starts.
    epsilon : float > 0, default=0.001
        relative increase of t that stops.
    local_iter : int >= 0, default=50
        L-BFGS iterations of local adaptation.
    gtol : float > 0, default=1e-06
        L-BFGS gradient tolerance.
    qcqp_solver : {'CLARABEL', 'MOSEK', 'SCS', 'auto', 'bundle', 'cuts'}, default='CLARABEL'
        a cvxpy solver: CLARABEL (SCS at tight tolerances when Clarabel fails numerically; counted in
        the diagnostics' qcqp_scs_fallbacks), SCS, or MOSEK if licensed; bundle, the level-bundle method on the QCQP's dual;
        cuts, the Gaussian constraints by tangent cuts; or auto, these two on problems with Gaussians, else
        Clarabel: see tkbench.methods.sikl.sip.solve_qcqp.
    svm_solver : {'auto', 'clarabel', 'libsvm'}, default='auto'
        the intermediate SVM (27): auto, libsvm or clarabel, see tkbench.methods.sikl.sip.solve_svm_qp.
    search : {'compiled', 'scipy'}, default='scipy'
        Algorithm 2's ascents: scipy, one SciPy L-BFGS-B run per start (tkbench.methods.sikl.lbfgsb_driver), or
        compiled, one compiled L-BFGS call per start (tkbench.methods.sikl.lbfgs_compiled).
    keep_stages : bool, default=False
        keep each iteration's model, for the trace figures.
    random_state : int >= 0 or None, default=0
        the global search's starts.
    """

    def __init__(self, variant="cm", beta=1.0, eta=None, C=None, T1=1000, T2=4, T3=500, epsilon=1e-3,
                 local_iter=50, gtol=1e-6, qcqp_solver="CLARABEL", svm_solver="auto", search="scipy",
                 keep_stages=False, random_state=0):
        self.variant = variant
        self.beta = beta
        self.eta = eta
        self.C = C
        self.T1 = T1
        self.T2 = T2
        self.T3 = T3
        self.epsilon = epsilon
        self.local_iter = local_iter
        self.gtol = gtol
        self.qcqp_solver = qcqp_solver
        self.svm_solver = svm_solver
        self.search = search
        self.keep_stages = keep_stages
        self.random_state = random_state

    # every parameter, declared once (scikit-learn's format): fit validates with scikit-learn's own
    # ``_validate_params``, the config check (tkbench.config) reads the same declarations. beta = 0 would let the
    # global search run to infinity (section 5), so it is excluded.
    _parameter_constraints: ClassVar[dict] = {
        "variant": [StrOptions(set(VARIANTS))],
        "beta": [Interval(Real, 0, None, closed="neither")],
        "eta": [Interval(Real, 0, None, closed="neither"), None],
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "T1": [Interval(Integral, 1, None, closed="left")],
        "T2": [Interval(Integral, 1, None, closed="left")],
        "T3": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "local_iter": [Interval(Integral, 0, None, closed="left")],
        "gtol": [Interval(Real, 0, None, closed="neither")],
        "qcqp_solver": [StrOptions(set(QCQP_SOLVERS))],
        "svm_solver": [StrOptions(set(SVM_SOLVERS))],
        "search": [StrOptions(set(SEARCHES))],
        "keep_stages": ["boolean"],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],  # seeds numpy generators
    }

    def _check_params(self) -> None:
        """scikit-learn's validation of :attr:`_parameter_constraints`."""
        self._validate_params()

    def fit(self, X, y):
        self._check_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        targets = self._signed_targets(y)
        cos, gauss = VARIANTS[self.variant]
        eta = DEFAULT_ETA[self.variant] if self.eta is None else float(self.eta)
        C = math.inf if self.C is None else float(self.C)
        self.models_ = []
        for k, target in enumerate(targets):
            prob = Problem(X, target.astype(float), beta=float(self.beta), eta=eta, C=C, cosines=cos, gaussians=gauss)
            rng = np.random.default_rng([int(self.random_state or 0), k])
            res = solve_sip(prob, T1=self.T1, T2=self.T2, T3=self.T3, epsilon=float(self.epsilon),
                            local_iter=self.local_iter, gtol=float(self.gtol), qcqp_solver=self.qcqp_solver,
                            svm_solver=self.svm_solver, search=self.search, rng=rng,
                            keep_stages=bool(self.keep_stages))
            self.models_.append(_Fitted(prob, res))
        first = self.models_[0]
        self.gammas_ = first.mixture.gammas
        self.mu_ = first.mixture.mu
        self.omegas_ = first.mixture.omegas
        self.nu_ = first.mixture.nu
        self.tau_ = first.mixture.tau
        self.alpha_ = first.alpha
        self.intercept_ = first.intercept
        self.coef_cos_, self.coef_sin_ = first.coef_cos, first.coef_sin
        self.t_ = first.result.t
        self.trace_ = first.result.trace
        self.n_iter_ = first.result.iterations
        self.converged_ = first.result.converged
        self.eta_ = eta
        return self

    def _decision(self, X):
        check_is_fitted(self, "models_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scores = np.column_stack([m.decision(X) for m in self.models_])
        return scores[:, 0] if len(self.models_) == 1 else scores

    def decision_function_kernel(self, X):
        """f(x) = sum_u alpha_u y_u k(x, x_u) + b over the support vectors with the learned kernel matrix (the
        reference the cosine expansion of section 7 is checked against)."""
        check_is_fitted(self, "models_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scores = np.column_stack([m.decision_kernel(X) for m in self.models_])
        return scores[:, 0] if len(self.models_) == 1 else scores

    def kernel(self, X, Z=None):
        """The learned kernel k(x, z) (no delta term) between the rows of X and Z (default X)."""
        check_is_fitted(self, "models_")
        Z = X if Z is None else Z
        return self.models_[0].kernel(np.asarray(X, float), np.asarray(Z, float))

    def staged_decision_function(self, X):
        """The decision function after each iteration of Algorithm 1 (needs ``keep_stages=True``; two classes)."""
        check_is_fitted(self, "models_")
        if not self.keep_stages:
            raise ValueError("staged_decision_function needs keep_stages=True")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        model = self.models_[0]
        for stage in model.result.stages:
            yield decision_values(model.prob, stage["mixture"], stage["alpha"], stage["intercept"], X)

    def diagnostics(self) -> dict:
        check_is_fitted(self, "models_")
        model = self.models_[0]
        trace = model.result.trace
        return SolverReport(
            "semi-infinite program, paper 004 Algorithm 1", self.n_iter_, bool(self.converged_),
            f"t(i) - t(i-1) < epsilon t(i-1) with epsilon = {self.epsilon:g}, or T1 = {self.T1} iterations",
            extras={"m": int(len(self.mu_)),
            "m_gauss": int(len(self.nu_)), "nsv": int((self.alpha_ > 1e-9 * self.alpha_.max()).sum()),
            "tau": float(self.tau_), "t": float(self.t_), "beta": float(self.beta), "eta": float(self.eta_),
            "search_seconds": float(sum(r["search_seconds"] for r in trace)),
            "qcqp_seconds": float(sum(r["qcqp_seconds"] for r in trace)),
            "qcqp_bundle_solves": int(sum(r.get("qcqp_solver") == "bundle" for r in trace)),
            "qcqp_inaccurate": int(sum(r.get("qcqp_status") == "optimal_inaccurate" for r in trace)),
            "qcqp_scs_fallbacks": int(sum(r.get("qcqp_solver") == "SCS" for r in trace))
            if self.qcqp_solver != "SCS" else 0,
            "local_seconds": float(sum(r["local_seconds"] for r in trace))}).as_diagnostics()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True  # check_estimator's tiny problems with the default beta
        return tags


class _Fitted:
    """One binary problem's solution, its section 7 expansion (prediction) and its kernel."""

    def __init__(self, prob: Problem, result):
        self.prob = prob
        self.result = result
        self.mixture: Mixture = result.mixture
        self.alpha = result.alpha
        self.intercept = result.intercept
        self.expansion = expansion(prob, self.mixture, self.alpha, self.intercept)
        self.coef_cos, self.coef_sin = self.expansion.coef_cos, self.expansion.coef_sin

    def decision(self, X: np.ndarray) -> np.ndarray:
        return self.expansion(X)

    def kernel(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
        K = cosine_kernel(X, Z, self.mixture.gammas, self.mixture.mu, self.prob.beta)
        return K + gaussian_kernel(X, Z, self.mixture.omegas, self.mixture.nu, self.prob.eta)

    def decision_kernel(self, X: np.ndarray) -> np.ndarray:
        """The kernel expansion over the support vectors (the reference for the section 7 expansion)."""
        return self.kernel(X, self.expansion.X_sv) @ self.expansion.w_sv + self.intercept


def _build(task: str, solver: str, params: dict, random_state: int):
    if task != "classification":
        raise ValueError("sikl is a classification family (paper 004 learns kernels for binary classification)")
    return SIKLClassifier(**{"random_state": random_state, **params})


def _trace(model) -> list[dict]:
    return [dict(r) for r in model.trace_]


def _compile() -> None:
    """SIKL's compiled loop (``tkbench compile``): the L-BFGS ascent of the cosine objective (Eq. 5) that its
    global search runs from each start (tkbench.methods.sikl.lbfgs_compiled)."""
    from tkbench.methods._shared.compiled import available

    if not available():
        return
    from tkbench.methods.sikl.sip import _compiled_ascent

    X = np.linspace(0.1, 0.9, 6).reshape(3, 2)
    _compiled_ascent(X, np.array([1.0, -0.5, 0.25]), 1.0, 1e-5)(np.array([0.3, 0.7]))


register(Family(
    name="sikl",
    stop_rule="t(i) - t(i-1) < epsilon t(i-1), or T1 iterations (paper 004 Algorithm 1)",
    description="SVM with a translation-invariant kernel learned as a cosine (and Gaussian) mixture by "
                "semi-infinite programming (paper 004)",
    build=_build,
    solvers=("sip",),
    tasks=("classification",),
    default_grid={"beta": [0.1, 0.3, 1.0, 3.0, 10.0]},
    scaler="standard",
    diagnostics=lambda model: model.diagnostics(),
    trace=_trace,
    compile=_compile,
    reference="Ghiasi-Shirazi, Safabakhsh & Shamsi, JMLR 2010 (paper 004), Algorithm 1",
    report_notes={
        "evaluation": "A SIKL model is evaluated through its cosine expansion (paper 004 section 7), so its support "
                      "vectors do not enter its test time unless it has Gaussians.",
        "time_breakdown": "SIKL: search = Algorithm 2, qcqp = the finite QCQP (21), local = local adaptation "
                          "(section 5.4); the rest is the intermediate SVMs, the intercept and bookkeeping.",
    },
))

__all__ = ["SIKLClassifier"]
