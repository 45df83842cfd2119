"""Errors that the command line turns into one clear message and an exit code (never a traceback)."""
from __future__ import annotations

from typing import Any

NOTHING: Any = type("Nothing", (), {"__repr__": lambda self: "(nothing)"})()
"""A :class:`ConfigError` problem without a value to show (a missing key, a YAML syntax error, the whole file)."""


class TkbenchError(Exception):
    """Base class: a problem the user can fix. The CLI prints ``str(err)`` and exits with ``exit_code``."""

    exit_code = 1


class ConfigError(TkbenchError):
    """An invalid experiment config. Each problem names the file, the key path, the value and what was expected."""

    exit_code = 2

    def __init__(self, file: str, problems: list[tuple[str, Any, str]]):
        self.file = str(file)
        self.problems = problems
        lines = [f"{self.file}: {path}: {expected}" if value is NOTHING else f"{self.file}: {path}: {_show(value)}: {expected}"
                 for path, value, expected in problems]
        super().__init__("invalid config\n" + "\n".join(lines) if len(lines) > 1 else lines[0])


class InputError(TkbenchError):
    """A file or folder given on the command line that cannot be used: missing, not what it should be, unreadable
    or unwritable (a baseline, a results folder, a full disk)."""

    exit_code = 2


class BusyError(TkbenchError):
    """The results folder is in use by another ``tkbench run``: try again when it has finished (exit 3)."""

    exit_code = 3


class DatasetError(TkbenchError):
    """Unknown dataset, bad dataset option, or unreadable data file."""

    exit_code = 2


class ChecksumError(DatasetError):
    """A vendored data file is missing or its bytes differ from the sha256 in ``datasets/registry.yaml``."""


class MissingDependencyError(TkbenchError):
    """An optional dependency (dask, mosek) was asked for but is not installed or not licensed."""

    exit_code = 2


def _show(value: Any) -> str:
    """A value for an error message, at most 120 characters. reprlib bounds the work too: a nested value that
    stands for billions of elements (a YAML alias bomb) is never rendered whole."""
    import reprlib

    short = reprlib.Repr()  # (Python 3.11 takes no keyword arguments here)
    short.maxlevel, short.maxstring, short.maxlong, short.maxother = 3, 120, 60, 120
    for name in ("maxtuple", "maxlist", "maxarray", "maxdict", "maxset", "maxfrozenset", "maxdeque"):
        setattr(short, name, 8)
    text = "null" if value is None else short.repr(value)  # YAML's spelling of an empty value
    return text if len(text) <= 120 else text[:117] + "..."


def first_line(message: str, width: int = 240) -> str:
    """The first line of an error message, shortened at a word boundary (marked " …") when longer than ``width``:
    a report never shows a message cut in the middle of a word."""
    import textwrap

    line = (str(message).strip().splitlines() or [""])[0]
    return line if len(line) <= width else textwrap.shorten(line, width=width, placeholder=" …")
