"""``tkbench report --all``: every paper reproduction in one document (docs/REPRODUCTION.md and .html).

Each entry is a config under ``configs/`` whose result rows are committed under ``results/<name>/rows/``; its
report is rebuilt from those rows into ``docs/reproduction/<name>/`` and its tables and figures are collected, in
the papers' order, into one Markdown file; the HTML page is an index that links each config's own HTML report (it
used to embed them all, so every report was committed twice). Entries not run yet are listed with the command that runs
them. Nothing is re-run.
"""
from __future__ import annotations

import html as html_lib
import re
from dataclasses import dataclass
from pathlib import Path

from tkbench.errors import TkbenchError
from tkbench.report.build import build_report


@dataclass(frozen=True)
class Entry:
    config: str
    title: str
    reuse: tuple[str, ...] = ()  # results folders with the same runs (`--reuse`)
    jobs: int = 2  # workers; timing sweeps run one fit at a time so that their times are not contended
    paper: str = ""  # the key under ``papers`` of docs/reproduction.yaml this entry reproduces or checks
    paper_splits: int | None = None  # the paper's draws when the config's protocol.splits is not (docs/COST.md)
    illustrations: tuple[str, ...] = ()  # "module:function" drawing a figure from code, not rows (after the report)

    @property
    def checked(self) -> bool:
        """An investigation of a reproduction's gap (``investigate_*``), not a table or figure of the paper."""
        return self.config.startswith("investigate_")

    @property
    def command(self) -> str:
        run = f"tkbench run configs/{self.config}.yaml -j {self.jobs}"
        return " ".join([run, *(f"--reuse {r}" for r in self.reuse)])


INDEX = Path(__file__).resolve().parents[2] / "docs" / "reproduction.yaml"  # the checkout's list of entries


def load_index(root: Path | None = None) -> tuple[dict[str, str], tuple[Entry, ...]]:
    """The papers (key -> citation, in README's order) and the entries of ``<root>/docs/reproduction.yaml`` (the
    checkout's when ``root`` has none): what ``tkbench report --all`` collects; the report code names no
    family or paper itself."""
    from tkbench.errors import InputError
    from tkbench.textfile import load_yaml

    path = root / "docs" / "reproduction.yaml" if root is not None else INDEX
    path = path if path.is_file() else INDEX
    doc = load_yaml(path, "reproduction index") or {}
    try:
        papers = {str(k): str(v) for k, v in doc["papers"].items()}
        entries = tuple(Entry(config=str(e["config"]), title=str(e["title"]), paper=str(e["paper"]),
                              reuse=tuple(e.get("reuse") or ()), jobs=int(e.get("jobs", 2)),
                              paper_splits=None if e.get("paper_splits") is None else int(e["paper_splits"]),
                              illustrations=tuple(str(f) for f in e.get("illustrations") or ()))
                        for e in doc["entries"])
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise InputError(f"{path}: expected papers: {{key: citation}} and entries: [{{config, paper, title, "
                         f"reuse?, jobs?, paper_splits?, illustrations?}}] ({type(exc).__name__}: {exc})") from None
    unknown = sorted({e.paper for e in entries} - set(papers))
    if unknown:
        raise InputError(f"{path}: entries name papers {unknown} that are not under papers: {sorted(papers)}")
    return papers, entries



def load_benchmark(root: Path | None = None) -> tuple[Path | None, tuple[Entry, ...]]:
    """The ``benchmark:`` section of the index: the hand-written reading (a Markdown file, embedded at the top of
    docs/BENCHMARK.md) and the benchmark's configs (issue 51). Empty when the index has none."""
    from tkbench.errors import InputError
    from tkbench.textfile import load_yaml

    path = root / "docs" / "reproduction.yaml" if root is not None else INDEX
    path = path if path.is_file() else INDEX
    doc = (load_yaml(path, "reproduction index") or {}).get("benchmark")
    if doc is None:
        return None, ()
    try:
        reading = Path(doc["reading"]) if doc.get("reading") else None
        entries = tuple(Entry(config=str(e["config"]), title=str(e["title"]), jobs=int(e.get("jobs", 2)))
                        for e in doc["entries"])
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise InputError(f"{path}: expected benchmark: {{reading: FILE, entries: [{{config, title, jobs?}}]}} "
                         f"({type(exc).__name__}: {exc})") from None
    return reading, entries


FIGURE_SUFFIXES = (".png", ".svg")


def _drop_stale_figures(folder: Path, written: list[Path]) -> list[Path]:
    """Remove the figures in a generated folder (``docs/reproduction/<config>``, ``docs/benchmark/<config>``) that
    this build did not write: a figure the report no longer draws (its table lost its condition, a plot was
    renamed) must not stay beside the regenerated pages as if it were current. Only PNG and SVG files whose name
    (without suffix) is not one of the written files' are removed; returns them."""
    keep = {Path(p).stem for p in written}
    stale = [p for p in sorted(folder.iterdir()) if p.suffix in FIGURE_SUFFIXES and p.stem not in keep] \
        if folder.is_dir() else []
    for path in stale:
        path.unlink()
    return stale


def _section(root: Path, out: Path, entry: Entry, folder: str) -> tuple[list[str], list[Path]]:
    """One entry's Markdown section (its report rebuilt from the committed rows into ``out/folder/<config>``)."""
    md = [f"## {entry.title}", "", f"Config: `configs/{entry.config}.yaml`.", ""]
    rows = root / "results" / entry.config / "rows"
    if not (root / "configs" / f"{entry.config}.yaml").exists():
        return md + ["Not written yet.", ""], []
    if not rows.is_dir() or not any(rows.glob("*.json")):
        return md + [f"Not run yet: `{entry.command}`.", ""], []
    done, planned = _progress(root, entry.config)
    if done < planned:
        md += [f"**Partial: {done} of {planned} runs finished so far**; resume with `{entry.command}`.", ""]
    target = out / folder / entry.config
    files = build_report(root / "results" / entry.config, formats=["md"], out_dir=target,
                         config=root / "configs" / f"{entry.config}.yaml")
    _drop_stale_figures(target, files)
    md += [_body((target / "report.md").read_text(encoding="utf-8"), f"{folder}/{entry.config}"), ""]
    return md, files


def build_benchmark(root: str | Path = ".", out: str | Path = "docs") -> list[Path]:
    """docs/BENCHMARK.md: the reading (hand-written, from ``benchmark.reading``) and every benchmark config's
    report from the committed rows; nothing is re-run. Returns the files written (none without a benchmark)."""
    root, out = Path(root), Path(out)
    reading, entries = load_benchmark(root)
    if not entries:
        return []
    md = ["# The kernel-learning benchmark", "",
          "Regenerated from the committed result rows by `tkbench report --all`; nothing is re-run. Every family "
          "of tkbench beside the baselines a user would reach for and the peers they would pick instead, on one "
          "protocol (the configs' notes name every choice and reduction).", ""]
    if reading is not None and (root / reading).is_file():
        md += [(root / reading).read_text(encoding="utf-8").strip(), ""]
    written: list[Path] = []
    for entry in entries:
        section, files = _section(root, out, entry, "benchmark")
        md += section
        written += files
    out.mkdir(parents=True, exist_ok=True)
    path = out / "BENCHMARK.md"
    path.write_text("\n".join(md).rstrip() + "\n", encoding="utf-8")
    return [path, *written]


def _illustrate(spec: str, target: Path) -> tuple[list[Path], str]:
    """Call ``module:function(target) -> (files, markdown)`` named by an entry's ``illustrations``."""
    import importlib

    from tkbench.errors import InputError

    module, _, name = spec.partition(":")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise InputError(f"docs/reproduction.yaml: illustrations: {spec!r}: expected 'module:function' of a "
                         f"function drawing a figure ({type(exc).__name__}: {exc})") from None
    return fn(target)


def _body(markdown: str, prefix: str) -> str:
    """A report's Markdown without its title, headings one level down, image paths relative to the collection."""
    lines = markdown.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    text = "\n".join("#" + line if line.startswith("### ") else line for line in lines)
    return re.sub(r"!\[([^\]]*)\]\(([^)]+)\)", lambda m: f"![{m.group(1)}]({prefix}/{m.group(2)})", text)


def _progress(root: Path, name: str) -> tuple[int, int]:
    """(runs of the current plan with a recorded outcome, planned runs) for a config. A failed or timed-out run
    counts as finished: its outcome is in the report (e.g. the SDP refused for lack of memory); missing runs and
    crashes (e.g. a sweep interrupted mid-run) are what a resume still has to do."""
    from tkbench.bench.plan import make_plan
    from tkbench.bench.progress import unfinished
    from tkbench.bench.store import ResultStore
    from tkbench.config import load_config

    exp = load_config(root / "configs" / f"{name}.yaml")
    plan = make_plan(exp)
    return len(plan) - len(unfinished(exp, plan, ResultStore(root / "results" / name).rows())), len(plan)


VERDICTS = ("within 1 std", "better", "worse")
GLANCE_BEGIN = "<!-- at a glance: generated by `tkbench report --all` from the committed rows; do not edit -->"
GLANCE_END = "<!-- end of the generated table -->"


def verdict_counts(root: Path, entry: Entry) -> dict[str, int] | None:
    """How the cells of an accuracy config with paper numbers compare with the paper: counts of the verdicts of
    its metric tables (tkbench.report.tables.verdict) plus ``no std`` (the paper prints none); None when the config
    has no paper numbers or no rows."""
    from tkbench.config import load_config
    from tkbench.kinds import get_kind
    from tkbench.report.aggregate import load_results, summarize
    from tkbench.report.parts import least_squares_methods, ref_names, reference_of
    from tkbench.report.tables import metric_tables

    config = root / "configs" / f"{entry.config}.yaml"
    rows = root / "results" / entry.config / "rows"
    if not rows.is_dir() or not any(rows.glob("*.json")):
        return None
    exp = load_config(config)
    if not get_kind(exp.kind).headline or exp.reference is None:
        return None
    res = load_results(root / "results" / entry.config, config)
    tables = metric_tables(summarize(res), reference_of(res), ref_names(res),
                           least_squares=least_squares_methods(exp))
    counts = dict.fromkeys((*VERDICTS, "no std"), 0)
    for table in tables:
        if "Verdict" not in table.columns:
            continue
        at = table.columns.index("Verdict")
        for row in table.rows:
            text = row[at].text
            if text in VERDICTS:
                counts[text] += 1
            elif text.startswith("paper gives no std"):
                counts["no std"] += 1
    return counts


def at_a_glance(root: str | Path = ".") -> list[tuple[str, str, str, str]]:
    """One line per paper: (paper, its configs, runs finished / planned, how its tables compare with the paper),
    computed from the committed rows; README's table is this, written by :func:`build_all`."""
    root = Path(root)
    lines = []
    papers, index = load_index(root)
    for key, citation in papers.items():
        entries = [e for e in index if e.paper == key and (root / "configs" / f"{e.config}.yaml").exists()]
        done = planned = 0
        compared = []
        for entry in entries:  # a config not run yet counts too: its runs are planned, none finished
            rows = root / "results" / entry.config / "rows"
            try:
                d, n = _progress(root, entry.config)
            except TkbenchError:
                if rows.is_dir() and any(rows.glob("*.json")):
                    raise
                continue  # a config not written out yet (its section says so): nothing planned to count
            done, planned = done + d, planned + n
            counts = None if entry.checked else verdict_counts(root, entry)
            if counts is not None and sum(counts.values()):
                cells = sum(counts.values())
                said = f"{counts['within 1 std']} of {cells} cells within one paper std, {counts['better']} better, " \
                       f"{counts['worse']} worse"
                said += f", {counts['no std']} without a paper std" if counts["no std"] else ""
                compared.append(f"`{entry.config}`: {said}")
        configs = ", ".join(f"`{e.config}`" for e in entries)
        state = f"{done} of {planned} runs" + (" (complete)" if done == planned else " (partial)")
        lines.append((f"**{key}** {citation}", configs, state, "; ".join(compared) or "no table of paper numbers "
                      "(figures, timings, our own comparisons: REPRODUCTION.md)"))
    return lines


def glance_markdown(lines: list[tuple[str, str, str, str]]) -> str:
    out = [GLANCE_BEGIN, "", "| paper | configs | runs finished | tables against the paper |", "|---|---|---|---|"]
    out += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in lines]
    return "\n".join([*out, "", GLANCE_END])


def write_readme_glance(readme: Path, lines: list[tuple[str, str, str, str]]) -> bool:
    """Replace README's generated block (between GLANCE_BEGIN and GLANCE_END) with ``lines``; False when README
    has no such block."""
    if not readme.is_file():
        return False
    text = readme.read_text(encoding="utf-8")
    if GLANCE_BEGIN not in text or GLANCE_END not in text:
        return False
    head, rest = text.split(GLANCE_BEGIN, 1)
    tail = rest.split(GLANCE_END, 1)[1]
    readme.write_text(head + glance_markdown(lines) + tail, encoding="utf-8")
    return True


def build_all(root: str | Path = ".", out: str | Path = "docs") -> list[Path]:
    root, out = Path(root), Path(out)
    md = ["# Reproducing the papers", "",
          "Regenerated from the committed result rows by `tkbench report --all` (or `make reproduce-report`); "
          "nothing is re-run. Each section is one config under `configs/`; its notes list every deviation from the "
          "paper's protocol. Verdicts: *within 1 std* when our mean is within one of the paper's standard "
          "deviations of the paper's mean, otherwise *better* or *worse*; where the paper prints no std, the "
          "verdict says so and Δ is the comparison. A cell from one run shows (n = 1) and no std.", ""]
    html = []
    toc: list[tuple[str, str]] = []
    written: list[Path] = []
    for entry in load_index(root)[1]:
        md += [f"## {entry.title}", "", f"Config: `configs/{entry.config}.yaml`.", ""]
        toc.append((entry.config, entry.title))
        html.append(f'<h2 id="{entry.config}">{html_lib.escape(entry.title)} <a href="#{entry.config}" '
                    f'class="anchor">#</a></h2><p>Config: <code>configs/{entry.config}.yaml</code> · '
                    '<a href="#contents">contents</a></p>')
        rows = root / "results" / entry.config / "rows"
        if not (root / "configs" / f"{entry.config}.yaml").exists():
            md += ["Not written yet.", ""]
            html.append("<p>Not written yet.</p>")
            continue
        if not rows.is_dir() or not any(rows.glob("*.json")):
            md += [f"Not run yet: `{entry.command}`.", ""]
            html.append(f"<p>Not run yet: <code>{html_lib.escape(entry.command)}</code></p>")
            continue
        done, planned = _progress(root, entry.config)
        if done < planned:
            text = f"**Partial: {done} of {planned} runs finished so far**; resume with `{entry.command}`."
            md += [text, ""]
            html.append(f"<p><b>Partial: {done} of {planned} runs finished so far</b>; resume with "
                        f"<code>{html_lib.escape(entry.command)}</code></p>")
        target = out / "reproduction" / entry.config
        files = build_report(root / "results" / entry.config, formats=["md", "html"], out_dir=target,
                             config=root / "configs" / f"{entry.config}.yaml")  # its current plan and notes
        written += files
        mine = list(files)
        prefix = f"reproduction/{entry.config}"
        md += [_body((target / "report.md").read_text(encoding="utf-8"), prefix), ""]
        for spec in entry.illustrations:  # figures drawn from the code itself (a kernel's shape), after the report
            files, text = _illustrate(spec, target)
            written += files
            mine += files
            md += [re.sub(r"\]\((?!https?:)([^)]+)\)", lambda mt, prefix=prefix: f"]({prefix}/{mt.group(1)})", text), ""]
        _drop_stale_figures(target, mine)
        # the HTML page links each config's own report instead of embedding it (each was committed twice)
        page = (target / "report.html").read_text(encoding="utf-8")
        tables = re.findall(r'<h3 id="([^"]+)">(.*?)</h3>', page)
        links = "".join(f'<li><a href="{prefix}/report.html#{key}">{title}</a></li>' for key, title in tables)
        html.append(f'<p><a href="{prefix}/report.html"><b>Open the report</b></a> (tables, statistics, notes and '
                    f'figures; <a href="{prefix}/report.md">Markdown</a>)</p>' + (f"<ul>{links}</ul>" if links else ""))
    out.mkdir(parents=True, exist_ok=True)
    md_path, html_path = out / "REPRODUCTION.md", out / "REPRODUCTION.html"
    glance = at_a_glance(root)
    md[1:1] = ["", "## At a glance", "", glance_markdown(glance), ""]
    md_path.write_text("\n".join(md).rstrip() + "\n", encoding="utf-8")
    from tkbench.report.cost import cost_markdown

    cost_path = out / "COST.md"
    cost_path.write_text(cost_markdown(root, load_index(root)[1]), encoding="utf-8")
    written.append(cost_path)
    written += build_benchmark(root, out)
    if write_readme_glance(root / "README.md", glance):
        written.append(root / "README.md")
    from tkbench.report.tables import HTML_STYLE

    contents = ('<nav class="toc" id="contents"><b>Contents</b><ol>' + "".join(
        f'<li><a href="#{key}">{html_lib.escape(title)}</a></li>' for key, title in toc) + "</ol></nav>")
    intro = ("<p>Regenerated from the committed result rows by <code>tkbench report --all</code>; nothing is re-run. "
             "Each section links its config's report. In the reports, red cells: runs that failed, timed out, "
             "crashed or are missing; amber: final fits that stopped before their solver's stop rule. The whole "
             "text in one file: <a href=\"REPRODUCTION.md\">REPRODUCTION.md</a>.</p>")
    html_path.write_text("<!doctype html><html><head><meta charset='utf-8'><title>Reproducing the papers</title>"
                         f"<style>{HTML_STYLE}a.anchor{{color:#bbb;text-decoration:none;font-size:0.7em}}</style>"
                         "</head><body><h1>Reproducing the papers</h1>\n" + intro + contents + "\n"
                         + "\n".join(html) + "\n</body></html>\n", encoding="utf-8")
    return [md_path, html_path, *written]
