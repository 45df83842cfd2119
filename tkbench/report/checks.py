"""Automatic sanity notes under a report's tables, computed from the rows.

- CV at the grid's edge: a parameter chosen at the smallest or largest grid value in at least half of a cell's
  runs suggests that the optimum lies outside the grid (paper tables rarely print their grids, so the reader
  needs to know where ours binds).
- A solver's own grid at its edge: a diagnostic ``<name>`` (a value, or one per learned kernel) reported beside
  ``<name>_grid`` (HGK: Algorithm 1's lambda) at the grid's smallest or largest value in at least half of a
  cell's runs; such grids sit inside the solver, where the CV notes cannot see them.
- Convergence of the final fits: iterative solvers (Frank-Wolfe, SimpleMKL) report whether they reached their
  duality-gap tolerance; a fit that stopped early is counted per cell, never hidden in a mean. (SDP solutions
  have their own certificate note in :mod:`tkbench.report.build`.)
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import pandas as pd

from tkbench.report.plots import plain


def _ok_cells(res) -> list[tuple[str, str, pd.DataFrame]]:
    """(dataset, method, ok rows) in config order."""
    if res.rows.empty or "status" not in res.rows:
        return []
    ok = res.rows[res.rows["status"] == "ok"]
    out = []
    for ds in res.experiment.datasets:
        for m in res.experiment.methods:
            cell = ok[(ok["dataset"] == ds.label) & (ok["method"] == m.name)]
            if len(cell):
                out.append((ds.label, m.name, cell))
    return out


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


def convergence_notes(res) -> list[str]:
    """Cells in which some final fits stopped before their solver's tolerance (diagnostics ``converged`` false),
    with the largest relative gap left."""
    notes = []
    for ds, method, cell in _ok_cells(res):
        if "diagnostics" not in cell:
            continue
        diags: list[dict[str, Any]] = [d for d in cell["diagnostics"]
                                       if isinstance(d, dict) and "converged" in d and "sdp_status" not in d]
        stopped = [d for d in diags if not d["converged"]]
        if not stopped:
            continue
        gaps = [float(d["relative_gap"]) for d in stopped if d.get("relative_gap") is not None]
        tols = {((spec or {}).get("params") or {}).get("tol") for spec in cell.get("spec", [])} - {None}
        tol = f" {plain(next(iter(tols)))}" if len(tols) == 1 else ""
        caps = {((spec or {}).get("params") or {}).get("max_iter") for spec in cell.get("spec", [])} - {None}
        capped = sum(1 for d in stopped if caps and isinstance(d.get("n_iter"), int | float)
                     and d["n_iter"] >= min(caps))
        advice = (f"; {capped} of them at the iteration cap max_iter = {min(caps)}" if capped else "") + \
            ". To reach the tolerance: raise max_iter or loosen tol in the method's params" + \
            ("; a gap left above 1 usually means an ill-conditioned problem (try a normalised kernel or a smaller C)"
             if gaps and max(gaps) > 1 else "")
        notes.append(f"{method} on {ds}: {len(stopped)} of {len(diags)} final fits stopped before the duality-gap "
                     f"tolerance{tol}" + (f" (largest relative gap left {max(gaps):.2g})" if gaps else "") + advice
                     + ".")
    return notes


def final_fit_table(res):
    """Per (dataset, method): solver iterations of the final fits (mean ± std, max), how many reached their
    tolerance, and the hyper-parameters CV chose (each value with its count), for the cells that have either."""
    from collections import Counter

    from tkbench.report.tables import Cell, TableModel

    rows = []
    for ds, method, cell in _ok_cells(res):
        diags = [d for d in cell.get("diagnostics", []) if isinstance(d, dict)]
        iters = [float(d["n_iter"]) for d in diags if isinstance(d.get("n_iter"), int | float)]
        conv = [bool(d["converged"]) for d in diags if "converged" in d]
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
                     Cell(f"{sum(conv)}/{len(conv)}" if conv else "-", flag="warn" if conv and not all(conv) else ""),
                     Cell("; ".join(f"{name}: " + ", ".join(f"{v} ({n})" for v, n in counts.most_common())
                                    for name, counts in chosen.items()) or "-")])
    if not rows:
        return None
    return TableModel("Final fits: solver iterations and the hyper-parameters chosen by CV",
                      ["Dataset", "Method", "Iterations", "Converged", "Chosen by CV (value (runs))"], rows,
                      ["Iterations of the final fit's solver as it reports them (Frank-Wolfe, SimpleMKL and NKRR "
                       "steps; LIBSVM's SMO iterations for SVMs); converged = reached the solver's own tolerance."])
