"""Result storage: one JSON file per run, ``<out>/rows/<key>.json``, written to a temp name then renamed.

Only the sweep's main process writes rows (workers return them), a half-written row is never visible, and a
killed sweep leaves only complete rows; re-running skips keys whose row says ``ok`` and retries the rest. The config
that produced the rows is copied beside them (``config.yaml``) so that ``tkbench report`` and ``tkbench check`` need
only the folder. One ``tkbench run`` at a time owns a folder (:meth:`ResultStore.lock`, ``<out>/.lock``): a second
one stops with a message naming the first, instead of computing the same runs twice.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from tkbench.errors import BusyError, InputError

ROWS = "rows"
CONFIG = "config.yaml"
CHECKPOINTS = "checkpoints"  # learners' saved states: <run key><suffix> (bench.execute.fit_checkpoint)
DAMAGED = "damaged"  # row files that could not be read, set aside by `tkbench run` (ResultStore.set_aside_damaged)
STATUS_VALUES = ("ok", "failed", "timeout", "crashed")
TUNING = "tuning"  # CV choices shared by a cell's runs, and a run's finished CV folds: <run key>.cv.folds.json


def _default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, Path):
        return str(obj)
    return str(obj)


def write_json_atomic(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, default=_default, indent=1, allow_nan=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_row_file(path: Path) -> tuple[dict[str, Any] | None, str]:
    """(row, "") for a readable row file, else (None, what is wrong with it)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
    try:
        row = json.loads(text)
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"
    if not isinstance(row, dict):
        return None, f"not a row: expected a JSON object, found {type(row).__name__}"
    if row.get("key") != path.stem:
        return None, f"its key {row.get('key')!r} is not its file name (a copied or renamed file)"
    if row.get("status") not in STATUS_VALUES:
        return None, f"status {row.get('status')!r}: expected one of {', '.join(STATUS_VALUES)}"
    for name, kind in (("dataset", str), ("method", str), ("split", int)):
        value = row.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            return None, f"{name} {value!r}: expected {'an integer' if kind is int else 'text'}"
    for name in ("accuracy", "mse", "ls_error", "fit_seconds", "cv_seconds", "predict_seconds"):
        value = row.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            return None, f"{name} {value!r}: expected a number or null"
    return row, ""


NO_WRITE = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is exceeded",
            errno.EROFS: "the file system is read-only", errno.EACCES: "permission denied",
            errno.EPERM: "permission denied", errno.ENOTDIR: "a part of the path is a file, not a folder"}


def unwritable(root: Path, exc: OSError) -> InputError:
    """The error for a results folder that cannot take a write: what, where, and that finished rows are kept."""
    why = NO_WRITE.get(exc.errno or 0, exc.strerror or str(exc))
    return InputError(f"{root}: cannot write results there ({why}). Rows already written are kept; fix it (or give "
                      "another --out) and run the same command again to resume")


def check_folder_path(path: Path, what: str = "results") -> None:
    """InputError (exit 2) naming ``path`` when it cannot be a folder to write in: a name longer than the file
    system allows, an existing file in its place, or a file where one of its parents should be a folder."""
    path = Path(path)
    limit = 255
    try:
        limit = os.pathconf(next((p for p in [path, *path.parents] if p.exists()), Path("/")), "PC_NAME_MAX")
    except (OSError, ValueError):
        pass
    long = next((part for part in path.parts if len(part.encode()) > limit), None)
    if long is not None:
        raise InputError(f"{str(path)[:200]}…: cannot write {what} there (File name too long: a name of "
                         f"{len(long.encode())} bytes, at most {limit} here)")
    if path.exists() and not path.is_dir():
        raise InputError(f"{path}: cannot write {what} there: a file, not a folder")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{path}: cannot write {what} there: a part of the path is a file, not a folder "
                                 f"({parent})")
            break


def check_file_path(path: Path, what: str) -> None:
    """InputError (exit 2) naming ``path`` when no file can be written there: its folder cannot be one (see
    :func:`check_folder_path`), its name is too long, or a folder stands in its place."""
    path = Path(path)
    check_folder_path(path.parent, what)
    if len(path.name.encode()) > 255:
        raise InputError(f"{str(path)[:200]}…: cannot write {what} there (File name too long: a name of "
                         f"{len(path.name.encode())} bytes)")
    if path.is_dir():
        raise InputError(f"{path}: cannot write {what} there: a folder, not a file")


class ResultStore:
    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.rows_dir = self.root / ROWS

    def row_path(self, key: str) -> Path:
        return self.rows_dir / f"{key}.json"

    def write_row(self, row: dict[str, Any]) -> Path:
        path = self.row_path(row["key"])
        write_json_atomic(path, row)
        return path

    def read_row(self, key: str) -> dict[str, Any] | None:
        row, problem = read_row_file(self.row_path(key))
        return None if problem else row

    def statuses(self) -> dict[str, str]:
        """key -> status of every stored row."""
        return {row["key"]: row.get("status", "?") for row in self.rows()}

    def rows(self) -> list[dict[str, Any]]:
        """Every readable row. A damaged file (not UTF-8 JSON, not a row, a row of another key) is left out and
        listed by :meth:`damaged`: its run counts as not done, and ``tkbench run`` sets the file aside."""
        return [row for row, problem in self._read_all() if not problem]

    def damaged(self) -> list[tuple[Path, str]]:
        """(file, what is wrong) of each file under rows/ that is not a readable row."""
        return self.read_all()[1]

    def read_all(self) -> tuple[list[dict[str, Any]], list[tuple[Path, str]]]:
        """The readable rows and the damaged files, in one pass over the folder."""
        read = self._read_all()
        return ([row for row, problem in read if not problem],
                [(Path(row["path"]), problem) for row, problem in read if problem])

    def _read_all(self) -> list[tuple[dict[str, Any], str]]:
        if not self.rows_dir.is_dir():
            return []
        out = []
        for path in sorted(self.rows_dir.glob("*.json")):
            row, problem = read_row_file(path)
            out.append((row if not problem else {"path": str(path)}, problem))
        return out

    def set_aside_damaged(self) -> list[tuple[Path, str]]:
        """Move every damaged row file to ``<root>/damaged/`` (kept for a look, never read again): its run is done
        anew instead of failing or being overwritten unseen. Returns (new place, what was wrong)."""
        moved = []
        for path, problem in self.damaged():
            target = self.root / DAMAGED / path.name
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, target)
            except OSError as exc:
                raise unwritable(self.root, exc) from None
            moved.append((target, problem))
        return moved

    def check_writable(self) -> None:
        """Create the folder and write (then remove) a probe file; :func:`unwritable` error if that fails, so that
        a read-only or full results folder is found before any run is computed."""
        try:
            self.rows_dir.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(prefix=".probe.", dir=self.rows_dir)
            try:
                os.write(fd, b"tkbench write probe\n" * 64)
                os.fsync(fd)
            finally:
                os.close(fd)
                os.unlink(probe)
        except OSError as exc:
            raise unwritable(self.root, exc) from None

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the folder's lock (``<root>/.lock``, an advisory ``flock``, released when the process ends, even
        by ``kill -9``) while a sweep writes; :class:`~tkbench.errors.BusyError` naming the holder if taken."""
        path = self.root / ".lock"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fh = open(path, "a+", encoding="utf-8")  # noqa: SIM115 (held for the block)
        except OSError as exc:
            raise unwritable(self.root, exc) from None
        try:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                holder = fh.read().strip() or "another process"
                raise BusyError(f"{self.root}: in use by another `tkbench run` ({holder}). Wait for it to finish and "
                                "run again to resume what is left, or give this run another --out") from None
            fh.seek(0)
            fh.truncate()
            fh.write(f"pid {os.getpid()} on {socket.gethostname()}, since "
                     f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M:%S')} UTC: {' '.join(sys.argv[:3])}")
            fh.flush()
            yield
        finally:
            fh.close()

    def save_config(self, text: str) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / CONFIG
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG

    def saved_states(self) -> dict[str, list[Path]]:
        """Key -> the files a run or a shared CV stopped midway left to resume from: a run's learner states under
        ``checkpoints/<run key>...`` and its own CV's finished folds (``tuning/<run key>.cv.folds.json``); a CV
        shared by a cell's splits, its finished folds (``tuning/<tuning key>.folds.json``) and its fits' states
        (``checkpoints/<tuning key>.cv...``). A finished run or CV removes them, so a key here is either still to
        run or no longer planned (its key changed)."""
        found: dict[str, list[Path]] = {}
        folders = [(self.root / CHECKPOINTS, "*"), (self.root / TUNING, "*.folds.json")]
        for folder, pattern in folders:
            if folder.is_dir():
                for path in sorted(folder.glob(pattern)):
                    found.setdefault(path.name.split(".", 1)[0], []).append(path)
        return found
