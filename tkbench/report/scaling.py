"""The scaling experiments' tables (:mod:`tkbench.kinds.scaling`): fitted exponents beside the papers', fit time per
size with speed-ups measured in the same run, and one note per kind of failure."""
from __future__ import annotations

import pandas as pd

from tkbench.errors import first_line
from tkbench.report import plots
from tkbench.report.aggregate import Results
from tkbench.report.parts import dataset_order, ref_names
from tkbench.report.reference import Reference
from tkbench.report.tables import Cell, TableModel, fmt_time


def slope_table(res: Results, slopes: pd.DataFrame, reference: Reference | None) -> TableModel:
    names = ref_names(res)["methods"]
    exponents_file = reference.path.parent / "scaling.yaml" if reference is not None else None
    scaling_ref = Reference(exponents_file) if exponents_file is not None and exponents_file.exists() else None
    tasks = dict(zip(res.planned["dataset"], res.planned["task"], strict=False)) if len(res.planned) else {}
    cols = ["Dataset", "Method", "Axis", "Fixed", "Fitted slope", "Slope, two largest", "Slope per iteration",
            "Points", "Largest size", "Mean time there (s)", "Peak RSS there (MB)", "Iterations there"]
    if reference is not None:
        cols.append("Paper exponent")

    def num(x, fmt):
        return "-" if x is None or x != x else format(x, fmt)

    rows = []
    for _, s in slopes.iterrows():
        row = [Cell(str(s["dataset"])), Cell(str(s["method"])), Cell(s["axis"]), Cell(str(s["fixed"])),
               Cell(num(s["slope"], ".2f")), Cell(num(s["tail_slope"], ".2f")),
               Cell(num(s.get("per_iteration_slope"), ".2f")), Cell(str(s["points"])),
               Cell(f"{s['axis']}={plots.plain(s['max_size'])}"), Cell(fmt_time(s["max_seconds"])),
               Cell(num(s.get("peak_rss_mb"), ".0f")), Cell(num(s.get("iterations"), ".1f"))]
        if reference is not None:
            name = names.get(s["method"], s["method"])
            exps = {}
            for ref in (reference, scaling_ref):  # a table's reference file, then the papers' exponents file
                if ref is not None and not exps:
                    exps = ref.exponents(f"{name}_{tasks.get(s['dataset'], '')}") or ref.exponents(name) or {}
            field = "m_exponent" if s["axis"] == "m" else next((k for k in exps if k.endswith("_exponent")
                                                                 and k != "m_exponent"), None)
            row.append(Cell(str(exps.get(field, "-")) if field else "-"))
        rows.append(row)
    return TableModel("Fitted complexity exponents (time ~ size^slope)", cols, rows)


def time_table(res: Results) -> TableModel | None:
    """Scaling experiments with two or more methods: mean ± std fit time per size and each method's speed-up over
    the first method of the config (e.g. paper 003 Table 1: SDP against Frank-Wolfe), measured in the same run.
    Sizes where a run did not finish show its status (e.g. the SDP refused for lack of memory)."""
    methods = [m.name for m in res.experiment.methods]
    if len(methods) < 2 or res.rows.empty:
        return None
    rows = plots.with_actual_size(res.rows)
    if rows["full_size"].any():  # the whole training part: one line per dataset, its m from the ok runs
        full_m = rows[rows["full_size"] & (rows["status"] == "ok")].groupby("dataset")["size"].max()
        rows["size"] = [full_m.get(d, float("inf")) if f else s
                        for d, s, f in zip(rows["dataset"], rows["size"], rows["full_size"], strict=True)]
    if rows["vary_param"].nunique() > 1:  # methods varying different parameters have no common sizes to compare
        return None
    base = methods[0]
    cols = ["Dataset", "m"] + [f"{m} time (s)" for m in methods] + [f"speed-up of {m} over {base}"
                                                                   for m in methods[1:]]
    out: list[list[Cell]] = []
    keys = ["dataset", "size"] + (["vary_value"] if rows.get("vary_value") is not None
                                  and rows["vary_value"].notna().any() else [])
    for key, cur in rows.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        label = plots.plain(key[1]) if key[1] != float("inf") else "full"
        label += (" (full)" if cur["full_size"].all() and key[1] != float("inf") else "") + (
            f" ({cur['vary_param'].iloc[0]}={plots.plain(key[2])})" if len(key) > 2 else "")
        means, cells = {}, []
        for m in methods:
            mine = cur[cur["method"] == m]
            ok = mine[mine["status"] == "ok"]["fit_seconds"]
            if len(ok):
                means[m] = float(ok.mean())
                cells.append(Cell(fmt_time(means[m], float(ok.std()) if len(ok) > 1 else None)))
            else:
                states = sorted(set(mine["status"])) if len(mine) else ["missing"]
                cells.append(Cell("/".join(states), flag="bad"))
        ratios = [Cell(f"{means[base] / means[m]:.3g}x") if base in means and m in means and means[m] > 0
                  else Cell("-") for m in methods[1:]]
        out.append([Cell(str(key[0])), Cell(label)] + cells + ratios)
    order = dataset_order(res)
    out.sort(key=lambda r: (order.get(r[0].text, len(order)), float(r[1].text.split()[0].replace("full", "inf"))))
    return TableModel("Fit time per size, and speed-up measured in the same run", cols, out)


def not_reached(res: Results) -> list[str]:
    """With ``scaling.budget_seconds``: one note per series (dataset, method, varied value) whose larger sizes
    were left out, with the reason (the run that went over the budget or did not finish). Recomputed from the plan
    and the rows, the way the sweep's gate decided."""
    from tkbench.bench.plan import make_plan
    from tkbench.kinds.budget import SizeBudget

    sc = res.experiment.scaling
    if sc is None or sc.budget_seconds is None:
        return []
    plan = make_plan(res.experiment)
    gate = SizeBudget(sc.budget_seconds, plan)
    rows = res.rows.to_dict("records")
    gate.note_rows(rows)
    done = {r["key"] for r in rows}
    left: dict[tuple, tuple[list, str]] = {}
    for spec in plan:
        reason = None if spec.key in done else gate(spec)
        if reason is not None:
            value = None if spec.vary is None else spec.vary.get("value")
            sizes, _ = left.setdefault((spec.method, spec.label, value), ([], reason))
            sizes.append("full" if spec.size is None else plots.plain(spec.size))
    notes = []
    for (m, ds, value), (sizes, reason) in left.items():
        at = f" ({sc.vary.param if sc.vary else 'value'} = {value})" if value is not None else ""
        why = reason.removeprefix("not reached: ")
        notes.append(f"{m} on {ds}{at}: m = {', '.join(dict.fromkeys(sizes))} not run ({why}; the budget per run is "
                     f"{sc.budget_seconds:g} s)")
    return notes


def scaling_failures(res: Results) -> list[str]:
    """One note per (method, dataset, status, error type) of the runs that did not finish ok, with the sizes where
    it happened and the message at the smallest of them (e.g. the SDP refused for lack of memory above some m)."""
    bad = res.rows[res.rows["status"] != "ok"] if not res.rows.empty else res.rows
    failures: dict[tuple, list] = {}
    for _, r in (plots.with_actual_size(bad).iterrows() if not bad.empty else ()):
        size, full = r["size"], r["full_size"]
        known = bool(pd.notna(size))  # a full-size run that failed before reading its data has no m
        label = (f"{plots.plain(size)} (full)" if known else "full") if full else plots.plain(size)
        message = first_line(str(r.get("error") or "no message"), 240)
        kind = message.split(":", 1)[0] if ":" in message else message
        failures.setdefault((r["method"], r["dataset"], r["status"], kind), []).append(
            (size if known else float("inf"), label, message))
    order = dataset_order(res)
    notes = []
    for (m, ds, status, _), where in sorted(failures.items(), key=lambda kv: order.get(kv[0][1], len(order))):
        where.sort(key=lambda w: w[0])
        labels = list(dict.fromkeys(label for _, label, _ in where))
        count = f" ({len(where)} runs)" if len(where) > len(labels) else ""
        notes.append(f"{m} on {ds} at m = {', '.join(labels)}{count}: {status}; at m = {labels[0]}: {where[0][2]}")
    return notes


