"""Issue 51: a config may mix classification-only methods with regression datasets (and the reverse). A method
runs on the datasets whose task its family supports, or on those it names; the plan, the dry run and the report
say which (dataset, method) pairs are empty and why; a named dataset of the wrong task is a config error."""
from __future__ import annotations

import pytest

from tkbench.bench.plan import empty_cells, make_plan
from tkbench.config import ConfigError, load_config


def _config(methods, datasets=("sonar", "airfoil")):
    return {"name": "mix", "kind": "accuracy",
            "protocol": {"splits": 2, "seed": 1, "cv_folds": 2, "subsample": 120},
            "datasets": list(datasets), "methods": methods}


SIKL = {"name": "SIKL", "family": "sikl", "params": {"variant": "cm", "T1": 20, "T3": 10}, "grid": {"beta": [1.0]}}
SVM = {"name": "SVM", "family": "svm_rbf", "grid": {"C": [1.0]}}
GP = {"name": "GP", "estimator": "sklearn.gaussian_process.GaussianProcessRegressor", "grid": {}}


def test_a_classification_only_method_beside_a_regression_dataset_runs_where_it_can(write_config):
    exp = load_config(write_config(_config([SIKL, SVM, GP])))
    cells = {(s.label, s.method) for s in make_plan(exp)}
    assert cells == {("sonar", "SIKL"), ("sonar", "SVM"), ("airfoil", "SVM"), ("airfoil", "GP")}
    assert empty_cells(exp) == [
        ("airfoil", "SIKL", "regression: sikl supports classification"),
        ("sonar", "GP", "classification: estimator:sklearn.gaussian_process.GaussianProcessRegressor supports "
                        "regression")]


def test_a_named_dataset_of_the_wrong_task_and_a_method_with_no_task_of_the_config_are_errors(write_config):
    named = {**SIKL, "datasets": ["sonar", "airfoil"]}
    with pytest.raises(ConfigError) as info:
        load_config(write_config(_config([named, SVM])))
    assert "methods[0].datasets: 'airfoil'" in str(info.value) and "airfoil is regression" in str(info.value)
    with pytest.raises(ConfigError) as info:
        load_config(write_config(_config([SIKL, SVM], datasets=("airfoil",))))
    assert "a family that supports regression" in str(info.value)
    # naming only datasets of its task is fine, and its parameters are checked against that task's estimator
    exp = load_config(write_config(_config([{**SIKL, "datasets": ["sonar"]}, SVM])))
    assert [s.label for s in make_plan(exp) if s.method == "SIKL"] == ["sonar", "sonar"]


def test_the_dry_run_lists_the_empty_pairs_and_a_sweep_counts_them(write_config, tmp_path):
    from io import StringIO

    from rich.console import Console

    from tkbench.bench.runner import _print_empty, run_experiment

    exp = load_config(write_config(_config([SIKL, SVM, GP, {**SVM, "name": "SVM_air", "datasets": ["airfoil"]}])))
    buffer = StringIO()
    run_experiment(exp, out_dir=tmp_path / "out", dry_run=True, console=Console(file=buffer, width=200))
    text = buffer.getvalue()
    assert "not planned: airfoil / SIKL (regression: sikl supports classification)" in text
    assert "not planned: sonar / GP" in text
    assert "not planned: sonar / SVM_air (not in SVM_air's datasets)" in text  # a method naming its datasets
    buffer = StringIO()
    _print_empty(Console(file=buffer, width=200), exp, listing=False)  # what a sweep prints before its runs
    text = buffer.getvalue()
    assert "2 (dataset, method) pair(s) not planned: the dataset's task" in text
    assert "1 (dataset, method) pair(s) not planned: not in the method's datasets" in text


def test_the_report_leaves_empty_pairs_out_of_its_tables_and_names_them(write_config, tmp_path):
    from tkbench.bench.runner import run_experiment
    from tkbench.report.aggregate import load_results, summarize
    from tkbench.report.checks import empty_notes

    exp = load_config(write_config(_config([SVM, GP])))
    run_experiment(exp, out_dir=tmp_path / "out", progress=False)
    res = load_results(tmp_path / "out")
    table = summarize(res)
    assert set(zip(table["dataset"], table["method"], strict=True)) == {("sonar", "SVM"), ("airfoil", "SVM"),
                                                                         ("airfoil", "GP")}
    assert (table["n_ok"] == 2).all()
    assert empty_notes(res) == ["GP not run on sonar: estimator:sklearn.gaussian_process.GaussianProcessRegressor "
                                "supports regression (not these datasets' task)."]
