"""Your own CSV file as a dataset in a config (``{csv: ..., target: ..., task: ...}``, tkbench.data.user_csv)."""
from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from tkbench.bench.plan import make_plan
from tkbench.bench.runner import run_experiment
from tkbench.bench.store import ResultStore
from tkbench.cli import app
from tkbench.config import load_config
from tkbench.data.registry import sha256_file
from tkbench.errors import ConfigError


def _project(folder, **entry):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    table = pd.DataFrame(X, columns=["a", "b", "c"])
    table["id"] = [f"row{i}" for i in range(80)]
    table["label"] = np.where(X[:, 0] + 0.2 * rng.normal(size=80) > 0, "yes", "no")
    table["y"] = 2 * X[:, 1] + 0.1 * rng.normal(size=80)
    (folder / "data").mkdir(parents=True)
    table.to_csv(folder / "data" / "mine.csv", index=False)
    cfg = {"name": "own", "protocol": {"splits": 2, "cv_folds": 2, "seed": 3},
           "datasets": [{"csv": "data/mine.csv", "target": "label", "task": "classification", "positive": "yes",
                         "drop": ["id", "y"], **entry},
                        {"csv": "data/mine.csv", "alias": "mine_reg", "target": "y", "task": "regression",
                         "drop": ["id", "label"]}],
           "methods": [{"name": "rf", "family": "random_forest", "params": {"n_estimators": 20}, "grid": {}}]}
    (folder / "own.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return folder / "own.yaml"


def test_a_csv_dataset_runs_reports_and_records_its_checksum(tmp_path):
    path = _project(tmp_path / "p")
    exp = load_config(path)
    assert [d.label for d in exp.datasets] == ["mine", "mine_reg"]
    out = tmp_path / "p" / "results" / "own"
    outcome = run_experiment(exp, out_dir=out, progress=False)
    assert outcome.counts["ok"] == 4
    rows = ResultStore(out).rows()
    digest = sha256_file(tmp_path / "p" / "data" / "mine.csv")
    assert {r["spec"]["options"]["sha256"] for r in rows} == {digest}
    by = {r["dataset"]: r for r in rows}
    assert by["mine"]["task"] == "classification" and by["mine"]["n_features"] == 3
    assert by["mine_reg"]["metric"] == "mse" and by["mine"]["n_train"] + by["mine"]["n_test"] == 80
    result = CliRunner().invoke(app, ["report", str(out), "--format", "md"])
    assert result.exit_code == 0, result.output
    # the run keys do not depend on where the project lies: a copy elsewhere finds its rows done
    shutil.copytree(tmp_path / "p", tmp_path / "q")
    moved = load_config(tmp_path / "q" / "own.yaml")
    assert {s.key for s in make_plan(moved)} == {s.key for s in make_plan(exp)}
    assert run_experiment(moved, out_dir=tmp_path / "q" / "results" / "own", progress=False).executed == 0


def test_a_changed_csv_is_found_on_resume(tmp_path):
    path = _project(tmp_path)
    out = tmp_path / "results" / "own"
    run_experiment(load_config(path), out_dir=out, progress=False)
    with open(tmp_path / "data" / "mine.csv", "a") as fh:
        fh.write("0.1,0.2,0.3,extra,yes,0.5\n")
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out), "--no-progress"])
    assert result.exit_code == 2 and "changed since rows of" in result.output
    forced = CliRunner().invoke(app, ["run", str(path), "--out", str(out), "--no-progress", "--force"])
    assert forced.exit_code == 0, forced.output


@pytest.mark.parametrize("entry, message", [
    ({"csv": "data/nope.csv"}, "a CSV file that exists"),
    ({"name": "liver"}, "either 'name' (a registered dataset) or 'csv'"),
    ({"task": None}, "needs 'target' (the column) and 'task'"),
    ({"task": "regression"}, "positive / threshold define classes"),
])
def test_bad_csv_entries_are_config_errors(tmp_path, entry, message):
    path = _project(tmp_path, **entry)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(path)


def test_csv_content_problems_stop_before_any_run(tmp_path):
    path = _project(tmp_path, target="nope")
    result = CliRunner().invoke(app, ["run", str(path), "--dry-run"])
    assert result.exit_code == 2 and "target column 'nope' not in the header" in result.output
    path = _project(tmp_path / "b", drop=["y"])  # the text column 'id' is left as a feature
    result = CliRunner().invoke(app, ["run", str(path), "--dry-run"])
    assert result.exit_code == 2 and "not numeric" in result.output and "'drop'" in result.output


def test_label_rule_fields_need_a_csv(write_config):
    cfg = {"name": "x", "datasets": [{"name": "liver", "target": "selector"}],
           "methods": [{"name": "rf", "family": "random_forest"}]}
    with pytest.raises(ConfigError, match="only with 'csv'"):
        load_config(write_config(cfg))


def test_readmes_positive_yes_example_is_read_as_the_label_yes(tmp_path):
    """Issue 48: YAML reads `positive: [yes]` (README's example) as the boolean True, which matched no label: every
    row became -1. A boolean stands for the label spellings it came from."""
    from tkbench.data import load_dataset

    path = _project(tmp_path / "p")
    text = path.read_text().replace("positive: 'yes'", "positive: [yes]")
    assert "positive: [yes]" in text
    path.write_text(text)
    exp = load_config(path)
    assert exp.datasets[0].options["positive"] == [True]
    data = load_dataset("csv", exp.datasets[0].options)
    labels = pd.read_csv(tmp_path / "p" / "data" / "mine.csv")["label"].to_numpy()
    np.testing.assert_array_equal(data.y, np.where(labels == "yes", 1, -1))
