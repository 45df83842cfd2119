"""The warm-startable SMO solver (tkbench.methods._shared.smo) against LIBSVM and against itself."""
from __future__ import annotations

import numpy as np
import pytest

from tkbench.data import load_dataset
from tkbench.methods._shared.smo import WarmStart, smo_dual
from tkbench.methods._shared.svm import solve_dual


def _rbf(X: np.ndarray, gamma: float = 0.5) -> np.ndarray:
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-gamma * sq)


def _problem(task: str, source: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    if source == "random":
        X = rng.normal(size=(150, 3))
        y = np.sign(X[:, 0] + 0.5 * rng.normal(size=150)) if task == "classification" else \
            X[:, 0] ** 2 + 0.1 * rng.normal(size=150)
    else:  # real rows: liver (classification), airfoil (regression), scaled to [0, 1]
        ds = load_dataset("liver" if task == "classification" else "airfoil")
        rows = rng.choice(len(ds.y), 200, replace=False)
        X = ds.X[rows]
        X = (X - X.min(0)) / np.maximum(X.max(0) - X.min(0), 1e-12)
        y = np.where(ds.y[rows] == ds.y.max(), 1.0, -1.0) if task == "classification" else \
            (ds.y[rows] - ds.y[rows].mean()) / ds.y[rows].std()
    return _rbf(X), y


def _violation(K, y, sol_alpha, task, C, epsilon):
    """m(a) - M(a) of LIBSVM's stopping rule, computed independently from the kernel."""
    m = len(y)
    if task == "classification":
        yv, p, Kf = y, -np.ones(m), K
    else:
        yv = np.concatenate([np.ones(m), -np.ones(m)])
        p = np.concatenate([epsilon - y, epsilon + y])
        Kf = np.block([[K, K], [K, K]])
    G = (yv[:, None] * yv[None, :] * Kf) @ sol_alpha + p
    up = ((yv > 0) & (sol_alpha < C)) | ((yv < 0) & (sol_alpha > 0))
    low = ((yv > 0) & (sol_alpha > 0)) | ((yv < 0) & (sol_alpha < C))
    return np.max(-yv[up] * G[up]) - np.min(-yv[low] * G[low])


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("source", ["random", "real"])
@pytest.mark.parametrize("C", [0.1, 10.0])
def test_same_objective_as_libsvm_and_its_stopping_rule(task, source, C):
    K, y = _problem(task, source)
    ref = solve_dual(K, y, task=task, C=C, epsilon=0.1, tol=1e-7)
    sol, warm = smo_dual(K, y, task=task, C=C, epsilon=0.1, tol=1e-7)
    assert sol.value == pytest.approx(ref.value, rel=1e-6)
    assert not sol.capped and sol.n_iter > 0
    assert _violation(K, y, warm.alpha, task, C, 0.1) < 1e-7
    assert sol.quad == pytest.approx(float(sol.w @ K @ sol.w), rel=1e-9)
    # the decision values on the training points agree with LIBSVM's
    assert np.allclose(K @ sol.w + sol.intercept, K @ ref.w + ref.intercept, atol=1e-4 * max(1.0, C))
    # at LIBSVM's default tolerance the rule holds at the default tolerance
    _, loose = smo_dual(K, y, task=task, C=C, epsilon=0.1)
    assert _violation(K, y, loose.alpha, task, C, 0.1) < 1e-3


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_warm_start_on_a_blended_kernel_equals_a_cold_solve_on_the_formed_matrix(task):
    K, y = _problem(task, "real")
    rng = np.random.default_rng(4)
    V = rng.normal(size=(len(y), 2))
    KS = V @ V.T / 2.0  # a rank-2 PSD kernel, as Frank-Wolfe's K(S)
    first, warm = smo_dual(K, y, task=task, C=1.0, tol=1e-8)
    for g in (0.05, 0.3, 1.0):
        formed = (1 - g) * K + g * KS
        cold, _ = smo_dual(formed, y, task=task, C=1.0, tol=1e-8)
        hot, _ = smo_dual(K, y, task=task, C=1.0, tol=1e-8, KS=KS, g=g, warm=warm)
        ref = solve_dual(formed, y, task=task, C=1.0, tol=1e-8)
        assert hot.value == pytest.approx(cold.value, rel=1e-7) and hot.value == pytest.approx(ref.value, rel=1e-6)
    small, _ = smo_dual(K, y, task=task, C=1.0, tol=1e-8, KS=KS, g=0.05, warm=warm)
    cold_small, _ = smo_dual((0.95 * K + 0.05 * KS), y, task=task, C=1.0, tol=1e-8)
    assert small.n_iter < cold_small.n_iter  # a nearby kernel: fewer iterations from the previous solution


def test_float32_kernels_solve_the_rounded_problem():
    K, y = _problem("regression", "real")
    K32 = K.astype(np.float32)
    sol32, _ = smo_dual(K32, y, task="regression", C=1.0, tol=1e-8)
    sol64, _ = smo_dual(K32.astype(np.float64), y, task="regression", C=1.0, tol=1e-8)
    assert sol32.value == pytest.approx(sol64.value, rel=1e-12)
    assert sol32.value == pytest.approx(smo_dual(K, y, task="regression", C=1.0, tol=1e-8)[0].value, rel=1e-5)


def test_bad_input_and_the_cap():
    K, y = _problem("classification", "random")
    with pytest.raises(ValueError, match="-1 and \\+1"):
        smo_dual(K, (y > 0).astype(float), task="classification", C=1.0)
    with pytest.raises(ValueError, match="warm start"):
        smo_dual(K, y, task="classification", C=1.0, warm=WarmStart(np.zeros(3)))
    with pytest.raises(ValueError, match="g = 2"):
        smo_dual(K, y, task="classification", C=1.0, KS=K, g=2.0)
    capped, _ = smo_dual(K, y, task="classification", C=10.0, max_iter=5)
    assert capped.capped and capped.n_iter == 5


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_shrinking_gives_the_unshrunk_solution(task):
    """LIBSVM's shrinking restricts the work to an active set; the answer (objective, stopping rule on every
    variable, decision values) is the one without it."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 4))
    y = np.sign(X[:, 0] + 0.3 * rng.normal(size=400)) if task == "classification" else \
        np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=400)
    K = _rbf(X, 0.3)
    full, wf = smo_dual(K, y, task=task, C=10.0, epsilon=0.1, tol=1e-6, shrinking=False)
    shr, ws = smo_dual(K, y, task=task, C=10.0, epsilon=0.1, tol=1e-6, shrinking=True)
    n = len(wf.alpha)
    assert wf.fewest_active == n and ws.fewest_active < n // 2  # it did shrink
    assert shr.value == pytest.approx(full.value, rel=1e-8)
    assert _violation(K, y, ws.alpha, task, 10.0, 0.1) < 1e-6
    assert np.allclose(K @ shr.w + shr.intercept, K @ full.w + full.intercept, atol=1e-4)
    # a warm start from a nearby kernel, shrinking on: the same optimum as a cold solve there
    K2 = 0.7 * K + 0.3 * _rbf(X, 1.0)
    cold, _ = smo_dual(K2, y, task=task, C=10.0, epsilon=0.1, tol=1e-6, shrinking=False)
    warm, _ = smo_dual(K, y, task=task, C=10.0, epsilon=0.1, tol=1e-6, KS=_rbf(X, 1.0), g=0.3, warm=ws)
    assert warm.value == pytest.approx(cold.value, rel=1e-8)
