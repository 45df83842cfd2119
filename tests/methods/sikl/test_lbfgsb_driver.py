"""The L-BFGS-B driver (tkbench/methods/sikl/lbfgsb_driver.py) is SciPy's minimize(method="L-BFGS-B") bit for bit."""
import numpy as np
import pytest
from scipy.optimize import minimize

from tkbench.methods.sikl.cosine import cosine_value_grad
from tkbench.methods.sikl.lbfgsb_driver import minimize_lbfgsb


def _scipy(fun, x0, bounds, **opts):
    return minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds, options=opts)


def _cosine_problem(seed, rows=60, n=5, beta=0.3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, n))
    y = np.where(rng.random(rows) < 0.5, -1.0, 1.0)
    w = np.full(rows, 2.0 / rows) * y

    def negative(p):
        v, g = cosine_value_grad(p, X, w, beta)
        return -v, -g

    return negative, rng


@pytest.mark.parametrize("seed", range(4))
def test_the_driver_follows_scipy_step_for_step_on_the_cosine_search(seed):
    """Algorithm 2's ascents (paper 004): same point, value, iterations and evaluations as SciPy's minimize."""
    negative, rng = _cosine_problem(seed)
    opts = {"maxcor": 17, "maxls": 20, "gtol": 1e-6, "ftol": 1e-15, "maxiter": 1000}
    for _ in range(25):
        x0 = rng.standard_normal(5) * rng.uniform(0, 4)
        ref = _scipy(negative, x0, None, **opts)
        ours = minimize_lbfgsb(negative, x0, **opts)
        assert np.array_equal(ours.x, ref.x) and ours.fun == ref.fun
        assert (ours.nit, ours.nfev, ours.status) == (ref.nit, ref.nfev, ref.status)


def test_the_driver_follows_scipy_with_bounds_and_caps():
    """Bounds (a width kept >= 0, a box), the iteration cap and the evaluation cap as SciPy handles them."""
    rng = np.random.default_rng(7)
    A = rng.standard_normal((6, 6))
    H = A @ A.T + 0.1 * np.eye(6)
    b = rng.standard_normal(6) * 3

    def quad(x):
        return 0.5 * x @ H @ x - b @ x + np.sin(x).sum(), H @ x - b + np.cos(x)

    bounds = [(0.0, None), (None, 1.0), (-1.0, 1.0), (None, None), (0.5, 0.5), (-2.0, None)]
    for opts in ({"maxcor": 5, "maxls": 20, "gtol": 1e-8, "ftol": 1e-12, "maxiter": 1000},
                 {"maxcor": 17, "maxls": 3, "gtol": 1e-10, "ftol": 1e-15, "maxiter": 4},
                 {"maxcor": 17, "maxls": 20, "gtol": 1e-10, "ftol": 1e-15, "maxiter": 1000, "maxfun": 5}):
        x0 = rng.standard_normal(6) * 2  # partly outside the bounds: clipped as SciPy clips
        ref = _scipy(quad, x0, bounds, **opts)
        ours = minimize_lbfgsb(quad, x0, bounds=bounds, **opts)
        assert np.array_equal(ours.x, ref.x) and ours.fun == ref.fun
        assert (ours.nit, ours.nfev, ours.status) == (ref.nit, ref.nfev, ref.status)


def test_inconsistent_bounds_are_refused():
    with pytest.raises(ValueError, match="lower bound"):
        minimize_lbfgsb(lambda x: (float(x @ x), 2 * x), np.zeros(1), bounds=[(1.0, 0.0)])


@pytest.mark.parametrize("symmetric", [True, False])
def test_the_vectorised_duplicate_test_finds_the_first_match_one_by_one_would(symmetric):
    """Algorithm 2 counts a maximum as a repeat of the first earlier one within same_tol (gamma and -gamma the
    same when symmetric): the batched prefilter must give that answer, near the tolerance's edge too."""
    from tkbench.methods.sikl.sip import _Maxima, _same

    rng = np.random.default_rng(3)
    tol = 1e-3
    found = _Maxima(400, 4, tol, symmetric)
    kept: list[np.ndarray] = []
    best: list[float] = []
    hits = 0
    for _ in range(400):
        if kept and rng.random() < 0.6:  # near an earlier point: inside, at, or just beyond the tolerance
            q = kept[rng.integers(len(kept))]
            step = rng.standard_normal(4)
            step *= tol * (1 + np.linalg.norm(q)) * rng.choice([0.5, 0.999999, 1.000001, 1.5]) / np.linalg.norm(step)
            p = (-1 if symmetric and rng.random() < 0.5 else 1) * (q + step)
        else:
            p = rng.standard_normal(4) * rng.uniform(0.1, 5)
        expected = next((k for k, q in enumerate(kept) if _same(q, p, tol, symmetric)), None)
        assert found.match(p) == expected
        v = float(rng.random())
        assert found.record(p, v) == (expected is not None)
        if expected is None:
            kept.append(p)
            best.append(v)
        else:
            hits += 1
            if v > best[expected]:  # a repeat keeps the better of the two maxima
                kept[expected], best[expected] = p, v
    assert hits > 50 and len(kept) > 50
    assert found.size == len(kept) and found.repeats == hits
    np.testing.assert_array_equal(found.values[: found.size], best)
