"""Pointwise density (paper 000 section 4.3.3, Figure 2): kernel classes, Problems (20)/(21), the density kind."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from tests.conftest import tiny_config
from tkbench.bench.density import balanced_draw
from tkbench.bench.kernel_classes import get_kernel_class, tk_variables
from tkbench.bench.kernel_fit import KernelFitProblem, optimal_kernel_matrix
from tkbench.bench.runner import run_experiment
from tkbench.bench.store import ResultStore
from tkbench.config import load_config
from tkbench.errors import ConfigError
from tkbench.methods.tk.kernel import box, tk_kernel
from tkbench.report.build import build_report


def _points(m=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(m, 2))
    y = np.repeat([1.0, -1.0], m // 2)
    return X, y


def test_optimal_kernel_matrix_is_theorem_10():
    y = np.array([1, -1, 1, -1.0])
    np.testing.assert_allclose(optimal_kernel_matrix(y), np.outer(y, y))
    y = np.array([1, 1, 1, -1.0])  # unbalanced: still rank one, PSD, trace m
    K = optimal_kernel_matrix(y)
    assert np.trace(K) == pytest.approx(4) and np.linalg.matrix_rank(K) == 1
    assert np.linalg.eigvalsh(K).min() > -1e-12
    with pytest.raises(ValueError, match="labels in"):
        optimal_kernel_matrix(np.array([0, 1, 2]))


def test_class_maps_reproduce_their_kernels():
    X, _ = _points(6)
    P = np.random.default_rng(1).normal(size=(6, 6))
    P = P @ P.T
    km = get_kernel_class("tk").basis(X, {"degree": 1, "delta": 0.2})
    iu = np.triu_indices(6)
    a, b = box(2, 0.2)
    np.testing.assert_allclose(np.tensordot(P[iu], km.matrices, axes=1), tk_kernel(X, None, P, a, b, 1), atol=1e-12)
    assert km.n_variables == tk_variables(2, 1) == 21
    gk = get_kernel_class("gaussian_sum").basis(X, {"match_degree": 1})
    assert gk.n_variables == 21 and gk.cone == "nonneg"
    with pytest.raises(ValueError, match="no parameter 'width'"):
        get_kernel_class("gpk").basis(X, {"width": 1})


@pytest.mark.parametrize("norm", ["l1", "linf"])
def test_gaussian_sum_fit_matches_an_independent_linear_program(norm):
    """The Gaussian class gives an LP: solved again with SciPy's HiGHS, written out by hand."""
    X, y = _points(8)
    target = optimal_kernel_matrix(y)
    km = get_kernel_class("gaussian_sum").basis(X, {"n_bandwidths": 6})
    ours = KernelFitProblem(km, target).solve(norm)
    m, p = 8, km.n_variables
    G = km.matrices.reshape(p, m * m).T
    t = target.ravel()
    if norm == "l1":  # min sum(s)/m^2, -s <= G mu - t <= s, mu >= 0
        c = np.r_[np.zeros(p), np.ones(m * m) / m**2]
        A = np.block([[G, -np.eye(m * m)], [-G, -np.eye(m * m)]])
    else:  # min s, -s <= G mu - t <= s
        c = np.r_[np.zeros(p), 1.0]
        A = np.block([[G, -np.ones((m * m, 1))], [-G, -np.ones((m * m, 1))]])
    lp = linprog(c, A_ub=A, b_ub=np.r_[t, -t], bounds=[(0, None)] * len(c), method="highs")
    assert lp.status == 0
    assert ours.value == pytest.approx(lp.fun, abs=1e-6)
    # globally positive kernels cannot beat the bounds of section 4.3.3
    assert ours.value >= {"l1": 0.5, "linf": 1.0}[norm] - 1e-7


def test_psd_fit_matches_the_unwhitened_problem_and_lemma_11():
    """Whitening is an exact change of variables: the same optimum as the problem in P itself (SCS, another
    solver); and the TK class contains the GPK class of the same degree (Lemma 11), so it fits at least as well."""
    import cvxpy as cp

    X, y = _points(8, seed=3)
    target = optimal_kernel_matrix(y)
    km = get_kernel_class("gpk").basis(X, {"degree": 2})
    ours = KernelFitProblem(km, target).solve("l1")
    P = cp.Variable((km.order, km.order), symmetric=True)
    iu = np.triu_indices(km.order)
    K = sum(P[i, j] * H for i, j, H in zip(*iu, km.matrices, strict=True))
    prob = cp.Problem(cp.Minimize(cp.sum(cp.abs(K - target)) / 64), [P >> 0])
    prob.solve(solver=cp.SCS, eps=1e-8, max_iters=200000)
    assert ours.value == pytest.approx(prob.value, abs=1e-4)
    tk = KernelFitProblem(get_kernel_class("tk").basis(X, {"degree": 2}), target).solve("l1")
    assert tk.value <= ours.value + 1e-6
    # the returned P is PSD and reproduces the returned K
    Pm = ours.variables.reshape(km.order, km.order)
    assert np.linalg.eigvalsh(Pm).min() > -1e-6 * np.abs(Pm).max()
    np.testing.assert_allclose(np.tensordot(Pm[iu], km.matrices, axes=1), ours.K, atol=1e-8)


def test_gpk_interpolates_when_it_has_enough_monomials():
    """Theorem 12: with at least as many monomials as (unisolvent) points, K* is matched exactly."""
    X, y = _points(6, seed=2)
    fit = KernelFitProblem(get_kernel_class("gpk").basis(X, {"degree": 2}), optimal_kernel_matrix(y)).solve("linf")
    assert fit.value < 1e-5  # q = 6 monomials of degree <= 2 in 2 variables, 6 points


def test_balanced_draw():
    y = np.array([0] * 30 + [1] * 10)
    rows = balanced_draw(y, 8, seed=4)
    assert len(set(rows)) == 8 and (y[rows] == 1).sum() == 4
    np.testing.assert_array_equal(rows, balanced_draw(y, 8, seed=4))
    with pytest.raises(ValueError, match="even"):
        balanced_draw(y, 7, seed=0)


def test_density_experiment_runs_and_reports(write_config, tmp_path):
    cfg = tiny_config(name="dens", kind="density", protocol={"splits": 2, "seed": 0})
    cfg["datasets"] = [{"name": "spiral", "options": {"n_samples": 200}, "subsample": 10}]
    cfg["methods"] = [{"name": "tk", "family": "tk", "vary": {"param": "degree", "values": [0, 1]}},
                      {"name": "gauss", "family": "gaussian_sum", "vary": {"param": "match_degree", "values": [0, 1]}}]
    exp = load_config(write_config(cfg))
    outcome = run_experiment(exp, out_dir=tmp_path, progress=False)
    assert outcome.counts["ok"] == 8
    rows = ResultStore(tmp_path).rows()
    assert all(r["objective_linf"] >= 0 and r["n_train"] == 10 for r in rows)
    assert min(r["objective_linf"] for r in rows if r["method"] == "gauss") >= 1 - 1e-6
    written = build_report(tmp_path, formats=["md"])
    assert "density_spiral_l1.png" in {p.name for p in written}
    assert "(20) 1-norm" in (tmp_path / "report" / "report.md").read_text()


@pytest.mark.parametrize("change,where", [
    (lambda m: m.update(family="svm_rbf"), "methods[0].family"),
    (lambda m: m.update(grid={"degree": [1, 2]}), "methods[0].grid"),
    (lambda m: m.update(params={"width": 2}), "methods[0].params.width"),
])
def test_density_config_errors(write_config, change, where):
    cfg = tiny_config(name="dens", kind="density")
    cfg["datasets"] = [{"name": "spiral", "subsample": 10}]
    cfg["methods"] = [{"name": "tk", "family": "tk"}]
    change(cfg["methods"][0])
    with pytest.raises(ConfigError, match=where.replace("[", r"\[").replace("]", r"\]")):
        load_config(write_config(cfg))
