"""One run's row, start to finish: the fields every row has, the run itself (its experiment kind's,
:mod:`tkbench.kinds`; a family's fit is :mod:`tkbench.bench.learn`), timing, memory, the status.

This module runs inside the isolated child process (see :mod:`tkbench.bench.isolation`). It never raises: an
exception becomes a ``failed`` row with its traceback.
"""
from __future__ import annotations

import os
import re
import resource
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_limits

from tkbench.bench.learn import cv_checkpoint
from tkbench.bench.spec import RunSpec
from tkbench.kinds import get_kind

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the checkout (or install prefix) holding tkbench/


def portable_traceback(text: str) -> str:
    """A traceback without this machine's paths, so result rows can be committed and compared across machines:
    files under site-packages become ``<site-packages>/...``, files of the checkout ``<tkbench>/...``."""
    text = re.sub(r'File "[^"]*?[/\\](?:site|dist)-packages[/\\]', 'File "<site-packages>/', text)
    return text.replace(f'File "{_PACKAGE_ROOT}/', 'File "<tkbench>/')


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def base_row(spec: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    """The fields every row has, whatever its status."""
    return {
        "key": spec["key"],
        "attempt": context.get("attempt"),
        "experiment": spec["experiment"],
        "kind": spec["kind"],
        "dataset": spec["label"],
        "dataset_name": spec["dataset"],
        "method": spec["method"],
        "family": spec["family"],
        "solver": spec["solver"],
        "task": spec["task"],
        "split": spec["split"],
        "seed": spec["seed"],
        "size": spec.get("size"),
        "vary_param": (spec.get("vary") or {}).get("param"),
        "vary_value": (spec.get("vary") or {}).get("value"),
        "vary_size": (spec.get("vary") or {}).get("size"),
        "status": "running",
        "error": None,
        "traceback": None,
        "spec": spec,
        "provenance": {k: v for k, v in context.items() if k != "attempt"},
        "started_at": now(),
    }


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _cpu_seconds() -> float:
    """User and system CPU time of this process (all its threads) and of its children that have been waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _run(spec: RunSpec, row: dict[str, Any], threads: int = 1, root: str | None = None) -> None:
    """The run itself is its experiment kind's (:mod:`tkbench.kinds`): a family's fit, a kernel class's fit to
    the optimal kernel matrix, an objective over a grid."""
    get_kind(spec.kind).execute(spec, row, threads, root)


def execute(spec: dict[str, Any] | RunSpec, context: dict[str, Any], root: str | None = None) -> dict[str, Any]:
    """Run one spec and return its row (status ``ok`` or ``failed``); never raises. ``root`` is the results
    folder (shared hyper-parameter choices are cached under ``<root>/tuning``). The spec arrives in its plain form
    (from the run's supervisor) and is typed again here: execution reads a :class:`RunSpec`'s fields."""
    if isinstance(spec, RunSpec):
        spec = spec.to_dict()
    typed = RunSpec.from_dict(spec)
    row = base_row(spec, context)
    row["pid"] = os.getpid()
    t0, cpu0 = time.perf_counter(), _cpu_seconds()
    try:
        threads = int(context.get("blas_threads") or typed.blas_threads)
        with threadpool_limits(limits=threads):
            _run(typed, row, threads, root)
        row["status"] = "ok"
    except (Exception, KeyboardInterrupt) as exc:  # (a run's child is in its own process group: a KeyboardInterrupt
        # here was raised by the method's own code, not by the user's Ctrl-C, which stops the sweep in its supervisor)
        row["status"] = "failed"
        row["error"] = f"{type(exc).__name__}: {exc}" if str(exc) else f"{type(exc).__name__} raised inside the run"
        row["traceback"] = portable_traceback(traceback.format_exc())
    row["total_seconds"] = time.perf_counter() - t0
    # the CPU time beside the wall clock: a run that had its threads' cores to itself has cpu_seconds near
    # total_seconds x its threads; one made beside other sweeps, much less (its times are the machine's load's too)
    row["cpu_seconds"] = _cpu_seconds() - cpu0
    row["peak_rss_mb"] = _peak_rss_mb()
    partial_cv = cv_checkpoint(root, typed)
    if partial_cv is not None:
        partial_cv.unlink(missing_ok=True)
    row["finished_at"] = now()
    return row
