"""``tkbench report``: tables in md / tex / html, plots for scaling and convergence experiments, CSV exports."""
from __future__ import annotations

import html as html_lib
from collections import Counter
from pathlib import Path

import pandas as pd

from tkbench.data import registry as data_registry
from tkbench.report import plots
from tkbench.report.aggregate import Results, flat_rows, load_results, summarize
from tkbench.report.reference import Reference
from tkbench.report.tables import RENDERERS, Cell, TableModel, fmt_time


def _reference(res: Results) -> Reference | None:
    path = res.experiment.reference_path()
    return Reference(path) if path is not None and path.exists() else None


def _ref_names(res: Results) -> dict[str, dict[str, str]]:
    exp = res.experiment
    return {"datasets": {d.label: d.reference or d.label for d in exp.datasets},
            "methods": {m.name: m.reference or m.name for m in exp.methods}}


def _notes(res: Results, summary: pd.DataFrame | None) -> list[str]:
    exp = res.experiment
    notes = list(exp.notes)
    p = exp.protocol
    if exp.kind != "scaling":
        notes.append(f"Protocol: {p.splits} random splits, test fraction {p.test_fraction}, seed {p.seed}; "
                     f"hyper-parameters by {p.cv_folds}-fold CV on the training part only; mean ± sample std over "
                     "the ok splits; fit time is the final fit with the chosen hyper-parameters.")
    for ds in exp.datasets:
        bits = []
        if ds.name in data_registry.registry():
            entry = data_registry.registry()[ds.name]
            _, chosen = data_registry.resolve_options(ds.name, ds.options)
            if chosen:
                bits.append("options " + ", ".join(f"{k}={v}" for k, v in chosen.items()))
            if entry.get("notes"):
                bits.append(entry["notes"])
        elif ds.options:
            bits.append("synthetic, options " + ", ".join(f"{k}={v}" for k, v in ds.options.items()))
        sub = ds.subsample or p.subsample
        if sub:
            bits.append(f"subsampled to {sub} rows per split")
        if bits:
            notes.append(f"{ds.label}: " + "; ".join(bits))
    if summary is not None:
        for _, line in summary.iterrows():
            for error in line["errors"][:2]:
                notes.append(f"{line['dataset']}/{line['method']} not ok: {error.splitlines()[0][:200]}")
    if res.stale:
        notes.append(f"{res.stale} stored row(s) from an earlier version of the config were ignored.")
    if not res.rows.empty and "provenance" in res.rows:
        prov = res.rows["provenance"].dropna()
        if len(prov):
            shas = Counter(f"{p.get('git_sha', '?')[:10] if p.get('git_sha') else '?'}"
                           f"{'+dirty' if p.get('git_dirty') else ''}" for p in prov)
            first = prov.iloc[0]
            notes.append(f"Machine: {first.get('cpu')} ({first.get('cpu_count')} cores), "
                         f"{first.get('workers')} worker(s) x {first.get('blas_threads')} BLAS thread(s); "
                         f"tkbench {first.get('tkbench_version')} at {', '.join(shas)}; "
                         f"scikit-learn {first.get('packages', {}).get('scikit-learn')}.")
    return notes


def _slope_table(res: Results, slopes: pd.DataFrame, reference: Reference | None) -> TableModel:
    ref_names = _ref_names(res)["methods"]
    tasks = dict(zip(res.planned["dataset"], res.planned["task"], strict=False)) if len(res.planned) else {}
    cols = ["Dataset", "Method", "Axis", "Fixed", "Fitted slope", "Slope, two largest", "Points", "Largest size",
            "Mean time there (s)", "Peak RSS there (MB)", "Iterations there"]
    if reference is not None:
        cols.append("Paper exponent")

    def num(x, fmt):
        return "-" if x is None or x != x else format(x, fmt)

    rows = []
    for _, s in slopes.iterrows():
        row = [Cell(str(s["dataset"])), Cell(str(s["method"])), Cell(s["axis"]), Cell(str(s["fixed"])),
               Cell(num(s["slope"], ".2f")), Cell(num(s["tail_slope"], ".2f")), Cell(str(s["points"])),
               Cell(f"{s['axis']}={s['max_size']}"), Cell(fmt_time(s["max_seconds"])),
               Cell(num(s.get("peak_rss_mb"), ".0f")), Cell(num(s.get("iterations"), ".1f"))]
        if reference is not None:
            name = ref_names.get(s["method"], s["method"])
            exps = reference.exponents(f"{name}_{tasks.get(s['dataset'], '')}") or reference.exponents(name) or {}
            field = "m_exponent" if s["axis"] == "m" else next((k for k in exps if k.endswith("_exponent")
                                                                 and k != "m_exponent"), None)
            row.append(Cell(str(exps.get(field, "-")) if field else "-"))
        rows.append(row)
    return TableModel("Fitted complexity exponents (time ~ size^slope)", cols, rows)


def _document(title: str, parts: dict[str, list[str]], images: list[Path], fmt_name: str, out: Path) -> str:
    body = "\n".join(parts[fmt_name])
    if fmt_name == "md":
        imgs = "\n".join(f"![{p.stem}]({p.relative_to(out).as_posix()})" for p in images if p.suffix == ".png")
        return f"# {title}\n\n{body}\n{imgs}\n"
    if fmt_name == "tex":
        return body
    imgs = "\n".join(f'<figure><img src="{p.relative_to(out).as_posix()}" alt="{p.stem}" width="560">'
                     f"<figcaption>{p.stem}</figcaption></figure>" for p in images if p.suffix == ".png")
    style = ("body{font-family:sans-serif;max-width:1200px;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:nth-child(-n+2){text-align:left}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html_lib.escape(title)}</title>"
            f"<style>{style}</style></head><body><h1>{html_lib.escape(title)}</h1>\n{body}\n{imgs}\n</body></html>\n")


def build_report(results_dir: str | Path, formats: list[str] | None = None,
                 out_dir: str | Path | None = None) -> list[Path]:
    formats = formats or ["md", "tex", "html"]
    res = load_results(results_dir)
    out = Path(out_dir) if out_dir else res.root / "report"
    out.mkdir(parents=True, exist_ok=True)
    exp = res.experiment
    reference = _reference(res)
    tables: list[TableModel] = []
    images: list[Path] = []
    summary = None
    if exp.kind in ("accuracy", "convergence"):
        summary = summarize(res)
        from tkbench.report.tables import metric_tables

        tables = metric_tables(summary, reference, _ref_names(res))
        summary.drop(columns=["errors"]).to_csv(out / "summary.csv", index=False)
    if exp.kind == "scaling" and not res.rows.empty:
        vary = exp.scaling.vary if exp.scaling is not None else None
        images, slopes = plots.scaling_plots(res.rows, out, size_label=vary.size if vary is not None else None)
        if not slopes.empty:
            tables.append(_slope_table(res, slopes, reference))
            slopes.to_csv(out / "slopes.csv", index=False)
    if exp.kind == "convergence" and not res.rows.empty:
        images = plots.convergence_plots(res.rows, out)
    if tables:
        tables[-1].notes = _notes(res, summary)
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
