"""A deliberately failing method, for testing the runner's failure isolation (hidden from ``tkbench methods``).

``debug_fail`` with ``mode``:
- ``ok``: predicts the most frequent class / the mean (a trivial learner that succeeds);
- ``raise``: raises RuntimeError in ``fit`` (recorded as ``failed`` with the traceback);
- ``abort``: calls ``os.abort()`` (the worker dies of SIGABRT: recorded as ``crashed``);
- ``sigkill``: kills its own process with SIGKILL, as the out-of-memory killer does (``crashed``);
- ``sleep``: sleeps ``seconds`` (beyond the run timeout: ``timeout``); with ``heartbeat`` (a file path) it
  appends a line to that file every 0.2 s while it sleeps, so that a test can see whether the run still lives,
  and stops sleeping (and succeeds) once a file ``<heartbeat>.release`` exists: a test holds runs in flight for
  exactly as long as it needs them, instead of guessing a duration that a loaded machine may outlast;
- ``spawn``: starts a process in a new session (``setsid``; it sleeps ``seconds``), writes its pid to ``heartbeat``
  and returns: a method that leaves a process behind (the run must not let it outlive it);
- ``fail_if_exists``: raises RuntimeError in ``fit`` when the file ``heartbeat`` exists, else succeeds (the same
  run, same key, that fails on a re-run);
- ``interrupt``: raises KeyboardInterrupt in ``fit`` (recorded as ``failed`` with that reason, no traceback on
  the terminal).
"""
from __future__ import annotations

import os
import signal
import time
from numbers import Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions

from tkbench.methods.family import Family, register

MODES = ("ok", "raise", "abort", "sigkill", "sleep", "spawn", "interrupt", "fail_if_exists")


class _DebugBase(BaseEstimator):
    _parameter_constraints: ClassVar[dict] = {
        "mode": [StrOptions(set(MODES))],
        "seconds": [Interval(Real, 0, None, closed="left")],
        "heartbeat": [str, None],
    }

    def __init__(self, mode: str = "ok", seconds: float = 3600.0, heartbeat: str | None = None):
        self.mode = mode
        self.seconds = seconds
        self.heartbeat = heartbeat

    def _misbehave(self) -> None:
        self._validate_params()
        if self.mode == "raise":
            raise RuntimeError("debug_fail: deliberate failure in fit")
        if self.mode == "abort":
            os.abort()
        if self.mode == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.mode == "sleep":
            end = time.monotonic() + self.seconds
            while time.monotonic() < end:
                if self.heartbeat:
                    if os.path.exists(self.heartbeat + ".release"):
                        break
                    with open(self.heartbeat, "a", encoding="utf-8") as fh:
                        fh.write(f"{os.getpid()}\n")
                time.sleep(min(0.2, max(0.0, end - time.monotonic())))
        if self.mode == "spawn":
            import subprocess
            import sys

            proc = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({float(self.seconds)})"],
                                    start_new_session=True)
            if self.heartbeat:
                with open(self.heartbeat, "a", encoding="utf-8") as fh:
                    fh.write(f"{proc.pid}\n")
        if self.mode == "interrupt":
            raise KeyboardInterrupt
        if self.mode == "fail_if_exists" and self.heartbeat and os.path.exists(self.heartbeat):
            raise RuntimeError(f"debug_fail: {self.heartbeat} exists")


class DebugClassifier(ClassifierMixin, _DebugBase):
    def fit(self, X, y):
        self._misbehave()
        values, counts = np.unique(y, return_counts=True)
        self.classes_ = values
        self.majority_ = values[np.argmax(counts)]
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


class DebugRegressor(RegressorMixin, _DebugBase):
    def fit(self, X, y):
        self._misbehave()
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


def _build(task: str, solver: str, params: dict[str, Any], seed: int):
    return (DebugClassifier if task == "classification" else DebugRegressor)(**params)


register(Family(
    name="debug_fail",
    description="test-only: a trivial learner that can raise, abort, kill itself or hang",
    build=_build,
    scaler="none",
    hidden=True,
))
