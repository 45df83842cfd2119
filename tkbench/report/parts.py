"""Report pieces shared by the experiment kinds (:mod:`tkbench.kinds`) and the report builder: the paper reference
of a results folder, name maps, and the summary tables of the kinds whose runs are train/test splits."""
from __future__ import annotations

import pandas as pd

from tkbench.report.aggregate import Results, summarize
from tkbench.report.reference import Reference


def reference_of(res: Results) -> Reference | None:
    path = res.experiment.reference_path()
    return Reference(path) if path is not None and path.exists() else None


def dataset_order(res: Results) -> dict[str, int]:
    """Dataset label -> its position in the config (tables, notes and figures follow it)."""
    return {d.label: i for i, d in enumerate(res.experiment.datasets)}


def ref_names(res: Results) -> dict[str, dict[str, str]]:
    exp = res.experiment
    return {"datasets": {d.label: d.reference or d.label for d in exp.datasets},
            "methods": {m.name: m.reference or m.name for m in exp.methods}}


def least_squares_methods(exp) -> set[str]:
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


def summary_tables(res: Results, reference: Reference | None) -> tuple[pd.DataFrame, list]:
    """The summary of a folder's cells and its first tables: one per metric beside the paper (cells calibrated on
    the paper's own numbers marked), then the paired comparisons."""
    from tkbench.report.paired import paired_tables
    from tkbench.report.tables import mark_calibrated, metric_tables

    exp = res.experiment
    summary = summarize(res)
    tables = metric_tables(summary, reference, ref_names(res), no_data=exp.no_data, not_run=exp.not_run,
                           only_on={m.name: list(m.datasets) for m in exp.methods if m.datasets is not None},
                           least_squares=least_squares_methods(exp))
    mark_calibrated(tables, exp.calibrated)
    return summary, tables + paired_tables(res, summary)


def size_notes(res: Results, reference: Reference | None) -> list[str]:
    """Our training / test sizes beside the paper's where its reference file lists them (``datasets: {name: {m,
    m_test}}``, e.g. paper 003 Table 2) and they differ by more than 2 %: a paper may say "80/20" in its text and
    list other sizes in its table. Ours are the largest training part any method of the cell saw (a method's
    ``max_train`` cap is a note of its own) and the test part."""
    if reference is None or res.rows.empty or "n_train" not in res.rows:
        return []
    sizes = reference.data.get("datasets") or {}
    names = ref_names(res)
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


