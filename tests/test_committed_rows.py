"""The committed result rows stay findable and complete.

- A change to the run spec (a new field, a new default) must not change the keys of runs already stored, or every
  committed table would silently be re-run (tkbench.keys.LATE_FIELDS).
- Every planned run of every config whose rows are committed has its row (ok, failed or timed out: an outcome),
  unless it is named in INCOMPLETE with the reason; a config whose runs are all done must not be listed there.
"""
from __future__ import annotations

import json
from fnmatch import fnmatch
from pathlib import Path

import pytest

from tkbench.bench.plan import make_plan
from tkbench.bench.progress import unfinished
from tkbench.config import load_config

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = sorted({p.parent.parent for p in (ROOT / "results").glob("*/rows/*.json")
                  if (ROOT / "configs" / f"{p.parent.parent.name}.yaml").exists()})
# config name -> {"dataset/method": why its planned runs are not all stored}; empty while every plan is complete
INCOMPLETE: dict[str, dict[str, str]] = {}
# config name -> {"dataset/method" glob: why the cell is still sweeping}; empty while no sweep is under way
IN_PROGRESS: dict[str, dict[str, str]] = {}


def missing_runs(folder: Path) -> dict[str, list[int]]:
    """"dataset/method" -> the planned splits of that cell that have no row with an outcome in ``folder``
    (tkbench.bench.progress: the report's rule)."""
    exp = load_config(ROOT / "configs" / f"{folder.name}.yaml")
    plan = make_plan(exp)
    stored = [json.loads(p.read_text(encoding="utf-8")) for p in (folder / "rows").glob("*.json")]
    out: dict[str, list[int]] = {}
    for spec in unfinished(exp, plan, stored):
        out.setdefault(f"{spec.label}/{spec.method}", []).append(spec.split)
    return out


def test_the_folders_were_found():
    assert len(FOLDERS) >= 25, [f.name for f in FOLDERS]


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_every_planned_run_of_a_committed_config_has_its_row(folder: Path):
    missing = missing_runs(folder)
    excused = INCOMPLETE.get(folder.name, {})
    sweeping = IN_PROGRESS.get(folder.name, {})
    unexplained = {cell: splits for cell, splits in missing.items()
                   if cell not in excused and not any(fnmatch(cell, p) for p in sweeping)}
    done = sorted(p for p in sweeping if not any(fnmatch(cell, p) for cell in missing))
    assert not done, f"{folder.name}: IN_PROGRESS names cells whose runs are all stored now: {done}"
    assert not unexplained, f"{folder.name}: planned runs without a row (resume the sweep, or name them in " \
                            f"INCOMPLETE with the reason): {unexplained}"
    assert set(excused) <= set(missing), f"{folder.name}: INCOMPLETE names cells that are complete now: " \
                                         f"{sorted(set(excused) - set(missing))}"


def test_missing_runs_are_found(tmp_path):
    """The check above can fail: a copy of a committed folder with one row removed reports that run."""
    import shutil

    name = "cortes2009_figure1"
    folder = tmp_path / name
    shutil.copytree(ROOT / "results" / name / "rows", folder / "rows")
    assert missing_runs(folder) == {}
    victim = sorted((folder / "rows").glob("*.json"))[0]
    row = json.loads(victim.read_text(encoding="utf-8"))
    victim.unlink()
    assert missing_runs(folder) == {f"{row['dataset']}/{row['method']}": [row["split"]]}
