"""What a method family is (:class:`Family`) and the table of registered families (:func:`register`).

Kept apart from :mod:`tkbench.methods.registry` (which loads the families and resolves names) so that the modules
that define families, :mod:`tkbench.methods.external` included, import this one and nothing imports back
(issue 49: ``external`` and ``registry`` imported each other).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sklearn.base import BaseEstimator

from tkbench.methods._shared.scalers import SCALERS, TARGET_SCALERS

TASKS = ("classification", "regression")


@dataclass(frozen=True)
class Family:
    """How to build and inspect the learners of one method family.

    ``build(task, solver, params, random_state)`` returns an unfitted scikit-learn estimator.
    ``path_param`` names a grid parameter whose values can all be scored from one fit (the forest's number of
    trees, kernel ridge's alpha); ``path_predict(model, X, values, decision)`` then returns ``{value: predictions}``
    for the model fitted at the largest value, or with ``decision`` a classifier's decision values (one column for
    two classes, as ``decision_function``; the least-squares CV score needs them). Each value's predictions are those
    of a model fitted at that value.
    ``diagnostics(model)`` returns solver facts for the result row (iterations, gap, support vectors...);
    ``trace(model)`` returns the per-iteration solver trace (a list of dicts) for convergence experiments.
    ``warmup(threads)``: called in the run's process before CV and the timed fit: sets compiled-code threads and
    loads compiled code, so that one-time costs are not counted as fit time.
    ``compile()``: compiles every compiled loop the family may run into numba's on-disk cache (``tkbench compile``,
    which ``make install`` runs), also those a run's warm-up leaves to the first call because most runs never
    reach them (TK's SMO dual below m = 1000 rows, NKRR's Gaussian base kernels); default: ``warmup(1)``.
    ``landscape(task, params, X, y, grid)``: the family's learning objective over a grid of two kernel weights
    (``grid`` is the 1-D axis; returns ``{"values": 2-D list, "min_eigenvalue": 2-D list or None, ...}``), for
    ``landscape`` experiments (paper 001 Figure 1).
    ``warm_start``: the model has a scikit-learn ``warm_start`` parameter and CV may fit one model along the grid
    within a fold, each fit starting from the previous solution (SimpleMKL's kernel weights).
    ``checkpoint_cv_fits``: the model has a ``checkpoint`` parameter (a path prefix for its saved state) and its CV
    fits are long enough (HGK: up to half an hour each; TK: over 55 minutes at C = 1e4 on German) to give each its own, so
    that a CV killed inside a fit continues within that fit, not at its start, in a run's own CV and in a CV
    shared by a cell's splits alike. Off for families whose CV fits are short and whose saving costs time.
    ``scales_inside``: the scaling the estimator applies to its inputs itself (TK: min-max to [0, 1]^n, the
    kernel's domain), shown beside ``scaler`` (the runner's, before the estimator) by ``tkbench methods``.
    ``report_notes``: what the report's tables need to say about this family's rows, by table (``evaluation``,
    ``time_breakdown``, ``selection``): the report prints the notes of the families present under those tables.
    ``changed_defaults``: estimator defaults changed after rows were stored, ``{param: (old, new)}``: run and tuning
    keys name the new default when a method leaves the parameter unset, and keep their old form when it sets the old
    value (:func:`tkbench.keys.with_changed_defaults`).
    ``requires``: (module, distribution) pairs of an optional extra (the peers'); a sweep whose runs use the family
    stops before any run when one is missing, naming ``install_hint``.
    ``least_squares``: binary classifiers of the family fit their decision values to the labels coded -1 / +1 (kernel
    ridge, least-squares SVM), so the RMSE of those values against the labels measures what they minimise; the
    report's RMSE table shows only such families (for an SVM's margin or a forest's votes it means nothing).
    """

    name: str
    description: str
    build: Callable[[str, str, dict[str, Any], int], BaseEstimator]
    solvers: tuple[str, ...] = ("default",)
    tasks: tuple[str, ...] = TASKS
    default_grid: Mapping[str, list[Any]] = field(default_factory=dict)
    scaler: str = "standard"
    target_scaler: str = "none"
    path_param: str | None = None
    path_predict: Callable[[Any, Any, list[Any], bool], dict[Any, Any]] | None = None
    diagnostics: Callable[[Any], dict[str, Any]] | None = None
    trace: Callable[[Any], list[dict[str, Any]]] | None = None
    reference: str = ""
    hidden: bool = False
    warm_start: bool = False
    checkpoint_cv_fits: bool = False
    warmup: Callable[[int], None] | None = None
    compile: Callable[[], None] | None = None
    landscape: Callable[..., dict[str, Any]] | None = None
    least_squares: bool = False
    scales_inside: str = ""  # how the estimator itself scales its inputs, if it does (shown by `tkbench methods`)
    stop_rule: str = ""  # its solver's stop rule in words: the report's notes name it for rows that do not
    report_notes: Mapping[str, str] = field(default_factory=dict)  # table -> a note (see the class docstring)
    changed_defaults: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)  # param -> (old, new) default
    requires: tuple[tuple[str, str], ...] = ()  # (module, distribution) an optional extra must provide
    install_hint: str = ""  # how to install ``requires``

    def missing(self) -> list[str]:
        """The distributions of ``requires`` that do not import here (empty: the family can run)."""
        import importlib.util

        out = []
        for module, distribution in self.requires:
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            if not found and distribution not in out:
                out.append(distribution)
        return out

    @property
    def default_solver(self) -> str:
        return self.solvers[0]

    def param_names(self, task: str, solver: str | None = None) -> set[str]:
        """The parameters a config may set or tune for this family."""
        est = self.build(task, solver or self.default_solver, {}, 0)
        return set(est.get_params(deep=False))


FAMILIES: dict[str, Family] = {}


def register(family: Family) -> Family:
    if family.name in FAMILIES:
        raise ValueError(f"method family {family.name!r} registered twice")
    if family.scaler not in SCALERS or family.target_scaler not in TARGET_SCALERS:
        raise ValueError(f"family {family.name!r}: bad scaler {family.scaler!r}/{family.target_scaler!r}")
    FAMILIES[family.name] = family
    return family
