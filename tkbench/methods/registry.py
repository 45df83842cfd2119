"""The method-family registry: the only place the runner learns what a family is.

A family is a package under :mod:`tkbench.methods` (any folder whose name does not start with ``_``): its
``estimators`` module calls :func:`register` (:mod:`tkbench.methods.family`) on import, and its ``__init__``
names its public estimators in ``ESTIMATORS`` (so that ``from tkbench import TKClassifier`` imports TK's
package only). The registry finds the packages by listing the folder on first use: no hand-kept list. Outside
tkbench, a package registers families through the ``tkbench.families`` entry point, and a config may name any
scikit-learn estimator by import path (:mod:`tkbench.methods.external`).
"""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from tkbench.methods.family import FAMILIES, TASKS, Family, register  # noqa: F401 (re-exported)

_loaded = False
PLUGINS: list[str] = []  # the families registered by third-party plugins


def family_packages() -> list[str]:
    """The names of the built-in family packages: every sub-package of tkbench.methods not starting with ``_``."""
    return sorted(info.name for info in pkgutil.iter_modules([str(Path(__file__).parent)])
                  if info.ispkg and not info.name.startswith("_"))


def estimator_module(name: str) -> str | None:
    """The module defining the public estimator class ``name`` (``TKClassifier`` ->
    ``tkbench.methods.tk.estimators``), read from each family package's ``ESTIMATORS``; None if no family has it."""
    for package in family_packages():
        if name in getattr(importlib.import_module(f"tkbench.methods.{package}"), "ESTIMATORS", ()):
            return f"tkbench.methods.{package}.estimators"
    return None


def public_estimators() -> list[str]:
    return sorted(name for package in family_packages()
                  for name in getattr(importlib.import_module(f"tkbench.methods.{package}"), "ESTIMATORS", ()))


def load_families() -> dict[str, Family]:
    """Every family: the built-in packages and third-party plugins (entry point group ``tkbench.families``),
    imported once. A family that fails to import raises, and the next call tries again (and raises the same error
    again): each lookup of a process whose registry is broken meets the real error, with its words (the
    forkserver's preload relies on this, :mod:`tkbench.bench.preload`)."""
    global _loaded
    if not _loaded:
        for package in family_packages():
            importlib.import_module(f"tkbench.methods.{package}.estimators")
        from tkbench.methods.external import load_plugins

        PLUGINS[:] = load_plugins()
        _loaded = True
    return FAMILIES


def get_family(name: str) -> Family:
    """A registered family, or ``estimator:<import path>`` (any scikit-learn estimator, tkbench.methods.external);
    KeyError for an unknown name, ValueError for an import path that is not an estimator."""
    if name.startswith("estimator:"):
        from tkbench.methods.external import estimator_family

        return estimator_family(name)
    return load_families()[name]


def visible_families() -> list[Family]:
    return [f for name, f in sorted(load_families().items()) if not f.hidden]
