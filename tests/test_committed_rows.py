"""The committed result rows stay findable: a change to the run spec (a new field, a new default) must not change
the keys of runs already stored, or every committed table would silently be re-run (bench.plan.OPTIONAL_FIELDS)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tkbench.bench.plan import make_plan
from tkbench.config import load_config

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = sorted(p.parent.parent for p in (ROOT / "results").glob("*/rows/*.json")
                 if (ROOT / "configs" / f"{p.parent.parent.name}.yaml").exists())
FOLDERS = sorted(set(FOLDERS))


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_committed_rows_are_runs_of_their_config(folder: Path):
    plan = {spec.key for spec in make_plan(load_config(ROOT / "configs" / f"{folder.name}.yaml"))}
    stored = {p.stem for p in (folder / "rows").glob("*.json")}
    found = len(plan & stored)
    # rows of earlier grids may stay beside the current ones; most stored rows must still be current runs
    assert found >= min(len(plan), len(stored)) / 2, f"{folder.name}: {found} of {len(stored)} rows in the plan"
