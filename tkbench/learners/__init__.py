"""Learners: scikit-learn estimators joining a kernel family with a solver, and the family registry.

The families register themselves when their module is imported; the registry imports every built-in family module
(:data:`tkbench.learners.registry.FAMILY_MODULES`) and the third-party plugins (entry point group
``tkbench.families``, :mod:`tkbench.learners.external`) on first use, so that importing one estimator
(``from tkbench import TKClassifier``) does not load the others.
"""
from tkbench.learners.registry import FAMILIES, Family, get_family, load_families, visible_families


def make_estimator(*args, **kwargs):
    """:func:`tkbench.learners.compose.make_estimator` (imported on first call)."""
    from tkbench.learners.compose import make_estimator as make

    return make(*args, **kwargs)


def __getattr__(name: str):
    if name == "PLUGINS":  # third-party families, as loaded with the built-in ones
        from tkbench.learners import registry

        load_families()
        return registry.PLUGINS
    raise AttributeError(f"module 'tkbench.learners' has no attribute {name!r}")


__all__ = ["FAMILIES", "PLUGINS", "Family", "get_family", "load_families", "make_estimator", "visible_families"]
