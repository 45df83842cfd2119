"""One run of a family, start to finish: data -> split -> CV on the training part -> final fit -> test metrics.

The experiment kinds whose methods are trained (:mod:`tkbench.kinds`) run this inside the isolated child process
(:mod:`tkbench.bench.isolation`, through :func:`tkbench.bench.execute.execute`, which turns any exception into a
``failed`` row).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.pipeline import Pipeline

from tkbench.bench.least_squares import decision_matrix, least_squares_error, signed_targets
from tkbench.bench.spec import RunSpec
from tkbench.bench.store import CHECKPOINTS, TUNING
from tkbench.bench.tuning import select_params, shared_selection
from tkbench.data import Dataset, load_dataset, train_test_indices, training_subset
from tkbench.data.base import select_features
from tkbench.data.registry import fixed_split
from tkbench.methods import get_family, make_estimator
from tkbench.methods.compose import fitted_model, set_model_params, takes_checkpoint

# Set by the run's child process (tkbench.bench.isolation): a file to write once the run's set-up is done, with
# the seconds of warm-up (compiling or loading compiled code); its supervisor does not count those against the
# run's timeout (a cold numba cache turned a 13-second failure into a timeout under load).
SETUP_MARKER: str | None = None


def setup_done(warmup_seconds: float) -> None:
    if SETUP_MARKER:
        try:
            Path(SETUP_MARKER).write_text(f"{warmup_seconds:.6f}", encoding="utf-8")
        except OSError:
            pass  # the timeout then counts the warm-up, as it did before


def metrics(task: str, y_true: np.ndarray, y_pred: np.ndarray, prefix: str = "") -> dict[str, float]:
    """Accuracy (%) and balanced accuracy (%) for classification; MSE, MAE and R^2 for regression."""
    if task == "classification":
        acc = 100.0 * float(np.mean(y_true == y_pred))
        classes = np.unique(y_true)
        recalls = [np.mean(y_pred[y_true == c] == c) for c in classes]
        return {prefix + "accuracy": acc, prefix + "balanced_accuracy": 100.0 * float(np.mean(recalls))}
    err = np.asarray(y_true, float) - np.asarray(y_pred, float)
    mse = float(np.mean(err**2))
    var = float(np.var(y_true))
    out = {prefix + "mse": mse, prefix + "mae": float(np.mean(np.abs(err)))}
    out[prefix + "r2"] = 1.0 - mse / var if var > 0 else float("nan")
    return out


def rmse_pm1(estimator, X: np.ndarray, y: np.ndarray) -> float:
    """Root mean squared error of the decision values against the labels coded -1 / +1 (+1: ``classes_[1]``):
    the regression error of a classifier trained by regression on +-1 labels (kernel ridge regression and
    the families built on it). For a margin classifier (SVM) it measures calibration, not its training criterion."""
    scores = decision_matrix(estimator, X)  # unclipped, unlike the least-squares error
    return float(np.sqrt(np.mean((scores - signed_targets(estimator.classes_, y)) ** 2)))


def split_rows(ds: Dataset, spec: RunSpec, split: int, seed: int, exact_size: bool = False
               ) -> tuple[np.ndarray, np.ndarray]:
    """The training and test rows of split ``split`` (seed ``seed``): the benchmark's own realisation split + 1
    when the dataset has fixed realisations, else a seeded random split; a training cap (``size``) keeps a
    seeded subset of the training part."""
    fixed = fixed_split(ds, split)
    if fixed is not None:
        train, test = fixed
    else:
        train, test = train_test_indices(ds.y, test_fraction=spec.test_fraction, seed=seed,
                                         stratify=spec.stratify, subsample=spec.subsample)
    if spec.size is not None and (exact_size or int(spec.size) < len(train)):
        train = training_subset(train, int(spec.size), seed + 1)
    return train, test


def cv_positions(spec: RunSpec, train: np.ndarray, seed: int) -> np.ndarray:
    """Positions in ``train`` (a split's training rows, seed ``seed``) of the rows its CV uses: all of them, or
    with ``cv_max_train`` (``spec.cv_size``) the subset a max_train of that size would train on (the same seed:
    nested subsets), in training order. The one rule of both the per-split and the shared CV (before 2026-11-29
    a CV shared by the first splits ignored cv_max_train and tuned on every row)."""
    if spec.cv_size is None or int(spec.cv_size) >= len(train):
        return np.arange(len(train))
    return np.flatnonzero(np.isin(train, training_subset(train, int(spec.cv_size), seed + 1)))


def run_learner(spec: RunSpec, row: dict[str, Any], threads: int = 1, root: str | None = None,
                after_fit=None, exact_size: bool = False) -> None:
    """One run of a family: its data and split, CV on the training part, the final fit, test metrics and the
    solver's report into ``row``; ``after_fit(spec, row, estimator, model, family, (X, X_train, y_train))`` then
    adds what the run's kind records beyond that (the decision surface, say); ``exact_size``: the spec's
    ``size`` is the run's training size even when the training part is not larger (the kind's rule,
    :attr:`tkbench.kinds.base.Kind.exact_size`)."""
    ds = select_features(load_dataset(spec.dataset, spec.options), spec.features)
    train, test = split_rows(ds, spec, spec.split, spec.seed, exact_size)
    if spec.test_size is not None:  # scaling runs, also at full size (size None)
        test = training_subset(test, min(int(spec.test_size), len(test)), spec.seed + 2)
    X_train, y_train, X_test, y_test = ds.X[train], ds.y[train], ds.X[test], ds.y[test]
    row.update(n_train=len(train), n_test=len(test), n_features=ds.X.shape[1], n_classes=ds.n_classes,
               metric="accuracy" if ds.task == "classification" else "mse")

    family = get_family(spec.family)
    estimator = make_estimator(family, ds.task, solver=spec.solver, params=spec.params,
                               scaler=spec.scaler, target_scaler=spec.target_scaler, random_state=spec.seed)
    warm = 0.0
    if family.warmup is not None:  # one-time costs (numba loading its compiled code) stay out of the timings
        t0 = time.perf_counter()
        family.warmup(threads)
        warm = row["warmup_seconds"] = time.perf_counter() - t0
    setup_done(warm)
    chosen: dict[str, Any] = {}
    # the whole data set's label range: the scale of the least-squares error (paper 002 scales before splitting)
    target_range = None if ds.task == "classification" else (float(np.min(ds.y)), float(np.max(ds.y)))
    row["cv_seconds"] = 0.0
    if spec.grid and spec.tuning:  # once per (dataset, method), on the first k splits' training parts
        def training_part(r: int, seed: int):
            rows = split_rows(ds, spec, r, seed, exact_size)[0]
            rows = rows[cv_positions(spec, rows, seed)]
            return ds.X[rows], ds.y[rows]

        chosen, cv = shared_selection(spec, estimator, family, training_part, task=ds.task, root=root,
                                      target_range=target_range)
        row["cv_seconds"] = cv.pop("seconds")
        row["cv"] = cv
        set_model_params(estimator, chosen)
    elif spec.grid:
        cv_rows = cv_positions(spec, train, spec.seed)
        if len(cv_rows) < len(train):
            row["cv_rows"] = len(cv_rows)
        chosen, cv = select_params(estimator, family, spec.grid, X_train[cv_rows], y_train[cv_rows], task=ds.task,
                                   k=spec.cv_folds, seed=spec.seed, stratify=spec.stratify,
                                   cv_score=spec.cv_score, target_range=target_range,
                                   checkpoint=cv_checkpoint(root, spec),
                                   fit_checkpoint=fit_checkpoint(root, spec, ".cv"))
        row["cv_seconds"] = cv.pop("seconds")
        row["cv"] = cv
        set_model_params(estimator, chosen)
    row["chosen_params"] = chosen
    row["params"] = {**spec.params, **chosen}

    if root is not None and takes_checkpoint(estimator):
        # a learner that can save its state (``takes_checkpoint``): a final fit killed with its session continues
        set_model_params(estimator, {"checkpoint": fit_checkpoint(root, spec)})
    t0 = time.perf_counter()
    estimator.fit(X_train, y_train)
    row["fit_seconds"] = time.perf_counter() - t0
    model = fitted_model(estimator)
    if getattr(model, "resumed_", None):  # continued from a checkpoint: the time includes the earlier sessions'
        row["resumed"] = model.resumed_
        row["fit_seconds"] += float(model.fit_seconds_before_resume_)
    t0 = time.perf_counter()
    y_pred = estimator.predict(X_test)
    row["predict_seconds"] = time.perf_counter() - t0
    row.update(metrics(ds.task, y_test, y_pred))
    row.update(metrics(ds.task, y_train, estimator.predict(X_train), prefix="train_"))
    if ds.task == "classification" and ds.n_classes == 2 and hasattr(estimator, "decision_function"):
        row["rmse_pm1"] = rmse_pm1(estimator, X_test, y_test)
    try:
        row["ls_error"] = least_squares_error(estimator, X_test, y_test, ds.task, target_range)
    except (TypeError, ValueError):  # no decision values of the right shape: no least-squares error
        pass

    row["diagnostics"] = family.diagnostics(model) if family.diagnostics else {}
    if spec.vary and spec.vary.get("size"):
        row["size_value"] = row["diagnostics"].get(spec.vary["size"])
    elif spec.vary:
        row["size_value"] = spec.vary["value"]
    if spec.trace and family.trace is not None:
        row["trace"] = family.trace(model)
        errors = staged_test_errors(estimator, model, X_test, y_test)
        for entry, error in zip(row["trace"], errors or [], strict=False):
            entry["test_error"] = error
    if after_fit is not None:
        after_fit(spec, row, estimator, model, family, (ds.X, X_train, y_train))


def staged_test_errors(estimator, model, X_test: np.ndarray, y_test: np.ndarray) -> list[float] | None:
    """The test error (a fraction) after each solver iteration, for a classifier that keeps its stages
    (``keep_stages=True`` and ``staged_decision_function``, scikit-learn's staged convention): the
    trajectories of paper 004's Figures 1-3. None for any other model. The test part is used only to record."""
    if not getattr(model, "keep_stages", False) or not hasattr(model, "staged_decision_function"):
        return None
    X = estimator[:-1].transform(X_test) if isinstance(estimator, Pipeline) else X_test
    errors = []
    for scores in model.staged_decision_function(X):
        pred = model.classes_[(np.asarray(scores) > 0).astype(int)]
        errors.append(float(np.mean(pred != y_test)))
    return errors


SURFACE_RESOLUTION = 100


def decision_surface(estimator, X_all: np.ndarray, X_train: np.ndarray, y_train: np.ndarray) -> dict[str, Any]:
    """The fitted model's decision function on a SURFACE_RESOLUTION^2 grid over the data's bounding box (5 % margin),
    with the training points: what paper 000 Figure 6 draws. With one feature, the function on 4 SURFACE_RESOLUTION
    points of the data's range (paper 000 Figure 1(a); no ``y`` key). One or two features."""
    if X_all.shape[1] not in (1, 2):
        raise ValueError(f"kind 'surface' needs data with 1 or 2 features, this data set has {X_all.shape[1]}")
    lo, hi = X_all.min(axis=0), X_all.max(axis=0)
    pad = 0.05 * (hi - lo)
    axes = [np.linspace(lo[j] - pad[j], hi[j] + pad[j], SURFACE_RESOLUTION * (4 if X_all.shape[1] == 1 else 1))
            for j in range(X_all.shape[1])]
    mesh = np.meshgrid(*axes) if len(axes) == 2 else axes
    grid = np.column_stack([a.ravel() for a in mesh])
    values = estimator.decision_function(grid) if hasattr(estimator, "decision_function") else estimator.predict(grid)
    out = {"x": np.round(axes[0], 6).tolist()}
    if len(axes) == 2:
        out["y"] = np.round(axes[1], 6).tolist()
    out["z"] = np.round(np.asarray(values, float).reshape(mesh[0].shape), 5).tolist()
    return {**out, "train_x": np.round(X_train, 6).tolist(), "train_y": np.asarray(y_train).tolist()}


def fit_checkpoint(root: str | None, spec: RunSpec, suffix: str = "") -> str | None:
    """``<root>/checkpoints/<run key><suffix>``: the path prefix under which a learner that can save its state
    keeps it (the final fit; ``suffix=".cv"``: the CV fits, each adding ``<fold>-<candidate>``)."""
    return None if root is None else str(Path(root) / CHECKPOINTS / f"{spec.key}{suffix}")


def cv_checkpoint(root: str | None, spec: RunSpec) -> Path | None:
    """``<root>/tuning/<run key>.cv.folds.json``: the finished folds of one run's own CV. A run killed in its CV
    resumes at the next fold, and one killed in its final fit (hours at Gas Turbine's full size) does not redo its
    CV; the file is removed when the run has finished (ok or failed)."""
    return None if root is None else Path(root) / TUNING / f"{spec.key}.cv.folds.json"


