"""NKRR learners (paper 001): kernel ridge regression with a learned polynomial combination of base kernels.

``NKRRRegressor`` fits y; ``NKRRClassifier`` regresses the +-1 labels and predicts the sign (one-vs-rest beyond two
classes, one mu per class), as kernel ridge regression is used for classification in paper 001. The kernel is
K_mu = (sum_k mu_k K_k)^(o degree) (:mod:`tkbench.methods.nkrr.combination`), mu is learned by Algorithm 1
(:mod:`tkbench.methods.nkrr.projected_gradient`) on M1 (``norm=1``) or M2 (``norm=2``) of radius ``Lambda`` around
``mu0``, and the predictor is f(x) = sum_i alpha_i K_mu(x, x_i) with alpha = (K_mu + lam I)^-1 y (no intercept,
as in the paper's KRR; regression targets are standardised by the method's pipeline, so the mean is the offset).

Parameters: ``degree`` (1..4; 1 is the linear combination of classical MKL), ``base`` (``linear_feature``,
``gaussian_feature`` with ``width``, or ``library``: the SimpleMKL library of ``widths``, ``degrees``,
``per_feature``), ``constant`` (add the all-ones kernel K_0 = 1 1^T with its own learned weight; default on, so that
a degree-d combination of linear features is an inhomogeneous polynomial kernel: without it, the degree-2 kernel of
centred features is even in x and cannot separate two blobs; the paper's Figure 1 has no constant kernel and its
config turns it off), ``norm``, ``mu0`` (a number for every entry, a list, or
``"uniform"``: the vector of equal entries with ||mu0||_norm = 1, the paper's "mu0 / ||mu0|| = 1"), ``Lambda``,
``lam`` (lambda), ``solver`` (``pgd``: Algorithm 1; ``fixed``: mu = mu0 + Lambda 1 / ||1||, the uniform
combination), ``eta`` and ``line_search`` (step rule), ``tol``, ``max_iter``.

Scaling (documented so that grids can be read): with mu0 = 0 the pair (Lambda, lam) acts only through
lam / Lambda^degree, since K_{c mu} = c^d K_mu; with mu0 != 0, Lambda is the distance allowed from mu0.
Inputs: the family's pipeline min-max scales features to [0, 1] (which reproduces the ranges of F in the paper's
Figure 1 on Sonar; :mod:`tkbench.bench.landscape`).
"""
from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.kernel_ridge import KernelRidge
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from tkbench.methods._shared.binary import SignedTargetsMixin
from tkbench.methods._shared.library import DEFAULT_DEGREES, DEFAULT_WIDTHS
from tkbench.methods._shared.report import SolverReport
from tkbench.methods.family import Family, register
from tkbench.methods.nkrr.combination import BASES, combination_kernel, make_base_kernels
from tkbench.methods.nkrr.projected_gradient import (
    NORMS,
    NKRRObjective,
    fixed_combination,
    projected_gradient,
)

SOLVERS = ("pgd", "fixed")


class _NKRRBase(BaseEstimator):
    """The shared parameters (scikit-learn reads them from this signature in both estimators)."""

    # every parameter, declared once (scikit-learn's format): fit validates with scikit-learn's own
    # ``_validate_params``, the config check (tkbench.config) reads the same declarations
    _parameter_constraints: ClassVar[dict] = {
        "degree": [Interval(Integral, 1, 4, closed="both")],
        "base": [StrOptions(set(BASES))],
        "norm": [Options(Integral, set(NORMS))],
        "mu0": [Real, "array-like", StrOptions({"uniform"})],
        "Lambda": [Interval(Real, 0, None, closed="left")],
        "lam": [Interval(Real, 0, None, closed="neither")],
        "solver": [StrOptions(set(SOLVERS))],
        "eta": [Interval(Real, 0, None, closed="neither"), None],
        "line_search": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "constant": ["boolean"],
        "width": [Interval(Real, 0, None, closed="neither")],
        "widths": ["array-like", None],
        "degrees": ["array-like", None],
        "per_feature": ["boolean"],
        "ridge_solve": [StrOptions(set(NKRRObjective.SOLVES))],
    }

    def __init__(self, degree=2, base="linear_feature", norm=2, mu0=0.0, Lambda=1.0, lam=1.0, solver="pgd",
                 eta=None, line_search=True, tol=1e-4, max_iter=100, constant=True, width=1.0,
                 widths=DEFAULT_WIDTHS, degrees=DEFAULT_DEGREES, per_feature=True, ridge_solve="auto"):
        self.degree = degree
        self.base = base
        self.norm = norm
        self.mu0 = mu0
        self.Lambda = Lambda
        self.lam = lam
        self.solver = solver
        self.eta = eta
        self.line_search = line_search
        self.tol = tol
        self.max_iter = max_iter
        self.constant = constant
        self.width = width
        self.widths = widths
        self.degrees = degrees
        self.per_feature = per_feature
        self.ridge_solve = ridge_solve

    def _check_params(self) -> None:
        """scikit-learn's validation of :attr:`_parameter_constraints` (mu0's length is checked against the number
        of base kernels in :meth:`_center`)."""
        self._validate_params()

    def _center(self, p: int) -> np.ndarray:
        if isinstance(self.mu0, str):
            if self.mu0 != "uniform":
                raise ValueError(f"mu0 must be a number, a list of p numbers or 'uniform', got {self.mu0!r}")
            ones = np.ones(p)
            return ones / np.linalg.norm(ones, ord=self.norm)
        mu0 = np.broadcast_to(np.asarray(self.mu0, dtype=float), (p,)) if np.ndim(self.mu0) == 0 \
            else np.asarray(self.mu0, dtype=float)
        if mu0.shape != (p,) or not np.all(np.isfinite(mu0)) or mu0.min() < 0:
            raise ValueError(f"mu0 must be >= 0 with one entry per base kernel ({p}), got {self.mu0!r}")
        return np.array(mu0)

    def _fit_targets(self, X: np.ndarray, targets: list[np.ndarray]):
        self._check_params()
        kernels = make_base_kernels(self.base, X, constant=bool(self.constant), width=float(self.width),
                                    widths=self.widths, degrees=self.degrees, per_feature=bool(self.per_feature))
        center = self._center(kernels.p)
        results, objectives = [], []
        for y in targets:
            objective = NKRRObjective(kernels, y, float(self.lam), int(self.degree), solve=self.ridge_solve)
            objectives.append(objective)
            if self.solver == "fixed":
                res = fixed_combination(objective, norm=int(self.norm), mu0=center, radius=float(self.Lambda))
            else:
                res = projected_gradient(objective, norm=int(self.norm), mu0=center, radius=float(self.Lambda),
                                         eta=self.eta, line_search=bool(self.line_search), tol=float(self.tol),
                                         max_iter=int(self.max_iter))
            if not (np.all(np.isfinite(res.alpha)) and np.all(np.isfinite(res.mu))):
                raise ValueError(f"the fit is not finite: inputs of magnitude up to {np.abs(X).max():.3g} overflow "
                                 "the base kernels (their squares and products leave float64's range); rescale "
                                 "them first, e.g. with StandardScaler or MinMaxScaler")
            results.append(res)
        getattr(kernels, "release_cache", lambda: None)()
        self.kernels_ = kernels
        self.kernel_names_ = list(kernels.names)
        self.mu0_ = center
        single = len(results) == 1
        self.mu_ = results[0].mu if single else np.stack([r.mu for r in results])
        self.dual_coef_ = results[0].alpha if single else np.stack([r.alpha for r in results])
        self.objective_ = np.array([r.value for r in results])
        self.n_iter_ = int(max(r.n_iter for r in results))
        self.converged_ = bool(all(r.converged for r in results))
        measured = [r.stationarity for r in results if np.isfinite(r.stationarity)]  # NaN: mu was not learned
        self.stationarity_ = float(max(measured)) if measured else float("nan")
        self.n_evals_ = int(sum(r.n_evals for r in results))
        self.n_factorisations_ = int(sum(o.n_factorisations for o in objectives))
        self.n_cg_ = int(sum(o.n_cg for o in objectives))
        self.history_ = [r.history for r in results]
        self.objective_history_ = [h["objective"] for h in results[0].history]
        return self

    def _decision(self, X) -> np.ndarray:
        check_is_fitted(self, "mu_")
        X = validate_data(self, X, reset=False)
        mus = np.atleast_2d(self.mu_)
        alphas = np.atleast_2d(self.dual_coef_)
        cols = [combination_kernel(self.kernels_, mu, int(self.degree), X) @ a
                for mu, a in zip(mus, alphas, strict=True)]
        out = cols[0] if len(cols) == 1 else np.column_stack(cols)
        if not np.all(np.isfinite(out)):
            raise ValueError(f"predictions are not finite: inputs of magnitude up to {np.abs(X).max():.3g} overflow "
                             "the kernels against the training points; rescale the inputs as the training inputs were")
        return out

    def diagnostics(self) -> dict:
        mu = np.atleast_2d(self.mu_)[0]
        top = np.argsort(mu)[::-1][:3]
        fixed = self.solver == "fixed"
        return SolverReport(
            "fixed combination (no kernel learning)" if fixed else "projected gradient, paper 001 Algorithm 1 on Eq. (10)",
            self.n_iter_, None if fixed else self.converged_,
            "none: the combination is fixed" if fixed else
            f"||mu' - mu|| < tol * Lambda = {self.tol:g} * {self.Lambda:g}, or max_iter = {self.max_iter}",
            {} if fixed or not np.isfinite(self.stationarity_) else {"stationarity": self.stationarity_},
            extras={"objective": float(self.objective_[0]), "n_evals": self.n_evals_,
                    "n_factorisations": self.n_factorisations_, "n_cg": self.n_cg_, "p": len(mu),
                    "n_active": int(np.count_nonzero(mu > 1e-12)),
                    "mu_norm": float(np.linalg.norm(mu - self.mu0_, ord=int(self.norm))),
                    "top_kernels": {self.kernel_names_[k]: float(mu[k]) for k in top}}).as_diagnostics()


_PARAMS_DOC = """
    Parameters
    ----------
    degree : int in [1, 4], default=2
        the degree d of the combination (sum_k mu_k K_k)^(o d); 1 is classical linear MKL.
    base : {'gaussian_feature', 'library', 'linear_feature'}, default='linear_feature'
        the base kernels: one linear kernel per feature, one Gaussian per feature (``width``), or the SimpleMKL
        standard library (``widths``, ``degrees``, ``per_feature``).
    norm : {1, 2}, default=2
        the feasible set M1 (L1 ball) or M2 (L2 ball) of radius ``Lambda`` around ``mu0``.
    mu0 : float or array-like or {'uniform'}, default=0.0
        the centre of the feasible set: one number for every entry, a list, or "uniform" (equal entries with
        ||mu0||_norm = 1).
    Lambda : float >= 0, default=1.0
        the radius of the feasible set M.
    lam : float > 0, default=1.0
        the ridge lambda of kernel ridge regression.
    solver : {'fixed', 'pgd'}, default='pgd'
        pgd: Algorithm 1 (projected gradient); fixed: mu = mu0 + Lambda 1 / ||1||, the uniform combination.
    eta : float > 0 or None, default=None
        fixed step, or the first trial step of the line search.
    line_search : bool, default=True
        Armijo backtracking.
    tol : float > 0, default=0.0001
        stop when ||mu' - mu|| < tol * Lambda.
    max_iter : int >= 0, default=100
        projected-gradient iterations.
    constant : bool, default=True
        add the all-ones kernel.
    width : float > 0, default=1.0
        the Gaussians' width (base gaussian_feature).
    widths : array-like or None, default=the standard library's
        the Gaussian bandwidths of the library (base library).
    degrees : array-like or None, default=(1, 2, 3)
        the polynomial degrees of the library (base library).
    per_feature : bool, default=True
        also every library kernel on each single feature (base library).
    ridge_solve : {'auto', 'feature_map', 'pcg', 'cholesky'}, default='auto'
        how each objective evaluation solves (K_mu + lambda I) alpha = y: "cholesky", one factorisation per
        evaluation (the only way before 2026-11-28; rows made then name it in their configs); "pcg", conjugate
        gradients preconditioned by the last factorisation, with a certified error bound on F (holds two m x m
        matrices); "feature_map", Woodbury's identity on the explicit feature map of rank-1 base kernels
        (base linear_feature: O(m D^2), D = C(p + d, d) with the constant kernel); "auto" takes "feature_map" when
        D <= m / 2, else "pcg" (tkbench.methods.nkrr.projected_gradient.NKRRObjective).
    """


class NKRRRegressor(RegressorMixin, _NKRRBase):
    __doc__ = "Kernel ridge regression with a learned polynomial kernel combination (paper 001, NKRR)." + _PARAMS_DOC

    def fit(self, X, y):
        X, y = validate_data(self, X, y, y_numeric=True)
        return self._fit_targets(X, [np.asarray(y, dtype=float)])

    def predict(self, X):
        return self._decision(X)


class NKRRClassifier(SignedTargetsMixin, ClassifierMixin, _NKRRBase):
    __doc__ = ("NKRR on +-1 labels, predicting the sign (one-vs-rest beyond two classes), paper 001." + _PARAMS_DOC)

    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        targets = [t.astype(float) for t in self._signed_targets(y)]
        return self._fit_targets(X, targets)


class PathKernelRidge(KernelRidge):
    """scikit-learn's ``KernelRidge`` that keeps its training targets (``y_fit_``; None when fitted with sample
    weights), so that cross-validation can score every ridge alpha of a grid from one kernel (:func:`ridge_path`).
    Its fit and predictions are ``KernelRidge``'s."""

    def fit(self, X, y, sample_weight=None):
        super().fit(X, y, sample_weight)
        self.y_fit_ = np.asarray(y, dtype=float) if sample_weight is None else None
        return self


class KRRClassifier(SignedTargetsMixin, ClassifierMixin, BaseEstimator):
    """scikit-learn's ``KernelRidge`` on +-1 labels, predicting the sign (one-vs-rest beyond two classes): the
    single-kernel reference of the NKRR experiments (``alpha`` is the ridge lambda).

    Parameters
    ----------
    alpha : float >= 0 or array-like, default=1.0
        ridge lambda; the least-squares SVM's m lambda.
    kernel : str or callable, default='rbf'
        scikit-learn kernel name.
    gamma : float >= 0 or None, default=None
        width: exp(-gamma ||x - z||^2) for rbf.
    degree : float >= 0, default=3
        polynomial kernel.
    coef0 : float, default=1.0
        polynomial and sigmoid kernels' constant.
    """

    # scikit-learn's own declarations for these parameters (KernelRidge's)
    _parameter_constraints: ClassVar[dict] = {
        k: v for k, v in KernelRidge._parameter_constraints.items() if k in ("alpha", "kernel", "gamma", "degree",
                                                                              "coef0")}

    def __init__(self, alpha=1.0, kernel="rbf", gamma=None, degree=3, coef0=1.0):
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_data(self, X, y)
        targets = np.column_stack(self._signed_targets(y)).astype(float)
        self.model_ = PathKernelRidge(alpha=self.alpha, kernel=self.kernel, gamma=self.gamma, degree=self.degree,
                                      coef0=self.coef0).fit(X, targets)
        return self

    def _decision(self, X):
        check_is_fitted(self, "model_")
        X = validate_data(self, X, reset=False)
        scores = self.model_.predict(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores


def _build(task: str, solver: str, params: dict, seed: int):
    return (NKRRClassifier if task == "classification" else NKRRRegressor)(solver=solver, **params)


def _build_krr(task: str, solver: str, params: dict, seed: int):
    if task == "classification":
        return KRRClassifier(**{"kernel": "rbf", **params})
    return PathKernelRidge(**{"kernel": "rbf", **params})


def ridge_path(model, X: np.ndarray, values: list, decision: bool = False) -> dict:
    """Kernel ridge's predictions at X for every alpha in ``values``, from one training kernel (the family's CV
    path, :class:`tkbench.methods.family.Family`): the fitted model's dual coefficients at its own alpha, and for
    each other alpha the solve ``KernelRidge.fit`` makes, (K + alpha I) c = y by Cholesky (scipy's ``solve`` with
    ``assume_a="pos"`` there; LAPACK's ``dposv`` here, with scikit-learn's least-squares fallback for a matrix that
    is not positive definite). Each value's predictions are those of the model fitted at that alpha (to rounding:
    tested). What is saved: the
    kernels (training and validation), computed once instead of once per alpha (an exponential per entry), and
    the overhead of scipy's ``solve`` around LAPACK's Cholesky solve ``dposv`` (1.6x the ``dposv`` time at 2400 rows:
    its condition estimate and copies), which the path calls directly into one reused buffer. ``model``: a fitted
    :class:`PathKernelRidge` or :class:`KRRClassifier` (``decision``: its decision values instead of labels)."""
    import warnings

    from scipy import linalg
    from sklearn.metrics.pairwise import pairwise_kernels

    classifier = isinstance(model, KRRClassifier)
    ridge = model.model_ if classifier else model
    check_is_fitted(ridge, "dual_coef_")
    if getattr(ridge, "y_fit_", None) is None:
        raise ValueError(f"{type(ridge).__name__} has no training targets (fitted with sample weights, or not a "
                         "PathKernelRidge): no ridge path")
    params = (ridge.kernel_params or {}) if callable(ridge.kernel) else \
        {"gamma": ridge.gamma, "degree": ridge.degree, "coef0": ridge.coef0}
    K = pairwise_kernels(ridge.X_fit_, metric=ridge.kernel, filter_params=True, **params)
    K_valid = pairwise_kernels(X, ridge.X_fit_, metric=ridge.kernel, filter_params=True, **params)
    targets = ridge.y_fit_.reshape(len(K), -1)
    out = {}
    A = np.empty_like(K, order="F")  # one buffer for every alpha: a fresh m x m array costs page faults each time
    for value in values:
        if value == ridge.alpha:
            coef = ridge.dual_coef_
        else:
            np.copyto(A, K)
            A.flat[::len(A) + 1] += value
            _, coef, info = linalg.lapack.dposv(A, targets, lower=False, overwrite_a=True, overwrite_b=False)
            if info != 0:  # not positive definite (or a bad argument): KernelRidge's fallback
                warnings.warn("Singular matrix in solving dual problem. Using least-squares solution instead.",
                              stacklevel=2)
                np.copyto(A, K)
                A.flat[::len(A) + 1] += value
                coef = linalg.lstsq(A, targets)[0]
            if ridge.y_fit_.ndim == 1:
                coef = coef.ravel()
        scores = np.dot(K_valid, coef)
        if not classifier:
            out[value] = scores
            continue
        scores = scores[:, 0] if scores.shape[1] == 1 else scores
        if decision:
            out[value] = scores
        else:
            out[value] = model.classes_[(scores > 0).astype(int)] if scores.ndim == 1 else \
                model.classes_[np.argmax(scores, axis=1)]
    return out


def _compile() -> None:
    """NKRR's compiled loops (``tkbench compile``): the Gaussian base kernels' sums and quadratic forms, run only
    by configs with Gaussian base kernels (the default linear ones need none, so no run warms them up)."""
    from tkbench.methods._shared.compiled import available

    if not available():
        return
    from tkbench.methods.nkrr._numba import gaussian_feature_forms, gaussian_feature_sum

    X = np.linspace(0.1, 0.9, 6).reshape(3, 2)
    frozen = X.copy()  # read-only inputs (scikit-learn's memory-mapped CV data) are other types to numba
    frozen.setflags(write=False)
    mu, frozen_mu = np.ones(2), np.ones(2)
    frozen_mu.setflags(write=False)
    for Y, Z, m in ((X, X, mu), (frozen, frozen, mu), (frozen, X, mu), (X, frozen, mu), (X, frozen, frozen_mu)):
        gaussian_feature_sum(Y, Z, m, 0.5)
        gaussian_feature_forms(Z, np.ones(3), np.ones((3, 3)), 0.5, True)


def _warmup(threads: int = 1) -> None:
    """A run's thread budget for NKRR's compiled loops (:func:`tkbench.methods.nkrr.combination.set_thread_budget`);
    nothing is loaded here: only the Gaussian and library base sets run compiled code, and they load it at first use."""
    from tkbench.methods.nkrr.combination import set_thread_budget

    set_thread_budget(threads)


register(Family(
    name="nkrr",
    stop_rule="||mu' - mu|| < tol * Lambda, or max_iter (projected gradient, paper 001)",
    least_squares=True,
    description="kernel ridge regression with a learned polynomial combination of base kernels (paper 001)",
    build=_build,
    solvers=SOLVERS,
    default_grid={"lam": [0.01, 0.1, 1.0, 10.0]},
    scaler="minmax",
    target_scaler="standard",
    diagnostics=lambda model: model.diagnostics(),
    trace=lambda model: [dict(h) for h in model.history_[0]],
    reference="Cortes, Mohri & Rostamizadeh, NIPS 2009 (paper 001), Algorithm 1",
    landscape=lambda *args, **kw: nkrr_landscape(*args, **kw),
    compile=_compile,
    warmup=_warmup,
    changed_defaults={"ridge_solve": ("cholesky", "auto")},  # 2026-11-28 (issue 50): feature map / preconditioned CG
))

register(Family(
    name="krr_rbf",
    least_squares=True,
    description="kernel ridge regression with a Gaussian kernel (scikit-learn KernelRidge), alpha and gamma by CV",
    build=_build_krr,
    solvers=("cholesky",),
    default_grid={"alpha": [0.01, 0.1, 1.0], "gamma": [0.01, 0.1, 1.0]},
    scaler="standard",
    target_scaler="standard",
    path_param="alpha",
    path_predict=ridge_path,
    reference="Saunders et al. 1998; the single-kernel reference of paper 001's experiments",
    diagnostics=lambda model: SolverReport("Cholesky factorisation (closed form)", None, None,
                                           "none: one linear solve, no iterations").as_diagnostics(),
))

__all__ = ["KRRClassifier", "NKRRClassifier", "NKRRRegressor", "PathKernelRidge", "ridge_path"]


def nkrr_landscape(task: str, params: dict, X: np.ndarray, y: np.ndarray, axis: np.ndarray,
                   hessian: bool = True) -> dict:
    """F(mu1, mu2) of Eq. (10) on the grid axis x axis (values[i][j] at mu = (axis[j], axis[i])) and the smallest
    eigenvalue of its Hessian there: paper 001 Figure 1. The base set must have exactly two kernels."""
    from tkbench.methods.nkrr.projected_gradient import NKRRObjective

    model = NKRRRegressor(**params)
    model._check_params()
    kernels = make_base_kernels(model.base, X, constant=bool(model.constant), width=float(model.width),
                                widths=model.widths, degrees=model.degrees, per_feature=bool(model.per_feature))
    if kernels.p != 2:
        raise ValueError(f"a landscape needs exactly 2 base kernels, this base set has {kernels.p} ({kernels.names});"
                         " select two features (dataset 'features') and set constant: false")
    objective = NKRRObjective(kernels, y, float(model.lam), int(model.degree), solve=model.ridge_solve)
    values = [[objective.value(np.array([a, b]))[0] for a in axis] for b in axis]
    eig = [[float(np.linalg.eigvalsh(objective.hessian(np.array([a, b])))[0]) for a in axis] for b in axis] \
        if hessian else None
    return {"values": values, "min_eigenvalue": eig, "kernel_names": list(kernels.names),
            "bound": float(y @ y) / float(model.lam)}
