"""Learning curves: test accuracy (or its residual error, 1 - accuracy) against the training size, for the datasets
of an accuracy config that share a data set and differ in size (``learning_curve:`` in the config; paper 000
Figures 5 and 7: two methods as m grows, on Liver and the spiral).

Datasets are grouped by their data (``name`` and ``options``); a group with two or more entries is one curve per
method: x the median training rows of the entry's ok runs, y the mean over its splits with the standard deviation
as a band (n per point in the table). ``residual: true`` draws 1 - accuracy on a log axis (the paper's "semilog plot
of the residual error").
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from tkbench.report.tables import Cell, TableModel


def groups(exp) -> dict[str, list[str]]:
    """Data key -> the dataset labels sharing that data (in config order), only groups of two or more."""
    out: dict[str, list[str]] = {}
    for ds in exp.datasets:
        key = ds.name + (json.dumps(ds.options, sort_keys=True) if ds.options else "")
        out.setdefault(key, []).append(ds.label)
    return {k: v for k, v in out.items() if len(v) >= 2}


def learning_curve_tables(res, summary: pd.DataFrame, out: Path, options) -> tuple[list, list[Path]]:
    from tkbench.report.plots import _save, plt

    exp = res.experiment
    ok = res.rows[res.rows["status"] == "ok"] if not res.rows.empty else res.rows
    tables, images = [], []
    methods = [m.name for m in exp.methods]
    for key, labels in groups(exp).items():
        name = key.split("{", 1)[0]
        points = []
        for label in labels:
            cell = ok[ok["dataset"] == label]
            if cell.empty or "n_train" not in cell:
                continue
            m = float(cell["n_train"].median())
            for method in methods:
                vals = cell.loc[cell["method"] == method, "accuracy"].dropna() if "accuracy" in cell else []
                if len(vals):
                    points.append({"label": label, "m": m, "method": method, "mean": float(np.mean(vals)),
                                   "std": float(np.std(vals, ddof=1)) if len(vals) > 1 else float("nan"),
                                   "n": int(len(vals))})
        if not points:
            continue
        frame = pd.DataFrame(points)
        fig, ax = plt.subplots(figsize=(6, 4.5))
        for method in methods:
            cur = frame[frame["method"] == method].sort_values("m")
            if cur.empty:
                continue
            y = 100.0 - cur["mean"] if options.residual else cur["mean"]
            ax.plot(cur["m"], y, "o-", label=method)
            band = cur["std"].fillna(0.0)
            lo, hi = (y - band, y + band)
            if options.residual:
                lo = np.maximum(lo, 1e-2)
            ax.fill_between(cur["m"], lo, hi, alpha=0.15)
        if options.residual:
            ax.set_yscale("log")
        ax.set_xlabel("training rows m")
        ax.set_ylabel("residual error 1 - TSA (%)" if options.residual else "test accuracy (%)")
        ax.set_title(f"{name}: {'residual error' if options.residual else 'accuracy'} against m")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        images += _save(fig, out / f"learning_curve_{name}")
        rows = []
        for label in labels:
            part = frame[frame["label"] == label]
            if part.empty:
                continue
            cells = [Cell(label), Cell(f"{part['m'].iloc[0]:g}")]
            for method in methods:
                p = part[part["method"] == method]
                cells.append(Cell("-" if p.empty else f"{p['mean'].iloc[0]:.2f} ± {p['std'].iloc[0]:.2f} "
                                  f"(n = {p['n'].iloc[0]})"))
            rows.append(cells)
        tables.append(TableModel(f"Learning curve: {name} (test accuracy against the training size)",
                                 ["Dataset", "Training rows", *methods], rows,
                                 [f"The entries of this config that hold {name} at different sizes; training rows: "
                                  "the median over the entry's ok runs. Figure learning_curve_" + name + ".png"
                                  + (" (residual error 1 - accuracy, log scale)." if options.residual else ".")]))
    return tables, images
