"""The ``tkbench`` command line: a thin typer app over the modules (no logic of its own)."""
from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import typer
from rich.table import Table

from tkbench.errors import InputError, TkbenchError
from tkbench.terminal import keep_whole, make_console

# Help as click prints it (typer's rich help showed `<bool>` beside every flag and wrapped pipes at 80 columns);
# sent to a pipe it is laid out on 120 columns (COLUMNS overrides).
_HELP = {"help_option_names": ["-h", "--help"],
         **({} if sys.stdout.isatty() else {"terminal_width": int(os.environ.get("COLUMNS", "0") or 0) or 120,
                                            "max_content_width": 160})}
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings=_HELP,
                  help="Benchmark kernel-learning methods: run configs, report tables beside the papers, gate CI.")
def _plain_usage_names() -> None:
    """typer marks a required argument {CONFIG} in the usage line; click's own convention is CONFIG."""
    from typer.core import TyperArgument

    if hasattr(TyperArgument, "_usage_display_name"):
        TyperArgument._usage_display_name = lambda self: self.display_name_raw + ("..." if self.nargs != 1 else "")


_plain_usage_names()
datasets_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, context_settings=_HELP, help="List, verify and describe the vendored datasets.")
app.add_typer(datasets_app, name="datasets")

# the consoles of one invocation: made again by each command (``_main``), so that a width taken from COLUMNS is the
# invocation's, not the one of whichever caller first imported this module
out = make_console()
err = make_console(stderr=True)


def _version(value: bool) -> None:
    if value:
        from tkbench import __version__

        make_console().print(f"tkbench {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                       help="print the version and exit")) -> None:
    """Benchmark kernel-learning methods: run configs, report tables beside the papers, gate CI."""
    global out, err
    out, err = make_console(), make_console(stderr=True)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _fail(exc: TkbenchError) -> None:
    err.print(f"[red]error:[/] {exc}", markup=True, highlight=False, soft_wrap=True)
    raise typer.Exit(exc.exit_code)


def _patterns(only: list[str] | None) -> list[str] | None:
    """``--only`` values: each may hold several patterns separated by commas (a config's labels and method names
    have none, :data:`tkbench.config.schema.NAME_RE`)."""
    found = [p.strip() for value in only or [] for p in value.split(",") if p.strip()]
    return found or None


@app.command()
def run(
    config: Path = typer.Argument(..., metavar="CONFIG", help="experiment YAML"),
    jobs: int = typer.Option(1, "-j", "--jobs", min=1, metavar="N", help="parallel workers"),
    backend: str = typer.Option("loky", "--backend", metavar="NAME", help="loky | dask"),
    address: str = typer.Option(None, "--address", metavar="ADDRESS", help="dask scheduler address"),
    splits: int = typer.Option(None, "--splits", min=1, metavar="K", help="run only the first K splits"),
    split_ids: str = typer.Option(None, "--split-ids", metavar="LIST", help="run only these splits, numbered from 0 "
                                  "as the rows number them: comma-separated numbers and ranges, e.g. 2 or 0-4,10"),
    only: list[str] = typer.Option(None, "--only", metavar="PATTERN",
                                   help="DATASET/METHOD glob (repeatable, or several comma-separated), e.g. "
                                        "liver/svm* or 'liver/*,pima/*'"),
    force: bool = typer.Option(False, "--force", help="recompute runs that are already done"),
    dry_run: bool = typer.Option(False, "--dry-run", help="show the plan and what is left to run"),
    out_dir: Path = typer.Option(None, "--out", metavar="DIR", help="results folder (default results/<config name>)"),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="show the progress bar"),
    reuse: list[Path] = typer.Option(None, "--reuse", metavar="DIR", help="results folder whose finished runs with the same "
                                     "run key are taken over instead of re-run (repeatable)"),
    skip_failed: bool = typer.Option(False, "--skip-failed", help="do not retry runs whose row says failed (an "
                                     "exception in the method); crashed and timed-out runs are still retried"),
    order: str = typer.Option("plan", "--order", metavar="ORDER", help="plan | cheap-first: the (dataset, "
                              "method) cells with the least estimated time left first (estimated from finished "
                              "rows, as --dry-run does), so that a stopped sweep leaves the most cells complete"),
    threads: int = typer.Option(None, "--threads", min=1, metavar="N", help="at most N BLAS / numba threads per "
                                "run (the config's protocol.blas_threads still bounds it): leave cores to other "
                                "work, such as a second sweep"),
) -> None:
    """Run every (dataset, method, split) of CONFIG; resumable, one result row per run."""
    from rich.markup import escape

    if jobs == 1 and backend == "loky" and not dry_run:
        # this process will supervise the runs: its forkserver imports the numerical stack beside our planning's
        # import of it (below), not after it; killed at exit if nothing ran
        from tkbench.bench.isolation import start_forkserver

        start_forkserver()
    from tkbench.bench.backends import BACKENDS
    from tkbench.bench.runner import display_path, run_experiment
    from tkbench.config import load_config

    if backend not in BACKENDS:
        err.print(f"[red]error:[/] --backend {backend!r}: expected one of {', '.join(BACKENDS)}")
        raise typer.Exit(2)
    signal.signal(signal.SIGTERM, _interrupt)  # `kill PID` stops the workers and their runs like Ctrl-C
    try:
        from tkbench.bench.plan import parse_split_ids

        ids = None if split_ids is None else parse_split_ids(split_ids)
        exp = load_config(config)
        outcome = run_experiment(exp, out_dir=out_dir, n_jobs=jobs, backend=backend, address=address,
                                 only=_patterns(only), splits=splits, split_ids=ids, force=force, dry_run=dry_run,
                                 console=err, progress=progress, reuse=reuse or None, skip_failed=skip_failed,
                                 order=order, threads=threads)
    except TkbenchError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        if force:  # without --force, a re-run would keep the earlier rows of the runs not yet recomputed
            err.print("[yellow]interrupted[/]: the rows recomputed before the interrupt are kept, the other runs "
                      "still hold their earlier rows; run with --force again to recompute every run")
        else:
            err.print("[yellow]interrupted[/]: finished rows are kept; run the same command again to resume")
        raise typer.Exit(130) from None
    if not dry_run and outcome.planned == 0:
        err.print("[yellow]warning:[/] --only matched no run")
    elif not dry_run:
        for line in outcome.not_ok:  # also in progress-bar mode: which cells, and why
            err.print(f"[red]not ok[/] {escape(line)}", highlight=False, soft_wrap=True)
        err.print(f"report: tkbench report {display_path(outcome.out)}")
        if outcome.not_ok:  # a planned run is not ok at the end: say so to scripts (1; bad input is 2)
            raise typer.Exit(1)


@app.command()
def report(
    results: Path = typer.Argument(None, metavar="RESULTS", help="a results folder written by `tkbench run`"),
    formats: str = typer.Option("md,tex,html", "--format", metavar="LIST", help="comma-separated: md, tex, html"),
    out_dir: Path = typer.Option(None, "--out", metavar="DIR", help="where to write (default RESULTS/report; with --all: docs)"),
    all_: bool = typer.Option(False, "--all", help="every paper reproduction from its committed rows into "
                              "docs/REPRODUCTION.md and .html"),
) -> None:
    """Tables (mean ± std per dataset x method, beside the paper's numbers) and plots from stored rows."""
    from tkbench.report.build import build_report

    if all_:
        from tkbench.report.reproduction import build_all

        try:
            for path in build_all(".", out_dir or Path("docs"))[:2]:
                out.print(str(path))
        except TkbenchError as exc:
            _fail(exc)
        return
    if results is None:
        err.print("[red]error:[/] give a results folder, or --all")
        raise typer.Exit(2)

    fmts = [f.strip() for f in formats.split(",") if f.strip()]
    bad = [f for f in fmts if f not in ("md", "tex", "html")]
    if bad:
        err.print(f"[red]error:[/] --format {bad[0]!r}: expected md, tex or html")
        raise typer.Exit(2)
    try:
        from tkbench.bench.store import check_folder_path

        check_folder_path(out_dir if out_dir is not None else Path(results) / "report", "the report")
        written = build_report(results, formats=fmts, out_dir=out_dir)
    except TkbenchError as exc:
        _fail(exc)
    except OSError as exc:  # a full disk, a read-only folder
        _fail(InputError(f"{exc.filename or out_dir}: cannot write the report there ({exc.strerror or exc})"))
    for path in written:
        out.print(str(path))


@app.command()
def check(
    results: Path = typer.Argument(..., metavar="RESULTS", help="a results folder"),
    baseline: Path = typer.Option(..., "--baseline", metavar="FILE", help="baseline JSON written by `tkbench baseline`"),
) -> None:
    """Compare mean metrics with a baseline; exit 1 on any regression beyond the stored tolerances."""
    from tkbench.report.check import check_results, render_check

    try:
        result = check_results(results, baseline)
    except TkbenchError as exc:
        _fail(exc)
    render_check(result, out)
    raise typer.Exit(0 if result.passed else 1)


@app.command("compile")
def compile_code() -> None:
    """Compile every family's numba code into numba's on-disk cache (`make install` runs it), so that the first
    fit after an install loads it instead of compiling (measured in docs/methods: 18 s cold, 7 s after)."""
    import time

    from tkbench.methods import load_families

    for fam in sorted(load_families().values(), key=lambda f: f.name):
        if fam.compile is None and fam.warmup is None:
            continue
        start = time.perf_counter()
        fam.compile() if fam.compile is not None else fam.warmup(1)
        out.print(f"{fam.name}: compiled code ready ({time.perf_counter() - start:.1f} s)")


@app.command("baseline")
def make_baseline(
    results: Path = typer.Argument(..., metavar="RESULTS", help="a results folder"),
    output: Path = typer.Option(..., "-o", "--output", metavar="FILE", help="baseline JSON to write"),
    accuracy_tol: float = typer.Option(1.0, metavar="POINTS", help="allowed drop of mean accuracy, in percentage points"),
    mse_rtol: float = typer.Option(0.05, metavar="FRACTION", help="allowed relative rise of mean MSE"),
) -> None:
    """Write a baseline (mean metric per dataset x method, with tolerances) for `tkbench check`."""
    from tkbench.report.check import write_baseline

    try:
        path = write_baseline(results, output, accuracy_tol=accuracy_tol, mse_rtol=mse_rtol)
    except TkbenchError as exc:
        _fail(exc)
    out.print(f"wrote {path}")


@app.command()
def methods(
    family: str = typer.Argument(None, metavar="FAMILY", help="a family: list its parameters with defaults and meaning"),
    task: str = typer.Option(None, "--task", metavar="TASK", help="classification | regression (default: the family's first)"),
) -> None:
    """The method families (solvers, tasks, default CV grids); with FAMILY, its parameters."""
    from tkbench.methods import load_families, visible_families

    FAMILIES = load_families()

    if family is not None:
        fam = FAMILIES.get(family)
        if fam is None:
            err.print(f"[red]error:[/] unknown family {family!r}: expected one of "
                      f"{', '.join(f.name for f in visible_families())}", soft_wrap=True)
            raise typer.Exit(2)
        if task is not None and task not in fam.tasks:
            err.print(f"[red]error:[/] --task {task!r}: {family} supports {', '.join(fam.tasks)}")
            raise typer.Exit(2)
        _family_parameters(fam, task)
        return
    table = Table(title="method families")
    for col in ("family", "solvers", "tasks", "scaling", "default grid", "description"):
        table.add_column(col)
    for fam in visible_families():
        grid = ", ".join(f"{k}: {_short(v)}" for k, v in fam.default_grid.items()) or "-"
        table.add_row(*map(escape, (fam.name, ", ".join(fam.solvers), ", ".join(fam.tasks), _scaling(fam), grid,
                                    fam.description)))
    out.print(keep_whole(table, "family", "solvers"))


def _family_parameters(fam, task: str | None) -> None:
    from tkbench.methods.describe import parameters

    task = task or fam.tasks[0]
    table = Table(title=f"{fam.name} ({task}): parameters for params / grid in a config")
    for col in ("parameter", "default", "default grid", "meaning"):
        table.add_column(col)
    for p in parameters(fam, task):
        if p.name == "solver":  # set by the method's own 'solver' field (listed below)
            continue
        table.add_row(*map(escape, (p.name, repr(p.default), _short(p.grid) if p.grid else "-", p.meaning or "-")))
    out.print(keep_whole(table, "parameter"))
    out.print(f"solvers: {', '.join(fam.solvers)} (default {fam.default_solver}); tasks: {', '.join(fam.tasks)}; "
              f"input scaling: {_scaling(fam)}" + (f"; reference: {fam.reference}" if fam.reference else ""),
              soft_wrap=True, markup=False, highlight=False)


def _scaling(fam) -> str:
    """The runner's scaler, and the estimator's own scaling where it has one (TK scales inside: not "none")."""
    if fam.scales_inside:
        return f"by the estimator: {fam.scales_inside}" + (f" (after the runner's {fam.scaler})"
                                                           if fam.scaler != "none" else "")
    return fam.scaler


def escape(text: str) -> str:
    """Data shown in a rich table, never read as markup (a grid ``[a, b]`` used to vanish as a style tag)."""
    from rich.markup import escape as rich_escape

    return rich_escape(str(text))


def _short(values: list) -> str:
    return str(values) if len(values) <= 4 else f"[{values[0]}, {values[1]}, ..., {values[-1]}] ({len(values)})"


@datasets_app.command("list")
def datasets_list() -> None:
    """Name, task, rows, features and classes of every dataset (registered files are read and verified)."""
    from tkbench.data import registry
    from tkbench.data.synthetic import GENERATORS

    table = Table(title="datasets")
    for col in ("name", "task", "rows", "features", "classes", "files"):
        table.add_column(col)
    try:
        for name in sorted(registry.registry()):
            ds = registry.load_dataset(name)
            table.add_row(name, ds.task, _rows(registry.registry()[name], ds), str(ds.X.shape[1]),
                          str(ds.n_classes or "-"), str(len(registry.file_names(name))))
        for name in sorted(GENERATORS):
            ds = registry.load_dataset(name)
            table.add_row(name, ds.task, f"{len(ds.y)} (default)", str(ds.X.shape[1]), str(ds.n_classes),
                          "synthetic")
    except TkbenchError as exc:
        _fail(exc)
    out.print(keep_whole(table, "name"))


def _rows(entry: dict, ds) -> str:
    """A dataset's size as a user meets it: per realisation for the Raetsch sets (their stacked rows are only how
    they are stored), else its rows."""
    real = entry.get("realisations")
    if real:
        return f"{real['train_rows']} + {real['test_rows']} per realisation ({real['count']} of {real['of']})"
    return str(len(ds.y))


@datasets_app.command("verify")
def datasets_verify() -> None:
    """Check the sha256 of every vendored data file; exit 1 if any is missing or changed."""
    from tkbench.data import registry

    failed = 0
    for name in sorted(registry.registry()):
        try:
            paths = registry.verify_files(name)
            out.print(f"[green]ok[/]   {name}: {len(paths)} file(s)")
        except TkbenchError as exc:
            failed += 1
            out.print(f"[red]FAIL[/] {exc}", soft_wrap=True)
    if failed:
        raise typer.Exit(1)


@datasets_app.command("show")
def datasets_show(name: str = typer.Argument(..., metavar="NAME", help="dataset name")) -> None:
    """Everything about one dataset: files, checksums, label rule, options, source and citation."""
    from tkbench.data import registry
    from tkbench.data.synthetic import GENERATORS

    try:
        if name in GENERATORS:
            ds = registry.load_dataset(name)
            out.print(f"[bold]{name}[/]: synthetic, {GENERATORS[name].doc}")
            out.print(f"options (defaults): {GENERATORS[name].defaults}")
            out.print(f"rows {len(ds.y)}, features {ds.X.shape[1]}, classes {ds.n_classes}")
            return
        if name not in registry.registry():
            raise registry.DatasetError(f"unknown dataset {name!r}; known: {', '.join(registry.all_names())}")
        entry = registry.registry()[name]
        ds = registry.load_dataset(name)
    except TkbenchError as exc:
        _fail(exc)
    out.print(f"[bold]{name}[/]: {entry.get('title', name)}")
    rows = _rows(entry, ds)
    rows += f" (stacked: {len(ds.y)})" if entry.get("realisations") else f" (dropped {ds.info['rows_dropped']})"
    out.print(f"task: {ds.task}; rows: {rows}; features: {ds.X.shape[1]}")
    out.print(f"target: {entry['target']}" + (f"; +1 class: {entry['positive']}" if entry.get("positive") else "")
              + (f"; +1 when {entry['target']} {entry['threshold']['op']} {entry['threshold']['value']}"
                 if entry.get("threshold") else ""))
    if ds.task == "classification":
        import numpy as np

        values, counts = np.unique(ds.y, return_counts=True)
        out.print("class counts: " + ", ".join(f"{v}: {c}" for v, c in zip(values, counts, strict=True)))
    out.print(f"features: {', '.join(ds.feature_names)}")
    for opt, decl in (entry.get("options") or {}).items():
        out.print(f"option {opt} (default {decl['default']!r}; choices {', '.join(map(str, decl['choices']))}): "
                  f"{decl.get('doc', '')}")
    for f in entry["files"]:
        out.print(f"file: datasets/{f['path']}  sha256 {f['sha256']}  {f['bytes']} bytes")
    if entry.get("notes"):
        out.print(f"notes: {entry['notes']}")
    src = entry.get("source", {})
    where = src.get("uci_url") or (f"datasets/MANIFEST.yaml, entry {src['manifest_key']} (vendored with the data)"
                                   if src.get("manifest_key") else src.get("manifest")) or "not recorded"
    out.print(f"source: {where} (verification level {src.get('verified', '?')})", soft_wrap=True)
    out.print(f"citation: {src.get('citation', '')}", soft_wrap=True)


def main() -> None:
    try:
        app()
    except TkbenchError as exc:  # pragma: no cover - commands catch their own
        err.print(f"error: {exc}")
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
