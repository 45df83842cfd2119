"""Gaussian processes with an anisotropic (ARD) RBF kernel: one length scale per feature, learned by maximising
the log marginal likelihood (Rasmussen & Williams 2006, section 5.4.1, Eq. (5.8)) with scikit-learn's
``GaussianProcessRegressor`` / ``GaussianProcessClassifier`` (L-BFGS-B from the initial kernel and from
``n_restarts_optimizer`` random starts drawn from ``random_state``).

The standard way to learn one width per feature, and so the baseline a learned kernel (TK, HGK's inhomogeneous
kernel, SIKL) has to beat (issue 51). Our choices where the library leaves them to the user: the kernel
c * RBF(l_1..l_d) (+ white noise for regression), every length scale starting at 1 on inputs scaled by the
family's scaler, bounds 1e-2 .. 1e3 for the length scales (the upper bound switches a feature off), 1e-6 .. 10
for the noise level, targets normalised (``normalize_y``). Classification is the Laplace approximation, one
binary GP per class against the rest for more than two classes (scikit-learn's ``one_vs_rest``); it costs O(m^3)
per likelihood evaluation per class, so a config gives it its small sets only.
"""
from __future__ import annotations

from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.gaussian_process import GaussianProcessClassifier, GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from tkbench.methods._shared.report import SolverReport

LENGTH_SCALE_BOUNDS = (1e-2, 1e3)
NOISE_LEVEL_BOUNDS = (1e-6, 10.0)


class _ARDBase(BaseEstimator):
    """Parameters
    ----------
    length_scale_bounds : tuple, default=(1e-2, 1e3)
        bounds of every feature's length scale (the upper one switches a feature off).
    noise_level_bounds : tuple, default=(1e-6, 10.0)
        bounds of the white-noise level (regression).
    n_restarts_optimizer : int >= 0, default=2
        further L-BFGS-B runs from random starts (drawn with random_state).
    random_state : int >= 0 or None, default=0
        the restarts' starting points.
    """

    _parameter_constraints: ClassVar[dict] = {
        "length_scale_bounds": [tuple, list],
        "noise_level_bounds": [tuple, list],
        "n_restarts_optimizer": [Interval(Integral, 0, None, closed="left")],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
    }

    def __init__(self, length_scale_bounds=LENGTH_SCALE_BOUNDS, noise_level_bounds=NOISE_LEVEL_BOUNDS,
                 n_restarts_optimizer=2, random_state=0):
        self.length_scale_bounds = length_scale_bounds
        self.noise_level_bounds = noise_level_bounds
        self.n_restarts_optimizer = n_restarts_optimizer
        self.random_state = random_state

    def _check(self) -> None:
        self._validate_params()
        for name in ("length_scale_bounds", "noise_level_bounds"):
            low, high = (list(getattr(self, name)) + [None, None])[:2]
            if len(getattr(self, name)) != 2 or not (isinstance(low, int | float) and isinstance(high, int | float)
                                                     and 0 < low < high < np.inf):
                raise ValueError(f"{name} = {getattr(self, name)!r}: expected two numbers 0 < low < high")

    def _kernel(self, d: int, noise: bool):
        kernel = ConstantKernel(1.0, (1e-3, 1e3)) * RBF(np.ones(d), tuple(self.length_scale_bounds))
        return kernel + WhiteKernel(1e-2, tuple(self.noise_level_bounds)) if noise else kernel

    def predict(self, X):
        check_is_fitted(self, "gp_")
        return self.gp_.predict(validate_data(self, X, reset=False))

    def _lml(self):
        return self.gp_.log_marginal_likelihood_value_

    def length_scales(self) -> np.ndarray:
        """The learned length scale of each feature (of each class's GP, one row per GP)."""
        check_is_fitted(self, "gp_")
        inner = getattr(self.gp_, "base_estimator_", None)  # a classifier: one binary GP, or one per class
        kernels = [self.gp_.kernel_] if inner is None else (
            [e.kernel_ for e in inner.estimators_] if hasattr(inner, "estimators_") else [inner.kernel_])
        out = []
        for k in kernels:
            params = k.get_params()
            scales = [v for name, v in params.items() if name.endswith("length_scale") and np.ndim(v) == 1]
            out.append(np.atleast_1d(scales[0]))
        return np.vstack(out)

    def diagnostics(self) -> dict[str, Any]:
        """The one solver report: L-BFGS-B on the log marginal likelihood (scikit-learn reports no convergence
        flag; it warns when a run stops at its iteration cap)."""
        scales = self.length_scales()
        return SolverReport("L-BFGS-B on the log marginal likelihood (scikit-learn GP)", None, None,
                            "SciPy's L-BFGS-B defaults, from the initial kernel and n_restarts_optimizer = "
                            f"{self.n_restarts_optimizer} random starts",
                            extras={"log_marginal_likelihood": float(np.sum(self._lml())),
                                    "length_scales": [[float(v) for v in row] for row in scales],
                                    "features_off": int(np.sum(scales >= 0.99 * self.length_scale_bounds[1]))}
                            ).as_diagnostics()


class ARDGaussianProcessRegressor(RegressorMixin, _ARDBase):
    __doc__ = "GP regression with an anisotropic RBF kernel plus white noise (module doc).\n\n    " + _ARDBase.__doc__

    def fit(self, X, y):
        self._check()
        X, y = validate_data(self, X, y, y_numeric=True)
        self.gp_ = GaussianProcessRegressor(self._kernel(X.shape[1], noise=True), normalize_y=True,
                                            n_restarts_optimizer=int(self.n_restarts_optimizer),
                                            random_state=self.random_state).fit(X, y)
        return self


class ARDGaussianProcessClassifier(ClassifierMixin, _ARDBase):
    __doc__ = ("GP classification (Laplace approximation, one-vs-rest) with an anisotropic RBF kernel (module doc)."
               "\n\n    " + _ARDBase.__doc__)

    def fit(self, X, y):
        self._check()
        X, y = validate_data(self, X, y)
        self.classes_ = np.unique(y)
        self.gp_ = GaussianProcessClassifier(self._kernel(X.shape[1], noise=False),
                                             n_restarts_optimizer=int(self.n_restarts_optimizer),
                                             random_state=self.random_state).fit(X, y)
        return self

    def predict_proba(self, X):
        check_is_fitted(self, "gp_")
        return self.gp_.predict_proba(validate_data(self, X, reset=False))
