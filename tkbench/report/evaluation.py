"""The evaluation-time table (a config's ``evaluation`` section; paper 004's Table 3).

Per (dataset, method): the time to predict the whole test part (``predict_seconds`` of the result rows, in ms,
mean over the ok splits) and the model-size factors that set it, read from the fits' diagnostics: support
vectors (``n_support`` of an SVM, ``nsv`` of a mixture's SVM), cosines ``m`` and Gaussians ``m_gauss``. With a reference
file the paper's numbers stand beside ours (``ours (paper)``); with ``speedup: [fast, slow]`` a second table
gives slow's mean test time over fast's per dataset, ours (both measured in the same sweep, on the same machine)
beside the paper's.
"""
from __future__ import annotations

import math

import pandas as pd

from tkbench.report.checks import _ok_cells
from tkbench.report.reference import Reference
from tkbench.report.tables import Cell, TableModel


def family_notes(res, table: str, methods) -> list[str]:
    """The notes the families of ``methods`` (names of this config's methods) give for ``table``
    (:attr:`tkbench.methods.family.Family.report_notes`), each once, in the config's order."""
    from tkbench.methods import get_family

    wanted, out = set(methods), []
    for m in res.experiment.methods:
        if m.name not in wanted:
            continue
        try:
            note = get_family(m.family).report_notes.get(table)
        except (KeyError, ValueError):  # a family not registered here (a plugin not installed)
            continue
        if note and note not in out:
            out.append(note)
    return out

FACTORS = (("nsv", ("n_support", "nsv")), ("m", ("m",)), ("m_gauss", ("m_gauss",)))


def _mean(values: list[float]) -> float:
    return float(pd.Series(values, dtype=float).mean()) if values else math.nan


def _factor(diags: list[dict], keys: tuple[str, ...]) -> float:
    for key in keys:
        values = [float(d[key]) for d in diags if isinstance(d.get(key), int | float)]
        if values:
            return _mean(values)
    return math.nan


def _num(x: float, digits: int = 1) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def _pair(ours: float, paper: float | None, digits: int = 1) -> str:
    text = _num(ours, digits)
    if paper is not None and not math.isnan(paper):
        text += f" ({_num(paper, digits)})"
    return text


def evaluation_measures(res) -> dict[tuple[str, str], dict[str, float]]:
    """(dataset, method) -> {test_ms, nsv, m, m_gauss, n_test}: means over the ok rows."""
    out = {}
    for ds, method, cell in _ok_cells(res):
        diags = [d for d in cell.get("diagnostics", []) if isinstance(d, dict)]
        entry = {"test_ms": 1e3 * _mean(list(cell["predict_seconds"].dropna())),
                 "n_test": _mean(list(cell["n_test"].dropna())) if "n_test" in cell else math.nan}
        for name, keys in FACTORS:
            entry[name] = _factor(diags, keys)
        out[(ds, method)] = entry
    return out


def reference_measures(value) -> dict[str, float]:
    """A reference entry's evaluation measures: its scalar fields (an accuracy table's [mean, std] pairs, which a
    file may hold beside them, are not measures), ``test_seconds`` as ``test_ms`` when that is absent."""
    if not isinstance(value, dict):
        return {}
    out = {k: float(v) for k, v in value.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    if "test_ms" not in out and "test_seconds" in out:
        out["test_ms"] = 1000.0 * out["test_seconds"]
    return out


def evaluation_tables(res, names: dict[str, dict[str, str]]) -> list[TableModel]:
    exp = res.experiment
    spec = exp.evaluation
    if spec is None:
        return []
    path = None
    if spec.reference is not None:
        from tkbench.config import resolve_reference

        path = resolve_reference(spec.reference, exp._source)
    reference = Reference(path) if path is not None and path.exists() else None

    def paper(ds: str, method: str) -> dict[str, float]:
        if reference is None:
            return {}
        value = (reference.results.get(names["datasets"].get(ds, ds)) or {}).get(names["methods"].get(method, method))
        return reference_measures(value)

    measures = evaluation_measures(res)
    rows = []
    for (ds, method), ours in measures.items():
        ref = paper(ds, method)
        rows.append([Cell(ds), Cell(method), Cell(_num(ours["n_test"], 0)),
                     Cell(_pair(ours["test_ms"], ref.get("test_ms"), 2))]
                    + [Cell(_pair(ours[name], ref.get(name))) for name, _ in FACTORS])
    where = " (paper's in brackets)" if reference is not None else ""
    tables = [TableModel(f"Evaluation time and model size{where}",
                         ["Dataset", "Method", "Test rows", "Test ms", "Support vectors", "Cosines m",
                          "Gaussians"], rows,
                         ["Test ms: time to predict the whole test part (mean over the ok splits), on this machine"
                          + (f"; paper: {reference.title}, its own machine." if reference is not None else ".")
                          + " Model size from the fits' diagnostics (means).",
                          *family_notes(res, "evaluation", {method for _, method in measures})])]
    if spec.speedup:
        fast, slow = spec.speedup
        srows = []
        for d in exp.datasets:
            a, b = measures.get((d.label, fast)), measures.get((d.label, slow))
            pa, pb = paper(d.label, fast).get("test_ms"), paper(d.label, slow).get("test_ms")
            ours = b["test_ms"] / a["test_ms"] if a and b and a["test_ms"] > 0 else math.nan
            theirs = pb / pa if pa and pb else math.nan
            if math.isnan(ours) and math.isnan(theirs):
                continue
            srows.append([Cell(d.label), Cell(_num(ours) + "x" if not math.isnan(ours) else "-"),
                          Cell(_num(theirs) + "x" if not math.isnan(theirs) else "-")])
        if srows:
            tables.append(TableModel(f"Evaluation speed-up of {fast} over {slow}", ["Dataset", "Ours", "Paper"],
                                     srows, [f"{slow}'s mean test time over {fast}'s; ours measured in the same "
                                             "sweep on one machine (ratios, not absolute times)."]))
    return tables


def time_breakdown_table(res) -> TableModel | None:
    """Where a fit's time goes: per (dataset, method), the mean of each ``<step>_seconds`` diagnostic of the final
    fits (the steps the solver times itself) beside the mean fit time, each with its share of it."""
    rows, steps = [], []
    cells = []
    for ds, method, cell in _ok_cells(res):
        diags = [d for d in cell.get("diagnostics", []) if isinstance(d, dict)]
        keys = sorted({k for d in diags for k in d if k.endswith("_seconds")})
        if keys:
            cells.append((ds, method, cell, diags, keys))
            steps += [k for k in keys if k not in steps]
    if not cells:
        return None
    for ds, method, cell, diags, _ in cells:
        fit = _mean(list(cell["fit_seconds"].dropna()))
        row = [Cell(ds), Cell(method), Cell(f"{fit:.3g}")]
        for key in steps:
            value = _mean([float(d[key]) for d in diags if isinstance(d.get(key), int | float)])
            row.append(Cell("-" if math.isnan(value) else f"{value:.3g} ({100 * value / fit:.0f} %)"))
        rows.append(row)
    return TableModel("Where the fit time goes", ["Dataset", "Method", "Fit (s)"]
                      + [k.removesuffix("_seconds").replace("_", " ") + " (s)" for k in steps], rows,
                      ["Means over the final fits of each cell, from the solver's own timers (share of the fit "
                       "time).", *family_notes(res, "time_breakdown", {method for _, method, *_ in cells})])


def _cv_selection(cell) -> tuple[list[list[dict]], list[str], list[str]]:
    """The candidates of a cell whose CV grid is one ``architecture`` parameter (a CV over architectures),
    in the ``selection`` form: per run, each architecture's mean CV risk (minus the CV score; NaN for a candidate
    whose fit failed on a fold) and no time; the chosen architectures; what the CVs say of their failed fits."""
    picks, chosen, failures = [], [], []
    for cv, params in zip(cell.get("cv", []), cell.get("chosen_params", []), strict=False):
        scores = cv.get("scores") if isinstance(cv, dict) else None
        if not scores or not all(list(sc.get("params", {})) == ["architecture"] for sc in scores) or len(scores) < 2:
            continue
        picks.append([{"architecture": str(sc["params"]["architecture"]),
                       "d3_risk": -float(math.nan if sc.get("mean") is None else sc["mean"]),
                       "seconds": math.nan} for sc in scores])
        chosen.append(str((params or {}).get("architecture")))
        if cv.get("failed_candidates") or any(not math.isfinite(c["d3_risk"]) for c in picks[-1]):
            errors = cv.get("errors")
            failures += ([str(e) for e in errors] if errors else
                         [f"{int(cv.get('failed_candidates') or 0)} failed fit(s), reason not recorded (the row's "
                          "CV kept only the count before 2026-12-05)"])
    return picks, chosen, failures


def _column(label) -> str:
    """A candidate's column: its label, or "chosen [lambda a-b]" for a re-run of the chosen architecture with a
    further lambda grid (a family's ``lambda_grids``), whatever the architecture, so that those share one column."""
    label = str(label)
    return "chosen" + label[label.index(" [lambda "):] if " [lambda " in label else label


def selection_table(res) -> TableModel | None:
    """Which candidate a fit chose on held-out data: per (dataset, method) whose final fits report a ``selection``
    diagnostic (a list of ``{architecture, d3_risk, seconds}``, one per candidate, each scored on held-out data by
    the fit itself), or whose CV grid is one ``architecture`` parameter, the chosen candidates with their run counts, each candidate's mean
    held-out risk (the D3 error, or the CV error), and the mean time of all candidates' runs (the CV time for a CV).
    Cells with one candidate are left out."""
    cells, names, failed_notes = [], [], []
    for ds, method, cell in _ok_cells(res):
        # a CV over the architecture first (its final fits may still pick among further candidates themselves)
        picks, chosen, failures = _cv_selection(cell)
        held_out = f"{res.experiment.protocol.cv_folds}-fold CV"
        seconds = [float(s) for s in cell.get("cv_seconds", pd.Series(dtype=float)).dropna()]
        if not picks:
            fits = [d for d in cell.get("diagnostics", []) if isinstance(d, dict)
                    and isinstance(d.get("selection"), list) and len(d["selection"]) > 1]
            picks, chosen = [d["selection"] for d in fits], [d.get("selected", d.get("architecture")) for d in fits]
            held_out = "D3"
            seconds = [sum(float(c["seconds"]) for c in p) for p in picks]
        if not picks:
            continue
        cells.append((ds, method, held_out, picks, chosen, seconds))
        if failures:
            failed_notes.append(f"{method} on {ds}: a CV candidate failed on a fold, so it has no mean and was not "
                                "chosen: " + "; ".join(dict.fromkeys(failures[:3])))
        names += [n for n in dict.fromkeys(_column(c["architecture"]) for p in picks for c in p) if n not in names]
    if not cells:
        return None
    rows = []
    for ds, method, held_out, picks, chosen, seconds in cells:
        counts = pd.Series([str(c) for c in chosen]).value_counts(sort=False).to_dict()
        order = sorted(counts, key=lambda k: (-counts[k], names.index(_column(k)) if _column(k) in names
                                              else len(names)))
        row = [Cell(ds), Cell(method), Cell(held_out), Cell(", ".join(f"{k} ({counts[k]})" for k in order))]
        for name in names:
            risks = [float(c["d3_risk"]) for p in picks for c in p if _column(c["architecture"]) == name]
            failed = sum(not math.isfinite(r) for r in risks)
            mean = _mean([r for r in risks if math.isfinite(r)])
            text = "-" if not risks else "failed" if failed == len(risks) else f"{mean:.5f}" + (
                f" (failed in {failed} of {len(risks)})" if failed else "")
            row.append(Cell(text, bold=name in {_column(k) for k in counts}))
        mean_seconds = _mean(seconds)
        row.append(Cell("-" if math.isnan(mean_seconds) else f"{mean_seconds:.4g}"))
        rows.append(row)
    return TableModel("Candidates chosen on held-out data (mean held-out risk per candidate)",
                      ["Dataset", "Method", "Held out", "Chosen (runs)"] + names + ["All candidates (s)"], rows,
                      ["Each fit scored every candidate on held-out parts of its training part and kept the one with "
                       "the smallest risk (bold: chosen in at least one run). k-fold CV: the CV's mean "
                       "least-squares error, with the CV's time. Times from the fits' own timers; a fit resumed from "
                       "candidate checkpoints counts the candidates' original times. failed: the candidate raised in "
                       "every run (on a fold of its CV, or in the fit's own selection): no mean, never chosen.",
                       *failed_notes, *family_notes(res, "selection", {method for _, method, *_ in cells})])
