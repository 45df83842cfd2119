"""Fan a plan out over joblib workers, with a progress bar, skipping finished runs.

Resume: a run whose row says ``ok`` is skipped; failed, timed-out and crashed runs are retried (``skip_failed``
keeps the ``failed`` ones: an exception in the method, which a deterministic method raises again); ``force`` redoes
everything. BLAS threads per run are limited so that workers x threads <= cores, and recorded in every row.
"""
from __future__ import annotations

import json
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from joblib import delayed
from joblib.externals.loky.process_executor import BrokenProcessPool
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from tkbench.bench import backends, provenance
from tkbench.bench.cost import run_seconds
from tkbench.bench.isolation import run_isolated
from tkbench.bench.plan import RunSpec, empty_cells, excluded_cells, format_split_ids, make_plan
from tkbench.bench.preflight import check_data, check_requirements
from tkbench.bench.store import ResultStore, check_folder_path, unwritable, write_json_atomic
from tkbench.config import Experiment
from tkbench.errors import InputError
from tkbench.kinds import get_kind
from tkbench.methods import get_family
from tkbench.terminal import keep_whole, make_console


@dataclass
class RunOutcome:
    planned: int
    skipped: int
    executed: int
    counts: Counter = field(default_factory=Counter)
    summaries: list[dict[str, Any]] = field(default_factory=list)
    gated: dict[str, str] = field(default_factory=dict)  # runs the kind's gate left out (key -> reason)
    seconds: float = 0.0
    not_ok: list[str] = field(default_factory=list)  # one line per cell with planned runs not ok at the end
    out: Path | None = None  # the results folder (absolute)

    @property
    def ok(self) -> bool:
        return all(s["status"] == "ok" for s in self.summaries)


PROJECT_MARKERS = ("pyproject.toml", ".git", "results")


def project_dir(config: Path | None) -> Path:
    """The folder whose ``results/`` holds a config's rows: the nearest folder above the config file with a
    ``pyproject.toml``, a ``.git`` or a ``results`` folder, else the config's own folder (the current directory for
    a config without a file). It does not depend on where the command is typed."""
    if config is None:
        return Path.cwd()
    config = Path(config).absolute()
    for folder in config.parents:
        if any((folder / marker).exists() for marker in PROJECT_MARKERS):
            return folder
    return config.parent


def default_out_dir(exp: Experiment) -> Path:
    """``<project>/results/<config name>`` (:func:`project_dir`): the same folder from any working directory."""
    return project_dir(exp.source) / "results" / exp.name


# what the dry run prices a run from (tkbench.bench.cost.estimate), for its total line and its "no estimate" line
_BASES = "the same runs, the same method at (or near, scaled) its size or the same family and size"


def todo(plan: list[RunSpec], store: ResultStore, force: bool, skip_failed: bool = False) -> list[RunSpec]:
    """The runs of ``plan`` to compute: all with ``force``; else those without an ok row (nor, with
    ``skip_failed``, a failed one)."""
    statuses = {} if force else store.statuses()
    done = {"ok", "failed"} if skip_failed else {"ok"}
    return [s for s in plan if statuses.get(s.key) not in done]


def _kept_failed(plan: list[RunSpec], store: ResultStore, force: bool, skip_failed: bool) -> int:
    """How many runs of ``plan`` keep their failed row (``skip_failed``) instead of running again."""
    if force or not skip_failed:
        return 0
    statuses = store.statuses()
    return sum(statuses.get(s.key) == "failed" for s in plan)


def adopt(plan: list[RunSpec], store: ResultStore, sources: list[str | Path], write: bool) -> set[str]:
    """Copy finished (ok) rows with the same run key from other results folders into ``store``.

    The key covers everything that changes the numbers (data, method spec, protocol, split, seed) and nothing that
    does not (experiment, labels, method name), so a row of another experiment with the same key is the same run.
    The copy carries this experiment's names and ``reused_from``. Returns the run keys adopted (or adoptable when
    ``write`` is false).
    """
    statuses = store.statuses()
    others = [ResultStore(src) for src in sources]
    for src, other in zip(sources, others, strict=True):
        if not other.root.is_dir():
            raise InputError(f"--reuse {src}: no such results folder")
    adopted: set[str] = set()
    for spec in plan:
        if statuses.get(spec.key) == "ok":
            continue
        for other in others:
            row = other.read_row(spec.key)
            if row is None or row.get("status") != "ok":
                continue
            if write:
                names = {"experiment": spec.experiment, "dataset": spec.label, "method": spec.method}
                row = {**row, **names, "spec": {**row.get("spec", {}), **names, "label": spec.label},
                       "reused_from": str(other.root)}
                store.write_row(row)
            adopted.add(spec.key)
            break
    return adopted


def run_experiment(
    exp: Experiment,
    *,
    out_dir: str | Path | None = None,
    n_jobs: int = 1,
    backend: str = "loky",
    address: str | None = None,
    only: list[str] | None = None,
    splits: int | None = None,
    split_ids: list[int] | None = None,
    force: bool = False,
    dry_run: bool = False,
    console: Console | None = None,
    progress: bool = True,
    reuse: list[str | Path] | None = None,
    skip_failed: bool = False,
    order: str = "plan",
    threads: int | None = None,
) -> RunOutcome:
    """Run the plan of ``exp`` (or show it, ``dry_run``) into ``out_dir`` (default :func:`default_out_dir`).

    The folder is locked for the whole sweep (a second sweep into it stops with :class:`BusyError`) and checked
    writable before any run; rows come back from the workers and are written here, so a write failure (full disk)
    stops the sweep with a clear error and keeps every row written before it. ``skip_failed``: runs whose row says
    ``failed`` are not retried (crashed and timed-out runs still are). ``order``: ``"plan"`` (the plan's order) or
    ``"cheap-first"`` (:func:`tkbench.bench.cost.cheapest_cells_first`); runs that continue from a saved state run
    first either way. ``threads``: at most this many BLAS / numba threads per run (the config's
    ``protocol.blas_threads`` and ``cores // workers`` still bound it), to leave cores to other work, a second
    sweep say; each row records the threads it ran with. ``split_ids``: only the runs of these splits (numbered
    from 0; :func:`~tkbench.bench.plan.parse_split_ids`), e.g. one share of a sweep's splits per machine or lane,
    each into its own folder; they keep the keys they have in the whole plan, so the folders' rows merge."""
    from tkbench.bench.cost import ORDERS

    if order not in ORDERS:
        raise InputError(f"--order {order!r}: expected one of {', '.join(ORDERS)}")
    console = console or make_console(stderr=True)
    out = (Path(out_dir) if out_dir else default_out_dir(exp)).absolute()
    check_folder_path(out)
    store = ResultStore(out)
    check_only(exp, only)
    check_same_config(exp, store)
    plan = make_plan(exp, only=only, splits=splits, split_ids=split_ids)
    if split_ids is not None and not plan:
        check_split_ids(exp, split_ids, make_plan(exp, only=only, splits=splits))
    if not force:
        check_csv_unchanged(plan, store)
    if dry_run:
        adopted = adopt(plan, store, reuse, write=False) if reuse and not force else set()
        _print_adopted(console, adopted, reuse, dry_run)
        for path, problem in store.damaged():
            console.print(f"damaged row file {display_path(path)}: {problem}; a run would set it aside under "
                          f"{display_path(out / 'damaged')} and do its run again", markup=False, highlight=False)
        pending = todo(plan, store, force, skip_failed)
        check_data(exp, pending)
        for m in exp.methods:
            fam = get_family(m.family) if get_kind(exp.kind).learners else None
            if fam is not None and (absent := fam.missing()) and any(s.method == m.name for s in pending):
                console.print(f"{m.name}: needs {', '.join(absent)}, not installed ({fam.install_hint}): a "
                              "run would stop here", markup=False, highlight=False)
        _print_kept_failed(console, _kept_failed(plan, store, force, skip_failed), dry_run)
        from tkbench.bench.cost import finished_rows
        from tkbench.bench.speedups import project_speedups

        root = default_out_dir(exp).absolute().parent
        priced = finished_rows(out, root) if pending else []  # read once: the plan's prices and the order's
        faster = project_speedups(root) if pending else ()  # likewise the speedups they are priced with
        _print_plan(console, plan, pending, out, adopted, root, rows=priced, speedups=faster)
        if order == "cheap-first":
            _order_cheap_first(console, [s for s in pending if s.key not in adopted], out, root, dry_run,
                               rows=priced, speedups=faster)
        gate = get_kind(exp.kind).gate(exp, plan)
        if gate is not None:
            gate.note_rows(store.rows())
            console.print(gate.describe(pending), markup=False, highlight=False)
        _print_empty(console, exp, listing=True)
        whole = plan if only is None and splits is None and split_ids is None else make_plan(exp)
        _print_saved_states(console, store, pending, whole)
        return RunOutcome(planned=len(plan), skipped=len(plan) - len(pending), executed=0, out=out)
    needed = todo(plan, store, force, skip_failed)
    check_requirements(exp, needed)  # an optional extra missing: one error now (exit 2)
    check_data(exp, needed)  # bad data or sizes: one error now (exit 2), before any file is made
    with store.lock():
        store.check_writable()  # a read-only or full folder: one error now, not after computing a run
        for path, problem in store.set_aside_damaged():  # never read again, never overwritten unseen
            console.print(f"damaged row file set aside as {display_path(path)}: {problem}; its run is done again",
                          markup=False, highlight=False)
        adopted = adopt(plan, store, reuse, write=True) if reuse and not force else set()
        _print_adopted(console, adopted, reuse, dry_run)
        pending = todo(plan, store, force, skip_failed)
        _print_kept_failed(console, _kept_failed(plan, store, force, skip_failed), dry_run)
        if order == "cheap-first":
            pending = _order_cheap_first(console, pending, out, default_out_dir(exp).absolute().parent, dry_run)
        return _sweep(exp, plan, pending, store, n_jobs=n_jobs, backend=backend, address=address, threads=threads,
                      console=console, progress=progress)


def _keep_ok_row(store: ResultStore, row: dict[str, Any]) -> Path | None:
    """Where a not-ok row goes when the folder already holds an ok row of its run (a ``--force`` re-run that
    failed): beside it under ``failed_reruns/``, never over it (no ok row is lost). None: write it as usual."""
    if row.get("status") == "ok":
        return None
    old = store.read_row(row["key"])
    if old is None or old.get("status") != "ok":
        return None
    path = store.root / "failed_reruns" / f"{row['key']}.json"
    write_json_atomic(path, row)
    return path


def _after_broken_pool(exc: Exception, remaining: list[RunSpec], dispatched: list[RunSpec], returned: set[str],
                       strikes: Counter, context: dict[str, Any], out: Path, record, console: Console) -> list[RunSpec]:
    """A loky worker died and took the pool with it (joblib then stops the whole batch). The run whose supervisor
    died is recorded as crashed (its child left a note, :func:`tkbench.bench.isolation.orphaned_runs`); the other
    runs in flight, killed with the pool, start again, unless one was in flight at two such deaths (then it is
    recorded as crashed too: a run that kills its worker every time must not stop the sweep forever)."""
    from tkbench.bench.isolation import POLL_SECONDS, crashed_summary, orphaned_runs
    from tkbench.errors import first_line

    in_flight = [s for s in dispatched if s.key not in returned]
    deadline = time.monotonic() + 4 * POLL_SECONDS + 1.0
    noted = orphaned_runs(out)
    while not noted and in_flight and time.monotonic() < deadline:  # the orphaned child notices within a poll
        time.sleep(POLL_SECONDS / 2)
        noted = orphaned_runs(out)
    import re

    codes = re.search(r"exit codes of the workers are \{([^}]*)\}", str(exc))
    why = f"exit code {codes.group(1)}" if codes else first_line(str(exc), 200)
    crashed = []
    for s in in_flight:
        strikes[s.key] += s.key not in noted
        if s.key in noted or strikes[s.key] >= 2:
            crashed.append(s.key)
            reason = ("its worker process died while it ran" if s.key in noted else
                      "it was running in the worker pool at two worker deaths") + f" ({why})"
            record(crashed_summary(s.to_dict(), context, reason))
    again = [s for s in in_flight if s.key not in crashed]
    console.print(f"a worker process died: {len(crashed)} run(s) recorded as crashed, {len(again)} started again; "
                  "the sweep goes on", markup=False, highlight=False)
    done = returned | set(crashed)
    return [s for s in remaining if s.key not in done]


def _print_kept_failed(console: Console, kept: int, dry_run: bool) -> None:
    if kept:
        console.print(f"{kept} failed run(s) {'would keep' if dry_run else 'keep'} their failed row (--skip-failed): "
                      "not run again, counted as done below", markup=False, highlight=False)


def _order_cheap_first(console: Console, pending: list[RunSpec], out: Path, root: Path, dry_run: bool,
                       shown: int = 6, rows: list[dict[str, Any]] | None = None,
                       speedups: tuple[Any, ...] | None = None) -> list[RunSpec]:
    """``--order cheap-first``: order ``pending`` (:func:`tkbench.bench.cost.cheapest_cells_first`, priced from
    ``rows`` and ``speedups`` when given, else from ``root``'s) and say which cells come first and how many have no
    estimate (they run last). Returns the ordered runs."""
    from tkbench.bench.cost import cheapest_cells_first
    from tkbench.bench.speedups import project_speedups

    speedups = project_speedups(root) if speedups is None else speedups
    ordered, cells = cheapest_cells_first(pending, out, root, rows=rows, speedups=speedups)
    if cells:
        first = ", ".join(f"{ds}/{m} ({'?' if sec is None else f'{sec / 60:.2g} min'})"
                          for (ds, m), sec in cells[:shown])
        unknown = sum(sec is None for _, sec in cells)
        console.print(f"--order cheap-first: {len(cells)} cell(s) {'would run' if dry_run else 'run'} by their "
                      f"estimated time left, shortest first: {first}{', ...' if len(cells) > shown else ''}"
                      + (f"; {unknown} cell(s) with no estimate last" if unknown else ""),
                      markup=False, highlight=False, soft_wrap=True)
    return ordered


def _print_adopted(console: Console, adopted: set[str], reuse: list[str | Path] | None, dry_run: bool) -> None:
    if adopted:
        console.print(f"{len(adopted)} finished run(s) {'can be' if dry_run else 'were'} taken over from "
                      f"{', '.join(map(str, reuse or []))} (same run keys)")


def _state_keys(spec: RunSpec) -> set[str]:
    """The keys a run's saved states are filed under (:meth:`ResultStore.saved_states`): its run key, and the
    tuning keys of the CV its cell's splits share (``tuning``), which any of its runs continues."""
    if not (spec.tuning and spec.grid):
        return {spec.key}
    from tkbench.bench.tuning import tuning_key

    return {spec.key, *(tuning_key(spec, r, seed) for r, seed in enumerate(spec.tuning["seeds"]))}


def _continuing(pending: list[RunSpec], states: dict[str, list[Path]]) -> list[RunSpec]:
    """The runs still to do that continue from a saved state (:meth:`ResultStore.saved_states`): their own, or
    their cell's shared CV's."""
    if not states:
        return []
    return [s for s in pending if not _state_keys(s).isdisjoint(states)]


def _shared_cells(resuming: list[RunSpec], states: dict[str, list[Path]]) -> list[str]:
    """The cells (``dataset/method``) among ``resuming`` that continue a CV shared by their splits: their runs
    are counted as continuing, though only the one that takes the CV's lock resumes it."""
    return list(dict.fromkeys(f"{s.label}/{s.method}" for s in resuming if s.key not in states))


def _started_first(pending: list[RunSpec], states: dict[str, list[Path]]) -> list[RunSpec]:
    """The runs to do, those continuing from a saved state first (each group in plan order): work begun in an
    earlier session is finished before new work starts, so a long run resumed at the end of a sweep does not
    leave the other workers idle behind it, and fewer partial states are left when the sweep is stopped again.
    The order changes no result (every run is seeded from the config alone)."""
    first = _continuing(pending, states)
    keys = {s.key for s in first}
    return first + [s for s in pending if s.key not in keys]


def _print_saved_states(console: Console, store: ResultStore, pending: list[RunSpec], whole: list[RunSpec]) -> None:
    """The dry run's word on saved states (:meth:`ResultStore.saved_states`): which runs still to do continue
    from one (they run first, :func:`_started_first`), and which files belong to no run of the config (left by
    runs whose keys changed: never read again, safe to delete)."""
    states = store.saved_states()
    planned = {s.key for s in whole}
    resuming = _continuing(pending, states)
    own = [s for s in resuming if s.key in states]
    if own:
        names = ", ".join(f"{s.label}/{s.method} split {s.split}" for s in own)
        console.print(f"{len(own)} of the runs to run continue from their saved state (they run first): {names}",
                      highlight=False, soft_wrap=True)
    cells = _shared_cells(resuming, states)
    if cells:
        console.print(f"{len(cells)} cell(s) continue their shared CV from its saved state (their runs run first): "
                      f"{', '.join(cells)}", highlight=False, soft_wrap=True)
    if states:  # the shared CVs' tuning keys are planned too
        planned = planned | {k for s in whole for k in _state_keys(s)}
    stale = {key: paths for key, paths in states.items() if key not in planned}
    if stale:
        files = [display_path(p) for paths in stale.values() for p in paths]
        console.print(f"[yellow]{len(files)} saved-state file(s) of {len(stale)} run key(s) that no run of this "
                      f"config has any more[/] (a parameter or the data changed; never read again, safe to "
                      f"delete): {', '.join(files)}", highlight=False, soft_wrap=True)


def _sweep(exp: Experiment, plan: list[RunSpec], pending: list[RunSpec], store: ResultStore, *, n_jobs: int,
           backend: str, threads: int | None, address: str | None, console: Console, progress: bool) -> RunOutcome:
    out = store.root
    outcome = RunOutcome(planned=len(plan), skipped=len(plan) - len(pending), executed=0, out=out)
    try:
        if exp.source is not None:
            store.save_config(exp.source.read_text(encoding="utf-8"))
            # relative to the results folder, so that a clone elsewhere still finds the config (and its reference)
            write_json_atomic(out / "meta.json", {"config_source": os.path.relpath(exp.source, out.resolve())})
    except OSError as exc:
        raise unwritable(out, exc) from None
    n_workers = 1 if backend == "loky" and n_jobs == 1 else n_jobs
    threads = max(1, min(exp.protocol.blas_threads, backends.cores() // max(1, n_workers),
                         threads or exp.protocol.blas_threads))
    context = {**provenance.collect(n_workers, backend, threads), "client_pid": os.getpid()}
    states = store.saved_states()
    pending = _started_first(pending, states)
    continuing = _continuing(pending, states)
    own, cells = sum(s.key in states for s in continuing), len(_shared_cells(continuing, states))
    parts = ([f"{own} from a saved state"] if own else []) + \
        ([f"{cells} cell(s)' shared CV from a saved state"] if cells else [])
    resuming_note = f" ({', '.join(parts)}, run first)" if parts else ""
    console.print(f"[bold]{exp.name}[/]: {len(plan)} runs planned, {outcome.skipped} already done, "
                  f"{len(pending)} to run{resuming_note} on {n_workers} worker(s) ({backend}), {threads} BLAS "
                  f"thread(s) each -> {display_path(out)}")
    _print_empty(console, exp, listing=False)
    gate = get_kind(exp.kind).gate(exp, plan)
    if gate is not None:  # rows of earlier sessions count: a resumed sweep stops where the whole one would
        gate.note_rows(store.rows())
    t0 = time.perf_counter()
    if pending:
        columns = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("[green]{task.fields[ok]} ok[/] [red]{task.fields[bad]} failed[/]"),
                   TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]
        with Progress(*columns, console=console, disable=not progress, transient=False) as bar:
            task = bar.add_task("running", total=len(plan), completed=outcome.skipped,
                                ok=outcome.skipped, bad=0)

            def record(summary: dict[str, Any]) -> None:
                row = summary.pop("row", None)
                if gate is not None:
                    gate.note(summary["key"], summary["status"],  # a resumed run: every session it took
                              run_seconds(row) if row is not None else summary.get("seconds"))
                if row is not None:
                    try:
                        kept = _keep_ok_row(store, row)
                        if kept is not None:  # a --force re-run that failed never replaces an ok row
                            console.print(f"{summary['cell']} split {summary['split']}: the re-run is "
                                          f"{row.get('status')}; the ok row is kept, the attempt is in "
                                          f"{display_path(kept)}", markup=False, highlight=False)
                        else:
                            store.write_row(row)
                    except OSError as exc:  # full disk, folder made read-only: stop, keep what is written
                        raise unwritable(out, exc) from None
                outcome.executed += 1
                outcome.counts[summary["status"]] += 1
                outcome.summaries.append(summary)
                ok = outcome.skipped + outcome.counts["ok"]
                bar.update(task, advance=1, ok=ok, bad=outcome.executed - outcome.counts["ok"],
                           description=summary["cell"])
                if not progress:  # a background sweep's log: one line per finished run
                    console.print(_log_line(summary, outcome.skipped + outcome.executed, len(plan)),
                                  markup=False, highlight=False, soft_wrap=True)

            remaining, strikes = list(pending), Counter()
            while remaining:
                dispatched, returned = [], set()

                def jobs(specs, seen):  # what joblib has taken from the queue (pre_dispatch: n_jobs at a time)
                    for s in specs:
                        reason = gate(s) if gate is not None else None
                        if reason is not None:  # no row: a later sweep with a larger budget still runs it
                            outcome.gated[s.key] = reason
                            bar.update(task, advance=1)
                            continue
                        seen.append(s)
                        yield delayed(run_isolated)(s.to_dict(), context, str(out))

                try:
                    with backends.parallel(backend, n_jobs, address) as par:
                        for summary in par(jobs(remaining, dispatched)):
                            returned.add(summary["key"])
                            record(summary)
                    remaining = []
                except BrokenProcessPool as exc:  # a worker process was killed (kill -9, out of memory)
                    remaining = _after_broken_pool(exc, remaining, dispatched, returned, strikes, context, out,
                                                   record, console)
                bar.update(task, description="done")
    outcome.seconds = time.perf_counter() - t0
    outcome.not_ok = _print_summary(console, store, plan, outcome)
    return outcome


def display_path(path: Path) -> str:
    """``path`` relative to the current directory when it lies below it, else absolute."""
    try:
        return str(Path(path).absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(Path(path).absolute())


def _log_line(summary: dict[str, Any], done: int, total: int) -> str:
    """``[done/total] cell split i (m = size): status, metric value, seconds`` (the error too when not ok)."""
    where = f"{summary['cell']} split {summary['split']}"
    if summary.get("size") is not None:
        where += f" (m = {summary['size']})"
    line = f"[{done}/{total}] {where}: {summary['status']}"
    if summary["status"] == "ok" and summary.get("value") is not None:
        line += f", {summary['metric']} {summary['value']:.4g}"
    line += f", {summary['seconds']:.1f} s"
    if summary["status"] != "ok":
        line += f": {summary['error']}"
    return line


def _print_plan(console: Console, plan: list[RunSpec], pending: list[RunSpec], out: Path,
                reusable: set[str], root: Path | None = None, rows: list[dict[str, Any]] | None = None,
                speedups: tuple[Any, ...] | None = None) -> None:
    """The dry run's table: per (dataset, method), runs planned, done here, to be taken over with --reuse (same
    run key finished elsewhere) and left to compute, priced from ``rows`` (the finished rows; read from ``out``
    and ``root`` when not given) at today's speed (``speedups``; ``root``'s project's when not given)."""
    from tkbench.bench.cost import estimate, finished_rows, shared_cv_progress
    from tkbench.bench.speedups import project_speedups

    table = Table(title=f"plan -> {out}")
    columns = ("dataset", "method", "runs", "done", "reusable", "to run", "s / run", "hours left", "estimated from")
    for col in columns:
        table.add_column(col, justify="left" if col in ("dataset", "method", "estimated from") else "right")
    pending_keys = {s.key for s in pending}
    if rows is None and pending:
        rows = finished_rows(out, root)
    if speedups is None:
        speedups = project_speedups(root)
    costs = estimate([s for s in pending if s.key not in reusable], rows, speedups) if pending else {}
    hours, unknown = 0.0, 0
    by_method: dict[str, list[float]] = {}  # method -> [runs left, hours, cells left, cells without an estimate]
    cells: dict[tuple[str, str], list[int]] = {}
    for s in plan:
        c = cells.setdefault((s.label, s.method), [0, 0, 0])
        c[0] += 1
        c[1] += s.key in reusable
        c[2] += s.key in pending_keys and s.key not in reusable
    first_left = {}  # (dataset, method) -> the cell's first run left (its shared CV's files name the cell)
    for s in pending:
        first_left.setdefault((s.label, s.method), s)
    for (ds, m), (n, reused, left) in cells.items():
        est = costs.get((ds, m)) if left else None
        cv_left, cv_measured = (0.0, None) if n - reused - left > 0 or est is None \
            else shared_cv_progress(first_left[(ds, m)], out)
        cell_seconds = est.total(left, cv_left, cv_measured) if est is not None else 0.0
        hours += cell_seconds / 3600
        unknown += bool(left and est is None)
        if left:
            mine = by_method.setdefault(m, [0, 0.0, 0, 0])
            mine[0] += left
            mine[1] += cell_seconds / 3600
            mine[2] += 1
            mine[3] += est is None
        basis = f"{est.n_rows} rows, {est.basis}" if est is not None else ""
        if est is not None and est.unclocked:  # priced at a wall clock that may hold other sweeps' work
            basis += f"; {est.unclocked} of {est.n_rows} without CPU time"
        if est is not None and cv_measured is not None and cv_left > 0:
            basis += f"; its shared CV {cv_measured:.3g} s more at its own pace ({1 - cv_left:.0%} done)"
        cost = (f"{cell_seconds / left:.3g}", f"{cell_seconds / 3600:.2g}", basis) \
            if est is not None else ("", "", "no rows" if left else "")
        table.add_row(ds, m, str(n), str(n - reused - left), str(reused), str(left), *cost)
    console.print(keep_whole(table, "dataset", "method"))
    if len(by_method) > 1:  # the budget per method, costliest first: where reductions would pay
        per = Table(title="hours left per method (estimated, one run after another)")
        for col in ("method", "runs left", "hours left", "cells left", "cells not estimated"):
            per.add_column(col, justify="left" if col == "method" else "right")
        for m, (runs, h, n_cells, n_unknown) in sorted(by_method.items(), key=lambda kv: -kv[1][1]):
            per.add_row(m, str(runs), f"{h:.3g}", str(n_cells), str(n_unknown) if n_unknown else "")
        console.print(keep_whole(per, "method"))
    left = sum(c[2] for c in cells.values())
    reused = f"{len(reusable)} reusable, " if reusable else ""
    console.print(f"{len(plan)} runs, {len(plan) - len(pending)} done, {reused}{left} to run (dry run: nothing ran)")
    if left and unknown == sum(1 for c in cells.values() if c[2]):
        console.print(f"no estimate of the time left: no finished rows of {_BASES}, in this results folder, the "
                      "ones beside it or results/", markup=False, highlight=False)
    elif left:
        uncounted = f"; {unknown} cell(s) with no such rows are not counted" if unknown else ""
        console.print(f"estimated {hours:.3g} hours of runs one after another (divide by the workers), from finished "
                      f"rows of {_BASES} (this results folder, the ones beside it and results/){uncounted}",
                      markup=False, highlight=False)


def _print_empty(console: Console, exp: Experiment, listing: bool) -> None:
    """The (dataset, method) pairs the plan leaves empty because the dataset's task is not the method's
    (:func:`tkbench.bench.plan.empty_cells`) or the method names other datasets
    (:func:`tkbench.bench.plan.excluded_cells`): each with its reason (dry run), or their count (a sweep)."""
    groups = {"the dataset's task is not the method's": list(empty_cells(exp)),
              "not in the method's datasets": [(label, method, f"not in {method}'s datasets")
                                               for label, method in excluded_cells(exp)]}
    for summary, pairs in groups.items():
        if not listing and pairs:
            console.print(f"{len(pairs)} (dataset, method) pair(s) not planned: {summary} (--dry-run lists them)",
                          markup=False, highlight=False)
        for label, method, why in pairs if listing else ():
            console.print(f"not planned: {label} / {method} ({why})", markup=False, highlight=False)


def _print_summary(console: Console, store: ResultStore, plan: list[RunSpec], outcome: RunOutcome) -> list[str]:
    """The summary table; returns one line per cell whose planned runs are not all ok (status counts and the
    first error), for the caller's exit code."""
    rows = {r["key"]: r for r in store.rows()}
    table = Table(title=f"summary ({outcome.executed} run now, {outcome.skipped} reused, {outcome.seconds:.1f} s)")
    for col in ("dataset", "method", "ok", "not ok", "metric", "mean", "fit s"):
        table.add_column(col)
    cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
    not_ok: list[str] = []
    for s in plan:
        absent = {"status": "not reached", "error": outcome.gated[s.key]} if s.key in outcome.gated \
            else {"status": "missing"}
        cells.setdefault((s.label, s.method), []).append(rows.get(s.key, absent))
    for (ds, m), rs in cells.items():
        good = [r for r in rs if r.get("status") == "ok"]
        metric = good[0]["metric"] if good else ""
        mean = sum(float(r.get(metric, "nan")) for r in good) / len(good) if good else float("nan")
        fit = sum(r["fit_seconds"] for r in good) / len(good) if good else float("nan")
        bad = Counter(r.get("status") for r in rs if r.get("status") != "ok")
        table.add_row(ds, m, str(len(good)), ", ".join(f"{n} {k}" for k, n in bad.items()) or "0", metric,
                      f"{mean:.4g}", f"{fit:.3g}")
        left_out = [r["error"] for r in rs if r.get("status") == "not reached"]
        if left_out:  # the kind's gate (a scaling budget): planned, not started, not a failure
            console.print(f"{ds}/{m}: {len(left_out)} run(s) {left_out[0]}", markup=False, highlight=False)
        bad.pop("not reached", None)
        if bad:
            errors = [r.get("error") for r in rs if r.get("status") != "ok" and r.get("error")]
            first = str(errors[0]).strip().splitlines()[0] if errors else "no row (interrupted or never run)"
            not_ok.append(f"{ds}/{m}: " + ", ".join(f"{n} {k}" for k, n in bad.items()) + f" of {len(rs)}: {first}")
    console.print(keep_whole(table, "dataset", "method"))
    return not_ok


def load_saved_experiment(results_dir: str | Path) -> Experiment:
    """The experiment stored beside a results folder's rows (as it was when the rows were produced)."""
    from tkbench.config import load_config

    root = Path(results_dir)
    source = saved_config_source(root)
    # references and CSV files are relative to the original config, not to this copy
    base = source.parent if source is not None and source.exists() else None
    exp = load_config(root / "config.yaml", check_reference=False, base=base)
    if base is not None:
        exp._source = source
    return exp


def saved_config_source(root: Path) -> Path | None:
    """The config file a results folder's rows came from (its ``meta.json``, written by `tkbench run`), or None
    when the folder has no meta file; InputError naming the file when it is damaged."""
    meta = root / "meta.json"
    if not meta.exists():
        return None
    try:
        data = json.loads(meta.read_bytes().decode("utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("config_source"), str):
            raise ValueError(f"found {str(data)[:80]!r}")
        return (root / data["config_source"]).resolve()
    except (OSError, ValueError) as exc:  # (UnicodeDecodeError and JSONDecodeError are ValueErrors)
        raise InputError(f"{meta}: not a tkbench meta file ({exc}): expected JSON {{\"config_source\": \"<path of "
                         "the config, relative to this folder>\"}}. Fix or delete it (`tkbench run` writes it "
                         "again; without it references resolve against the folder's config.yaml)") from None


def check_only(exp: Experiment, only: list[str] | None) -> None:
    """Every ``--only`` pattern must select some run: one that matches nothing is a typo, not an empty sweep."""
    from tkbench.bench.plan import _matches

    cells = [f"{ds.label}/{m.name}" for ds in exp.datasets for m in exp.methods if m.runs_on(ds.label)]
    for pattern in only or []:
        if not any(_matches(*cell.split("/", 1), [pattern]) for cell in cells):
            listed = ", ".join(cells[:30]) + (f" and {len(cells) - 30} more" if len(cells) > 30 else "")
            raise InputError(f"--only {pattern!r} matches no run of {exp.source or exp.name}: expected DATASET/METHOD "
                             f"(shell-style wildcards) matching one of {listed}")


def check_split_ids(exp: Experiment, split_ids: list[int], runs: list[RunSpec]) -> None:
    """``--split-ids`` that select none of the runs ``--only`` and ``--splits`` leave (``runs``): a typo or a
    count off by one (splits are numbered from 0), not an empty sweep."""
    have = sorted({s.split for s in runs})
    if not have:  # --only / --splits left nothing: the sweep's own "matched no run" says so
        return
    raise InputError(f"--split-ids {format_split_ids(split_ids)}: selects no run of {exp.source or exp.name}; its runs "
                     f"(after --only and --splits) have splits {format_split_ids(have)}, numbered from 0")


def check_same_config(exp: Experiment, store: ResultStore) -> None:
    """A results folder holds the rows of one config: a run of another config into it would replace its
    config.yaml and hide those rows from every report. Editing the same config (same file, or the same
    experiment name when the folder does not say which file) is fine: rows of runs no longer planned go stale."""
    if not store.config_path.exists() or exp.source is None:
        return
    try:
        previous = saved_config_source(store.root)
    except InputError:
        previous = None  # a damaged meta.json (the run rewrites it): fall back on the experiment name
    if previous is not None:
        if previous != Path(exp.source).resolve():
            raise InputError(f"{store.root}: holds the rows of {previous}; this run's config is {exp.source}. One "
                             "folder holds one config's rows: give another --out (if the config was only moved or "
                             f"renamed, delete {store.root / 'meta.json'} and run again)")
        return
    try:
        import yaml

        old_name = (yaml.safe_load(store.config_path.read_text(encoding="utf-8")) or {}).get("name")
    except (OSError, ValueError, yaml.YAMLError, AttributeError):
        old_name = None
    if old_name is not None and old_name != exp.name:
        raise InputError(f"{store.root}: holds the rows of experiment {old_name!r} ({store.config_path}); this run's "
                         f"config {exp.source} is experiment {exp.name!r}. One folder holds one config's rows: give "
                         "another --out")


def check_csv_unchanged(plan: list[RunSpec], store: ResultStore) -> None:
    """Resume check for users' CSV datasets: rows of this folder computed from a different version of the file
    (another sha256 under the same label) mean the file changed since; say so instead of silently starting the
    dataset over beside stale rows (``--force`` recomputes, another ``--out`` keeps both)."""
    current = {s.label: s.options.get("sha256") for s in plan if s.dataset == "csv"}
    if not current:
        return
    for row in store.rows():
        spec = row.get("spec") or {}
        label = spec.get("label")
        old = (spec.get("options") or {}).get("sha256")
        if spec.get("dataset") == "csv" and label in current and old and old != current[label]:
            raise InputError(f"{(spec.get('options') or {}).get('path', label)}: the CSV of dataset {label!r} changed "
                             f"since rows of {store.root} were computed (sha256 {old[:12]}… then, "
                             f"{current[label][:12]}… now): restore the file, run with --force to recompute, or "
                             "give another --out")
