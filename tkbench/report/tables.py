"""Accuracy / MSE tables: one content model, rendered as Markdown, LaTeX or HTML.

Per dataset x method: mean ± std of the metric over the ok splits, the paper's mean ± std and our difference
(when the config names a reference file), fit time mean ± std (and the paper's), CV time, the number of ok splits
out of those planned, and any failed / timeout / crashed / missing counts. The best mean per dataset is bold (every
method tied at it). A cell from a single run shows "(n = 1)" and no std.
"""
from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass, field

import pandas as pd

from tkbench.report.reference import Reference

METRIC_TITLES = {"accuracy": "Test-set accuracy (%)", "mse": "Test MSE",
                 "ls_error": "Test least-squares error (labels scaled to [-1, 1], decisions clipped)"}
LOWER_IS_BETTER = ("mse", "ls_error")


@dataclass
class Cell:
    text: str
    bold: bool = False
    flag: str = ""  # "bad" (runs failed, timed out, crashed or missing) or "warn" (fits short of their tolerance)


@dataclass
class TableModel:
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    notes: list[str] = field(default_factory=list)


def fmt(mean: float, std: float | None = None, digits: int = 2) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "-"
    text = _num(mean, digits)
    if std is not None and not math.isnan(std):
        text += f" ± {_num(std, digits)}"
    return text


def fmt_time(mean: float, std: float | None = None) -> str:
    """Seconds to 3 significant digits (times span 1e-3 .. 1e4 s in one table)."""
    if mean is None or math.isnan(mean):
        return "-"
    text = _sig(mean)
    if std is not None and not math.isnan(std):
        text += f" ± {_sig(std)}"
    return text


def _sig(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1e4 else f"{x:.0f}"


def _num(x: float, digits: int) -> str:
    if x != 0 and (abs(x) >= 1e5 or abs(x) < 10 ** (-digits)):
        return f"{x:.{digits}e}"
    return f"{x:.{digits}f}"


def _status(line: pd.Series) -> str:
    parts = [f"{int(line[f'n_{s}'])} {s}" for s in ("failed", "timeout", "crashed", "missing") if line[f"n_{s}"]]
    return ", ".join(parts) or "-"


def _paper_only_row(dataset: str, method: str, status: str, paper, as_error: bool, digits: int) -> list[Cell]:
    """A row with the paper's number only: a data set we have no data for, or a method we do not run."""
    paper_mean = 100.0 - paper.metric[0] if as_error else paper.metric[0]
    return [Cell(dataset), Cell(method), Cell(status), Cell(fmt(paper_mean, paper.metric[1], digits)),
            Cell("-"), Cell("-"), Cell("-"), Cell(fmt_time(*paper.time) if paper.time else "-"), Cell("-"),
            Cell("0/0"), Cell(status)]


def _not_run_rows(dataset: str, not_run: list[str] | None, reference: Reference | None,
                  ref_names: dict[str, dict[str, str]], metric: str, as_error: bool, digits: int) -> list[list[Cell]]:
    """The paper's rows of the reference methods we do not run, for one of our data sets."""
    out = []
    for ref_method in (not_run or []) if reference is not None else []:
        paper = reference.lookup(ref_names["datasets"].get(dataset, dataset), ref_method, metric)
        if paper is not None and paper.metric is not None:
            out.append(_paper_only_row(dataset, ref_method, "not run", paper, as_error, digits))
    return out


def metric_tables(summary: pd.DataFrame, reference: Reference | None, ref_names: dict[str, dict[str, str]],
                  digits: dict[str, int] | None = None, no_data: list[str] | None = None,
                  not_run: list[str] | None = None, only_on: dict[str, list[str]] | None = None,
                  least_squares: set[str] | None = None) -> list[TableModel]:
    """One table per metric (accuracy datasets, then MSE datasets), methods as rows within each dataset; after
    each data set's rows the paper's rows of the reference methods in ``not_run`` (marked "not run"), and at the
    end the paper's rows for the reference datasets in ``no_data``, marked "no data", for every method but those
    that ``only_on`` restricts to other data sets (method -> its config's ``datasets``: paper 002's HGK_cv, run
    on cycle only, gets no row under cod)."""
    digits = {"accuracy": 2, "mse": 3, "ls_error": 5, **(digits or {})}
    tables = []
    for metric in ("accuracy", "mse", "ls_error"):
        part = summary[summary["metric"] == metric]
        if part.empty:
            continue
        # a paper that prints error rates (error_percent) is compared in error %: 100 - accuracy
        as_error = metric == "accuracy" and reference is not None and reference.data.get("metric") == "error_percent"
        if as_error:
            part = part.assign(metric_mean=100.0 - part["metric_mean"])
        heading = "Test-set error (%)" if as_error else METRIC_TITLES[metric]
        cols = ["Dataset", "Method", heading]
        if reference is not None:
            cols += ["Paper", "Δ (ours − paper)", "Verdict"]
        cols += ["Fit time (s)"]
        if reference is not None:
            cols += ["Paper time (s)"]
        cols += ["CV time (s)", "Splits ok", "Not ok"]
        rows = []
        faster, timed, faster_matching = 0, 0, 0

        previous = None
        for _, line in part.iterrows():
            if previous is not None and line["dataset"] != previous:
                rows += _not_run_rows(previous, not_run, reference, ref_names, metric, as_error, digits[metric])
            previous = line["dataset"]
            row = [Cell(line["dataset"]), Cell(line["method"]),
                   Cell(fmt(line["metric_mean"], line["metric_std"], digits[metric]) + _one(line.get("n_ok")),
                        bool(line["best"]))]
            paper = None
            if reference is not None:
                paper = reference.lookup(ref_names["datasets"].get(line["dataset"], line["dataset"]),
                                         ref_names["methods"].get(line["method"], line["method"]), metric)
                if paper is not None and paper.metric is not None:
                    paper_mean = 100.0 - paper.metric[0] if as_error else paper.metric[0]
                    diff = line["metric_mean"] - paper_mean
                    row += [Cell(fmt(paper_mean, paper.metric[1], digits[metric])), Cell(_signed(diff, digits[metric])),
                            Cell(verdict(-diff if as_error else diff, paper.metric[1], metric))]
                else:
                    row += [Cell(paper.note if paper and paper.note else "-"), Cell("-"), Cell("-")]
            row.append(Cell(fmt_time(line["fit_mean"], line["fit_std"])))
            if reference is not None:
                row.append(Cell(fmt_time(*paper.time) if paper is not None and paper.time else "-"))
                if paper is not None and paper.time and not math.isnan(line["fit_mean"]):
                    timed += 1
                    if line["fit_mean"] < paper.time[0]:
                        faster += 1
                        faster_matching += row[5].text in ("within 1 std", "better")
            status = _status(line)
            row += [Cell(fmt_time(line["cv_mean"])), Cell(f"{int(line['n_ok'])}/{int(line['planned'])}",
                                                          flag="bad" if status != "-" else ""),
                    Cell(status, flag="bad" if status != "-" else "")]
            rows.append(row)
        if previous is not None:
            rows += _not_run_rows(previous, not_run, reference, ref_names, metric, as_error, digits[metric])
        for key in (no_data or []) if reference is not None else []:
            methods = [(m, r) for m, r in ref_names["methods"].items() if key in (only_on or {}).get(m, [key])]
            methods += [(m, m) for m in not_run or []]
            for method, ref_method in methods:
                paper = reference.lookup(key, ref_method, metric)
                if paper is not None and paper.metric is not None:
                    rows.append(_paper_only_row(key, method, "no data", paper, as_error, digits[metric]))
        title = heading + (" (lower is better)" if metric in LOWER_IS_BETTER or as_error else "")
        notes = [f"Fit time below the paper's on {faster} of {timed} rows ({faster_matching} of them with a "
                 "metric within the paper's std or better); different machines: see the paper's hardware."] \
            if timed else []
        tables.append(TableModel(title, cols, rows, notes))
        if metric == "accuracy" and "rmse_pm1_mean" in part and part["rmse_pm1_mean"].notna().any():
            rmse = rmse_table(part, least_squares)
            if rmse is not None:
                tables.append(rmse)
    return tables


def mark_calibrated(tables: list[TableModel], calibrated) -> None:
    """Mark each (dataset, method) cell that a choice calibrated on the paper's own numbers touches with [cN] after
    its metric, and print "[cN] calibrated on the paper's numbers: ..." under the table (config ``calibrated``)."""
    for table in tables:
        used: dict[int, str] = {}
        for row in table.rows:
            if len(row) < 3:
                continue
            marks = [i for i, cal in enumerate(calibrated, 1) if cal.applies(row[0].text, row[1].text)]
            if marks and row[2].text not in ("-", "not run", "no data"):
                row[2].text += " " + "".join(f"[c{i}]" for i in marks)
                used.update({i: calibrated[i - 1].note for i in marks})
        table.notes[:0] = [f"[c{i}] calibrated on the paper's own numbers: {note}" for i, note in sorted(used.items())]


def train_test_table(summary: pd.DataFrame, reference: Reference | None,
                     ref_names: dict[str, dict[str, str]]) -> TableModel | None:
    """Training against test accuracy (or error %, when the paper prints error rates) per (dataset, method),
    beside the paper's when its reference gives ``train_accuracy``: the over-fitting that a complexity control
    (paper 004 section 9.4) is meant to prevent shows as the gap."""
    part = summary[summary["metric"] == "accuracy"]
    if part.empty or "train_accuracy_mean" not in part or not part["train_accuracy_mean"].notna().any():
        return None
    as_error = reference is not None and reference.data.get("metric") == "error_percent"
    word = "error" if as_error else "accuracy"

    def shown(x: float) -> float:
        return 100.0 - x if as_error else x

    rows = []
    for _, line in part.iterrows():
        paper = None
        if reference is not None:
            paper = reference.lookup(ref_names["datasets"].get(line["dataset"], line["dataset"]),
                                     ref_names["methods"].get(line["method"], line["method"]), "accuracy")
        train, test = shown(line["train_accuracy_mean"]), shown(line["metric_mean"])
        row = [Cell(line["dataset"]), Cell(line["method"]), Cell(fmt(train, line["train_accuracy_std"]) + _one(line.get("n_ok"))),
               Cell(fmt(test, line["metric_std"]) + _one(line.get("n_ok"))), Cell(_signed(test - train if as_error else train - test, 2))]
        if reference is not None:
            row += [Cell(fmt(shown(paper.train[0]), paper.train[1]) if paper and paper.train else "-"),
                    Cell(fmt(shown(paper.metric[0]), paper.metric[1]) if paper and paper.metric else "-")]
        rows.append(row)
    cols = ["Dataset", "Method", f"Train {word} (%)", f"Test {word} (%)", "Gap"]
    if reference is not None:
        cols += [f"Paper train {word} (%)", f"Paper test {word} (%)"]
    return TableModel(f"Training and test {word}", cols, rows,
                      ["Gap: how much worse the test part does than the training part (mean over the ok splits)."])


def rmse_table(part: pd.DataFrame, least_squares: set[str] | None = None) -> TableModel | None:
    """RMSE of the decision values on -1 / +1 labels (binary classification), best (lowest) per dataset in bold,
    for the methods in ``least_squares`` (those whose decision values are fitted to the labels; None: every
    method with a value); None when no such method has a value."""
    part = part[part["rmse_pm1_mean"].notna()]
    if least_squares is not None:
        part = part[part["method"].isin(least_squares)]
    if part.empty:
        return None
    rows = []
    for ds, group in part.groupby("dataset", sort=False):
        best = group["rmse_pm1_mean"].min()
        for _, line in group.iterrows():
            rows.append([Cell(ds), Cell(line["method"]), Cell(fmt(line["rmse_pm1_mean"], line["rmse_pm1_std"], 3),
                                                             line["rmse_pm1_mean"] == best)])
    return TableModel("Test RMSE of the decision values on ±1 labels (lower is better)",
                      ["Dataset", "Method", "RMSE"], rows,
                      ["Binary classification: root mean squared error of the decision function against the labels "
                       "coded -1 / +1, the regression error of methods trained by regression on those labels (only "
                       "those are listed: for a margin classifier or a forest the decision values are on another "
                       "scale)."])


NO_PAPER_STD = "paper gives no std: see Δ"


def verdict(diff: float, paper_std: float, metric: str) -> str:
    """'within 1 std' when |ours - paper| <= the paper's std over splits; otherwise 'better' or 'worse'
    (higher accuracy, lower MSE is better). Without a std from the paper (NaN; e.g. paper 004's digits tables)
    there is no scale to judge a difference on: the verdict says so and the Δ column carries the comparison."""
    if diff is None or math.isnan(diff):
        return "-"
    if paper_std is None or math.isnan(paper_std):
        return NO_PAPER_STD
    if abs(diff) <= paper_std:
        return "within 1 std"
    return "better" if (diff > 0) == (metric == "accuracy") else "worse"


def _one(n_ok) -> str:
    """The mark of a cell that rests on a single run (no std to show)."""
    return " (n = 1)" if n_ok == 1 else ""


def _signed(x: float, digits: int) -> str:
    return "-" if math.isnan(x) else f"{x:+.{digits}f}"


def render_md(table: TableModel) -> str:
    lines = [f"### {table.title}", "", "| " + " | ".join(table.columns) + " |",
             "|" + "|".join("---" for _ in table.columns) + "|"]
    for row in table.rows:
        lines.append("| " + " | ".join(f"**{c.text}**" if c.bold else c.text for c in row) + " |")
    lines += [""] + [f"- {n}" for n in table.notes]
    return "\n".join(lines).rstrip() + "\n"


_TEX_ESCAPE = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
               "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}


def tex_escape(text: str) -> str:
    out = "".join(_TEX_ESCAPE.get(ch, ch) for ch in text)
    return out.replace("±", r"$\pm$").replace("Δ", r"$\Delta$").replace("−", "-")


def render_tex(table: TableModel) -> str:
    spec = "ll" + "r" * (len(table.columns) - 2)
    lines = [r"\begin{table}[ht]", r"\centering", rf"\caption{{{tex_escape(table.title)}}}",
             rf"\begin{{tabular}}{{{spec}}}", r"\hline",
             " & ".join(tex_escape(c) for c in table.columns) + r" \\", r"\hline"]
    previous = None
    for row in table.rows:
        if previous is not None and row[0].text != previous:
            lines.append(r"\hline")
        previous = row[0].text
        cells = [rf"\textbf{{{tex_escape(c.text)}}}" if c.bold else tex_escape(c.text) for c in row]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\hline", r"\end{tabular}"]
    if table.notes:
        lines.append(r"\par\smallskip\footnotesize " + r" \\ ".join(tex_escape(n) for n in table.notes))
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


_NUMERIC = re.compile(r"^[-+−]?(\d|\.\d)|^\*\*\d|^-$|^\d+\s*/\s*\d+$")


def _html_class(cell: Cell) -> str:
    """Numbers right-aligned, text left-aligned; failed / non-converged cells marked."""
    classes = ["num" if _NUMERIC.match(cell.text.strip()) else "text"]
    if cell.flag:
        classes.append(cell.flag)
    return " ".join(classes)


def anchor(title: str) -> str:
    """An HTML id for a heading: lower case, words joined by hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:80] or "section"


def render_html(table: TableModel) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = []
    for row in table.rows:
        cells = "".join(f'<td class="{_html_class(c)}">' + (f"<b>{html.escape(c.text)}</b>" if c.bold
                                                             else html.escape(c.text)) + "</td>" for c in row)
        body.append(f"<tr>{cells}</tr>")
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in table.notes)
    return (f'<h3 id="{anchor(table.title)}">{html.escape(table.title)}</h3>\n<table>\n<thead><tr>{head}</tr></thead>'
            "\n<tbody>\n" + "\n".join(body) + "\n</tbody>\n</table>\n" + (f"<ul>{notes}</ul>\n" if notes else ""))


# one style for every HTML report: numbers right, text left, failed runs red, fits short of tolerance amber
HTML_STYLE = ("body{font-family:system-ui,sans-serif;max-width:1250px;margin:2em auto;padding:0 1em;line-height:1.4;"
              "color:#222}table{border-collapse:collapse;margin:0.5em 0 0.3em;font-size:0.92em}"
              "th{background:#f0f2f5;position:sticky;top:0}td,th{border:1px solid #d0d4da;padding:3px 8px}"
              "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.text{text-align:left}"
              "td.bad{background:#fde2e1}td.warn{background:#fff3cd}tbody tr:hover{background:#f7f9fc}"
              "ul{font-size:0.88em;color:#444}figure{margin:1em 0}figure img{max-width:100%;height:auto;"
              "border:1px solid #e3e6ea}figcaption{font-size:0.9em;color:#444}nav.toc{background:#f7f9fc;"
              "border:1px solid #e3e6ea;padding:0.5em 1.5em;margin:1em 0}nav.toc li{margin:0.15em 0}"
              "h2{border-bottom:2px solid #d0d4da;padding-bottom:0.2em;margin-top:2em}")


RENDERERS = {"md": render_md, "tex": render_tex, "html": render_html}
