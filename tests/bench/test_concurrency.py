"""Processes that outlive their sweep, and sweeps that share a results folder (issue 22).

- ``kill -9`` of a sweep's main process alone: its loky workers notice at their next poll, kill their run and
  exit (``isolation._client_gone``), instead of computing for minutes with nobody to store the rows;
- two sweeps into one folder: the second stops at once with exit 3 and the first finishes every run, each row
  written once (the folder lock, ``ResultStore.lock``).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import tiny_config
from tkbench.bench.plan import make_plan
from tkbench.bench.runner import run_experiment
from tkbench.bench.store import ResultStore
from tkbench.cli import app
from tkbench.config import load_config


def _session(sid: int) -> list[int]:
    """The processes still alive in session ``sid`` (a sweep started with ``start_new_session``)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":  # (state, ppid, pgrp, session, ...)
            alive.append(int(entry.name))
    return alive


def _debug_runs(write_config, splits: int, name: str = "slow", **params):
    """A config of ``splits`` runs on liver of the test-only ``debug_fail`` method with ``params``."""
    cfg = tiny_config()
    cfg["datasets"] = ["liver"]
    cfg["protocol"].update(splits=splits, timeout=600)
    cfg["methods"] = [{"name": name, "family": "debug_fail", "params": params}]
    return write_config(cfg)


def _sleepers(write_config, seconds: int, splits: int = 2, heartbeat: Path | None = None):
    return _debug_runs(write_config, splits, mode="sleep", seconds=seconds,
                       **({"heartbeat": str(heartbeat)} if heartbeat else {}))


@pytest.mark.slow
def test_workers_exit_when_the_main_process_alone_is_killed(write_config, tmp_path):
    beat = tmp_path / "beat.txt"
    path = _sleepers(write_config, seconds=120, heartbeat=beat)  # each run beats its pid until released (never)
    proc = subprocess.Popen([sys.executable, "-m", "tkbench", "run", str(path), "-j", "2", "--out",
                             str(tmp_path / "out"), "--no-progress"], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # both runs in flight (their pids in the heartbeat), polled, not a fixed sleep: a loaded machine starts slowly.
    # Until 2026-12-02 this waited for 7 processes of the session, which the main process, the 2 workers and their
    # 2 forkservers reach with the two resource trackers, before any run exists: killed then, beside four sweeps
    # at nice 8, the workers were still waiting for their forkservers' imports, and left 55 s after the kill, once
    # those had started and the supervisors' polling began (seen process by process; this test had failed twice so)
    _poll(lambda: beat.exists() and len(set(beat.read_text().split())) >= 2, 180, "both runs in flight")
    assert len(_session(proc.pid)) >= 9  # main, 2 resource trackers, 2 workers, 2 forkservers, 2 runs
    os.kill(proc.pid, signal.SIGKILL)  # the main process only, not its group
    proc.wait()
    # the supervisors poll every 0.5 s: the workers notice within a second or two on an idle machine, and an
    # orphan would outlive any deadline, so a generous bound for a loaded machine weakens nothing
    deadline = time.time() + 60
    while time.time() < deadline and _session(proc.pid):
        time.sleep(0.2)
    assert _session(proc.pid) == [], "workers or runs outlived the killed sweep"
    assert not list((tmp_path / "out" / "rows").glob("*.json"))  # nobody wrote the lost runs


@pytest.mark.slow
def test_two_sweeps_into_one_folder(write_config, tmp_path):
    beat = tmp_path / "beat.txt"
    path = _sleepers(write_config, seconds=120, splits=2, heartbeat=beat)  # in flight until released
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "tkbench", "run", str(path), "--out", str(out), "--no-progress"]
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    _poll(lambda: beat.exists(), 120, "the first sweep's run is in flight")
    cli = CliRunner()  # the second sweep and the third from this process: the lock is the folder's, not a process's
    second = cli.invoke(app, cmd[3:])
    Path(f"{beat}.release").touch()  # the first sweep's runs may end now
    assert second.exit_code == 3, second.output
    assert "in use by another `tkbench run`" in second.output and f"pid {first.pid}" in second.output
    assert first.wait(timeout=120) == 0, first.stdout.read()
    rows = ResultStore(out).rows()
    assert sorted(r["key"] for r in rows) == sorted(s.key for s in make_plan(load_config(path)))
    assert all(r["status"] == "ok" for r in rows)
    again = cli.invoke(app, cmd[3:])  # the lock went with the first
    assert again.exit_code == 0 and "2 already done" in again.output.replace("\n", " ")


def _start_dask_cluster(tmp_path: Path) -> tuple[list[subprocess.Popen], str]:
    """A real scheduler and two single-thread workers on 127.0.0.1, started in their own working directory."""
    bin_dir = Path(sys.executable).parent
    where = tmp_path / "cluster_cwd"
    where.mkdir()
    info = tmp_path / "scheduler.json"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([str(bin_dir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--no-dashboard", "--scheduler-file", str(info)], cwd=where, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)]
    deadline = time.time() + 60
    while time.time() < deadline and not info.exists():
        time.sleep(0.2)
    import json

    address = json.loads(info.read_text())["address"]
    for _ in range(2):
        procs.append(subprocess.Popen([str(bin_dir / "dask"), "worker", address, "--nthreads", "1", "--nworkers", "1",
                                       "--no-dashboard", "--host", "127.0.0.1"], cwd=where, env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
    from distributed import Client

    with Client(address, timeout=60) as client:
        client.wait_for_workers(2, timeout=120)
    return procs, address


def _stop(procs: list[subprocess.Popen]) -> None:
    for proc in reversed(procs):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


@pytest.mark.slow
def test_external_dask_cluster_rows_come_back_and_a_killed_client_cancels_its_runs(write_config, tmp_path):
    pytest.importorskip("distributed")
    procs, address = _start_dask_cluster(tmp_path)
    try:
        client_cwd = tmp_path / "client_cwd"
        client_cwd.mkdir()
        cfg = tiny_config(datasets=["liver"])  # one run per worker: each is a fresh interpreter on a dask worker
        cfg["protocol"]["splits"] = 2
        cfg["methods"] = cfg["methods"][:1]
        path = write_config(cfg)
        cmd = [sys.executable, "-m", "tkbench", "run", str(path), "--backend", "dask", "--address", address,
               "-j", "2", "--out", "results/ext", "--no-progress"]  # a relative --out: the client's directory
        done = subprocess.run(cmd, cwd=client_cwd, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        rows = ResultStore(client_cwd / "results" / "ext").rows()
        assert sorted(r["key"] for r in rows) == sorted(s.key for s in make_plan(load_config(path)))
        assert all(r["status"] == "ok" for r in rows)
        assert not (tmp_path / "cluster_cwd" / "results").exists()  # nothing written where the workers run

        beat = tmp_path / "heartbeat.txt"
        slow = tiny_config(name="slow")
        slow["datasets"] = ["liver"]
        slow["protocol"].update(splits=2, timeout=600)
        slow["methods"] = [{"name": "slow", "family": "debug_fail",
                            "params": {"mode": "sleep", "seconds": 120, "heartbeat": str(beat)}}]
        slow_path = write_config(slow, "slow.yaml")
        client = subprocess.Popen([*cmd[:4], str(slow_path), *cmd[5:-2], "results/slow", "--no-progress"],
                                  cwd=client_cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
        deadline = time.time() + 120
        while time.time() < deadline and len(set(beat.read_text().split()) if beat.exists() else ()) < 2:
            time.sleep(0.2)
        assert len(set(beat.read_text().split())) == 2, "both runs should be sleeping on the cluster"
        os.kill(client.pid, signal.SIGKILL)
        client.wait()
        # the scheduler sees the client gone, the workers' supervisors see their tasks released: the heartbeat
        # (a line every 0.2 s per sleeping run) must stop, polled with a deadline instead of a fixed wait
        assert _stops_growing(beat, quiet=2.0, seconds=60), "a run of the killed client still runs on the cluster"
        assert not list((client_cwd / "results" / "slow" / "rows").glob("*.json"))
        assert all(p.poll() is None for p in procs), "the cluster itself stays up"
    finally:
        _stop(procs)


@pytest.mark.slow
def test_an_interrupted_force_run_says_how_to_finish(write_config, tmp_path):
    path = _sleepers(write_config, seconds=0, splits=1)  # (an ok row to force over, made in this process)
    out = tmp_path / "out"
    assert run_experiment(load_config(path), out_dir=out, progress=False).counts == {"ok": 1}
    cmd = [sys.executable, "-m", "tkbench", "run", str(path), "--out", str(out), "--no-progress"]
    beat = tmp_path / "beat.txt"
    slow = _sleepers(write_config, seconds=60, splits=1, heartbeat=beat)
    forced = subprocess.Popen([*cmd[:4], str(slow), *cmd[5:], "--force"], stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
    _poll(lambda: beat.exists() and beat.stat().st_size, 120, "the forced run is in flight")
    forced.send_signal(signal.SIGTERM)
    _, err = forced.communicate(timeout=30)
    assert forced.returncode == 130
    assert "run with --force again" in " ".join(err.split())


def test_the_forkserver_started_early_ends_with_the_command(write_config, tmp_path):
    """``tkbench run -j 1`` starts its forkserver before it plans (the two imports overlap); a command that then
    runs nothing must not leave it importing behind it (a forkserver only notices its parent's exit after its
    preload, 2-3 s later): it is killed and reaped at exit, so none is left the moment the command returns."""
    path = tmp_path / "bad.yaml"
    path.write_text("name: [unclosed\n")  # a config error: the command stops before it plans
    args = [sys.executable, "-m", "tkbench", "run", str(path), "--out", str(tmp_path / "out"), "--no-progress"]
    log = tmp_path / "log.txt"
    with log.open("w") as fh:  # (a file, not a pipe: waiting for a pipe's end would wait for the forkserver too)
        proc = subprocess.Popen(args, start_new_session=True, stdout=fh, stderr=subprocess.STDOUT)
        proc.wait(timeout=120)
    output = log.read_text()
    assert proc.returncode == 2 and "error:" in output, output
    left = [p for p in _session(proc.pid) if b"forkserver" in _cmdline(p)]
    assert left == [], "a forkserver outlived `tkbench run`"


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # (ended meanwhile)
        return b""


def _stops_growing(path: Path, quiet: float, seconds: float) -> bool:
    """Whether ``path`` stops growing (no change for ``quiet`` seconds) within ``seconds``."""
    deadline = time.time() + seconds
    size, since = path.stat().st_size, time.time()
    while time.time() < deadline:
        time.sleep(0.1)
        now = path.stat().st_size
        if now != size:
            size, since = now, time.time()
        elif time.time() - since >= quiet:
            return True
    return False


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _poll(condition, seconds: float, what: str):
    """Wait until ``condition()`` is true (polling, never a fixed sleep); fail saying ``what`` did not happen."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"not within {seconds} s: {what}")


@pytest.mark.slow
def test_a_killed_worker_records_its_run_as_crashed_and_the_sweep_goes_on(write_config, tmp_path):
    """Issue 48: kill -9 of one loky worker used to end the sweep with TerminatedWorkerError (no summary, no row)
    and leave the killed worker's run computing as an orphan."""
    heartbeat = tmp_path / "hb.txt"
    path = _sleepers(write_config, seconds=120, splits=3, heartbeat=heartbeat)  # in flight until released
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "tkbench", "run", str(path), "-j", "2", "--out", str(out),
                             "--no-progress"], start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    # a run is sleeping: its pid writes the heartbeat; its worker is that pid's supervisor
    run_pid = _poll(lambda: heartbeat.exists() and int(heartbeat.read_text().split()[0]), 120, "a run started")
    ppid = int(Path(f"/proc/{run_pid}/stat").read_text().rsplit(")", 1)[1].split()[1])  # its forkserver
    worker = int(Path(f"/proc/{ppid}/stat").read_text().rsplit(")", 1)[1].split()[1])  # the forkserver's worker
    assert "LokyProcess" in Path(f"/proc/{worker}/cmdline").read_bytes().decode(errors="replace")
    os.kill(worker, signal.SIGKILL)
    _poll(lambda: not _alive(run_pid), 20, "the killed worker's run ended with it")
    Path(f"{heartbeat}.release").touch()  # the other runs may end now
    output, _ = proc.communicate(timeout=300)
    assert proc.returncode == 1, output  # a crashed run: not every run is ok
    assert "Traceback" not in output and "TerminatedWorkerError" not in output, output
    rows = ResultStore(out).rows()
    status = sorted(r["status"] for r in rows)
    assert status == ["crashed", "ok", "ok"], (status, output)
    crashed = next(r for r in rows if r["status"] == "crashed")
    assert "its worker process died while it ran" in crashed["error"] and "SIGKILL" in crashed["error"]
    assert not _alive(run_pid), "the killed worker's run outlived it"
    _poll(lambda: not _session(proc.pid), 20, "every process of the sweep ended")


@pytest.mark.slow
def test_processes_a_method_starts_end_with_its_run(write_config, tmp_path):
    """A fit that starts a process in a new session (out of the run's process group) must not leave it behind."""
    pids = tmp_path / "pids.txt"
    path = _debug_runs(write_config, 2, "spawner", mode="spawn", seconds=300, heartbeat=str(pids))
    run = subprocess.run([sys.executable, "-m", "tkbench", "run", str(path), "-j", "2", "--out",
                          str(tmp_path / "out"), "--no-progress"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 2
    _poll(lambda: not any(_alive(p) for p in started), 10, f"the spawned processes {started} ended")


@pytest.mark.slow
def test_a_keyboard_interrupt_inside_a_fit_is_recorded_with_its_reason(write_config, tmp_path):
    path = _debug_runs(write_config, 1, "interrupted", mode="interrupt")
    run = subprocess.run([sys.executable, "-m", "tkbench", "run", str(path), "--out", str(tmp_path / "out"),
                          "--no-progress"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    (row,) = ResultStore(tmp_path / "out").rows()
    assert row["status"] == "failed" and row["error"] == "KeyboardInterrupt raised inside the run"
    assert "KeyboardInterrupt" in row["traceback"]


def test_a_run_s_supervisor_imports_no_numerical_code(write_config, tmp_path):
    """A loky worker only supervises: its run is forked from a forkserver that has the numerical stack. Importing
    scikit-learn in the supervisor cost each worker 2-3 s of CPU per sweep (the test suite starts dozens)."""
    import json

    cfg = tiny_config(datasets=["liver"])
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": {}}]
    spec = make_plan(load_config(write_config(cfg)))[0].to_dict()
    code = ("import json, sys\n"
            "from tkbench.bench.isolation import run_isolated\n"
            f"summary = run_isolated(json.loads({json.dumps(json.dumps(spec))}), {{}}, {str(tmp_path)!r})\n"
            "heavy = sorted(m for m in ('sklearn', 'scipy', 'tkbench.bench.execute') if m in sys.modules)\n"
            "print(json.dumps({'status': summary['status'], 'heavy': heavy}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"status": "ok", "heavy": []}, (result, out.stderr)


def test_the_forkserver_holds_every_family_and_a_frozen_heap():
    """What every run's child inherits instead of importing it: the registry's families (each child used to import
    about 120 modules of its own, 0.5-0.7 s per run, more than a small baseline's whole run), and a heap frozen out
    of the collector's sweeps (each child's first full collection walked it: 0.1-0.2 s). numba, torch, cvxpy and
    dask stay lazy: a sweep that does not use them does not pay for them."""
    import json

    from tkbench.bench import isolation

    assert isolation._PRELOAD == ["tkbench.bench.preload"]
    code = ("import gc, json, sys\n"
            "import tkbench.bench.preload\n"
            "from tkbench.methods.family import FAMILIES\n"
            "lazy = sorted(m for m in ('numba', 'torch', 'cvxpy', 'distributed') if m in sys.modules)\n"
            "print(json.dumps({'families': sorted(FAMILIES), 'frozen': gc.get_freeze_count(), 'loaded': lazy}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"tk", "simplemkl", "nkrr", "sikl", "hgk", "svm_rbf", "random_forest"} <= set(found["families"])
    assert found["frozen"] > 10_000 and found["loaded"] == [], found
    # a family whose import fails in the forkserver is looked up again by each child, which records the real error
    broken = ("import importlib\n"
              "from tkbench.methods import registry\n"
              "real = importlib.import_module\n"
              "def fail(name, *args):\n"
              "    if name == 'tkbench.methods.nkrr.estimators':\n"
              "        raise ImportError('broken on purpose')\n"
              "    return real(name, *args)\n"
              "importlib.import_module = fail\n"
              "import tkbench.bench.preload\n"
              "importlib.import_module = real\n"
              "print(registry._loaded, registry.get_family('nkrr').name)\n")
    out = subprocess.run([sys.executable, "-c", broken], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.split() == ["False", "nkrr"], (out.stdout, out.stderr)


@pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="no sched_autogroup on this kernel")
def test_a_run_in_a_session_of_its_own_keeps_the_sweeps_niceness():
    """The subprocess path starts each run in a new session, hence a new autogroup, which the scheduler weighs at
    niceness 0 whatever the process's own: the run carries its niceness into its autogroup. A process that does
    not lead its session (the forkserver path, or a user's terminal) leaves the autogroup alone."""
    probe = ("import os; from pathlib import Path; from tkbench.bench.isolation import _carry_niceness\n"
             "os.nice(7)\n"
             "print(_carry_niceness(), Path('/proc/self/autogroup').read_text().split()[-1], os.nice(0))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                         start_new_session=True)  # a session leader, as the subprocess path's child
    assert out.returncode == 0, out.stderr
    written, nice, own_nice = out.stdout.split()
    # its own niceness: 7 above the test's (pytest itself may run niced, e.g. beside sweeps)
    assert written == "True" and nice == own_nice == str(min(os.nice(0) + 7, 19)), out.stdout
    own = subprocess.run([sys.executable, "-c", "import os; from tkbench.bench.isolation import _carry_niceness; "
                          "os.nice(3); print(_carry_niceness())"], capture_output=True, text=True, timeout=60)
    assert own.stdout.strip() == "False", own.stdout + own.stderr  # not a session leader: nothing written
