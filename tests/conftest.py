"""Shared fixtures: small configs written to a temporary folder; SVM solves forced to report the iteration cap."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]

if os.environ.get("PYTEST_XDIST_WORKER"):
    # One BLAS thread per test process under pytest-xdist (`make test`: one worker per core). OpenBLAS's default, a
    # thread per core in each worker, oversubscribes the cores and its threads spin while they wait: measured on
    # this 2-core machine, tests/methods/sikl and test_apd.py on 2 workers took 71 s (129 s of CPU) with the default
    # and 49 s (85 s) with one thread. The environment reaches the processes a test starts; the limit, a BLAS
    # library that some plugin may have loaded already. A sweep's runs set their own (protocol.blas_threads).
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
    from threadpoolctl import threadpool_limits

    _BLAS_LIMIT = threadpool_limits(1)
    # The same for numba's parallel loops (prange: HGK, TK, NKRR), which default to a thread per core and use the
    # OpenMP layer here: two workers of two spinning threads on two cores made tests/methods/hgk on 2 workers take
    # 413 s with the default and 63 s with one thread (measured 2026-12-05 beside two one-core sweeps). The
    # tests that compare one and two threads set them themselves (set_num_threads, not NUMBA_NUM_THREADS, which
    # would cap them).
    import numba

    numba.set_num_threads(1)


def tiny_config(**overrides: Any) -> dict[str, Any]:
    """A config that runs in seconds: two small datasets, a small SVM grid, a trivial method."""
    cfg: dict[str, Any] = {
        "name": "tiny",
        "kind": "accuracy",
        "protocol": {"splits": 3, "test_fraction": 0.25, "seed": 7, "cv_folds": 2, "timeout": 120},
        "datasets": ["liver", {"name": "waveform", "options": {"n_samples": 150}}],
        "methods": [
            {"name": "svm", "family": "svm_rbf", "grid": {"C": [1.0, 10.0], "gamma": [0.1]}},
            {"name": "rf", "family": "random_forest", "grid": {"n_estimators": [10, 20]}},
        ],
    }
    cfg.update(overrides)
    return cfg


@pytest.fixture(autouse=True)
def compiled_code_loaded():
    """Every test runs as a sweep's run does, after the warm-up: the TK passes compiled whatever their size
    (tkbench.methods._shared.compiled; the tests of the fresh-process choice reset this state themselves)."""
    from tkbench.methods._shared import compiled

    compiled.mark_loaded()
    yield
    compiled.mark_loaded()


@pytest.fixture
def write_config(tmp_path: Path):
    def _write(cfg: dict[str, Any], name: str = "config.yaml") -> Path:
        path = tmp_path / name
        path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        return path

    return _write


@pytest.fixture
def cap_every_svm_solve(monkeypatch):
    """``apply(module)``: every SVM solve the solver module makes reports that it stopped at LIBSVM's iteration cap
    (the real solution, flagged ``capped``)."""
    def apply(module):
        real = module.solve_dual
        monkeypatch.setattr(module, "solve_dual", lambda *a, **k: dataclasses.replace(real(*a, **k), capped=True))
        if hasattr(module, "smo_dual"):  # the warm-started solver (Frank-Wolfe's default)
            real_smo = module.smo_dual

            def capped_smo(*a, **k):
                sol, warm = real_smo(*a, **k)
                return dataclasses.replace(sol, capped=True), warm

            monkeypatch.setattr(module, "smo_dual", capped_smo)
    return apply


@pytest.fixture
def results_folder(tmp_path: Path):
    """``make(cfg) -> (experiment, store, folder)``: a results folder as `tkbench run` leaves it (the config saved
    beside the rows, meta.json pointing back at the config file), for report tests to write rows into."""
    import json

    from tkbench.bench.store import ResultStore
    from tkbench.config import load_config

    def make(cfg: dict[str, Any]):
        path = tmp_path / f"{cfg['name']}.yaml"
        path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        out = tmp_path / "results"
        store = ResultStore(out)
        store.save_config(path.read_text())
        (out / "meta.json").write_text(json.dumps({"config_source": f"../{path.name}"}))
        return load_config(path), store, out

    return make


def pytest_collection_modifyitems(config, items):
    """The tests marked ``slow`` (about 10 s and more: the process machinery, the external cluster, the large
    references) are handed out first, so that pytest-xdist's workers end on short tests instead of one worker
    finishing a 40 s test while the other is idle; the order within each group is kept."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
