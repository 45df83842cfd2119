"""The peers' adapters (issue 51), each against the peer's own example run directly. Skipped cleanly without
the optional extra (pip install -e '.[peers]')."""
from __future__ import annotations

import math
import os

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler

from tkbench.errors import MissingDependencyError
from tkbench.methods import get_family
from tkbench.methods.peers.imports import available, need


def _needs(*modules: str):
    """Skip without the extra; but where it must be there (``make peers-check``, CI: TKBENCH_REQUIRE_PEERS=1) a
    missing peer is a failure, so that CI cannot pass by skipping every adapter test."""
    if os.environ.get("TKBENCH_REQUIRE_PEERS") == "1":
        return pytest.mark.usefixtures()
    return pytest.mark.skipif(not available(*modules), reason=f"the peers extra ({', '.join(modules)}) is absent")


mklpy = _needs("torch", "MKLpy", "cvxopt")
liquid = _needs("liquidSVM")
gpyt = _needs("torch", "gpytorch")


def test_a_missing_peer_is_a_clear_error_naming_the_extra():
    with pytest.raises(MissingDependencyError, match=r"needs nopackage.*pip install -e '\.\[peers\]'"):
        need("nopackage_for_tkbench_tests", "nopackage")


@mklpy
def test_easymkl_is_mklpys_own_example():
    """MKLpy's README example: breast cancer rescaled to [0, 1] and row-normalised, homogeneous polynomial kernels
    of degrees 1..10, EasyMKL(lam=0.1); the adapter (given the same rescaled rows) predicts exactly as it."""
    torch = need("torch", "torch")
    from MKLpy.algorithms import EasyMKL
    from MKLpy.metrics import pairwise
    from MKLpy.preprocessing import normalization

    from tkbench.methods.peers.mklpy import MKLpyClassifier

    X, y = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=42)
    scaler = MinMaxScaler().fit(Xtr)
    Atr, Ate = normalization(torch.tensor(scaler.transform(Xtr))), normalization(torch.tensor(scaler.transform(Xte)))
    KLtr = [pairwise.homogeneous_polynomial_kernel(Atr, degree=d) for d in range(1, 11)]
    KLte = [pairwise.homogeneous_polynomial_kernel(Ate, Atr, degree=d) for d in range(1, 11)]
    direct = EasyMKL(lam=0.1).fit(KLtr, torch.tensor(ytr))
    expected = np.asarray(direct.predict(KLte))
    model = MKLpyClassifier(algorithm="easymkl", lam=0.1).fit(scaler.transform(Xtr), ytr)
    got = model.predict(scaler.transform(Xte))
    np.testing.assert_array_equal(got, expected)
    assert np.mean(got == yte) > 0.9
    w = model.weights_
    assert w.shape == (10,) and w.sum() == pytest.approx(1.0) and np.all(w >= 0)
    np.testing.assert_allclose(w, np.asarray(direct.solution.weights), rtol=1e-10)
    assert model.diagnostics()["solver"].startswith("MKLpy 0.6 EasyMKL")


@mklpy
@pytest.mark.parametrize("algorithm", ["average", "gram"])
def test_the_other_mklpy_algorithms_learn_a_multiclass_problem(algorithm):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(90, 3))
    y = np.digitize(X[:, 0] + 0.1 * rng.normal(size=90), [0.35, 0.65])  # three classes along feature 0
    fam = get_family("mklpy")
    model = fam.build("classification", algorithm, {"kernels": "rbf", "max_iter": 5}, 0).fit(X[:60], y[:60])
    assert set(model.predict(X[60:])) <= {0, 1, 2}
    assert np.mean(model.predict(X[60:]) == y[60:]) > 0.6


@mklpy
def test_gram_on_classes_without_a_margin_fails_saying_why():
    """Random labels: no hard margin between the classes. MKLpy's GRAM overflows its weights and cvxopt raises a
    bare "domain error" (its own; Liver and Pima fail so on every split): the adapter says why, and the same
    kernels run with AverageMKL; separable classes run with GRAM."""
    from tkbench.methods.peers.mklpy import MKLpyClassifier

    rng = np.random.default_rng(0)
    X, noise = rng.uniform(size=(120, 3)), rng.integers(0, 2, 120)
    with pytest.raises(ValueError, match=r"no usable hard margin .*margin 0\.0.*GRAM needs classes separable") as info:
        MKLpyClassifier(algorithm="gram", max_iter=5).fit(X, noise)
    assert "domain error" in str(info.value.__cause__)  # the peer's own error, chained
    assert MKLpyClassifier(algorithm="average").fit(X, noise).score(X, noise) > 0.5
    apart = X.copy()  # two classes far apart: GRAM runs
    separable = (X[:, 0] > 0.5).astype(int)
    apart[:, 0] = np.where(separable == 1, 0.8, 0.05) + 0.1 * X[:, 0]
    assert MKLpyClassifier(algorithm="gram", max_iter=5).fit(apart, separable).score(apart, separable) > 0.9


@mklpy
@pytest.mark.parametrize("algorithm", ["easymkl", "average"])
def test_mklpy_rows_at_the_minimum_of_every_feature_do_not_become_nan(algorithm):
    """Min-max scaling maps a row at every feature's minimum to zero (the original breast cancer has 4), and
    MKLpy's row normalisation divides it by its zero norm: NaN, and every EasyMKL and GRAM run on that set failed.
    The adapter keeps such rows zero and normalises the others exactly as MKLpy does. (GRAM itself can still fail
    on many zero rows: its radius-margin steps overflow, then cvxopt's "domain error", as on Liver without any.)"""
    torch = need("torch", "torch")
    from MKLpy.preprocessing import normalization

    from tkbench.methods.peers.mklpy import MKLpyClassifier

    rng = np.random.default_rng(3)
    X = rng.uniform(size=(80, 4))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    X[::10] = 0.0  # 8 zero rows
    assert torch.isnan(normalization(torch.tensor(X))).any()  # the peer's own normalisation
    model = MKLpyClassifier(algorithm=algorithm, C=10.0, max_iter=5).fit(X[:60], y[:60])
    rows = model._rows(X).numpy()
    assert np.all(rows[::10] == 0) and np.isfinite(rows).all()
    keep = np.any(X != 0, axis=1)
    np.testing.assert_allclose(rows[keep], normalization(torch.tensor(X[keep])).numpy())
    assert np.mean(model.predict(X[60:]) == y[60:]) >= 0.6


@liquid
def test_liquidsvm_is_its_own_iris_example():
    """liquidSVM's docstring example (mcSVM on iris, tested on iris) run directly and through the adapter:
    the same predictions (same folds: the same random_seed)."""
    liquid_svm = need("liquidSVM", "liquidSVM")
    from tkbench.methods.peers.liquidsvm import LiquidSVMClassifier

    direct = liquid_svm.mcSVM(liquid_svm.iris, liquid_svm.iris_labs, display=0, threads=1, random_seed=0)
    expected = direct.predict(liquid_svm.iris)
    model = LiquidSVMClassifier(random_state=0).fit(liquid_svm.iris, liquid_svm.iris_labs.astype(int))
    np.testing.assert_array_equal(model.predict(liquid_svm.iris), expected.astype(int))
    assert np.mean(model.predict(liquid_svm.iris) == liquid_svm.iris_labs) > 0.9
    assert model.diagnostics()["solver"] == "liquidSVM 1.0.1 mcSVM"
    with pytest.raises(TypeError, match="cannot be pickled"):
        import pickle
        pickle.dumps(model)


@liquid
def test_liquidsvm_binary_classification_predicts_what_liquidsvm_tests():
    """A binary mcSVM: liquidSVM's own ``predict`` hands its ``test`` all-zero labels, which a binary model refuses
    ("labels of train and test file do not match"; every Liver run of the CI smoke failed so). The adapter's
    predictions equal the ones liquidSVM's ``test`` gives with the true labels, and its accuracy is an SVM's."""
    liquid_svm = need("liquidSVM", "liquidSVM")
    from tkbench.methods.peers.liquidsvm import LiquidSVMClassifier

    X, y = load_breast_cancer(return_X_y=True)
    X = MinMaxScaler().fit(X[:400]).transform(X)
    with pytest.raises(Exception, match="testing"):  # the peer's own predict, on its own binary model
        liquid_svm.mcSVM(X[:400], y[:400] + 1.0, display=0, threads=1, random_seed=0).predict(X[400:])
    model = LiquidSVMClassifier(random_state=0).fit(X[:400], y[:400])
    direct = liquid_svm.mcSVM(X[:400], y[:400] + 1.0, display=0, threads=1, random_seed=0)
    expected = direct.test(X[400:], y[400:] + 1.0)[0][:, direct.predictCols] - 1
    np.testing.assert_array_equal(model.predict(X[400:]), expected.astype(int))
    assert np.mean(model.predict(X[400:]) == y[400:]) > 0.9


@liquid
def test_liquidsvm_takes_any_split_seed():
    """liquidSVM reads its random_seed as a C int and fails to train from 2**31 on (two of three CI smoke splits
    did, "problems with command args"): the adapter passes the seed modulo 2**31, so a large seed trains, and as
    that residue does."""
    from tkbench.methods.peers.liquidsvm import LiquidSVMClassifier

    X, y = load_breast_cancer(return_X_y=True)
    X = MinMaxScaler().fit_transform(X)
    large = LiquidSVMClassifier(random_state=3_858_890_576).fit(X[:300], y[:300])
    small = LiquidSVMClassifier(random_state=3_858_890_576 - 2**31).fit(X[:300], y[:300])
    np.testing.assert_array_equal(large.predict(X[300:]), small.predict(X[300:]))


@liquid
def test_liquidsvm_least_squares_regression_fits_a_smooth_function():
    from tkbench.methods.peers.liquidsvm import LiquidSVMRegressor

    rng = np.random.default_rng(1)
    X = rng.uniform(size=(300, 2))
    y = np.sin(3 * X[:, 0]) + 0.05 * rng.normal(size=300)
    model = LiquidSVMRegressor().fit(X[:200], y[:200])
    mse = float(np.mean((model.predict(X[200:]) - y[200:]) ** 2))
    assert mse < 0.01, mse  # the noise variance is 0.0025; predicting the mean would give about 0.5


@gpyt
@pytest.mark.parametrize("dtype,rtol", [("float32", 1e-4), ("float64", 1e-8)])
def test_the_spectral_mixture_gp_is_gpytorchs_tutorial(dtype, rtol):
    """GPyTorch's spectral mixture tutorial (15 points of sin(2 pi x) on [0, 1], 4 mixtures, Adam lr 0.1, 100
    steps), written out directly with the same seed, in the tutorial's precision (torch's default, single: the
    adapter's default) and in double, and through the adapter with one start: the same posterior mean; the fit
    extrapolates the periodic signal to [1, 2]."""
    torch = need("torch", "torch")
    gpytorch = need("gpytorch", "gpytorch")
    from tkbench.methods.peers.gpytorch_sm import SpectralMixtureGPRegressor

    precision = getattr(torch, dtype)
    train_x = torch.linspace(0, 1, 15, dtype=precision)
    train_y = torch.sin(train_x * (2 * math.pi))

    class Tutorial(gpytorch.models.ExactGP):
        def __init__(self, x, y, likelihood):
            super().__init__(x, y, likelihood)
            self.mean_module = gpytorch.means.ConstantMean()
            self.covar_module = gpytorch.kernels.SpectralMixtureKernel(num_mixtures=4, ard_num_dims=1)
            self.covar_module.initialize_from_data(x, y)

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))

    torch.manual_seed(0)
    x2 = train_x.unsqueeze(-1)
    likelihood = gpytorch.likelihoods.GaussianLikelihood().to(precision)
    model = Tutorial(x2, train_y, likelihood).to(precision)
    model.train(), likelihood.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
    for _ in range(100):
        optimizer.zero_grad()
        loss = -mll(model(x2), train_y)
        loss.backward()
        optimizer.step()
    model.eval(), likelihood.eval()
    test_x = torch.linspace(0, 2, 41, dtype=precision).unsqueeze(-1)
    with torch.no_grad():
        expected = likelihood(model(test_x)).mean.numpy()
    kw = {} if dtype == "float32" else {"dtype": dtype}  # single precision is the default
    ours = SpectralMixtureGPRegressor(n_restarts=1, random_state=0, init="data", **kw).fit(x2.numpy(),
                                                                                           train_y.numpy())
    assert ours.diagnostics()["dtype"] == dtype and ours.diagnostics()["init"] == "data"
    np.testing.assert_allclose(ours.predict(test_x.numpy()), expected, rtol=rtol, atol=rtol / 100)
    truth = np.sin(2 * math.pi * test_x.numpy()[:, 0])
    assert np.mean((ours.predict(test_x.numpy()) - truth) ** 2) < 0.05
    report = ours.diagnostics()
    assert report["solver"].startswith("GPyTorch 1.15") and len(report["start_losses"]) == 1


@gpyt
def test_the_spectral_mixture_gp_starts_at_low_frequencies_and_learns_where_the_tutorials_start_does_not():
    """On continuous features in several dimensions the tutorial's initialize_from_data starts the frequencies at
    up to 0.5 / (the smallest gap between two values), the kernel is white noise and the fit explains nothing (the
    benchmark's first CCPP and cpusmall rows: test MSE at the target's variance). The default start, below
    1 / range per feature, learns; its marginal likelihood is better too, so restarts would choose it."""
    from tkbench.methods.peers.gpytorch_sm import SpectralMixtureGPRegressor

    rng = np.random.default_rng(3)
    X = rng.uniform(-1.7, 1.7, size=(240, 3))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.05 * rng.standard_normal(240)
    y = (y - y[:200].mean()) / y[:200].std()
    quick = {"n_restarts": 1, "n_iter": 60, "random_state": 0}
    ours = SpectralMixtureGPRegressor(**quick).fit(X[:200], y[:200])
    tutorial = SpectralMixtureGPRegressor(init="data", **quick).fit(X[:200], y[:200])
    mse = {name: float(np.mean((est.predict(X[200:]) - y[200:]) ** 2)) for name, est in
           (("ours", ours), ("tutorial", tutorial))}
    assert ours.diagnostics()["init"] == "low_frequency"
    assert mse["ours"] < 0.2 * np.var(y[200:]) and mse["tutorial"] > 0.5 * np.var(y[200:]), mse
    assert ours.loss_ < tutorial.loss_ - 0.3, (ours.loss_, tutorial.loss_)


def test_a_sweep_needing_a_missing_extra_stops_before_any_run_and_the_dry_run_says_so(write_config, tmp_path,
                                                                                      monkeypatch):
    """A family whose optional modules do not import (as the peers' without the extra): `run` stops with one
    config error (exit 2) naming the method, the missing distribution and how to install it; nothing is written;
    the dry run says it; the runs of other methods are not held up when the user leaves the method out."""
    import dataclasses

    from rich.console import Console

    from tests.conftest import tiny_config
    from tkbench.bench.runner import run_experiment
    from tkbench.bench.store import ResultStore
    from tkbench.config import load_config
    from tkbench.errors import ConfigError
    from tkbench.methods import registry

    rf = registry.load_families()["random_forest"]
    monkeypatch.setitem(registry.load_families(), "random_forest", dataclasses.replace(
        rf, requires=(("nopackage_for_tkbench_tests", "nopackage"),), install_hint="pip install -e '.[peers]'"))
    cfg = tiny_config(name="peers_missing")
    cfg["methods"] = [{"name": "rf", "family": "random_forest", "grid": {}},
                      {"name": "svm", "family": "svm_rbf", "grid": {}}]
    exp = load_config(write_config(cfg))
    with pytest.raises(ConfigError, match=r"methods\[0\]\.family.*needs nopackage \(pip install -e '\.\[peers\]'\)"
                       ) as err:
        run_experiment(exp, out_dir=tmp_path, progress=False)
    assert err.value.exit_code == 2 and ResultStore(tmp_path).rows() == []
    console = Console(record=True, width=200)
    run_experiment(exp, out_dir=tmp_path, dry_run=True, console=console)
    assert "rf: needs nopackage, not installed (pip install -e '.[peers]'): a run would stop here" in \
        console.export_text()
    outcome = run_experiment(exp, out_dir=tmp_path, only=["*/svm"], progress=False)
    assert outcome.counts["ok"] == len(ResultStore(tmp_path).rows()) > 0
