"""Automatic sanity notes under a report's tables, computed from the rows.

- CV at the grid's edge: a parameter chosen at the smallest or largest grid value in at least half of a cell's
  runs suggests that the optimum lies outside the grid (paper tables rarely print their grids, so the reader
  needs to know where ours binds).
- A solver's own grid at its edge: a diagnostic ``<name>`` (a value, or one per learned kernel) reported beside
  ``<name>_grid`` (a grid searched inside the fit, such as a lambda grid) at the grid's smallest or largest value in at least half of a
  cell's runs; such grids sit inside the solver, where the CV notes cannot see them.
- Convergence of the final fits: iterative solvers report whether they reached their
  duality-gap tolerance; a fit that stopped early is counted per cell, never hidden in a mean. (SDP solutions
  have their own certificate note in :mod:`tkbench.report.build`.)
- The load the times were measured under: a row's CPU time against its wall clock and threads (rows that record
  ``cpu_seconds``), so that a reader knows whether the times are a quiet machine's or a busy one's.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import pandas as pd

from tkbench.methods._shared.report import read_report
from tkbench.report.plots import plain


def _ok_cells(res) -> list[tuple[str, str, pd.DataFrame]]:
    """(dataset, method, ok rows) in config order."""
    if res.rows.empty or "status" not in res.rows:
        return []
    ok = res.rows[res.rows["status"] == "ok"]
    cells = {key: cell for key, cell in ok.groupby(["dataset", "method"], sort=False)}  # one pass, not one per cell
    return [(ds.label, m.name, cells[ds.label, m.name]) for ds in res.experiment.datasets
            for m in res.experiment.methods if (ds.label, m.name) in cells]


def _grid_ends(values: list[Any], grid: Any) -> list[tuple[str, float]]:
    """The ends ("smallest" / "largest", value) of a numeric grid of at least 3 values that one of ``values`` hit;
    [] for any other grid."""
    if not isinstance(grid, list | tuple) or len(grid) < 3:
        return []
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in grid):
        return []
    ends = (("smallest", min(grid)), ("largest", max(grid)))
    return [(end, edge) for end, edge in ends if any(isinstance(v, int | float) and v == edge for v in values)]


def _edge_counts(chosen_and_grids) -> dict[tuple[str, str, float], int]:
    """Per (name, end, edge value): how many of the cell's runs chose that end; ``chosen_and_grids`` yields, per
    run, (name, values chosen, grid) triples."""
    counts: dict[tuple[str, str, float], int] = defaultdict(int)
    for triples in chosen_and_grids:
        for name, values, grid in triples:
            for end, edge in _grid_ends(values, grid):
                counts[(name, end, edge)] += 1
    return counts


def grid_edge_notes(res, threshold: float = 0.5) -> list[str]:
    """One note per (dataset, method, parameter) whose CV choice sat at an end of its (numeric, >= 3 values) grid
    in at least ``threshold`` of the cell's runs."""
    notes = []
    for ds, method, cell in _ok_cells(res):
        if "chosen_params" not in cell or "spec" not in cell:
            continue
        runs = ([(name, [chosen[name]], grid) for name, grid in ((spec or {}).get("grid") or {}).items()
                 if isinstance(chosen, dict) and name in chosen]
                for spec, chosen in zip(cell["spec"], cell["chosen_params"], strict=True))
        for (name, end, edge), n in _edge_counts(runs).items():
            if n >= threshold * len(cell):
                notes.append(f"CV chose the grid's {end} {name} ({plain(edge)}) in {n} of {len(cell)} runs of "
                             f"{method} on {ds}: the optimum may lie beyond the grid.")
    return notes


def _reported_grids(diag: dict[str, Any]):
    """(name, values, grid) for every diagnostic ``<name>`` reported beside a ``<name>_grid`` (values: the
    diagnostic as a list, one per learned kernel)."""
    for key, grid in diag.items():
        name = key.removesuffix("_grid")
        if key.endswith("_grid") and name in diag:
            yield name, diag[name] if isinstance(diag[name], list) else [diag[name]], grid


def solver_grid_notes(res, threshold: float = 0.5) -> list[str]:
    """One note per (dataset, method, diagnostic) whose value sat at an end of the ``<name>_grid`` the fit reported
    beside it (numeric, >= 3 values) in at least ``threshold`` of the cell's runs."""
    notes = []
    for ds, method, cell in _ok_cells(res):
        runs = (list(_reported_grids(d)) for d in cell.get("diagnostics", []) if isinstance(d, dict))
        for (name, end, edge), n in _edge_counts(runs).items():
            if n >= threshold * len(cell):
                notes.append(f"{method} on {ds}: the solver's own {name} search chose its grid's {end} value "
                             f"({plain(edge)}) in {n} of {len(cell)} runs: the optimum may lie beyond that grid.")
    return notes


BUSY_SHARE = 0.8  # below this median share of their threads' cores, a folder's runs are said to have shared them


def timing_notes(res) -> list[str]:
    """How busy the machine was while the ok runs were timed: per row, its CPU time over its wall clock times its
    BLAS threads (``cpu_seconds / (total_seconds * threads)``; 1 is a run that kept its threads' cores busy the
    whole time, 0.3 one that got a third of them). Said only when some rows record their CPU time."""
    if res.rows.empty or "cpu_seconds" not in res.rows or "status" not in res.rows:
        return []
    ok = res.rows[res.rows["status"] == "ok"]
    cpu = pd.to_numeric(ok["cpu_seconds"], errors="coerce")
    wall = pd.to_numeric(ok["total_seconds"], errors="coerce") if "total_seconds" in ok else cpu * float("nan")
    prov = ok["provenance"] if "provenance" in ok else pd.Series([None] * len(ok), index=ok.index)
    threads = pd.to_numeric(prov.map(lambda p: p.get("blas_threads") if isinstance(p, dict) else None),
                            errors="coerce").fillna(1).where(lambda t: t > 0, 1)
    shares = (cpu / (wall.where(wall > 0) * threads)).dropna()
    if shares.empty:
        return []
    median = float(shares.median())
    missing = len(ok) - len(shares)
    text = (f"Timings are wall clock, as each run ran. CPU share (CPU time / (wall clock x the run's BLAS threads)) "
            f"of the {len(shares)} ok runs that record it: median {median:.2f} (range {shares.min():.2f}-"
            f"{shares.max():.2f})")
    if missing:
        text += f"; {missing} older rows do not record it"
    if median < BUSY_SHARE:
        text += (f"; below {BUSY_SHARE} the runs shared their cores with other work (or, on several threads, kept "
                 "them busy only part of the time), so their times carry the machine's load and compare across "
                 "methods only roughly")
    return [text + "."]


def empty_notes(res) -> list[str]:
    """The (dataset, method) pairs not run because the dataset's task is not the method's (a classification-only
    method beside regression datasets), grouped per method, so that no cell is missing silently."""
    from tkbench.bench.plan import empty_cells

    per_method: dict[str, list[str]] = {}
    why: dict[str, str] = {}
    for label, method, reason in empty_cells(res.experiment):
        per_method.setdefault(method, []).append(label)
        why[method] = reason.split(": ", 1)[1]
    return [f"{method} not run on {', '.join(labels)}: {why[method]} (not these datasets' task)."
            for method, labels in per_method.items()]


def convergence_notes(res) -> list[str]:
    """Cells in which some final fits stopped before meeting their solver's stop rule (the solver report's
    ``converged`` false; :mod:`tkbench.methods._shared.report`), with the rule in the solver's own words where the rows
    give it, the largest certificate left and what to change."""
    notes = []
    for ds, method, cell in _ok_cells(res):
        if "diagnostics" not in cell:
            continue
        pairs = [(read_report(d), d) for d in cell["diagnostics"] if isinstance(d, dict) and "sdp_status" not in d]
        reports = [r for r, _ in pairs if r["converged"] is not None]
        stopped = [r for r in reports if not r["converged"]]
        if not stopped:
            continue
        # an SVM solve stopped at LIBSVM's iteration cap makes the gap computed from it no certificate, however
        # small it reads: say so, or the note's "gap left" below tol contradicts "stopped before the rule"
        svm_capped = sum(1 for r, d in pairs if r["converged"] is False and (d.get("n_svm_capped") or 0) > 0)
        rules = {r["stop_rule"] for r in stopped if r["stop_rule"]} or _family_rules(cell)
        tols = {((spec or {}).get("params") or {}).get("tol") for spec in cell.get("spec", [])} - {None}
        tol = (f"; tol = {plain(next(iter(tols)))}" if len(tols) == 1 and (not rules or all(
            "tol" in r and "tol = " not in r for r in rules)) else "")  # the rule's tol, where it names one
        rule = f" ({next(iter(rules))}{tol})" if len(rules) == 1 else (f" ({tol[2:]})" if tol and not rules else "")
        gaps = [v for r in stopped for v in r["certificate"].values() if v == v]
        names = sorted({k for r in stopped for k in r["certificate"]})
        caps = {((spec or {}).get("params") or {}).get("max_iter") for spec in cell.get("spec", [])} - {None}
        capped = sum(1 for r in stopped if caps and isinstance(r["iterations"], int | float)
                     and r["iterations"] >= min(caps))
        advice = (f"; {capped} of them at the iteration cap max_iter = {min(caps)}" if capped else "") + \
            (f"; {svm_capped} of them with SVM solves stopped at LIBSVM's iteration cap (a gap from a capped solve "
             "certifies nothing)" if svm_capped else "") + \
            ". To meet it: raise max_iter or loosen tol in the method's params" + \
            ("; a gap left above 1 usually means an ill-conditioned problem (try a normalised kernel or a smaller C)"
             if gaps and max(gaps) > 1 else "")
        left = f" (largest {'/'.join(n.replace('_', ' ') for n in names)} left {max(gaps):.2g})" if gaps else ""
        notes.append(f"{method} on {ds}: {len(stopped)} of {len(reports)} final fits stopped before their stop "
                     f"rule{rule}{left}{advice}.")
    return notes


def _family_rules(cell) -> set[str]:
    """The stop rule of the families of a cell's rows (``Family.stop_rule``), for rows that do not give theirs."""
    from tkbench.methods.registry import get_family

    rules = set()
    for family in {(spec or {}).get("family") for spec in cell.get("spec", [])} - {None}:
        try:
            rule = get_family(family).stop_rule
        except (KeyError, ValueError):
            continue
        if rule:
            rules.add(rule)
    return rules


def final_fit_table(res):
    """Per (dataset, method): solver iterations of the final fits (mean ± std, max), how many reached their
    tolerance, and the hyper-parameters CV chose (each value with its count), for the cells that have either."""
    from collections import Counter

    from tkbench.report.tables import Cell, TableModel

    rows = []
    for ds, method, cell in _ok_cells(res):
        reports = [read_report(d) for d in cell.get("diagnostics", []) if isinstance(d, dict)]
        iters = [float(r["iterations"]) for r in reports if isinstance(r["iterations"], int | float)]
        conv = [bool(r["converged"]) for r in reports if r["converged"] is not None]
        # a solver with steps but no test to meet (its report says so: converged None beside a stop rule)
        fixed = bool(reports) and not conv and bool(iters) and all(r["stop_rule"] for r in reports)
        chosen: dict[str, Counter] = defaultdict(Counter)
        for c in cell.get("chosen_params", []):
            for name, value in (c if isinstance(c, dict) else {}).items():
                chosen[name][plain(value)] += 1
        if not iters and not chosen:
            continue
        it = pd.Series(iters, dtype=float)
        rows.append([Cell(ds), Cell(method),
                     Cell(f"{it.mean():.1f} ± {it.std(ddof=1) if len(it) > 1 else 0:.1f} (max {it.max():.0f})"
                          if len(it) else "-"),
                     Cell(f"{sum(conv)}/{len(conv)}" if conv else ("n/a (fixed steps)" if fixed else "-"),
                          flag="warn" if conv and not all(conv) else ""),
                     Cell("; ".join(f"{name}: " + ", ".join(f"{v} ({n})" for v, n in counts.most_common())
                                    for name, counts in chosen.items()) or "-")])
    if not rows:
        return None
    return TableModel("Final fits: solver iterations and the hyper-parameters chosen by CV",
                      ["Dataset", "Method", "Iterations", "Converged", "Chosen by CV (value (runs))"], rows,
                      ["Iterations of the final fit's solver as its solver report counts them; converged = met "
                       "the solver's own stop rule (n/a: a solver that runs a fixed number of steps, nothing to "
                       "meet)."])
