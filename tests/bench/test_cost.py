"""The dry run's cost estimate (tkbench.bench.cost, issue 50): from finished rows of the same runs, else of the same
family and size, never from failed rows; a cell with neither says so."""
from __future__ import annotations

import json

from rich.console import Console

from tests.conftest import tiny_config
from tkbench.bench.cost import estimate, finished_rows
from tkbench.bench.plan import make_plan
from tkbench.bench.runner import run_experiment
from tkbench.bench.store import ResultStore
from tkbench.config import load_config


def test_estimates_come_from_finished_rows_of_the_same_runs_then_the_same_family(write_config, tmp_path):
    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"]["splits"] = 2
    exp = load_config(write_config(cfg))
    done = tmp_path / "results" / "done"
    run_experiment(exp, out_dir=done, n_jobs=1, progress=False)
    rows = {r["method"]: r for r in ResultStore(done).rows()}
    # a failed row is never a basis: make one row of rf not ok, with an absurd time
    bad = dict(rows["rf"], status="failed", total_seconds=1e9)
    (done / "rows" / f"{bad['key']}.json").write_text(json.dumps(bad))

    more = tiny_config(datasets=["liver"])
    more["protocol"]["splits"] = 4  # splits 2-3 are new runs of the same cells
    more["methods"].append({"name": "svm_wide", "family": "svm_rbf", "grid": {"C": [1.0, 100.0], "gamma": [1.0]}})
    more["methods"].append({"name": "nn", "family": "neural_net", "params": {"max_iter": 50}})
    plan = make_plan(load_config(write_config(more, "more.yaml")))
    pending = [s for s in plan if s.split >= 2 or s.method in ("svm_wide", "nn")]
    found = finished_rows(tmp_path / "results" / "new")
    assert all(r["status"] == "ok" for r in found) and len(found) == 3  # 2 svm + 1 rf (the other rf failed)
    est = estimate(pending, found)
    svm_seconds = sorted(r["total_seconds"] for r in ResultStore(done).rows() if r["method"] == "svm")
    assert est[("liver", "svm")].basis == "same runs" and est[("liver", "svm")].n_rows == 2
    assert est[("liver", "svm")].seconds == sum(svm_seconds) / 2  # the median of two
    assert est[("liver", "rf")].n_rows == 1 and est[("liver", "rf")].seconds < 1e9
    assert est[("liver", "svm_wide")].basis == "same family and size"  # another grid, the same family and data
    assert est[("liver", "nn")] is None  # no row of that family


def test_dry_run_prints_the_estimate_and_what_it_leaves_out(write_config, tmp_path):
    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"]["splits"] = 1
    exp = load_config(write_config(cfg))
    run_experiment(exp, out_dir=tmp_path / "results" / "a", n_jobs=1, progress=False)
    cfg["protocol"]["splits"] = 3
    cfg["methods"].append({"name": "nn", "family": "neural_net", "params": {"max_iter": 50}})
    console = Console(record=True, width=200)
    run_experiment(load_config(write_config(cfg, "b.yaml")), out_dir=tmp_path / "results" / "b", dry_run=True,
                   console=console, progress=False)
    text = " ".join(console.export_text().split())
    assert "1 rows, same runs" in text and "no rows" in text and "estimated" in text
    assert "1 cell(s) with no such rows are not counted" in text
