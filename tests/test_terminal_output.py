"""What tkbench prints keeps what a user must type or read: whole names in narrow terminals, error messages
shortened at word boundaries only."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

from tkbench.errors import first_line
from tkbench.report.build import build_report
from tkbench.terminal import keep_whole


def _render(table: Table) -> str:
    console = Console(width=60, record=True, force_terminal=False)
    console.print(table)
    return console.export_text()


def _table() -> Table:
    table = Table(title="summary")
    for col in ("dataset", "method", "description"):
        table.add_column(col)
    table.add_row("breast_cancer_wisconsin", "simplemkl_tk_plus", "a long free text " * 8)
    return table


def test_narrow_terminal_tables_keep_names_whole():
    assert "breast_cancer_wisconsin" not in _render(_table())  # rich alone cuts it: what the helper is for
    text = _render(keep_whole(_table(), "dataset", "method"))
    assert "breast_cancer_wisconsin" in text and "simplemkl_tk_plus" in text


def test_first_line_never_cuts_a_word():
    message = "ValueError: " + " ".join(f"word{i:03d}" for i in range(100)) + "\nsecond line"
    short = first_line(message, 80)
    assert len(short) <= 80 and short.endswith(" …")
    assert all(part.startswith("word") or part in ("ValueError:", "…") for part in short.split())
    assert first_line("short message\nmore", 80) == "short message"


def test_report_notes_show_failed_runs_errors_at_word_boundaries(results_folder):
    cfg = {"name": "words", "protocol": {"splits": 2, "seed": 1}, "datasets": ["liver"],
           "methods": [{"name": "svm", "family": "svm_rbf"}]}
    exp, store, out = results_folder(cfg)
    from tkbench.bench.plan import make_plan

    error = "RuntimeError: " + " ".join(["supercalifragilistic"] * 40)
    for spec in make_plan(exp):
        store.write_row({"key": spec.key, "dataset": spec.label, "method": spec.method, "split": spec.split,
                         "task": spec.task, "status": "failed", "error": error})
    build_report(out, formats=["md"])
    md = (out / "report" / "report.md").read_text()
    line = next(x for x in md.splitlines() if "not ok:" in x)
    shown = line.split("not ok: ", 1)[1]
    assert shown.endswith("…") and all(w in ("RuntimeError:", "supercalifragilistic", "…")
                                       for w in shown.rstrip(" |").split())
    assert {r["error"] for r in store.rows()} == {error}  # the full message stays in the rows


def test_methods_lists_a_familys_parameters_with_defaults_and_meaning():
    from typer.testing import CliRunner

    from tkbench.cli import app

    result = CliRunner().invoke(app, ["methods", "tk"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    line = next(x for x in result.output.splitlines() if x.startswith("│ C "))
    assert "1.0" in line and "[0.1, 1.0, 10.0, 100.0]" in line and "SVM penalty" in line
    assert CliRunner().invoke(app, ["methods", "nope"]).exit_code == 2
    assert CliRunner().invoke(app, ["methods", "sikl", "--task", "regression"]).exit_code == 2


def test_every_parameter_of_every_family_has_a_meaning():
    """The meanings come from the estimators' docstrings: a new parameter without one fails here."""
    from tkbench.methods import visible_families
    from tkbench.methods.describe import parameters

    missing = [f"{fam.name}.{p.name} ({task})" for fam in visible_families() for task in fam.tasks
               for p in parameters(fam, task) if not p.meaning and p.name != "solver"]
    assert missing == []


def test_make_run_writes_and_reports_the_folder_of_the_config_file_name(tmp_path):
    """`make run CONFIG=x.yaml` with a config whose `name:` differs from the file name: the run and its report use
    the same folder (results/<file name>), so the report finds the rows."""
    import shutil
    import subprocess

    from conftest import ROOT

    if shutil.which("make") is None:
        import pytest

        pytest.skip("make is not installed")
    plan = subprocess.run(["make", "-n", "-s", "run", "CONFIG=configs/elsewhere/my_file.yaml"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    lines = [x for x in plan.stdout.splitlines() if "tkbench run" in x or "tkbench report" in x]
    assert len(lines) == 2, plan.stdout
    assert "--out results/my_file" in lines[0] and lines[1].endswith("report results/my_file")


# --- issue 48: what a new user reads, sent to a pipe --------------------------------------------------------------

def _piped(argv: list[str]) -> subprocess.CompletedProcess:
    """``argv`` run as a pipe gets it (a subprocess: the console is made for its real stdout, and no ``COLUMNS``
    from the test's environment), asserting it succeeded."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    run = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return run


def _cli(*args: str) -> str:
    """One command's output, from the installed command as a user types it."""
    script = Path(sys.executable).parent / "tkbench"
    run = _piped([*([str(script)] if script.exists() else [sys.executable, "-m", "tkbench"]), *args])
    return run.stdout + run.stderr


@pytest.mark.slow
def test_methods_piped_shows_grids_and_plain_meanings_whole():
    text, hgk, tk = _cli_many("methods", "methods hgk", "methods tk")
    hgk_row = "".join(line for line in text.splitlines() if "│" in line)
    assert "architecture:" in text and "[inhomogeneous," in hgk_row and "depth2:16] (7)" in hgk_row
    assert "…" not in text
    assert ":mod:" not in hgk and "``" not in hgk and ":func:" not in hgk
    assert "input scaling: by the estimator: min-max to [0, 1]^n" in " ".join(tk.split())


_SEPARATOR = "=== next command ==="
_MANY = """
import sys
from tkbench.cli import app
for args in sys.argv[2:]:
    try:
        app(args.split(), prog_name="tkbench", standalone_mode=False)
    except SystemExit as exc:
        if exc.code:
            raise
    sys.stdout.flush()
    print(sys.argv[1], flush=True)
"""


def _cli_many(*commands: str) -> list[str]:
    """The outputs of several commands as a pipe gets them, from one interpreter (each command's imports paid once:
    about 4 s of CPU each for ``methods``)."""
    outputs = _piped([sys.executable, "-c", _MANY, _SEPARATOR, *commands]).stdout.split(_SEPARATOR + "\n")
    assert len(outputs) == len(commands) + 1 and outputs[-1] == "", outputs
    return outputs[:-1]


@pytest.mark.slow
def test_datasets_list_and_show_say_what_a_user_meets():
    listing, show = _cli_many("datasets list", "datasets show raetsch_banana")
    assert any("raetsch_banana" in line and "400 + 4900 per realisation (10 of 100)" in line
               for line in listing.splitlines())
    assert any("gas_turbine" in line and "36733" in line for line in listing.splitlines())
    assert "source: datasets/MANIFEST.yaml, entry raetsch_ida" in show and "source:  (" not in show


def test_help_reads_as_click_help_on_one_line_per_option():
    text = _cli("run", "--help")
    assert "run [OPTIONS] CONFIG" in text and "{" not in text and "<bool>" not in text
    assert "--only PATTERN" in text and "--force " in text
    assert any(line.strip().startswith("--only PATTERN") and "liver/svm*" in line for line in text.splitlines())


def test_a_piped_log_line_is_not_wrapped(tmp_path):
    import yaml

    cfg = {"name": "logline", "protocol": {"splits": 1, "seed": 1}, "datasets": ["liver"],
           "methods": [{"name": "rf", "family": "random_forest", "params": {"n_estimators": 5}, "grid": {}}]}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    text = _cli("run", str(path), "--out", str(tmp_path / "out"), "--no-progress")
    first = next(line for line in text.splitlines() if line.startswith("logline:"))
    assert "runs planned" in first and "BLAS thread(s) each ->" in first, text
