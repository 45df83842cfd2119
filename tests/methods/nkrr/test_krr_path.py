"""Kernel ridge's CV path over alpha (`ridge_path`): every alpha's predictions and decision values equal a fresh
scikit-learn KernelRidge fitted at that alpha, and the CV along the path scores and chooses exactly as the CV that
fits every grid point (the CV before 2026-12-04), by both CV scores."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge

from tkbench.bench.tuning import select_params
from tkbench.methods import get_family, make_estimator
from tkbench.methods.compose import path_predictions, set_model_params
from tkbench.methods.nkrr.estimators import KRRClassifier, PathKernelRidge, ridge_path

ALPHAS = [1e-5, 1e-3, 0.1, 10.0]


def _data(task, n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 4))
    if task == "regression":
        return X, np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(n)
    if task == "binary":
        return X, np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, "b", "a")
    return X, np.digitize(X[:, 0] + 0.2 * rng.standard_normal(n), [-0.3, 0.3])


def test_ridge_path_equals_kernel_ridge_fitted_at_each_alpha():
    X, y = _data("regression")
    model = PathKernelRidge(alpha=max(ALPHAS), kernel="rbf", gamma=0.7).fit(X[:110], y[:110])
    preds = ridge_path(model, X[110:], ALPHAS)
    assert set(preds) == set(ALPHAS)
    for alpha in ALPHAS:
        fresh = KernelRidge(alpha=alpha, kernel="rbf", gamma=0.7).fit(X[:110], y[:110]).predict(X[110:])
        np.testing.assert_allclose(preds[alpha], fresh, rtol=1e-10, atol=1e-12)
    # and against an independent computation: the normal equations by numpy's dense solve
    d2 = ((X[:110, None, :] - X[None, :110, :]) ** 2).sum(-1)
    K, Kv = np.exp(-0.7 * d2), np.exp(-0.7 * ((X[110:, None, :] - X[None, :110, :]) ** 2).sum(-1))
    for alpha in ALPHAS[1:]:  # (1e-5: K + alpha I too ill-conditioned for a loose comparison)
        np.testing.assert_allclose(preds[alpha], Kv @ np.linalg.solve(K + alpha * np.eye(110), y[:110]),
                                   rtol=1e-6, atol=1e-8)


def test_ridge_path_falls_back_to_least_squares_as_kernel_ridge_does():
    """alpha = 0 on a linear kernel of rank 4 < m: not positive definite, so Cholesky fails; KernelRidge then warns
    and takes the least-squares solution, and so does the path."""
    X, y = _data("regression", n=60)
    model = PathKernelRidge(alpha=1.0, kernel="linear").fit(X[:40], y[:40])
    with pytest.warns(UserWarning, match="Singular matrix"):
        preds = ridge_path(model, X[40:], [0.0, 1.0])
    with pytest.warns(UserWarning, match="Singular matrix"):
        fresh = KernelRidge(alpha=0.0, kernel="linear").fit(X[:40], y[:40]).predict(X[40:])
    np.testing.assert_allclose(preds[0.0], fresh, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(preds[1.0], model.predict(X[40:]), rtol=0, atol=0)  # its own alpha: its own fit


@pytest.mark.parametrize("task", ["binary", "multiclass"])
def test_ridge_path_of_the_classifier_gives_its_labels_and_decision_values(task):
    X, y = _data(task)
    model = KRRClassifier(alpha=max(ALPHAS), gamma=0.7).fit(X[:110], y[:110])
    labels = ridge_path(model, X[110:], ALPHAS)
    decisions = ridge_path(model, X[110:], ALPHAS, decision=True)
    for alpha in ALPHAS:
        fresh = KRRClassifier(alpha=alpha, gamma=0.7).fit(X[:110], y[:110])
        assert np.array_equal(labels[alpha], fresh.predict(X[110:]))
        assert decisions[alpha].shape == fresh.decision_function(X[110:]).shape
        np.testing.assert_allclose(decisions[alpha], fresh.decision_function(X[110:]), rtol=1e-10, atol=1e-12)


def test_ridge_path_needs_the_training_targets():
    X, y = _data("regression")
    weighted = PathKernelRidge(alpha=1.0, gamma=0.7, kernel="rbf").fit(X, y, sample_weight=np.ones(len(y)))
    with pytest.raises(ValueError, match="no training targets"):
        ridge_path(weighted, X, [0.1, 1.0])


def test_the_composed_path_inverts_the_target_scaling():
    X, y = _data("regression")
    family = get_family("krr_rbf")
    est = make_estimator(family, "regression", scaler="minmax_pm1", target_scaler="minmax_pm1")
    set_model_params(est, {"alpha": max(ALPHAS), "gamma": 0.7}).fit(X[:110], y[:110] * 50 + 300)
    preds = path_predictions(est, family, X[110:], ALPHAS)
    for alpha in ALPHAS:
        fresh = make_estimator(family, "regression", scaler="minmax_pm1", target_scaler="minmax_pm1")
        fresh = set_model_params(fresh, {"alpha": alpha, "gamma": 0.7}).fit(X[:110], y[:110] * 50 + 300)
        np.testing.assert_allclose(preds[alpha], fresh.predict(X[110:]), rtol=1e-10)


@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
@pytest.mark.parametrize("cv_score", [None, "ls_error"])
def test_cv_along_the_path_equals_the_cv_of_every_grid_point(task, cv_score):
    X, y = _data(task)
    kind = "regression" if task == "regression" else "classification"
    family = get_family("krr_rbf")
    per_point = dataclasses.replace(family, path_param=None, path_predict=None)
    est = make_estimator(family, kind, scaler="minmax_pm1",
                         target_scaler="minmax_pm1" if kind == "regression" else None)
    grid = {"alpha": ALPHAS, "gamma": [0.3, 3.0]}
    along, along_report = select_params(est, family, grid, X, y, task=kind, k=3, seed=1, cv_score=cv_score)
    each, each_report = select_params(est, per_point, grid, X, y, task=kind, k=3, seed=1, cv_score=cv_score)
    assert along == each and list(along) == list(grid)  # the choice, its parameters in the grid's order
    assert [s["params"] for s in along_report["scores"]] == [s["params"] for s in each_report["scores"]]
    np.testing.assert_allclose([s["mean"] for s in along_report["scores"]],
                               [s["mean"] for s in each_report["scores"]], rtol=1e-10)
    assert along_report["n_candidates"] == each_report["n_candidates"] == 8


def test_ties_go_to_the_first_candidate_in_the_grids_own_order_path_or_not():
    """Along the path the CV walks gamma first and alpha inside it, where the grid's own order (the CV without a
    path) is alpha first: of two tied candidates (a1, g2) and (a2, g1) the grid's order puts (a1, g2) first, the
    walk (a2, g1). The tie goes to (a1, g2), as before the path (a path whose predictions are exact on the tied
    candidates and wrong elsewhere)."""
    X, y = _data("binary")
    truth = dict(zip(map(tuple, X), y, strict=True))
    good = {(1e-3, 1.0), (1e-2, 0.5)}

    def fake_path(model, Xv, values, decision=False):
        right = np.array([truth[tuple(x)] for x in Xv])
        wrong = np.where(right == "a", "b", "a")
        return {a: right if (a, model.gamma) in good else wrong for a in values}

    family = dataclasses.replace(get_family("krr_rbf"), path_predict=fake_path)
    est = make_estimator(family, "classification", scaler="none")
    grid = {"alpha": [1e-3, 1e-2], "gamma": [0.5, 1.0]}
    chosen, report = select_params(est, family, grid, X, y, task="classification", k=3, seed=0)
    assert chosen == {"alpha": 1e-3, "gamma": 1.0}
    assert [s["params"] for s in report["scores"]] == [{"alpha": a, "gamma": g} for a in grid["alpha"]
                                                       for g in grid["gamma"]]  # listed in the grid's order
    assert [s["mean"] for s in report["scores"]] == [0.0, 1.0, 1.0, 0.0]


def test_a_checkpoint_written_without_the_path_is_not_resumed_along_it(tmp_path):
    """The cells of a fold are in another order along the path: a CV checkpoint written by a CV that fitted every
    grid point (the file has no ``path_param``) is nothing done, not scores read in the wrong order."""
    X, y = _data("regression")
    family = get_family("krr_rbf")
    per_point = dataclasses.replace(family, path_param=None, path_predict=None)
    est = make_estimator(family, "regression", scaler="minmax_pm1", target_scaler="minmax_pm1")
    grid = {"alpha": ALPHAS, "gamma": [0.3, 3.0]}
    path = tmp_path / "cv.folds.json"
    plain, plain_report = select_params(est, per_point, grid, X, y, task="regression", k=3, seed=1)
    select_params(est, per_point, grid, X, y, task="regression", k=3, seed=1, checkpoint=path)
    saved = json.loads(path.read_text())
    assert saved["path_param"] is None
    saved.pop("path_param")  # as the files before 2026-12-04 were written
    saved["folds"] = [list(reversed(f)) for f in saved["folds"]]  # would change the choice if it were read
    path.write_text(json.dumps(saved))
    chosen, report = select_params(est, family, grid, X, y, task="regression", k=3, seed=1, checkpoint=path)
    assert chosen == plain
    np.testing.assert_allclose([s["mean"] for s in report["scores"]], [s["mean"] for s in plain_report["scores"]],
                               rtol=1e-10)
    assert json.loads(path.read_text())["path_param"] == "alpha"
    # and one written along the path resumes along it: its folds are read (here: all of them, nothing is refitted)
    broken = make_estimator(family, "regression", scaler="minmax_pm1", target_scaler="minmax_pm1",
                            params={"kernel": "broken"})
    again, _ = select_params(broken, family, grid, X, y, task="regression", k=3, seed=1, checkpoint=path)
    assert again == plain


@pytest.mark.parametrize("dataset", ["sonar", pytest.param("airfoil", marks=pytest.mark.slow)])
def test_the_path_reproduces_a_committed_rows_cv(dataset):
    """A committed cortes2009_uci row of kernel ridge (its CV made by a fit per grid point, 2026-11), recomputed from
    its spec along the path: the same choice and every candidate's mean score to 1e-9 relative."""
    from pathlib import Path

    from tkbench.bench.learn import cv_positions, split_rows
    from tkbench.bench.spec import RunSpec
    from tkbench.data import load_dataset
    from tkbench.data.base import select_features

    rows = Path(__file__).resolve().parents[3] / "results" / "cortes2009_uci" / "rows"
    row = min((r for r in (json.loads(p.read_text()) for p in rows.glob("*.json"))
               if r.get("family") == "krr_rbf" and r.get("status") == "ok" and r.get("dataset") == dataset),
              key=lambda r: r["split"])
    assert row["started_at"] < "2026-12-04"  # made before the path
    spec = RunSpec.from_dict(row["spec"])
    ds = select_features(load_dataset(spec.dataset, spec.options), spec.features)
    train, _ = split_rows(ds, spec, spec.split, spec.seed)
    cv_rows = train[cv_positions(spec, train, spec.seed)]
    family = get_family(spec.family)
    assert family.path_param in spec.grid  # the CV below walks the path
    est = make_estimator(family, ds.task, solver=spec.solver, params=spec.params, scaler=spec.scaler,
                         target_scaler=spec.target_scaler, random_state=spec.seed)
    target_range = None if ds.task == "classification" else (float(ds.y.min()), float(ds.y.max()))
    chosen, report = select_params(est, family, spec.grid, ds.X[cv_rows], ds.y[cv_rows], task=ds.task,
                                   k=spec.cv_folds, seed=spec.seed, stratify=spec.stratify, cv_score=spec.cv_score,
                                   target_range=target_range)
    assert chosen == row["chosen_params"]
    assert [s["params"] for s in report["scores"]] == [s["params"] for s in row["cv"]["scores"]]
    np.testing.assert_allclose([s["mean"] for s in report["scores"]], [s["mean"] for s in row["cv"]["scores"]],
                               rtol=1e-9)
