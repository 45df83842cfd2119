"""Learners: scikit-learn estimators joining a kernel family with a solver, and the family registry.

Importing this package registers every family. To add one, write a module that calls
:func:`tkbench.learners.registry.register` and import it here; a third-party package uses the ``tkbench.families``
entry point instead (:mod:`tkbench.learners.external`).
"""
from tkbench.learners import baselines, debug, hgk, nkrr, sikl, simplemkl, tk  # noqa: F401  (registration)
from tkbench.learners.compose import make_estimator
from tkbench.learners.external import load_plugins
from tkbench.learners.registry import FAMILIES, Family, get_family, visible_families

PLUGINS = load_plugins()  # third-party families (entry point group "tkbench.families")

__all__ = ["FAMILIES", "PLUGINS", "Family", "get_family", "make_estimator", "visible_families"]
