"""The methods: one package per kernel family (kernel, solvers, compiled loops, estimators), what several families
share (``_shared``: SVM duals, SMO, line search, checkpoints, the solver report, the kernel library, scalers), and
the machinery that finds them (``registry``, ``family``, ``external``, ``compose``, ``describe``).

A new family is one folder here: ``<name>/__init__.py`` naming its public estimators in ``ESTIMATORS`` and
``<name>/estimators.py`` calling :func:`tkbench.methods.family.register`. The families are imported on first use
of the registry, so that importing one estimator does not load the others.
"""
from tkbench.methods.registry import FAMILIES, Family, get_family, load_families, visible_families


def make_estimator(*args, **kwargs):
    """:func:`tkbench.methods.compose.make_estimator` (imported on first call)."""
    from tkbench.methods.compose import make_estimator as make

    return make(*args, **kwargs)


def __getattr__(name: str):
    if name == "PLUGINS":  # third-party families, as loaded with the built-in ones
        from tkbench.methods import registry

        load_families()
        return registry.PLUGINS
    raise AttributeError(f"module 'tkbench.methods' has no attribute {name!r}")


__all__ = ["FAMILIES", "PLUGINS", "Family", "get_family", "load_families", "make_estimator", "visible_families"]
