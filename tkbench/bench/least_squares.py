"""The least-squares error on labels scaled to [-1, 1] with clipped decision values: the metric of paper 002's
Table 1 (section 5: "we scaled the input variables to [-1, 1]^d and the label y to [-1, 1] ... we clipped the
final decision functions obtained by the different algorithms to [-1, 1], too").

- Regression: the paper scales each data set's labels to [-1, 1] before drawing its train/test sets, so the scale
  is the *whole data set's* label range [lo, hi]: ``ls_error = mean((2 (clip(f(x), lo, hi) - y) / (hi - lo))^2)``,
  which is the least-squares error of the clipped decision on the scaled labels, whatever scaling the learner
  used internally.
- Classification (our reading, the paper does not say): the one-vs-all least-squares setting. Class c has the
  labels y_c = +1 (class c) / -1 (any other); ``ls_error`` is the mean over test points and classes of
  (y_c - clip(s_c(x), -1, 1))^2, with s_c the learner's decision value for class c. Binary problems use one column
  (the second class as +1; the other column is its mirror image and gives the same mean). The decision values are
  ``decision_function`` when the learner has one (least-squares learners: their regression of the +-1 labels; an
  SVM: its margin), else ``2 predict_proba - 1`` (forests, neural nets: the least-squares optimal value
  E[y_c | x] = 2 P(c | x) - 1 of their class-probability estimate).
"""
from __future__ import annotations

import numpy as np


def decision_matrix(estimator, X: np.ndarray) -> np.ndarray:
    """The decision values of a fitted classifier as an (n, k) matrix, one column per class of ``classes_``
    (binary: one column, the second class's)."""
    classes = estimator.classes_
    if hasattr(estimator, "decision_function"):
        scores = np.asarray(estimator.decision_function(X), dtype=float)
    elif hasattr(estimator, "predict_proba"):
        scores = 2.0 * np.asarray(estimator.predict_proba(X), dtype=float) - 1.0
        if len(classes) == 2:
            scores = scores[:, 1]
    else:
        raise TypeError(f"{type(estimator).__name__} has neither decision_function nor predict_proba: "
                        "no least-squares error")
    scores = scores.reshape(len(X), -1)
    expected = 1 if len(classes) == 2 else len(classes)
    if scores.shape[1] != expected:
        raise ValueError(f"{type(estimator).__name__}: {scores.shape[1]} decision columns for {len(classes)} classes")
    return scores


def signed_targets(classes: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The one-vs-all labels (n, k) in {-1, +1} (binary: one column, +1 = ``classes[1]``)."""
    cols = classes[1:] if len(classes) == 2 else classes
    return np.where(np.asarray(y)[:, None] == np.asarray(cols)[None, :], 1.0, -1.0)


def least_squares_error(estimator, X: np.ndarray, y: np.ndarray, task: str,
                        target_range: tuple[float, float] | None = None) -> float:
    """The least-squares error of a fitted estimator on (X, y) as in paper 002's Table 1 (see the module)."""
    values = decision_matrix(estimator, X) if task == "classification" else estimator.predict(X)
    return least_squares_error_of(values, y, task, fitted_classes(estimator), target_range)


def fitted_classes(estimator) -> np.ndarray | None:
    """``classes_`` of a fitted classifier (None for a regressor)."""
    return getattr(estimator, "classes_", None)


def least_squares_error_of(values: np.ndarray, y: np.ndarray, task: str, classes: np.ndarray | None = None,
                           target_range: tuple[float, float] | None = None) -> float:
    """The least-squares error of given outputs (see the module): a classifier's decision values (an (n, k) matrix
    as :func:`decision_matrix` returns, or one column for two ``classes``), a regressor's predictions."""
    if task == "classification":
        scores = np.asarray(values, dtype=float).reshape(len(y), -1)
        expected = 1 if len(classes) == 2 else len(classes)
        if scores.shape[1] != expected:
            raise ValueError(f"{scores.shape[1]} decision columns for {len(classes)} classes")
        return float(np.mean((signed_targets(classes, y) - np.clip(scores, -1.0, 1.0)) ** 2))
    y = np.asarray(y, dtype=float)
    lo, hi = target_range if target_range is not None else (float(np.min(y)), float(np.max(y)))
    if not hi > lo:
        return float("nan")
    pred = np.clip(np.asarray(values, dtype=float), lo, hi)
    return float(np.mean((2.0 * (pred - y) / (hi - lo)) ** 2))
