"""A long solve's state on disk, so that a run killed by the end of a session continues where it stopped (issue 21:
one Frank-Wolfe fit at the paper's 30 000 training rows takes hours; processes do not survive a session).

A checkpoint is one ``.npz`` file: the solver's arrays, its JSON-able facts, and the fingerprint of the problem
(a sha256 of the data and of the parameters that define the problem). A file whose fingerprint differs is another
problem's: it is ignored and overwritten, never resumed. Writes go to a temporary name and are renamed, so a kill
during a save leaves the previous state.
"""
from __future__ import annotations

import hashlib
import json
import os
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np


def fingerprint(*arrays: np.ndarray, **facts: Any) -> str:
    """sha256 of the arrays' bytes, shapes and dtypes and of the facts (as sorted JSON)."""
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(repr((a.shape, a.dtype.str)).encode())
        h.update(a.tobytes())
    h.update(json.dumps(facts, sort_keys=True, default=str).encode())
    return h.hexdigest()


def _json_value(value: Any) -> Any:
    """numpy scalars and arrays in a state's facts (an iteration history, say) as plain JSON values."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


class Checkpoint:
    """The state file of one solve: ``load()`` (None when absent or another problem's), ``save(arrays, facts)``,
    ``clear()`` (after the solve has finished)."""

    def __init__(self, path: str | os.PathLike, problem: str):
        self.path = Path(path)
        self.problem = problem
        self.failed = False

    def load(self) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
        try:
            with np.load(self.path, allow_pickle=False) as data:
                facts = json.loads(str(data["__facts__"]))
                if facts.get("__problem__") != self.problem:
                    return None
                return {k: data[k] for k in data.files if k != "__facts__"}, facts
        except (OSError, KeyError, ValueError, zipfile.BadZipFile):  # absent, truncated or not ours: start afresh
            return None

    def save(self, arrays: dict[str, np.ndarray], facts: dict[str, Any]) -> None:
        """Write the state; a folder that cannot be written (a remote worker, a full disk) turns checkpoints off
        for this solve with a warning: the solve itself goes on."""
        if self.failed:
            return
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as fh:
                np.savez(fh, __facts__=np.array(json.dumps({**facts, "__problem__": self.problem},
                                                             default=_json_value)), **arrays)
            os.replace(tmp, self.path)
        except OSError as exc:
            self.failed = True
            tmp.unlink(missing_ok=True)
            warnings.warn(f"checkpoint {self.path} not written ({exc}); the solve goes on without one", stacklevel=2)

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)
