"""``tkbench report``: tables in md / tex / html, plots for scaling and convergence experiments, CSV exports."""
from __future__ import annotations

import html as html_lib
from collections import Counter
from pathlib import Path

import pandas as pd

from tkbench.data import registry as data_registry
from tkbench.errors import first_line
from tkbench.kinds import get_kind
from tkbench.report import checks, plots
from tkbench.report.aggregate import Results, flat_rows, load_results
from tkbench.report.parts import reference_of
from tkbench.report.tables import RENDERERS


def own_tunings(m, protocol) -> dict:
    """A method's own ``tune_on_first`` where it differs from the protocol's (label -> first k splits; label None:
    every dataset); none for a method without a grid."""
    own = m.tune_on_first if isinstance(m.tune_on_first, dict) else {None: m.tune_on_first}
    return {label: k for label, k in own.items() if k is not None and k != protocol.tune_on_first and m.grid != {}}


def cut_splits(m, limit: int) -> dict:
    """A method's ``splits`` below ``limit`` (label -> splits; label None: every dataset)."""
    own = m.splits if isinstance(m.splits, dict) else {None: m.splits}
    return {label: k for label, k in own.items() if isinstance(k, int) and k < limit}


def method_notes(exp) -> list[str]:
    """The reductions and overrides each method of ``exp`` declares (datasets, max_train, tune_on_first,
    cv_max_train, splits, per-dataset params and grids), one line each, as printed under the tables."""
    p = exp.protocol
    kind = get_kind(exp.kind)
    notes: list[str] = []
    for m in exp.methods:
        if m.datasets is not None:
            notes.append(f"{m.name}: run on {', '.join(m.datasets)} only")
        if m.max_train is not None:
            caps = m.max_train if isinstance(m.max_train, dict) else {"every dataset": m.max_train}
            notes.append(f"{m.name}: trained on at most " + ", ".join(f"{n} rows ({d})" for d, n in caps.items())
                         + " of each split's training part (a seeded subset); tested on the full test part")
        for label, k in own_tunings(m, p).items():
            where = "the first split's training part" if k == 1 else f"the training parts of the first {k} splits"
            on = "per dataset" if label is None else f"on {label}"
            notes.append(f"{m.name}: hyper-parameters chosen once {on} by {p.cv_folds}-fold CV on {where} "
                         "only, " + ("" if k == 1 else "the median choice ") + "used on every split (cost)")
        if m.cv_max_train is not None:
            caps = m.cv_max_train if isinstance(m.cv_max_train, dict) else {"every dataset": m.cv_max_train}
            notes.append(f"{m.name}: hyper-parameters chosen by CV on at most " + ", ".join(
                f"{n} rows ({d})" for d, n in caps.items()) + " of each split's training part (the seeded subset "
                "a max_train of that size uses), the final fit on all of them")
        cut = cut_splits(m, p.splits) if kind.split_limits else {}
        if None in cut:
            notes.append(f"{m.name}: only the first {cut[None]} of the {p.splits} splits (cost)")
        elif cut:
            notes.append(f"{m.name}: " + "; ".join(f"only the first {k} of the {p.splits} splits on {label}"
                                                   for label, k in cut.items()) + " (cost)")
        for label, over in m.per_dataset.items():
            notes.append(f"{m.name} on {label}: " + ", ".join(f"{k}={v}" for k, v in over.items())
                         + " (instead of the method's params)")
        for label, grid in m.per_dataset_grid.items():
            notes.append(f"{m.name} on {label}: CV grid " + ", ".join(f"{k} in {v}" for k, v in grid.items())
                         + " (instead of the method's grid)")
    return notes


def _notes(res: Results, summary: pd.DataFrame | None) -> list[str]:
    exp = res.experiment
    notes = list(exp.notes)
    p = exp.protocol
    kind = get_kind(exp.kind)
    protocol = kind.protocol_note(exp)
    if protocol is None:  # the kinds trained on train/test splits: the shared protocol line
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
        protocol = (f"Protocol: {p.splits} {kind_of_splits}, test fraction {p.test_fraction}, seed {p.seed}; "
                    f"{tuning}; mean ± sample std over the ok splits; fit time is the final fit"
                    + (" with the chosen hyper-parameters." if len(fixed) < len(exp.methods) else "."))
    if protocol:
        notes.append(protocol)
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
        if sub:
            bits.append(kind.subsample_note(sub))
        if ds.splits is not None and ds.splits < p.splits and kind.split_limits:
            bits.append(f"only the first {ds.splits} of the {p.splits} splits (cost)")
        if bits:
            notes.append(f"{ds.label}: " + "; ".join(bits))
    notes += method_notes(exp)
    if summary is not None:
        for _, line in summary.iterrows():
            for error in line["errors"][:2]:
                notes.append(f"{line['dataset']}/{line['method']} not ok: {first_line(error, 200)}")
    notes += kind.extra_notes(res, reference_of(res))
    notes += _sdp_notes(res) + checks.convergence_notes(res) + checks.grid_edge_notes(res) + checks.empty_notes(res)
    notes += checks.solver_grid_notes(res) + checks.timing_notes(res)
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
    reference = reference_of(res)
    tables, images, summary = get_kind(exp.kind).tables(res, out, reference)
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
