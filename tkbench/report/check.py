"""``tkbench baseline`` / ``tkbench check``: a CI gate on mean metrics, asv-style.

A baseline file stores, per (dataset, method), the mean metric, the number of ok runs, and its tolerance:
an absolute one for accuracy (percentage points) and a relative one for MSE. ``check`` fails (exit 1) when
a mean falls below ``mean - abs`` (accuracy) or rises above ``mean * (1 + rel)`` (MSE), when a cell has fewer
ok runs than the baseline, or when a baseline cell is missing from the results.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from tkbench.errors import InputError
from tkbench.report.aggregate import HIGHER_IS_BETTER, load_results, summarize
from tkbench.terminal import keep_whole

FORMAT = 1


def write_baseline(results_dir: str | Path, output: str | Path, *, accuracy_tol: float = 1.0,
                   mse_rtol: float = 0.05) -> Path:
    from tkbench.bench.store import check_file_path

    check_file_path(Path(output), "the baseline")
    res = load_results(results_dir)
    summary = summarize(res)
    entries = []
    for _, line in summary.iterrows():
        if line["n_ok"] == 0:
            continue
        metric = line["metric"]
        tol = {"abs": accuracy_tol} if HIGHER_IS_BETTER[metric] else {"rel": mse_rtol}
        entries.append({"dataset": line["dataset"], "method": line["method"], "metric": metric,
                        "mean": float(line["metric_mean"]),
                        "std": None if math.isnan(line["metric_std"]) else float(line["metric_std"]),
                        "n_ok": int(line["n_ok"]), "tolerance": tol})
    if not entries:
        raise InputError(f"{results_dir}: no ok run to take a baseline from ({len(res.rows)} row(s), none ok): a "
                         "baseline without entries would pass every check. Run the config first (`tkbench run`)")
    data = {"format": FORMAT, "experiment": res.experiment.name, "created": datetime.now(UTC).isoformat(),
            "note": "tolerances: abs = allowed drop in accuracy points; rel = allowed relative rise of MSE",
            "entries": entries}
    path = Path(output)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot write the baseline there ({exc.strerror or exc})") from None
    return path


@dataclass
class CheckResult:
    lines: list[dict[str, Any]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(line["verdict"] in ("ok", "improved") for line in self.lines)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _entry_problem(entry: Any) -> str:
    """What is wrong with one baseline entry ("" when nothing)."""
    if not isinstance(entry, dict):
        return f"expected an object, found {type(entry).__name__}"
    for name in ("dataset", "method"):
        if not isinstance(entry.get(name), str):
            return f"{name}: {entry.get(name)!r}: expected text"
    if entry.get("metric") not in HIGHER_IS_BETTER:
        return f"metric: {entry.get('metric')!r}: expected one of {', '.join(HIGHER_IS_BETTER)}"
    if not _number(entry.get("mean")):
        return f"mean: {entry.get('mean')!r}: expected a finite number"
    if not isinstance(entry.get("n_ok"), int) or isinstance(entry.get("n_ok"), bool) or entry["n_ok"] < 1:
        return f"n_ok: {entry.get('n_ok')!r}: expected a whole number >= 1"
    tol = entry.get("tolerance")
    if not isinstance(tol, dict) or not tol or set(tol) - {"abs", "rel"} \
            or not all(_number(v) and v >= 0 for v in tol.values()):
        return f"tolerance: {tol!r}: expected {{abs: number >= 0}} and/or {{rel: number >= 0}}"
    return ""


def _load_baseline(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: baseline file not found (write one with `tkbench baseline`)") from None
    except IsADirectoryError:
        raise InputError(f"{path}: a folder, not a baseline file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte at offset {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), list):
        raise InputError(f"{path}: not a tkbench baseline (expected format {FORMAT} with 'entries')")
    if not data["entries"]:
        raise InputError(f"{path}: entries: []: expected at least one entry (an empty baseline passes every check)")
    for i, entry in enumerate(data["entries"]):
        problem = _entry_problem(entry)
        if problem:
            raise InputError(f"{path}: entries[{i}].{problem}")
    return data


def check_results(results_dir: str | Path, baseline: str | Path) -> CheckResult:
    data = _load_baseline(Path(baseline))
    summary = summarize(load_results(results_dir)).set_index(["dataset", "method"])
    result = CheckResult()
    for entry in data["entries"]:
        cell = (entry["dataset"], entry["method"])
        line = {**entry, "ours": math.nan, "ours_n_ok": 0, "limit": math.nan}
        tol = entry["tolerance"]
        higher = HIGHER_IS_BETTER[entry["metric"]]
        limit = entry["mean"] - tol.get("abs", 0.0) if higher else entry["mean"] * (1 + tol.get("rel", 0.0)) \
            + tol.get("abs", 0.0)
        line["limit"] = limit
        if cell not in summary.index:
            line["verdict"], line["why"] = "missing", "no such dataset/method in the results"
        else:
            s = summary.loc[cell]
            line["ours"], line["ours_n_ok"] = float(s["metric_mean"]), int(s["n_ok"])
            if s["n_ok"] < entry["n_ok"]:
                line["verdict"] = "regression"
                line["why"] = f"only {int(s['n_ok'])} ok runs (baseline {entry['n_ok']})"
            elif (line["ours"] < limit) if higher else (line["ours"] > limit):
                line["verdict"], line["why"] = "regression", "beyond tolerance"
            elif (line["ours"] > entry["mean"] + tol.get("abs", 0)) if higher else \
                    (line["ours"] < entry["mean"] * (1 - tol.get("rel", 0))):
                line["verdict"], line["why"] = "improved", "better than the baseline: consider updating it"
            else:
                line["verdict"], line["why"] = "ok", ""
        result.lines.append(line)
    return result


def render_check(result: CheckResult, console: Console) -> None:
    table = Table(title="tkbench check")
    for col in ("dataset", "method", "metric", "baseline", "limit", "ours", "runs", "verdict"):
        table.add_column(col)
    colors = {"ok": "green", "improved": "cyan", "regression": "red", "missing": "red"}
    for line in result.lines:
        table.add_row(line["dataset"], line["method"], line["metric"], f"{line['mean']:.4g}",
                      f"{line['limit']:.4g}", f"{line['ours']:.4g}", f"{line['ours_n_ok']}/{line['n_ok']}",
                      f"[{colors[line['verdict']]}]{line['verdict']}[/] {line['why']}")
    console.print(keep_whole(table, "dataset", "method"))
    bad = sum(line["verdict"] in ("regression", "missing") for line in result.lines)
    console.print(f"[red]FAILED: {bad} regression(s)[/]" if bad else "[green]passed[/]")
