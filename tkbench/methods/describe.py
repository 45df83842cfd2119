"""What each parameter of a method family means, for ``tkbench methods FAMILY``.

The meanings are read from the estimators' own numpydoc ``Parameters`` sections (``name : type`` then an indented
description), scikit-learn's and tkbench's alike, so there is one place per parameter's description.
"""
from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any

from tkbench.methods.registry import Family


@dataclass(frozen=True)
class Parameter:
    name: str
    default: Any
    meaning: str
    grid: list[Any] | None  # the family's default CV grid for it, if any


def _numpydoc(doc: str) -> dict[str, str]:
    lines = inspect.cleandoc(doc).splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Parameters"
                     and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"})
    except StopIteration:
        return {}
    out: dict[str, str] = {}
    name = None
    for line in lines[start + 2:]:
        if line and not line.startswith(" "):
            if set(line.strip()) == {"-"}:  # the next section's underline: the previous line was its title
                if name is not None:
                    out[name] = out[name].rsplit("  ", 1)[0]
                break
            match = re.match(r"^(\w+)\s*:", line)
            name = match.group(1) if match else None
            if name:
                out[name] = ""
        elif name and line.strip():
            out[name] = (out[name] + " " + line.strip()).strip()
    return {k: _first_sentence(v) for k, v in out.items()}


def _first_sentence(text: str) -> str:
    cut = re.search(r"(?<=[a-z0-9)\]])\.\s", text)
    return text[: cut.start() + 1] if cut else text


def plain(text: str) -> str:
    """Docstring markup as plain text for the terminal: :mod:`x` / :func:`~a.b` -> x / b, ``x`` -> x."""
    text = re.sub(r":\w+:`~[\w.]*?\.?(\w+)`", r"\1", text)
    text = re.sub(r":\w+:`([^`]+)`", r"\1", text)
    return text.replace("``", "")


def meanings(estimator_class: type) -> dict[str, str]:
    """Parameter -> meaning from the docstrings of ``estimator_class`` and its bases (the first found wins), as
    plain text (no reStructuredText roles or literals)."""
    out: dict[str, str] = {}
    for klass in estimator_class.__mro__:
        doc = klass.__dict__.get("__doc__") or ""
        for name, meaning in _numpydoc(doc).items():
            if meaning and not out.get(name):
                out[name] = plain(meaning)
    return out


def parameters(family: Family, task: str | None = None, solver: str | None = None) -> list[Parameter]:
    """Every parameter a config may set for ``family`` (for ``task``, default its first), in signature order."""
    task = task or family.tasks[0]
    est = family.build(task, solver or family.default_solver, {}, 0)
    said = meanings(type(est))
    return [Parameter(name, value, said.get(name, ""), family.default_grid.get(name))
            for name, value in est.get_params(deep=False).items()]
