"""Report of a ``landscape`` experiment (paper 001 Figure 1): the objective over two kernel weights per method,
as a table (range, minimiser, the bound ||y||^2 / lambda of Proposition 2, the share of the grid where the Hessian
has a negative eigenvalue) and as contour plots with the non-convex region hatched."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from tkbench.report.plots import write_figure  # noqa: E402
from tkbench.report.tables import Cell, TableModel, fmt_time  # noqa: E402


def _ok(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["status"] == "ok"] if not rows.empty else rows


def _params(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items()))


def landscape_table(rows: pd.DataFrame) -> TableModel:
    out = []
    for _, r in _ok(rows).iterrows():
        land = r["landscape"]
        concave = r.get("concave_fraction")
        out.append([Cell(str(r["dataset"])), Cell(str(r["method"])), Cell(_params(r["params"])),
                    Cell(f"{r['objective_min']:.5g}"), Cell(f"{r['objective_max']:.5g}"),
                    Cell(f"({r['argmin'][0]:.3g}, {r['argmin'][1]:.3g})"), Cell(f"{land['bound']:.5g}"),
                    Cell("-" if concave is None or concave != concave else f"{100 * concave:.0f} %"),
                    Cell(" · ".join(land.get("kernel_names", []))), Cell(fmt_time(r["fit_seconds"]))])
    cols = ["Dataset", "Method", "Parameters", "min F", "max F", "argmin (mu1, mu2)", "||y||^2 / lambda",
            "grid points with a negative Hessian eigenvalue", "base kernels", "seconds"]
    notes = ["F over the grid [low, high]^2 of (mu1, mu2); ||y||^2 / lambda is F at any stationary point and its "
             "maximum (Proposition 2), reached at mu = 0 for degree >= 2. Where the Hessian has a negative "
             "eigenvalue F is not convex (Proposition 4's condition fails); the figure hatches those points."]
    bad = rows[rows["status"] != "ok"] if not rows.empty else rows
    if len(bad):
        notes.append(f"{len(bad)} run(s) not ok: " + "; ".join(sorted(set(bad["error"].astype(str)))[:3]))
    return TableModel("Objective landscape over two kernel weights", cols, out, notes)


def landscape_plots(rows: pd.DataFrame, out_dir: Path) -> list[Path]:
    paths: list[Path] = []
    for ds, cur in _ok(rows).groupby("dataset", sort=False):
        cur = cur.sort_values("split").drop_duplicates("method")
        fig, axes = plt.subplots(1, len(cur), figsize=(4.6 * len(cur), 4.0), squeeze=False)
        for ax, (_, r) in zip(axes[0], cur.iterrows(), strict=True):
            land = r["landscape"]
            grid = np.asarray(land["axis"])
            F = np.asarray(land["values"])
            filled = ax.contourf(grid, grid, F, levels=20, cmap="viridis")
            ax.contour(grid, grid, F, levels=10, colors="white", linewidths=0.5)
            fig.colorbar(filled, ax=ax, shrink=0.85)
            if land.get("min_eigenvalue") is not None:
                concave = (np.asarray(land["min_eigenvalue"]) < 0).astype(float)
                if concave.any():
                    ax.contourf(grid, grid, concave, levels=[0.5, 1.5], colors="none", hatches=["///"])
                    ax.contour(grid, grid, concave, levels=[0.5], colors="red", linewidths=1.2)
            ax.plot(*r["argmin"], marker="*", color="red", markersize=12, linestyle="none")
            ax.set_xlabel("mu1")
            ax.set_ylabel("mu2")
            varied = {k: v for k, v in r["params"].items()
                      if len({str(p.get(k)) for p in cur["params"]}) > 1} or r["params"]  # what tells panels apart
            ax.set_title(f"{r['method']}: {_params(varied)}", fontsize=10)
        fig.suptitle(f"{ds}: F(mu1, mu2); hatched, inside the red line: not convex (a negative Hessian "
                     "eigenvalue); star: grid minimum", fontsize=9)
        fig.tight_layout()
        paths += write_figure(fig, out_dir / f"landscape_{ds}")
    return paths
