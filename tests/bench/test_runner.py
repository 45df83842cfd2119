"""The runner: determinism across workers, failure isolation, resume after SIGKILL, backends."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from rich.console import Console
from typer.testing import CliRunner

from tests.conftest import tiny_config
from tkbench.bench.plan import format_split_ids, make_plan, parse_split_ids
from tkbench.bench.runner import run_experiment
from tkbench.bench.store import ResultStore
from tkbench.cli import app
from tkbench.config import load_config
from tkbench.errors import InputError

METRIC_FIELDS = ("accuracy", "mse", "balanced_accuracy", "chosen_params", "n_train", "n_test", "train_accuracy")


def _numbers(root):
    return {r["key"]: tuple(json.dumps(r.get(f), sort_keys=True) for f in METRIC_FIELDS)
            for r in ResultStore(root).rows()}


@pytest.mark.slow
def test_same_numbers_with_one_or_two_workers(write_config, tmp_path):
    cfg = tiny_config()
    cfg["protocol"]["splits"] = 2
    exp = load_config(write_config(cfg))
    one = run_experiment(exp, out_dir=tmp_path / "j1", n_jobs=1, progress=False)
    two = run_experiment(exp, out_dir=tmp_path / "j2", n_jobs=2, progress=False)
    assert one.counts["ok"] == two.counts["ok"] == 8
    a, b = _numbers(tmp_path / "j1"), _numbers(tmp_path / "j2")
    assert a.keys() == b.keys() == {s.key for s in make_plan(exp)}
    assert a == b
    # every method saw the same split: identical test sizes per (dataset, split)
    rows = ResultStore(tmp_path / "j1").rows()
    sizes = {(r["dataset"], r["split"], r["n_test"]) for r in rows}
    assert len(sizes) == len({(r["dataset"], r["split"]) for r in rows})


def test_plan_keys_are_stable_and_sensitive(write_config):
    base = load_config(write_config(tiny_config()))
    again = load_config(write_config(tiny_config(), "again.yaml"))
    assert [s.key for s in make_plan(base)] == [s.key for s in make_plan(again)]
    changed = tiny_config()
    changed["methods"][0]["grid"]["C"] = [1.0, 100.0]
    keys = {s.key for s in make_plan(load_config(write_config(changed, "c.yaml")))}
    assert len(keys & {s.key for s in make_plan(base)}) == 6  # only the rf runs are unchanged
    renamed = tiny_config(name="other")
    renamed["protocol"]["timeout"] = 50
    assert {s.key for s in make_plan(load_config(write_config(renamed, "r.yaml")))} == \
        {s.key for s in make_plan(base)}


def test_reuse_takes_over_finished_runs_of_another_experiment(write_config, tmp_path):
    first = tiny_config()
    first["datasets"] = ["liver"]
    first["protocol"]["splits"] = 2
    run_experiment(load_config(write_config(first, "a.yaml")), out_dir=tmp_path / "a", progress=False)
    second = tiny_config(name="second")
    second["datasets"] = ["liver"]
    second["protocol"]["splits"] = 2
    second["methods"][1]["name"] = "forest"                   # same spec under another name: same key
    second["methods"][0]["grid"]["C"] = [1.0, 100.0]         # a changed spec: must run
    exp = load_config(write_config(second, "b.yaml"))
    console = Console(record=True, width=200)
    dry = run_experiment(exp, out_dir=tmp_path / "b", dry_run=True, reuse=[tmp_path / "a"], progress=False,
                         console=console)
    assert dry.skipped == 0 and not (tmp_path / "b" / "rows").exists()
    text = console.export_text()
    assert "4 runs, 0 done, 2 reusable, 2 to run" in text  # the renamed rf is adoptable, the changed svm is not
    out = run_experiment(exp, out_dir=tmp_path / "b", reuse=[tmp_path / "a"], progress=False)
    assert out.skipped == 2 and out.executed == 2
    rows = {r["method"]: r for r in ResultStore(tmp_path / "b").rows()}
    assert rows["forest"]["reused_from"] == str(tmp_path / "a") and rows["forest"]["experiment"] == "second"
    assert "reused_from" not in rows["svm"]
    original = {r["key"]: r for r in ResultStore(tmp_path / "a").rows() if r["method"] == "rf"}
    assert rows["forest"]["accuracy"] == original[rows["forest"]["key"]]["accuracy"]
    result = CliRunner().invoke(app, ["run", str(write_config(second, "b.yaml")), "--reuse",
                                      str(tmp_path / "nowhere"), "--out", str(tmp_path / "c")])
    assert result.exit_code != 0 and "nowhere" in result.output


@pytest.mark.slow
def test_failures_are_recorded_and_the_sweep_goes_on(write_config, tmp_path):
    cfg = tiny_config()
    cfg["datasets"] = ["liver"]
    cfg["protocol"].update(splits=1, timeout=4)
    cfg["methods"] = [
        {"name": "svm", "family": "svm_rbf", "grid": {"C": [1.0]}},
        {"name": "raise", "family": "debug_fail", "params": {"mode": "raise"}},
        {"name": "abort", "family": "debug_fail", "params": {"mode": "abort"}},
        {"name": "oomkill", "family": "debug_fail", "params": {"mode": "sigkill"}},
        {"name": "hang", "family": "debug_fail", "params": {"mode": "sleep", "seconds": 600}},
    ]
    exp = load_config(write_config(cfg))
    t0 = time.perf_counter()
    console = Console(record=True, width=200)
    outcome = run_experiment(exp, out_dir=tmp_path / "out", n_jobs=2, progress=False, console=console)
    assert time.perf_counter() - t0 < 60  # the hanging run was killed at its limit
    # without the progress bar (a background sweep), one log line per finished run, failures with their error
    log = [line for line in console.export_text().splitlines() if line.startswith("[")]
    assert len(log) == 5 and sorted(line[:5] for line in log) == [f"[{k}/5]" for k in range(1, 6)]
    assert any("liver/svm split 0: ok, accuracy " in line for line in log)
    assert any("liver/hang split 0: timeout, " in line and "timeout of 4 s" in line for line in log)
    rows = {r["method"]: r for r in ResultStore(tmp_path / "out").rows()}
    assert rows["svm"]["status"] == "ok" and rows["svm"]["accuracy"] > 50
    assert rows["raise"]["status"] == "failed"
    assert "RuntimeError: debug_fail: deliberate failure" in rows["raise"]["error"]
    assert "Traceback" in rows["raise"]["traceback"] and "_misbehave" in rows["raise"]["traceback"]
    assert rows["abort"]["status"] == "crashed" and "SIGABRT" in rows["abort"]["error"]
    assert rows["oomkill"]["status"] == "crashed" and "SIGKILL" in rows["oomkill"]["error"]
    assert rows["hang"]["status"] == "timeout" and "timeout of 4 s" in rows["hang"]["error"]
    assert outcome.counts == {"ok": 1, "failed": 1, "crashed": 2, "timeout": 1}
    # a re-run retries the four runs that did not succeed, and only those
    again = run_experiment(exp, out_dir=tmp_path / "out", n_jobs=2, progress=False, only=["*/[!h]*"])
    assert again.skipped == 1 and again.executed == 3
    assert len(ResultStore(tmp_path / "out").rows()) == 5


@pytest.mark.slow
def test_resume_after_sigkill(write_config, tmp_path):
    cfg = tiny_config()
    cfg["protocol"]["splits"] = 4
    path = write_config(cfg)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "tkbench", "run", str(path), "-j", "2", "--out", str(out),
                             "--no-progress"], start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    rows_dir = out / "rows"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(rows_dir.glob("*.json"))) < 4:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the whole sweep: main process, joblib workers, run children
    proc.wait()
    done_before = len(list(rows_dir.glob("*.json")))
    time.sleep(3)
    assert len(list(rows_dir.glob("*.json"))) == done_before  # no orphan run lives on after the kill
    exp = load_config(path)
    planned = {s.key for s in make_plan(exp)}
    assert 4 <= done_before < len(planned), "the kill should land halfway"
    outcome = run_experiment(exp, out_dir=out, n_jobs=2, progress=False)
    assert outcome.skipped >= 4 and outcome.skipped + outcome.executed == len(planned) == 16
    files = sorted(p.stem for p in rows_dir.glob("*.json"))
    assert sorted(files) == sorted(planned)  # every row exactly once (one file per key)
    rows = ResultStore(out).rows()
    assert all(r["key"] == name for r, name in zip(rows, files, strict=True))
    assert all(r["status"] == "ok" for r in rows)
    # and nothing is left to do
    assert run_experiment(exp, out_dir=out, progress=False).executed == 0


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigterm_stops_the_run_in_flight_at_once(write_config, tmp_path, jobs):
    """`kill PID` of a sweep: the run in flight dies too, its row is not written, the sweep exits promptly
    (with -j 1 it used to wait for the run to finish: multiprocessing joins non-daemonic children at exit).
    The run writes a heartbeat while it sleeps: the kill comes once it beats, and the beat must stop with the sweep."""
    beat = tmp_path / "heartbeat.txt"
    cfg = tiny_config()
    cfg["datasets"] = ["liver"]
    cfg["protocol"].update(splits=1, timeout=600)
    cfg["methods"] = [{"name": "slow", "family": "debug_fail",
                       "params": {"mode": "sleep", "seconds": 60, "heartbeat": str(beat)}}]
    path = write_config(cfg)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "tkbench", "run", str(path), "-j", jobs, "--out", str(out),
                             "--no-progress"], start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and not (beat.exists() and beat.stat().st_size):
        time.sleep(0.1)
    assert beat.exists() and beat.stat().st_size, "the run should be sleeping in its child by now"
    t0 = time.time()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 130
    assert time.time() - t0 < 10
    time.sleep(1)  # a beat written while the sweep was exiting has landed by now
    size = beat.stat().st_size
    time.sleep(1)  # five beats' time
    assert beat.stat().st_size == size, "the run in flight outlived the sweep"
    assert not list((out / "rows").glob("*.json"))


def test_force_only_and_dry_run(write_config, tmp_path):
    path = write_config(tiny_config())
    out = tmp_path / "out"
    runner = CliRunner()
    dry = runner.invoke(app, ["run", str(path), "--dry-run", "--out", str(out)])
    assert dry.exit_code == 0 and "12 runs, 0 done, 12 to run" in dry.output
    first = runner.invoke(app, ["run", str(path), "--only", "liver/svm", "--splits", "2", "--out", str(out),
                                "--no-progress"])
    assert first.exit_code == 0, first.output
    assert len(ResultStore(out).rows()) == 2
    stamps = {r["key"]: r["attempt"] for r in ResultStore(out).rows()}
    forced = runner.invoke(app, ["run", str(path), "--only", "liver/svm", "--splits", "2", "--force",
                                 "--out", str(out), "--no-progress"])
    assert forced.exit_code == 0
    assert all(r["attempt"] != stamps[r["key"]] for r in ResultStore(out).rows())
    assert (out / "config.yaml").exists()


@pytest.mark.parametrize("text, ids", [("2", [2]), ("0-2", [0, 1, 2]), (" 4, 0-1 ,1", [0, 1, 4]), ("3-3", [3])])
def test_split_ids_parse_numbers_and_ranges(text, ids):
    assert parse_split_ids(text) == ids


@pytest.mark.parametrize("ids, text", [([2], "2"), ([0, 1, 2, 5], "0-2, 5"), ([0, 2, 3, 4, 9, 10], "0, 2-4, 9-10"),
                                       ([], "")])
def test_split_ids_format_as_ranges_that_parse_back(ids, text):
    assert format_split_ids(ids) == text
    assert not ids or parse_split_ids(text) == ids


@pytest.mark.parametrize("text, item", [("", ""), ("2,", ""), ("a", "a"), ("-1", "-1"), ("3-1", "3-1"),
                                        ("1-2-3", "1-2-3"), ("1.5", "1.5"), ("0, x", "x")])
def test_split_ids_refuse_anything_else_naming_the_item(text, item):
    with pytest.raises(InputError, match=f"--split-ids '{text}': '{item}' is not a split number"):
        parse_split_ids(text)


def test_split_ids_refuse_numbers_no_config_can_have():
    """A split number beyond any config's splits is refused before a range of it is built in memory."""
    with pytest.raises(InputError, match="'0-99999999999' goes beyond the largest split number a config can have"):
        parse_split_ids("0-99999999999")
    assert parse_split_ids("9999") == [9999]


def test_split_ids_run_those_splits_with_the_whole_plans_keys(write_config, tmp_path):
    """``--split-ids`` keeps the runs of the named splits, with the keys (and so seeds and rows) they have in the
    whole plan: two lanes, each on its own splits and folder, make the rows one sweep would. Split numbers that
    select nothing, or a malformed list, stop with exit 2 and say what was expected."""
    path = write_config(tiny_config())
    exp = load_config(path)
    whole = make_plan(exp)
    some = make_plan(exp, only=["liver/rf"], split_ids=[0, 2])
    assert [(s.label, s.method, s.split) for s in some] == [("liver", "rf", 0), ("liver", "rf", 2)]
    assert {s.key for s in some} <= {s.key for s in whole}
    assert make_plan(exp, splits=2, split_ids=[1, 2]) == [s for s in whole if s.split == 1]
    out = tmp_path / "out"
    runner = CliRunner()
    ran = runner.invoke(app, ["run", str(path), "--only", "liver/rf", "--split-ids", "1", "--out", str(out),
                              "--no-progress"])
    assert ran.exit_code == 0, ran.output
    assert [r["split"] for r in ResultStore(out).rows()] == [1]
    dry = runner.invoke(app, ["run", str(path), "--only", "liver/rf", "--dry-run", "--out", str(out)])
    assert "3 runs, 1 done, 2 to run" in " ".join(dry.output.split())
    none = runner.invoke(app, ["run", str(path), "--split-ids", "3,4", "--out", str(out)])
    assert none.exit_code == 2 and "Traceback" not in none.output
    assert "--split-ids 3-4: selects no run of" in " ".join(none.output.split())
    assert "have splits 0-2, numbered from 0" in " ".join(none.output.split())
    cut = runner.invoke(app, ["run", str(path), "--splits", "1", "--split-ids", "1", "--out", str(out)])
    assert cut.exit_code == 2 and "have splits 0, numbered from 0" in " ".join(cut.output.split())
    wide = runner.invoke(app, ["run", str(path), "--split-ids", "5,7-9999", "--out", str(out)])
    assert wide.exit_code == 2 and "--split-ids 5, 7-9999: selects no run" in " ".join(wide.output.split())
    bad = runner.invoke(app, ["run", str(path), "--split-ids", "1-x", "--out", str(out)])
    assert bad.exit_code == 2 and "'1-x' is not a split number" in bad.output and "Traceback" not in bad.output
    assert [r["split"] for r in ResultStore(out).rows()] == [1]


def test_dry_run_names_runs_with_saved_states_and_stale_state_files(write_config, tmp_path):
    """Saved states (checkpoints/, a run's CV folds in tuning/): the runs still to do that continue from one are
    named, files of run keys the config no longer has are listed as safe to delete, and those of planned runs
    outside --only / --splits are neither."""
    path = write_config(tiny_config())
    out = tmp_path / "out"
    plan = make_plan(load_config(path))
    by_cell = {(s.label, s.method, s.split): s.key for s in plan}
    (out / "checkpoints").mkdir(parents=True)
    (out / "tuning").mkdir()
    (out / "checkpoints" / f"{by_cell['liver', 'svm', 0]}.cand0.npz").write_bytes(b"")
    (out / "tuning" / f"{by_cell['liver', 'rf', 2]}.cv.folds.json").write_text("{}")
    stale = "ab" * 32
    (out / "checkpoints" / f"{stale}.cand3.round.npz").write_bytes(b"")
    (out / "tuning" / "cd.json").write_text("{}")  # a shared CV choice, not a run's state
    runner = CliRunner()
    dry = runner.invoke(app, ["run", str(path), "--dry-run", "--out", str(out), "--only", "liver/*", "--splits", "1"])
    text = " ".join(dry.output.split())
    assert dry.exit_code == 0, dry.output
    assert "1 of the runs to run continue from their saved state (they run first): liver/svm split 0" in text
    assert "1 saved-state file(s) of 1 run key(s) that no run of this config has any more" in text
    assert f"{stale}.cand3.round.npz" in text and "cd.json" not in text
    assert by_cell["liver", "rf", 2] not in text  # planned (split 2), only outside --splits
    whole = runner.invoke(app, ["run", str(path), "--dry-run", "--out", str(out), "--only", "liver/*"])
    assert "2 of the runs to run continue" in " ".join(whole.output.split())
    ran = runner.invoke(app, ["run", str(path), "--out", str(out), "--only", "liver/*", "--splits", "1",
                              "--no-progress"])
    assert ran.exit_code == 0 and "2 to run (1 from a saved state, run first)" in " ".join(ran.output.split())


@pytest.mark.parametrize("backend", ["loky", pytest.param("dask", marks=pytest.mark.slow)])
def test_runs_continuing_from_a_saved_state_run_first(write_config, tmp_path, backend):
    """A run with a saved state (work begun in an earlier session) starts before the runs that have none, whatever
    its place in the plan; the others keep plan order. Observed with one worker: rows are written in run order.
    On dask the order is the scheduler's (first submitted, first run), checked here on a one-worker LocalCluster."""
    if backend == "dask":
        pytest.importorskip("distributed")
    cfg = tiny_config()
    cfg["protocol"]["splits"] = 2
    path = write_config(cfg)
    out = tmp_path / "out"
    plan = make_plan(load_config(path), only=["liver/*"])
    late = plan[-1]  # the last run of the plan
    (out / "checkpoints").mkdir(parents=True)
    (out / "checkpoints" / f"{late.key}.cand0.round.npz").write_bytes(b"")
    outcome = run_experiment(load_config(path), out_dir=out, only=["liver/*"], backend=backend, progress=False)
    assert outcome.executed == len(plan) > 2
    store = ResultStore(out)
    written = sorted(plan, key=lambda s: store.row_path(s.key).stat().st_mtime_ns)
    assert [s.key for s in written] == [late.key] + [s.key for s in plan[:-1]]


def test_provenance_and_timings_in_rows(write_config, tmp_path):
    cfg = tiny_config()
    cfg["protocol"]["splits"] = 1
    run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, progress=False)
    for row in ResultStore(tmp_path).rows():
        prov = row["provenance"]
        assert prov["tkbench_version"] and prov["python"] and prov["packages"]["scikit-learn"]
        assert prov["blas_threads"] == 1 and prov["workers"] == 1 and prov["cpu"]
        assert "git_sha" in prov and "git_dirty" in prov
        assert row["fit_seconds"] > 0 and row["cv_seconds"] > 0 and row["predict_seconds"] > 0
        # CPU time of the run's process: positive, and with one BLAS thread at most the wall clock of the whole run
        # and its helper threads (a generous 3x: numba or the loader may start a few)
        assert 0 < row["cpu_seconds"] <= 3 * row["total_seconds"] + 0.5
        assert row["chosen_params"] and row["params"] and row["n_train"] + row["n_test"] in (150, 345)


def test_cpu_seconds_count_the_work_of_the_process_and_its_children_not_waiting():
    """A row's cpu_seconds (beside its wall-clock total_seconds) says how much of a run was its own work: sleeping
    adds nothing, a waited-for child's work counts."""
    import subprocess
    import sys
    import time

    from tkbench.bench.execute import _cpu_seconds

    start = _cpu_seconds()
    time.sleep(0.3)
    assert _cpu_seconds() - start < 0.1
    start = _cpu_seconds()
    subprocess.run([sys.executable, "-c", "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"],
                   check=True)
    assert _cpu_seconds() - start >= 0.3


@pytest.mark.slow
def test_dask_backend_on_a_local_cluster(write_config, tmp_path):
    pytest.importorskip("distributed")
    cfg = tiny_config(datasets=["liver"])  # a dask worker's run is a fresh interpreter (about 3 s of imports)
    cfg["protocol"]["splits"] = 2
    cfg["methods"] = [cfg["methods"][0], {"name": "raise", "family": "debug_fail", "params": {"mode": "abort"}}]
    exp = load_config(write_config(cfg))
    outcome = run_experiment(exp, out_dir=tmp_path / "dask", n_jobs=2, backend="dask", progress=False)
    assert outcome.counts == {"ok": 2, "crashed": 2}
    run_experiment(exp, out_dir=tmp_path / "loky", n_jobs=1, progress=False)
    dask_numbers, loky_numbers = _numbers(tmp_path / "dask"), _numbers(tmp_path / "loky")
    assert dask_numbers == loky_numbers


def test_ray_is_not_a_backend(write_config, tmp_path):
    """Issue 48: the ray backend was documented but never exercised; it is gone, and asking for it says what is."""
    result = CliRunner().invoke(app, ["run", str(write_config(tiny_config())), "--backend", "ray",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 2 and "--backend 'ray': expected one of loky, dask" in result.output


def test_failed_rows_keep_no_machine_paths():
    from tkbench.bench.execute import _PACKAGE_ROOT, portable_traceback

    text = (f'  File "{_PACKAGE_ROOT}/tkbench/methods/tk/estimators.py", line 5, in fit\n'
            '  File "/opt/venv/lib/python3.11/site-packages/sklearn/base.py", line 9, in wrapper\n')
    out = portable_traceback(text)
    assert 'File "<tkbench>/tkbench/methods/tk/estimators.py"' in out
    assert 'File "<site-packages>/sklearn/base.py"' in out and _PACKAGE_ROOT not in out


@pytest.mark.parametrize("progress", ["--progress", "--no-progress"])
def test_run_exits_1_and_names_each_cell_not_ok(write_config, tmp_path, progress):
    """Scripts must see a sweep that did not finish cleanly: exit 1 (2 stays for bad input), one line per cell
    with its failures and first error, in progress-bar mode too; a clean re-run of the ok cells exits 0."""
    cfg = tiny_config()
    cfg["datasets"] = ["liver"]
    cfg["protocol"].update(splits=2)
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": {"C": [1.0]}},
                      {"name": "raise", "family": "debug_fail", "params": {"mode": "raise"}}]
    path = write_config(cfg)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out), progress])
    assert result.exit_code == 1
    assert "not ok liver/raise: 2 failed of 2: RuntimeError: debug_fail: deliberate failure" in \
        " ".join(result.output.split())
    assert "liver/svm:" not in result.output
    clean = CliRunner().invoke(app, ["run", str(path), "--out", str(out), "--only", "liver/svm", progress])
    assert clean.exit_code == 0 and "not ok liver" not in clean.output


def test_bad_data_and_sizes_are_refused_before_any_run(write_config, tmp_path, monkeypatch):
    """A subsample above the dataset's rows and a changed data file: exit 2 with the field and the value, by
    --dry-run too, and no row written."""
    cfg = tiny_config()
    cfg["datasets"] = [{"name": "liver", "subsample": 100000}]
    path = write_config(cfg)
    out = tmp_path / "out"
    for extra in (["--dry-run"], []):
        result = CliRunner().invoke(app, ["run", str(path), "--out", str(out), *extra])
        assert result.exit_code == 2
        assert "datasets[0].subsample: 100000: at most 345 (the rows of liver)" in " ".join(result.output.split())
    assert not (out / "rows").exists() or not any((out / "rows").iterdir())
    import tkbench.data.registry as reg

    monkeypatch.setattr(reg, "sha256_file", lambda p: "0" * 64)  # every data file now looks changed
    cfg["datasets"] = ["liver"]
    result = CliRunner().invoke(app, ["run", str(write_config(cfg, "c2.yaml")), "--out", str(out), "--dry-run"])
    assert result.exit_code == 2 and "datasets[0]" in result.output and "sha256" in result.output.lower()


def test_the_warm_up_is_not_counted_against_the_run_timeout(tmp_path, monkeypatch):
    """Issue 48: a cold numba cache turned a 13-second failure into a timeout under load. The run reports its
    warm-up once set up; its supervisor's deadline is then start + timeout + warm-up."""
    from tkbench.bench import isolation
    from tkbench.bench import learn as ex  # the learner path writes the set-up marker (tkbench.bench.learn)

    class Sleeper:  # a child that never exits by itself
        def wait(self, seconds):
            time.sleep(seconds)
            return None

    marker = tmp_path / "row.json.setup"
    monkeypatch.setattr(ex, "SETUP_MARKER", str(marker))
    ex.setup_done(0.8)  # what a run writes after the family's warm-up
    assert float(marker.read_text()) == pytest.approx(0.8)
    t0 = time.monotonic()
    assert isolation._wait(Sleeper(), 0.4, lambda: None, str(marker)) == (None, None)
    assert 1.1 <= time.monotonic() - t0 < 3.0  # 0.4 s of timeout after 0.8 s of warm-up
    t0 = time.monotonic()
    assert isolation._wait(Sleeper(), 0.4, lambda: None, None) == (None, None)
    assert time.monotonic() - t0 < 1.0  # no marker to wait for: the plain timeout


def test_a_changed_estimator_default_keeps_old_keys_and_gives_new_runs_new_ones(write_config, monkeypatch):
    """tkbench.keys.with_changed_defaults: TK's dual_solver default moved from libsvm to auto (issue 50). A method
    that names the old value keeps the key its rows had when the old value was the default; one that leaves it
    unset runs the new default and gets the key of a method naming the new value."""
    import dataclasses

    from tkbench.keys import with_changed_defaults
    from tkbench.methods import registry

    assert with_changed_defaults({"C": 1}, {"s": ("a", "b")}) == {"C": 1, "s": "b"}
    assert with_changed_defaults({"s": "a"}, {"s": ("a", "b")}) == {}
    assert with_changed_defaults({"s": "c"}, {"s": ("a", "b")}) == {"s": "c"}

    def keys(dual_solver):
        cfg = tiny_config()
        cfg["datasets"] = ["liver"]
        params = {"degree": 1} | ({} if dual_solver is None else {"dual_solver": dual_solver})
        cfg["methods"] = [{"name": "tk", "family": "tk", "params": params, "grid": {}}]
        return [s.key for s in make_plan(load_config(write_config(cfg, f"{dual_solver}.yaml")))]

    unset, old, new = keys(None), keys("libsvm"), keys("auto")
    assert unset == new and not set(unset) & set(old)
    tk = registry.get_family("tk")
    assert tk.changed_defaults == {"dual_solver": ("libsvm", "auto")}
    # the key the unset method had before the change: the family without its changed defaults
    monkeypatch.setitem(registry.load_families(), "tk", dataclasses.replace(tk, changed_defaults={}))
    assert keys(None) == old


def test_skip_failed_keeps_failed_rows_and_still_retries_the_rest(write_config, tmp_path):
    """A method that raises on its data raises again on a resume: ``--skip-failed`` keeps its failed rows instead of
    paying for them at every resume (MKLpy's GRAM on liver: 30 runs, about 5 minutes each time), and says so; a
    crashed run (a dead process: memory, a signal) is still retried."""
    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"]["splits"] = 1
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": {"C": [1.0]}},
                      {"name": "raise", "family": "debug_fail", "params": {"mode": "raise"}},
                      {"name": "abort", "family": "debug_fail", "params": {"mode": "abort"}}]
    path = write_config(cfg)
    out = tmp_path / "out"
    first = run_experiment(load_config(path), out_dir=out, progress=False)
    assert first.counts == {"ok": 1, "failed": 1, "crashed": 1}
    attempts = {r["method"]: r["attempt"] for r in ResultStore(out).rows()}  # (a fresh id per attempt)
    runner = CliRunner()
    dry = runner.invoke(app, ["run", str(path), "--out", str(out), "--dry-run", "--skip-failed"])
    assert dry.exit_code == 0, dry.output
    assert "1 failed run(s) would keep their failed row (--skip-failed)" in " ".join(dry.output.split())
    assert "3 runs, 2 done, 1 to run" in " ".join(dry.output.split())
    kept = runner.invoke(app, ["run", str(path), "--out", str(out), "--no-progress", "--skip-failed"])
    assert kept.exit_code == 1, kept.output  # two runs are still not ok: a script hears it
    assert "2 already done, 1 to run" in " ".join(kept.output.split())
    rows = {r["method"]: r for r in ResultStore(out).rows()}
    assert rows["raise"]["attempt"] == attempts["raise"]  # not run again
    assert rows["abort"]["status"] == "crashed" and rows["abort"]["attempt"] != attempts["abort"]  # run again
    again = run_experiment(load_config(path), out_dir=out, progress=False)  # without it: both retried, as before
    assert again.executed == 2 and again.skipped == 1


def test_threads_caps_the_threads_of_each_run_below_the_configs(write_config, tmp_path, monkeypatch):
    """``--threads N`` leaves cores to other work (a second sweep beside this one): each run gets at most N BLAS /
    numba threads, the config's ``protocol.blas_threads`` still bounding it, and its row records what it had."""
    from tkbench.bench import backends

    monkeypatch.setattr(backends, "cores", lambda: 4)
    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"].update(splits=1, blas_threads=2)
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": {"C": [1.0]}}]
    path = write_config(cfg)
    runner = CliRunner()
    for flag, expected in ((["--threads", "1"], 1), (["--threads", "3"], 2)):  # without it: 2, the config's
        out = tmp_path / f"out{expected}"
        result = runner.invoke(app, ["run", str(path), "--out", str(out), "--no-progress", *flag])
        assert result.exit_code == 0, result.output
        assert f"{expected} BLAS thread(s) each" in " ".join(result.output.split())
        assert [r["provenance"]["blas_threads"] for r in ResultStore(out).rows()] == [expected]
    bad = runner.invoke(app, ["run", str(path), "--threads", "0", "--dry-run"])
    assert bad.exit_code == 2 and "--threads" in bad.output
