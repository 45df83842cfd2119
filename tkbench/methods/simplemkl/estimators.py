"""SimpleMKL learners (Rakotomamonjy et al. 2008, as used in papers 000 and 003): family ``simplemkl``.

The kernel library is set by ``widths`` (Gaussian bandwidths), ``degrees`` (polynomial degrees),
``per_feature`` (also every kernel on each single feature), ``standard`` (include those at all) and ``tk_bases``
(that many TK kernels with random PSD P_s, seeded by ``random_state``; ``tk_degree``, ``tk_delta``, ``tk_basis``;
paper 000 Opt. (25)). Families: ``simplemkl`` (standard library), ``simplemkl_tk`` (300 TK kernels only) and
``simplemkl_tk_plus`` (both). The default is the papers' standard library,
13 (n + 1) kernels, each normalised to unit mean diagonal on the training rows (:mod:`tkbench.methods._shared.library`).
Inputs are min-max scaled to [0, 1] by the method's pipeline. More than two classes: one-vs-rest.
"""
from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from tkbench.methods._shared.binary import SignedTargetsMixin
from tkbench.methods._shared.library import (
    DEFAULT_DEGREES,
    DEFAULT_WIDTHS,
    BaseKernel,
    Library,
    standard_library,
)
from tkbench.methods._shared.report import SolverReport
from tkbench.methods._shared.svm import DUAL_SOLVERS
from tkbench.methods.family import Family, register
from tkbench.methods.simplemkl.reduced_gradient import simple_mkl
from tkbench.methods.simplemkl.tk_bases import random_tk_library
from tkbench.methods.tk.kernel import BASES as TK_BASES
from tkbench.methods.tk.warmup import warmup


class _MKLBase(BaseEstimator):
    """The shared parameters of the SimpleMKL learners.

    Parameters
    ----------
    C : float > 0, default=1.0
        SVM penalty.
    widths : array-like or None, default=the standard library's
        Gaussian bandwidths of the standard library.
    degrees : array-like or None, default=(1, 2, 3)
        polynomial degrees of the standard library.
    per_feature : bool, default=True
        also every kernel on each single feature: about 13 (n + 1) kernels.
    tol : float > 0, default=0.01
        relative duality gap that stops.
    max_iter : int >= 0, default=100
        reduced-gradient iterations.
    svm_tol : float > 0 or None, default=None
        the SVM solver's tolerance; None: LIBSVM's default.
    standard : bool, default=True
        include the standard library.
    tk_bases : int >= 0, default=0
        number of random tessellated-kernel bases, paper 000's SimpleMKL TK.
    tk_degree : int >= 0, default=1
        their monomial degree.
    tk_delta : float > 0, default=0.1
        their box margin.
    tk_basis : {'x', 'zx'}, default='x'
        "x" or "zx" monomials.
    random_state : int >= 0 or None, default=None
        the random TK bases.
    warm_start : bool, default=False
        start from the previous fit's weights.
    dual_solver : {'libsvm', 'smo'}, default='libsvm'
        "libsvm": every solve from scratch; "smo": our SMO, warm-started from the previous solve,
        tkbench.methods.simplemkl.reduced_gradient.
    epsilon : float >= 0, default=0.1
        SVR tube width, regression. SimpleMKLRegressor only.
    """

    # every parameter, declared once (scikit-learn's format): fit validates with scikit-learn's own
    # ``_validate_params``, the config check (tkbench.config) reads the same declarations; the values of the lists
    # and the inputs' magnitude are checked in :meth:`_library`
    _parameter_constraints: ClassVar[dict] = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "widths": ["array-like", None],
        "degrees": ["array-like", None],
        "per_feature": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "svm_tol": [Interval(Real, 0, None, closed="neither"), None],
        "standard": ["boolean"],
        "tk_bases": [Interval(Integral, 0, None, closed="left")],
        "tk_degree": [Interval(Integral, 0, None, closed="left")],
        "tk_delta": [Interval(Real, 0, None, closed="neither")],
        "tk_basis": [StrOptions(set(TK_BASES))],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
        "warm_start": ["boolean"],
        "dual_solver": [StrOptions(set(DUAL_SOLVERS))],
    }

    def _library(self, X: np.ndarray) -> Library:
        self._validate_params()
        widths = np.atleast_1d(np.asarray(self.widths, dtype=float)) if self.widths is not None else np.array([])
        if not np.all(np.isfinite(widths) & (widths > 0)):  # a width <= 0 makes the Gaussian kernel NaN
            raise ValueError(f"widths = {self.widths!r}: expected positive, finite Gaussian bandwidths")
        degrees = list(self.degrees or [])
        if not all(isinstance(d, int | np.integer) and not isinstance(d, bool) and d >= 1 for d in degrees):
            raise ValueError(f"degrees = {self.degrees!r}: expected whole polynomial degrees >= 1")
        if self.tk_bases and not np.isfinite(float(self.tk_delta)):
            raise ValueError(f"tk_delta = {self.tk_delta!r}: expected a positive, finite number")
        top = float(np.max(np.abs(X))) if X.size else 0.0
        with np.errstate(over="ignore"):
            worst = (top * top * X.shape[1] + 1.0) ** max(degrees or [1])
        if self.standard and not np.isfinite(worst):  # the polynomial kernels (1 + x.y)^d would be inf, then NaN
            raise ValueError(f"inputs of magnitude up to {top:.3g} overflow the library's polynomial kernels of "
                             f"degree up to {max(degrees or [1])}: rescale them first (StandardScaler, MinMaxScaler)")
        kernels = standard_library(X.shape[1], tuple(self.widths), tuple(self.degrees)) if self.standard else []
        if not self.per_feature:
            kernels = [k for k in kernels if k.feature is None]
        if self.tk_bases:
            kernels += random_tk_library(X.shape[1], int(self.tk_bases), degree=int(self.tk_degree),
                                         delta=float(self.tk_delta), basis=self.tk_basis,
                                         seed=0 if self.random_state is None else int(self.random_state))
        if not kernels:
            raise ValueError("the kernel library is empty: give widths and/or degrees")
        return Library(kernels, X)

    def _solve(self, library: Library, y: np.ndarray, task: str, init=None):
        return simple_mkl(library, y, task=task, C=float(self.C), epsilon=float(getattr(self, "epsilon", 0.1)),
                          tol=float(self.tol), max_iter=int(self.max_iter), svm_tol=self.svm_tol, init=init,
                          dual_solver=self.dual_solver)

    def _warm(self, library: Library, n_targets: int) -> list:
        """Initial weights per target: the previous fit's when ``warm_start`` and the library size matches."""
        old = getattr(self, "weights_", None) if self.warm_start else None
        if old is None or old.shape != (n_targets, len(library)):
            return [None] * n_targets
        return list(old)

    def _store(self, library: Library, results) -> None:
        library.release_cache()
        self.library_ = library
        self.kernel_names_ = [k.name for k in library.kernels]
        self.weights_ = np.stack([r.weights for r in results])
        self.dual_coef_ = np.stack([r.solution.w for r in results])
        self.intercept_ = np.array([r.solution.intercept for r in results])
        self.n_iters_ = np.array([r.n_iter for r in results])  # per one-vs-rest problem
        self.n_iter_ = int(self.n_iters_.max())  # an int, as scikit-learn's single-problem estimators have
        self.converged_ = np.array([r.converged for r in results])
        self.gap_history_ = [r.history for r in results]
        self.n_svm_solves_ = int(sum(r.n_svm_solves for r in results))
        self.n_svm_capped_ = int(sum(r.n_svm_capped for r in results))
        self.n_svm_iterations_ = int(sum(r.n_svm_iterations for r in results))

    def _decision(self, X) -> np.ndarray:
        check_is_fitted(self, "weights_")
        X = validate_data(self, X, reset=False)
        cols = [self.library_.combined(d, X) @ w + b
                for d, w, b in zip(self.weights_, self.dual_coef_, self.intercept_, strict=True)]
        return cols[0] if len(cols) == 1 else np.column_stack(cols)

    def diagnostics(self) -> dict:
        last = self.gap_history_[0][-1]
        top = np.argsort(self.weights_[0])[::-1][:3]
        return SolverReport(
            "SimpleMKL reduced gradient (Rakotomamonjy et al. 2008)", self.n_iter_, bool(self.converged_.all()),
            f"relative duality gap <= tol = {self.tol:g}, or max_iter = {self.max_iter}",
            {"relative_gap": float(last["relative_gap"])},
            extras={"n_svm_solves": self.n_svm_solves_, "n_svm_capped": self.n_svm_capped_,
                    "n_svm_iterations": self.n_svm_iterations_, "n_kernels": len(self.kernel_names_),
                    "n_active": int(np.count_nonzero(self.weights_[0])),
                    "top_kernels": {self.kernel_names_[k]: float(self.weights_[0][k]) for k in top}}).as_diagnostics()


class SimpleMKLClassifier(SignedTargetsMixin, ClassifierMixin, _MKLBase):
    """SVM with kernel weights on the simplex learned by SimpleMKL (reduced gradient, duality-gap stop)."""

    def __init__(self, C=1.0, widths=DEFAULT_WIDTHS, degrees=DEFAULT_DEGREES, per_feature=True, tol=1e-2,
                 max_iter=100, svm_tol=None, standard=True, tk_bases=0, tk_degree=1, tk_delta=0.1,
                 tk_basis="x", random_state=None, warm_start=False, dual_solver="libsvm"):
        self.dual_solver = dual_solver
        self.warm_start = warm_start
        self.standard = standard
        self.tk_bases = tk_bases
        self.tk_degree = tk_degree
        self.tk_delta = tk_delta
        self.tk_basis = tk_basis
        self.random_state = random_state
        self.C = C
        self.widths = widths
        self.degrees = degrees
        self.per_feature = per_feature
        self.tol = tol
        self.max_iter = max_iter
        self.svm_tol = svm_tol

    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        library = self._library(X)
        targets = self._signed_targets(y)
        inits = self._warm(library, len(targets))
        self._store(library, [self._solve(library, t, "classification", w0) for t, w0 in zip(targets, inits,
                                                                                                strict=True)])
        return self


class SimpleMKLRegressor(RegressorMixin, _MKLBase):
    """Epsilon-SVR with kernel weights learned by SimpleMKL; ``epsilon`` 0.1 as in paper 003."""

    def __init__(self, C=1.0, epsilon=0.1, widths=DEFAULT_WIDTHS, degrees=DEFAULT_DEGREES, per_feature=True,
                 tol=1e-2, max_iter=100, svm_tol=None, standard=True, tk_bases=0, tk_degree=1, tk_delta=0.1,
                 tk_basis="x", random_state=None, warm_start=False, dual_solver="libsvm"):
        self.dual_solver = dual_solver
        self.warm_start = warm_start
        self.standard = standard
        self.tk_bases = tk_bases
        self.tk_degree = tk_degree
        self.tk_delta = tk_delta
        self.tk_basis = tk_basis
        self.random_state = random_state
        self.C = C
        self.epsilon = epsilon
        self.widths = widths
        self.degrees = degrees
        self.per_feature = per_feature
        self.tol = tol
        self.max_iter = max_iter
        self.svm_tol = svm_tol

    def fit(self, X, y):
        X, y = validate_data(self, X, y, y_numeric=True)
        library = self._library(X)
        self._store(library, [self._solve(library, np.asarray(y, dtype=float), "regression",
                                          self._warm(library, 1)[0])])
        return self

    def predict(self, X):
        return self._decision(X)


def _builder(**defaults):
    def build(task: str, solver: str, params: dict, seed: int):
        cls = SimpleMKLClassifier if task == "classification" else SimpleMKLRegressor
        return cls(**{**defaults, "random_state": seed, **params})

    return build


_build = _builder()
_COMMON = dict(stop_rule="relative duality gap <= tol, or max_iter (SimpleMKL reduced gradient)",
               solvers=("reduced_gradient",), default_grid={"C": [0.1, 1.0, 10.0, 100.0]}, scaler="minmax",
               warm_start=True, warmup=warmup,
               diagnostics=lambda model: model.diagnostics(),
               trace=lambda model: [dict(h) for h in model.gap_history_[0]])

register(Family(
    name="simplemkl",
    description="SimpleMKL over Gaussian (0.5..10) and polynomial (1..3) kernels on all and single features",
    build=_build,
    reference="Rakotomamonjy et al., JMLR 2008; papers 000 and 003 [SimpleMKL]",
    **_COMMON,
))

register(Family(
    name="simplemkl_tk",
    description="SimpleMKL over 300 TK kernels with random PSD P_s (paper 000 Opt. 25, [SimpleMKL TK])",
    build=_builder(standard=False, tk_bases=300),
    reference="paper 000 section 6, Opt. (25)",
    **_COMMON,
))

register(Family(
    name="simplemkl_tk_plus",
    description="SimpleMKL over the standard library joined with 300 random TK kernels ([SimpleMKL TK+])",
    build=_builder(standard=True, tk_bases=300),
    reference="paper 000 section 6, [SimpleMKL TK+]",
    **_COMMON,
))

__all__ = ["BaseKernel", "SimpleMKLClassifier", "SimpleMKLRegressor"]
