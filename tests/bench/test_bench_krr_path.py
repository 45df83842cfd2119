"""Benchmark (excluded from `make test`; `make bench` runs it): kernel ridge's CV over alpha along its path (one
training kernel per gamma and fold, :func:`tkbench.methods.nkrr.estimators.ridge_path`) against a fit per grid
point (the CV before 2026-12-04), in one process, alternated, with the threads this process has.

The setting is paper 002's Table 1 SVM (least-squares SVM = kernel ridge with a Gaussian kernel, inputs and labels
scaled to [-1, 1], its 10 lambdas, CV scored by the least-squares error) on cycle (CCPP) at ``ROWS`` training rows, with
two of the ten gammas (the CV's cost is the same for every gamma). Results, with the machine, in
results/bench/krr_path.json. It fails when the two CVs do not give the same scores (to 1e-12 relative) and choice,
or when the path is not faster.
"""
from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

from tkbench.bench.provenance import cpu_model

ROWS = 3000
ALPHAS = [1.0e-05, 5.99e-05, 3.59e-04, 2.15e-03, 1.29e-02, 7.74e-02, 0.464, 2.78, 16.7, 100.0]
GAMMAS = [1.67, 12.9]


@pytest.mark.benchmark
def test_bench_krr_path():
    from tkbench.bench.tuning import select_params
    from tkbench.data import train_test_indices, training_subset
    from tkbench.data.registry import load_dataset
    from tkbench.methods import get_family
    from tkbench.methods.compose import make_estimator

    ds = load_dataset("ccpp")  # Table 1's "cycle"
    train, _ = train_test_indices(ds.y, test_fraction=0.2, seed=0, stratify=False)
    train = training_subset(train, ROWS, 1)
    X, y = ds.X[train], ds.y[train]
    target_range = (float(ds.y.min()), float(ds.y.max()))
    family = get_family("krr_rbf")
    per_point = dataclasses.replace(family, path_param=None, path_predict=None)
    grid = {"alpha": ALPHAS, "gamma": GAMMAS}
    est = make_estimator(family, "regression", scaler="minmax_pm1", target_scaler="minmax_pm1")

    def cv(fam):
        t0 = time.perf_counter()
        chosen, report = select_params(est, fam, grid, X, y, task="regression", k=5, seed=3, cv_score="ls_error",
                                       target_range=target_range)
        return time.perf_counter() - t0, chosen, [s["mean"] for s in report["scores"]]

    runs = {"path": [], "per_point": []}
    for _ in range(2):
        for name, fam in (("per_point", per_point), ("path", family)):
            runs[name].append(cv(fam))
    (_, chosen_path, scores_path), (_, chosen_point, scores_point) = runs["path"][0], runs["per_point"][0]
    assert chosen_path == chosen_point
    np.testing.assert_allclose(scores_path, scores_point, rtol=1e-12, atol=0)
    seconds = {name: [r[0] for r in rs] for name, rs in runs.items()}
    ratio = min(seconds["per_point"]) / min(seconds["path"])
    report = {"cpu": cpu_model(), "cores": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)),
              "load_average_1_5_15_min": list(os.getloadavg()),  # what else ran: the ratio is the measurement
              "threads": os.environ.get("OMP_NUM_THREADS"), "rows": ROWS, "grid": grid, "folds": 5,
              "seconds": seconds, "speedup_best_of_2": ratio, "chosen": chosen_path}
    path = Path("results/bench/krr_path.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    assert ratio > 1.0, report
