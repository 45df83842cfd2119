"""Methods from outside tkbench: any scikit-learn estimator by import path, and third-party families registered
through a Python entry point (issue 22).

**By import path.** A config method ``{name: lr, estimator: sklearn.linear_model.LogisticRegression,
params: {max_iter: 500}, grid: {C: [0.1, 1, 10]}}`` becomes the family ``estimator:<import path>``, built here on
first use in each process (the runs' processes included): its tasks from scikit-learn's ``is_classifier`` /
``is_regressor``, its parameters from ``get_params``, no default CV grid (give ``grid``), input scaling
``standard`` unless the method sets ``scaler``, and the run's seed as ``random_state`` when the estimator has one
and the config does not set it (so that the same config gives the same numbers).

**By entry point.** A package declares, in its ``pyproject.toml``::

    [project.entry-points."tkbench.families"]
    my_family = "my_package.tkbench_family:FAMILY"

where ``FAMILY`` is a :class:`tkbench.methods.registry.Family` (or a list of them, or a function returning
either). :func:`load_plugins` registers them when the registry first loads the families; a plugin that fails to load is
reported on stderr with its name and skipped, never breaking the built-in families.
"""
from __future__ import annotations

import importlib
import inspect
import sys
from functools import cache
from typing import Any

from sklearn.base import BaseEstimator, is_classifier, is_regressor

from tkbench.methods.family import TASKS, Family, register

PREFIX = "estimator:"
ENTRY_POINT_GROUP = "tkbench.families"


class EstimatorImportError(ValueError):
    """The import path does not name a scikit-learn estimator class (the message says why)."""


def import_estimator(path: str) -> type:
    module_name, _, attr = path.rpartition(".")
    if not module_name or path.startswith(".") or not all(part.isidentifier() for part in path.split(".")):
        raise EstimatorImportError("an absolute dotted import path, module.Class (e.g. sklearn.linear_model.Ridge; "
                                   "a relative path has no package to be relative to)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise EstimatorImportError(f"an importable module ({exc})") from None
    except Exception as exc:  # the module's own code failed on import: say so instead of a traceback
        raise EstimatorImportError(f"a module that imports cleanly ({type(exc).__name__}: {exc})") from None
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise EstimatorImportError(f"a class of module {module_name} (it has no {attr!r})") from None
    if not (inspect.isclass(obj) and issubclass(obj, BaseEstimator)):
        raise EstimatorImportError("a scikit-learn estimator class (a subclass of sklearn.base.BaseEstimator)")
    return obj


@cache
def estimator_family(name: str) -> Family:
    """The family ``estimator:<import path>`` (cached per process)."""
    path = name[len(PREFIX):]
    cls = import_estimator(path)
    try:
        probe = cls()
    except Exception as exc:  # e.g. sklearn.pipeline.Pipeline needs its steps
        raise EstimatorImportError(f"an estimator class that can be built without arguments, its settings coming "
                                   f"from params and grid ({cls.__name__}() failed: {exc})") from None
    tasks = tuple(t for t, ok in zip(TASKS, (is_classifier(probe), is_regressor(probe)), strict=True) if ok)
    if not tasks:
        raise EstimatorImportError("a classifier or a regressor (scikit-learn's is_classifier / is_regressor)")
    seeded = "random_state" in probe.get_params(deep=False)

    def build(task: str, solver: str, params: dict[str, Any], seed: int) -> BaseEstimator:
        if seeded and "random_state" not in params:
            params = {**params, "random_state": seed}
        return cls(**params)

    return Family(name=name, description=f"{path} (by import path)", build=build, tasks=tasks,
                  scaler="standard", hidden=True, reference=path)


def load_plugins(group: str = ENTRY_POINT_GROUP) -> list[str]:
    """Register the families of installed packages' entry points; returns the names registered."""
    from importlib.metadata import entry_points

    names = []
    for ep in entry_points(group=group):
        try:
            obj = ep.load()
            obj = obj() if callable(obj) and not isinstance(obj, Family) else obj
            families = obj if isinstance(obj, list | tuple) else [obj]
            for fam in families:
                if not isinstance(fam, Family):
                    raise TypeError(f"expected a tkbench Family, got {type(fam).__name__}")
                register(fam)
                names.append(fam.name)
        except Exception as exc:  # a broken plugin must not break tkbench
            print(f"warning: tkbench plugin {ep.name!r} ({ep.value}) not loaded: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
    return names
