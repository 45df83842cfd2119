"""Baselines and CV: estimators work for every task, the forest path equals fresh forests, CV is leak-free."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.model_selection import GridSearchCV, KFold

from tkbench.bench.tuning import select_params
from tkbench.methods import get_family, make_estimator, visible_families
from tkbench.methods.compose import fitted_model, path_predictions, set_model_params


def _data(task, classes=2, n=160):
    if task == "regression":
        X, y = make_regression(n_samples=n, n_features=5, noise=5.0, random_state=0)
        return X, y + 100.0
    X, y = make_classification(n_samples=n, n_features=6, n_informative=4, n_classes=classes,
                               n_clusters_per_class=1, random_state=0)
    return X, y


@pytest.mark.parametrize("family", ["random_forest", "neural_net", "svm_rbf"])
@pytest.mark.parametrize("task,classes", [("classification", 2), ("classification", 3), ("regression", 0)])
def test_baselines_learn(family, task, classes):
    X, y = _data(task, classes)
    est = make_estimator(get_family(family), task, random_state=0)
    est.fit(X[:120], y[:120])
    pred = est.predict(X[120:])
    if task == "classification":
        assert set(np.unique(pred)) <= set(np.unique(y))
        assert np.mean(pred == y[120:]) > 1.0 / classes + 0.2  # clearly better than chance
    else:
        assert np.mean((pred - y[120:]) ** 2) < np.var(y[120:])


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_forest_path_equals_fresh_forests(task):
    X, y = _data(task)
    family = get_family("random_forest")
    est = make_estimator(family, task, random_state=5)
    set_model_params(est, {"n_estimators": 30})
    est.fit(X[:120], y[:120])
    preds = path_predictions(est, family, X[120:], [10, 20, 30])
    cls = RandomForestClassifier if task == "classification" else RandomForestRegressor
    for k in (10, 20, 30):
        fresh = cls(n_estimators=k, random_state=5, n_jobs=1).fit(X[:120], y[:120]).predict(X[120:])
        np.testing.assert_allclose(preds[k], fresh, rtol=1e-12)


def test_select_params_matches_gridsearchcv():
    """Our CV picks the same C/gamma as scikit-learn's GridSearchCV on the same folds."""
    X, y = _data("classification", 2, n=200)
    family = get_family("svm_rbf")
    est = make_estimator(family, "classification", random_state=0)
    grid = {"C": [0.1, 1.0, 10.0], "gamma": [0.01, 0.1, 1.0]}
    chosen, report = select_params(est, family, grid, X, y, task="classification", k=3, seed=1, stratify=False)
    ref = GridSearchCV(clone(est), {"model__" + k: v for k, v in grid.items()},
                       cv=KFold(3, shuffle=True, random_state=1)).fit(X, y)
    assert {"model__" + k: v for k, v in chosen.items()} == ref.best_params_
    assert report["best_score"] == pytest.approx(ref.best_score_)
    assert report["n_candidates"] == 9


def test_select_params_forest_path_and_regression():
    X, y = _data("regression")
    family = get_family("random_forest")
    est = make_estimator(family, "regression", random_state=0)
    chosen, report = select_params(est, family, {"n_estimators": [5, 10, 40], "max_depth": [2, None]}, X, y,
                                   task="regression", k=2, seed=0)
    assert chosen["n_estimators"] in (5, 10, 40) and chosen["max_depth"] in (2, None)
    assert report["n_candidates"] == 6
    assert report["best_score"] == max(s["mean"] for s in report["scores"])  # minus MSE: larger is better


def test_select_params_skips_failing_candidates():
    X, y = _data("classification")
    family = get_family("svm_rbf")
    est = make_estimator(family, "classification")
    chosen, report = select_params(est, family, {"C": [-1.0, 1.0]}, X, y, task="classification", k=2, seed=0)
    assert chosen == {"C": 1.0} and report["failed_candidates"] == 2
    # the row keeps why: the candidate and the exception, one entry per failed fit
    assert len(report["errors"]) == 2 and all(e.startswith("{'C': -1.0}: ") for e in report["errors"])
    assert all("Error" in e for e in report["errors"])
    with pytest.raises(RuntimeError, match="every CV candidate failed"):
        select_params(est, family, {"C": [-1.0]}, X, y, task="classification", k=2, seed=0)


def test_scaling_is_fitted_inside_the_estimator():
    """Pre-processing is fitted on what fit() sees: the composed estimator's scaler knows only the training rows."""
    X, y = _data("classification")
    est = make_estimator(get_family("svm_rbf"), "classification")
    est.fit(X[:100], y[:100])
    np.testing.assert_allclose(est.named_steps["scale"].mean_, X[:100].mean(axis=0))
    reg = make_estimator(get_family("svm_rbf"), "regression")
    Xr, yr = _data("regression")
    reg.fit(Xr[:100], yr[:100])
    assert reg.transformer_.mean_[0] == pytest.approx(yr[:100].mean())
    assert fitted_model(reg).__class__.__name__ == "SVR"


def test_every_visible_family_has_valid_default_grid():
    for fam in visible_families():
        names = fam.param_names(fam.tasks[0])
        assert set(fam.default_grid) <= names, fam.name


def test_heavy_tail_scalers_are_monotone_fitted_on_training_rows_and_land_in_unit_interval():
    """log_minmax and quantile (tkbench.methods._shared.scalers) keep TK's [0, 1] range on heavy-tailed columns."""
    from tkbench.methods._shared.scalers import SCALERS, make_scaler

    rng = np.random.default_rng(0)
    X = np.abs(rng.standard_cauchy((200, 3))) * [1.0, 300.0, 1e4]
    train, test = X[:150], X[150:]
    for kind in ("log_minmax", "quantile"):
        assert kind in SCALERS
        scaler = make_scaler(kind).fit(train)
        Z = scaler.transform(train)
        assert Z.min() >= 0.0 and Z.max() <= 1.0 + 1e-12, kind
        for j in range(3):  # monotone per column: the training rows keep their order
            order = np.argsort(train[:, j], kind="stable")
            assert np.all(np.diff(Z[order, j]) >= -1e-12), kind
        # heavy tails no longer squeeze the bulk next to 0 (min-max puts the median near 0)
        assert np.median(Z, axis=0).min() > 0.1, kind
        np.testing.assert_allclose(scaler.transform(test), clone(make_scaler(kind)).fit(train).transform(test))
    # the CDF scaler maps the training median to about 1/2; log_minmax is exact against the formula
    np.testing.assert_allclose(np.median(make_scaler("quantile").fit_transform(train), axis=0), 0.5, atol=0.01)
    L = np.log1p(train)
    np.testing.assert_allclose(make_scaler("log_minmax").fit_transform(train), (L - L.min(0)) / (L.max(0) - L.min(0)))
    # a quantile scaler fitted on fewer rows than its default 1000 quantiles works without warnings
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_scaler("quantile").fit(train[:20])


def test_log_minmax_refuses_negative_features_with_a_clear_error():
    from tkbench.methods._shared.scalers import make_scaler

    X = np.ones((10, 3))
    X[4, 2] = -2.5
    with pytest.raises(ValueError, match=r"column 2 has minimum -2.5.*'quantile'"):
        make_scaler("log_minmax").fit(X)
    with pytest.raises(ValueError, match="unknown scaler 'robust'"):
        make_scaler("robust")


def test_config_scaler_reaches_the_composed_estimator():
    from tkbench.methods._shared.scalers import LogMinMaxScaler

    est = make_estimator(get_family("tk"), "classification", scaler="log_minmax")
    assert isinstance(est.named_steps["scale"], LogMinMaxScaler)
    X, y = _data("classification")
    X = np.abs(X)
    est.set_params(model__C=10.0).fit(X[:100], y[:100])
    assert est.score(X[100:], y[100:]) > 0.6


def test_an_interrupted_cv_resumes_from_its_checkpoint_with_the_same_result(tmp_path, monkeypatch):
    """A CV that keeps its finished folds (tuning of long sweeps) gives, when resumed after any number of folds,
    exactly the uninterrupted result, and refits nothing it had finished."""
    import json

    X, y = _data("classification", 2, n=200)
    family = get_family("svm_rbf")
    est = make_estimator(family, "classification", random_state=0)
    grid = {"C": [-1.0, 1.0, 10.0], "gamma": [0.1, 1.0]}  # (C = -1 fails: fitted again on resume, fails again)
    plain, plain_report = select_params(est, family, grid, X, y, task="classification", k=4, seed=2)
    path = tmp_path / "cv.folds.json"
    full, full_report = select_params(est, family, grid, X, y, task="classification", k=4, seed=2, checkpoint=path)
    same = json.dumps(plain_report["scores"])  # (NaN means of the failing candidate compare as text)
    assert full == plain and json.dumps(full_report["scores"]) == same
    saved = json.loads(path.read_text())
    assert len(saved["folds"]) == 4 and len(saved["folds"][0]) == 6
    for kept in (1, 3):  # as if the sweep had been killed after `kept` folds
        per_fold = len(saved["errors"]) // 4  # (the failing candidates' messages, fold by fold)
        path.write_text(json.dumps({**saved, "folds": saved["folds"][:kept], "errors": saved["errors"][:kept * per_fold]}))
        chosen, report = select_params(est, family, grid, X, y, task="classification", k=4, seed=2,
                                       checkpoint=path)
        assert chosen == plain and json.dumps(report["scores"]) == same
        assert report["failed_candidates"] == plain_report["failed_candidates"]
    # killed within fold 3, after 3 of its 6 candidates (the first two fail: C = -1): resumed at its 4th candidate
    per_fold = len(saved["errors"]) // 4
    path.write_text(json.dumps({**saved, "folds": saved["folds"][:2], "partial": [[v] for v in saved["folds"][2][:3]],
                                "errors": saved["errors"][:3 * per_fold]}))
    chosen, report = select_params(est, family, grid, X, y, task="classification", k=4, seed=2, checkpoint=path)
    assert chosen == plain and json.dumps(report["scores"]) == same
    assert report["failed_candidates"] == plain_report["failed_candidates"]
    assert json.loads(path.read_text())["partial"] == []  # every fold finished
    # all folds finished: nothing is fitted again (a fit would raise)
    broken = make_estimator(family, "classification", random_state=0, params={"kernel": "broken"})
    chosen, _ = select_params(broken, family, grid, X, y, task="classification", k=4, seed=2, checkpoint=path)
    assert chosen == plain
    # a partial fold of 5 candidates: only the 6th is fitted (broken: it fails, and that alone changes the scores)
    path.write_text(json.dumps({**saved, "folds": saved["folds"][:3], "partial": [[v] for v in saved["folds"][3][:5]],
                                "errors": saved["errors"][:4 * per_fold]}))
    _, report = select_params(broken, family, grid, X, y, task="classification", k=4, seed=2, checkpoint=path)
    assert report["failed_candidates"] == plain_report["failed_candidates"] + 1
    assert [r["mean"] for r in report["scores"]][2:5] == [r["mean"] for r in plain_report["scores"]][2:5]
    # killed again right after resuming, before the partial fold's next candidate finished: the partial fold's
    # finished candidates are still in the file (replaying the finished folds used to write them away)
    good = {"C": [1.0, 10.0], "gamma": [0.1, 1.0]}  # (no failing candidate: those are fitted again on resume)
    select_params(est, family, good, X, y, task="classification", k=4, seed=2, checkpoint=path.with_name("g"))
    whole = json.loads(path.with_name("g").read_text())
    resumed = {**whole, "folds": whole["folds"][:3], "partial": [[v] for v in whole["folds"][3][:3]]}
    path.write_text(json.dumps(resumed))
    from sklearn.svm import SVC

    def killed(self, *args, **kwargs):  # the sweep stopped (Ctrl-C, SIGTERM) inside the next fit
        raise KeyboardInterrupt

    monkeypatch.setattr(SVC, "fit", killed)
    with pytest.raises(KeyboardInterrupt):
        select_params(est, family, good, X, y, task="classification", k=4, seed=2, checkpoint=path)
    assert json.loads(path.read_text())["partial"] == resumed["partial"]


def test_a_resumed_cv_fits_its_earlier_failures_again_and_a_failed_cv_leaves_no_checkpoint(tmp_path):
    """A failure is never kept (as a failed run is never done): the kernel benchmark's pilot had cached the NaN
    scores of a bug of the MKLpy adapter in a shared CV's checkpoint, and the fixed code, resumed, failed the cell
    again from the stored NaNs. Resumed, a CV fits again exactly the candidates that failed before (fixed: the
    uninterrupted result; still failing: NaN again) and reuses the rest; a CV whose every candidate failed removes
    its checkpoint, so that a re-run starts afresh."""
    import json

    X, y = _data("classification", 2, n=200)
    family = get_family("svm_rbf")
    est = make_estimator(family, "classification", random_state=0)
    grid = {"C": [1.0, 10.0], "gamma": [0.1, 1.0]}
    path = tmp_path / "cv.folds.json"
    plain, plain_report = select_params(est, family, grid, X, y, task="classification", k=3, seed=2)
    select_params(est, family, grid, X, y, task="classification", k=3, seed=2, checkpoint=path)
    saved = json.loads(path.read_text())
    # an earlier session in which candidate 0 failed in folds 0 and 1, killed after 2 candidates of fold 2
    folds = [list(f) for f in saved["folds"]]
    folds[0][0] = folds[1][0] = None
    stale = {**saved, "folds": folds[:2], "partial": [[v] for v in saved["folds"][2][:2]],
             "errors": ["{'C': 1.0, 'gamma': 0.1}: ValueError: Input X contains NaN."] * 2}
    path.write_text(json.dumps(stale))
    broken = make_estimator(family, "classification", random_state=0, params={"kernel": "broken"})
    _, report = select_params(broken, family, grid, X, y, task="classification", k=3, seed=2, checkpoint=path)
    # still failing: only the two failed fits and fold 2's last two candidates were attempted (all raise)
    assert report["failed_candidates"] == 4
    assert [r["mean"] for r in report["scores"]][1] == [r["mean"] for r in plain_report["scores"]][1]
    path.write_text(json.dumps(stale))
    chosen, report = select_params(est, family, grid, X, y, task="classification", k=3, seed=2, checkpoint=path)
    assert chosen == plain and report["scores"] == plain_report["scores"] and report["failed_candidates"] == 0
    assert report["errors"] == []
    assert json.loads(path.read_text())["errors"] == []
    with pytest.raises(RuntimeError, match="every CV candidate failed"):
        select_params(broken, family, grid, X, y, task="classification", k=3, seed=2, checkpoint=path.with_name("x"))
    assert not path.with_name("x").exists()


@pytest.mark.parametrize("family, params", [
    ("tk", {}), ("simplemkl", {}), ("nkrr", {}), ("sikl", {"T1": 3, "T3": 20}),
    ("hgk", {"L": 1, "M": 1, "N1": 2, "N2": 2, "N3": 1}), ("svm_rbf", {}), ("random_forest", {"n_estimators": 5}),
    ("neural_net", {"max_iter": 20}), ("krr_rbf", {}),
])
def test_every_family_reports_its_solver_in_one_format(family, params):
    """Issue 49: one solver report (tkbench.methods._shared.report) for every family: the same standard fields."""
    import warnings

    import numpy as np

    from tkbench.methods import get_family, make_estimator
    from tkbench.methods._shared.report import STANDARD
    from tkbench.methods.compose import fitted_model

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=60) > 0, 1, 0)
    fam = get_family(family)
    est = make_estimator(fam, "classification", solver=fam.default_solver, params=params, scaler=fam.scaler,
                         target_scaler="none", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    d = fam.diagnostics(fitted_model(est))
    assert list(d)[:len(STANDARD)] == list(STANDARD)
    assert isinstance(d["solver"], str) and d["solver"] and isinstance(d["stop_rule"], str) and d["stop_rule"]
    assert d["iterations"] is None or (isinstance(d["iterations"], int) and d["iterations"] >= 0)
    assert d["converged"] in (None, True, False) and isinstance(d["certificate"], dict)
