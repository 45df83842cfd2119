"""Relative errors against a baseline, and the gain and risk curves among a group of methods: paper 002's Figure 2
(``relative_errors:`` in an accuracy config), ours from the rows beside the paper's from its reference file.

For each dataset with a mean error for every method (the error: the table's metric when lower is better, else
100 - accuracy):

- left: error(method) / error(baseline), one point per dataset (the paper: "the relative error of, say RFs, on a
  data set is the ratio error(RF)/error(SVM)");
- middle, the gain: for p in [0, max_percent], on how many datasets the method's error is at least p % below the
  best of the other methods of the group (min_other / error - 1 >= p / 100; "our algorithm achieved a 5 % better
  average risk than the other two algorithms on 5 data sets");
- right, the risk: on how many datasets the method's error is more than p % above the best of the group
  (error / min_all - 1 > p / 100; "an error that was 10 % worse than the best error on 4 data sets").

Our means come from however many draws each cell has: the table says how many (a cell from one draw is n = 1).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tkbench.report.aggregate import HIGHER_IS_BETTER
from tkbench.report.tables import Cell, TableModel


def _errors(means: pd.DataFrame, metric: str) -> pd.DataFrame:
    return 100.0 - means if HIGHER_IS_BETTER.get(metric, False) else means


def gain_risk(errors: pd.DataFrame, grid: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Per method (a column of ``errors``, datasets as rows, every value > 0): the count of datasets at each p of
    ``grid`` (percent) where it beats the best of the others by at least p % (gain), and where it is more than p %
    worse than the best of all (risk)."""
    gain, risk = {}, {}
    best_all = errors.min(axis=1)
    for m in errors.columns:
        others = errors.drop(columns=[m]).min(axis=1)
        g = (others / errors[m] - 1.0).to_numpy() * 100.0
        r = (errors[m] / best_all - 1.0).to_numpy() * 100.0
        gain[m] = np.array([int(np.sum(g >= p)) for p in grid])
        risk[m] = np.array([int(np.sum(r > p)) for p in grid])
    return gain, risk


def relative_error_tables(res, summary: pd.DataFrame, out: Path, reference, options) -> tuple[list, list[Path]]:
    from tkbench.report.parts import ref_names
    from tkbench.report.plots import _save, plt

    methods, base = list(options.methods), options.baseline
    wanted = list(dict.fromkeys([*methods, base]))
    part = summary[summary["method"].isin(wanted)].dropna(subset=["metric_mean"])
    if part.empty:
        return [], []
    metric = part["metric"].iloc[0]
    means = part.pivot_table(index="dataset", columns="method", values="metric_mean", sort=False)
    counts = part.pivot_table(index="dataset", columns="method", values="n_ok", sort=False)
    ours = _errors(means.reindex(columns=wanted).dropna(), metric)
    ours = ours[(ours > 0).all(axis=1)]
    names = ref_names(res)
    paper = pd.DataFrame()
    if reference is not None:
        rows = {}
        for ds in res.experiment.datasets:
            values = {}
            for m in wanted:
                v = reference.lookup(names["datasets"][ds.label], names["methods"][m], metric)
                if v is not None and v.metric is not None:
                    values[m] = v.metric[0]
            if len(values) == len(wanted):
                rows[names["datasets"][ds.label]] = values
        # the paper's rows of datasets we have no data for count too: the figure is the paper's
        for key, cells in (reference.results or {}).items():
            if key in rows:
                continue
            ref_methods = {m: names["methods"][m] for m in wanted}
            vals = {m: (cells or {}).get(r) for m, r in ref_methods.items()}
            if all(isinstance(v, list | tuple) and v for v in vals.values()):
                rows[key] = {m: float(v[0]) for m, v in vals.items()}
        paper = _errors(pd.DataFrame.from_dict(rows, orient="index").reindex(columns=wanted), metric).dropna()
    if ours.empty and paper.empty:
        return [], []
    grid = np.linspace(0.0, float(options.max_percent), 101)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8))
    colors = dict(zip(methods, plt.cm.tab10.colors, strict=False))
    panels = [(ours.rename(index=names["datasets"]), "-", "ours"), (paper, "--", "paper")]
    axis = list(dict.fromkeys([*panels[0][0].index, *paper.index]))  # one position per dataset (paper's names)
    for frame, style, who in panels:
        if frame.empty:
            continue
        x = np.array([axis.index(d) for d in frame.index])
        for m in methods:
            if m == base:
                continue
            axes[0].plot(x, (frame[m] / frame[base]).to_numpy(), "o" if who == "ours" else "s", color=colors[m],
                         label=f"{m} ({who}, {len(frame)} sets)", alpha=1.0 if who == "ours" else 0.5,
                         mfc=None if who == "ours" else "none")
        gain, risk = gain_risk(frame[methods], grid)
        for m in methods:
            axes[1].step(grid, gain[m], style, where="post", color=colors[m], label=f"{m} ({who})")
            axes[2].step(grid, risk[m], style, where="post", color=colors[m], label=f"{m} ({who})")
    axes[0].axhline(1.0, color="grey", lw=0.8)
    axes[0].set_xticks(np.arange(len(axis)))
    axes[0].set_xticklabels(axis, rotation=60, fontsize=7)
    axes[0].set_ylabel(f"error / error({base})")
    axes[0].set_title(f"relative errors against {base}", fontsize=10)
    axes[1].set_title("gain: datasets at least p % better\nthan the best other of the group", fontsize=10)
    axes[2].set_title("risk: datasets more than p % worse\nthan the best of the group", fontsize=10)
    for ax in axes[1:]:
        ax.set_xlabel("p (%)")
        ax.set_ylabel("datasets")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6)
    axes[0].set_yscale("log")
    fig.tight_layout()
    images = _save(fig, out / "relative_errors")

    cols = [m for m in methods if m != base]
    rows = []
    for ds in ours.index:
        cells = [Cell(ds)]
        for m in cols:
            n = int(counts.loc[ds, m]) if m in counts.columns and pd.notna(counts.loc[ds, m]) else 0
            ratio = ours.loc[ds, m] / ours.loc[ds, base]
            ref = names["datasets"].get(ds, ds)  # the paper's name of our dataset
            paper_ratio = (paper.loc[ref, m] / paper.loc[ref, base]) if ref in paper.index else None
            cells.append(Cell(f"{ratio:.3f} (n = {n})" + (f"; paper {paper_ratio:.3f}" if paper_ratio else "")))
        n_base = int(counts.loc[ds, base]) if pd.notna(counts.loc[ds, base]) else 0
        cells.append(Cell(str(n_base)))
        rows.append(cells)
    notes = [f"Error: {'100 - accuracy' if HIGHER_IS_BETTER.get(metric, False) else 'the ' + metric} per dataset "
             f"(mean over the cell's draws, n per cell), divided by {base}'s; the paper's ratios from its table "
             f"({reference.title if reference is not None else 'no reference'}). Figure relative_errors.png: left "
             "these ratios, middle the gain and right the risk curves of the group (tkbench/report/relative.py "
             "gives the rules), ours solid, the paper's dashed."]
    at = lambda frame, p: gain_risk(frame[methods], np.array([p]))  # noqa: E731
    for frame, who in ((ours, "ours"), (paper, "the paper's")):
        if frame.empty:
            continue
        g5, _ = at(frame, 5.0)
        _, r10 = at(frame, 10.0)
        notes.append(f"{who.capitalize()} ({len(frame)} datasets): at least 5 % better than the best other on "
                     + ", ".join(f"{m} {int(g5[m][0])}" for m in methods) + "; more than 10 % worse than the best on "
                     + ", ".join(f"{m} {int(r10[m][0])}" for m in methods) + ".")
    table = TableModel(f"Relative errors against {base} (paper 002 Figure 2's reading)",
                       ["Dataset", *[f"{m} / {base}" for m in cols], f"{base} draws"], rows, notes)
    return [table], images
