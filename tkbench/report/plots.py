"""Complexity plots (log-log fit time against size, with the fitted slope) and convergence plots (trace vs iteration).

The slope is the least-squares fit of log(time) = a + b log(size) over the per-size mean fit times, the way the
papers report their exponents (paper 003 Fig. 3, paper 000 Figs 3-4).
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "tkbench"  # deterministic SVG ids: regenerated reports diff cleanly
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from tkbench.methods._shared.report import read_report  # noqa: E402

TRACE_FIELDS = ("fw_gap", "gap", "relative_gap", "loss", "objective")


def fit_slope(sizes, times) -> tuple[float, float]:
    """(slope, intercept) of log(time) against log(size); NaN when fewer than two distinct sizes."""
    x = np.log(np.asarray(sizes, dtype=float))
    y = np.log(np.maximum(np.asarray(times, dtype=float), 1e-12))
    if len(np.unique(x)) < 2:
        return float("nan"), float("nan")
    slope, intercept = np.polyfit(x, y, 1)
    return float(slope), float(intercept)


def _size_ticks(ax, sizes) -> None:
    """Ticks at the measured sizes, written plainly (log axes otherwise print overlapping 3x10^3 labels)."""
    from matplotlib.ticker import FixedLocator, NullLocator

    ticks = sorted({float(v) for v in sizes})
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([f"{t:g}" for t in ticks])


def save_figure(fig, ax, base: Path, xlabel: str, ylabel: str, title: str) -> list[Path]:
    """Label, grid, legend, and write the figure as PNG and SVG."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    handles = ax.get_legend_handles_labels()[0]
    if len(handles) > 8:  # many curves: the legend beside the axes, not over them
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
    elif handles:
        ax.legend(fontsize=8)
    return write_figure(fig, base)


def write_figure(fig, base: Path) -> list[Path]:
    paths = [base.with_suffix(".png"), base.with_suffix(".svg")]
    fig.savefig(paths[0], dpi=120, bbox_inches="tight", metadata={"Software": None})
    fig.savefig(paths[1], bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return paths


def _at_largest(cur: pd.DataFrame, axis_col: str) -> dict:
    """Peak memory and solver iterations of the runs at the largest size of one curve."""
    top = cur[cur[axis_col] == cur[axis_col].max()]
    rss = top["peak_rss_mb"].max() if "peak_rss_mb" in top else float("nan")
    reported = (read_report(d)["iterations"] for d in top.get("diagnostics", pd.Series(dtype=object)))
    iters = [n for n in reported if isinstance(n, int | float)]
    return {"peak_rss_mb": float(rss) if rss == rss else float("nan"),
            "iterations": float(np.mean(iters)) if iters else float("nan")}


def _per_iteration(cur: pd.DataFrame, axis_col: str) -> pd.Series | None:
    """Mean fit time per solver iteration at each size, or None unless every run records its iterations."""
    iters = [read_report(d)["iterations"] for d in cur.get("diagnostics", [None] * len(cur))]
    if not len(cur) or not all(isinstance(n, int | float) and n > 0 for n in iters):
        return None
    per = cur["fit_seconds"].to_numpy(float) / np.asarray(iters, float)
    return pd.Series(per, index=cur[axis_col].to_numpy()).groupby(level=0).mean().sort_index()


def _curve(dataset, method, axis, fixed, means: pd.Series, extra: dict, per_iteration: pd.Series | None = None
           ) -> dict:
    slope, _ = fit_slope(means.index, means.values)
    tail, _ = fit_slope(means.index[-2:], means.values[-2:])
    per_iter = fit_slope(per_iteration.index, per_iteration.values)[0] if per_iteration is not None else float("nan")
    return {"dataset": dataset, "method": method, "axis": axis, "fixed": fixed, "slope": slope,
            "tail_slope": tail, "per_iteration_slope": per_iter, "points": len(means), "max_size": means.index.max(),
            "max_seconds": float(means.iloc[-1]), **extra}


def with_actual_size(rows: pd.DataFrame) -> pd.DataFrame:
    """A copy whose ``size`` is the run's m also for full-size runs (planned size None: the whole training part,
    whose m is the row's ``n_train``); ``full_size`` marks them."""
    out = rows.copy()
    full = out["size"].isna() if "size" in out else pd.Series(True, index=out.index)
    n_train = out["n_train"] if "n_train" in out else pd.Series(np.nan, index=out.index)
    out["full_size"] = full.to_numpy()
    out["size"] = [n if f else s for s, n, f in zip(out.get("size", n_train), n_train, full, strict=True)]
    return out


_MARKERS = ("o", "s", "^", "D", "v", "P")


def series_style(i: int) -> dict:
    """The i-th curve's colour, marker and line style: matplotlib's 10 colours alone repeat from the 11th curve on
    (the benchmark's scaling plots draw 13), so each round of 10 gets its own marker and line style."""
    return {"color": plt.cm.tab10.colors[i % 10], "marker": _MARKERS[(i // 10) % len(_MARKERS)],
            "linestyle": ("-", "--", ":")[(i // 10) % 3]}


def scaling_plots(rows: pd.DataFrame, out_dir: Path, size_label: str | None = None
                  ) -> tuple[list[Path], pd.DataFrame]:
    """Time against m per (dataset, method, varied value), and time against the varied size per m.

    ``size_label`` names the second size axis (e.g. "q"; default: the varied parameter). Returns the written files
    and the slope table: one line per fitted curve with the slope over all points, the slope between the two
    largest sizes (the asymptotic regime, where fixed overheads no longer dominate), the slope of the time per
    solver iteration (against m, when every run records ``n_iter``: iterative solvers whose iteration count
    changes with m), the mean time, the peak resident memory and the solver iterations at the largest size.
    """
    ok = with_actual_size(rows[rows["status"] == "ok"])
    written: list[Path] = []
    slopes: list[dict] = []
    if ok.empty:
        return written, pd.DataFrame(slopes)
    for col in ("vary_param", "vary_value", "size_value"):
        if col not in ok:
            ok[col] = None
    ok["vary_key"] = [plain(v) if v is not None and v == v else "None" for v in ok["vary_value"]]
    ok["size_value"] = [s if s is not None and s == s else v for s, v in zip(ok["size_value"], ok["vary_value"],
                                                                              strict=True)]
    series = sorted({(m, v) for m, v in zip(ok["method"], ok["vary_key"], strict=True)},
                    key=lambda mv: (mv[0], _num(mv[1])))
    style = {mv: series_style(i) for i, mv in enumerate(series)}  # one look per curve in every plot
    # the plots against the second size axis draw one curve per (method, m): each keeps its look on every dataset
    # (before 2026-11-29 a curve took the look of its position in each plot)
    varied = ok[ok["vary_param"].notna()]
    second = sorted({(m, float(n)) for m, n in zip(varied["method"], varied["size"], strict=True)})
    second_style = {mn: series_style(i) for i, mn in enumerate(second)}
    for dataset, by_ds in ok.groupby("dataset", sort=False):
        param = by_ds["vary_param"].dropna().iloc[0] if by_ds["vary_param"].notna().any() else None
        fig, ax = plt.subplots(figsize=(6, 4.5))
        for (method, value), cur in sorted(by_ds.groupby(["method", "vary_key"], sort=False),
                                           key=lambda kv: (kv[0][0], _num(kv[0][1]))):
            means = cur.groupby("size")["fit_seconds"].mean().sort_index()
            fixed = "-" if value == "None" else f"{cur['vary_param'].iloc[0]}={value}"
            if value != "None" and size_label and cur["size_value"].notna().any():
                fixed += f" ({size_label}={plain(cur['size_value'].iloc[0])})"
            curve = _curve(dataset, method, "m", fixed, means, _at_largest(cur, "size"), _per_iteration(cur, "size"))
            slopes.append(curve)
            label = method if value == "None" else f"{method} ({fixed})"
            ax.loglog(means.index, means.values, label=f"{label}: slope {curve['slope']:.2f}", **style[method, value])
        _size_ticks(ax, by_ds["size"])
        written += save_figure(fig, ax, out_dir / f"scaling_{dataset}_m", "training set size m", "fit time (s)",
                           f"{dataset}: time against m")
        written += _memory_plot(dataset, by_ds, out_dir, style)
        params = list(dict.fromkeys(by_ds["vary_param"].dropna()))
        for vparam in params:  # one plot per second axis (methods may vary different parameters)
            by_vp = by_ds[by_ds["vary_param"] == vparam]
            sizes = by_vp["vary_size"].dropna() if "vary_size" in by_vp else pd.Series(dtype=object)
            label = sizes.iloc[0] if len(sizes) else (size_label if vparam == param else None) or vparam
            fig, ax = plt.subplots(figsize=(6, 4.5))
            for (method, m), cur in sorted(by_vp.groupby(["method", "size"], sort=False)):
                means = cur.groupby("size_value")["fit_seconds"].mean().sort_index()
                curve = _curve(dataset, method, label, f"m={plain(m)}", means, _at_largest(cur, "size_value"))
                slopes.append(curve)
                ax.loglog(means.index, means.values, label=f"{method} (m={plain(m)}): slope {curve['slope']:.2f}",
                          **second_style[method, float(m)])
            _size_ticks(ax, by_vp["size_value"].dropna())
            suffix = "size" if len(params) == 1 else f"size_{vparam}"
            written += save_figure(fig, ax, out_dir / f"scaling_{dataset}_{suffix}", f"{label} (varied through {vparam})",
                               "fit time (s)", f"{dataset}: time against {label}")
    return written, pd.DataFrame(slopes)


def _memory_plot(dataset: str, by_ds: pd.DataFrame, out_dir: Path, style: dict) -> list[Path]:
    """Peak resident memory of the run process against m, one curve per (method, varied value): what each method
    needs at a size (the data and the interpreter included, so the curves start at the same floor; no slope)."""
    if "peak_rss_mb" not in by_ds or by_ds["peak_rss_mb"].isna().all():
        return []
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for (method, value), cur in sorted(by_ds.groupby(["method", "vary_key"], sort=False),
                                       key=lambda kv: (kv[0][0], _num(kv[0][1]))):
        peak = cur.groupby("size")["peak_rss_mb"].max().sort_index()
        label = method if value == "None" else f"{method} ({cur['vary_param'].iloc[0]}={value})"
        ax.loglog(peak.index, peak.values, label=label, **style[method, value])
    _size_ticks(ax, by_ds["size"])
    return save_figure(fig, ax, out_dir / f"scaling_{dataset}_memory", "training set size m",
                       "peak resident memory (MB)", f"{dataset}: peak memory against m")


def plain(value) -> str:
    """A size or parameter value as written in a config: 5.0 -> '5', 0.1 -> '0.1'."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _num(value: str) -> tuple[int, float | str]:
    try:
        return (0, float(value))
    except ValueError:
        return (1, value)


def convergence_plots(rows: pd.DataFrame, out_dir: Path) -> list[Path]:
    """For each dataset: the solver trace of every method (split 0 bold, the other splits faint), log scale."""
    ok = rows[(rows["status"] == "ok")] if "trace" in rows else rows.iloc[0:0]
    written: list[Path] = []
    for dataset, by_ds in ok.groupby("dataset", sort=False):
        fig, ax = plt.subplots(figsize=(6, 4.5))
        plotted = False
        for color, (method, cur) in zip(plt.cm.tab10.colors, by_ds.groupby("method", sort=False), strict=False):
            for _, row in cur.sort_values("split").iterrows():
                trace = row["trace"]
                if not isinstance(trace, list) or not trace:
                    continue
                field = next((f for f in TRACE_FIELDS if f in trace[0]), None)
                if field is None:
                    continue
                it = [t.get("iteration", i + 1) for i, t in enumerate(trace)]
                val = [abs(t[field]) if t[field] is not None else np.nan for t in trace]
                first = row["split"] == cur["split"].min()
                ax.semilogy(it, val, color=color, alpha=1.0 if first else 0.25, lw=1.5 if first else 0.8,
                            label=f"{method} ({field})" if first else None)
                if first and "primal" in trace[0] and "dual" in trace[0]:
                    # the certified bound: best primal minus best dual so far (paper 003 Fig. 2, "FW error bound")
                    primal = np.minimum.accumulate([t["primal"] for t in trace])
                    dual = np.maximum.accumulate([t["dual"] for t in trace])
                    bound = (primal - dual) / np.maximum(np.abs(primal), 1e-12) if field == "relative_gap" \
                        else primal - dual
                    ax.semilogy(it, np.maximum(bound, 1e-16), color=color, ls="--", lw=1.2,
                                label=f"{method} (best primal - best dual)")
                plotted = True
        if not plotted:
            plt.close(fig)
            continue
        written += save_figure(fig, ax, out_dir / f"convergence_{dataset}", "iteration", "value (log scale)",
                           f"{dataset}: convergence")
    return written


def booster_plots(rows: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Paper 003 Figure 2(b): for each dataset with a run that switched to the 2nd-stage booster (trace entries with
    ``booster``), the certified relative gap (best primal - best dual so far) of every run of that dataset that has
    a time trace, against seconds, split 0; the switch is marked. Frank-Wolfe and booster iterations differ in cost,
    so time, not iterations, is the common axis."""
    ok = rows[(rows["status"] == "ok")] if "trace" in rows else rows.iloc[0:0]
    written: list[Path] = []
    for dataset, by_ds in ok.groupby("dataset", sort=False):
        first = by_ds.sort_values("split").groupby("method", sort=False).head(1)
        traces = {r["method"]: r["trace"] for _, r in first.iterrows()
                  if isinstance(r["trace"], list) and r["trace"] and "seconds" in r["trace"][0]
                  and "primal" in r["trace"][0]}
        if not any(any(e.get("booster") for e in t) for t in traces.values()):
            continue
        fig, ax = plt.subplots(figsize=(6, 4.5))
        for color, (method, trace) in zip(plt.cm.tab10.colors, traces.items(), strict=False):
            primal = np.minimum.accumulate([e["primal"] for e in trace])
            dual = np.maximum.accumulate([e["dual"] for e in trace])
            bound = np.maximum((primal - dual) / np.maximum(np.abs(primal), 1e-12), 1e-16)
            seconds = [e["seconds"] for e in trace]
            ax.semilogy(seconds, bound, color=color, lw=1.5, label=method)
            switch = next((i for i, e in enumerate(trace) if e.get("booster")), None)
            if switch is not None:
                ax.semilogy([seconds[switch - 1]], [bound[switch - 1]], "o", color=color, label=f"{method}: switch")
        written += save_figure(fig, ax, out_dir / f"booster_{dataset}", "seconds",
                               "certified relative gap (log scale)", f"{dataset}: with and without the booster")
    return written


EVOLUTION_PANELS = ((("m", "cosines m"), ("m_gauss", "Gaussians"), ("nsv", "support vectors")),
                    (("t", "t (criterion)"), ("s", "s (best search value)")),
                    (("train_error", "training error"), ("test_error", "test error")))


def evolution_plots(rows: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Paper 004 Figures 1-3: for split 0 of each (dataset, method) whose trace has t and a training error, the
    evolution of m, nsv, t, s and the training / test errors over the iterations of Algorithm 1."""
    ok = rows[(rows["status"] == "ok")] if "trace" in rows else rows.iloc[0:0]
    written: list[Path] = []
    for (dataset, method), cur in ok.groupby(["dataset", "method"], sort=False):
        trace = cur.sort_values("split").iloc[0]["trace"]
        if not isinstance(trace, list) or not trace or not {"t", "train_error"} <= set(trace[0]):
            continue
        it = [e["iteration"] for e in trace]
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
        for ax, panel in zip(axes, EVOLUTION_PANELS, strict=True):
            for key, label in panel:
                if key in trace[0] and any(e.get(key) for e in trace):
                    scale = 100.0 if key.endswith("_error") else 1.0
                    ax.plot(it, [scale * e[key] for e in trace], marker=".", label=label)
            ax.set_xlabel("iteration")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # iterations are whole numbers
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
        axes[2].set_ylabel("error (%)")
        fig.suptitle(f"{dataset} / {method}: evolution during training (split 0)")
        fig.tight_layout()
        written += write_figure(fig, out_dir / f"evolution_{dataset}_{method}")
    return written


def _curves_1d(dataset: str, first: pd.DataFrame, out_dir: Path) -> list[Path]:
    """One-feature decision functions: f(z) of every method (split 0) on one axis, the training points on the zero
    line by class."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    families = list(dict.fromkeys(first["family"])) if "family" in first else [None]
    styles = ["-", ":", "--", "-."]
    seen: dict = {}
    for _, row in first.iterrows():  # a line style per family, a colour per method within it, in config order
        fam = row.get("family")
        k = seen[fam] = seen.get(fam, -1) + 1
        style = styles[families.index(fam) % len(styles)] if fam in families else "-"
        surf = row["surface"]
        z = np.asarray(surf["z"], float)
        z = z[:, 0] if z.ndim == 2 else z
        acc = row.get("accuracy")
        ax.plot(surf["x"], z, style, lw=1.5, color=plt.cm.tab10.colors[k % 10],
                label=row["method"] + (f" (test {acc:.1f} %, split 0)" if acc == acc else ""))
    surf = first["surface"].iloc[0]
    pts, lab = np.asarray(surf["train_x"], float)[:, 0], np.asarray(surf["train_y"])
    for value, marker in zip(np.unique(lab), ("o", "s", "^"), strict=False):
        sel = lab == value
        ax.scatter(pts[sel], np.zeros(sel.sum()), marker=marker, s=22, edgecolor="k", linewidth=0.5, zorder=3,
                   label=f"training points, class {value}")
    ax.axhline(0.0, color="grey", lw=0.8)
    return save_figure(fig, ax, out_dir / f"surface_{dataset}", "z", "f(z)",
                       f"{dataset}: decision functions f(z) (m={len(pts)})")


def surface_plots(rows: pd.DataFrame, out_dir: Path, order: list[str] | None = None) -> list[Path]:
    """Decision surfaces (paper 000 Figure 6): one figure per dataset, a panel per method (split 0), filled
    contours of the decision function, its zero level in black, the training points by class."""
    if "surface" not in rows:
        return []
    ok = rows[(rows["status"] == "ok") & rows["surface"].apply(lambda v: isinstance(v, dict))]
    written: list[Path] = []
    for dataset, by_ds in ok.groupby("dataset", sort=False):
        first = by_ds.sort_values("split").groupby("method", sort=False).head(1)
        if order:  # the config's method order
            first = first.sort_values("method", key=lambda s: s.map({m: i for i, m in enumerate(order)}),
                                      kind="stable")
        if "y" not in first["surface"].iloc[0]:  # one feature: every method's f(z) on one axis (paper 000 Fig. 1(a))
            written += _curves_1d(dataset, first, out_dir)
            continue
        fig, axes = plt.subplots(1, len(first), figsize=(4.2 * len(first), 4), squeeze=False)
        for ax, (_, row) in zip(axes[0], first.iterrows(), strict=True):
            surf = row["surface"]
            z = np.asarray(surf["z"], float)
            if z.ndim == 3:  # one-vs-rest: the first class's score
                z = z[..., 0]
            lim = float(np.nanmax(np.abs(z))) or 1.0
            ax.contourf(surf["x"], surf["y"], z, levels=21, cmap="RdBu", vmin=-lim, vmax=lim)
            ax.contour(surf["x"], surf["y"], z, levels=[0.0], colors="k", linewidths=1.2)
            pts, lab = np.asarray(surf["train_x"], float), np.asarray(surf["train_y"])
            for value, marker in zip(np.unique(lab), ("o", "s", "^"), strict=False):
                sel = lab == value
                ax.scatter(pts[sel, 0], pts[sel, 1], marker=marker, s=14, edgecolor="k", linewidth=0.5,
                           label=f"class {value}")
            acc = row.get("accuracy")
            ax.set_title(f"{row['method']} (m={len(pts)})" + (f", test {acc:.1f} %" if acc == acc else ""),
                         fontsize=9)
            ax.set_xticks([])
            ax.set_yticks([])
        fig.suptitle(f"{dataset}: decision surfaces")
        written += write_figure(fig, out_dir / f"surface_{dataset}")
    return written
