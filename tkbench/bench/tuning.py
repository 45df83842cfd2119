"""Hyper-parameter selection by k-fold cross-validation on the training part only (GUIDE section 3).

The grid is the Cartesian product of the method's grid values. A family's *path parameter* (the forest's number
of trees, kernel ridge's alpha) is scored for all its values from one fit at the largest value. A family with
``warm_start`` fits one model per fold along the grid, in grid order, each fit starting from the previous solution
(for example the kernel weights found for the previous C); for convex problems only the path to each optimum
changes. Ties go to the first candidate in grid order: the Cartesian product in the order the grid names its
parameters, whether or not one of them is scored along a path (so a family that gains a path chooses as before).
A candidate whose fit raises scores NaN and is skipped; if every candidate fails, the error is raised.
"""
from __future__ import annotations

import itertools
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.compose import TransformedTargetRegressor
from sklearn.model_selection import KFold, StratifiedKFold

from tkbench.bench.least_squares import fitted_classes, least_squares_error, least_squares_error_of
from tkbench.bench.spec import RunSpec
from tkbench.methods.compose import fitted_model, path_predictions, set_model_params, takes_checkpoint
from tkbench.methods.registry import Family


def score(task: str, y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """CV score, larger is better: accuracy for classification, minus the MSE for regression."""
    if task == "classification":
        return float(np.mean(y_true == y_pred))
    return -float(np.mean((np.asarray(y_true, float) - np.asarray(y_pred, float)) ** 2))


def folds(task: str, y: np.ndarray, k: int, seed: int, stratify: bool):
    if task == "classification" and stratify:
        _, counts = np.unique(y, return_counts=True)
        if counts.min() >= k:
            return StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(np.zeros(len(y)), y)
    return KFold(n_splits=k, shuffle=True, random_state=seed).split(np.zeros(len(y)))


def grid_candidates(grid: dict[str, list[Any]], path_param: str | None) -> tuple[list[dict[str, Any]], list[Any]]:
    """(candidates without the path parameter, values of the path parameter or [None])."""
    path_values = list(grid[path_param]) if path_param and path_param in grid else [None]
    names = [k for k in grid if k != path_param or path_values == [None]]
    combos = [dict(zip(names, vals, strict=True)) for vals in itertools.product(*(grid[n] for n in names))]
    return combos, path_values


def select_params(
    estimator,
    family: Family,
    grid: dict[str, list[Any]],
    X: np.ndarray,
    y: np.ndarray,
    *,
    task: str,
    k: int,
    seed: int,
    stratify: bool = True,
    cv_score: str | None = None,
    target_range: tuple[float, float] | None = None,
    checkpoint: Path | None = None,
    fit_checkpoint: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Choose the grid point with the best mean validation score. Returns (params, CV report).

    ``cv_score="ls_error"`` scores a fitted candidate by minus its least-squares error on the validation fold
    (:func:`tkbench.bench.least_squares.least_squares_error`, regression labels scaled by ``target_range``).
    ``checkpoint``: a JSON file that keeps each finished fold's scores, and within the current fold each finished
    candidate's (``partial``), so that a CV killed midway (a sweep stopped at the end of a session) resumes at its
    next candidate with the same result; the folds are seeded. A warm-started family starts its chain afresh in
    every fold, so it resumes at its next fold (its candidates depend on the ones before), and a resumed CV is the
    uninterrupted one.
    ``fit_checkpoint``: a path prefix; with a family whose ``checkpoint_cv_fits`` is set, the fit of candidate c in
    fold f saves its own state under ``<fit_checkpoint><f>-<c>`` (the model's ``checkpoint`` parameter), so that a
    CV killed inside one fit continues within it (the CV's ``seconds`` include the fit's time before the kill). A
    fit clears its state when it finishes; the state of a fit that raised is removed here. Results are those of
    the same fits without checkpoints."""
    combos, path_values = grid_candidates(grid, family.path_param)
    use_path = path_values != [None]
    by_ls = cv_score == "ls_error"
    table: dict[tuple[int, Any], list[float]] = {(c, v): [] for c in range(len(combos)) for v in path_values}
    t0, resumed = time.perf_counter(), 0.0  # resumed: fits' time in earlier sessions (fit_checkpoint)
    path_name = family.path_param if use_path else None
    done = read_checkpoint(checkpoint, len(table), len(path_values), path_param=path_name)

    def elapsed() -> float:
        return done["seconds"] + resumed + time.perf_counter() - t0

    # A resumed CV keeps what its earlier sessions finished, but never a failure: a candidate that raised then is
    # fitted again (the cause may have been fixed since, and a kept failure would fail the cell forever), so the
    # errors are this call's own. A warm-started chain with a failure in a finished fold is redone whole.
    errors: list[str] = []
    warm = family.warm_start and not isinstance(estimator, TransformedTargetRegressor)  # that one clones on fit
    fit_states = fit_checkpoint is not None and family.checkpoint_cv_fits and not warm \
        and takes_checkpoint(estimator)
    width = len(path_values)
    stored = [[f[c * width:(c + 1) * width] for c in range(len(combos))] for f in done["folds"]]
    finished: list[list[float]] = []  # the folds finished so far, flat as the checkpoint keeps them
    for fold, (train, valid) in enumerate(folds(task, y, k, seed, stratify)):
        if fold < len(stored):
            known, patching = stored[fold], True
        else:
            known, patching = ([] if warm or fold > len(stored) else done["partial"]), False
        if warm and not all(np.isfinite(v).all() for v in known):
            known = []
        shared = set_model_params(clone(estimator), {"warm_start": True}) if warm else None
        current: list[list[float]] = []  # this fold's candidates so far (the checkpoint's ``partial``)
        for c, combo in enumerate(combos):
            if c < len(known) and np.isfinite(known[c]).all():
                values = [float(v) for v in known[c]]
            else:
                est = shared if warm else clone(estimator)
                params = dict(combo)
                if use_path:
                    params[family.path_param] = max(path_values)
                if fit_states:
                    params["checkpoint"] = f"{fit_checkpoint}{fold}-{c}"
                set_model_params(est, params)
                try:
                    est.fit(X[train], y[train])
                    if fit_states:  # a fit continued from its saved state: its earlier sessions' time counts too
                        resumed += float(getattr(fitted_model(est), "fit_seconds_before_resume_", 0.0) or 0.0)
                    if use_path:  # every path value from this one fit: its predictions or decision values
                        preds = path_predictions(est, family, X[valid], path_values, decision=by_ls)
                        scores = {v: (-least_squares_error_of(p, y[valid], task, fitted_classes(est), target_range)
                                      if by_ls else score(task, y[valid], p)) for v, p in preds.items()}
                    elif by_ls:
                        scores = {None: -least_squares_error(est, X[valid], y[valid], task, target_range)}
                    else:
                        scores = {None: score(task, y[valid], est.predict(X[valid]))}
                except Exception as exc:  # a candidate that cannot be fitted is skipped, not fatal
                    errors.append(f"{combo}: {type(exc).__name__}: {exc}")
                    if fit_states:  # its saved state would never be resumed
                        _remove_fit_states(f"{fit_checkpoint}{fold}-{c}")
                    scores = dict.fromkeys(path_values, math.nan)
                values = [scores[v] for v in path_values]
                if checkpoint is not None and not warm and not patching and c < len(combos) - 1:
                    _write_checkpoint(checkpoint, finished + done["folds"][fold:], errors, elapsed(),
                                      current + [values], path_param=path_name)
            for v, value in zip(path_values, values, strict=True):
                table[(c, v)].append(value)
            current.append(values)
        finished.append([cells[-1] for cells in table.values()])
        if checkpoint is not None:
            # while stored folds are replayed, the saved partial fold after them stays in the file (it was dropped
            # here until 2026-11-29: a sweep killed before the next candidate finished lost its finished
            # candidates, 6 of satimage TK's 8 in the kernel benchmark's pilot, about 40 minutes of CV)
            keep = done["partial"] if patching and not warm else ()
            _write_checkpoint(checkpoint, finished + done["folds"][fold + 1:], errors, elapsed(), keep,
                              path_param=path_name)
    means = {cell: float(np.mean(s)) for cell, s in table.items()}
    finite = [(cell, m) for cell, m in means.items() if np.isfinite(m)]
    if not finite:  # a finished CV that failed: nothing to resume, and a re-run (after a fix) starts afresh
        if checkpoint is not None:
            checkpoint.unlink(missing_ok=True)
        raise RuntimeError("every CV candidate failed: " + "; ".join(errors[:3]))
    def params_of(cell: tuple[int, Any]) -> dict[str, Any]:  # in the grid's order of names, path or not
        merged = {**combos[cell[0]], **({family.path_param: cell[1]} if use_path else {})}
        return {name: merged[name] for name in grid}

    order = _grid_order(grid, [params_of(cell) for cell in table])  # ties: the first in the grid's own order
    rank = dict(zip(table, order, strict=True))
    best_cell, best = max(finite, key=lambda cm: (cm[1], -rank[cm[0]]))
    chosen = params_of(best_cell)
    report = {
        "cv_folds": k,
        "n_candidates": len(table),
        "best_score": best,
        "seconds": elapsed(),
        "failed_candidates": len(errors),
        # why each failed fit failed (candidate, exception), so that a row whose CV skipped a candidate says why;
        # until 2026-12-05 only the count was kept, and the reasons went with the checkpoint file when the run
        # finished (thyroid's first HGK_cv_refit draw: inhomogeneous failed on a fold, reason lost)
        "errors": [e if len(e) <= 500 else e[:497] + "..." for e in errors[:20]],
        "scores": [
            {"params": params_of(cell), "mean": means[cell], "std": float(np.std(table[cell]))}
            for cell in sorted(table, key=rank.__getitem__)
        ],
    }
    return chosen, report


def _grid_order(grid: dict[str, list[Any]], cells: list[dict[str, Any]]) -> list[int]:
    """Each cell's place in the Cartesian product of ``grid`` taken in the order it names its parameters (the
    order of the CV's candidates without a path parameter; with one, the walk differs and this order stays)."""
    names = list(grid)
    index = [{repr(v): i for i, v in enumerate(grid[n])} for n in names]
    sizes = [len(grid[n]) for n in names]

    def place(cell: dict[str, Any]) -> int:
        out = 0
        for name, where, size in zip(names, index, sizes, strict=True):
            out = out * size + where[repr(cell[name])]
        return out

    return [place(cell) for cell in cells]


def _remove_fit_states(prefix: str) -> None:
    for path in Path(prefix).parent.glob(Path(prefix).name + ".*"):
        path.unlink(missing_ok=True)


def read_checkpoint(path: Path | None, n_cells: int, n_path: int = 1, *, path_param: str | None = None
                    ) -> dict[str, Any]:
    """What an interrupted CV finished: ``folds`` (per fold, one score per grid cell), ``partial`` (the next fold's
    finished candidates, one score per path value each), its candidates' ``errors`` and ``seconds``; empty when
    there is none (or it belongs to another grid). ``path_param``: the path parameter the CV walks the grid by (the
    cells' order in a fold depends on it); a checkpoint written along another one, or without the field (files
    written before 2026-12-04, when kernel ridge's alpha became a path), is nothing done."""
    import json

    fresh: dict[str, Any] = {"folds": [], "partial": [], "errors": [], "seconds": 0.0}
    if path is None or not path.exists():
        return fresh

    def values(scores):
        return [math.nan if v is None else float(v) for v in scores]

    try:  # a damaged file (not JSON, other shapes or types) is no saved progress: the CV starts over
        data = json.loads(path.read_bytes().decode("utf-8"))
        if data.get("path_param") != path_param:
            return fresh
        folds_done = data.get("folds", [])
        partial = data.get("partial", [])
        if not all(len(f) == n_cells for f in folds_done) or not all(len(p) == n_path for p in partial) \
                or len(partial) * n_path >= n_cells:
            return fresh
        return {"folds": [values(f) for f in folds_done], "partial": [values(p) for p in partial],
                "errors": [str(e) for e in data.get("errors", [])], "seconds": float(data.get("seconds", 0.0))}
    except (OSError, ValueError, TypeError, AttributeError):
        return fresh


def _write_checkpoint(path: Path, folds_done: list[list[float]], errors: list[str], seconds: float,
                      partial: list[list[float]] = (), *, path_param: str | None = None) -> None:
    from tkbench.bench.store import write_json_atomic

    def values(scores):
        return [None if math.isnan(v) else v for v in scores]

    write_json_atomic(path, {"folds": [values(f) for f in folds_done], "partial": [values(p) for p in partial],
                             "errors": errors, "seconds": seconds, "path_param": path_param})


# ---------------------------------------------------------------------------------------------------------------
# one choice per (dataset, method): CV on the first k splits, median of the k choices (protocol.tune_on_first)

_TUNING_FIELDS = ("dataset", "fingerprint", "options", "features", "task", "family", "solver", "params", "grid",
                  "scaler", "target_scaler", "cv_folds", "stratify", "test_fraction", "subsample", "size", "kind",
                  "cv_size")


def tuning_key(spec: RunSpec, r: int, seed: int) -> str:
    """sha256 of what the CV on split r depends on (not the split being evaluated)."""
    import hashlib
    import json

    from tkbench.bench.spec import keyed_params
    from tkbench.keys import without_implied

    ident = {k: getattr(spec, k) for k in _TUNING_FIELDS} | {"tune_split": r, "tune_seed": seed}
    ident["params"] = keyed_params(spec.family, spec.params, spec.kind)  # changed estimator defaults (tkbench.keys)
    ident = without_implied(ident | {"cv_score": spec.cv_score}, "tuning")  # added later: tkbench.keys
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()


def combine_choices(choices: list[dict[str, Any]], grid: dict[str, list[Any]]) -> dict[str, Any]:
    """Per parameter, the median of the k chosen values (the lower middle one for even k, so that the choice is
    a grid value); a non-numeric parameter takes the most frequent value (ties: the first in grid order)."""
    import statistics

    out: dict[str, Any] = {}
    for name in choices[0]:
        values = [c[name] for c in choices]
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            out[name] = statistics.median_low(values)
        else:
            order = {repr(v): i for i, v in enumerate(grid.get(name, []))}
            out[name] = max(values, key=lambda v: (values.count(v), -order.get(repr(v), 0)))
    return out


def shared_selection(spec: RunSpec, estimator, family: Family, training_part, *, task: str,
                     root: str | None, target_range: tuple[float, float] | None = None
                     ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Hyper-parameters chosen once per (dataset, method): ``select_params`` on the training part of each of the
    first k splits (``training_part(r, seed) -> (X, y)``), then :func:`combine_choices`. Each split's CV result is
    cached in ``<root>/tuning/<key>.json`` under a file lock, so that the runs of a cell compute it once: a worker
    that finds a split's lock taken moves on to the next split and waits only at the end. A split's CV keeps its
    finished folds in ``<key>.folds.json`` while it runs, so that a sweep stopped midway resumes it fold by fold,
    and, for a family with ``checkpoint_cv_fits``, each fit's own state under ``<root>/checkpoints/<key>.cv<f>-<c>``
    (:func:`select_params`), so that a CV fit longer than a session continues within that fit (before 2026-12-03
    a shared CV restarted a killed fit: German's TK_wide cell, whose first C = 1e4 fit ran 55 minutes unfinished,
    might never have finished across sessions)."""
    import fcntl
    import json
    import os
    from pathlib import Path

    from tkbench.bench.store import CHECKPOINTS, TUNING, write_json_atomic

    k, seeds = int(spec.tuning["first"]), list(spec.tuning["seeds"])
    folder = Path(root) / TUNING if root else None
    results: dict[int, dict[str, Any]] = {}

    def compute(r: int) -> dict[str, Any]:
        X, y = training_part(r, seeds[r])
        key = tuning_key(spec, r, seeds[r])
        partial = (folder / key).with_suffix(".folds.json") if folder is not None else None
        states = str(Path(root) / CHECKPOINTS / f"{key}.cv") if root else None
        chosen, report = select_params(estimator, family, spec.grid, X, y, task=task, k=spec.cv_folds,
                                       seed=seeds[r], stratify=spec.stratify, cv_score=spec.cv_score,
                                       target_range=target_range, checkpoint=partial, fit_checkpoint=states)
        return {"split": r, "chosen": chosen, "best_score": report["best_score"], "seconds": report["seconds"],
                "scores": report["scores"]}

    set_aside: list[str] = []

    def cached(path: Path) -> dict[str, Any] | None:
        """The cached CV result in ``path``; a damaged one (not JSON, wrong fields) is renamed ``*.damaged`` and
        recomputed, instead of failing every run of the cell forever."""
        if not path.exists():
            return None
        try:
            data = json.loads(path.read_bytes().decode("utf-8"))
            ok = (isinstance(data, dict) and isinstance(data.get("chosen"), dict)
                  and isinstance(data.get("seconds"), int | float) and "best_score" in data)
        except (OSError, ValueError):
            ok = False
        if ok:
            return data
        aside = path.with_name(path.name + ".damaged")
        os.replace(path, aside)
        set_aside.append(str(aside))
        return None

    pending = list(range(k)) if folder is not None else []
    if folder is None:  # no results folder (a direct call): nothing to share
        results = {r: compute(r) for r in range(k)}
    while pending:
        progressed = False
        for r in list(pending):
            path = folder / f"{tuning_key(spec, r, seeds[r])}.json"
            found = cached(path)
            if found is not None:
                results[r] = found
                pending.remove(r)
                progressed = True
                continue
            folder.mkdir(parents=True, exist_ok=True)
            with open(path.with_suffix(".lock"), "w") as lock:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # another run computes this split; take the next one
                found = cached(path)
                if found is None:
                    found = compute(r)
                    write_json_atomic(path, found)
                    path.with_suffix(".folds.json").unlink(missing_ok=True)  # (its folds are in the result now)
                results[r] = found
                pending.remove(r)
                progressed = True
        if pending and not progressed:  # every remaining split is being computed elsewhere: wait for one
            path = folder / f"{tuning_key(spec, pending[0], seeds[pending[0]])}.json"
            with open(path.with_suffix(".lock"), "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
    per_split = [results[r] for r in range(k)]
    chosen = combine_choices([p["chosen"] for p in per_split], spec.grid)
    report = {"scope": f"first {k} splits" if k > 1 else "first split", "cv_folds": spec.cv_folds, "combine": "median",
              "choices": [p["chosen"] for p in per_split], "best_scores": [p["best_score"] for p in per_split],
              "seconds": float(sum(p["seconds"] for p in per_split)), "shared": True}
    if set_aside:
        report["damaged_cache_set_aside"] = set_aside  # named in the row: the choice was computed anew
    return chosen, report
