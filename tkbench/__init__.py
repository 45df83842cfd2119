"""tkbench: a command-line benchmarking suite for kernel learning.

Every method is also a scikit-learn estimator, importable from here (``from tkbench import TKClassifier``); the
estimators are loaded on first use, so that ``import tkbench`` (and the command line) stays fast.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_ESTIMATORS = {
    "TKClassifier": "tkbench.learners.tk",
    "TKRegressor": "tkbench.learners.tk",
    "SimpleMKLClassifier": "tkbench.learners.simplemkl",
    "SimpleMKLRegressor": "tkbench.learners.simplemkl",
    "NKRRClassifier": "tkbench.learners.nkrr",
    "NKRRRegressor": "tkbench.learners.nkrr",
    "KRRClassifier": "tkbench.learners.nkrr",
    "SIKLClassifier": "tkbench.learners.sikl",
    "HGKClassifier": "tkbench.learners.hgk",
    "HGKRegressor": "tkbench.learners.hgk",
}

__all__ = ["__version__", *_ESTIMATORS]


def __getattr__(name: str):
    if name in _ESTIMATORS:
        return getattr(importlib.import_module(_ESTIMATORS[name]), name)
    raise AttributeError(f"module 'tkbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
