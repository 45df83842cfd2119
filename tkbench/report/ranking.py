"""Which methods and which datasets a ranking across datasets covers: one rule for the average ranks of every
accuracy report (:mod:`tkbench.report.significance`) and for the leaderboard (:mod:`tkbench.report.leaderboard`).

Average ranks (and the Friedman and Nemenyi statistics on them) need a mean of every ranked method on every
ranked dataset. Where some means are missing, either datasets or methods give way, and the caller says which
(``keep``):

- ``keep="methods"`` (a paper's table: its methods are the question): the datasets where a ranked method has no
  mean are left out of the ranks, and named with the methods missing there;
- ``keep="datasets"`` (a leaderboard: its datasets are the question): a method without a mean on every dataset is
  not ranked, and named with the datasets it misses.

Either way, first: a method with a mean on fewer than half of the datasets that have any is set aside, not
ranked, and named. Under ``keep="methods"`` its few datasets alone would be ranked: one side check on one set
(German's CM_full in paper 004's Table 2, its config's ``datasets:``) removed the ranks altogether until
2026-12-03, and one cell whose sweep had reached 3 of 13 datasets (paper 002's Table 1, HGK_refit) ranked the
whole table over those 3. A method the config runs on some datasets only (its ``datasets:`` list) is *confined*
(the note says the config runs it there); any other such method is *sparse* (the note says on how many it has a
mean so far). Under ``keep="datasets"`` either could not be ranked anyway. The rule stands down where it would
leave fewer than two methods to rank.

Until 2026-12-03 the two reports each had a rule of their own (the review of issue 50 found them deciding the same
question by different code); this module is the one place that decides it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pandas as pd


@dataclass(frozen=True)
class Selection:
    """What :func:`select` ranks and what it leaves out, with the reason."""
    methods: list[str]  # ranked, in the caller's order
    datasets: list[str]  # ranked over, in the table's order
    confined: list[str] = field(default_factory=list)  # not ranked: the config runs them on few datasets
    sparse: dict[str, tuple[int, int]] = field(default_factory=dict)  # not ranked: (datasets with a mean, of n)
    missing: dict[str, list[str]] = field(default_factory=dict)  # keep="datasets": unranked, not confined method
    #                                                              -> the datasets where it has no mean
    dropped: dict[str, list[str]] = field(default_factory=dict)  # keep="methods": dataset -> methods missing there


def restricted(experiment) -> set[str]:
    """The methods the config runs on some datasets only (a ``datasets:`` list): :func:`select`'s ``confined_to_some``."""
    return {m.name for m in experiment.methods if m.datasets is not None}


def select(means: pd.DataFrame, order: list[str], confined_to_some: set[str] | frozenset[str],
           keep: Literal["methods", "datasets"]) -> Selection:
    """The methods and datasets to rank (module doc).

    ``means``: datasets x methods, NaN where a method has no mean (the caller decides what counts: the leaderboard
    blanks cells whose sweep is still running); ``order``: the methods to consider, in the order to report them;
    ``confined_to_some``: those the config runs on some datasets only (a ``datasets:`` list; :func:`restricted`)."""
    if keep not in ("methods", "datasets"):
        raise ValueError(f"keep must be 'methods' or 'datasets', not {keep!r}")
    methods = [m for m in order if m in means.columns]
    present = means[methods].notna()
    with_any = int(present.any(axis=1).sum())
    few = [m for m in methods if 2 * int(present[m].sum()) < with_any]
    if len(methods) - len(few) < 2:
        few = []
    confined = [m for m in few if m in confined_to_some]
    sparse = {m: (int(present[m].sum()), with_any) for m in few if m not in confined_to_some}
    methods = [m for m in methods if m not in few]
    present = present[methods]
    if keep == "methods":
        rows = present.any(axis=1)
        full = present.all(axis=1)
        dropped = {str(ds): [m for m in methods if not present.loc[ds, m]] for ds in present.index[rows & ~full]}
        return Selection(methods, [str(ds) for ds in present.index[full]], confined, sparse, dropped=dropped)
    datasets = [str(ds) for ds in present.index[present.any(axis=1)]]
    ranked = [m for m in methods if present.loc[datasets, m].all()]
    # the methods set aside as sparse are named with the datasets they miss too (a leaderboard gives a reason per
    # dataset: a sweep still running there, no run ok); confined ones by their config alone
    missing = {m: [ds for ds in datasets if pd.isna(means.loc[ds, m])] for m in order
               if m in means.columns and m not in ranked and m not in confined}
    return Selection(ranked, datasets, confined, sparse, missing=missing)
