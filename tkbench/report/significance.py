"""Significance in every accuracy report with two or more methods on shared splits (issue 22).

- Per dataset: each method against the dataset's best (by mean metric; among the methods with at least
  ``MIN_SPLITS`` finished splits where any has them, so that a mean of one or two draws is compared, not compared
  against, and cannot leave every other method without a verdict) on the splits both finished: mean
  difference, the corrected resampled t-test (Nadeau & Bengio 2003; n_train and n_test from the pair's own rows,
  :func:`pair_sizes`) and the
  Wilcoxon signed-rank test; "tie" when the corrected t-test's p >= 0.05 (the test made for repeated random
  splits; Wilcoxon shown beside it), else "worse" or "better" by the sign of t (the tested statistic; "better" is
  possible when the splits both finished differ from those behind the means). No p-value and no verdict when the
  data cannot give one (:func:`tkbench.report.statistics.degenerate`: fewer than 5 shared splits, identical
  results, differences that do not vary): the verdict then says why.
- Across datasets (those where every ranked method has a mean; the others are named under the ranks): average
  ranks, the Friedman test (three or more methods) and Nemenyi's critical difference, drawn as Demsar's diagram
  (``critical_difference.png``). Which methods and datasets are ranked is :func:`tkbench.report.ranking.select`'s
  rule with the config's methods kept: a method with a mean on fewer than half the datasets (the config runs it on
  few, or its sweep has reached few) is left out of the ranks and named, else its few datasets alone would count.
Statistics: :mod:`tkbench.report.statistics`.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from tkbench.report.aggregate import HIGHER_IS_BETTER
from tkbench.report.ranking import restricted, select
from tkbench.report.statistics import MIN_SPLITS, average_ranks, cd_diagram, friedman, nemenyi_cd, paired_test
from tkbench.report.tables import Cell, TableModel

LEVEL = 0.05


def _p(p: float) -> str:
    return "undefined" if p is None or math.isnan(p) else (f"{p:.3f}" if p >= 0.001 else f"{p:.1e}")


def pair_sizes(cell: pd.DataFrame, a: str, b: str, splits) -> tuple[float, float]:
    """(n_train, n_test) of the corrected t-test for methods a and b on a dataset's rows ``cell``, from their own
    rows on the shared ``splits``: where the two trained on different numbers of rows (a method's max_train), the
    smaller n_train and the larger n_test, i.e. the larger of their variance corrections (the conservative one).
    NaN when the rows do not say. Until 2026-12-02 the medians over every method's rows of the dataset were used,
    so one method's finished runs moved the p-values of pairs it is not in, wherever the methods train on
    different numbers of rows (the measured case: docs/reports.md)."""
    if "n_train" not in cell or "n_test" not in cell:
        return math.nan, math.nan
    mine = cell[cell["method"].isin((a, b)) & cell["split"].isin(list(splits))]
    sizes = mine.groupby("method")[["n_train", "n_test"]].median()
    if len(sizes) < 2 or sizes.isna().to_numpy().any():
        return math.nan, math.nan
    return float(sizes["n_train"].min()), float(sizes["n_test"].max())


def significance_tables(res, summary: pd.DataFrame, out: Path, ranks: bool = True) -> tuple[list[TableModel], list[Path]]:
    """The per-dataset paired table and, with ``ranks``, the average ranks across datasets (module doc). A config
    with a leaderboard passes ``ranks=False``: the leaderboard ranks per task, over its own datasets, and a second
    ranking of every task's datasets together beside it would answer the same question differently."""
    if res.rows.empty or summary.empty:
        return [], []
    ok = res.rows[res.rows["status"] == "ok"]
    tables, images = [], []
    rows = []
    for ds, part in summary.dropna(subset=["metric_mean"]).groupby("dataset", sort=False):
        if len(part) < 2:
            continue
        metric = part["metric"].iloc[0]
        higher = HIGHER_IS_BETTER[metric]
        cell = ok[ok["dataset"] == ds]
        if metric not in cell:
            continue
        finished = cell.groupby("method")[metric].count()
        enough = part[part["method"].map(finished).fillna(0) >= MIN_SPLITS]
        among = enough if len(enough) else part  # a mean of fewer splits is no reference (module doc)
        best = among.loc[among["metric_mean"].idxmax() if higher else among["metric_mean"].idxmin(), "method"]
        ref = cell[cell["method"] == best].set_index("split")[metric].dropna()
        for method in part["method"]:
            if method == best:
                continue
            ours = cell[cell["method"] == method].set_index("split")[metric].dropna()
            common = ours.index.intersection(ref.index)
            n_train, n_test = pair_sizes(cell, method, best, common)
            if len(common) == 0 or math.isnan(n_train) or math.isnan(n_test):
                rows.append([Cell(ds), Cell(method), Cell(best), Cell(str(len(common))), Cell("-"), Cell("-"),
                             Cell("-"), Cell("undefined: no shared split")])
                continue
            test = paired_test(ours[common].to_numpy(), ref[common].to_numpy(), int(n_train), int(n_test))
            verdict = test.verdict(higher, LEVEL)
            rows.append([Cell(ds), Cell(method), Cell(best), Cell(str(test.n)), Cell(f"{test.mean_diff:+.4g}"),
                         Cell(_p(test.p_corrected_t)), Cell(_p(test.p_wilcoxon)), Cell(verdict)])
    if rows:
        tables.append(TableModel(
            "Each method against the dataset's best (paired over the shared splits)",
            ["Dataset", "Method", "Best", "Splits", "Mean Δ", "Corrected t-test p", "Wilcoxon p", "Verdict"], rows,
            [f"Corrected resampled t-test (Nadeau & Bengio 2003: variance (1/J + n_test/n_train) s², J - 1 degrees "
             f"of freedom), which allows for the overlap of the training parts of repeated random splits; 'tie' when "
             f"its p >= {LEVEL}, else the sign of t says better or worse. The Wilcoxon signed-rank p is shown beside "
             f"it. No p-value ('undefined') from fewer than {MIN_SPLITS} shared splits, from identical results or "
             "from differences that do not vary: floating-point noise is not evidence. The dataset's best is the best "
             f"mean among the methods with at least {MIN_SPLITS} finished splits there (where any has them): a mean "
             "of fewer is compared with it, never used as the reference."]))
    if not ranks:
        return tables, images
    means = summary.pivot_table(index="dataset", columns="method", values="metric_mean", sort=False)
    # which methods and datasets are ranked: the shared rule (tkbench.report.ranking), keeping the config's methods
    chosen = select(means, [m.name for m in res.experiment.methods], restricted(res.experiment), keep="methods")
    methods, confined, sparse = chosen.methods, chosen.confined, chosen.sparse
    complete = means.loc[chosen.datasets, methods]
    if len(methods) >= 2 and len(complete) >= 2:
        higher = {ds: HIGHER_IS_BETTER[summary.loc[summary["dataset"] == ds, "metric"].iloc[0]]
                  for ds in complete.index}
        signed = np.vstack([complete.loc[ds].to_numpy() * (1 if higher[ds] else -1) for ds in complete.index])
        ranks = average_ranks(signed, higher_is_better=True)
        wins = (signed == signed.max(axis=1, keepdims=True)).sum(axis=0)  # a dataset tied at the top counts for each
        chi2, p = friedman(signed)
        cd = nemenyi_cd(len(methods), len(complete))
        order = np.argsort(ranks)
        top = ranks[order[0]]  # every method tied at the best average rank is bold, not only the first listed
        rows = [[Cell(methods[i]), Cell(f"{ranks[i]:.2f}", bool(abs(ranks[i] - top) <= 1e-9)), Cell(str(int(wins[i])))]
                for i in order]
        notes = [f"{len(complete)} datasets where every method has a mean; rank 1 is the best, ties share ranks; every "
                 "method tied at the best average rank is bold, and a dataset tied at the top counts as won by each."]
        counts = summary.pivot_table(index="dataset", columns="method", values="n_ok", sort=False)
        fewest = counts.reindex(index=complete.index, columns=methods).min()
        thin = {m: int(n) for m, n in fewest.items() if n < MIN_SPLITS}
        if thin:  # a rank from a mean of one or two draws says so
            notes.append("Means of fewer than " + str(MIN_SPLITS) + " finished splits behind these ranks: "
                         + ", ".join(f"{m} (as few as n = {n})" for m, n in thin.items()) + ".")
        unranked = [f"{m} (the config runs it on fewer than half the datasets)" for m in confined] + [
            f"{m} (a mean on {k} of the {n} datasets so far)" for m, (k, n) in sparse.items()]
        if unranked:
            notes.append(f"Not ranked: {', '.join(unranked)}; compared per dataset above.")
        if chosen.dropped:
            notes.append("Left out of the ranks (a ranked method has no mean there): " + "; ".join(
                f"{ds} ({', '.join(missing)})" for ds, missing in chosen.dropped.items()) + ".")
        if not math.isnan(p):
            notes.append(f"Friedman test: chi² = {chi2:.2f}, p = {_p(p)} "
                         f"({'the methods differ' if p < LEVEL else 'no significant difference'} at {LEVEL}).")
        notes.append(f"Nemenyi critical difference at {LEVEL}: CD = {cd:.2f} (Demsar 2006): average ranks closer "
                     "than CD are not significantly different; figure critical_difference.png.")
        tables.append(TableModel("Average ranks across datasets", ["Method", "Average rank", "Datasets won"],
                                 rows, notes))
        path = out / "critical_difference.png"
        cd_diagram(methods, ranks, cd, path, title=f"{len(complete)} datasets, {len(methods)} methods")
        images.append(path)
    return tables, images
