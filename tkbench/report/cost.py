"""The cost table of the reproductions (docs/COST.md, written by ``tkbench report --all``; issue 50).

For every entry of docs/reproduction.yaml with committed rows: the runs finished and the hours they took (each row's
CV and final fit over every session it ran in, :func:`tkbench.bench.cost.run_parts`: wall clock with the threads
each row names, a run resumed from its saved state with its earlier sessions' time, a CV shared by a cell's splits
once; summed as if run one after another; until 2026-12-03 the finishing session's wall clock alone, which left
out 43 of paper 002's Table 1's hours), and, for the accuracy tables, the estimated hours of the paper's full
protocol: every (dataset, method) cell at the paper's number of draws: the draws run as they cost, each missing
draw at the median of the cell's committed rows' own seconds (the shared CV once); a row that records its CPU time
counts there at the smaller of its wall clock and its CPU time, as the dry run prices it
(:func:`tkbench.bench.cost.quiet_factor`: a run slowed by other sweeps says so).
The paper's draws are the entry's ``paper_splits`` in docs/reproduction.yaml, else the config's
``protocol.splits`` (the configs set it to the paper's and cut expensive methods with their own ``splits``). A
cell with no finished row has no estimate, and the table says how many. The reductions are the config's notes that
name one ("Reduction ..."). Nothing is re-run: the estimate carries the speed of the code and machine the rows were
made with (their dates are in the rows), so it is a plan, not a promise. A cell counts at most the paper's draws:
the first ones by split (where a config ran more draws than the paper, the rest are not the paper's protocol).

*Today's defaults* (issue 50: the full protocol's hours before and after the issue): the same estimate with each
row's time divided by the measured factor of every speedup of docs/reproduction.yaml's ``speedups:`` that applies
to it (:class:`tkbench.bench.speedups.Speedup`: a family's faster default or a faster path of the same algorithm,
the rows it applies to named by family, parameter values, training size and the time the change landed; the factor
is a ratio measured in one run, its conservative end, and its source is printed under the table). A speedup divides
the row's whole time or, with ``part: fit``, its final fit only (where its CV's fits are too small for the
change, or it is not measured there), or with ``part: cv`` its CV only (a faster way through the grid); several
apply one after the other. The factors are measured ratios applied to rows, not re-runs.
"""
from __future__ import annotations

import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from tkbench.bench.cost import quiet_factor, run_parts, today_seconds
from tkbench.bench.speedups import Speedup, load_speedups
from tkbench.bench.store import ResultStore

REDUCTION = re.compile(r"\bReduction\s+(\d+[a-z]?|[A-Z])\s*\(([^)]*)\)")  # a note naming one: "Reduction 2 (subsets, cost)"
REASONS = ("cost", "data", "memory", "licence")  # why a reduction was made, as its parenthesis says


def _fmt_hours(seconds: float) -> str:
    hours = seconds / 3600.0
    return f"{hours:.2f}" if hours < 10 else f"{hours:.0f}"


def _reductions(notes) -> list[tuple[str, str]]:
    """(label, why) of every reduction the notes name ("Reduction 3 (subsets, cost): ..."), by label; ``why`` the
    reasons its parenthesis gives (cost, data, memory, licence), "" when it gives none."""
    found: dict[str, str] = {}
    for note in notes:
        for m in REDUCTION.finditer(str(note)):
            words = re.split(r"[\s,;]+", m.group(2).lower())
            found.setdefault(m.group(1), ", ".join(r for r in REASONS if r in words))
    order = sorted(found, key=lambda s: (0, int(re.match(r"\d+", s).group()), s) if s[0].isdigit() else (1, 0, s))
    return [(label, found[label]) for label in order]


def _structural(exp, draws: int) -> list[str]:
    """The reductions a config declares in its methods' settings (printed under its tables by
    :func:`tkbench.report.build.method_notes`): training subsets (max_train), CV subsets (cv_max_train), one CV
    for a cell's splits (a method's own tune_on_first) and fewer draws than ``draws`` (the paper's; a method's
    splits), each with its methods."""
    from tkbench.kinds import get_kind
    from tkbench.report.build import cut_splits, own_tunings

    p = exp.protocol
    limit = min(draws, p.splits)
    kinds = {"training subset": [m.name for m in exp.methods if m.max_train is not None],
             "CV on a subset": [m.name for m in exp.methods if m.cv_max_train is not None],
             "one CV per cell": [m.name for m in exp.methods if own_tunings(m, p)],
             "fewer draws": [m.name for m in exp.methods if get_kind(exp.kind).split_limits and cut_splits(m, limit)]}
    return [f"{what}: {', '.join(names)}" for what, names in kinds.items() if names]


def _reductions_text(reductions: list[tuple[str, str]]) -> str:
    """"1, 3 (cost); 4 (data)": the labels grouped by their reasons, in label order."""
    groups: dict[str, list[str]] = {}
    for label, why in reductions:
        groups.setdefault(why, []).append(label)
    return "; ".join(", ".join(labels) + (f" ({why})" if why else "") for why, labels in groups.items())


def entry_cost(root: Path, config: str, paper_splits: int | None,
               speedups: tuple[Speedup, ...] = ()) -> dict[str, Any] | None:
    """The cost facts of one entry (None when it has no rows); ``today_seconds`` applies ``speedups``."""
    from tkbench.bench.plan import make_plan
    from tkbench.config.load import load_config
    from tkbench.kinds import get_kind

    folder = root / "results" / config
    if not (folder / "rows").is_dir():
        return None
    exp = load_config(root / "configs" / f"{config}.yaml", check_reference=False)
    plan = make_plan(exp)
    keys = {s.key for s in plan}
    # the plan's rows only: a folder may keep rows of runs its config no longer plans (an older grid or protocol)
    ok = [r for r in ResultStore(folder).rows() if isinstance(r, dict) and r.get("key") in keys
          and r.get("status") == "ok" and isinstance(r.get("total_seconds"), int | float)]
    if not ok:
        return None
    by_cell: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in ok:
        by_cell[(str(r.get("dataset")), str(r.get("method")))].append(r)

    def cell_seconds(rows: list[dict[str, Any]], adjust=None) -> tuple[list[float], float]:
        """Each row's own seconds and the cell's shared CV (once: every row names it), over every session the runs
        took (:func:`tkbench.bench.cost.run_parts`), each passed through ``adjust(row, seconds, shared)``."""
        adjust = adjust or (lambda r, seconds, shared: seconds)
        parts = [run_parts(r) for r in rows]
        own = [adjust(r, o, False) for r, (o, _) in zip(rows, parts, strict=True)]
        shared = max((adjust(r, c, True) for r, (_, c) in zip(rows, parts, strict=True)), default=0.0)
        return own, shared

    out: dict[str, Any] = {"config": config, "runs": len(ok), "planned": len(plan),
                           "seconds": sum(sum(o) + c for o, c in map(cell_seconds, by_cell.values())),
                           "kind": exp.kind, "reductions": _reductions(exp.notes or []),
                           "structural": _structural(exp, int(paper_splits or exp.protocol.splits))}
    if not get_kind(exp.kind).headline:  # a figure's sweep (scaling, density, ...): its cost is as run
        return out
    draws = int(paper_splits or exp.protocol.splits)
    cells = {(s.label, s.method) for s in plan}
    known = [c for c in cells if c in by_cell]
    out["paper_draws"] = draws
    out["full_runs"] = draws * len(cells)
    used: dict[str, int] = defaultdict(int)

    def full(adjust=None) -> float:
        """The paper's draws of every cell with rows: the first ``draws`` by split, each at its seconds through
        ``adjust`` (as it took), each missing one at the median quiet price (the same share of its adjusted
        seconds); a shared CV once."""
        total = 0.0
        for c in known:
            rows = sorted(by_cell[c], key=lambda r: int(r.get("split") or 0))
            own, shared = cell_seconds(rows, adjust)  # the shared CV: every row of the cell names it
            rows, own = rows[:draws], own[:draws]
            total += sum(own) + shared
            total += max(0, draws - len(rows)) * statistics.median(
                o * quiet_factor(r) for o, r in zip(own, rows, strict=True))
        return total

    out["full_seconds"] = full()
    out["today_seconds"] = full(lambda row, seconds, shared: today_seconds(row, seconds, shared, speedups))
    for r in ok:
        for sp in speedups:
            if sp.applies(r):
                used[sp.name] += 1
    out["speedups_used"] = dict(used)
    out["cells_without_rows"] = len(cells) - len(known)
    return out


def cost_markdown(root: str | Path, entries, speedups: tuple[Speedup, ...] | None = None) -> str:
    """docs/COST.md: one line per reproduction entry with rows (``entries``: docs/reproduction.yaml's, each with
    ``config`` and ``paper_splits``), and the speedups behind its *today's defaults* column (``speedups``: those of
    the root's docs/reproduction.yaml unless given)."""
    root = Path(root)
    speedups = load_speedups(root) if speedups is None else speedups
    lines = ["# What the reproductions cost", "",
             "Regenerated by `tkbench report --all` from the committed rows (`tkbench/report/cost.py` says how). "
             "*Hours run*: the finished rows' CV and final-fit time over every session a run took, one run after another (wall clock with the "
             "threads each row names; divide by the workers of a parallel sweep). *At the paper's draws*: every "
             "(dataset, method) cell of an accuracy table's config (the checks it runs beside the paper's methods included) at the paper's number of draws: the first draws that ran, as they "
             "cost, each missing draw at the median of the cell's committed rows (a row that records its CPU time at the "
             "smaller of its wall clock and its CPU time, as the dry run prices it): the speed of the code the rows "
             "were made with, on this 2-core machine; most rows predate issue 50 (filed 2026-11-28), so this is the "
             "protocol's cost before it. *Today's defaults*: the same with each row's time divided by the measured "
             "factor of every speedup below that applies to it (a faster default or a faster path of the same "
             "algorithm since the row ran): the cost after issue 50, as far as measured. "
             "Reductions: the config's notes that name one (\"Reduction 2 (subsets, cost)\"), then those its methods' "
             "settings declare (training or CV subsets, one CV for a cell's splits, fewer draws); the report prints them "
             "all, and why, under its tables. What the remaining reductions would cost is in [protocol.md](protocol.md#cost).", "",
             "| Config | runs | hours run | paper's draws | every cell at the paper's draws: runs | est. hours, the rows' code "
             "| est. hours, today's defaults | reductions (why) |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    total_run = total_full = total_today = 0.0
    used: dict[str, dict[str, int]] = defaultdict(dict)
    for entry in entries:
        facts = entry_cost(root, entry.config, entry.paper_splits, speedups)
        if facts is None:
            continue
        total_run += facts["seconds"]
        runs = f"{facts['runs']}" + (f" of {facts['planned']}" if facts["planned"] != facts["runs"] else "")
        if "full_seconds" in facts:
            total_full += facts["full_seconds"]
            total_today += facts["today_seconds"]
            est, today = _fmt_hours(facts["full_seconds"]), _fmt_hours(facts["today_seconds"])
            if facts["cells_without_rows"]:
                est += f" ({facts['cells_without_rows']} cells without rows)"
            if facts["speedups_used"]:
                today += " (" + "; ".join(sorted(facts["speedups_used"])) + ")"
                for name, n in facts["speedups_used"].items():
                    used[name][entry.config] = n
            elif facts["today_seconds"] == facts["full_seconds"]:
                today = "same"
            full = [str(facts["paper_draws"]), str(facts["full_runs"]), est, today]
        else:
            full = ["", "", f"as run ({facts['kind']})", ""]
        reductions = "; ".join(x for x in [_reductions_text(facts["reductions"]), *facts["structural"]] if x) \
            or "none"
        lines.append(f"| `{entry.config}` | {runs} | {_fmt_hours(facts['seconds'])} | " + " | ".join(full)
                     + f" | {reductions} |")
    lines += ["", f"In all: {_fmt_hours(total_run)} hours run; the accuracy tables' full protocols about "
              f"{_fmt_hours(total_full)} hours at the committed rows' speed and {_fmt_hours(total_today)} with "
              "today's defaults.", ""]
    if speedups:
        lines += ["## Today's defaults: the speedups applied", "",
                  "From docs/reproduction.yaml's `speedups:`. A speedup applies to a row of its family with those "
                  "parameter values and at least that many training rows and features, started before the change "
                  "landed.", "",
                  "| speedup | rows it applies to | factor | rows | measured |", "|---|---|---:|---|---|"]
        for sp in speedups:
            params = ", ".join(f"{k} " + " or ".join("unset (its old default)" if x is None else str(x) for x in v)
                               for k, v in sp.params.items())
            scope = f"`{sp.family}`" + (f", {params}" if params else "") + (
                f", m >= {sp.min_train}" if sp.min_train else "") + (
                f", d >= {sp.min_features}" if sp.min_features else "") + f", started before {sp.before}"
            where = ", ".join(f"`{c}` {n}" for c, n in sorted(used.get(sp.name, {}).items())) or "none"
            lines.append(f"| {sp.name} | {scope} | {sp.factor:g}" + {"fit": " (final fit)", "cv": " (CV)"}.get(sp.part, "")
                         + f" | {where} | {sp.measured} |")
        lines.append("")
    return "\n".join(lines)
