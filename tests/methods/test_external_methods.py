"""Methods from outside tkbench: a scikit-learn estimator by import path, and a family installed by a
third-party package through the ``tkbench.families`` entry point (tkbench.methods.external)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import yaml

from tests.conftest import tiny_config
from tkbench.bench.runner import run_experiment
from tkbench.bench.store import ResultStore
from tkbench.config import load_config
from tkbench.errors import ConfigError


def test_an_estimator_by_import_path_is_tuned_and_seeded(write_config, tmp_path):
    cfg = tiny_config(methods=[
        {"name": "lr", "estimator": "sklearn.linear_model.LogisticRegression", "params": {"max_iter": 500},
         "grid": {"C": [0.1, 10.0]}},
        {"name": "et", "estimator": "sklearn.ensemble.ExtraTreesClassifier", "params": {"n_estimators": 10},
         "grid": {}}])
    cfg["protocol"]["splits"] = 2
    exp = load_config(write_config(cfg))
    assert run_experiment(exp, out_dir=tmp_path / "a", progress=False).counts["ok"] == 8
    rows = ResultStore(tmp_path / "a").rows()
    lr = [r for r in rows if r["method"] == "lr"]
    assert all(r["chosen_params"]["C"] in (0.1, 10.0) and r["accuracy"] > 50 for r in lr)
    # the run's seed reaches random_state: a second sweep gives the same numbers
    run_experiment(exp, out_dir=tmp_path / "b", progress=False)
    again = {r["key"]: r["accuracy"] for r in ResultStore(tmp_path / "b").rows()}
    assert {r["key"]: r["accuracy"] for r in rows} == again


@pytest.mark.parametrize("method, message", [
    ({"name": "x", "estimator": "sklearn.linear_model.Nope"}, "a class of module sklearn.linear_model"),
    ({"name": "x", "estimator": "nosuchpackage.Model"}, "an importable module"),
    ({"name": "x", "estimator": "os.path"}, "a scikit-learn estimator class"),
    ({"name": "x", "estimator": "collections.OrderedDict"}, "a scikit-learn estimator class"),
    ({"name": "x", "estimator": "sklearn.preprocessing.StandardScaler"}, "a classifier or a regressor"),
    ({"name": "x", "estimator": "sklearn.linear_model.Ridge", "family": "tk"}, "either 'family' or 'estimator'"),
    ({"name": "x", "estimator": "sklearn.linear_model.LogisticRegression", "params": {"C": "ten"}},
     "methods[0].params.C: 'ten'"),
    ({"name": "x", "estimator": "sklearn.linear_model.Ridge"}, "a family that supports classification"),
])
def test_bad_import_paths_are_config_errors(write_config, method, message):
    with pytest.raises(ConfigError) as info:
        load_config(write_config(tiny_config(methods=[method])))
    assert message in str(info.value)


PLUGIN = '''
"""A third-party family: nearest-centroid classification, registered through tkbench's entry point."""
from sklearn.neighbors import NearestCentroid

from tkbench.methods.registry import Family


def _build(task, solver, params, seed):
    return NearestCentroid(**params)


FAMILY = Family(name="centroid", description="nearest centroid (a plugin)", build=_build,
                tasks=("classification",), default_grid={"shrink_threshold": [None, 0.5]})
'''


def _install_plugin(site) -> None:
    """The files ``pip install`` would leave for a package with one module and one entry point."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "tkbench_centroid.py").write_text(textwrap.dedent(PLUGIN))
    info = site / "tkbench_centroid-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tkbench-centroid\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[tkbench.families]\ncentroid = tkbench_centroid:FAMILY\n")
    (info / "RECORD").write_text("")


@pytest.mark.slow
def test_a_family_from_an_installed_plugin_runs(tmp_path):
    site = tmp_path / "site"
    _install_plugin(site)
    cfg = tiny_config(methods=[{"name": "nc", "family": "centroid"}])
    cfg["protocol"]["splits"] = 2
    path = tmp_path / "plugin.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]), "COLUMNS": "200"}
    listed = subprocess.run([sys.executable, "-m", "tkbench", "methods"], env=env, capture_output=True, text=True,
                            timeout=120)
    assert listed.returncode == 0 and "centroid" in listed.stdout and "a plugin" in listed.stdout
    done = subprocess.run([sys.executable, "-m", "tkbench", "run", str(path), "--out", str(tmp_path / "out"),
                           "--no-progress"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = ResultStore(tmp_path / "out").rows()
    assert len(rows) == 4 and all(r["status"] == "ok" and r["family"] == "centroid" for r in rows)
    # without the plugin (this process does not have it) the family is unknown: a config error, not a crash
    from typer.testing import CliRunner

    from tkbench.cli import app

    bare = CliRunner().invoke(app, ["run", str(path), "--dry-run"])
    assert bare.exit_code == 2 and "one of the method families" in bare.output


def test_a_broken_plugin_is_reported_and_skipped(tmp_path):
    site = tmp_path / "site"
    _install_plugin(site)
    (site / "tkbench_centroid.py").write_text("raise ImportError('broken on purpose')\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    listed = subprocess.run([sys.executable, "-m", "tkbench", "methods"], env=env, capture_output=True, text=True,
                            timeout=120)
    assert listed.returncode == 0 and "svm_rbf" in listed.stdout
    assert "plugin 'centroid'" in listed.stderr and "broken on purpose" in listed.stderr
