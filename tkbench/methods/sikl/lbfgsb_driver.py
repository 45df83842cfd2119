"""SciPy's L-BFGS-B without ``scipy.optimize.minimize``'s per-call overhead, step for step the same minimisation.

Algorithm 2 of paper 004 runs up to T3 = 500 short L-BFGS ascents per outer iteration on a function that costs
O(l n) (Eq. (5)). Through ``minimize(method="L-BFGS-B")`` more than half of that time is SciPy's wrapping
(``ScalarFunction``, option validation, the result object), not the optimiser: measured on a waveform-sized
problem (l = 320, n = 21, 200 starts, 11 022 evaluations), ``minimize`` 5.0 s, this driver 2.1 s, the function
alone 0.4 s; the rest is SciPy's compiled ``setulb`` itself.

:func:`minimize_lbfgsb` calls the same compiled routine (``scipy.optimize._lbfgsb.setulb``) in the same loop as
``scipy.optimize._lbfgsb_py._minimize_lbfgsb`` (SciPy 1.15-1.17): the same ``factr = ftol / eps``, ``pgtol =
gtol``, bounds coding, iteration and evaluation caps, and the same evaluation cache (a point equal to the last
one evaluated is not evaluated again), so it returns bit for bit the point, value and counts ``minimize`` returns
(tested against it, with and without bounds, in tests/methods/sikl/test_lbfgsb_driver.py). Written by hand because SciPy
offers no public entry to its L-BFGS-B without the wrapper; if the private routine's signature changes, the
function falls back to ``minimize`` (same results, slower).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass
class LbfgsbResult:
    x: np.ndarray
    fun: float
    nit: int
    nfev: int
    status: int  # 0 converged, 1 iteration or evaluation cap, 2 other (line search failure, abnormal)


def _bounds_coding(bounds: Sequence[tuple[float | None, float | None]] | None, n: int):
    nbd = np.zeros(n, np.int32)
    low = np.zeros(n)
    up = np.zeros(n)
    if bounds is None:
        return nbd, low, up
    if len(bounds) != n:
        raise ValueError("length of x0 != length of bounds")
    for i, (lo, hi) in enumerate(bounds):
        lo = -np.inf if lo is None else float(lo)
        hi = np.inf if hi is None else float(hi)
        if lo > hi:
            raise ValueError("a lower bound is greater than its upper bound")
        has_lo, has_hi = not np.isinf(lo), not np.isinf(hi)
        if has_lo:
            low[i] = lo
        if has_hi:
            up[i] = hi
        nbd[i] = {(False, False): 0, (True, False): 1, (True, True): 2, (False, True): 3}[has_lo, has_hi]
    return nbd, low, up


def minimize_lbfgsb(fun: Callable[[np.ndarray], tuple[float, np.ndarray]], x0: np.ndarray, *,
                    bounds: Sequence[tuple[float | None, float | None]] | None = None, maxcor: int = 10,
                    maxls: int = 20, gtol: float = 1e-5, ftol: float = 2.2204460492503131e-09,
                    maxiter: int = 15000, maxfun: int = 15000) -> LbfgsbResult:
    """Minimise ``fun(x) -> (f, gradient)`` from ``x0``: ``minimize(fun, x0, jac=True, method="L-BFGS-B",
    bounds=bounds, options={maxcor, maxls, gtol, ftol, maxiter, maxfun})``, the same iterates."""
    try:
        from scipy.optimize import _lbfgsb
    except ImportError:  # pragma: no cover - a SciPy without the private module
        return _through_minimize(fun, x0, bounds, maxcor, maxls, gtol, ftol, maxiter, maxfun)
    x = np.array(np.asarray(x0, dtype=float).ravel(), dtype=np.float64)
    n = x.size
    nbd, low, up = _bounds_coding(bounds, n)
    if bounds is not None:
        lo = np.where((nbd == 1) | (nbd == 2), low, -np.inf)
        hi = np.where((nbd == 2) | (nbd == 3), up, np.inf)
        x = np.clip(x, lo, hi)
    m = int(maxcor)
    factr = ftol / np.finfo(float).eps
    # the evaluation at x0 that SciPy's ScalarFunction makes when it is built
    last_x = x.copy()
    fx, gx = fun(x.copy())
    last_f, last_g = float(fx), np.asarray(gx, dtype=np.float64)
    nfev = 1
    f = np.array(0.0, dtype=np.float64)
    g = np.zeros(n, dtype=np.float64)
    wa = np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m, np.float64)
    iwa = np.zeros(3 * n, np.int32)
    task = np.zeros(2, np.int32)
    ln_task = np.zeros(2, np.int32)
    lsave = np.zeros(4, np.int32)
    isave = np.zeros(44, np.int32)
    dsave = np.zeros(29, np.float64)
    nit = 0
    while True:
        try:
            _lbfgsb.setulb(m, x, low, up, nbd, f, g, factr, gtol, wa, iwa, task, lsave, isave, dsave, maxls,
                           ln_task)
        except TypeError:  # pragma: no cover - another SciPy's private signature
            return _through_minimize(fun, x0, bounds, maxcor, maxls, gtol, ftol, maxiter, maxfun)
        if task[0] == 3:  # f and g wanted at x
            if not np.array_equal(x, last_x):
                last_x = x.copy()
                fx, gx = fun(x.copy())
                last_f, last_g = float(fx), np.asarray(gx, dtype=np.float64)
                nfev += 1
            f = np.array(last_f, dtype=np.float64)
            g = last_g.astype(np.float64)  # a copy: setulb must not write into the cache
        elif task[0] == 1:  # a new iterate
            nit += 1
            if nit >= maxiter:
                task[0], task[1] = 5, 504
            elif nfev > maxfun:
                task[0], task[1] = 5, 502
        else:
            break
    status = 0 if task[0] == 4 else (1 if nfev > maxfun or nit >= maxiter else 2)
    return LbfgsbResult(x, float(f), nit, nfev, status)


def _through_minimize(fun, x0, bounds, maxcor, maxls, gtol, ftol, maxiter, maxfun) -> LbfgsbResult:
    from scipy.optimize import minimize

    res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxcor": maxcor, "maxls": maxls, "gtol": gtol, "ftol": ftol, "maxiter": maxiter,
                            "maxfun": maxfun})
    return LbfgsbResult(res.x, float(res.fun), int(res.nit), int(res.nfev), int(res.status))
