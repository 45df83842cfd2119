"""Bad input exits 2 with one message that names the file, the place and what was expected; never a traceback.

The cases of the issue-22 audit: non-UTF-8 / binary / empty / folder configs, a broken dataset registry, a missing
baseline, a folder that is not a results folder, an unwritable or full results folder, values that cannot work.
"""
from __future__ import annotations

import errno
import json
import os
import shutil

import pytest
import yaml
from typer.testing import CliRunner

from tests.conftest import ROOT, tiny_config
from tkbench.bench.store import ResultStore
from tkbench.cli import app


def _invoke(*args: str):
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output + (result.stderr if result.stderr_bytes is not None else "")


def _no_traceback(text: str) -> None:
    assert "Traceback" not in text and 'File "' not in text, text


@pytest.mark.parametrize("content, expected", [
    (b"name: x\n\xff\xfe bad: 1\n", "line 2: byte 0xff at offset 8 is not UTF-8"),
    (b"\x00\x01\x02binary", "a binary file, not a config file"),
    (b"", "the file is empty"),
    (b"# only a comment\n", "the file is empty"),
    (b"name: [unclosed\n", "invalid YAML"),
])
def test_unreadable_configs_exit_2_with_the_problem(tmp_path, content, expected):
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    code, text = _invoke("run", str(path), "--dry-run")
    assert code == 2, text
    assert str(path) in text.replace("\n", "") and expected in text.replace("\n", " ")
    assert ": None:" not in text  # the message names what was found, not None
    _no_traceback(text)


def test_a_folder_given_as_the_config(tmp_path):
    code, text = _invoke("run", str(tmp_path), "--dry-run")
    assert code == 2 and "a folder, not a config file" in text
    _no_traceback(text)


def test_a_yaml_syntax_error_says_where_and_what_was_found(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nprotocol: {splits: 3\ndatasets: [liver]\n")
    code, text = _invoke("run", str(path), "--dry-run")
    assert code == 2 and "line 3, column" in text and "invalid YAML" in text
    _no_traceback(text)


def test_a_missing_scaling_section_does_not_print_the_whole_config(write_config):
    cfg = tiny_config(kind="scaling")
    code, text = _invoke("run", str(write_config(cfg)), "--dry-run")
    assert code == 2 and "needs a 'scaling' section" in text
    assert "'protocol'" not in text and "liver" not in text  # the config itself is not "the value"


def test_a_broken_dataset_registry_exits_2(tmp_path, monkeypatch, write_config):
    folder = tmp_path / "datasets"
    folder.mkdir()
    (folder / "registry.yaml").write_text("datasets:\n  liver: {files: [\n")
    monkeypatch.setenv("TKBENCH_DATASETS", str(folder))
    from tkbench.data import registry

    registry._load_registry_file.cache_clear()
    try:
        code, text = _invoke("datasets", "list")
        assert code == 2 and "registry.yaml" in text and "invalid YAML" in text
        _no_traceback(text)
        (folder / "registry.yaml").write_text("- just\n- a list\n")
        registry._load_registry_file.cache_clear()
        code, text = _invoke("datasets", "list")
        assert code == 2 and "not a dataset registry" in text
    finally:
        registry._load_registry_file.cache_clear()


def test_check_with_a_missing_baseline_or_a_non_results_folder_exits_2(tmp_path):
    smoke = ROOT / "results" / "baselines" / "smoke.json"
    code, text = _invoke("check", str(tmp_path), "--baseline", str(smoke))
    assert code == 2 and "not a results folder" in text  # (1 is a real regression)
    folder = tmp_path / "r"
    (folder / "rows").mkdir(parents=True)
    shutil.copy(ROOT / "configs" / "smoke.yaml", folder / "config.yaml")
    code, text = _invoke("check", str(folder), "--baseline", str(tmp_path / "nope.json"))
    assert code == 2 and "baseline file not found" in text
    (tmp_path / "broken.json").write_text("{")
    code, text = _invoke("check", str(folder), "--baseline", str(tmp_path / "broken.json"))
    assert code == 2 and "not valid JSON" in text
    _no_traceback(text)


def test_an_unwritable_results_folder_is_refused_before_any_run(write_config, tmp_path):
    path = write_config(tiny_config())
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    code, text = _invoke("run", str(path), "--out", str(blocker / "out"), "--no-progress")
    assert code == 2 and "cannot write results there" in text, text
    _no_traceback(text)
    if os.geteuid() != 0:  # (root writes through permissions; the path through a file above covers it)
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        try:
            code, text = _invoke("run", str(path), "--out", str(ro / "out"), "--no-progress")
            assert code == 2 and "permission denied" in text
        finally:
            ro.chmod(0o755)


def test_a_full_disk_stops_the_sweep_with_a_message_and_keeps_the_rows(write_config, tmp_path, monkeypatch):
    """Rows are written by the sweep's main process, so a full disk surfaces there: the sweep stops at the first
    failed write (exit 2, one message), rows written before stay, and a re-run resumes."""
    cfg = tiny_config()
    cfg["datasets"] = ["liver"]
    cfg["methods"] = [cfg["methods"][1]]
    path = write_config(cfg)
    out = tmp_path / "out"
    real = ResultStore.write_row
    calls = {"n": 0}

    def write_then_fill(self, row):
        calls["n"] += 1
        if calls["n"] > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, row)

    monkeypatch.setattr(ResultStore, "write_row", write_then_fill)
    code, text = _invoke("run", str(path), "--out", str(out), "--no-progress")
    assert code == 2 and "the disk is full" in text and "run the same command again to resume" in text, text
    _no_traceback(text)
    assert len(ResultStore(out).rows()) == 1
    monkeypatch.setattr(ResultStore, "write_row", real)
    code, text = _invoke("run", str(path), "--out", str(out), "--no-progress")
    assert code == 0 and "1 already done" in text.replace("\n", " ")
    assert len(ResultStore(out).rows()) == 3


def test_a_second_sweep_into_a_locked_folder_is_refused(write_config, tmp_path):
    path = write_config(tiny_config())
    out = tmp_path / "out"
    with ResultStore(out).lock():
        code, text = _invoke("run", str(path), "--out", str(out), "--no-progress")
        assert code == 3 and "in use by another `tkbench run`" in text and f"pid {os.getpid()}" in text
        _no_traceback(text)
        dry, _ = _invoke("run", str(path), "--out", str(out), "--dry-run")
        assert dry == 0  # looking is fine while a sweep runs
    assert not (out / "rows").exists() or not list((out / "rows").glob("*.json"))


def test_default_results_folder_does_not_depend_on_the_working_directory(tmp_path, monkeypatch):
    from tkbench.bench.runner import default_out_dir
    from tkbench.config import load_config

    project = tmp_path / "project"
    (project / "configs").mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    cfg = tiny_config(name="where")
    (project / "configs" / "where.yaml").write_text(yaml.safe_dump(cfg))
    exp = load_config(project / "configs" / "where.yaml")
    for cwd in (tmp_path, project, project / "configs"):
        monkeypatch.chdir(cwd)
        assert default_out_dir(exp) == project / "results" / "where"
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "x.yaml").write_text(yaml.safe_dump(cfg))
    assert default_out_dir(load_config(alone / "x.yaml")) == alone / "results" / "where"


def test_the_report_hint_names_the_folder_actually_written(write_config, tmp_path, monkeypatch):
    cfg = tiny_config()
    cfg["datasets"] = ["liver"]
    cfg["methods"] = [cfg["methods"][1]]
    cfg["protocol"]["splits"] = 1
    path = write_config(cfg)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    code, text = _invoke("run", str(path), "--no-progress")
    assert code == 0
    assert f"tkbench report {tmp_path / 'results' / 'tiny'}" in text.replace("\n", "")
    assert json.loads((tmp_path / "results" / "tiny" / "meta.json").read_text())["config_source"]


@pytest.mark.parametrize("method, expected", [
    ({"name": "svm", "family": "svm_rbf", "params": {"C": "ten"}}, "methods[0].params.C: 'ten': a float in the range"),
    ({"name": "svm", "family": "svm_rbf", "grid": {"C": ["one", "two"]}}, "methods[0].grid.C[0]: 'one'"),
    ({"name": "rf", "family": "random_forest", "grid": {"n_estimators": [10, "many"]}},
     "methods[0].grid.n_estimators[1]: 'many'"),
    ({"name": "tk", "family": "tk", "params": {"C": "big"}}, "methods[0].params.C: 'big': a float in the range (0.0, inf) (C)"),
    ({"name": "svm", "family": "svm_rbf", "params": {"epsilon": 0.1}},
     "a parameter of svm_rbf for regression only, and this config's datasets are classification"),
])
def test_parameters_of_the_wrong_type_or_task_are_refused_before_running(write_config, method, expected):
    code, text = _invoke("run", str(write_config(tiny_config(methods=[method]))), "--dry-run")
    assert code == 2 and expected in text.replace("\n", ""), text
    _no_traceback(text)


def test_numbers_in_text_options_stay_accepted(write_config):
    """A parameter whose default is a number but which also takes a word (NKRR's mu0: 'uniform') is accepted."""
    cfg = tiny_config(methods=[{"name": "nk", "family": "nkrr", "params": {"mu0": "uniform"}, "grid": {}}])
    code, text = _invoke("run", str(write_config(cfg)), "--dry-run")
    assert code == 0, text
    cfg["methods"][0]["params"]["mu0"] = "flat"
    code, text = _invoke("run", str(write_config(cfg)), "--dry-run")
    assert code == 2 and "methods[0].params.mu0: 'flat'" in text


def test_cv_folds_larger_than_a_training_part_are_refused(write_config):
    cfg = tiny_config()
    cfg["datasets"] = [{"name": "liver", "subsample": 20}]
    cfg["protocol"]["cv_folds"] = 16  # 20 rows, test fraction 0.25: 15 training rows
    code, text = _invoke("run", str(write_config(cfg)), "--dry-run")
    assert code == 2 and "protocol.cv_folds: 16: at most 15: the training part of liver split 0" in \
        text.replace("\n", ""), text
    cfg["protocol"]["cv_folds"] = 15
    code, text = _invoke("run", str(write_config(cfg)), "--dry-run")
    assert code == 0, text


def test_bad_data_leaves_no_results_folder_behind(write_config, tmp_path):
    cfg = tiny_config()
    cfg["datasets"] = [{"name": "liver", "subsample": 5000}]
    out = tmp_path / "out"
    code, text = _invoke("run", str(write_config(cfg)), "--out", str(out), "--no-progress")
    assert code == 2 and "at most 345" in text and not out.exists()
