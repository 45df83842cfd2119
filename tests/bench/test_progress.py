"""The one rule for a finished run (tkbench.bench.progress), shared by the report's progress, the leaderboard and
the committed-rows test: ok, failed and timed-out runs are finished; crashed and missing runs are left to do."""
from __future__ import annotations

from tests.conftest import tiny_config
from tkbench.bench.plan import make_plan
from tkbench.bench.progress import unfinished
from tkbench.config import load_config


def test_outcomes_finish_a_run_crashes_and_missing_rows_do_not(write_config):
    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"]["splits"] = 5
    exp = load_config(write_config(cfg))
    plan = [s for s in make_plan(exp) if s.method == "svm"]
    statuses = ["ok", "failed", "timeout", "crashed"]  # split 4: no row
    rows = [{"key": s.key, "status": st} for s, st in zip(plan, statuses, strict=False)]
    rows.append({"key": "not-of-this-plan", "status": "crashed"})
    left = unfinished(exp, plan, rows)
    assert [s.split for s in left] == [3, 4]
    assert unfinished(exp, plan, []) == plan
