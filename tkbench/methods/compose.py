"""A method = a family's estimator behind its pre-processing, as one scikit-learn estimator.

Pre-processing lives inside the estimator so that it is fitted on whatever the estimator is fitted on: the training
part of a split, or the training folds during cross-validation (never the test part or the validation fold).
Regression targets may be scaled too, fitted on the training targets: ``target_scaler: standard`` (zero mean, unit
variance) or ``minmax_pm1`` (to [-1, 1]: paper 002 section 5, whose least-squares SVM clips its decisions there);
predictions come back on the original scale, so the reported MSE is always in the data's own units.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.compose import TransformedTargetRegressor
from sklearn.pipeline import Pipeline

from tkbench.methods._shared.scalers import make_scaler, make_target_scaler
from tkbench.methods.registry import Family

MODEL_STEP = "model"


def make_estimator(
    family: Family,
    task: str,
    *,
    solver: str | None = None,
    params: dict[str, Any] | None = None,
    scaler: str | None = None,
    target_scaler: str | None = None,
    random_state: int = 0,
) -> BaseEstimator:
    """The full, unfitted estimator of a method: ``[target scaling] -> input scaling -> family estimator``."""
    model = family.build(task, solver or family.default_solver, dict(params or {}), random_state)
    pipe = Pipeline([("scale", make_scaler(scaler or family.scaler)), (MODEL_STEP, model)])
    transformer = make_target_scaler(target_scaler or family.target_scaler) if task == "regression" else None
    if transformer is not None:
        return TransformedTargetRegressor(regressor=pipe, transformer=transformer)
    return pipe


def param_prefix(estimator: BaseEstimator) -> str:
    """How the family's own parameters are named on the composed estimator (for ``set_params``)."""
    return "regressor__model__" if isinstance(estimator, TransformedTargetRegressor) else "model__"


def set_model_params(estimator: BaseEstimator, params: dict[str, Any]) -> BaseEstimator:
    prefix = param_prefix(estimator)
    return estimator.set_params(**{prefix + k: v for k, v in params.items()})


def takes_checkpoint(estimator: BaseEstimator) -> bool:
    """Whether the family estimator has a ``checkpoint`` parameter (a path prefix for its saved state) left unset."""
    return estimator.get_params().get(param_prefix(estimator) + "checkpoint", False) is None


def fitted_model(estimator: BaseEstimator) -> Any:
    """The fitted family estimator inside a fitted composed estimator."""
    pipe = estimator.regressor_ if isinstance(estimator, TransformedTargetRegressor) else estimator
    return pipe.named_steps[MODEL_STEP]


def path_predictions(estimator: BaseEstimator, family: Family, X: np.ndarray, values: list[Any],
                     decision: bool = False) -> dict[Any, Any]:
    """Predictions of a fitted composed estimator for each value of the family's path parameter; ``decision``: a
    classifier's decision values instead of its labels (one column for two classes, as ``decision_function``)."""
    if isinstance(estimator, TransformedTargetRegressor):
        pipe, transformer = estimator.regressor_, estimator.transformer_
    else:
        pipe, transformer = estimator, None
    Xt = pipe[:-1].transform(X)
    model = pipe.named_steps[MODEL_STEP]  # (``decision`` passed only when asked: a family's path written for
    # labels alone, before 2026-12-04, keeps working)
    preds = family.path_predict(model, Xt, values, True) if decision else family.path_predict(model, Xt, values)
    if transformer is not None:
        preds = {v: transformer.inverse_transform(p.reshape(-1, 1)).ravel() for v, p in preds.items()}
    return preds
