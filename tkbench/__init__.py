"""tkbench: a command-line benchmarking suite for kernel learning.

Every method is also a scikit-learn estimator, importable from here (``from tkbench import TKClassifier``); each
family package names its public estimators (``tkbench/methods/<family>/__init__.py``, ``ESTIMATORS``) and the
estimator's module is loaded on first use, so that ``import tkbench`` (and the command line) stays fast.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"


def __getattr__(name: str):
    if name[:1].isupper():
        from tkbench.methods.registry import estimator_module

        module = estimator_module(name)
        if module is not None:
            return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'tkbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    from tkbench.methods.registry import public_estimators

    return sorted(["__version__", *public_estimators()])
