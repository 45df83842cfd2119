"""liquidSVM 1.0.1 (Steinwart & Thomann 2017), the SVM of paper 002, as scikit-learn estimators.

liquidSVM chooses its hyper-parameters itself: k-fold CV (``folds``, default 5) over its own 10 x 10 grid of
(gamma, lambda) (``grid_choice`` 0; 1 and 2 are larger grids) whose values it sets from the training size, the
dimension and the data's diameter, and its final decision function is the average of the fold models. So a config
gives it no ``grid``. Classification is ``mcSVM`` (hinge loss; more than two classes all-versus-all, ``mc_type``),
regression ``lsSVM`` (least squares). ``random_state`` seeds its fold split (``random_seed``). Inputs: the family's
min-max scaling to [0, 1] (liquidSVM's defaults assume scaled data; its ``scale`` option is left off).

A fitted model holds liquidSVM's C++ state: it predicts in the process that fitted it (tkbench's runs do), and is
not picklable.
"""
from __future__ import annotations

from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from tkbench.methods._shared.report import SolverReport
from tkbench.methods.peers.imports import need, version

MC_TYPES = ("AvA_hinge", "OvA_ls", "OvA_hinge", "AvA_ls")


class _LiquidBase(BaseEstimator):
    """Parameters
    ----------
    folds : int >= 2, default=5
        liquidSVM's CV folds (its final model averages the fold models).
    grid_choice : {0, 1, 2}, default=0
        liquidSVM's grid: 0 is its 10 x 10 default.
    threads : int >= 1, default=1
        liquidSVM's threads.
    random_state : int >= 0, default=0
        liquidSVM's ``random_seed`` (its fold split), modulo 2**31: liquidSVM reads it as a C ``int`` and fails
        to train ("problems with command args") from 2**31 on, where tkbench's split seeds often lie.
    """

    _parameter_constraints: ClassVar[dict] = {
        "folds": [Interval(Integral, 2, None, closed="left")],
        "grid_choice": [Interval(Integral, 0, 2, closed="both")],
        "threads": [Interval(Integral, 1, None, closed="left")],
        "random_state": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(self, folds=5, grid_choice=0, threads=1, random_state=0):
        self.folds = folds
        self.grid_choice = grid_choice
        self.threads = threads
        self.random_state = random_state

    def _config(self) -> dict[str, Any]:
        return {"folds": int(self.folds), "grid_choice": int(self.grid_choice), "threads": int(self.threads),
                "random_seed": int(self.random_state) % 2**31, "display": 0}

    _dummy_label = 0.0  # the labels handed to liquidSVM's test with the rows to predict (see _predict_raw)

    def _predict_raw(self, X) -> np.ndarray:
        """liquidSVM's ``predict`` calls its ``test`` with all-zero labels, which a binary classifier refuses
        ("labels of train and test file do not match", issue 51's CI smoke run): so ``test`` is called here with a
        label the model was trained on. The labels only score liquidSVM's own test error, which is not read."""
        check_is_fitted(self, "model_")
        X = np.asarray(validate_data(self, X, reset=False), dtype=float)
        results = self.model_.test(X, np.full(X.shape[0], self._dummy_label))[0]
        return np.asarray(results[:, self.model_.predictCols], dtype=float)

    def diagnostics(self) -> dict[str, Any]:
        return SolverReport(f"liquidSVM {version('liquidSVM')} {type(self.model_).__name__}", None, None,
                            "liquidSVM's own solver stopping rule; hyper-parameters by its k-fold CV",
                            extras={"peer": f"liquidSVM {version('liquidSVM')}", "folds": int(self.folds),
                                    "grid_choice": int(self.grid_choice)}).as_diagnostics()

    def __getstate__(self):
        if "model_" in self.__dict__:
            raise TypeError("a fitted liquidSVM model holds C++ state and cannot be pickled")
        return super().__getstate__()


class LiquidSVMClassifier(ClassifierMixin, _LiquidBase):
    """liquidSVM's ``mcSVM``.

    Parameters
    ----------
    mc_type : {"AvA_hinge", "OvA_ls", "OvA_hinge", "AvA_ls"}, default="AvA_hinge"
        the multi-class scheme: all-versus-all or one-versus-all, hinge or least-squares loss.
    """

    _parameter_constraints: ClassVar[dict] = {**_LiquidBase._parameter_constraints,
                                              "mc_type": [StrOptions(set(MC_TYPES))]}

    def __init__(self, folds=5, grid_choice=0, threads=1, random_state=0, mc_type="AvA_hinge"):
        super().__init__(folds=folds, grid_choice=grid_choice, threads=threads, random_state=random_state)
        self.mc_type = mc_type

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_data(self, X, y)
        liquid = need("liquidSVM", "liquidSVM")
        self.encoder_ = LabelEncoder().fit(y)
        self.classes_ = self.encoder_.classes_
        codes = self.encoder_.transform(y).astype(float) + 1.0  # liquidSVM's labels: numbers
        self.model_ = liquid.mcSVM(np.asarray(X, dtype=float), codes, mcType=self.mc_type, **self._config())
        self._dummy_label = 1.0  # a code it was trained on
        return self

    def predict(self, X):
        codes = np.rint(self._predict_raw(X)).astype(int) - 1
        return self.encoder_.inverse_transform(np.clip(codes, 0, len(self.classes_) - 1))


class LiquidSVMRegressor(RegressorMixin, _LiquidBase):
    """liquidSVM's ``lsSVM`` (least-squares regression; the SVM of paper 002)."""

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_data(self, X, y, y_numeric=True)
        liquid = need("liquidSVM", "liquidSVM")
        self.model_ = liquid.lsSVM(np.asarray(X, dtype=float), np.asarray(y, dtype=float), **self._config())
        return self

    def predict(self, X):
        return self._predict_raw(X)
