"""The cross-method leaderboard of an accuracy experiment (a config's ``leaderboard:`` section; issue 51).

Per task (classification: accuracy, higher is better; regression: MSE, compared as -log MSE so that a difference
is a relative one and datasets of different scales weigh alike), over the datasets where every ranked method has a
mean (a method missing on some is listed with them, not ranked; the rule, shared with the average ranks of every
accuracy report, is :func:`tkbench.report.ranking.select` keeping the board's datasets):

- average ranks (rank 1 the best, ties share their mean rank), datasets won, the Friedman test and Nemenyi's
  critical difference (Demšar 2006; :mod:`tkbench.report.statistics`);
- ranking stability (Bouthillier et al. 2021 on benchmark variance): the share of bootstrap resamples of the
  datasets (``bootstrap`` of them, drawn with the config's seed) in which each method has the best average rank
  (a tie at the top shares the resample), and how many datasets, left out one at a time, change the leader;
- the leading pairs (every pair among the ``pairs`` best average ranks): the Bayesian signed-rank test over
  datasets (Benavoli et al. 2017, JMLR 18(77); :func:`bayesian_signed_rank`, seeded) with a region of practical
  equivalence: P(A better), P(equivalent), P(B better); ROPE ``rope_accuracy`` percentage points, or a relative
  MSE difference ``rope_mse`` (log(1 + rope_mse) on -log MSE);
- the win / tie / loss matrix: for every ordered pair, the datasets where the row method is better, tied or worse
  by the corrected resampled t-test on their shared splits (the same test and rule as the per-dataset table:
  :mod:`tkbench.report.significance`), and those with no verdict (fewer than 5 shared splits, degenerate data);
- accuracy against time: each method's average rank against its median fit time over the task's datasets (log
  scale), ``leaderboard_<task>.png``.

The same tables again for each named group of datasets of one task (``leaderboard.groups``: say, the small binary
sets), ranking the methods with a mean on every dataset of the group: a method that is not planned on, or has not
finished, a set outside the group is ranked there (over the whole task it is listed as not ranked). Figures
``leaderboard_<task>_group<k>.png``, k the group's place in the config.
"""
from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from tkbench.bench.progress import FINISHED
from tkbench.report.aggregate import HIGHER_IS_BETTER
from tkbench.report.ranking import restricted, select
from tkbench.report.significance import pair_sizes
from tkbench.report.statistics import average_ranks, friedman, nemenyi_cd, paired_test
from tkbench.report.tables import Cell, TableModel

LEVEL = 0.05
TASK_METRIC = {"classification": "accuracy", "regression": "mse"}


def _scores(means: pd.DataFrame, metric: str) -> np.ndarray:
    """Higher is better: accuracy as it is, MSE as -log MSE (a relative difference)."""
    values = means.to_numpy(dtype=float)
    return values if metric == "accuracy" else -np.log(np.maximum(values, 1e-300))


def bootstrap_best(scores: np.ndarray, n: int, seed: int) -> np.ndarray:
    """The share of ``n`` bootstrap resamples of the rows (datasets) in which each column (method) has the best
    average rank; a tie at the top shares the resample."""
    rng = np.random.default_rng(seed)
    counts = np.zeros(scores.shape[1])
    for _ in range(n):
        ranks = average_ranks(scores[rng.integers(0, len(scores), len(scores))], higher_is_better=True)
        top = np.flatnonzero(np.isclose(ranks, ranks.min()))
        counts[top] += 1.0 / len(top)
    return counts / n


def leave_one_out_changes(scores: np.ndarray) -> tuple[int, list[int]]:
    """How many rows (datasets), left out one at a time, change the method with the best average rank (its
    index; ties broken by order), and which rows do."""
    leader = int(np.argmin(average_ranks(scores, higher_is_better=True)))
    changed = [i for i in range(len(scores))
               if int(np.argmin(average_ranks(np.delete(scores, i, axis=0), higher_is_better=True))) != leader]
    return leader, changed


PRIOR_STRENGTH = 0.5  # s of the Dirichlet process prior, whose pseudo-observation sits at a difference of 0
SAMPLES = 50_000


def bayesian_signed_rank(a: np.ndarray, b: np.ndarray, rope: float, seed: int,
                         samples: int = SAMPLES) -> tuple[float, float, float]:
    """(P(a better), P(equivalent), P(b better)) over paired per-dataset scores (higher is better): the Bayesian
    signed-rank test of Benavoli, Corani, Demšar & Zaffalon 2017 (JMLR 18(77), section 5.2). The differences
    z_i = a_i - b_i, with a prior pseudo-observation z_0 = 0 of weight s = 0.5, get Dirichlet process posterior
    weights w ~ Dir(s, 1, ..., 1); each draw gives theta_a = sum_ij w_i w_j [z_i + z_j > 2 rope],
    theta_b = sum_ij w_i w_j [z_i + z_j < -2 rope] (a pair exactly at the bound counts half) and theta_rope the
    rest; the probabilities are the shares of ``samples`` draws (seeded) in which each theta is the largest.

    Written here rather than taken from baycomp (the reference implementation): baycomp 1.0.3 installs a
    top-level ``tests`` package into site-packages, which shadows a project's own ``tests`` package (ours
    stopped importing)."""
    z = np.concatenate([[0.0], np.asarray(a, float) - np.asarray(b, float)])
    pair = z[:, None] + z[None, :]
    above = (pair > 2 * rope) + 0.5 * (pair == 2 * rope)
    below = (pair < -2 * rope) + 0.5 * (pair == -2 * rope)
    alpha = np.ones(len(z))
    alpha[0] = PRIOR_STRENGTH
    w = np.random.default_rng(seed).dirichlet(alpha, size=samples)
    theta_a = np.einsum("ki,ij,kj->k", w, above, w)
    theta_b = np.einsum("ki,ij,kj->k", w, below, w)
    theta = np.column_stack([theta_a, 1.0 - theta_a - theta_b, theta_b])
    shares = np.bincount(np.argmax(theta, axis=1), minlength=3) / samples
    return float(shares[0]), float(shares[1]), float(shares[2])


def _verdict(ok: pd.DataFrame, ds: str, a: str, b: str, metric: str) -> str:
    """'win' / 'tie' / 'loss' of method a against b on dataset ds (corrected t-test on shared splits), or 'none'."""
    cell = ok[ok["dataset"] == ds]
    x = cell[cell["method"] == a].set_index("split")[metric].dropna()
    y = cell[cell["method"] == b].set_index("split")[metric].dropna()
    common = x.index.intersection(y.index)
    n_train, n_test = pair_sizes(cell, a, b, common)  # the pair's own training and test sizes
    if len(common) == 0 or math.isnan(n_train) or math.isnan(n_test):
        return "none"
    test = paired_test(x[common].to_numpy(), y[common].to_numpy(), int(n_train), int(n_test),
                       wilcoxon=False)  # the verdict reads the t-test only
    if test.undefined:
        return "none"
    return {"tie": "tie", "better": "win", "worse": "loss"}[test.verdict(HIGHER_IS_BETTER[metric], LEVEL)]


def unfinished_cells(res) -> dict[tuple[str, str], tuple[int, int]]:
    """(dataset label, method) -> (finished, planned) runs, for the cells of the config's plan whose runs have not
    all finished (ok, failed or timed out: :data:`tkbench.bench.progress.FINISHED`): a sweep over several sessions,
    or a method cut short."""
    planned = Counter(zip(res.planned["dataset"], res.planned["method"], strict=True))
    # tkbench.bench.progress's outcomes (a leaderboard's accuracy kinds have no gate that leaves runs out)
    done = res.rows[res.rows["status"].isin(FINISHED)]
    finished = Counter(zip(done["dataset"], done["method"], strict=True))
    return {cell: (finished.get(cell, 0), n) for cell, n in planned.items() if finished.get(cell, 0) < n}


def leaderboard_tables(res, summary: pd.DataFrame, out: Path, options) -> tuple[list[TableModel], list[Path]]:
    tables: list[TableModel] = []
    images: list[Path] = []
    if res.rows.empty or summary.empty:
        return tables, images
    ok = res.rows[res.rows["status"] == "ok"]
    # cells whose every run finished without a result (a peer that fails on a dataset): named as such in the notes
    not_ok = res.rows[res.rows["status"] != "ok"]
    with_ok = set(zip(ok["dataset"], ok["method"], strict=True))
    failed = {cell: n for cell, n in Counter(zip(not_ok["dataset"], not_ok["method"], strict=True)).items()
              if cell not in with_ok}
    order = [m.name for m in res.experiment.methods]
    planned = set(zip(res.planned["dataset"], res.planned["method"], strict=True))
    unfinished = unfinished_cells(res)
    seed = int(res.experiment.protocol.seed)
    # (task, metric, its summary rows, title, figure, the group's datasets or None for the whole task)
    boards: list[tuple[str, str, pd.DataFrame, str, str, list[str] | None]] = []
    for task, metric in TASK_METRIC.items():
        part = summary[(summary["task"] == task) & (summary["metric"] == metric)].dropna(subset=["metric_mean"])
        boards.append((task, metric, part, task, f"leaderboard_{task}.png", None))
    for g, (group, members) in enumerate(options.groups.items()):
        # a subset of one task (the config check): its own ranking over its own datasets
        tasks = summary.loc[summary["dataset"].isin(members), "task"].unique()
        if len(tasks) != 1 or tasks[0] not in TASK_METRIC:
            continue
        task, metric = tasks[0], TASK_METRIC[tasks[0]]
        part = summary[summary["dataset"].isin(members) & (summary["metric"] == metric)].dropna(
            subset=["metric_mean"])
        boards.append((task, metric, part, f"{task}, {group}", f"leaderboard_{task}_group{g + 1}.png", members))
    for task, metric, part, title, figure, members in boards:
        means = part.pivot_table(index="dataset", columns="method", values="metric_mean", sort=False)
        if means.shape[0] < 2:
            continue
        running = {(ds, m): n for (ds, m), n in unfinished.items() if ds in means.index and m in means.columns}
        for (ds, m) in running:  # a cell whose sweep is still going: no mean yet (n = 1 beside n = 30 misleads)
            means.loc[ds, m] = np.nan
        # which methods are ranked: the shared rule (tkbench.report.ranking), keeping the board's datasets
        chosen = select(means, order, restricted(res.experiment), keep="datasets")
        methods = chosen.methods
        left_out = {m: [f"{ds} ({running[ds, m][0]} of {running[ds, m][1]} splits run)" if (ds, m) in running
                        else f"{ds} (none of its {failed[ds, m]} runs ok)" if failed.get((ds, m))
                        else f"{ds} (not planned there)" if (ds, m) not in planned
                        else ds for ds in missing]
                    for m, missing in chosen.missing.items()}
        if len(methods) < 2 or len(chosen.datasets) < 2:
            continue
        datasets = chosen.datasets
        scores = _scores(means.loc[datasets, methods], metric)
        ranks = average_ranks(scores, higher_is_better=True)
        wins = (scores == scores.max(axis=1, keepdims=True)).sum(axis=0)
        p_best = bootstrap_best(scores, options.bootstrap, seed)
        leader, changed = leave_one_out_changes(scores)
        chi2, p = friedman(scores)
        cd = nemenyi_cd(len(methods), len(datasets))
        by_rank = list(np.argsort(ranks, kind="stable"))
        verdicts = {(a, b): [_verdict(ok, ds, a, b, metric) for ds in datasets]
                    for a in methods for b in methods if a != b}
        top = ranks[by_rank[0]]
        rows = []
        for i in by_rank:
            name = methods[i]
            against = verdicts.get((name, methods[leader]))
            wtl = "-" if against is None else "/".join(str(against.count(v)) for v in ("win", "tie", "loss"))
            mine = part[part["method"] == name]
            time, cv = mine["fit_mean"].median(), mine["cv_mean"].median() if "cv_mean" in mine else math.nan
            runs = res.rows[(res.rows["method"] == name) & res.rows["dataset"].isin(datasets)]
            peak = runs.loc[runs["status"] == "ok", "peak_rss_mb"].median() if "peak_rss_mb" in runs else math.nan
            bad = runs["status"].ne("ok").sum()
            rows.append([Cell(name), Cell(f"{ranks[i]:.2f}", bool(abs(ranks[i] - top) <= 1e-9)),
                         Cell(f"{p_best[i]:.2f}"), Cell(str(int(wins[i]))), Cell(wtl),
                         Cell(f"{time:.3g}" if time == time else "-"), Cell(f"{cv:.3g}" if cv == cv else "-"),
                         Cell(f"{peak:.0f}" if peak == peak else "-"), Cell(str(int(bad)))])
        what = "accuracy" if metric == "accuracy" else "-log MSE (relative differences)"
        notes = [f"{len(datasets)} {task} datasets ({', '.join(datasets)}), ranked by mean {what}; rank 1 is the "
                 "best, ties share ranks. P(best): the share of "
                 f"{options.bootstrap} bootstrap resamples of the datasets (seed {seed}) in which the method has the "
                 "best average rank. W/T/L vs the leader: datasets where the method is better / tied / worse than "
                 f"{methods[leader]} by the corrected resampled t-test at {LEVEL} on their shared splits (the rest "
                 "have no verdict: too few shared splits or degenerate data). Times: the median over datasets of "
                 "the mean final fit and the CV per split (a CV shared by several splits, tune_on_first, is counted "
                 "once); peak memory: the median peak resident set of the run processes (data included); not ok: "
                 "its runs on these datasets that failed or timed out (the tables above give the reasons)."]
        if members is not None:
            absent = [ds for ds in members if ds not in means.index]
            notes.append("A group of the config's datasets (leaderboard.groups): a method is ranked here when it "
                         "has a mean on each of them, whatever it has elsewhere."
                         + (f" Not in this ranking yet (no method has a finished mean there): {', '.join(absent)}."
                            if absent else ""))
        notes.append(f"Leave one dataset out: the leader ({methods[leader]}) changes when any of {len(changed)} of "
                     f"the {len(datasets)} datasets is left out ({', '.join(datasets[i] for i in changed)})."
                     if changed else f"Leave one dataset out: {methods[leader]} stays the leader whichever of the "
                     f"{len(datasets)} datasets is left out.")
        if not math.isnan(p):
            notes.append(f"Friedman test: chi² = {chi2:.2f}, p = {p:.3g} "
                         f"({'the methods differ' if p < LEVEL else 'no significant difference'} at {LEVEL}); "
                         f"Nemenyi critical difference CD = {cd:.2f}: average ranks closer than CD are not "
                         "significantly different (Demšar 2006).")
        for m, missing in left_out.items():
            notes.append(f"{m} is not ranked: no finished mean on {', '.join(missing)}.")
        if chosen.confined:
            notes.append("Not ranked: " + ", ".join(f"{m} (the config runs it on fewer than half of these datasets)"
                                                    for m in chosen.confined) + ".")
        tables.append(TableModel(f"Leaderboard: {title}", ["Method", "Average rank", "P(best)", "Datasets won",
                                                          "W/T/L vs the leader", "Median fit time (s)",
                                                          "Median CV time (s)", "Peak memory (MB)", "Not ok"],
                                  rows, notes))
        # the leading pairs: Bayesian signed-rank over datasets
        lead = by_rank[:min(options.pairs, len(methods))]
        rope = options.rope_accuracy if metric == "accuracy" else math.log1p(options.rope_mse)
        pair_rows = []
        for x in range(len(lead)):
            for y in range(x + 1, len(lead)):
                a, b = lead[x], lead[y]
                pa, pr, pb = bayesian_signed_rank(scores[:, a], scores[:, b], rope, seed)
                pair_rows.append([Cell(methods[a]), Cell(methods[b]), Cell(f"{pa:.3f}"), Cell(f"{pr:.3f}"),
                                  Cell(f"{pb:.3f}")])
        if pair_rows:
            unit = (f"{options.rope_accuracy:g} accuracy points" if metric == "accuracy"
                    else f"a relative MSE difference of {options.rope_mse:g}")
            tables.append(TableModel(
                f"Leading pairs ({title}): Bayesian signed-rank test over datasets",
                ["A", "B", "P(A better)", "P(equivalent)", "P(B better)"], pair_rows,
                [f"Benavoli et al. 2017 (Bayesian signed-rank test, {SAMPLES} posterior samples, seed {seed}): the "
                 f"posterior probability that A is better than B by more than the region of practical equivalence "
                 f"({unit}), that they are equivalent, or that B is better, from the {len(datasets)} datasets' "
                 "mean scores. Unlike a p-value, these say how likely each outcome is given the datasets."]))
        # the win / tie / loss matrix
        matrix = []
        for a in (methods[i] for i in by_rank):
            row = [Cell(a)]
            for b in (methods[i] for i in by_rank):
                v = verdicts.get((a, b))
                row.append(Cell("-" if v is None else "/".join(str(v.count(k)) for k in ("win", "tie", "loss"))))
            matrix.append(row)
        tables.append(TableModel(
            f"Win / tie / loss matrix ({title})", ["Method", *(methods[i] for i in by_rank)], matrix,
            [f"Row against column: datasets where the row method is better / tied / worse by the corrected resampled "
             f"t-test at {LEVEL} on the splits both finished; datasets with no verdict are not counted."]))
        images.append(_time_plot(out / figure, methods, ranks,
                                 [part[part["method"] == m]["fit_mean"].median() for m in methods], title))
    return tables, images


def _time_plot(path: Path, methods: list[str], ranks: np.ndarray, times: list[float], task: str) -> Path:
    """Average rank against median fit time (log scale), one labelled point per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, r, t in zip(methods, ranks, times, strict=True):
        if t == t and t > 0:
            ax.scatter(t, r)
            ax.annotate(name, (t, r), textcoords="offset points", xytext=(4, 3), fontsize=8)
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set_xlabel("median fit time over datasets (s, log)")
    ax.set_ylabel("average rank (1 = best)")
    ax.set_title(f"{task}: accuracy against time")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
