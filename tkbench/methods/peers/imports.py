"""Importing a peer: one clear error naming the extra when it is absent, and the version that ran."""
from __future__ import annotations

import importlib
import importlib.metadata
import sysconfig
import warnings
from types import ModuleType

from tkbench.errors import MissingDependencyError

EXTRA = "pip install -e '.[peers]'"


def need(module: str, distribution: str) -> ModuleType:
    """``import module``, or a :class:`MissingDependencyError` naming the distribution and the extra."""
    if module == "liquidSVM":
        # liquidSVM 1.0.1 finds its compiled library through sysconfig's "SO" suffix, gone since Python 3.11,
        # and imports pkg_resources (setuptools < 81)
        sysconfig.get_config_vars().setdefault("SO", sysconfig.get_config_var("EXT_SUFFIX"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # liquidSVM: "pkg_resources is deprecated"
            warnings.simplefilter("ignore", DeprecationWarning)
            return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(f"this method needs {distribution}, which is not installed ({exc}): {EXTRA}") \
            from None


def version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def available(*modules: str) -> bool:
    """Whether every module imports (for tests that skip without the extra)."""
    try:
        for m in modules:
            need(m, m)
    except MissingDependencyError:
        return False
    return True
