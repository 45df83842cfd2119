"""Rows -> per (dataset, method) summaries: mean ± std of the metric and times over splits, status counts.

Only rows whose key belongs to the folder's current plan are used (rows left by an earlier version of the config
are counted as ``stale`` and ignored). Means and standard deviations are over the ``ok`` runs; the standard
deviation is the sample one (ddof=1), undefined (NaN) for a single run: a cell from one draw shows n = 1, no std. Failed, timed-out and crashed runs are counted,
never silently dropped.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tkbench.bench.plan import make_plan
from tkbench.bench.runner import load_saved_experiment
from tkbench.bench.store import ResultStore
from tkbench.config import Experiment
from tkbench.errors import InputError

STATUSES = ("ok", "failed", "timeout", "crashed")
HIGHER_IS_BETTER = {"accuracy": True, "balanced_accuracy": True, "mse": False, "mae": False, "r2": True,
                    "rmse_pm1": False, "ls_error": False}
EXTRA_METRICS = ("rmse_pm1", "train_accuracy")  # reported in tables of their own when the rows have them


@dataclass
class Results:
    root: Path
    experiment: Experiment
    rows: pd.DataFrame
    planned: pd.DataFrame
    stale: int
    damaged: list = None  # (file, what is wrong) of unreadable row files, named in the report's notes


def load_results(results_dir: str | Path, config: str | Path | None = None) -> Results:
    """The rows of a results folder, read against the config saved there by `tkbench run`, or against ``config``
    (e.g. ``configs/<name>.yaml`` edited since the last run: its plan and notes are then the ones reported)."""
    root = Path(results_dir)
    store = ResultStore(root)
    if not store.config_path.exists():
        raise InputError(f"{root}: not a results folder (no config.yaml; was it written by `tkbench run`?)")
    if config is not None:
        from tkbench.config import load_config

        exp = load_config(config)
    else:
        exp = load_saved_experiment(root)
    plan = make_plan(exp)
    planned = pd.DataFrame([{"key": s.key, "dataset": s.label, "method": s.method, "split": s.split,
                             "size": s.size, "vary_value": (s.vary or {}).get("value"), "task": s.task}
                            for s in plan])
    keys = set(planned["key"]) if len(planned) else set()
    raw, damaged = store.read_all()  # one pass: the rows and the files that are not rows
    rows = pd.DataFrame([r for r in raw if r["key"] in keys])
    if len(rows):  # a row is reported under its plan's labels: a label renamed since the run (an alias added, say)
        # does not change the run key, and the stored row still carries the old one (paper 004's twonorm rows of
        # Breiman's generator said "twonorm" after that name went to the Raetsch array's rows)
        by_key = planned.set_index("key")
        rows["dataset"] = rows["key"].map(by_key["dataset"])
        rows["method"] = rows["key"].map(by_key["method"])
    return Results(root, exp, rows, planned, stale=sum(r["key"] not in keys for r in raw), damaged=damaged)


def mean_std(values: pd.Series) -> tuple[float, float]:
    v = values.dropna().to_numpy(dtype=float)
    if len(v) == 0:
        return float("nan"), float("nan")
    return float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else float("nan")


def summarize(res: Results) -> pd.DataFrame:
    """One line per (dataset, method) in config order."""
    exp = res.experiment
    out: list[dict[str, Any]] = []
    extras = [c for c in EXTRA_METRICS if c in res.rows and res.rows[c].notna().any()]
    from tkbench.bench.plan import empty_cells

    empty = {(label, method) for label, method, _ in empty_cells(exp)}  # not the method's task: no line
    for ds in exp.datasets:
        for m in exp.methods:
            if not m.runs_on(ds.label) or (ds.label, m.name) in empty:
                continue
            planned = res.planned[(res.planned["dataset"] == ds.label) & (res.planned["method"] == m.name)]
            if res.rows.empty:
                cell = res.rows
            else:
                cell = res.rows[(res.rows["dataset"] == ds.label) & (res.rows["method"] == m.name)]
            ok = cell[cell["status"] == "ok"] if not cell.empty else cell
            task = planned["task"].iloc[0] if len(planned) else None
            metric = ("accuracy" if task == "classification" else "mse") if exp.metric == "default" else exp.metric
            line: dict[str, Any] = {"dataset": ds.label, "method": m.name, "task": task, "metric": metric,
                                    "planned": len(planned), "n_ok": len(ok)}
            for status in STATUSES[1:]:
                line[f"n_{status}"] = int((cell["status"] == status).sum()) if not cell.empty else 0
            line["n_missing"] = len(planned) - len(cell)
            for col in (metric, "fit_seconds", "cv_seconds", "predict_seconds", *extras):
                mean, std = mean_std(ok[col]) if col in ok else (float("nan"), float("nan"))
                name = "metric" if col == metric else col.removesuffix("_seconds")
                line[f"{name}_mean"], line[f"{name}_std"] = mean, std
            line["errors"] = sorted(set(cell.loc[cell["status"] != "ok", "error"].dropna())) if not cell.empty else []
            out.append(line)
    table = pd.DataFrame(out)
    table["best"] = False
    for _, group in table.groupby("dataset", sort=False):
        valid = group.dropna(subset=["metric_mean"])
        if valid.empty:
            continue
        higher = HIGHER_IS_BETTER[valid["metric"].iloc[0]]
        best = valid["metric_mean"].max() if higher else valid["metric_mean"].min()
        table.loc[valid.index[valid["metric_mean"] == best], "best"] = True
    return table


def flat_rows(res: Results) -> pd.DataFrame:
    """The rows with nested fields (spec, provenance, cv, trace, surface) dropped or flattened, for CSV/parquet export."""
    if res.rows.empty:
        return res.rows
    keep = [c for c in res.rows.columns if c not in ("spec", "provenance", "cv", "trace", "traceback", "surface")]
    flat = res.rows[keep].copy()
    for col in ("chosen_params", "params", "diagnostics"):
        if col in flat:
            flat[col] = flat[col].map(lambda d: "" if not isinstance(d, dict) else
                                      ";".join(f"{k}={v}" for k, v in sorted(d.items())))
    return flat
