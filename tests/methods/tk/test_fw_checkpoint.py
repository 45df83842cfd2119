"""Frank-Wolfe checkpoints: a TK fit killed part-way continues from its state file (tkbench.methods._shared.checkpoint)."""
import numpy as np
import pytest

from tkbench import TKClassifier, TKRegressor
from tkbench.methods._shared.checkpoint import Checkpoint


class Killed(Exception):
    pass


def _data(task):
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(160, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(160)
    return X, (y if task == "regression" else np.where(y > np.median(y), 1, -1))


def _model(task, **kw):
    cls = TKRegressor if task == "regression" else TKClassifier
    return cls(C=10.0, delta=0.1, tol=1e-6, max_iter=10, **kw)


@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("dual_solver", ["smo", "libsvm"])
def test_a_killed_fit_continues_from_its_checkpoint(tmp_path, monkeypatch, task, dual_solver):
    X, y = _data(task)
    whole = _model(task, dual_solver=dual_solver).fit(X, y)
    assert whole.n_iter_ >= 4, "the problem must take several iterations for the test to mean anything"

    saves = []
    original = Checkpoint.save

    def save_then_die(self, arrays, facts):
        original(self, arrays, facts)
        saves.append(facts["iteration"])
        if len(saves) == 2:
            raise Killed

    monkeypatch.setattr(Checkpoint, "save", save_then_die)
    path = tmp_path / "run"
    with pytest.raises(Killed):
        _model(task, dual_solver=dual_solver, checkpoint=str(path)).fit(X, y)
    assert (tmp_path / "run.0.npz").exists()
    monkeypatch.setattr(Checkpoint, "save", original)

    resumed = _model(task, dual_solver=dual_solver, checkpoint=str(path)).fit(X, y)
    assert resumed.resumed_["iteration"] == 2 and resumed.fit_seconds_before_resume_ > 0
    assert resumed.n_iter_ == whole.n_iter_
    assert [h["iteration"] for h in resumed.gap_history_] == list(range(whole.n_iter_ + 1))
    np.testing.assert_allclose(resumed.P_, whole.P_, rtol=1e-6, atol=1e-6 * np.abs(whole.P_).max())
    assert resumed.objective_[0] == pytest.approx(whole.objective_[0], rel=1e-6)
    np.testing.assert_allclose(resumed.predict(X), whole.predict(X), rtol=1e-5, atol=1e-5)
    assert not (tmp_path / "run.0.npz").exists(), "a finished fit removes its state"


def test_a_checkpoint_of_another_problem_is_not_resumed(tmp_path, monkeypatch):
    X, y = _data("regression")
    path = str(tmp_path / "run")
    original = Checkpoint.save

    def save_then_die(self, arrays, facts):
        original(self, arrays, facts)
        raise Killed

    monkeypatch.setattr(Checkpoint, "save", save_then_die)
    with pytest.raises(Killed):
        _model("regression", dual_solver="smo", checkpoint=path).fit(X, y)
    monkeypatch.setattr(Checkpoint, "save", original)
    other = _model("regression", dual_solver="smo", checkpoint=path)
    other.set_params(C=1.0)  # another problem: the state must not be used
    assert other.fit(X, y).resumed_ is None
    assert _model("regression", dual_solver="smo", checkpoint=path).fit(X[:-1], y[:-1]).resumed_ is None


def test_a_truncated_state_file_is_ignored(tmp_path):
    (tmp_path / "s.npz").write_bytes(b"PK\x03\x04 not a whole file")
    assert Checkpoint(tmp_path / "s.npz", "p").load() is None
    assert Checkpoint(tmp_path / "absent.npz", "p").load() is None


def test_the_runner_checkpoints_final_fits_and_records_a_resumed_one(write_config, tmp_path, monkeypatch):
    """A TK run killed during its final fit (here: an exception after the second saved iteration, in-process)
    leaves <out>/checkpoints/<run key>.0.npz; the next attempt continues from it, says so in its row
    (``resumed``), counts the earlier time in fit_seconds, and leaves no state behind."""
    from tkbench.bench.execute import execute
    from tkbench.bench.plan import make_plan
    from tkbench.config import load_config

    config = {
        "name": "ckpt", "kind": "accuracy", "protocol": {"splits": 1, "seed": 0},
        "datasets": [{"name": "airfoil", "alias": "airfoil", "subsample": 200}],
        "methods": [{"name": "tk", "family": "tk", "grid": {},
                     "params": {"C": 10.0, "delta": 0.1, "tol": 1e-6, "max_iter": 8, "dual_solver": "smo"}}],
    }
    spec = make_plan(load_config(write_config(config)))[0].to_dict()
    saves = []
    original = Checkpoint.save

    def save_then_die(self, arrays, facts):
        original(self, arrays, facts)
        saves.append(self.path)
        if len(saves) == 2:
            raise Killed

    monkeypatch.setattr(Checkpoint, "save", save_then_die)
    first = execute(spec, {}, root=str(tmp_path))
    assert first["status"] == "failed" and "Killed" in first["error"]
    assert saves[0] == tmp_path / "checkpoints" / f"{spec['key']}.0.npz" and saves[0].exists()
    monkeypatch.setattr(Checkpoint, "save", original)
    second = execute(spec, {}, root=str(tmp_path))
    assert second["status"] == "ok", second.get("traceback")
    assert second["resumed"]["iteration"] == 2 and second["fit_seconds"] > second["resumed"]["seconds"] > 0
    assert not list((tmp_path / "checkpoints").iterdir())
    third = execute(spec, {}, root=str(tmp_path))  # from scratch: no state left
    assert "resumed" not in third and third["mse"] == pytest.approx(second["mse"], rel=1e-6)


class _KilledAfterFit(BaseException):
    """Stands for SIGKILL at the end of a session: not an Exception, so execute() cannot record it."""


def test_a_run_killed_in_its_final_fit_does_not_redo_its_cv(write_config, tmp_path, monkeypatch):
    """A run's own CV keeps its finished folds in <out>/tuning/<key>.cv.folds.json: after a kill in the final fit
    the next attempt replays the CV from the file (no CV fit), chooses the same parameters, and removes the file."""
    import tkbench.bench.execute as execute_module
    import tkbench.bench.learn as learn_module
    import tkbench.bench.tuning as tuning
    from tkbench.bench.plan import make_plan
    from tkbench.config import load_config

    config = {
        "name": "cvckpt", "kind": "accuracy", "protocol": {"splits": 1, "seed": 0, "cv_folds": 3},
        "datasets": [{"name": "liver", "subsample": 120}],
        "methods": [{"name": "svm", "family": "svm_rbf", "grid": {"C": [0.1, 1.0, 10.0]}}],
    }
    spec = make_plan(load_config(write_config(config)))[0].to_dict()
    clones = []
    original_clone = tuning.clone

    def counting_clone(est):
        clones.append(1)
        return original_clone(est)

    monkeypatch.setattr(tuning, "clone", counting_clone)
    original_fitted = learn_module.fitted_model

    def die(est):
        raise _KilledAfterFit

    monkeypatch.setattr(learn_module, "fitted_model", die)
    with pytest.raises(_KilledAfterFit):
        execute_module.execute(spec, {}, root=str(tmp_path))
    partial = tmp_path / "tuning" / f"{spec['key']}.cv.folds.json"
    assert partial.exists() and len(clones) == 9  # 3 folds x 3 candidates
    monkeypatch.setattr(learn_module, "fitted_model", original_fitted)
    resumed = execute_module.execute(spec, {}, root=str(tmp_path))
    assert resumed["status"] == "ok", resumed.get("traceback")
    assert len(clones) == 9 and not partial.exists()
    fresh = execute_module.execute(spec, {}, root=str(tmp_path / "fresh"))
    assert len(clones) == 18
    assert fresh["chosen_params"] == resumed["chosen_params"] and fresh["accuracy"] == resumed["accuracy"]
    assert fresh["cv"]["scores"] == resumed["cv"]["scores"]


def test_a_resumed_fit_does_not_keep_the_starting_kernel(monkeypatch):
    """normalize=True computes the kernel at P0 for its scale and hands it to the first evaluation. A fit resumed
    from a checkpoint starts at another P: that matrix must be dropped then, not held for the whole fit (it was:
    a third m x m matrix, 20.6 GB at m = 29 386 on Gas Turbine)."""
    import tracemalloc

    import tkbench.methods.tk.estimators as tk_module

    X, y = _data("regression")
    m = len(y)
    held = {}

    class Stop(Exception):
        pass

    def fake_frank_wolfe(kernel, gradient, size, y, **kwargs):
        P = np.eye(size) * 2.0 + 0.1  # not P0: as after a resume
        before = tracemalloc.get_traced_memory()[0]
        K = kernel(P)
        held["extra"] = tracemalloc.get_traced_memory()[0] - before  # what the call left allocated, K included
        held["matrix"] = K.nbytes
        raise Stop

    monkeypatch.setattr(tk_module, "frank_wolfe", fake_frank_wolfe)
    tracemalloc.start()
    try:
        with pytest.raises(Stop):
            TKRegressor(C=10.0, delta=0.1, normalize=True).fit(X, y)
    finally:
        tracemalloc.stop()
    assert held["matrix"] == m * m * 8
    # the new K is allocated and the starting one released: the call adds about one matrix, not two
    assert held["extra"] < 0.5 * held["matrix"], held


def test_a_shared_cv_killed_inside_a_tk_fit_continues_within_that_fit(write_config, tmp_path, monkeypatch):
    """A CV shared by a cell's splits (tune_on_first) gives each TK fit its own state file
    (<out>/checkpoints/<tuning key>.cv<fold>-<candidate>, Family.checkpoint_cv_fits): a sweep killed inside a CV fit
    continues within that fit (before 2026-12-03 it restarted it, and a fit longer than a session never ended). The
    dry run names the cell as continuing its shared CV, not its files as stale; the resumed CV chooses what an uninterrupted one
    does, with the same scores, and leaves no state behind."""
    from typer.testing import CliRunner

    from tkbench.bench.execute import execute
    from tkbench.bench.plan import make_plan
    from tkbench.bench.tuning import tuning_key
    from tkbench.cli import app
    from tkbench.config import load_config

    config = {
        "name": "sharedckpt", "kind": "accuracy", "protocol": {"splits": 1, "seed": 0, "cv_folds": 2, "tune_on_first": 1},
        "datasets": [{"name": "airfoil", "alias": "airfoil", "subsample": 200}],
        "methods": [{"name": "tk", "family": "tk", "grid": {"C": [1.0, 10.0]},
                     "params": {"delta": 0.1, "tol": 1e-6, "max_iter": 8, "dual_solver": "smo"}}],
    }
    path = write_config(config)
    spec = make_plan(load_config(path))[0]
    out = tmp_path / "out"
    saves, original = [], Checkpoint.save

    def save_then_die(self, arrays, facts):
        original(self, arrays, facts)
        saves.append(self.path)
        if len(saves) == 2:  # inside the first CV fit (fold 0, C = 1), after its second iteration
            raise _KilledAfterFit

    monkeypatch.setattr(Checkpoint, "save", save_then_die)
    with pytest.raises(_KilledAfterFit):
        execute(spec.to_dict(), {}, root=str(out))
    key = tuning_key(spec, 0, spec.tuning["seeds"][0])
    assert saves[0] == out / "checkpoints" / f"{key}.cv0-0.0.npz" and saves[0].exists()
    monkeypatch.setattr(Checkpoint, "save", original)

    dry = CliRunner().invoke(app, ["run", str(path), "--dry-run", "--out", str(out)])
    text = " ".join(dry.output.split())
    assert dry.exit_code == 0, dry.output
    assert "1 cell(s) continue their shared CV from its saved state (their runs run first): airfoil/tk" in text
    assert "of the runs to run continue" not in text and "no run of this config" not in text

    loads, original_load = [], Checkpoint.load

    def recording_load(self):
        state = original_load(self)
        loads.append(state is not None)
        return state

    monkeypatch.setattr(Checkpoint, "load", recording_load)
    resumed = execute(spec.to_dict(), {}, root=str(out))
    assert resumed["status"] == "ok", resumed.get("traceback")
    assert loads[0] is True and not any(loads[1:])  # the killed fit continued; every later fit started afresh
    assert not [p for p in (out / "checkpoints").iterdir() if p.name.startswith(key)]
    monkeypatch.setattr(Checkpoint, "load", original_load)
    fresh = execute(spec.to_dict(), {}, root=str(tmp_path / "fresh"))
    assert fresh["chosen_params"] == resumed["chosen_params"]
    assert fresh["cv"]["best_scores"] == pytest.approx(resumed["cv"]["best_scores"], rel=1e-6)
    assert fresh["mse"] == pytest.approx(resumed["mse"], rel=1e-6)
