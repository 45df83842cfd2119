"""Config -> run specs (:mod:`tkbench.bench.spec`), each with a stable key.

The plan walks the config's datasets and methods (restricted by ``--only`` patterns and ``--splits``); what runs
one (dataset, method) cell becomes is its experiment kind's business (:mod:`tkbench.kinds`): splits for
``accuracy``, ``convergence`` and ``surface``, (size m, varied value, repeat) for ``scaling``, draws for
``density``, one grid for ``landscape``. A method runs on the datasets whose task its family supports (or on
the ones it names); :func:`empty_cells` lists the pairs left out and why.
"""
from __future__ import annotations

import fnmatch

from tkbench.bench.spec import RunSpec
from tkbench.config import Experiment
from tkbench.data import dataset_fingerprint, task_of
from tkbench.kinds import get_kind


def _matches(label: str, method: str, only: list[str]) -> bool:
    if not only:
        return True
    for pattern in only:
        ds_pat, _, m_pat = pattern.partition("/")
        if fnmatch.fnmatch(label, ds_pat or "*") and fnmatch.fnmatch(method, m_pat or "*"):
            return True
    return False


def family_tasks(exp: Experiment, m) -> tuple[str, ...] | None:
    """The tasks method ``m``'s family supports (None: any; kinds whose methods are not families, or a family the
    config check names as unknown)."""
    if not get_kind(exp.kind).learners:
        return None
    from tkbench.methods import get_family

    try:
        return tuple(get_family(m.family).tasks)
    except (KeyError, ValueError, ImportError):
        return None


def empty_cells(exp: Experiment) -> list[tuple[str, str, str]]:
    """(dataset label, method, why) for every pair the plan leaves empty because the method's family does not
    support the dataset's task (a classification-only method beside regression datasets: issue 51). A method
    that names its ``datasets`` runs on those only (the config check refuses a named dataset of the wrong task)."""
    out = []
    for m in exp.methods:
        tasks = family_tasks(exp, m)
        if tasks is None:
            continue
        for ds in exp.datasets:
            if m.runs_on(ds.label):
                task = task_of(ds.name, ds.options)
                if task not in tasks:
                    out.append((ds.label, m.name, f"{task}: {m.family} supports {' and '.join(tasks)}"))
    return out


def excluded_cells(exp: Experiment) -> list[tuple[str, str]]:
    """(dataset label, method) for every pair the plan leaves empty because the method names its ``datasets`` and
    not this one (a named reduction: the report prints the method's list under its tables)."""
    return [(ds.label, m.name) for m in exp.methods if m.datasets is not None
            for ds in exp.datasets if not m.runs_on(ds.label)]


def make_plan(exp: Experiment, only: list[str] | None = None, splits: int | None = None) -> list[RunSpec]:
    """Every run of the experiment (restricted by ``only`` patterns ``DATASET/METHOD`` and the first ``splits``)."""
    only = list(only or [])
    kind = get_kind(exp.kind)
    n_splits = exp.protocol.splits if splits is None else min(splits, exp.protocol.splits)
    specs: list[RunSpec] = []
    supported = {m.name: family_tasks(exp, m) for m in exp.methods}
    for ds in exp.datasets:
        task = task_of(ds.name, ds.options)
        fp = dataset_fingerprint(ds.name, ds.options)
        for m in exp.methods:
            tasks = supported[m.name]
            if _matches(ds.label, m.name, only) and m.runs_on(ds.label) and (tasks is None or task in tasks):
                specs.extend(kind.specs(exp, ds, m, task, fp, n_splits, splits))
    return specs
