"""Benchmark (excluded from `make test`; `make bench` runs it): the speed targets of issue 21, measured in one run.

- Airfoil regression (C = 10, epsilon = 0.1, d = 1, delta = 0.1, basis zx), one 80/20 split: one TK fit with each
  dual solver (LIBSVM from scratch, our warm-started SMO) against one scikit-learn RBF SVR fit (C = 10,
  epsilon = 0.1, gamma "scale", inputs min-max scaled) on the same split. Target: TK within 10x the SVR.
- CCPP at m = 8000 (the settings of configs/bench_tk_scaling.yaml: C = 1, delta = 0.1, basis x, tol 1e-2):
  regression and classification (PE >= median). Targets: 8 s and 2 s.

- Liver and Pima (C = 10, delta = 0.1, d = 1, basis x, the project's 80/20 split), the first fit in a fresh
  process (imports and data loading before the clock starts; numba's loading inside it, if the fit uses numba),
  with the automatic engine (tkbench.methods._shared.compiled) and with the compiled engine forced (the former behaviour), and the
  second fit in the same process. Targets: 50x and 100x faster than the authors' PMKL code. That code is not run
  here (it is not part of this project); its times are the issue's: 12 x 0.54 s on Liver and 50 x 0.79 s on Pima.

Except in the fresh processes, every fit runs after a warm-up fit on a few rows (numba compilation and cache loading are not the solver's time),
with the threads this process has. Results, with the machine, in results/bench/tk_targets.json (run on one core:
``taskset -c 0``) or tk_targets_<n>cores.json.

It fails when a fit is wrong (the two dual solvers disagree, a fit stops short of its tolerance, a score is no better
than predicting the mean or the majority class) or when a target is missed, except the targets in KNOWN_UNMET,
whose JSON entry says "met": false and which README lists as not met (the test then fails if one of them is met,
so that README is corrected).
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
# targets measured as not met (README, speed targets table): Airfoil's learned kernel makes a much harder SVR dual
KNOWN_UNMET = {"airfoil"}


def _check_fits(name, tk, yte, task):
    """The two dual solvers solve the same problem: the same score (to 1 %), both certified to their tolerance."""
    key = "mse" if task == "regression" else "accuracy"
    a, b = tk["libsvm"][key], tk["smo"][key]
    assert tk["libsvm"]["converged"] and tk["smo"]["converged"], (name, tk)
    assert abs(a - b) <= 0.01 * max(abs(a), abs(b)), (name, a, b)
    if task == "regression":
        assert a < float(np.var(yte)), (name, a, np.var(yte))  # better than predicting the mean
    else:
        assert a > max(np.mean(yte == c) for c in np.unique(yte)), (name, a)  # better than the majority class


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
                       "relative_gap": float(est.gap_history_[-1]["relative_gap"]),
                       "converged": bool(np.all(est.converged_))}
    return out


def _one_dual_each(Xtr, ytr, scaler):
    """Where the Airfoil ratio comes from: one SVR dual (C = 10, epsilon = 0.1) on the learned TK kernel (the final
    kernel of a fit, centred as the fit solves it) and on the RBF SVR's kernel, each by LIBSVM (precomputed) and by
    our SMO from zero: seconds and iterations. The solvers' speed per iteration against the problems' difficulty."""
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.svm import SVR

    from tkbench import TKRegressor
    from tkbench.methods._shared.smo import smo_dual
    from tkbench.methods.tk.kernel import tk_kernel

    est = TKRegressor(C=10.0, epsilon=0.1, degree=1, delta=0.1, basis="zx", dual_solver="smo").fit(Xtr, ytr)
    X01 = est._scale(Xtr)
    K = tk_kernel(X01, X01, est.P_, est.a_, est.b_, est.degree, est.basis)  # normalize=False: the raw kernel
    K = K - K.mean(axis=0) - K.mean(axis=1)[:, None] + K.mean()
    Xs = scaler.transform(Xtr)
    R = rbf_kernel(Xs, gamma=1.0 / (Xs.shape[1] * Xs.var()))  # gamma "scale", as the RBF SVR above
    out = {}
    for name, kernel in (("tk_final_kernel", K), ("rbf_kernel", R)):
        seconds, lib = _timed(lambda k=kernel: SVR(kernel="precomputed", C=10.0, epsilon=0.1).fit(k, ytr))
        smo_seconds, (sol, _) = _timed(lambda k=kernel: smo_dual(k, ytr, task="regression", C=10.0, epsilon=0.1))
        out[name] = {"libsvm_seconds": seconds, "libsvm_iterations": int(np.sum(lib.n_iter_)),
                     "smo_seconds": smo_seconds, "smo_iterations": int(sol.n_iter),
                     "largest_eigenvalue": float(np.linalg.eigvalsh(kernel)[-1])}
    return out


FRESH = r"""
import json, sys, time
from tkbench import TKClassifier
from tkbench.data import train_test_indices
from tkbench.data.registry import load_dataset
ds = load_dataset(sys.argv[1])
tr, te = train_test_indices(ds.y, test_fraction=0.2, seed=0, stratify=False)
params = dict(C=10.0, delta=0.1, degree=1, basis="x")
t0 = time.perf_counter()
est = TKClassifier(**params).fit(ds.X[tr], ds.y[tr])
t1 = time.perf_counter()
loaded = "numba" in sys.modules
TKClassifier(**params).fit(ds.X[tr], ds.y[tr])
t2 = time.perf_counter()
print(json.dumps({"first_fit_seconds": t1 - t0, "second_fit_seconds": t2 - t1, "m": len(tr),
                  "accuracy": float((est.predict(ds.X[te]) == ds.y[te]).mean()),
                  "numba_imported_by_first_fit": loaded}))
"""


def _fresh_process_fits(name, engine):
    """The first and second TK fit in a new Python process (best first fit of three processes)."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TKBENCH_TK_ENGINE"}
    if engine != "auto":
        env["TKBENCH_TK_ENGINE"] = engine
    runs = [json.loads(subprocess.run([sys.executable, "-c", FRESH, name], env=env, capture_output=True, text=True,
                                      check=True).stdout.strip().splitlines()[-1]) for _ in range(3)]
    return min(runs, key=lambda r: r["first_fit_seconds"])


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
        "m": len(ytr), "rbf_svr": {"seconds": svr_seconds, "mse": svr_mse, "n_iter": int(np.sum(svr[0][1].n_iter_))},
        "tk": tk, "ratio_to_svr": {s: tk[s]["seconds"] / svr_seconds for s in SOLVERS}, "target_ratio": 10.0,
        "one_dual_each": _one_dual_each(Xtr, ytr, scaler)}
    _check_fits("airfoil", tk, yte, "regression")
    report["targets"]["airfoil"]["met"] = min(report["targets"]["airfoil"]["ratio_to_svr"].values()) <= 10.0

    for task, target in (("regression", 8.0), ("classification", 2.0)):
        ds = load_dataset("ccpp", {"task": task} if task == "classification" else None)
        Xtr, ytr, Xte, yte = _split(ds.X, ds.y, test=0.1, size=8000)
        tk = _measure_tk(task, Xtr, ytr, Xte, yte, C=1.0, delta=0.1, degree=1, basis="x", tol=0.01)
        _check_fits(f"ccpp_{task}", tk, yte, task)
        report["targets"][f"ccpp_{task}"] = {"m": len(ytr), "tk": tk, "target_seconds": target,
                                             "met": min(tk[s]["seconds"] for s in SOLVERS) <= target}

    for name, pmkl_seconds, target in (("liver", 12 * 0.54, 50.0), ("pima", 50 * 0.79, 100.0)):
        runs = {engine: _fresh_process_fits(name, engine) for engine in ("auto", "numba")}
        report["targets"][f"{name}_fresh_process"] = {
            **runs, "pmkl_seconds_from_issue": pmkl_seconds, "target_ratio": target,
            "ratio_to_pmkl": {e: pmkl_seconds / r["first_fit_seconds"] for e, r in runs.items()},
            "met": pmkl_seconds / runs["auto"]["first_fit_seconds"] >= target}
        assert runs["auto"]["accuracy"] > 0.5, (name, runs)  # the timed fit is a real one

    cores = report["affinity"]  # one core (taskset -c 0): tk_targets.json; more: tk_targets_<n>cores.json
    path = Path("results/bench/tk_targets.json" if cores == 1 else f"results/bench/tk_targets_{cores}cores.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    met = {name: entry["met"] for name, entry in report["targets"].items()}
    assert met == {name: name not in KNOWN_UNMET for name in met}, met
