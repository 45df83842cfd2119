"""Config -> run specs (:mod:`tkbench.bench.spec`), each with a stable key.

The plan walks the config's datasets and methods (restricted by ``--only`` patterns and ``--splits``); what runs
one (dataset, method) cell becomes is its experiment kind's business (:mod:`tkbench.kinds`): splits for
``accuracy``, ``convergence`` and ``surface``, (size m, varied value, repeat) for ``scaling``, draws for
``density``, one grid for ``landscape``.
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


def make_plan(exp: Experiment, only: list[str] | None = None, splits: int | None = None) -> list[RunSpec]:
    """Every run of the experiment (restricted by ``only`` patterns ``DATASET/METHOD`` and the first ``splits``)."""
    only = list(only or [])
    kind = get_kind(exp.kind)
    n_splits = exp.protocol.splits if splits is None else min(splits, exp.protocol.splits)
    specs: list[RunSpec] = []
    for ds in exp.datasets:
        task = task_of(ds.name, ds.options)
        fp = dataset_fingerprint(ds.name, ds.options)
        for m in exp.methods:
            if _matches(ds.label, m.name, only) and m.runs_on(ds.label):
                specs.extend(kind.specs(exp, ds, m, task, fp, n_splits, splits))
    return specs
