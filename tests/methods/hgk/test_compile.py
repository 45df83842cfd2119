"""`tkbench compile` (HGK's compile hook) covers every compiled signature an HGK fit runs.

numba compiles one machine-code version per argument-type signature and caches it on disk. A signature the hook
misses is compiled in each process that first meets it: a fresh install's first fit, and each pytest worker (two
such signatures, K11's symmetric adjoint pass and the full kernel pass on read-only rows, cost the suite's HGK
tests about a minute of compiling on a fresh clone, 2026-12-03)."""
from __future__ import annotations

import numba
import numpy as np

from tkbench.methods.hgk import _numba
from tkbench.methods.hgk.estimators import HGKClassifier, HGKRegressor
from tkbench.methods.hgk.warmup import hierarchical_compile


def _signatures() -> dict[str, set]:
    return {name: set(f.signatures) for name, f in vars(_numba).items()
            if isinstance(f, numba.core.registry.CPUDispatcher)}


def test_the_compile_hook_covers_what_the_estimators_run():
    hierarchical_compile()
    before = _signatures()
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(40, 3))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=40)
    read_only = X.copy()
    read_only.setflags(write=False)  # scikit-learn's memory-mapped CV data
    quick = {"L": 1, "M": 1, "N1": 5, "N2": 3, "N3": 2}
    for data in (X, read_only):
        for spec in ("inhomogeneous", "depth2:2"):  # a single Gaussian, and a tree (the symmetric passes)
            reg = HGKRegressor(spec, **quick).fit(data, y)  # the default objective: refit
            reg.predict(data)
            HGKRegressor(spec, objective="fixed_alpha", **quick).fit(data, y).predict(data)
            HGKRegressor(spec, annealing_dtype="float32", **quick).fit(data, y)  # float32 blocks
        clf = HGKClassifier("depth2:2", loss="hinge", **quick).fit(data, np.where(y > 0, 1, -1))
        clf.predict(data)
    after = _signatures()
    added = {name: [str(s) for s in after[name] - before.get(name, set())] for name in after}
    assert not {name: sigs for name, sigs in added.items() if sigs}, "compiled outside tkbench compile"
    assert sum(len(s) for s in before.values()) >= 10  # the hook itself compiled (a vacuous comparison otherwise)
