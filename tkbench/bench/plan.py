"""Config -> run specs (:mod:`tkbench.bench.spec`), each with a stable key.

The plan walks the config's datasets and methods (restricted by ``--only`` patterns, ``--splits`` and
``--split-ids``); what runs one (dataset, method) cell becomes is its experiment kind's business
(:mod:`tkbench.kinds`): splits for ``accuracy``, ``convergence`` and ``surface``, (size m, varied value, repeat)
for ``scaling``, draws for ``density``, one grid for ``landscape``. A method runs on the datasets whose task its family supports (or on
the ones it names); :func:`empty_cells` lists the pairs left out and why.
"""
from __future__ import annotations

import fnmatch
import re

from tkbench.bench.spec import RunSpec
from tkbench.config import MAX_SPLITS, Experiment
from tkbench.data import dataset_fingerprint, task_of
from tkbench.errors import InputError
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


_SPLIT_ITEM = re.compile(r"^(\d+)(?:-(\d+))?$")


def parse_split_ids(text: str) -> list[int]:
    """``--split-ids``: comma-separated split numbers and inclusive ranges, numbered from 0 as the rows and reports
    number them (a scaling sweep's repeats likewise), e.g. ``"2"``, ``"0-4,10"``; sorted, without repeats. Anything
    else is an :class:`InputError` naming the item and the expected form."""
    ids: set[int] = set()
    items = [item.strip() for item in str(text).split(",")]
    for item in items:
        found = _SPLIT_ITEM.match(item)
        if found is None or (found.group(2) is not None and int(found.group(2)) < int(found.group(1))):
            raise InputError(f"--split-ids {text!r}: {item!r} is not a split number or a range A-B with A <= B; "
                             "expected comma-separated numbers and ranges counted from 0, e.g. 2 or 0-4,10")
        first, last = int(found.group(1)), int(found.group(2) or found.group(1))
        if last >= MAX_SPLITS:  # a config has at most MAX_SPLITS splits; and no huge range is built in memory
            raise InputError(f"--split-ids {text!r}: {item!r} goes beyond the largest split number a config can "
                             f"have ({MAX_SPLITS - 1}); expected comma-separated numbers and ranges counted from 0")
        ids.update(range(first, last + 1))
    return sorted(ids)


def format_split_ids(ids: list[int]) -> str:
    """The inverse of :func:`parse_split_ids` for messages: sorted split numbers without repeats as ranges,
    [0, 1, 2, 5] -> "0-2, 5" (a long ``--split-ids`` range stays one item)."""
    parts, start = [], None
    for i, v in enumerate(ids):
        if start is None:
            start = v
        if i + 1 == len(ids) or ids[i + 1] != v + 1:
            parts.append(str(start) if start == v else f"{start}-{v}")
            start = None
    return ", ".join(parts)


def make_plan(exp: Experiment, only: list[str] | None = None, splits: int | None = None,
              split_ids: list[int] | None = None) -> list[RunSpec]:
    """Every run of the experiment (restricted by ``only`` patterns ``DATASET/METHOD``, the first ``splits`` and
    the splits numbered ``split_ids``: a filter on each run's ``split``, after the kind has made its runs, so
    a run keeps the key, seed and shared CV it has in the whole plan)."""
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
    if split_ids is not None:
        wanted = set(split_ids)
        specs = [s for s in specs if s.split in wanted]
    return specs
