"""cv_max_train: hyper-parameters by CV on a seeded subset of the training rows, the final fit on all of them."""
import pytest

from tkbench.bench.execute import execute
from tkbench.bench.learn import split_rows
from tkbench.bench.plan import make_plan
from tkbench.bench.spec import RunSpec
from tkbench.config import ConfigError, load_config
from tkbench.data import load_dataset, training_subset


def _config(**method):
    return {"name": "cvsub", "kind": "accuracy", "protocol": {"splits": 2, "seed": 0, "cv_folds": 2},
            "datasets": ["liver"],
            "methods": [{"name": "svm", "family": "svm_rbf", "grid": {"C": [0.1, 1.0, 10.0]}, **method}]}


def _rows_seen_by_the_cv(monkeypatch, module) -> list[int]:
    """The training sizes every ``select_params`` call made through ``module`` receives (filled as they run)."""
    seen: list[int] = []
    real = module.select_params

    def spy(estimator, family, grid, X, y, **kw):
        seen.append(len(y))
        return real(estimator, family, grid, X, y, **kw)

    monkeypatch.setattr(module, "select_params", spy)
    return seen


def test_cv_on_a_subset_and_the_final_fit_on_every_training_row(write_config, monkeypatch):
    import tkbench.bench.learn as ex  # the learner path of a run (issue 49: it left bench.execute)

    seen = _rows_seen_by_the_cv(monkeypatch, ex)
    spec = make_plan(load_config(write_config(_config(cv_max_train={"liver": 100}))))[0].to_dict()
    row = execute(spec, {})
    assert row["status"] == "ok", row.get("traceback")
    train, _ = split_rows(load_dataset("liver"), RunSpec.from_dict(spec), spec["split"], spec["seed"])
    assert seen == [100] and row["cv_rows"] == 100 and row["n_train"] == len(train) > 100
    # the CV rows are the subset a max_train of 100 would train on
    capped = make_plan(load_config(write_config(_config(max_train=100), "capped.yaml")))[0].to_dict()
    assert split_rows(load_dataset("liver"), RunSpec.from_dict(capped), capped["split"], capped["seed"])[0].tolist() == \
        training_subset(train, 100, spec["seed"] + 1).tolist()


def test_cv_max_train_changes_only_its_own_keys(write_config):
    plain = {s.key for s in make_plan(load_config(write_config(_config())))}
    sub = {s.key for s in make_plan(load_config(write_config(_config(cv_max_train=100), "b.yaml")))}
    assert not plain & sub and len(sub) == 2


@pytest.mark.parametrize("value,expected", [({"nope": 100}, "cv_max_train.nope"), (5, "cv_max_train")])
def test_bad_cv_max_train_is_a_config_error(write_config, value, expected):
    with pytest.raises(ConfigError, match=expected):
        load_config(write_config(_config(cv_max_train=value)))


def test_a_cv_shared_by_the_first_splits_also_tunes_on_the_subset(write_config, monkeypatch, tmp_path):
    """protocol.tune_on_first with cv_max_train: each of the first k splits' CVs runs on that split's seeded subset.
    Before 2026-11-29 the shared CV ignored cv_max_train and tuned on the whole training part (paper 004's splice
    GM cell: 1000 rows where its notes said 300)."""
    import tkbench.bench.tuning as tuning
    from tkbench.bench.tuning import tuning_key

    seen = _rows_seen_by_the_cv(monkeypatch, tuning)
    cfg = _config(cv_max_train={"liver": 100})
    cfg["protocol"]["tune_on_first"] = 2
    plan = make_plan(load_config(write_config(cfg)))
    row = execute(plan[0].to_dict(), {}, str(tmp_path))
    assert row["status"] == "ok", row.get("traceback")
    assert seen == [100, 100] and row["n_train"] > 100  # the two first splits' CVs, each on 100 rows
    # the cached CV choices of a shared CV on all rows are not taken for one on the subset (nor the reverse)
    whole = make_plan(load_config(write_config({**cfg, "methods": [{k: v for k, v in cfg["methods"][0].items()
                                                                     if k != "cv_max_train"}]}, "whole.yaml")))
    seeds = plan[0].tuning["seeds"]
    assert tuning_key(plan[0], 0, seeds[0]) != tuning_key(whole[0], 0, seeds[0])
