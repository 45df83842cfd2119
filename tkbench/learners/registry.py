"""The method-family registry: the only place the runner learns what a family is.

A family joins a kernel class with the solvers that can learn it and says how to build the estimator for a task.
Adding a family is adding a module that calls :func:`register` (:mod:`tkbench.learners.family`) and naming it in
:data:`FAMILY_MODULES`, which the registry imports on first use; outside tkbench, a package registers families
through the ``tkbench.families`` entry point, and a config may name any scikit-learn estimator by import path
(:mod:`tkbench.learners.external`).
"""
from __future__ import annotations

from tkbench.learners.family import FAMILIES, TASKS, Family, register  # noqa: F401 (re-exported)

# the modules that register the built-in families, imported on first use of the registry (not on import of one
# estimator: `from tkbench import TKClassifier` loads TK's module only)
FAMILY_MODULES = ("baselines", "debug", "hgk", "nkrr", "sikl", "simplemkl", "tk")
_loaded = False
PLUGINS: list[str] = []  # the families registered by third-party plugins


def load_families() -> dict[str, Family]:
    """Every family: the built-in modules and third-party plugins (entry point group ``tkbench.families``),
    imported once."""
    global _loaded
    if not _loaded:
        import importlib

        _loaded = True
        for module in FAMILY_MODULES:
            importlib.import_module(f"tkbench.learners.{module}")
        from tkbench.learners.external import load_plugins

        PLUGINS.extend(load_plugins())
    return FAMILIES


def get_family(name: str) -> Family:
    """A registered family, or ``estimator:<import path>`` (any scikit-learn estimator, tkbench.learners.external);
    KeyError for an unknown name, ValueError for an import path that is not an estimator."""
    if name.startswith("estimator:"):
        from tkbench.learners.external import estimator_family

        return estimator_family(name)
    return load_families()[name]


def visible_families() -> list[Family]:
    return [f for name, f in sorted(load_families().items()) if not f.hidden]
