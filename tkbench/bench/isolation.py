"""Failure isolation: every run executes in a child process supervised by the (joblib / dask) worker.

- an exception inside the run -> the child's row is ``failed``, with the traceback;
- the child dies (abort, segfault, out-of-memory kill) -> the supervisor makes a ``crashed`` row with the signal;
- the run outlives ``timeout`` -> the supervisor kills the child's process group and makes a ``timeout`` row;
- the client that asked for the run is gone (``kill -9`` of the sweep's main process, a dask client killed or
  disconnected) -> the supervisor kills the child and returns no row (:func:`_client_gone`); a worker killed while
  its forkserver is still importing the numerical stack (the first run of a sweep) notices once the forkserver
  answers and the child exists: within seconds on an idle machine, 55 s seen beside four sweeps at nice 8;
- the supervisor itself dies (``kill -9`` of one loky worker) -> the child's watchdog (:func:`_watch_supervisor`)
  sees it within half a second, leaves a note for the client (``<root>/.orphaned/<key>.json``: that run is then
  recorded as crashed and the sweep goes on, :func:`orphaned_runs`) and ends itself, its whole process tree and its
  forkserver.

Nothing a run starts outlives it (Linux): the child is a *child subreaper* (``PR_SET_CHILD_SUBREAPER``), so every
process its method starts stays in its tree even when it double-forks or starts a new session; when the run ends
(result written, exception, SIGTERM from a timeout, or its supervisor gone) the child kills that whole tree
(:func:`_kill_descendants`). A timeout sends SIGTERM first (the child cleans up its tree), then SIGKILL to the
child's process group after a grace period. Not covered: descendants in another session of a child that is itself
killed by SIGKILL before it can clean up (the kernel's out-of-memory killer); they are re-parented to init. On other
platforms only the process group is killed.

The child hands its row to the supervisor through a private file in the worker's temporary folder, and the
supervisor returns it to the client, which alone writes rows into the results folder: a worker on another machine
or in another working directory (an external dask cluster) never needs to see the results folder. The supervisor
itself never raises, so one bad run cannot abort the batch (GUIDE section 6).

Children come from a ``forkserver`` that has already imported the numerical stack (cheap, and safe even when the
supervisor has threads). A sweep whose own process supervises (``-j 1``) starts it before planning
(:func:`start_forkserver`), so that the two imports overlap. A daemonic worker (dask's default) may not have multiprocessing children; there the child
is a fresh interpreter (``python -m tkbench.bench.child``), slower to start but equally isolated.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

_PRELOAD = ["tkbench.bench.preload"]  # (the forkserver imports it once: see that module)


def _die_with_parent() -> None:
    """Linux: get SIGKILL when the parent dies, so that killing a sweep (even kill -9) leaves no orphan runs."""
    parent = os.getppid()
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


PR_SET_CHILD_SUBREAPER = 36
ORPHANED = ".orphaned"  # notes of runs whose supervisor died: <root>/.orphaned/<key>.json


def _become_subreaper() -> None:
    """Linux: orphaned descendants (double forks, new sessions) are re-parented to this process, not to init."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _carry_niceness(autogroup: Path = Path("/proc/self/autogroup")) -> bool:
    """Linux with ``sched_autogroup``: the scheduler shares the CPU between *sessions* (autogroups) first, so a
    run in a session of its own (the subprocess path: ``start_new_session``) would lose the niceness of the sweep
    that started it (``nice -n 10 tkbench run ...`` beside another sweep). Give the run's own autogroup the
    process's niceness. Only when this process leads its session (its autogroup is its own, never the user's
    terminal's) and is niced; True when written. Best effort: no autogroup file or no permission leaves it."""
    try:
        nice = os.nice(0)
        if nice <= 0 or os.getsid(0) != os.getpid():
            return False
        autogroup.write_text(f"{nice}\n", encoding="ascii")
        return True
    except OSError:
        return False


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc; empty where there is none), children before grandchildren."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read().decode(errors="replace")
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out, queue = [], list(children.get(pid, []))
    while queue:
        p = queue.pop(0)
        out.append(p)
        queue.extend(children.get(p, []))
    return out


def _kill_descendants(pid: int | None = None) -> None:
    """SIGKILL every descendant of ``pid`` (default: this process) and reap those that are our children. As a
    subreaper we see again whatever they start while we kill them, so repeat until none is left."""
    me = os.getpid() if pid is None else pid
    for _ in range(20):
        found = _descendants(me)
        if not found:
            return
        for p in found:
            try:
                os.kill(p, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            try:
                if os.waitpid(-1, os.WNOHANG) == (0, 0):
                    break
            except ChildProcessError:
                break


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (a killed worker stays a zombie until reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().decode(errors="replace").rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except FileNotFoundError:
        return False
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True


def _watch_supervisor(supervisor: int, key: str, root: str | None) -> None:
    """A daemon thread: when the supervising worker dies (``kill -9`` of a loky worker), leave a note for the
    client, kill this run's tree and its forkserver (nothing else will use it), and exit."""
    import threading

    def watch() -> None:
        while _alive(supervisor):
            time.sleep(POLL_SECONDS)
        try:
            if root and os.path.isdir(root):
                note = Path(root) / ORPHANED / f"{key}.json"
                note.parent.mkdir(exist_ok=True)
                note.write_text(json.dumps({"key": key, "pid": os.getpid(), "supervisor": supervisor,
                                            "noticed_at": time.time()}), encoding="utf-8")
        finally:
            _kill_descendants()
            parent = os.getppid()
            if parent not in (1, supervisor) and not _alive(supervisor):  # our forkserver, orphaned with us
                try:
                    os.kill(parent, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            os._exit(1)

    threading.Thread(target=watch, name="tkbench-supervisor-watch", daemon=True).start()


def orphaned_runs(root: str | Path) -> set[str]:
    """The keys of runs whose supervisor died under them (their children's notes), the notes removed."""
    folder = Path(root) / ORPHANED
    keys = set()
    for note in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        keys.add(note.stem)
        note.unlink(missing_ok=True)
    return keys


def _child_main(spec: dict[str, Any], context: dict[str, Any], root: str, result: str,
                die_with_parent: bool = True) -> None:
    if die_with_parent:  # the forkserver is single-threaded; a thread-pool parent (dask) could exit under us
        _die_with_parent()
    try:
        os.setpgrp()  # our own process group, so that a timeout kill also reaches grandchildren
    except OSError:
        pass  # already a session leader (the subprocess path starts a new session)
    _carry_niceness()
    _become_subreaper()
    supervisor = context.get("supervisor_pid")
    if supervisor:
        _watch_supervisor(int(supervisor), spec["key"], root)

    def on_term(signum, frame) -> None:  # a timeout: clean up the tree before the SIGKILL that follows
        _kill_descendants()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    from tkbench.bench import learn
    from tkbench.bench.execute import execute
    from tkbench.bench.store import write_json_atomic

    learn.SETUP_MARKER = result + ".setup"

    try:
        write_json_atomic(Path(result), execute(spec, context, root=root))
    finally:
        _kill_descendants()  # whatever the method started (threads' pools, servers, double forks) ends with the run


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


WARMUP_LIMIT = 600.0  # seconds of set-up (data, compiling) a run may take beyond its timeout, at most
TERM_GRACE = 2.0  # seconds a timed-out run has between SIGTERM (clean up its tree) and SIGKILL


def _terminate_group(child) -> None:
    """SIGTERM the run's process group (its child kills its own tree), then SIGKILL what is left."""
    try:
        os.killpg(child.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass
    if child.wait(TERM_GRACE) is None:
        _kill_group(child.pid)


def _kill_group(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass


def _forkserver_context():
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(_PRELOAD)
    return ctx


def start_forkserver() -> None:
    """Start this process's forkserver now, in the background, for a sweep whose runs this process supervises
    (``-j 1``). The forkserver's preload (scikit-learn and every family, 2-3 s of CPU) then overlaps with this
    process's own import of the same stack for planning, instead of following it: on two cores the first run
    starts 2-3 s sooner (a one-run sweep of liver / svm_rbf: 7.3 -> 5.0 s wall on this project's 2-core VM, the
    run itself 2.4-3.1 -> 0.3-0.8 s, 2026-11-30; docs/ci.md).

    Nothing outlives the sweep: a forkserver exits when the last process holding its "alive" pipe does, but only
    once its preload is done; at exit this process therefore kills a forkserver it started (its runs have all been
    waited for by then)."""
    import atexit
    from multiprocessing import forkserver

    try:
        _forkserver_context()
        forkserver.ensure_running()
    except (ValueError, OSError):  # no forkserver on this platform, or no process to spare: runs start it as before
        return
    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    if pid is not None and pid not in _ENDED_AT_EXIT:  # (once per forkserver: a process may run several sweeps)
        _ENDED_AT_EXIT.add(pid)
        atexit.register(_end_forkserver, pid)


_ENDED_AT_EXIT: set[int] = set()


def _end_forkserver(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError, PermissionError):
        pass


class _Fork:
    """A child from the forkserver."""

    def __init__(self, spec, context, root, result):
        ctx = _forkserver_context()
        self.proc = ctx.Process(target=_child_main, args=(spec, context, root, result), daemon=False)
        self.proc.start()
        self.pid = self.proc.pid

    def wait(self, timeout: float | None) -> int | None:
        self.proc.join(timeout)
        return self.proc.exitcode

    def reap(self) -> int | None:
        self.proc.join(5)
        return self.proc.exitcode


class _Subprocess:
    """A child that is a fresh interpreter (for daemonic workers)."""

    def __init__(self, spec, context, root, result):
        fd, self.payload = tempfile.mkstemp(prefix="tkbench-run-", suffix=".json")
        with os.fdopen(fd, "w") as fh:
            json.dump({"spec": spec, "context": context, "root": root, "result": result}, fh)
        self.proc = subprocess.Popen([sys.executable, "-m", "tkbench.bench.child", self.payload],
                                     start_new_session=True)
        self.pid = self.proc.pid

    def wait(self, timeout: float | None) -> int | None:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def reap(self) -> int | None:
        try:
            code = self.proc.wait(5)
        except subprocess.TimeoutExpired:
            code = None
        os.unlink(self.payload)
        return code  # negative: killed by that signal


POLL_SECONDS = 0.5  # how often a supervisor looks at its run's clock and at its client


def _client_gone(context: dict[str, Any]) -> Callable[[], str | None]:
    """A check telling why the run's client no longer wants the run, or None while it does.

    - in a dask worker: the run's task was cancelled or released (its client was killed, disconnected or cancelled
      it); dask cannot interrupt a running task, so its supervisor has to look;
    - in a worker process of the client (loky): the client died (``kill -9`` of the main process alone), seen as
      this process being re-parented (also when that happened before the run started: a task already queued).
    """
    worker = key = None
    if "distributed" in sys.modules:  # (a dask worker has imported it; nothing else needs to pay for the import)
        try:
            from distributed import get_worker
            from distributed.worker import thread_state

            worker, key = get_worker(), getattr(thread_state, "key", None)
        except (ImportError, ValueError):
            worker = key = None
    if worker is not None and key is not None:
        def cancelled() -> str | None:
            task = worker.state.tasks.get(key)
            return None if task is not None and task.state in ("executing", "long-running") else \
                f"the dask task was {'released' if task is None else task.state} (client gone or run cancelled)"
        return cancelled
    client = context.get("client_pid")
    if client is None or not mp.current_process().name.startswith("LokyProcess"):
        return lambda: None  # the client runs the run itself (-j 1)
    return lambda: None if os.getppid() == client else f"the client process {client} died"


def run_isolated(spec: dict[str, Any], context: dict[str, Any], root: str) -> dict[str, Any]:
    """Run ``spec`` in a child process and return its row with a small summary for progress reporting.

    Returns ``{key, cell, split, size, status, metric, value, seconds, error, row}``; the caller writes ``row``
    into the results folder. ``root`` is that folder (absolute), used by the run for shared tuning only.

    The supervisor imports no numerical code (the child comes from a forkserver that has it): a loky worker that
    only supervises starts in a tenth of a second instead of the 2-3 s of scikit-learn's import.
    """
    context = {**context, "attempt": uuid.uuid4().hex, "supervisor_pid": os.getpid()}
    t0 = time.perf_counter()
    timeout = spec.get("timeout")
    gone = _client_gone(context)
    row: dict[str, Any] | None = None
    status, error = None, None
    scratch = tempfile.mkdtemp(prefix="tkbench-row-")
    result = os.path.join(scratch, "row.json")
    try:
        child = (_Subprocess if mp.current_process().daemon else _Fork)(spec, context, root, result)
        try:
            code, why = _wait(child, timeout, gone, result + ".setup")
        except KeyboardInterrupt:  # Ctrl-C / SIGTERM of the sweep: the run dies with it, no row is written
            _kill_group(child.pid)  # (otherwise multiprocessing would join the child at exit, i.e. let it finish)
            child.reap()
            raise
        if why is not None:  # the client is gone: nobody will store the row
            _kill_group(child.pid)
            child.reap()
            if why.startswith("the client process"):
                os._exit(1)  # a worker process whose client died: it has nothing left to do
            status, error = "cancelled", why
        elif code is None:  # still running at the limit
            _terminate_group(child)
            child.reap()
            warm = _warmup_seconds(result + ".setup")
            status, error = "timeout", f"killed after exceeding the run timeout of {timeout:g} s" + (
                f" (not counting {warm:.1f} s of warm-up: compiling or loading compiled code)" if warm else "")
        else:
            code = child.reap() if isinstance(child, _Subprocess) else code
            try:
                row = json.loads(Path(result).read_text(encoding="utf-8"))
                status = row["status"]
            except (OSError, ValueError, KeyError):
                row = None
                if code is not None and code < 0:
                    status, error = "crashed", f"worker process died of {_signal_name(code)} (exit code {code})"
                else:
                    status, error = "crashed", f"worker process exited with code {code} without writing its result"
    except Exception as exc:  # the supervisor must never raise into the batch
        status, error = "crashed", f"could not supervise the run: {type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if status == "cancelled":  # (a dask task nobody waits for: its result is dropped)
        row = None
    elif row is None:
        from tkbench.bench.execute import base_row, now

        row = base_row(spec, context)
        row.update(status=status, error=error, total_seconds=time.perf_counter() - t0, finished_at=now())
    row_or_empty = row or {}
    metric = row_or_empty.get("metric")
    return {
        "key": spec["key"],
        "cell": f"{spec['label']}/{spec['method']}",
        "split": spec["split"],
        "size": spec.get("size"),
        "status": status,
        "metric": metric,
        "value": row_or_empty.get(metric) if metric else None,
        "seconds": time.perf_counter() - t0,
        "error": row_or_empty.get("error", error),
        "row": row,
    }


def crashed_summary(spec: dict[str, Any], context: dict[str, Any], error: str) -> dict[str, Any]:
    """The summary (with its ``crashed`` row) of a run whose supervisor died, made by the client."""
    from tkbench.bench.execute import base_row, now

    row = base_row(spec, context)
    row.update(status="crashed", error=error, finished_at=now())
    return {"key": spec["key"], "cell": f"{spec['label']}/{spec['method']}", "split": spec["split"],
            "size": spec.get("size"), "status": "crashed", "metric": None, "value": None, "seconds": 0.0,
            "error": error, "row": row}


def _warmup_seconds(marker: str) -> float:
    try:
        return float(Path(marker).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0.0


def _wait(child, timeout: float | None, gone: Callable[[], str | None],
          setup_marker: str | None = None) -> tuple[int | None, str | None]:
    """Wait for the child until it exits (its exit code), the timeout (None) or the client is gone (the reason).
    The run's warm-up is not counted: until the child reports its set-up done (``setup_marker``) the deadline
    allows :data:`WARMUP_LIMIT` more seconds; then it is the start + timeout + the warm-up's seconds."""
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout + (WARMUP_LIMIT if setup_marker else 0.0)
    settled = setup_marker is None
    while True:
        if not settled and deadline is not None and os.path.exists(setup_marker):
            deadline, settled = start + timeout + _warmup_seconds(setup_marker), True
        left = POLL_SECONDS if deadline is None else min(POLL_SECONDS, deadline - time.monotonic())
        code = child.wait(max(left, 0.0))
        if code is not None:
            return code, None
        why = gone()
        if why is not None:
            return None, why
        if deadline is not None and time.monotonic() >= deadline:
            return None, None


def _subprocess_entry(payload: str) -> None:
    data = json.loads(Path(payload).read_text())
    _child_main(data["spec"], data["context"], data["root"], data["result"], die_with_parent=False)
