"""Benchmark (excluded from `make test`; `make bench` runs it): the speed targets of issue 21, measured in one run.

- Airfoil regression (C = 10, epsilon = 0.1, d = 1, delta = 0.1, basis zx), one 80/20 split: one TK fit with each
  dual solver (LIBSVM from scratch, our warm-started SMO) against one scikit-learn RBF SVR fit (C = 10,
  epsilon = 0.1, gamma "scale", inputs min-max scaled) on the same split. Target: TK within 10x the SVR.
- CCPP at m = 8000 (the settings of configs/bench_tk_scaling.yaml: C = 1, delta = 0.1, basis x, tol 1e-2):
  regression and classification (PE >= median). Targets: 8 s and 2 s.

Every fit runs after a warm-up fit on a few rows (numba compilation and cache loading are not the solver's time),
with the threads this process has. Results, with the machine, in results/bench/tk_targets.json.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

from tkbench.bench.provenance import cpu_model

SOLVERS = ("libsvm", "smo")


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _split(X, y, seed=0, test=0.2, size=None):
    """The project's own split (80/20 by default) and training subset, as a config's runs would use."""
    from tkbench.data import train_test_indices, training_subset

    tr, te = train_test_indices(y, test_fraction=test, seed=seed, stratify=False)
    if size is not None:
        tr = training_subset(tr, size, seed + 1)
    return X[tr], y[tr], X[te], y[te]


def _tk(task, **params):
    from tkbench import TKClassifier, TKRegressor

    return (TKRegressor if task == "regression" else TKClassifier)(**params)


def _measure_tk(task, Xtr, ytr, Xte, yte, **params):
    out = {}
    for solver in SOLVERS:
        _tk(task, dual_solver=solver, **params).fit(Xtr[:100], ytr[:100])  # compile / load the numba cache
        seconds, est = _timed(lambda s=solver: _tk(task, dual_solver=s, **params).fit(Xtr, ytr))
        pred = est.predict(Xte)
        score = float(np.mean((pred - yte) ** 2)) if task == "regression" else float(np.mean(pred == yte))
        out[solver] = {"seconds": seconds, "mse" if task == "regression" else "accuracy": score,
                       "n_iter": int(est.n_iter_), "n_svm_solves": int(est.n_svm_solves_),
                       "relative_gap": float(est.gap_history_[-1]["relative_gap"])}
    return out


@pytest.mark.benchmark
def test_bench_tk_targets():
    from sklearn.preprocessing import MinMaxScaler
    from sklearn.svm import SVR

    from tkbench.data.registry import load_dataset

    report = {"cpu": cpu_model(), "cores": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)), "targets": {}}

    ds = load_dataset("airfoil")
    Xtr, ytr, Xte, yte = _split(ds.X, ds.y)
    scaler = MinMaxScaler().fit(Xtr)
    svr = [_timed(lambda: SVR(C=10.0, epsilon=0.1, gamma="scale").fit(scaler.transform(Xtr), ytr))
           for _ in range(3)]
    svr_seconds = min(s for s, _ in svr)
    svr_mse = float(np.mean((svr[0][1].predict(scaler.transform(Xte)) - yte) ** 2))
    tk = _measure_tk("regression", Xtr, ytr, Xte, yte, C=10.0, epsilon=0.1, degree=1, delta=0.1, basis="zx")
    report["targets"]["airfoil"] = {
        "m": len(ytr), "rbf_svr": {"seconds": svr_seconds, "mse": svr_mse}, "tk": tk,
        "ratio_to_svr": {s: tk[s]["seconds"] / svr_seconds for s in SOLVERS}, "target_ratio": 10.0}

    for task, target in (("regression", 8.0), ("classification", 2.0)):
        ds = load_dataset("ccpp", {"task": task} if task == "classification" else None)
        Xtr, ytr, Xte, yte = _split(ds.X, ds.y, test=0.1, size=8000)
        tk = _measure_tk(task, Xtr, ytr, Xte, yte, C=1.0, delta=0.1, degree=1, basis="x", tol=0.01)
        report["targets"][f"ccpp_{task}"] = {"m": len(ytr), "tk": tk, "target_seconds": target}

    path = Path("results/bench/tk_targets.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
