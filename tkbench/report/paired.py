"""Paired comparisons on shared splits (a config's ``compare`` section): does a method beat a reference group?

For each comparison and dataset, the reference is the member of ``against`` with the best mean metric on that
dataset (e.g. the better of the L1- and L2-learned linear combinations, paper 001's baselines). Each method of
``methods`` is then paired with it split by split (only splits where both runs are ok):

- wins / ties / losses: splits where the method is better / equal / worse (accuracy higher, MSE or RMSE lower);
- the mean and the median paired difference (method - reference, in the metric's own units);
- the Wilcoxon signed-rank test of the paired differences (SciPy, two-sided; ``zsplit`` spreads zero
  differences over both signs, so ties count against a difference). The splits of repeated random subsampling
  overlap, so these p-values are optimistic (Nadeau & Bengio 2003); read them as a ranking of evidence.

The verdict's direction comes from the statistic that was tested: Wilcoxon's rank sums W+ (splits where the
method is better) against W- (worse), never from the mean, which a few outlying splits can turn the other way
(Abalone: 22 of 30 splits won, W+ 364 against W- 101, and a mean that says "worse").
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tkbench.report.statistics import noise_tolerance, signed_rank_sums, wilcoxon_p
from tkbench.report.tables import Cell, TableModel

LOWER_IS_BETTER = {"mse", "rmse_pm1", "ls_error"}
LEVEL = 0.05


def _per_split(ok: pd.DataFrame, dataset: str, method: str, metric: str) -> pd.Series:
    cur = ok[(ok["dataset"] == dataset) & (ok["method"] == method)]
    if metric not in cur:
        return pd.Series(dtype=float)
    return cur.set_index("split")[metric].dropna().astype(float)


def paired_stats(ours: pd.Series, ref: pd.Series, metric: str) -> dict | None:
    """Wins / ties / losses, mean and median difference, Wilcoxon's rank sums and p on the splits both series have
    (None: no split). ``better`` > 0 when the rank sums favour ``ours`` (the tested direction); differences below
    the noise tolerance (:func:`tkbench.report.statistics.noise_tolerance`) are ties."""
    common = ours.index.intersection(ref.index)
    if len(common) == 0:
        return None
    a, b = ours[common].to_numpy(dtype=float), ref[common].to_numpy(dtype=float)
    diff = a - b
    better = -diff if metric in LOWER_IS_BETTER else diff  # > 0: ours is better
    tol = noise_tolerance(a, b)
    pos, neg = signed_rank_sums(better, tol)
    return {"n": len(common), "wins": int(np.sum(better > tol)), "ties": int(np.sum(np.abs(better) <= tol)),
            "losses": int(np.sum(better < -tol)), "mean_diff": float(np.mean(diff)),
            "median_diff": float(np.median(diff)), "p": wilcoxon_p(better, tol), "rank_sum_better": pos,
            "rank_sum_worse": neg, "better": float(np.sign(pos - neg))}


def _verdict(stats: dict) -> str:
    if math.isnan(stats["p"]):
        return "undefined: identical on every split"
    if stats["p"] >= LEVEL or stats["better"] == 0:
        return "no significant difference"
    return "better" if stats["better"] > 0 else "worse"


def paired_tables(res, summary: pd.DataFrame) -> list[TableModel]:
    exp = res.experiment
    if not exp.compare or res.rows.empty:
        return []
    ok = res.rows[res.rows["status"] == "ok"]
    tables = []
    for comp in exp.compare:
        has_rmse = "rmse_pm1" in ok and ok["rmse_pm1"].notna().any()
        cols = ["Dataset", "Method", "Reference (best of group)", "Splits", "W / T / L", "Mean Δ", "Median Δ",
                "Rank sums W+ / W−", "Wilcoxon p", "Verdict"]
        if has_rmse:
            cols += ["RMSE W / T / L", "RMSE mean Δ", "RMSE p"]
        rows, tally = [], {m: {"better": 0, "worse": 0, "none": 0} for m in comp.methods}
        for ds in exp.datasets:
            part = summary[(summary["dataset"] == ds.label) & summary["method"].isin(comp.against)].dropna(
                subset=["metric_mean"])
            if part.empty:
                continue
            metric = part["metric"].iloc[0]
            best = part["metric_mean"].idxmin() if metric in LOWER_IS_BETTER else part["metric_mean"].idxmax()
            ref_name = str(part.loc[best, "method"])
            ref = _per_split(ok, ds.label, ref_name, metric)
            for method in comp.methods:
                stats = paired_stats(_per_split(ok, ds.label, method, metric), ref, metric)
                if stats is None:
                    continue
                verdict = _verdict(stats)
                tally[method][verdict if verdict in ("better", "worse") else "none"] += 1
                row = [Cell(ds.label), Cell(method), Cell(ref_name), Cell(str(stats["n"])),
                       Cell(f"{stats['wins']} / {stats['ties']} / {stats['losses']}"),
                       Cell(f"{stats['mean_diff']:+.3g} ({metric})"), Cell(f"{stats['median_diff']:+.3g}"),
                       Cell(f"{stats['rank_sum_better']:g} / {stats['rank_sum_worse']:g}"), Cell(_p(stats["p"])),
                       Cell(verdict, bold=verdict == "better")]
                if has_rmse:
                    rm = paired_stats(_per_split(ok, ds.label, method, "rmse_pm1"),
                                      _per_split(ok, ds.label, ref_name, "rmse_pm1"), "rmse_pm1")
                    row += ([Cell(f"{rm['wins']} / {rm['ties']} / {rm['losses']}"), Cell(f"{rm['mean_diff']:+.3g}"),
                             Cell(_p(rm["p"]))] if rm else [Cell("-")] * 3)
                rows.append(row)
        notes = [f"Per dataset, the reference is the best mean of {', '.join(comp.against)}; W / T / L = splits "
                 "where the method is better / equal / worse than it (accuracy higher; MSE, RMSE lower); mean and "
                 "median Δ = method − reference; W+ / W− = Wilcoxon's rank sums of the splits where the method is "
                 f"better / worse. Verdict at the {LEVEL:g} level of the two-sided Wilcoxon signed-rank test, its "
                 "direction from the rank sums that test compares (not from the mean, which outlying splits can "
                 "turn); zero differences split; overlapping random splits make p optimistic.",
                 "Across datasets: " + "; ".join(f"{m} better on {t['better']}, worse on {t['worse']}, no "
                                                 f"significant difference on {t['none']}" for m, t in tally.items())
                 + "."]
        tables.append(TableModel(f"Paired comparison: {', '.join(comp.methods)} against the best of "
                                 f"{', '.join(comp.against)}", cols, rows, notes))
    return tables


def _p(p: float) -> str:
    return "undefined" if p is None or math.isnan(p) else (f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}")
