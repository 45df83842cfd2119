"""Config validation: every bad input gives exit code 2 and one line naming the file, key path and value."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.conftest import ROOT, tiny_config
from tkbench.cli import app
from tkbench.config import load_config
from tkbench.errors import ConfigError

BAD = [
    # (description, mutate(cfg), expected key path, expected words in the message)
    ("unknown top-level key", lambda c: c.update(splitz=3), "splitz", "unknown key"),
    ("unknown protocol key", lambda c: c["protocol"].update(fold=3), "protocol.fold", "unknown key"),
    ("wrong type for splits", lambda c: c["protocol"].update(splits="many"), "protocol.splits", "'many'"),
    ("zero splits", lambda c: c["protocol"].update(splits=0), "protocol.splits", "greater than or equal to 1"),
    ("test_fraction of 1", lambda c: c["protocol"].update(test_fraction=1.0), "protocol.test_fraction",
     "strictly between 0 and 1"),
    ("negative test_fraction", lambda c: c["protocol"].update(test_fraction=-0.2), "protocol.test_fraction",
     "strictly between 0 and 1"),
    ("one CV fold", lambda c: c["protocol"].update(cv_folds=1), "protocol.cv_folds", "greater than or equal to 2"),
    ("unknown dataset", lambda c: c["datasets"].append("emnist"), "datasets[2].name", "'emnist'"),
    ("bad dataset option", lambda c: c["datasets"].__setitem__(0, {"name": "liver", "options": {"label": "x"}}),
     "datasets[0].options", "label"),
    ("unknown family", lambda c: c["methods"][0].update(family="svm_poly"), "methods[0].family", "'svm_poly'"),
    ("unknown solver", lambda c: c["methods"][0].update(solver="smo"), "methods[0].solver", "'smo'"),
    ("empty grid", lambda c: c["methods"][0]["grid"].update(C=[]), "methods[0].grid.C", "non-empty list"),
    ("unknown grid parameter", lambda c: c["methods"][0]["grid"].update(sigma=[1.0]), "methods[0].grid.sigma",
     "a parameter of svm_rbf"),
    ("unknown fixed parameter", lambda c: c["methods"][1].update(params={"trees": 5}), "methods[1].params.trees",
     "a parameter of random_forest"),
    ("solver given as a parameter", lambda c: c["methods"][0].update(params={"solver": "x"}),
     "methods[0].params.solver", "the solver in the method's 'solver' field"),
    ("duplicate method name", lambda c: c["methods"].append(dict(c["methods"][0])), "methods[2].name",
     "unique method name"),
    ("duplicate dataset", lambda c: c["datasets"].append("liver"), "datasets[2]", "unique dataset label"),
    ("no methods", lambda c: c.update(methods=[]), "methods", "at least 1"),
    ("bad experiment kind", lambda c: c.update(kind="speed"), "kind", "'speed'"),
    ("scaling without sizes", lambda c: c.update(kind="scaling"), "(top level)", "needs a 'scaling' section"),
    ("name with a space", lambda c: c.update(name="my run"), "name", "'my run'"),
    ("negative timeout", lambda c: c["protocol"].update(timeout=-5), "protocol.timeout", "greater than 0"),
    ("grid not a list", lambda c: c["methods"][0].update(grid={"C": 3}), "methods[0].grid.C", "valid list"),
    ("per_dataset for an unknown dataset", lambda c: c["methods"][1].update(per_dataset={"pima": {"max_depth": 3}}),
     "methods[1].per_dataset.pima", "the label of a dataset of this config"),
    ("per_dataset unknown parameter", lambda c: c["methods"][1].update(per_dataset={"liver": {"trees": 3}}),
     "methods[1].per_dataset.liver.trees", "a parameter of random_forest"),
    ("per_dataset on a grid parameter", lambda c: c["methods"][0].update(per_dataset={"liver": {"C": 3.0}}),
     "methods[0].per_dataset.liver.C", "not in the CV grid"),
    ("per_dataset_grid unknown parameter",
     lambda c: c["methods"][1].update(per_dataset_grid={"liver": {"trees": [3]}}),
     "methods[1].per_dataset_grid.liver.trees", "a parameter of random_forest"),
    ("per_dataset_grid for an unknown dataset",
     lambda c: c["methods"][0].update(per_dataset_grid={"pima": {"C": [1.0]}}),
     "methods[0].per_dataset_grid.pima", "the label of a dataset of this config"),
    ("unknown scaler", lambda c: c["methods"][0].update(scaler="robust"), "methods[0].scaler", "'log_minmax'"),
    ("missing reference file", lambda c: c.update(reference="nowhere/table.yaml"), "reference", "nowhere"),
    # the list and count rules are pydantic types (issue 49); one message per value, not one per union member
    ("max_train too small", lambda c: c["methods"][0].update(max_train=5), "methods[0].max_train",
     "a number of rows >= 10"),
    ("max_train per dataset too small", lambda c: c["methods"][0].update(max_train={"liver": 3}),
     "methods[0].max_train.liver", "a number of rows >= 10"),
    ("cv_max_train a word", lambda c: c["methods"][0].update(cv_max_train={"liver": "x"}),
     "methods[0].cv_max_train.liver", "valid integer"),
    ("method splits zero", lambda c: c["methods"][0].update(splits=0), "methods[0].splits",
     "a number of splits from 1"),
    ("empty per-dataset grid", lambda c: c["methods"][0].update(per_dataset_grid={"liver": {"C": []}}),
     "methods[0].per_dataset_grid.liver.C", "non-empty list"),
]


@pytest.mark.parametrize("what,mutate,path,words", BAD, ids=[b[0] for b in BAD])
def test_bad_config_is_a_clear_error(write_config, what, mutate, path, words):
    cfg = tiny_config()
    mutate(cfg)
    file = write_config(cfg)
    with pytest.raises(ConfigError) as info:
        load_config(file)
    message = str(info.value)
    assert str(file) in message
    assert f": {path}: " in message, message
    assert words in message, message

    result = CliRunner().invoke(app, ["run", str(file), "--dry-run"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert path in result.output


def test_yaml_syntax_error_names_the_line(tmp_path):
    file = tmp_path / "broken.yaml"
    file.write_text("name: x\nprotocol: {splits: 3\n")
    with pytest.raises(ConfigError, match=r"broken.yaml: line \d+, column \d+: .*invalid YAML"):
        load_config(file)


def test_duplicate_yaml_key_is_an_error(tmp_path):
    file = tmp_path / "dup.yaml"
    file.write_text(yaml.safe_dump(tiny_config()) + "name: again\n")
    with pytest.raises(ConfigError, match="duplicate key 'name'"):
        load_config(file)


def test_the_fast_config_loader_reads_every_committed_config_as_the_pure_python_one(tmp_path):
    """Configs are parsed by libyaml (the report loads every one, several times); the pure-Python loader, whose
    messages say the most, reads a file the fast one refuses. Both must give the same documents, and both refuse a
    duplicate key, the pure one naming its line."""
    from tkbench.config.load import _FastUniqueKeyLoader, _UniqueKeyLoader
    from tkbench.textfile import FAST_SAFE_LOADER, UnreadableFile, load_yaml

    assert FAST_SAFE_LOADER is yaml.CSafeLoader and issubclass(_FastUniqueKeyLoader, yaml.CSafeLoader)
    configs = sorted((ROOT / "configs").glob("*.yaml"))
    assert len(configs) > 40
    for path in configs:
        assert load_yaml(path, "config", _FastUniqueKeyLoader, None) == load_yaml(path, "config", _UniqueKeyLoader,
                                                                                  None), path
    file = tmp_path / "dup.yaml"
    file.write_text("name: x\nprotocol:\n  seed: 1\n  seed: 2\n")
    for loader in (_FastUniqueKeyLoader, _UniqueKeyLoader):
        with pytest.raises(UnreadableFile, match="duplicate key 'seed'"):
            load_yaml(file, "config", loader, None)
    with pytest.raises(ConfigError, match=r"dup.yaml: line 4, column 3: .*duplicate key 'seed'"):
        load_config(file)


def test_missing_file(tmp_path):
    result = CliRunner().invoke(app, ["run", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2
    assert "does not exist" in result.output


def test_valid_config_fills_defaults(write_config):
    cfg = tiny_config()
    del cfg["protocol"]
    exp = load_config(write_config(cfg))
    assert exp.protocol.splits == 30 and exp.protocol.test_fraction == 0.2 and exp.protocol.cv_folds == 5
    assert exp.datasets[0].name == "liver" and exp.datasets[1].options == {"n_samples": 150}


def test_committed_configs_are_valid():

    for path in sorted((ROOT / "configs").glob("*.yaml")):
        load_config(path)


def test_per_dataset_params_replace_the_method_params(write_config):
    from tkbench.bench.plan import make_plan

    cfg = tiny_config()
    cfg["methods"][1].update(params={"max_depth": 5}, per_dataset={"waveform": {"max_depth": 2}})
    plan = make_plan(load_config(write_config(cfg)))
    depth = {(s.label, s.method): s.params.get("max_depth") for s in plan}
    assert depth[("liver", "rf")] == 5 and depth[("waveform", "rf")] == 2
    assert depth[("liver", "svm")] is None


def test_per_dataset_grid_replaces_the_method_grid(write_config):
    from tkbench.bench.plan import make_plan

    cfg = tiny_config()
    cfg["methods"][1].update(grid={"max_depth": [2, 4]}, per_dataset_grid={"waveform": {"max_depth": [8]}})
    plan = make_plan(load_config(write_config(cfg)))
    grids = {(s.label, s.method): s.grid for s in plan}
    assert grids[("liver", "rf")] == {"max_depth": [2, 4]} and grids[("waveform", "rf")] == {"max_depth": [8]}


def test_fewer_splits_for_an_expensive_dataset_or_method(write_config):
    from tkbench.bench.plan import make_plan

    cfg = tiny_config()
    cfg["protocol"]["splits"] = 6
    cfg["datasets"][1] = {"name": "waveform", "options": {"n_samples": 150}, "splits": 4}
    cfg["methods"][1]["splits"] = 2
    plan = make_plan(load_config(write_config(cfg)))
    count = {}
    for s in plan:
        count[(s.label, s.method)] = count.get((s.label, s.method), 0) + 1
    assert count == {("liver", "svm"): 6, ("liver", "rf"): 2, ("waveform", "svm"): 4, ("waveform", "rf"): 2}
    # the same split index is the same split whatever the cap (the cap only drops the last ones)
    seeds = {(s.label, s.split): s.seed for s in plan}
    assert seeds[("liver", 1)] == seeds[("waveform", 1)]


def test_fewer_splits_for_a_method_on_named_datasets_only(write_config):
    import pandas as pd

    from tkbench.bench.plan import make_plan
    from tkbench.report.aggregate import Results
    from tkbench.report.build import _notes

    cfg = tiny_config()
    cfg["protocol"]["splits"] = 6
    cfg["datasets"][1] = {"name": "waveform", "options": {"n_samples": 150}}
    cfg["methods"][1]["splits"] = {"waveform": 3}
    exp = load_config(write_config(cfg))
    count = {}
    for s in make_plan(exp):
        count[(s.label, s.method)] = count.get((s.label, s.method), 0) + 1
    assert count == {("liver", "svm"): 6, ("liver", "rf"): 6, ("waveform", "svm"): 6, ("waveform", "rf"): 3}
    res = Results(root=Path("."), experiment=exp, rows=pd.DataFrame(), planned=pd.DataFrame(), stale=0)
    assert "rf: only the first 3 of the 6 splits on waveform (cost)" in _notes(res, None)
    for value, field in (({"pima": 2}, "splits.pima"), ({"waveform": 0}, "splits.waveform"), (0, "splits")):
        bad = tiny_config()
        bad["methods"][1]["splits"] = value
        with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
            load_config(write_config(bad, "bad.yaml"))


def test_a_method_on_named_datasets_only(write_config):
    import pandas as pd

    from tkbench.bench.plan import make_plan
    from tkbench.report.aggregate import Results
    from tkbench.report.build import _notes

    cfg = tiny_config()
    cfg["datasets"][1] = {"name": "waveform", "options": {"n_samples": 150}}
    cfg["methods"][1]["datasets"] = ["waveform"]
    exp = load_config(write_config(cfg))
    cells = {(s.label, s.method) for s in make_plan(exp)}
    assert cells == {("liver", "svm"), ("waveform", "svm"), ("waveform", "rf")}
    res = Results(root=Path("."), experiment=exp, rows=pd.DataFrame(), planned=pd.DataFrame(), stale=0)
    assert "rf: run on waveform only" in _notes(res, None)
    bad = tiny_config()
    bad["methods"][1]["datasets"] = ["pima"]
    with pytest.raises(ConfigError, match=r"methods\[1\]\.datasets.*pima"):
        load_config(write_config(bad, "bad.yaml"))


def test_max_train_caps_the_training_part_and_keeps_the_test_part(write_config, tmp_path):
    from tkbench.bench.runner import run_experiment
    from tkbench.bench.store import ResultStore

    cfg = tiny_config()
    cfg["protocol"]["splits"] = 2
    cfg["methods"][0]["max_train"] = 60
    cfg["methods"][1]["max_train"] = {"waveform": 50}
    out = run_experiment(load_config(write_config(cfg)), out_dir=tmp_path / "out", progress=False)
    assert out.counts["ok"] == 8
    rows = ResultStore(tmp_path / "out").rows()
    n_train = {(r["dataset"], r["method"]): r["n_train"] for r in rows}
    assert n_train[("liver", "svm")] == 60 and n_train[("waveform", "svm")] == 60
    assert n_train[("waveform", "rf")] == 50 and n_train[("liver", "rf")] == 259  # uncapped: 345 - 86 test rows
    tests = {(r["dataset"], r["split"], r["n_test"]) for r in rows}
    assert len(tests) == 4  # every method of a (dataset, split) is tested on the same test part
    bad = tiny_config()
    bad["methods"][0]["max_train"] = {"pima": 100}
    with pytest.raises(ConfigError, match="max_train.pima"):
        load_config(write_config(bad, "bad.yaml"))


def test_task_specific_params_apply_where_they_belong(write_config):
    from tkbench.bench.plan import make_plan

    cfg = tiny_config()
    cfg["datasets"] = ["liver", "airfoil"]
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "params": {"epsilon": 0.3}, "grid": {}}]
    plan = make_plan(load_config(write_config(cfg)))
    eps = {s.label: s.params.get("epsilon") for s in plan}
    assert eps == {"liver": None, "airfoil": 0.3}  # an SVR parameter, not given to the SVC
    only_classification = tiny_config()
    only_classification["datasets"] = ["liver"]
    only_classification["methods"] = [dict(cfg["methods"][0])]
    with pytest.raises(ConfigError, match="methods.0..params.epsilon"):
        load_config(write_config(only_classification, "c.yaml"))


def test_per_dataset_param_may_replace_a_grid_parameter_where_that_dataset_has_no_grid():
    """A dataset whose per_dataset_grid leaves a parameter out may fix it in per_dataset (paper 004: beta = 3 on
    USPS, beta by CV on MNIST); where the grid still has it, fixing it is a config error."""
    from tkbench.config import parse_config
    from tkbench.errors import ConfigError

    method = {"name": "s", "family": "svm_rbf", "grid": {"C": [1.0, 10.0]}, "per_dataset_grid": {"liver": {}},
              "per_dataset": {"liver": {"C": 3.0}}}
    raw = {"name": "d", "kind": "convergence", "datasets": ["liver", "cancer"], "methods": [method],
           "evaluation": {}}
    parse_config(raw, "d.yaml")
    method["per_dataset"] = {"cancer": {"C": 3.0}}
    with pytest.raises(ConfigError, match=r"per_dataset\.cancer\.C"):
        parse_config(raw, "d.yaml")


def test_absurd_split_counts_are_refused_before_planning(write_config):
    for where, patch in (("protocol.splits", lambda c: c["protocol"].update(splits=10**30)),
                         ("datasets[0].splits", lambda c: c["datasets"].__setitem__(0, {"name": "liver",
                                                                                         "splits": 10**6}))):
        cfg = tiny_config()
        patch(cfg)
        with pytest.raises(ConfigError, match=where.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
            load_config(write_config(cfg, "bad.yaml"))


def test_config_target_scalers_are_the_learners_own():
    """One list of target scalers: the config's accepted values are exactly those the learners can build."""
    import typing

    from tkbench.config import MethodEntry
    from tkbench.methods._shared.scalers import TARGET_SCALERS, make_target_scaler

    accepted = {a for arg in typing.get_args(MethodEntry.model_fields["target_scaler"].annotation)
                for a in typing.get_args(arg)}
    assert accepted == set(TARGET_SCALERS)
    for kind in TARGET_SCALERS:
        make_target_scaler(kind)


def test_no_data_and_not_run_must_name_the_reference_tables_data_sets_and_methods(write_config):
    """A misspelt key would silently show nothing: the config error names the field, the value and the choices."""
    ref = str(ROOT / "configs" / "reference" / "hgk2016_table1.yaml")
    cfg = {"name": "paper_only", "reference": ref, "metric": "ls_error", "protocol": {"splits": 1},
           "datasets": ["cpusmall"], "methods": [{"name": "RF", "family": "random_forest"}],
           "no_data": ["cod", "codrna"], "not_run": ["HLK"]}
    with pytest.raises(ConfigError) as err:
        load_config(write_config(cfg))
    text = str(err.value)
    assert "no_data[1]: 'codrna': a data set of hgk2016_table1.yaml" in text
    assert "not_run[0]: 'HLK': a method of hgk2016_table1.yaml: DNN, HGK, HKL, RF, SVM" in text
    assert "no_data[0]" not in text
    load_config(write_config({**cfg, "no_data": ["cod"], "not_run": ["HKL"]}))


def test_the_grids_sensitivity_config_reuses_the_benchmark_s_cells_and_widens_only_c():
    """configs/kernel_benchmark_grids.yaml: its TK, TK_block and SimpleMKL cells, and its RBF SVM (the reference of the
    main board's verdicts), are the benchmark's own runs on its binary classification sets below 1000 rows (the same
    run keys, so --reuse adopts them); each _wide method is its namesake with a C grid that contains the namesake's
    and extends past both ends, on the same splits (TK_wide but German, a reduction named in the config's notes)."""
    from tkbench.bench.plan import make_plan

    main = make_plan(load_config(ROOT / "configs" / "kernel_benchmark.yaml"))
    side = make_plan(load_config(ROOT / "configs" / "kernel_benchmark_grids.yaml"))
    sets = {"sonar", "ionosphere", "liver", "pima", "heart", "cancer", "banana", "german", "ringnorm"}
    names = ("TK", "TK_block", "SimpleMKL")
    side_keys = {s.key for s in side if s.method in names}
    assert side_keys == {s.key for s in main if s.method in names and s.label in sets} and len(side_keys) == 610
    svm_keys = {s.key for s in side if s.method == "SVM"}
    assert svm_keys == {s.key for s in main if s.method == "SVM" and s.label in sets} and len(svm_keys) == 210
    for name in names:
        narrow = next(s for s in side if s.method == name)
        wide = [s for s in side if s.method == f"{name}_wide"]
        left_out = {"german"} if name == "TK" else set()  # TK_wide's reduction (cost: its C = 1e4 fits stall)
        assert {(s.label, s.split, s.seed) for s in wide} == {(s.label, s.split, s.seed) for s in side
                                                               if s.method == name and s.label not in left_out}
        grid, wide_grid = narrow.grid, wide[0].grid
        assert set(grid["C"]) < set(wide_grid["C"]) and min(wide_grid["C"]) < min(grid["C"])
        assert {k: v for k, v in grid.items() if k != "C"} == {k: v for k, v in wide_grid.items() if k != "C"}
        assert {k: v for k, v in narrow.params.items()} == {k: v for k, v in wide[0].params.items()}


def test_the_baselines_sensitivity_config_stays_on_the_benchmark_s_datasets_splits_and_8_point_cells():
    """configs/kernel_benchmark_baselines.yaml copies the benchmark's protocol, datasets and RBF baselines, so that
    its 8-point cells are the benchmark's own runs (--reuse takes them over by run key): a change to one config
    alone would silently turn them into new runs on other splits."""
    from tkbench.bench.plan import make_plan

    main = make_plan(load_config(ROOT / "configs" / "kernel_benchmark.yaml"))
    side = make_plan(load_config(ROOT / "configs" / "kernel_benchmark_baselines.yaml"))
    main_keys = {s.key for s in main if s.method in ("SVM", "KRR")}
    side_keys = {s.key for s in side if s.method in ("SVM", "KRR")}
    assert side_keys == main_keys and len(side_keys) == 840
    wide = [s for s in side if s.method.endswith("_wide")]
    assert {(s.label, s.split, s.seed) for s in wide} == {(s.label, s.split, s.seed) for s in main if s.method == "SVM"}
