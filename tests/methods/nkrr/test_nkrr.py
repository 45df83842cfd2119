"""NKRR (paper 001): kernels, gradient (Prop. 1), Propositions 2-3, projections, Algorithm 1, estimators."""
from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge

from tkbench.data import load_dataset
from tkbench.methods.nkrr.combination import combination_kernel, make_base_kernels
from tkbench.methods.nkrr.estimators import KRRClassifier, NKRRClassifier, NKRRRegressor
from tkbench.methods.nkrr.projected_gradient import (
    NKRRObjective,
    initial_point,
    project,
    projected_gradient,
    stationarity,
)

BASES = [("linear_feature", False), ("linear_feature", True), ("gaussian_feature", False), ("library", False)]


def _problem(m=40, n=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (m, n))
    y = np.sign(X[:, 0] - X[:, 1] + 0.3 * X[:, 2] ** 2 - 0.1 + 0.2 * rng.standard_normal(m))
    return X, y


def _kernels(base, constant, X):
    return make_base_kernels(base, X, constant=constant, width=0.7, widths=(0.5, 2.0), degrees=(1, 2))


def _dense(kernels, mu, degree):
    S = sum(mu[k] * kernels.matrix(k) for k in range(kernels.p))
    return S**degree


@pytest.mark.parametrize("base,constant", BASES)
@pytest.mark.parametrize("degree", [1, 2, 3, 4])
def test_gradient_matches_central_differences_and_is_never_positive(base, constant, degree):
    X, y = _problem()
    kernels = _kernels(base, constant, X)
    obj = NKRRObjective(kernels, y, lam=0.5, degree=degree)
    mu = np.random.default_rng(1).uniform(0.2, 1.0, kernels.p)
    value, alpha = obj.value(mu)
    grad = obj.gradient(mu, alpha)
    h = 1e-6
    numeric = np.array([(obj.value(mu + h * e)[0] - obj.value(mu - h * e)[0]) / (2 * h) for e in np.eye(kernels.p)])
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7 * max(1.0, abs(value)))
    assert grad.max() <= 1e-12  # Proposition 1: U_k is PSD, so dF/dmu_k <= 0


@pytest.mark.parametrize("base,constant", BASES)
@pytest.mark.parametrize("degree", [1, 2, 3])
def test_fast_objective_equals_a_dense_solve(base, constant, degree):
    X, y = _problem(m=30)
    kernels = _kernels(base, constant, X)
    mu = np.random.default_rng(2).uniform(0, 1, kernels.p)
    np.testing.assert_allclose(combination_kernel(kernels, mu, degree), _dense(kernels, mu, degree), rtol=1e-10,
                               atol=1e-12)
    value, alpha = NKRRObjective(kernels, y, 0.3, degree).value(mu)
    direct = np.linalg.solve(_dense(kernels, mu, degree) + 0.3 * np.eye(len(y)), y)
    np.testing.assert_allclose(alpha, direct, rtol=1e-8, atol=1e-10)
    assert value == pytest.approx(float(y @ direct), rel=1e-10)


@pytest.mark.parametrize("degree", [2, 3])
def test_hessian_matches_differences_of_the_gradient(degree):
    X, y = _problem(m=25)
    kernels = make_base_kernels("linear_feature", X, constant=True)
    obj = NKRRObjective(kernels, y, 0.7, degree)
    mu = np.array([0.3, 0.5, 0.2, 0.9])
    H = obj.hessian(mu)
    h = 1e-6

    def grad(m):
        return obj.gradient(m, obj.value(m)[1])

    numeric = np.column_stack([(grad(mu + h * e) - grad(mu - h * e)) / (2 * h) for e in np.eye(4)])
    np.testing.assert_allclose(H, numeric, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("degree", [2, 3, 4])
def test_proposition_2_stationary_point_maximises_F(degree):
    """mu = 0 is stationary for d >= 2, with F = ||y||^2 / lambda, the maximum of F; and Euler's identity
    mu^T grad F(mu) = -d alpha^T K_mu alpha (Eq. (13) for degree d)."""
    X, y = _problem()
    lam = 2.0
    obj = NKRRObjective(make_base_kernels("linear_feature", X), y, lam, degree)
    zero = np.zeros(X.shape[1])
    value, alpha = obj.value(zero)
    assert value == pytest.approx(float(y @ y) / lam, rel=1e-12)
    assert np.abs(obj.gradient(zero, alpha)).max() == 0.0
    rng = np.random.default_rng(3)
    for _ in range(5):
        mu = rng.uniform(0, 2, X.shape[1])
        value, alpha = obj.value(mu)
        assert value < float(y @ y) / lam
        K = combination_kernel(obj.kernels, mu, degree)
        assert float(mu @ obj.gradient(mu, alpha)) == pytest.approx(-degree * float(alpha @ K @ alpha), rel=1e-9)


@pytest.mark.parametrize("norm", [1, 2])
@pytest.mark.parametrize("seed", range(4))
def test_projection_equals_cvxpy(norm, seed):
    rng = np.random.default_rng(seed)
    p = 7
    center = np.where(rng.uniform(size=p) < 0.5, 0.0, rng.uniform(0, 1, p))  # some entries of mu0 are 0
    z = center + rng.normal(0, 1.5, p)  # some coordinates negative
    radius = 0.8
    x = cp.Variable(p)
    cp.Problem(cp.Minimize(cp.sum_squares(x - z)), [x >= 0, cp.norm(x - center, norm) <= radius]).solve(
        solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    ours = project(z, center, radius, norm)
    np.testing.assert_allclose(ours, x.value, atol=1e-6)
    assert np.sum((ours - z) ** 2) <= np.sum((x.value - z) ** 2) + 1e-9
    assert ours.min() >= 0 and np.linalg.norm(ours - center, norm) <= radius * (1 + 1e-12)


def test_l2_projection_is_the_papers_normalisation_for_points_outside_the_ball():
    """With grad F <= 0 a step keeps mu >= 0; projecting such a point outside the ball onto M2 is the radial
    rescaling mu0 + Lambda (mu' - mu0) / ||mu' - mu0|| that Algorithm 1 calls "normalize"."""
    rng = np.random.default_rng(5)
    center = rng.uniform(0, 1, 6)
    z = center + rng.uniform(0.5, 2.0, 6)
    radial = center + 0.7 * (z - center) / np.linalg.norm(z - center)
    np.testing.assert_allclose(project(z, center, 0.7, 2), radial, atol=1e-14)


def _learned(degree, norm, seed, lam=0.5, radius=1.0, mu0=None, **kw):
    X, y = _problem(m=50, n=4, seed=seed)
    obj = NKRRObjective(make_base_kernels("linear_feature", X), y, lam, degree)
    center = np.zeros(4) if mu0 is None else mu0
    return obj, center, projected_gradient(obj, norm=norm, mu0=center, radius=radius, tol=1e-9, max_iter=500, **kw)


@pytest.mark.parametrize("norm", [1, 2])
@pytest.mark.parametrize("degree", [1, 2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_proposition_3_the_minimiser_lies_on_the_boundary(norm, degree, seed):
    center = np.full(4, 0.1) if seed == 2 else None
    obj, mu0, res = _learned(degree, norm, seed, mu0=center)
    assert res.converged
    assert np.linalg.norm(res.mu - mu0, norm) == pytest.approx(1.0, rel=1e-9)
    assert res.stationarity < 1e-5  # a KKT point of min over M
    values = [h["objective"] for h in res.history]
    assert all(b <= a + 1e-12 for a, b in zip(values, values[1:], strict=False))  # Armijo: F never increases
    assert values[-1] < values[0]


@pytest.mark.parametrize("norm", [1, 2])
def test_linear_combination_matches_cvxpy(norm):
    """d = 1: F(mu) = y^T (sum mu_k K_k + lambda I)^-1 y is convex (matrix fractional function); Algorithm 1 must
    reach the optimum found by cvxpy."""
    X, y = _problem(m=30, n=4, seed=7)
    lam, radius = 0.5, 1.0
    kernels = make_base_kernels("linear_feature", X)
    obj = NKRRObjective(kernels, y, lam, 1)
    res = projected_gradient(obj, norm=norm, mu0=np.zeros(4), radius=radius, tol=1e-10, max_iter=1000)
    mu = cp.Variable(4)
    K = sum(mu[k] * kernels.matrix(k) for k in range(4)) + lam * np.eye(len(y))
    prob = cp.Problem(cp.Minimize(cp.matrix_frac(y, K)), [mu >= 0, cp.norm(mu, norm) <= radius])
    prob.solve(solver=cp.CLARABEL)
    assert res.value == pytest.approx(prob.value, rel=1e-6)
    np.testing.assert_allclose(res.mu, mu.value, atol=2e-3)


def test_fixed_step_algorithm_1_converges_to_the_same_point():
    obj, _, armijo = _learned(2, 2, 0)
    obj2, _, fixed = _learned(2, 2, 0, eta=0.05, line_search=False)
    assert fixed.converged and fixed.n_iter > armijo.n_iter
    np.testing.assert_allclose(fixed.mu, armijo.mu, atol=1e-5)
    assert all(h["step"] == 0.05 for h in fixed.history[1:])


def test_radius_zero_keeps_mu0_and_initial_point_is_on_the_boundary():
    obj, center, res = _learned(2, 2, 0, radius=0.0, mu0=np.full(4, 0.3))
    np.testing.assert_array_equal(res.mu, np.full(4, 0.3))
    for norm in (1, 2):
        start = initial_point(np.zeros(5), 2.0, norm)
        assert np.linalg.norm(start, norm) == pytest.approx(2.0) and np.ptp(start) == 0
    assert stationarity(np.ones(3), np.zeros(3), np.zeros(3), 1.0, 2) == 0.0


def _sonar2():
    ds = load_dataset("sonar")
    X = ds.X[:, :2]
    return (X - X.min(0)) / (X.max(0) - X.min(0)), ds.y.astype(float)


def test_figure_1_concave_near_zero_for_large_lambda_convex_on_the_boundary_for_small():
    """Paper 001 Figure 1 (two linear base kernels from Sonar's first two features, degree 2): for lambda = 100, F
    has concave regions near mu = 0 (a negative Hessian eigenvalue); for lambda = 1 the Hessian is PSD on the arc
    ||mu|| = 1 (Proposition 4's condition holds there), so Algorithm 1 finds the global minimum over M2."""
    X, y = _sonar2()
    kernels = make_base_kernels("linear_feature", X)
    near_zero = NKRRObjective(kernels, y, 100.0, 2)
    assert np.linalg.eigvalsh(near_zero.hessian(np.array([0.1, 0.1])))[0] < 0
    obj = NKRRObjective(kernels, y, 1.0, 2)
    angles = np.linspace(0, np.pi / 2, 61)
    arc = np.column_stack([np.cos(angles), np.sin(angles)])
    assert min(np.linalg.eigvalsh(obj.hessian(mu))[0] for mu in arc[::6]) >= 0
    best = min(obj.value(mu)[0] for mu in arc)
    res = projected_gradient(obj, norm=2, mu0=np.zeros(2), radius=1.0, tol=1e-10, max_iter=200)
    assert res.value <= best + 1e-9
    assert np.linalg.norm(res.mu) == pytest.approx(1.0)


def test_degree_1_fixed_mu_predictor_equals_kernel_ridge():
    X, y = _problem(m=60, n=3, seed=4)
    reg = NKRRRegressor(degree=1, solver="fixed", Lambda=1.5, lam=0.4, mu0=0.0, constant=False).fit(X, y)
    mu = reg.mu_
    np.testing.assert_allclose(mu, np.full(3, 1.5 / np.sqrt(3)))
    krr = KernelRidge(alpha=0.4, kernel="precomputed").fit((X * mu) @ X.T, y)
    Xt = np.random.default_rng(0).uniform(0, 1, (20, 3))
    np.testing.assert_allclose(reg.predict(Xt), krr.predict((Xt * mu) @ X.T), rtol=1e-9, atol=1e-10)


def test_classifier_learns_and_reports():
    X, y = _problem(m=120, n=3, seed=9)
    clf = NKRRClassifier(degree=2, lam=0.1, Lambda=2.0, mu0="uniform", constant=True).fit(X, y)
    assert clf.score(X, y) > 0.8
    assert clf.converged_ and isinstance(clf.n_iter_, int) and clf.n_iter_ >= 1
    assert clf.objective_history_[-1] < clf.objective_history_[0]
    assert clf.kernel_names_[0] == "constant" and len(clf.mu_) == 4
    assert NKRRClassifier().get_params()["constant"]  # default: an inhomogeneous combination
    d = clf.diagnostics()
    assert d["mu_norm"] == pytest.approx(2.0, rel=1e-6) and d["iterations"] == clf.n_iter_
    three = np.digitize(X[:, 0], [0.33, 0.66])  # one-vs-rest: one mu per class
    multi = NKRRClassifier(degree=2, lam=0.1, constant=False).fit(X, three)
    assert multi.mu_.shape == (3, 3) and set(multi.predict(X)) <= {0, 1, 2}


@pytest.mark.parametrize("est", [NKRRClassifier(max_iter=5), NKRRRegressor(max_iter=5),
                                 NKRRRegressor(base="gaussian_feature", degree=1, max_iter=3), KRRClassifier()],
                         ids=["classifier", "regressor", "gaussian", "krr"])
def test_scikit_learn_estimator_checks(est):
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(est, on_fail=None)
    assert not [(r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"]
    assert {r["check_name"] for r in results if r["status"] == "skipped"} <= {"check_array_api_input"}


def test_bad_parameters_are_clear_errors():
    X, y = _problem(m=20)
    for kw, text in [({"degree": 5}, "degree"), ({"norm": 3}, "norm"), ({"lam": 0}, "lam"),
                     ({"mu0": [1.0]}, "mu0"), ({"mu0": "ones"}, "mu0"), ({"base": "rbf"}, "base")]:
        with pytest.raises(ValueError, match=text):
            NKRRRegressor(**kw).fit(X, y)


def test_nkrr_family_runs_from_a_config(write_config, tmp_path):
    from tests.conftest import tiny_config
    from tkbench.bench.runner import run_experiment
    from tkbench.bench.store import ResultStore
    from tkbench.config import load_config

    cfg = tiny_config()
    cfg["protocol"]["splits"] = 1
    cfg["datasets"] = ["sonar", {"name": "airfoil", "subsample": 200}]
    cfg["methods"] = [
        {"name": "uniform", "family": "nkrr", "solver": "fixed", "params": {"degree": 1}, "grid": {"lam": [0.1, 1]}},
        {"name": "nkrr2", "family": "nkrr", "params": {"degree": 2, "constant": True},
         "grid": {"lam": [0.1, 1], "Lambda": [1, 2]}},
        {"name": "krr", "family": "krr_rbf", "grid": {"alpha": [0.1], "gamma": [0.1]}},
    ]
    outcome = run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, progress=False)
    assert outcome.counts == {"ok": 6}
    rows = {(r["dataset"], r["method"]): r for r in ResultStore(tmp_path).rows()}
    assert rows[("sonar", "nkrr2")]["diagnostics"]["iterations"] >= 1
    assert set(rows[("sonar", "nkrr2")]["chosen_params"]) == {"lam", "Lambda"}
    assert rows[("airfoil", "nkrr2")]["mse"] < rows[("airfoil", "uniform")]["mse"] * 1.5


def test_top_level_exports():
    import tkbench

    for name in ("NKRRClassifier", "NKRRRegressor", "KRRClassifier", "TKClassifier", "SimpleMKLRegressor"):
        assert isinstance(getattr(tkbench, name), type)


def test_landscape_experiment_runs_and_reports(write_config, tmp_path):
    """kind 'landscape' (paper 001 Figure 1): F over a grid of two kernel weights, its bound, the concave share."""
    from tkbench.bench.runner import run_experiment
    from tkbench.bench.store import ResultStore
    from tkbench.config import load_config
    from tkbench.report.build import build_report

    cfg = {"name": "land", "kind": "landscape", "landscape": {"points": 5}, "protocol": {"splits": 1},
           "datasets": [{"name": "sonar", "features": [0, 1]}],
           "methods": [{"name": f"lam{lam}", "family": "nkrr",
                        "params": {"degree": 2, "constant": False, "lam": lam}} for lam in (1.0, 100.0)]}
    outcome = run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, progress=False)
    assert outcome.counts == {"ok": 2}
    rows = {r["method"]: r for r in ResultStore(tmp_path).rows()}
    for lam, row in ((1.0, rows["lam1.0"]), (100.0, rows["lam100.0"])):
        values = np.array(row["landscape"]["values"])
        assert values.shape == (5, 5) and values[0, 0] == pytest.approx(208.0 / lam)  # F(0) = ||y||^2 / lambda
        assert row["objective_max"] <= 208.0 / lam + 1e-9 and row["argmin"] == [1.0, 1.0]
    assert rows["lam100.0"]["concave_fraction"] > rows["lam1.0"]["concave_fraction"]
    files = build_report(tmp_path, formats=["md"])
    assert any(p.name == "landscape_sonar.png" for p in files)
    assert "negative Hessian eigenvalue" in (tmp_path / "report" / "report.md").read_text()


def test_landscape_config_errors(write_config):
    from tkbench.config import load_config
    from tkbench.errors import ConfigError

    base = {"name": "land", "kind": "landscape", "datasets": [{"name": "sonar", "features": [0, 1]}]}
    for methods, where in [([{"name": "rf", "family": "random_forest"}], "methods[0].family"),
                           ([{"name": "n", "family": "nkrr", "grid": {"lam": [1.0]}}], "methods[0].grid")]:
        with pytest.raises(ConfigError, match=where.replace("[", r"\[").replace("]", r"\]")):
            load_config(write_config({**base, "methods": methods}))
    with pytest.raises(ConfigError, match="features"):
        load_config(write_config({**base, "datasets": [{"name": "sonar", "features": [-1]}],
                                  "methods": [{"name": "n", "family": "nkrr"}]}))
    with pytest.raises(ConfigError, match="landscape"):
        load_config(write_config({**base, "kind": "accuracy", "landscape": {"points": 5},
                                  "methods": [{"name": "n", "family": "nkrr"}]}))


@pytest.mark.parametrize("base", ["linear_feature", "gaussian_feature"])
def test_memory_is_o_m2_not_o_p_m2(base):
    """A fit with p = 150 base kernels on m = 300 rows allocates a few m x m matrices, never p of them
    (p m^2 doubles would be 108 MB; numpy's allocations are traced by tracemalloc)."""
    import tracemalloc

    rng = np.random.default_rng(0)
    m, p = 300, 150
    X, y = rng.uniform(0, 1, (m, p)), rng.standard_normal(m)
    NKRRRegressor(base=base, degree=2, max_iter=2).fit(X[:20], y[:20])  # compile numba outside the trace
    tracemalloc.start()
    NKRRRegressor(base=base, degree=2, max_iter=5).fit(X, y)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 8 * m * m * 8, f"peak {peak / 2**20:.1f} MB"  # at most 8 m x m matrices (p m^2: 150 of them)


@pytest.mark.parametrize("solve,base,constant", [("pcg", "linear_feature", True), ("pcg", "gaussian_feature", False),
                                                 ("pcg", "library", False), ("feature_map", "linear_feature", True),
                                                 ("feature_map", "linear_feature", False)])
@pytest.mark.parametrize("degree", [1, 2, 3])
def test_every_ridge_solve_gives_the_dense_solution_along_a_path(solve, base, constant, degree):
    """Issue 50's faster solves against numpy's dense solve, at each point of a path of mu (PCG is preconditioned
    by an earlier point's factor), with gradients equal to the Cholesky objective's and a certified F."""
    X, y = _problem(m=60)
    kernels = _kernels(base, constant, X)
    obj = NKRRObjective(kernels, y, 0.3, degree, solve=solve)
    ref = NKRRObjective(kernels, y, 0.3, degree, solve="cholesky")
    assert obj.solve == solve
    rng = np.random.default_rng(3)
    mu = rng.uniform(0.2, 1.0, kernels.p)
    for _ in range(5):
        mu = np.abs(mu + 0.05 * rng.standard_normal(kernels.p))
        value, alpha = obj.value(mu)
        direct = np.linalg.solve(_dense(kernels, mu, degree) + 0.3 * np.eye(len(y)), y)
        np.testing.assert_allclose(alpha, direct, rtol=1e-7, atol=1e-9)
        assert value == pytest.approx(float(y @ direct), rel=1e-11)
        np.testing.assert_allclose(obj.gradient(mu, alpha), ref.gradient(mu, ref.value(mu)[1]), rtol=1e-8,
                                   atol=1e-10)
    assert obj.certified_error <= 1e-13 * abs(value)
    if solve == "pcg":  # one factorisation, the later points by CG
        assert obj.n_factorisations == 1 and obj.n_cg > 0


def test_pcg_falls_back_to_a_factorisation_when_cg_is_capped():
    X, y = _problem(m=60)
    kernels = _kernels("gaussian_feature", False, X)
    obj = NKRRObjective(kernels, y, 0.3, 2, solve="pcg", max_cg=0)
    for t in (0.5, 0.9):
        value, alpha = obj.value(np.full(kernels.p, t))
        direct = np.linalg.solve(_dense(kernels, np.full(kernels.p, t), 2) + 0.3 * np.eye(len(y)), y)
        assert value == pytest.approx(float(y @ direct), rel=1e-11)
    assert obj.n_factorisations == 2 and obj.n_cg == 0


def test_auto_takes_the_feature_map_only_when_it_is_small():
    """"auto": the feature map when D <= 0.7 m, else CG from 1000 rows and one factorisation per step below (the
    measured thresholds of docs/methods/nkrr.md)."""
    from tkbench.methods.nkrr.projected_gradient import auto_solve

    X, y = _problem(m=60, n=4)
    assert NKRRObjective(_kernels("linear_feature", True, X), y, 0.3, 2).solve == "feature_map"  # D = 15 <= 42
    assert NKRRObjective(_kernels("linear_feature", True, X), y, 0.3, 4).solve == "cholesky"  # D = 70 > 42, m < 1000
    assert NKRRObjective(_kernels("gaussian_feature", False, X), y, 0.3, 2).solve == "cholesky"
    with pytest.raises(ValueError, match="rank-1"):
        NKRRObjective(_kernels("library", False, X), y, 0.3, 2, solve="feature_map")
    # cortes2009_uci's 5-fold CV on 1200 rows (960 per fold), 8 features and the constant: D = 495 at degree 4,
    # where the old rule (D <= m / 2) took CG, 1.8-2.2x slower than the feature map there
    assert auto_solve(960, 9, 4) == "feature_map" and auto_solve(708, 9, 4) == "feature_map"
    assert auto_solve(707, 9, 4) == "cholesky" and auto_solve(2000, 61, 2) == "pcg"  # D = 495 > 494.9; 1891 > 1400
    assert auto_solve(999, None, 2) == "cholesky" and auto_solve(1000, None, 2) == "pcg"


@pytest.mark.parametrize("ridge_solve", ["pcg", "feature_map"])
def test_fits_with_each_ridge_solve_equal_the_cholesky_fit(ridge_solve):
    """The whole projected-gradient fit: the same weights, objective and predictions as one factorisation per step."""
    X, y = _problem(m=200, n=5, seed=4)
    fits = {s: NKRRRegressor(degree=2, lam=0.1, Lambda=2.0, tol=1e-4, ridge_solve=s).fit(X, y)
            for s in ("cholesky", ridge_solve)}
    a, b = fits["cholesky"], fits[ridge_solve]
    assert a.n_iter_ == b.n_iter_ >= 2
    np.testing.assert_allclose(b.mu_, a.mu_, rtol=1e-7, atol=1e-9)
    assert b.objective_[0] == pytest.approx(a.objective_[0], rel=1e-10)
    np.testing.assert_allclose(b.predict(X[:20]), a.predict(X[:20]), rtol=1e-7, atol=1e-9)
    assert b.diagnostics()["n_factorisations"] < a.diagnostics()["n_factorisations"] or ridge_solve == "feature_map"


@pytest.mark.parametrize("base", ["gaussian_feature", "library"])
def test_a_runs_thread_budget_reaches_the_compiled_base_kernels(base):
    """The family's warm-up gives NKRR's numba parallel loops the run's thread budget (threadpoolctl, which bounds
    BLAS, does not reach them): a fit with the Gaussian or library bases then runs them on that many threads; before
    any warm-up a fit leaves numba's own setting alone."""
    numba = pytest.importorskip("numba")
    from tkbench.methods import get_family
    from tkbench.methods.nkrr import combination

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread here")
    before, budget = numba.get_num_threads(), combination._THREADS["budget"]
    rng = np.random.default_rng(0)
    X, y = rng.uniform(size=(40, 3)), rng.normal(size=40)
    try:
        combination._THREADS["budget"] = None
        numba.set_num_threads(2)
        NKRRRegressor(base=base, max_iter=3).fit(X, y)
        assert numba.get_num_threads() == 2
        get_family("nkrr").warmup(1)
        NKRRRegressor(base=base, max_iter=3).fit(X, y)
        assert numba.get_num_threads() == 1
    finally:
        combination._THREADS["budget"] = budget
        numba.set_num_threads(before)
