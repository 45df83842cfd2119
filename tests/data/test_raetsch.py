"""Datasets with fixed train/test realisations (the Raetsch/IDA benchmark of paper 004)."""
from __future__ import annotations

import io
import lzma
import tarfile

import numpy as np
import pytest

from tests.conftest import ROOT, tiny_config
from tkbench.config import load_config
from tkbench.data.registry import fixed_split, load_dataset, realisation_count
from tkbench.errors import ChecksumError, ConfigError, DatasetError

SIZES = {"banana": (400, 4900, 2), "breast_cancer": (200, 77, 9), "german": (700, 300, 20), "heart": (170, 100, 13),
         "image": (1300, 1010, 18), "ringnorm": (400, 7000, 20), "titanic": (150, 2051, 3),
         "waveform": (400, 4600, 21)}


@pytest.mark.parametrize("name", sorted(SIZES))
def test_realisations_have_the_literature_sizes(name):
    n_train, n_test, d = SIZES[name]
    ds = load_dataset(f"raetsch_{name}")
    assert realisation_count(f"raetsch_{name}") == 10
    assert ds.X.shape == (10 * (n_train + n_test), d) and set(np.unique(ds.y)) == {-1, 1}
    train, test = fixed_split(ds, 0)
    assert (len(train), len(test)) == (n_train, n_test)
    assert not set(train) & set(test)


def test_split_i_is_realisation_i_plus_1():
    ds = load_dataset("raetsch_heart")
    with tarfile.open(ROOT / "datasets" / "raetsch" / "heart.tar.xz") as tar:
        raw = tar.extractfile("heart/heart_train_data_3.asc").read()
        labels = tar.extractfile("heart/heart_test_labels_3.asc").read()
    train, test = fixed_split(ds, 2)
    np.testing.assert_array_equal(ds.X[train], np.loadtxt(io.BytesIO(raw)))
    np.testing.assert_array_equal(ds.y[test], np.loadtxt(io.BytesIO(labels)).astype(int))
    with pytest.raises(DatasetError, match="has 10 fixed realisations; split 10"):
        fixed_split(ds, 10)


def test_a_changed_member_is_refused(copied_datasets):
    """The archive's own checksum is in the registry; a rebuilt archive with one changed member (and the registry
    updated to the new archive) still fails on the member's original-bytes checksum."""
    import hashlib

    import yaml

    dest = copied_datasets
    src = dest / "raetsch" / "heart.tar.xz"
    with tarfile.open(src) as tar:
        members = [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as out:
        for m, data in members:
            if m.name == "heart/heart_train_labels_1.asc":
                data = data.replace(b"-1.0", b"+1.0", 1)
                m.size = len(data)
            out.addfile(m, io.BytesIO(data) if data is not None else None)
    src.write_bytes(lzma.compress(buf.getvalue()))
    reg = yaml.safe_load((dest / "registry.yaml").read_text())
    reg["datasets"]["raetsch_heart"]["files"][0]["sha256"] = hashlib.sha256(src.read_bytes()).hexdigest()
    (dest / "registry.yaml").write_text(yaml.safe_dump(reg, sort_keys=False))
    with pytest.raises(ChecksumError, match="heart_train_labels_1.asc' has sha256 .* \\(original bytes\\)"):
        load_dataset("raetsch_heart")


def test_more_splits_than_realisations_is_a_config_error(write_config):
    cfg = tiny_config(datasets=["raetsch_heart"])
    cfg["protocol"]["splits"] = 30
    with pytest.raises(ConfigError, match=r"datasets\[0\]\.splits.*at most 10: raetsch_heart comes with fixed "
                                          r"realisations 1-10"):
        load_config(write_config(cfg))
    cfg["datasets"] = [{"name": "raetsch_heart", "splits": 10}]
    load_config(write_config(cfg))
    cfg["datasets"] = [{"name": "raetsch_heart", "splits": 3, "test_fraction": 0.3}]
    with pytest.raises(ConfigError, match="test_fraction.*fixed train/test realisations"):
        load_config(write_config(cfg))


def test_runs_use_the_realisations_and_the_report_says_so(write_config, tmp_path):
    from tkbench.bench.runner import run_experiment
    from tkbench.report.aggregate import load_results
    from tkbench.report.build import _notes

    cfg = tiny_config(datasets=["raetsch_titanic", {"name": "pima", "alias": "diabetis", "test_fraction": 0.390625}])
    cfg["protocol"]["splits"] = 2
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": {"C": [1.0], "gamma": [0.1]}}]
    path = write_config(cfg)
    exp = load_config(path)
    out = tmp_path / "results"
    run_experiment(exp, out_dir=out, n_jobs=1, progress=False)
    res = load_results(out)
    rows = res.rows.set_index(["dataset", "split"])
    assert rows.loc[("raetsch_titanic", 0), "n_train"] == 150 and rows.loc[("raetsch_titanic", 1), "n_test"] == 2051
    assert rows.loc[("diabetis", 0), "n_train"] == 468 and rows.loc[("diabetis", 0), "n_test"] == 300
    notes = " ".join(_notes(res, None))
    assert "fixed realisations 1-2 of 100" in notes and "test fraction 0.390625" in notes


@pytest.mark.slow
def test_tuning_on_the_first_splits_is_shared_and_cached(write_config, tmp_path):
    """protocol.tune_on_first: every split of a cell uses the median of the choices made by CV on the first k
    splits' training parts, computed once (cached under <out>/tuning), whatever the number of workers."""
    import json

    from tkbench.bench.runner import run_experiment
    from tkbench.bench.tuning import combine_choices
    from tkbench.report.aggregate import load_results

    assert combine_choices([{"C": 1}, {"C": 10}, {"C": 0.1}, {"C": 10}, {"C": 100}], {"C": [0.1, 1, 10, 100]}) \
        == {"C": 10}
    assert combine_choices([{"C": 1}, {"C": 10}], {}) == {"C": 1}  # lower middle: a grid value
    cfg = tiny_config(datasets=["raetsch_heart"])
    cfg["protocol"].update(splits=4, tune_on_first=3)
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": {"C": [0.1, 1.0, 10.0], "gamma": [0.01, 0.1]}}]
    exp = load_config(write_config(cfg))
    outs = []
    for jobs in (1, 2):
        out = tmp_path / f"results{jobs}"
        run_experiment(exp, out_dir=out, n_jobs=jobs, progress=False)
        outs.append(load_results(out).rows.sort_values("split"))
        assert len(list((out / "tuning").glob("*.json"))) == 3
    rows = outs[0]
    assert rows["chosen_params"].map(json.dumps).nunique() == 1  # one choice for the cell
    first = rows.iloc[0]["cv"]
    assert first["scope"] == "first 3 splits" and len(first["choices"]) == 3
    assert rows.iloc[0]["chosen_params"] == combine_choices(first["choices"], cfg["methods"][0]["grid"])
    assert list(outs[0]["accuracy"]) == list(outs[1]["accuracy"])
    cfg["protocol"].update(splits=10, tune_on_first=11)
    with pytest.raises(ConfigError, match="tune_on_first.*at most 10"):
        load_config(write_config(cfg))


def test_a_method_may_tune_on_fewer_first_splits_than_the_protocol(write_config, tmp_path):
    """methods[i].tune_on_first (a costly family): that method's cell is tuned by one CV on the first split and the
    choice used on every split; the other method keeps the protocol's 3; the report names the reduction; a count
    above the realisations a dataset has is a config error naming the method."""
    import json

    from tkbench.bench.plan import make_plan
    from tkbench.bench.runner import run_experiment
    from tkbench.bench.store import ResultStore
    from tkbench.report.build import build_report

    cfg = tiny_config(datasets=["raetsch_heart"])
    cfg["protocol"].update(splits=3, tune_on_first=3)
    grid = {"C": [0.1, 10.0], "gamma": [0.01, 0.1]}
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": grid},
                      {"name": "svm1", "family": "svm_rbf", "grid": grid, "tune_on_first": 1}]
    exp = load_config(write_config(cfg))
    tuning = {s.method: s.tuning["first"] for s in make_plan(exp)}
    assert tuning == {"svm": 3, "svm1": 1}
    run_experiment(exp, out_dir=tmp_path, n_jobs=1, progress=False)
    rows = ResultStore(tmp_path).rows()
    one = [r for r in rows if r["method"] == "svm1"]
    assert len(one) == 3 and all(r["status"] == "ok" for r in one)
    assert {r["cv"]["scope"] for r in one} == {"first split"}
    assert len({json.dumps(r["chosen_params"], sort_keys=True) for r in one}) == 1
    build_report(tmp_path, formats=["md"])
    md = (tmp_path / "report" / "report.md").read_text()
    assert "svm1: hyper-parameters chosen once per dataset by 2-fold CV on the first split's training part only" in md
    cfg["methods"][1]["tune_on_first"] = 11
    with pytest.raises(ConfigError, match=r"methods\[1\]\.tune_on_first.*at most 10"):
        load_config(write_config(cfg))


def test_a_method_may_tune_on_fewer_first_splits_on_named_datasets_only(write_config, tmp_path):
    """methods[i].tune_on_first as {dataset label: k}: the named dataset's cell is tuned on its first k splits, the
    others keep the protocol's count (their run keys unchanged); the report names the reduction per dataset; an
    unknown label or a count above a dataset's realisations is a config error naming the field."""
    from tkbench.bench.plan import make_plan
    from tkbench.report.build import method_notes

    cfg = tiny_config(datasets=["raetsch_heart", "liver"])
    cfg["protocol"].update(splits=3, tune_on_first=3)
    grid = {"C": [0.1, 10.0]}
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": grid}]
    before = {(s.label, s.split): s.key for s in make_plan(load_config(write_config(cfg)))}
    cfg["methods"][0]["tune_on_first"] = {"raetsch_heart": 1}
    exp = load_config(write_config(cfg))
    plan = make_plan(exp)
    assert {s.label: s.tuning["first"] for s in plan} == {"raetsch_heart": 1, "liver": 3}
    after = {(s.label, s.split): s.key for s in plan}
    assert all(after[k] == before[k] for k in after if k[0] == "liver")
    assert all(after[k] != before[k] for k in after if k[0] == "raetsch_heart")
    notes = method_notes(exp)
    assert any("svm: hyper-parameters chosen once on raetsch_heart by 2-fold CV on the first split's training part"
               in n for n in notes), notes
    cfg["methods"][0]["tune_on_first"] = {"raetsch_heart": 11}
    with pytest.raises(ConfigError, match=r"methods\[0\]\.tune_on_first\.raetsch_heart.*at most 10"):
        load_config(write_config(cfg))
    cfg["methods"][0]["tune_on_first"] = {"heart": 1}
    with pytest.raises(ConfigError, match=r"methods\[0\]\.tune_on_first\.heart.*the label of a dataset"):
        load_config(write_config(cfg))


def test_no_data_rows_show_the_papers_numbers():
    """A reference table's dataset we cannot run (config `no_data`) keeps its paper rows, marked 'no data'."""
    import pandas as pd

    from tkbench.report.reference import Reference
    from tkbench.report.tables import metric_tables

    ref = Reference(ROOT / "configs" / "reference" / "sikl2010_table2.yaml")
    summary = pd.DataFrame([{"dataset": "heart", "method": "CM", "metric": "accuracy", "metric_mean": 84.0,
                             "metric_std": 3.0, "best": True, "fit_mean": 1.0, "fit_std": 0.1, "cv_mean": 5.0,
                             "n_ok": 10, "planned": 10, "n_failed": 0, "n_timeout": 0, "n_crashed": 0,
                             "n_missing": 0}])
    names = {"datasets": {"heart": "heart"}, "methods": {"CM": "CM"}}
    table = metric_tables(summary, ref, names, no_data=["thyroid", "splice"])[0]
    cells = [[c.text for c in row] for row in table.rows]
    assert table.title == "Test-set error (%) (lower is better)"  # the paper prints error rates: so do we
    assert cells[0][:6] == ["heart", "CM", "16.00 ± 3.00", "15.60 ± 3.20", "+0.40", "within 1 std"]
    assert cells[1][:4] == ["thyroid", "CM", "no data", "3.70 ± 2.20"] and cells[1][-1] == "no data"
    assert cells[2][0] == "splice" and cells[2][3] == "9.70 ± 0.40"


def test_convergence_run_records_sikl_test_error_trajectories(write_config, tmp_path):
    """A convergence experiment of SIKL with keep_stages: every trace entry has the train and the test error of
    the model after that iteration (paper 004, Figures 1-3); the last test error is the row's test error."""
    from tkbench.bench.runner import run_experiment
    from tkbench.bench.store import ResultStore

    cfg = tiny_config(name="sikl_conv", kind="convergence", datasets=[{"name": "raetsch_heart", "alias": "heart"}])
    cfg["protocol"]["splits"] = 1
    cfg["methods"] = [{"name": "CM", "family": "sikl", "grid": {},
                       "params": {"variant": "cm", "beta": 3.0, "keep_stages": True, "T3": 50}}]
    run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, progress=False)
    (row,) = ResultStore(tmp_path).rows()
    assert row["status"] == "ok", row["error"]
    trace = row["trace"]
    assert len(trace) == row["diagnostics"]["iterations"] and all("test_error" in e for e in trace)
    assert trace[-1]["test_error"] == pytest.approx(1 - row["accuracy"] / 100)
    assert trace[-1]["train_error"] == pytest.approx(1 - row["train_accuracy"] / 100)
    from tkbench.report.build import build_report

    written = {p.name for p in build_report(tmp_path, formats=["md"])}
    assert "evolution_heart_CM.png" in written  # Figures 1-3 of paper 004
