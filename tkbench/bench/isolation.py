"""Failure isolation: every run executes in a child process supervised by the (joblib) worker.

- an exception inside the run -> the child writes a ``failed`` row with the traceback;
- the child dies (abort, segfault, out-of-memory kill) -> the supervisor writes a ``crashed`` row with the signal;
- the run outlives ``timeout`` -> the supervisor kills the child's process group and writes a ``timeout`` row.

The supervisor itself never raises, so one bad run cannot abort the joblib batch (GUIDE section 6).

Children come from a ``forkserver`` that has already imported the numerical stack (cheap, and safe even when the
supervisor has threads). A daemonic worker (dask's default) may not have multiprocessing children; there the child
is a fresh interpreter (``python -m tkbench.bench.child``), slower to start but equally isolated.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from tkbench.bench.store import ResultStore

_PRELOAD = ["tkbench.bench.execute"]


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


def _child_main(spec: dict[str, Any], context: dict[str, Any], root: str, die_with_parent: bool = True) -> None:
    if die_with_parent:  # the forkserver is single-threaded; a thread-pool parent (dask) could exit under us
        _die_with_parent()
    try:
        os.setpgrp()  # our own process group, so that a timeout kill also reaches grandchildren
    except OSError:
        pass  # already a session leader (the subprocess path starts a new session)
    from tkbench.bench.execute import execute

    ResultStore(root).write_row(execute(spec, context, root=root))


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _kill_group(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass


class _Fork:
    """A child from the forkserver."""

    def __init__(self, spec, context, root):
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        self.proc = ctx.Process(target=_child_main, args=(spec, context, root), daemon=False)
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

    def __init__(self, spec, context, root):
        fd, self.payload = tempfile.mkstemp(prefix="tkbench-run-", suffix=".json")
        with os.fdopen(fd, "w") as fh:
            json.dump({"spec": spec, "context": context, "root": root}, fh)
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


def run_isolated(spec: dict[str, Any], context: dict[str, Any], root: str) -> dict[str, Any]:
    """Run ``spec`` in a child process and make sure exactly one row for its key exists afterwards.

    Returns a small summary (key, cell, split, size, status, metric value, seconds) for progress reporting.
    """
    from tkbench.bench.execute import base_row, now

    store = ResultStore(root)
    context = {**context, "attempt": uuid.uuid4().hex}
    t0 = time.perf_counter()
    timeout = spec.get("timeout")
    status, error = None, None
    child = None
    try:
        child = (_Subprocess if mp.current_process().daemon else _Fork)(spec, context, root)
        try:
            code = child.wait(timeout)
        except KeyboardInterrupt:  # Ctrl-C / SIGTERM of the sweep: the run dies with it, no row is written
            _kill_group(child.pid)  # (otherwise multiprocessing would join the child at exit, i.e. let it finish)
            child.reap()
            raise
        if code is None:  # still running at the limit
            _kill_group(child.pid)
            child.reap()
            status, error = "timeout", f"killed after exceeding the run timeout of {timeout:g} s"
        else:
            code = child.reap() if isinstance(child, _Subprocess) else code
            row = store.read_row(spec["key"])
            if row is not None and row.get("attempt") == context["attempt"]:
                status = row["status"]
            elif code is not None and code < 0:
                status, error = "crashed", f"worker process died of {_signal_name(code)} (exit code {code})"
            else:
                status, error = "crashed", f"worker process exited with code {code} without writing its result"
    except Exception as exc:  # the supervisor must never raise into joblib
        status, error = "crashed", f"could not supervise the run: {type(exc).__name__}: {exc}"
    if status in ("timeout", "crashed"):
        row = base_row(spec, context)
        row.update(status=status, error=error, total_seconds=time.perf_counter() - t0, finished_at=now())
        store.write_row(row)
    else:
        row = store.read_row(spec["key"]) or {}
    metric = row.get("metric")
    return {
        "key": spec["key"],
        "cell": f"{spec['label']}/{spec['method']}",
        "split": spec["split"],
        "size": spec.get("size"),
        "status": status,
        "metric": metric,
        "value": row.get(metric) if metric else None,
        "seconds": time.perf_counter() - t0,
        "error": row.get("error"),
    }


def _subprocess_entry(payload: str) -> None:
    data = json.loads(Path(payload).read_text())
    _child_main(data["spec"], data["context"], data["root"], die_with_parent=False)
