"""What the runs left in a plan will cost, estimated from finished rows (``tkbench run --dry-run``, issue 50).

A user plans a sweep before starting it. For each (dataset, method) cell with runs left, the estimate is the median
time (CV and final fit, over every session a run took: :func:`run_parts`) of finished ok rows of the same cell,
found in the results folder and in every results folder beside it or under ``results/`` (the committed sweeps):

- "same runs": rows whose run identity (:meth:`tkbench.bench.spec.RunSpec.identity`) equals the planned run's but
  for the split, its seed and the shared-CV setting: the same data, size, method, parameters, grid and protocol;
- "same method, other grid": failing those, rows of the same family, solver, parameters and scalers on the same
  data with the same training size, whose grid or protocol differs (a wider grid, other folds): their time is
  taken apart, the run without its CV, plus the planned run's CV priced afresh as its fits (grid points, the path
  parameter's values sharing a fit, times folds) at the rows' final-fit seconds each (``fit_seconds``; a fold
  trains on (k - 1) / k of the rows, so this is on the high side for methods that grow faster than linearly);
- "same method, other data": failing those, rows of the same method (family, solver, parameters, grid, scalers and
  protocol, all but the data) on other data with the same number of training rows (within 10 %: a capped method's
  ``max_train`` on two sets, or two sets of about one size), as they ran: the issue's "rows of the same method
  and size". It comes before the next basis because one family's parameters can move the cost by orders of
  magnitude and the data, at one size, much less (the measured case: docs/protocol.md). The basis names the data
  the rows are from; the data's features and classes still change the cost (the estimate is a plan);
- "same method, other data and size": failing those, rows of the same method on other data of another training
  size within a factor of :data:`OTHER_SIZE` (1.5) of the planned one, the nearest size only (of the same kind of
  task first), each scaled by (m / n)^:data:`SIZE_EXPONENT` (3: a dense kernel method's factorisations and solves,
  which dominate its time at the sizes where an estimate matters). The basis names the data and both sizes ("same
  method, other data and size (bank, higgs; m = 7000 scaled to 6000 as m^3)"). Added 2026-12-04: with no row of its
  method at its size, paper 002's HGK_refit on cycle (6000 rows) was priced from the paper's objective's rows of
  the same data (the next basis), 5230 s a run, while HGK_refit's own rows at 7000 rows cost 820-3900 s on 8-28
  features: the objective moves the cost by 5-10x (docs/protocol.md), 17 % more rows by at most 1.6x, and the
  scaling corrects the most of that. A cubic is on the high side when the rows are smaller than the planned run
  (its O(m^2) kernel passes grow slower) and on the low side when larger;
- "same family and size": failing those, rows of the same family and solver on the same data with the same
  training size (dataset, options, subsample, test fraction, size, features), whatever their parameters, grid or
  protocol, as they ran (their own CV included): the roughest guess, said so. Other parameters of one family
  and solver can cost an order of magnitude more or less (docs/protocol.md gives the measured case), so their
  fits are not used as a unit for a grid, and only the rows nearest the planned run's settings are used: those
  whose parameters, grid and scalers differ from the planned run's in the fewest names (:func:`_differing`), which
  the basis names ("same family and size; objective differs"). Before 2026-12-02 every such row counted, so a few
  cheap pilot rows of a study could outvote the one row of the planned settings and price a cell 50-200 times too
  low (the measured case: docs/protocol.md). A row that differs from the planned run only in its grid and in the
  values of grid parameters (fixed parameters against a grid over them) is the same method at other grid points,
  and is taken apart as for "same method, other grid": its run without its own CV, plus the planned CV's fits at
  the row's final-fit seconds (the basis adds "CV as N of their fits", or "without their CV" for a planned run with
  no grid); until 2026-12-02 such rows were taken as they ran, pricing a 24-fit CV at one fit. A row that differs
  in other parameters too is taken as it ran: its fit is another method's, and may itself cover several candidates,
  so as a unit it could price the planned CV several times too high (both measured cases: docs/protocol.md);
- none: no estimate ("no rows"), and the total says how many cells it leaves out.

A CV shared by the cell's splits (``protocol.tune_on_first``) is paid once per cell: a row that carried it (its
``cv.shared``) counts its final fit per run, and the shared CV's median is added once for a cell that has no
finished run in the results folder yet (whose tuning is therefore not cached there). Before 2026-11-28 the first
run's CV was counted for every run left, so a pilot of one split per cell priced a 30-split cell at 30 CVs. Every
row of such a cell names the CV's seconds, but only the run that computed it paid them (:func:`run_parts`).

Times are the rows' wall-clock seconds with the threads they ran with (their rows say which); the total is the time
of the runs one after another (divide by the workers of a parallel sweep). A row that records its CPU time
(``cpu_seconds``, rows since 2026-12-02) counts at the smaller of its wall clock and its CPU time
(:func:`quiet_factor`): a run that shared its cores with other sweeps took longer on the wall clock than its own
work, and for a run on one thread its CPU time is about its wall clock on a quiet machine (on more threads, an upper
bound on it). Older rows, and rows made on another machine, carry the times they ran with: the estimate is a plan,
not a promise. A change that made the same runs faster since they ran, measured and recorded in the project's
docs/reproduction.yaml (``speedups:``, :mod:`tkbench.bench.speedups`), prices the rows it applies to at today's
speed where a basis takes a row whole, as COST.md does (since 2026-12-04), and the basis says how many.
"""
from __future__ import annotations

import hashlib
import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tkbench.bench.spec import RunSpec
from tkbench.bench.store import ResultStore

NOT_THE_CELL = ("split", "seed", "tuning", "schema")
OTHER_SIZE = 1.5  # "same method, other data and size": rows within this factor of the planned training rows
SIZE_EXPONENT = 3  # ... scaled by (planned rows / their rows) ** SIZE_EXPONENT


@dataclass(frozen=True)
class Estimate:
    seconds: float  # per run, its final fit (and its own CV when the CV is not shared)
    n_rows: int
    basis: str  # "same runs" | "same method, other grid" | "same method, other data (...)" | "same method, other data
    #             and size (...)" | "same family and size"
    shared_cv: float = 0.0  # a CV shared by the cell's splits, paid once by the cell's first run
    unclocked: int = 0  # of the n_rows, those that record no CPU time: priced at their wall clock, busy or quiet

    def total(self, runs: int, cv_left: float, cv_seconds_left: float | None = None) -> float:
        """Seconds of ``runs`` runs of the cell; ``cv_left``: the share of its shared CV still to compute (0 when
        cached, a fraction when fold checkpoints hold part of it); ``cv_seconds_left``: the seconds that CV still
        needs as its own checkpoints measure them, which stands in for the rows' price of it when given; both from
        :func:`shared_cv_progress`."""
        if runs == 0:
            return 0.0
        cv = cv_seconds_left if cv_seconds_left is not None else min(max(cv_left, 0.0), 1.0) * self.shared_cv
        return runs * self.seconds + cv


def shared_cv_progress(spec: RunSpec, out: Path) -> tuple[float, float | None]:
    """(share left, seconds left) of a cell's shared CV, read in one pass from ``out``'s tuning folder.

    Seconds left: by the CV's own fold checkpoints, per split not cached, the seconds its CV has taken over the
    share of it done, times the share left (the same CV's pace, where the rows of the estimate may be other grids
    or sizes; the checkpoint's wall clock, so beside other sweeps an upper bound); None when a split's CV is not
    cached and has no work saved, or for a cell without a shared CV. Share left: the share of a
    cell's shared CV (``spec.tuning``: the first k splits) not yet in ``out``'s tuning folder:
    per split, 0 when its result is cached (``<key>.json``), else 1 less what its fold checkpoint holds, read as the
    CV itself would resume it (:func:`tkbench.bench.tuning.read_checkpoint`: finished folds and the next fold's
    finished candidates, over ``cv_folds``; a damaged or mismatched checkpoint is nothing done); the mean over the k
    splits. 1.0 for a cell without a shared CV."""
    from tkbench.bench.store import TUNING
    from tkbench.bench.tuning import read_checkpoint, tuning_key

    if not spec.tuning:
        return 1.0, None
    combos, path_values = _grid_candidates(spec)
    n_cells, folds = len(combos) * len(path_values), max(int(spec.cv_folds), 1)
    k, seeds = int(spec.tuning["first"]), list(spec.tuning["seeds"])
    left: list[float] = []
    measured: float | None = 0.0
    for r in range(k):
        path = out / TUNING / f"{tuning_key(spec, r, seeds[r])}.json"
        if path.exists():
            left.append(0.0)
            continue
        saved = read_checkpoint(path.with_suffix(".folds.json"), n_cells, len(path_values),
                                path_param=_path_param(spec) if path_values != [None] else None)
        done = min(len(saved["folds"]) + len(saved["partial"]) * len(path_values) / n_cells, folds) / folds
        left.append(1.0 - done)
        if measured is not None:
            measured = measured + saved["seconds"] * (1.0 - done) / done if done > 0 and saved["seconds"] > 0 \
                else None
    return (sum(left) / k if k else 1.0), (measured if k else None)


def _as_stored(spec: RunSpec, key: str | None) -> RunSpec:
    """A stored row's spec as its key was made: a row made before its family changed a default (``key`` no longer
    recomputes) ran with the old default, which its spec's params do not name (:mod:`tkbench.keys`)."""
    import dataclasses

    from tkbench.bench.spec import changed_defaults, run_key

    if key is None or run_key(spec) == key:
        return spec
    old = {name: values[0] for name, values in changed_defaults(spec.family).items() if name not in spec.params}
    return dataclasses.replace(spec, params={**old, **spec.params}) if old else spec


def _identity(spec: RunSpec, without: tuple[str, ...] = ()) -> str:
    """A hash of a run's identity without the fields that do not make its cell (the split, ...) and ``without``."""
    ident = {k: v for k, v in spec.identity().items() if k not in NOT_THE_CELL and k not in without}
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()


DATA_FIELDS = ("dataset", "options", "fingerprint", "features", "subsample", "test_fraction", "size", "test_size")


def _data(spec: dict[str, Any]) -> str:
    """The data a run draws its splits from (its training rows before a method's cap), from a spec's plain form."""
    return json.dumps([spec.get(k) for k in ("dataset", "options", "subsample", "test_fraction", "features")],
                      sort_keys=True, default=list)


def _method_identity(spec: RunSpec) -> str:
    """A run's identity without its data and split: the same method, parameters, grid, scalers and protocol."""
    return _identity(spec, without=DATA_FIELDS)


def _rough(spec: RunSpec, params: bool = False) -> str:
    # the solver is part of it: one family's solvers can cost orders of magnitude apart (docs/protocol.md);
    # ``params``: the method's parameters and scalers too
    return json.dumps([spec.family, spec.solver, spec.dataset, spec.options, spec.subsample, spec.test_fraction,
                       spec.size, spec.features, *([spec.params, spec.scaler, spec.target_scaler] if params else [])],
                      sort_keys=True, default=str)


def finished_rows(out: Path, root: Path | None = None) -> list[dict[str, Any]]:
    """The ok rows of ``out`` and of every results folder beside it or under ``root`` (the default results folder's
    parent, ``results/``), each a folder with a rows/ subfolder."""
    folders = {out}
    for parent in {out.parent, *([root] if root is not None else [])}:
        if parent.is_dir():
            folders |= {p for p in parent.iterdir() if (p / "rows").is_dir()}
    rows = []
    for folder in sorted(folders):
        rows += [r for r in ResultStore(folder).rows()
                 if r.get("status") == "ok" and isinstance(r.get("total_seconds"), int | float)]
    return rows


def estimate(pending: list[RunSpec], rows: list[dict[str, Any]], speedups: tuple[Any, ...] = ()
             ) -> dict[tuple[str, str], Estimate | None]:
    """Per (dataset label, method) cell of ``pending``: the estimated seconds of one of its runs, or None.

    ``speedups`` (:func:`tkbench.bench.speedups.project_speedups`: the measured speedups of the code since rows ran)
    price a row taken whole (same runs, same method on other data, same family and size as it ran) at today's
    speed, as COST.md's *today's defaults* do (since 2026-12-04; before, a cell whose rows predate a faster path
    was priced at the old speed, e.g. paper 002's SVM at 32 hours where its rows on the path ran 1.5x faster); the
    basis then says how many of its rows were so priced. A row taken apart (another grid: its run without its CV
    plus the planned CV's fits) keeps its parts as it ran: a speedup names a share of a row's time, not of a fit."""
    def at_today(r: dict[str, Any], ran: _Price) -> _Price:
        if not speedups:
            return ran
        today = _Price((today_seconds(r, ran[0], False, speedups), today_seconds(r, ran[1], True, speedups)),
                       ran.clocked)
        today.faster = tuple(today) != tuple(ran)
        return today
    exact: dict[str, list[_Price]] = {}
    regrid: dict[str, list[_Price]] = {}  # (seconds without any CV, one fit's seconds)
    # (pair, the row's settings, (seconds without any CV, one fit's seconds))
    rough: dict[str, list[tuple[_Price, dict[str, Any], tuple[float, float]]]] = {}
    # both matches need the planned run's dataset and family: rows of others are skipped before their identity is
    # computed (a dry run reads every committed row under results/: 20 000 identities took 7 of its 10 s)
    wanted = {(s.dataset, s.family) for s in pending}
    # "same method, other data": the planned cells' training rows (a split's training part, from any finished row
    # of the same data made without a cap, then the method's cap), and the rows of their families at about that size
    split_rows: dict[str, int] = {}
    classes: dict[str, int] = {}  # the data's classes, where a row names them (0 for regression)
    datasets = {s.dataset for s in pending}
    for r in rows:
        spec = r.get("spec")
        if isinstance(spec, dict) and spec.get("dataset") in datasets:
            key = _data(spec)
            if isinstance(r.get("n_classes"), int):
                classes[key] = r["n_classes"]
            if spec.get("size") is None and isinstance(r.get("n_train"), int):
                split_rows[key] = max(split_rows.get(key, 0), r["n_train"])
    planned_m: dict[tuple[str, str], int] = {}
    planned_classes: dict[tuple[str, str], int | None] = {}
    sizes_of: dict[str, set[int]] = {}  # family -> the planned training sizes
    for s in pending:
        if (s.label, s.method) in planned_m:
            continue
        data = _data(s.to_dict())
        m = split_rows.get(data)
        m = s.size if m is None else (m if s.size is None else min(m, s.size))
        if m:
            planned_m[(s.label, s.method)] = int(m)
            planned_classes[(s.label, s.method)] = classes.get(data)
            sizes_of.setdefault(s.family, set()).add(int(m))
    # (pair, n_train, dataset label, classes)
    other_data: dict[str, list[tuple[_Price, int, str, int | None]]] = {}
    for r in rows:
        try:
            spec = None
            n, sizes = r.get("n_train"), sizes_of.get(r["spec"].get("family"), ())
            near = isinstance(n, int) and n > 0 and any(m / OTHER_SIZE <= n <= m * OTHER_SIZE for m in sizes)
            same_cell = (r["spec"].get("dataset"), r["spec"].get("family")) in wanted
            if not (near or same_cell):  # a row of no use to this plan: its times are not read
                continue
            quiet = quiet_factor(r)
            ran = _pair(r, quiet)  # the parts as the row ran them
            pair = at_today(r, ran)
            if near:
                spec = _as_stored(RunSpec.from_dict(r["spec"]), r.get("key"))
                other_data.setdefault(_method_identity(spec), []).append((pair, n, spec.label, r.get("n_classes")))
            if not same_cell:
                continue
            spec = spec or _as_stored(RunSpec.from_dict(r["spec"]), r.get("key"))
            exact.setdefault(_identity(spec), []).append(pair)  # the cell: same data, method, grid, protocol
            own_cv = 0.0 if ran[1] else float(r.get("cv_seconds") or 0.0) * quiet
            bare = max(ran[0] - own_cv, 0.0)
            fit = r.get("fit_seconds")
            unit = float(fit) * quiet if isinstance(fit, int | float) and fit >= 0 else bare
            regrid.setdefault(_rough(spec, params=True), []).append(_Price((bare, unit), pair.clocked))
            rough.setdefault(_rough(spec), []).append((pair, _settings(spec), (bare, unit)))
        except (KeyError, TypeError, ValueError):  # a row of an older layout: no estimate from it
            continue

    def made(pairs, basis, spec):
        cvs = [c for _, c in pairs if c > 0.0]
        once = statistics.median(cvs) if cvs and spec.tuning else 0.0
        faster = sum(p.faster for p in pairs)
        if faster:
            basis += f"; {faster} at today's speed"
        return Estimate(seconds=statistics.median(f for f, _ in pairs), n_rows=len(pairs), basis=basis, shared_cv=once,
                        unclocked=_unclocked(pairs))

    out: dict[tuple[str, str], Estimate | None] = {}
    for s in pending:
        cell = (s.label, s.method)
        if cell in out:
            continue
        same = exact.get(_identity(s))
        if same:
            out[cell] = made(same, "same runs", s)
            continue
        other_grid = regrid.get(_rough(s, params=True))
        if other_grid:  # the same method but for its grid: the planned CV's fits at the rows' fit seconds
            bare = statistics.median(b for b, _ in other_grid)
            cv = statistics.median(u for _, u in other_grid) * cv_fits(s)
            unclocked = _unclocked(other_grid)
            basis = "same method, other grid"
            out[cell] = (Estimate(seconds=bare, n_rows=len(other_grid), basis=basis, shared_cv=cv, unclocked=unclocked)
                         if s.tuning else
                         Estimate(seconds=bare + cv, n_rows=len(other_grid), basis=basis, unclocked=unclocked))
            continue
        m = planned_m.get(cell)
        if m is not None:
            # the nearest rows only: the same kind of task (binary, multi-class: one-vs-rest fits one model per
            # class), then the nearest training size
            mine = planned_classes.get(cell)

            def other_kind(k, mine=mine):  # binary (or regression) against multi-class: one-vs-rest fits more
                return mine is not None and k is not None and (k > 2) != (mine > 2)

            others = [(pair, n, label, k) for pair, n, label, k in other_data.get(_method_identity(s), ())
                      if label != s.label]
            elsewhere = [(pair, label, (other_kind(k), abs(n - m))) for pair, n, label, k in others
                         if abs(n - m) <= 0.1 * m]
            if elsewhere:
                nearest = min(d for *_, d in elsewhere)
                elsewhere = [(pair, label) for pair, label, d in elsewhere if d == nearest]
                out[cell] = made([p for p, _ in elsewhere],
                                 f"same method, other data ({_shown_labels(elsewhere)}; m = {m})", s)
                continue
            # another size within OTHER_SIZE: the nearest size (on a log scale) of the same kind of task, scaled
            scaled = [(pair, n, label, (other_kind(k), abs(math.log(n / m)))) for pair, n, label, k in others
                      if m / OTHER_SIZE <= n <= m * OTHER_SIZE]
            if scaled:
                nearest = min(d for *_, d in scaled)
                scaled = [(_scaled(pair, (m / n) ** SIZE_EXPONENT), n, label) for pair, n, label, d in scaled
                          if d == nearest]
                sizes = "/".join(str(n) for n in sorted({n for _, n, _ in scaled}))
                out[cell] = made([p for p, _, _ in scaled],
                                 f"same method, other data and size ({_shown_labels([(p, lb) for p, _, lb in scaled])}"
                                 f"; m = {sizes} scaled to {m} as m^{SIZE_EXPONENT})", s)
                continue
        near = rough.get(_rough(s))
        if not near:
            out[cell] = None
            continue
        mine = _settings(s)
        apart = [_differing(mine, settings) for _, settings, _ in near]
        fewest = min(len(d) for d in apart)
        fits = cv_fits(s)
        nearest, regridded = [], False
        for (pair, settings, (bare, unit)), d in zip(near, apart, strict=True):
            if len(d) != fewest:
                continue
            # the same method at other grid points (only the grid and the values of grid parameters differ): the
            # row's CV is not the planned run's, so its run without it, plus the planned CV's fits at its fit
            if "grid" in d and set(d) - {"grid"} <= set(s.grid) | set(settings["grid"] or {}):
                regridded = True
                pair = _Price((bare, unit * fits) if s.tuning else (bare + unit * fits, 0.0), pair.clocked)
            nearest.append(pair)
        names = sorted({n for d in apart if len(d) == fewest for n in d})
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        basis = "same family and size" + (f"; {shown} {'differs' if len(names) == 1 else 'differ'}" if names else "")
        if regridded:
            basis += f"; CV as {fits} of their fits" if fits else "; without their CV"
        out[cell] = made(nearest, basis, s)
    return out


def today_seconds(row: dict[str, Any], seconds: float, shared: bool, speedups: tuple[Any, ...]) -> float:
    """``seconds`` of ``row`` (its own time, or with ``shared`` the CV its cell shares) at today's speed: each
    of ``speedups`` (:class:`tkbench.bench.speedups.Speedup`) that applies takes its share of what the ones before
    it left."""
    for sp in speedups:
        seconds -= sp.saved(row, seconds, shared)
    return seconds


def quiet_factor(r: dict[str, Any]) -> float:
    """The factor from a row's wall-clock seconds to its price: its CPU time over its wall clock where the row
    records both and the CPU time is the smaller (a run slowed by other work on its cores), else 1."""
    cpu, total = r.get("cpu_seconds"), r.get("total_seconds")
    if isinstance(cpu, int | float) and isinstance(total, int | float) and 0 < cpu < total:
        return float(cpu) / float(total)
    return 1.0


def run_parts(r: dict[str, Any]) -> tuple[float, float]:
    """A finished row's (seconds of its own, seconds of the CV its cell shares), over every session it ran in.

    ``total_seconds`` is the wall clock of the session that finished the run. A run continued from its saved state
    also spent its earlier sessions' time, which its timed parts count: ``fit_seconds`` a final fit resumed from its
    checkpoint (the row's ``resumed``), ``cv_seconds`` a CV resumed from its fold checkpoints. So a row's own seconds
    are the larger of its wall clock and the sum of its parts (warm-up, its own CV, final fit, prediction). Until
    2026-12-03 the wall clock alone was taken: paper 002's Table 1 counted 21 hours for 28 resumed rows whose parts
    sum to 65 (its costliest draw 2.1 hours for 11.5), and the dry run priced one of its cells at 1225 s a run for
    15345 (docs/protocol.md names them).

    A CV shared by the cell's splits: every row names its seconds (over its sessions), but only the run that computed
    it paid them. A row at least as long as the CV computed it in its session, and its own seconds are the rest (or
    its parts without the CV, if larger); a shorter one read the cached choice, or computed part of the CV (resumed
    from fold checkpoints, or finished beside another worker), and counts its timed parts without the CV (before
    2026-11-29 the CV was subtracted from such rows, and one config's cells priced at -432 s a run; then their wall
    clock was taken, and a resumed pilot CV priced a cell at 473 s a run for a 2.8 s fit). Rows without timed
    parts (older layouts) are counted at their wall clock."""
    def part(name: str) -> float:
        value = r.get(name)
        return float(value) if isinstance(value, int | float) and value >= 0 else 0.0

    total = float(r["total_seconds"])
    cv = r.get("cv")
    shared = part("cv_seconds") if isinstance(cv, dict) and cv.get("shared") else 0.0
    timed = isinstance(r.get("fit_seconds"), int | float)
    parts = part("warmup_seconds") + part("fit_seconds") + part("predict_seconds")
    if not shared:
        return max(total, parts + part("cv_seconds")), 0.0
    if total >= shared:
        return max(total - shared, parts), shared
    return (parts if timed else total), shared


def run_seconds(r: dict[str, Any]) -> float:
    """A finished row's whole time over its sessions (:func:`run_parts`), with a shared CV where this row computed it
    in its session (its wall clock at least as long as the CV); 0 for a row without a wall clock (a run killed
    before it recorded one)."""
    if not isinstance(r.get("total_seconds"), int | float):
        return 0.0
    own, shared = run_parts(r)
    return own + (shared if float(r["total_seconds"]) >= shared > 0 else 0.0)


class _Price(tuple):
    """A row's (own seconds, shared CV seconds) as priced, and whether the row recorded its CPU time (``clocked``):
    a row without it is priced at its wall clock, which may hold other sweeps' work on its cores (the dry run says
    how many of a cell's basis rows are such)."""

    clocked: bool
    faster: bool  # priced at today's speed, below the row's own (a measured speedup applies to it)

    def __new__(cls, values: tuple[float, float], clocked: bool) -> _Price:
        price = super().__new__(cls, values)
        price.clocked = bool(clocked)
        price.faster = False
        return price


def _scaled(price: _Price, factor: float) -> _Price:
    """``price`` times ``factor`` (a row of another size priced at the planned size), keeping what it says."""
    out = _Price((price[0] * factor, price[1] * factor), price.clocked)
    out.faster = price.faster
    return out


def _shown_labels(pairs: list[tuple[Any, str]]) -> str:
    labels = sorted({label for _, label in pairs})
    return ", ".join(labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3 else "")


def _unclocked(prices: list[_Price]) -> int:
    return sum(not p.clocked for p in prices)


def _pair(r: dict[str, Any], quiet: float) -> _Price:
    """:func:`run_parts` priced by :func:`quiet_factor` (its share of this session's wall clock that was the run's own
    CPU time, taken for its earlier sessions too): the shared CV scales with the row that computed it in its
    session, and stays as named in a row that read the cached choice or computed part of it."""
    own, shared = run_parts(r)
    clocked = isinstance(r.get("cpu_seconds"), int | float)
    return _Price((own * quiet, (shared * quiet if float(r["total_seconds"]) >= shared else shared)), clocked)


def _settings(spec: RunSpec) -> dict[str, Any]:
    """What a run of one family, solver, data and size is set to: its parameters, its grid and its scalers."""
    return {**{f"params.{k}": v for k, v in spec.params.items()}, "grid": spec.grid, "scaler": spec.scaler,
            "target_scaler": spec.target_scaler}


def _differing(a: dict[str, Any], b: dict[str, Any]) -> tuple[str, ...]:
    """The names whose values differ between two runs' settings (a name set in one only counts), parameters by
    their own names."""
    def same(x, y):
        return json.dumps(x, sort_keys=True, default=str) == json.dumps(y, sort_keys=True, default=str)

    return tuple(sorted(n.removeprefix("params.") for n in a.keys() | b.keys()
                        if n not in a or n not in b or not same(a[n], b[n])))


def cv_fits(spec: RunSpec) -> int:
    """The fits of one CV of ``spec``: its grid's candidates (a path parameter's values share a fit) times its
    folds; 0 without a grid."""
    if not spec.grid:
        return 0
    combos, _ = _grid_candidates(spec)
    return len(combos) * max(int(spec.cv_folds), 1)


def _grid_candidates(spec: RunSpec) -> tuple[list, list]:
    """``spec``'s grid as its CV walks it (:func:`tkbench.bench.tuning.grid_candidates`): the candidates without
    the family's path parameter, and that parameter's values (one fit serves them all). A family that cannot be
    loaded has no path parameter here (the estimate is then an upper bound)."""
    from tkbench.bench.tuning import grid_candidates

    return grid_candidates(spec.grid, _path_param(spec))


def _path_param(spec: RunSpec) -> str | None:
    """The path parameter of ``spec``'s family; None for a family that cannot be loaded."""
    from tkbench.methods import get_family

    try:
        return get_family(spec.family).path_param
    except (KeyError, ValueError, ImportError):
        return None


ORDERS = ("plan", "cheap-first")


def cheapest_cells_first(pending: list[RunSpec], out: Path, root: Path | None = None,
                         rows: list[dict[str, Any]] | None = None, speedups: tuple[Any, ...] = ()
                         ) -> tuple[list[RunSpec], list[tuple[tuple[str, str], float | None]]]:
    """``tkbench run --order cheap-first``: the runs of ``pending`` with each (dataset, method) cell's runs kept
    together in plan order, the cells sorted by their estimated seconds left (shortest first: of a sweep stopped
    at any point, the most cells are then complete, and a leaderboard ranks complete cells only). A cell's seconds
    are :func:`estimate`'s per run times its runs left, plus the share of its shared CV not yet computed, or that
    CV's own measured pace where its checkpoints have one (:func:`shared_cv_progress`). Cells with no estimate
    (no finished row of the same runs or of the same family and size) come last, in plan order. ``rows``: the
    finished rows to price from, when the caller has read them (:func:`finished_rows` of ``out`` and ``root``
    otherwise); ``speedups``: as for :func:`estimate`. Returns the runs and the cells in their new order with their
    seconds (None: no estimate). The order changes no result: every run is seeded from the config alone."""
    if rows is None and pending:
        rows = finished_rows(out, root)
    costs = estimate(pending, rows, speedups) if pending else {}
    cells: dict[tuple[str, str], list[RunSpec]] = {}
    for s in pending:
        cells.setdefault((s.label, s.method), []).append(s)
    seconds: dict[tuple[str, str], float | None] = {}
    for cell, runs in cells.items():
        est = costs.get(cell)
        seconds[cell] = None if est is None else est.total(len(runs), *shared_cv_progress(runs[0], out))
    place = {cell: i for i, cell in enumerate(cells)}
    order = sorted(cells, key=lambda c: (seconds[c] is None, seconds[c] or 0.0, place[c]))
    return [s for cell in order for s in cells[cell]], [(cell, seconds[cell]) for cell in order]
