"""The ARD Gaussian-process baseline (gp_ard, issue 51): one length scale per feature by marginal likelihood."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

from tkbench.methods.baselines.gp import ARDGaussianProcessClassifier, ARDGaussianProcessRegressor

RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, (150, 4))
Y = np.sin(3 * X[:, 0]) + 0.05 * RNG.normal(size=150)


def test_the_regressor_switches_off_the_features_that_do_not_matter_and_is_sklearns_gp():
    model = ARDGaussianProcessRegressor(n_restarts_optimizer=0).fit(X, Y)
    scales = model.length_scales()[0]
    assert scales[0] < 2 and np.all(scales[1:] > 20 * scales[0]), scales
    # an independent computation: scikit-learn's GP with the same kernel, bounds and optimiser gives the same fit
    kernel = ConstantKernel(1.0, (1e-3, 1e3)) * RBF(np.ones(4), (1e-2, 1e3)) + WhiteKernel(1e-2, (1e-6, 10.0))
    direct = GaussianProcessRegressor(kernel, normalize_y=True, random_state=0).fit(X, Y)
    np.testing.assert_allclose(model.predict(X[:20]), direct.predict(X[:20]), rtol=1e-8, atol=1e-10)
    report = model.diagnostics()
    assert report["log_marginal_likelihood"] == pytest.approx(direct.log_marginal_likelihood_value_)
    assert report["features_off"] >= 2


def test_the_classifier_learns_a_one_feature_boundary_and_reports_per_class_scales():
    labels = np.digitize(X[:, 0], [-0.3, 0.4])  # three classes along feature 0
    model = ARDGaussianProcessClassifier(n_restarts_optimizer=0).fit(X[:90], labels[:90])
    assert model.score(X[90:], labels[90:]) > 0.8
    assert model.length_scales().shape == (3, 4)  # one-vs-rest: one GP per class
    assert model.predict_proba(X[:5]).shape == (5, 3)


@pytest.mark.parametrize("bad", [(1.0,), (0.0, 1.0), (5.0, 1.0), ("a", 2.0)])
def test_bad_bounds_are_refused_with_the_parameter_named(bad):
    with pytest.raises(ValueError, match="length_scale_bounds"):
        ARDGaussianProcessRegressor(length_scale_bounds=bad).fit(X, Y)


def test_the_family_runs_in_a_config_beside_the_svm(write_config, tmp_path):
    from tkbench.bench.runner import run_experiment
    from tkbench.bench.store import ResultStore
    from tkbench.config import load_config

    cfg = {"name": "gp", "kind": "accuracy", "protocol": {"splits": 2, "seed": 3, "cv_folds": 2, "subsample": 120},
           "datasets": ["airfoil"], "methods": [{"name": "GP", "family": "gp_ard",
                                                 "params": {"n_restarts_optimizer": 0}},
                                                {"name": "SVR", "family": "svm_rbf", "grid": {"C": [10.0]}}]}
    exp = load_config(write_config(cfg))
    run_experiment(exp, out_dir=tmp_path / "out", progress=False)
    rows = ResultStore(tmp_path / "out").rows()
    gp = [r for r in rows if r["method"] == "GP"]
    assert len(gp) == 2 and all(r["status"] == "ok" for r in gp)
    assert all(len(r["diagnostics"]["length_scales"][0]) == 5 for r in gp)
