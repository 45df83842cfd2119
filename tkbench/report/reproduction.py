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

from tkbench.report.build import build_report

# the papers, in the order of README's "at a glance" table (their text: ../shared/papers, README there)
PAPERS = {
    "000": 'Colbert & Peet, "A Convex Parametrization of a New Class of Universal Kernel Functions", *JMLR* 21(45), '
           "2020",
    "003": '"An Efficient Algorithm for Tessellated Kernel Learning", anonymous ICML submission, 2021',
    "001": 'Cortes, Mohri & Rostamizadeh, "Learning Non-Linear Combinations of Kernels", *NIPS* 2009',
    "004": 'Ghiasi-Shirazi, Safabakhsh & Shamsi, "Learning Translation Invariant Kernels for Classification", '
           "*JMLR* 11, 2010",
    "002": 'Steinwart, Thomann & Schmid, "Learning with Hierarchical Gaussian Kernels", preprint, 2016',
}


@dataclass(frozen=True)
class Entry:
    config: str
    title: str
    reuse: tuple[str, ...] = ()  # results folders with the same runs (`--reuse`)
    jobs: int = 2  # workers; timing sweeps run one fit at a time so that their times are not contended
    paper: str = ""  # the key of PAPERS this entry reproduces or checks (its title names it too)

    @property
    def checked(self) -> bool:
        """An investigation of a reproduction's gap (``investigate_*``), not a table or figure of the paper."""
        return self.config.startswith("investigate_")

    @property
    def command(self) -> str:
        run = f"tkbench run configs/{self.config}.yaml -j {self.jobs}"
        return " ".join([run, *(f"--reuse {r}" for r in self.reuse)])


ENTRIES = (
    Entry("colbert2020_table1", "Paper 000 (Colbert & Peet 2020), Table 1: TK, SimpleMKL, SimpleMKL TK / TK+, neural net",
          ("results/mkl_uci", "results/tk_uci"), paper="000"),
    Entry("investigate_liver_simplemkl", "Checked: why Liver SimpleMKL is above paper 000 Table 1 (C, input scaling, library)",
          ("results/mkl_uci",), paper="000"),
    Entry("colbert2020_density", "Paper 000, Figure 2: approximating a +-1 kernel matrix by TK, GPK and Gaussian sums", paper="000"),
    Entry("colbert2020_scaling", "Paper 000, Figures 3-4: SDP and SimpleMKL-TK time against m", jobs=1, paper="000"),
    Entry("colbert2020_surfaces", "Paper 000, Figure 6: decision surfaces of TK and SimpleMKL", paper="000"),
    Entry("sdp_uci", "Paper 000, comparator sweep: TK by SDP (Clarabel) beside Frank-Wolfe on 120-row subsamples "
          "of Liver and Ionosphere", paper="000"),
    Entry("mkl_uci", "Paper 000, comparator sweep: SimpleMKL, SimpleMKL TK and SimpleMKL TK+ on Liver and "
          "Ionosphere (reused by Table 1)", paper="000"),
    Entry("tk_uci", "Paper 000 / 003, comparator sweep: TK learned by Frank-Wolfe on Liver and Airfoil (reused by "
          "Table 1)", paper="000"),
    Entry("tkl2021_table1", "Paper 003, Table 1: TK learning time, SDP against Frank-Wolfe", paper="003"),
    Entry("tkl2021_table2", "Paper 003, Table 2: TKL, SimpleMKL, neural net, random forest on six UCI sets", paper="003"),
    Entry("investigate_gas_turbine_size", "Checked: Gas Turbine MSE against the number of training rows (TKL, RF, NN)", paper="003"),
    Entry("investigate_airfoil_tk", "Checked: Airfoil TKL at fixed (C, delta), with 5-fold CV, and on fewer rows", paper="003"),
    Entry("investigate_hill_valley_tk", "Checked: Hill-Valley TKL under min-max, log then min-max, and quantile scaling", paper="003"),
    Entry("baselines_uci", "Paper 003, comparator sweep: random forest, neural net and RBF SVM on the 13 UCI sets "
          "(30 splits), beside Table 2 where it has them", paper="003"),
    Entry("tkl2021_convergence", "Paper 003, Figure 2: Frank-Wolfe duality gap against iteration", paper="003"),
    Entry("bench_tk_scaling", "Paper 003, benchmark: Frank-Wolfe time and memory against m and q on CCPP, the TK "
          "kernel's own time (make bench)", jobs=1, paper="003"),
    Entry("tkl2021_scaling", "Paper 003, Figure 3: Frank-Wolfe time against m and q (CCPP)", ("results/bench_tk_scaling",),
          jobs=1, paper="003"),
    Entry("tkl2021_scaling_gas_turbine", "Paper 003 at full size: Frank-Wolfe time against m up to 29 386 rows "
          "(Gas Turbine)", jobs=1, paper="003"),
    Entry("cortes2009_figure1", "Paper 001 (Cortes, Mohri & Rostamizadeh 2009), Figure 1: the NKRR objective over two "
          "kernel weights", jobs=1, paper="001"),
    Entry("cortes2009_uci", "Paper 001: NKRR against uniform and learned linear combinations and RBF KRR (our "
          "experiment: the paper's text has no table)", paper="001"),
    Entry("ghiasi2010_table2", "Paper 004 (Ghiasi-Shirazi, Safabakhsh & Shamsi 2010), Tables 2-3: SG, GM, CM and CGM on "
          "the Raetsch benchmark (error, training time, evaluation time and model size)", paper="004"),
    Entry("ghiasi2010_complexity", "Paper 004, section 9.4 and Figure 3: complexity control on Heart (beta by CV "
          "against beta = 1e-6 with C by CV)", paper="004"),
    Entry("ghiasi2010_digits", "Paper 004, sections 9.2-9.3: the cosine mixture on USPS and MNIST (Table 4)", jobs=1, paper="004"),
    Entry("bench_sikl_search", "Paper 004, benchmark: the global search's L-BFGS by SciPy or compiled (CM fits on "
          "heart and waveform, fixed beta)", jobs=1, paper="004"),
    Entry("steinwart2016_table1", "Paper 002 (Steinwart, Thomann & Schmid 2016), Table 1: hierarchical Gaussian "
          "kernels against the least-squares SVM, random forests and neural nets (least-squares error)", paper="002"),
    Entry("investigate_hgk_reductions", "Checked: what 3 draws instead of the paper's 30 cost on cycle (RF, SVM and "
          "neural net at fixed parameters)", ("results/steinwart2016_table1",), paper="002"),
    Entry("investigate_multiclass_reading", "Checked: which least-squares error paper 002 reports on its multi-class "
          "sets (one-vs-all against the class code as a regression target; untuned random forest)", paper="002"),
    Entry("investigate_rf_defaults", "Checked: paper 002's RF column against scikit-learn's forest defaults and R's "
          "randomForest regression defaults (mtry = p / 3, nodesize 5)", paper="002"),
    Entry("investigate_line_search", "Checked: the first trial step of Algorithm 1's line search in paper 002 "
          "(1 at every step against twice the previous step), on the first draw of every Table 1 set", paper="002"),
    Entry("investigate_grid_search", "Checked: how step 3 of Algorithm 1 in paper 002 scores (lambda, gamma): the "
          "error on D2 against 5-fold CV within D1, at M = 15 on four Table 1 sets", paper="002"),
    Entry("investigate_updrs_hgk", "Checked: why paper 002's HGK on updrs is out of our reach: a Gaussian kernel on "
          "age, sex and test_time alone, and Algorithm 1's inhomogeneous kernel with 19 or those 3 features", paper="002"),
)


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
    from tkbench.bench.store import ResultStore
    from tkbench.config import load_config

    plan = make_plan(load_config(root / "configs" / f"{name}.yaml"))
    statuses = ResultStore(root / "results" / name).statuses()
    return sum(statuses.get(s.key) in ("ok", "failed", "timeout") for s in plan), len(plan)


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
    for key, citation in PAPERS.items():
        entries = [e for e in ENTRIES if e.paper == key and (root / "configs" / f"{e.config}.yaml").exists()]
        done = planned = 0
        compared = []
        for entry in entries:
            rows = root / "results" / entry.config / "rows"
            if rows.is_dir() and any(rows.glob("*.json")):
                d, n = _progress(root, entry.config)
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
    for entry in ENTRIES:
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
        prefix = f"reproduction/{entry.config}"
        md += [_body((target / "report.md").read_text(encoding="utf-8"), prefix), ""]
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
