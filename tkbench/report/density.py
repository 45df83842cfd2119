"""Report of a ``density`` experiment (paper 000 Figure 2): objective of Problems (20) and (21) per kernel class
and degree, as a table and as the figure's two panels."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from tkbench.report.plots import save_figure  # noqa: E402
from tkbench.report.tables import Cell, TableModel, fmt, fmt_time  # noqa: E402

# lower bounds for globally positive kernels when half of K* is -1 (paper 000 section 4.3.3)
POSITIVE_KERNEL_BOUNDS = {"l1": 0.5, "linf": 1.0}
TITLES = {"l1": "Problem (20): ||K - K*||_1 / m^2", "linf": "Problem (21): ||K - K*||_inf"}


def _ok(rows: pd.DataFrame) -> pd.DataFrame:
    ok = rows[rows["status"] == "ok"].copy()
    ok["degree"] = ok["size_value"].astype(float)
    return ok


def density_table(rows: pd.DataFrame) -> TableModel:
    ok = _ok(rows)
    out = []
    for (ds, method, degree), g in ok.groupby(["dataset", "method", "degree"], sort=True):
        out.append([Cell(str(ds)), Cell(str(method)), Cell(f"{degree:g}"), Cell(str(int(g["n_variables"].iloc[0]))),
                    Cell(fmt(g["objective_l1"].mean(), g["objective_l1"].std(), 4)),
                    Cell(fmt(g["objective_linf"].mean(), g["objective_linf"].std(), 4)),
                    Cell(f"{100 * g['negative_entries'].mean():.0f} %"),
                    Cell(fmt_time(g["fit_seconds"].mean())), Cell(str(len(g)))])
    cols = ["dataset", "class", "degree d", "variables", "(20) 1-norm / m^2", "(21) inf-norm",
            "negative entries of K (1-norm fit)", "solve s (both)", "draws"]
    notes = ["Mean ± std over the random balanced draws of the points. Globally positive kernels (every Gaussian "
             "sum) cannot go below 0.5 in (20) and 1 in (21) when half of K* = y y^T is -1 (paper 000 section 4.3.3).",
             "Gaussian sums: as many bandwidths as the TK class of that degree has variables (the figure's matching); "
             "the degree column is the matched TK degree."]
    statuses = pd.concat([ok.get(f"status_{n}", pd.Series(dtype=str)) for n in ("l1", "linf")])
    inexact = statuses[statuses.astype(str) != "optimal"]
    if len(inexact):
        notes.append(f"{len(inexact)} of {len(statuses)} solves ended with solver status "
                     f"{', '.join(sorted(set(inexact.astype(str))))}; the objective shown is recomputed from the "
                     "returned solution (a feasible point), so it is an upper bound on the optimum.")
    bad = rows[rows["status"] != "ok"]
    if len(bad):
        notes.append(f"{len(bad)} run(s) failed: " + "; ".join(sorted(set(bad["error"].astype(str)))[:3]))
    return TableModel("Approximating the optimal kernel matrix (paper 000 Figure 2)", cols, out, notes)


def density_plots(rows: pd.DataFrame, out_dir: Path) -> list[Path]:
    ok = _ok(rows)
    paths: list[Path] = []
    for ds, cur in ok.groupby("dataset"):
        for norm in ("l1", "linf"):
            fig, ax = plt.subplots(figsize=(5.5, 4))
            for method, g in cur.groupby("method", sort=False):
                stats = g.groupby("degree")[f"objective_{norm}"].agg(["mean", "std"]).sort_index()
                ax.errorbar(stats.index, stats["mean"], yerr=stats["std"].fillna(0), marker="o", capsize=3,
                            label=str(method))
            ax.axhline(POSITIVE_KERNEL_BOUNDS[norm], color="grey", linestyle="--", linewidth=1,
                       label="bound for positive kernels")
            ax.set_ylim(bottom=0)
            paths += save_figure(fig, ax, out_dir / f"density_{ds}_{norm}", "degree d (Gaussians: matched TK degree)",
                             "objective", f"{ds}: {TITLES[norm]}")
    return paths
