"""``tkbench report``: tables in md / tex / html, plots for scaling and convergence experiments, CSV exports."""
from __future__ import annotations

import html as html_lib
from collections import Counter
from pathlib import Path

import pandas as pd

from tkbench.data import registry as data_registry
from tkbench.errors import first_line
from tkbench.report import checks, plots
from tkbench.report.aggregate import Results, flat_rows, load_results, summarize
from tkbench.report.reference import Reference
from tkbench.report.tables import RENDERERS, Cell, TableModel, fmt_time


def _reference(res: Results) -> Reference | None:
    path = res.experiment.reference_path()
    return Reference(path) if path is not None and path.exists() else None


def _dataset_order(res: Results) -> dict[str, int]:
    """Dataset label -> its position in the config (tables, notes and figures follow it)."""
    return {d.label: i for i, d in enumerate(res.experiment.datasets)}


def _ref_names(res: Results) -> dict[str, dict[str, str]]:
    exp = res.experiment
    return {"datasets": {d.label: d.reference or d.label for d in exp.datasets},
            "methods": {m.name: m.reference or m.name for m in exp.methods}}


def _notes(res: Results, summary: pd.DataFrame | None) -> list[str]:
    exp = res.experiment
    notes = list(exp.notes)
    p = exp.protocol
    if exp.kind == "density":
        notes.append(f"Protocol: {p.splits} random balanced draw(s) of the points (seed {p.seed}), scaled to "
                     "[0, 1]^n; K* = y y^T (Theorem 10 with sum y = 0); solved by cvxpy "
                     f"({', '.join(sorted({m.solver or 'clarabel' for m in exp.methods}))}); nothing is trained.")
    elif exp.kind == "landscape":
        grid = exp.landscape
        lo, hi, pts = (grid.low, grid.high, grid.points) if grid else (0.0, 1.0, 41)
        notes.append(f"Landscape: every dataset's rows (no split), pre-processed by each method's scaler; the "
                     f"objective on a {pts} x {pts} grid of [{lo:g}, {hi:g}]^2; nothing is trained.")
    elif exp.kind != "scaling":
        fixed = [m.name for m in exp.methods if m.grid == {}]
        how = (f"hyper-parameters by {p.cv_folds}-fold CV on the training part only" if not p.tune_on_first else
               f"hyper-parameters chosen once per dataset and method: {p.cv_folds}-fold CV on the training parts of "
               f"the first {p.tune_on_first} splits, the median of the {p.tune_on_first} choices used on every split "
               "(Raetsch et al. 2001); CV time is that shared cost")
        tuning = ("fixed hyper-parameters (no CV)" if len(fixed) == len(exp.methods) else
                  how + (f" (fixed, no CV: {', '.join(fixed)})" if fixed else ""))
        fixed_sets = [d.label for d in exp.datasets if (data_registry.registry().get(d.name) or {}).get("realisations")]
        kind_of_splits = "random splits" if not fixed_sets else \
            f"splits (the benchmark's own realisations for {', '.join(fixed_sets)}, random for the others)"
        notes.append(f"Protocol: {p.splits} {kind_of_splits}, test fraction {p.test_fraction}, seed {p.seed}; "
                     f"{tuning}; mean ± sample std over the ok splits; fit time is the final fit"
                     + (" with the chosen hyper-parameters." if len(fixed) < len(exp.methods) else "."))
    for ds in exp.datasets:
        bits = []
        if ds.name in data_registry.registry():
            entry = data_registry.registry()[ds.name]
            _, chosen = data_registry.resolve_options(ds.name, ds.options)
            if chosen:
                bits.append("options " + ", ".join(f"{k}={v}" for k, v in chosen.items()))
            if entry.get("realisations"):
                real = entry["realisations"]
                used = min(p.splits, ds.splits or p.splits, int(real["count"]))
                bits.append(f"fixed realisations 1-{used} of {real['of']} (split i is realisation i + 1)")
            if entry.get("fixed_split"):
                bits.append("its one fixed train/test split (the files' own)")
            if entry.get("notes"):
                bits.append(str(entry["notes"]).rstrip("."))
        elif ds.name == "csv":  # a user's own file: its path, target and checksum, never "synthetic"
            o = ds.options
            bits.append(f"the user's CSV file {o.get('path')} (sha256 {str(o.get('sha256'))[:12]}…), target "
                        f"{o.get('target')!r}, task {o.get('task')}")
        elif ds.options:
            bits.append("synthetic, options " + ", ".join(f"{k}={v}" for k, v in ds.options.items()))
        if ds.test_fraction is not None:
            bits.append(f"test fraction {ds.test_fraction:.6g} (instead of the protocol's {p.test_fraction})")
        sub = ds.subsample or p.subsample
        if sub and exp.kind == "density":
            bits.append(f"{sub} points per draw, half per class")
        elif sub:
            bits.append(f"subsampled to {sub} rows per split")
        if ds.splits is not None and ds.splits < p.splits and exp.kind != "scaling":
            bits.append(f"only the first {ds.splits} of the {p.splits} splits (cost)")
        if bits:
            notes.append(f"{ds.label}: " + "; ".join(bits))
    for m in exp.methods:
        if m.datasets is not None:
            notes.append(f"{m.name}: run on {', '.join(m.datasets)} only")
        if m.max_train is not None:
            caps = m.max_train if isinstance(m.max_train, dict) else {"every dataset": m.max_train}
            notes.append(f"{m.name}: trained on at most " + ", ".join(f"{n} rows ({d})" for d, n in caps.items())
                         + " of each split's training part (a seeded subset); tested on the full test part")
        if m.cv_max_train is not None:
            caps = m.cv_max_train if isinstance(m.cv_max_train, dict) else {"every dataset": m.cv_max_train}
            notes.append(f"{m.name}: hyper-parameters chosen by CV on at most " + ", ".join(
                f"{n} rows ({d})" for d, n in caps.items()) + " of each split's training part (the seeded subset "
                "a max_train of that size uses), the final fit on all of them")
        if isinstance(m.splits, int) and m.splits < p.splits and exp.kind != "scaling":
            notes.append(f"{m.name}: only the first {m.splits} of the {p.splits} splits (cost)")
        elif isinstance(m.splits, dict) and exp.kind != "scaling":
            cut = {label: k for label, k in m.splits.items() if k < p.splits}
            if cut:
                notes.append(f"{m.name}: " + "; ".join(f"only the first {k} of the {p.splits} splits on {label}"
                                                       for label, k in cut.items()) + " (cost)")
        for label, over in m.per_dataset.items():
            notes.append(f"{m.name} on {label}: " + ", ".join(f"{k}={v}" for k, v in over.items())
                         + " (instead of the method's params)")
        for label, grid in m.per_dataset_grid.items():
            notes.append(f"{m.name} on {label}: CV grid " + ", ".join(f"{k} in {v}" for k, v in grid.items())
                         + " (instead of the method's grid)")
    if summary is not None:
        for _, line in summary.iterrows():
            for error in line["errors"][:2]:
                notes.append(f"{line['dataset']}/{line['method']} not ok: {first_line(error, 200)}")
    reference = _reference(res)
    if exp.kind == "scaling" and reference is not None and reference.data.get("metric") == "train_seconds":
        names = _ref_names(res)
        for ds in exp.datasets:
            parts = []
            for m in exp.methods:
                value = reference.lookup(names["datasets"][ds.label], names["methods"][m.name], "time")
                if value is not None and value.time is not None:
                    parts.append(f"{m.name} {fmt_time(*value.time)} s")
            if parts:
                notes.append(f"Paper ({reference.title}), {ds.label} at full size: " + ", ".join(parts)
                             + (f"; hardware: {reference.data['hardware']}" if reference.data.get("hardware") else ""))
    notes += _size_notes(res, reference)
    notes += _sdp_notes(res) + checks.convergence_notes(res) + checks.grid_edge_notes(res)
    notes += checks.solver_grid_notes(res)
    if res.stale:
        notes.append(f"{res.stale} stored row(s) from an earlier version of the config were ignored.")
    for path, problem in res.damaged or []:
        notes.append(f"Damaged row file left out: {path}: {problem} (its run counts as missing; `tkbench run` sets "
                     "the file aside and does the run again).")
    if not res.rows.empty and "provenance" in res.rows:
        prov = res.rows["provenance"].dropna()
        if len(prov):
            shas = Counter(f"{p.get('git_sha', '?')[:10] if p.get('git_sha') else '?'}"
                           f"{'+dirty' if p.get('git_dirty') else ''}" for p in prov)
            first = prov.iloc[0]
            setups = Counter(f"{p.get('workers')} worker(s) x {p.get('blas_threads')} BLAS thread(s)" for p in prov)
            setup = (next(iter(setups)) if len(setups) == 1 else
                     ", ".join(f"{k} ({n} runs)" for k, n in sorted(setups.items())))
            notes.append(f"Machine: {first.get('cpu')} ({first.get('cpu_count')} cores), {setup}; "
                         f"tkbench {first.get('tkbench_version')} at {', '.join(shas)}; "
                         f"scikit-learn {first.get('packages', {}).get('scikit-learn')}.")
    return notes


def _least_squares_methods(exp) -> set[str]:
    """The methods whose family fits decision values to +-1 labels (``Family.least_squares``)."""
    from tkbench.methods.registry import get_family

    out = set()
    for m in exp.methods:
        try:
            if get_family(m.family).least_squares:
                out.add(m.name)
        except (KeyError, ValueError):  # a family not registered here (a plugin not installed): no RMSE claim
            continue
    return out


def _size_notes(res: Results, reference: Reference | None) -> list[str]:
    """Our training / test sizes beside the paper's where its reference file lists them (``datasets: {name: {m,
    m_test}}``, e.g. paper 003 Table 2) and they differ by more than 2 %: a paper may say "80/20" in its text and
    list other sizes in its table. Ours are the largest training part any method of the cell saw (a method's
    ``max_train`` cap is a note of its own) and the test part."""
    if reference is None or res.rows.empty or "n_train" not in res.rows or res.experiment.kind != "accuracy":
        return []
    sizes = reference.data.get("datasets") or {}
    names = _ref_names(res)
    ok = res.rows[res.rows["status"] == "ok"]
    parts = []
    for ds in res.experiment.datasets:
        paper = sizes.get(names["datasets"][ds.label])
        rows = ok[ok["dataset"] == ds.label]
        if not isinstance(paper, dict) or "m" not in paper or "m_test" not in paper or rows.empty:
            continue
        m, m_test = int(rows["n_train"].max()), int(rows["n_test"].max())
        if abs(m - paper["m"]) > 0.02 * paper["m"] or abs(m_test - paper["m_test"]) > 0.02 * paper["m_test"]:
            parts.append(f"{ds.label} m = {m}, m_t = {m_test} (paper {paper['m']}, {paper['m_test']})")
    if not parts:
        return []
    return [f"Training / test sizes differ from the paper's table ({reference.title}): " + "; ".join(parts)
            + f". Ours split every dataset by the protocol's test fraction {res.experiment.protocol.test_fraction}."]


def _sdp_notes(res: Results) -> list[str]:
    """Per SDP method: the interior-point solver's reported statuses and the independent certificate of each
    solution, the duality gap of the SVM refitted on K(P*) (paper 003 eq. (12); tkbench.methods.tk.estimators)."""
    if res.rows.empty or "diagnostics" not in res.rows:
        return []
    notes = []
    ok = res.rows[res.rows["status"] == "ok"]
    for method, group in ok.groupby("method", sort=False):
        diags = [d for d in group["diagnostics"] if isinstance(d, dict) and "sdp_status" in d]
        if not diags:
            continue
        statuses = Counter(d["sdp_status"] for d in diags)
        gaps = [float(d["relative_gap"]) for d in diags if d.get("relative_gap") is not None]
        certified = sum(bool(d.get("converged")) for d in diags)
        uncertified = Counter((ds, s) for ds, s, d in zip(group["dataset"], group["size"], group["diagnostics"],
                                                          strict=True)
                              if isinstance(d, dict) and "sdp_status" in d and not d.get("converged"))
        where = ", ".join(f"{ds}" + (f" m={plots.plain(s)}" if s == s and s is not None else "") + f" ({n})"
                          for (ds, s), n in uncertified.items())
        notes.append(f"{method}: solver status " + ", ".join(f"{k} in {n}" for k, n in sorted(statuses.items()))
                     + f" of {len(diags)} runs; every solution is checked by the duality gap of the SVM refitted on "
                     f"K(P*): {certified} of {len(diags)} within tolerance"
                     + (f" (not certified: {where})" if where else "")
                     + (f"; largest relative gap {max(gaps):.1e}" if gaps else "") + ".")
    return notes


def _slope_table(res: Results, slopes: pd.DataFrame, reference: Reference | None) -> TableModel:
    ref_names = _ref_names(res)["methods"]
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
            name = ref_names.get(s["method"], s["method"])
            exps = {}
            for ref in (reference, scaling_ref):  # a table's reference file, then the papers' exponents file
                if ref is not None and not exps:
                    exps = ref.exponents(f"{name}_{tasks.get(s['dataset'], '')}") or ref.exponents(name) or {}
            field = "m_exponent" if s["axis"] == "m" else next((k for k in exps if k.endswith("_exponent")
                                                                 and k != "m_exponent"), None)
            row.append(Cell(str(exps.get(field, "-")) if field else "-"))
        rows.append(row)
    return TableModel("Fitted complexity exponents (time ~ size^slope)", cols, rows)


def _time_table(res: Results) -> TableModel | None:
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
    order = _dataset_order(res)
    out.sort(key=lambda r: (order.get(r[0].text, len(order)), float(r[1].text.split()[0].replace("full", "inf"))))
    return TableModel("Fit time per size, and speed-up measured in the same run", cols, out)


def _scaling_failures(res: Results) -> list[str]:
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
    order = _dataset_order(res)
    notes = []
    for (m, ds, status, _), where in sorted(failures.items(), key=lambda kv: order.get(kv[0][1], len(order))):
        where.sort(key=lambda w: w[0])
        labels = list(dict.fromkeys(label for _, label, _ in where))
        count = f" ({len(where)} runs)" if len(where) > len(labels) else ""
        notes.append(f"{m} on {ds} at m = {', '.join(labels)}{count}: {status}; at m = {labels[0]}: {where[0][2]}")
    return notes


CAPTIONS = {"critical_difference": "Critical-difference diagram (Demšar 2006): each method at its average rank across "
                                   "the datasets, best on the left; methods joined by a thick bar are not "
                                   "significantly different (Nemenyi, 0.05); the bar at the top is the critical "
                                   "difference."}


def figure_caption(path: Path) -> str:
    """A figure's caption: its description where one is known, else its name in words (scaling_liver -> Scaling
    liver)."""
    text = CAPTIONS.get(path.stem) or path.stem.replace("_", " ")
    return text[:1].upper() + text[1:]


def _document(title: str, parts: dict[str, list[str]], images: list[Path], fmt_name: str, out: Path) -> str:
    body = "\n".join(parts[fmt_name])
    if fmt_name == "md":
        imgs = "\n".join(f"![{figure_caption(p)}]({p.relative_to(out).as_posix()})" for p in images
                         if p.suffix == ".png")
        return f"# {title}\n\n{body}\n{imgs}\n"
    if fmt_name == "tex":
        return body
    from tkbench.report.tables import HTML_STYLE

    imgs = "\n".join(f'<figure><img src="{p.relative_to(out).as_posix()}" alt="{html_lib.escape(figure_caption(p))}"'
                     f' width="900"><figcaption>{html_lib.escape(figure_caption(p))}</figcaption></figure>'
                     for p in images if p.suffix == ".png")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html_lib.escape(title)}</title>"
            f"<style>{HTML_STYLE}</style></head><body><h1>{html_lib.escape(title)}</h1>\n{body}\n{imgs}\n"
            "</body></html>\n")


def build_report(results_dir: str | Path, formats: list[str] | None = None,
                 out_dir: str | Path | None = None, config: str | Path | None = None) -> list[Path]:
    formats = formats or ["md", "tex", "html"]
    res = load_results(results_dir, config)
    out = Path(out_dir) if out_dir else res.root / "report"
    out.mkdir(parents=True, exist_ok=True)
    exp = res.experiment
    reference = _reference(res)
    tables: list[TableModel] = []
    images: list[Path] = []
    summary = None
    if exp.kind in ("accuracy", "convergence", "surface"):
        summary = summarize(res)
        from tkbench.report.tables import metric_tables

        tables = metric_tables(summary, reference, _ref_names(res), no_data=exp.no_data, not_run=exp.not_run,
                               only_on={m.name: list(m.datasets) for m in exp.methods if m.datasets is not None},
                               least_squares=_least_squares_methods(exp))
        from tkbench.report.tables import mark_calibrated

        mark_calibrated(tables, exp.calibrated)
        from tkbench.report.paired import paired_tables

        tables += paired_tables(res, summary)
        if exp.kind == "accuracy":
            from tkbench.report.significance import significance_tables

            stats_tables, images = significance_tables(res, summary, out)
            tables += stats_tables
        if exp.kind == "convergence":
            from tkbench.report.tables import train_test_table

            train_test = train_test_table(summary, reference, _ref_names(res))
            tables += [train_test] if train_test is not None else []
        from tkbench.report.evaluation import evaluation_tables, selection_table, time_breakdown_table

        tables += evaluation_tables(res, _ref_names(res))
        tables += [t for t in (time_breakdown_table(res), selection_table(res)) if t is not None]
        fits = checks.final_fit_table(res) if exp.kind == "accuracy" else None
        if fits is not None:
            tables.append(fits)
        summary.drop(columns=["errors"]).to_csv(out / "summary.csv", index=False, float_format="%.10g")
    if exp.kind == "scaling" and not res.rows.empty:
        vary = exp.scaling.vary if exp.scaling is not None else None
        order = _dataset_order(res)  # tables and figures in the config's order
        in_order = res.rows.sort_values("dataset", key=lambda s: s.map(order), kind="stable")
        images, slopes = plots.scaling_plots(in_order, out, size_label=vary.size if vary is not None else None)
        if not slopes.empty:
            tables.append(_slope_table(res, slopes, reference))
            slopes.to_csv(out / "slopes.csv", index=False, float_format="%.10g")  # stable across BLAS builds
        times = _time_table(res)
        if times is not None:
            tables.append(times)
        if tables:
            tables[-1].notes = _scaling_failures(res) + tables[-1].notes
    if exp.kind == "convergence" and not res.rows.empty:
        images = (plots.convergence_plots(res.rows, out) + plots.booster_plots(res.rows, out)
                  + plots.evolution_plots(res.rows, out))
    if exp.kind == "surface" and not res.rows.empty:
        images = plots.surface_plots(res.rows, out)
    if exp.kind == "landscape" and not res.rows.empty:
        from tkbench.report.landscape import landscape_plots, landscape_table

        order = {m.name: i for i, m in enumerate(exp.methods)}  # the config's order
        in_order = res.rows.sort_values("method", key=lambda s: s.map(order), kind="stable")
        tables.append(landscape_table(in_order))
        images = landscape_plots(in_order, out)
    if exp.kind == "density" and not res.rows.empty:
        from tkbench.report.density import density_plots, density_table

        tables.append(density_table(res.rows))
        images = density_plots(res.rows, out)
    if tables:
        tables[-1].notes = tables[-1].notes + _notes(res, summary)
    if reference is not None and tables:
        tables[0].notes.insert(0, f"Paper numbers: {reference.title} ({reference.path.name}).")
    written = []
    title = f"{exp.name}: {exp.description}" if exp.description else exp.name
    for f in formats:
        parts = {f: [RENDERERS[f](t) for t in tables]}
        path = out / f"report.{f}"
        path.write_text(_document(title, parts, images, f, out), encoding="utf-8")
        written.append(path)
    flat = flat_rows(res)
    if not flat.empty:
        flat.to_csv(out / "rows.csv", index=False)
        flat.astype({c: str for c in ("vary_value", "error") if c in flat}).to_parquet(out / "rows.parquet",
                                                                                         index=False)
    return written + images
