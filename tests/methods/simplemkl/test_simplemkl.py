"""SimpleMKL (reduced gradient on the simplex) against the MKL problem solved directly by cvxpy (QCQP form)."""
from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from sklearn.svm import SVC

from tkbench.data import load_dataset
from tkbench.methods._shared.library import BaseKernel, Library, standard_library
from tkbench.methods.simplemkl.reduced_gradient import simple_mkl


def _data(task, m=40):
    if task == "classification":
        ds = load_dataset("circle", {"n_samples": m, "noise": 0.1, "seed": 3})
        X, y = ds.X, ds.y
    else:
        rng = np.random.default_rng(3)
        X = rng.uniform(-1, 1, (m, 2))
        y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.05 * rng.standard_normal(m)
    return (X - X.min(0)) / (X.max(0) - X.min(0)), y


def mkl_by_cvxpy(L: Library, y, task, C, eps):
    """max_w kappa(w) - t  s.t.  1/2 w^T K_k w <= t for every k (the MKL dual; its value is min_d J(d))."""
    m = len(y)
    w, t = cp.Variable(m), cp.Variable()
    cons = []
    for k in range(len(L)):
        F = np.linalg.cholesky(L.kernel(k) + 1e-12 * np.eye(m))
        cons.append(0.5 * cp.sum_squares(F.T @ w) <= t)
    if task == "classification":
        alpha = cp.multiply(y, w)
        cons += [alpha >= 0, alpha <= C, cp.sum(w) == 0]
        obj = cp.sum(alpha) - t
    else:
        cons += [cp.abs(w) <= C, cp.sum(w) == 0]
        obj = y @ w - eps * cp.norm1(w) - t
    prob = cp.Problem(cp.Maximize(obj), cons)
    prob.solve(solver=cp.CLARABEL)
    return prob.value


@pytest.mark.parametrize("dual_solver", ["libsvm", "smo"])
@pytest.mark.parametrize("task,C", [("classification", 10.0), ("regression", 10.0)])
def test_simplemkl_matches_the_qcqp(task, C, dual_solver):
    X, y = _data(task)
    L = Library(standard_library(2, widths=(0.5, 1.0, 2.0)), X)
    res = simple_mkl(L, y, task=task, C=C, tol=1e-4, max_iter=300, svm_tol=1e-7, dual_solver=dual_solver)
    opt = mkl_by_cvxpy(L, y, task, C, 0.1)
    assert res.converged
    assert res.solution.value == pytest.approx(opt, rel=1e-3)
    assert all(h["dual"] <= opt * (1 + 1e-4) + 1e-8 for h in res.history)
    # weights stay on the simplex, the objective never increases
    assert res.weights.min() >= 0 and res.weights.sum() == pytest.approx(1.0)
    primal = [h["primal"] for h in res.history]
    assert all(b <= a * (1 + 1e-9) for a, b in zip(primal, primal[1:], strict=False))
    assert res.n_svm_solves >= res.n_iter


def test_one_kernel_library_is_a_plain_svm():
    X, y = _data("classification")
    L = Library([BaseKernel("gaussian", 1.0, None)], X)
    res = simple_mkl(L, y, task="classification", C=5.0, svm_tol=1e-8)
    svm = SVC(kernel="precomputed", C=5.0, tol=1e-8).fit(L.kernel(0), y)
    assert res.weights.tolist() == [1.0] and res.converged
    np.testing.assert_allclose(L.combined(res.weights) @ res.solution.w + res.solution.intercept,
                               svm.decision_function(L.kernel(0)), atol=1e-6)


@pytest.mark.parametrize("est", ["classifier", "regressor"])
def test_scikit_learn_estimator_checks(est):
    from sklearn.utils.estimator_checks import check_estimator

    from tkbench.methods.simplemkl.estimators import SimpleMKLClassifier, SimpleMKLRegressor

    model = (SimpleMKLClassifier if est == "classifier" else SimpleMKLRegressor)(max_iter=3, widths=(1.0,),
                                                                                  degrees=(1,))
    results = check_estimator(model, on_fail=None)
    assert not [r["check_name"] for r in results if r["status"] == "failed"]
    assert {r["check_name"] for r in results if r["status"] == "skipped"} <= {"check_array_api_input"}


def test_simplemkl_family_runs_from_a_config(write_config, tmp_path):
    from tests.conftest import tiny_config
    from tkbench.bench.runner import run_experiment
    from tkbench.bench.store import ResultStore
    from tkbench.config import load_config

    cfg = tiny_config()
    cfg["protocol"]["splits"] = 1
    cfg["datasets"] = ["liver", {"name": "waveform", "options": {"n_samples": 90}}, {"name": "airfoil",
                                                                                      "subsample": 150}]
    cfg["methods"] = [{"name": "mkl", "family": "simplemkl", "params": {"widths": [0.5, 2.0], "degrees": [1, 2]},
                       "grid": {"C": [1.0, 10.0]}}]
    outcome = run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, progress=False)
    assert outcome.counts == {"ok": 3}
    for row in ResultStore(tmp_path).rows():
        assert row["diagnostics"]["n_kernels"] == 4 * (row["n_features"] + 1)
        assert row["diagnostics"]["n_svm_solves"] >= 1


@pytest.mark.slow
@pytest.mark.parametrize("family,n_tk,n_std", [("simplemkl_tk", 300, 0), ("simplemkl_tk_plus", 300, 13 * 3)])
def test_simplemkl_over_random_tk_bases(family, n_tk, n_std):
    from tkbench.methods import get_family, make_estimator
    from tkbench.methods.compose import fitted_model

    X, y = _data("classification", 60)
    est = make_estimator(get_family(family), "classification", random_state=7)
    est.fit(X[:45], y[:45])
    model = fitted_model(est)
    assert len(model.kernel_names_) == n_tk + n_std
    assert sum(name.startswith("tk(") for name in model.kernel_names_) == n_tk
    assert model.weights_.sum() == pytest.approx(1.0) and model.converged_.all()
    assert est.score(X[45:], y[45:]) > 0.6
    again = make_estimator(get_family(family), "classification", random_state=7).fit(X[:45], y[:45])
    np.testing.assert_allclose(fitted_model(again).weights_, model.weights_)  # seeded


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_warm_start_reaches_the_same_optimum(task):
    X, y = _data(task)
    L = Library(standard_library(2, widths=(0.5, 1.0, 2.0, 5.0), degrees=(1, 2)), X)
    exact = mkl_by_cvxpy(L, y, task, 10.0, 0.1)
    cold = simple_mkl(L, y, task=task, C=10.0, tol=1e-3)
    start = simple_mkl(L, y, task=task, C=1.0, tol=1e-3).weights  # the neighbouring C's solution
    warm = simple_mkl(L, y, task=task, C=10.0, tol=1e-3, init=start)
    assert warm.converged and cold.converged
    assert warm.solution.value == pytest.approx(exact, rel=1e-3)
    assert cold.solution.value == pytest.approx(exact, rel=1e-3)
    assert np.all(warm.weights >= 0) and warm.weights.sum() == pytest.approx(1.0)
    assert warm.n_svm_solves < cold.n_svm_solves  # the point of it (here 1 vs 18 and 4 vs 137)


def test_cv_along_the_grid_with_warm_starts_picks_the_same_parameters():
    import dataclasses

    from tkbench.bench.tuning import select_params
    from tkbench.methods import get_family
    from tkbench.methods.compose import fitted_model, make_estimator

    ds = load_dataset("liver")
    X, y = ds.X[:120], ds.y[:120]
    family = get_family("simplemkl")
    params = {"widths": (0.5, 2.0, 8.0), "degrees": (1, 2)}
    reports = {}
    for warm in (False, True):
        fam = dataclasses.replace(family, warm_start=warm)
        est = make_estimator(fam, "classification", params=params)
        reports[warm] = select_params(est, fam, {"C": [0.1, 1.0, 10.0]}, X, y, task="classification", k=3, seed=0)
    (chosen_cold, rep_cold), (chosen_warm, rep_warm) = reports[False], reports[True]
    assert chosen_cold == chosen_warm
    for a, b in zip(rep_cold["scores"], rep_warm["scores"], strict=True):
        assert a["mean"] == pytest.approx(b["mean"], abs=0.03)  # same optimum up to the 1e-2 gap
    # the estimator really continues from its previous weights
    est = make_estimator(family, "classification", params={**params, "warm_start": True, "C": 1.0}).fit(X, y)
    first = fitted_model(est).weights_.copy()
    model = fitted_model(est)
    model.set_params(C=1.0)
    est.fit(X, y)
    assert fitted_model(est).n_svm_solves_ <= 3  # already optimal: one evaluation, no descent needed
    np.testing.assert_allclose(fitted_model(est).weights_, first, atol=1e-12)


@pytest.mark.parametrize("m,seed,tiny_start", [(40, 0, True), (80, 1, False)])
def test_descent_does_not_stall_on_weights_near_zero(m, seed, tiny_start):
    """Unscaled regression targets (~125, as Airfoil's dB) make the reduced gradient ~1e6: a long step leaves weights
    of 1e-10..1e-7 that each block the next direction at a step of ~1e-12, which no SVM solve resolves. The descent
    used to stop there with a relative gap of 0.3-0.6 (both cases here); weights below 1e-6 are now zeroed together."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (m, 3))
    y = 125 + 5 * np.sin(6 * X[:, 0]) + 3 * X[:, 1] + 0.3 * rng.standard_normal(m)
    L = Library(standard_library(3), X)
    init = None
    if tiny_start:
        init = np.full(len(L), 1e-9)
        init[0] = 1.0
    res = simple_mkl(L, y, task="regression", C=100.0, tol=1e-2, init=init)
    assert res.converged and res.history[-1]["relative_gap"] <= 1e-2
    exact = mkl_by_cvxpy(L, y, "regression", 100.0, 0.1)
    assert exact * (1 - 1e-6) <= res.solution.value <= exact * (1 + 1e-2)  # the gap certifies J within 1 %
    assert np.all(res.weights >= 0) and res.weights.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("capped", [False, True])
def test_simplemkl_never_certifies_a_gap_from_a_capped_svm_solve(cap_every_svm_solve, capped):
    import tkbench.methods.simplemkl.reduced_gradient as rg

    if capped:
        cap_every_svm_solve(rg)
    X, y = _data("classification")
    L = Library(standard_library(2, widths=(0.5, 1.0, 2.0)), X)
    res = simple_mkl(L, y, task="classification", C=10.0, tol=10.0, max_iter=3)
    if capped:
        assert not res.converged and res.n_svm_capped == res.n_svm_solves > 0
        assert all(h.get("svm_capped") for h in res.history)
    else:
        assert res.converged and res.n_iter == 0 and res.n_svm_capped == 0


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_warm_started_smo_serves_simplemkl_with_fewer_iterations(task):
    """Issue 21: SimpleMKL's solves by our SMO, each warm-started from the previous one, reach LIBSVM's optimum
    (objective and weights) in fewer SMO iterations than LIBSVM's solves from scratch."""
    X, y = _data(task, m=150)
    L = Library(standard_library(2, widths=(0.5, 1.0, 2.0, 5.0), degrees=(1, 2)), X)
    ref = simple_mkl(L, y, task=task, C=10.0, tol=1e-3, svm_tol=1e-5)
    smo = simple_mkl(L, y, task=task, C=10.0, tol=1e-3, svm_tol=1e-5, dual_solver="smo")
    assert ref.converged and smo.converged
    assert smo.solution.value == pytest.approx(ref.solution.value, rel=2e-3)
    np.testing.assert_allclose(smo.weights, ref.weights, atol=0.05)
    assert smo.n_svm_iterations < ref.n_svm_iterations, (smo.n_svm_iterations, ref.n_svm_iterations)
    with pytest.raises(ValueError, match="dual_solver"):
        simple_mkl(L, y, task=task, C=10.0, dual_solver="mosek")
