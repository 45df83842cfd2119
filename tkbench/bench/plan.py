"""Config -> run specs, each with a stable key.

One run = (dataset, method, split) for ``accuracy`` and ``convergence`` experiments, and
(dataset, method, size m, varied value, repeat) for ``scaling`` experiments. The key is the sha256 of the run's
resolved identity: dataset fingerprint (file checksums + options), method (family, solver, params, grid,
pre-processing), protocol values that change the numbers, split index and seed. Names used only for display
(the experiment name, a dataset alias), the timeout and thread counts are not part of it.
"""
from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from tkbench.config import Experiment, Landscape
from tkbench.data import dataset_fingerprint, split_seed, task_of, user_csv
from tkbench.keys import without_implied
from tkbench.methods import get_family

RUN_SCHEMA = 1  # bump when the meaning of a run changes, to invalidate every cached row


@dataclass(frozen=True)
class RunSpec:
    experiment: str
    kind: str
    dataset: str
    label: str
    options: dict[str, Any]
    fingerprint: str
    task: str
    method: str
    family: str
    solver: str
    params: dict[str, Any]
    grid: dict[str, list[Any]]
    scaler: str
    target_scaler: str
    split: int
    seed: int
    test_fraction: float
    cv_folds: int
    stratify: bool
    subsample: int | None
    blas_threads: int
    timeout: float | None
    size: int | None = None
    test_size: int | None = None
    vary: dict[str, Any] | None = None
    trace: bool = False
    features: tuple[int, ...] | None = None  # a dataset's feature columns (None: all)
    landscape: dict[str, Any] | None = None  # kind 'landscape': the weight grid
    tuning: dict[str, Any] | None = None  # shared CV on the first k splits: {"first": k, "seeds": [...]}
    cv_score: str | None = None  # what CV maximises, when not the default (accuracy / minus MSE)
    cv_size: int | None = None  # CV on at most this many training rows (a seeded subset), the final fit on all
    key: str = field(default="", compare=False)

    def identity(self) -> dict[str, Any]:
        d = asdict(self)
        for k in ("experiment", "label", "timeout", "blas_threads", "key", "method"):
            d.pop(k)
        d = without_implied(d, "run")  # fields added after rows were stored (tkbench.keys): old keys hold
        if self.dataset == user_csv.NAME:  # a user's CSV: its sha256 and label rule, not where the file lies
            d["options"] = user_csv.identity(d["options"])
        d["schema"] = RUN_SCHEMA
        return d

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def cell(self) -> str:
        return f"{self.label}/{self.method}"


def run_key(spec: RunSpec) -> str:
    text = json.dumps(spec.identity(), sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _matches(label: str, method: str, only: list[str]) -> bool:
    if not only:
        return True
    for pattern in only:
        ds_pat, _, m_pat = pattern.partition("/")
        if fnmatch.fnmatch(label, ds_pat or "*") and fnmatch.fnmatch(method, m_pat or "*"):
            return True
    return False


def make_plan(exp: Experiment, only: list[str] | None = None, splits: int | None = None) -> list[RunSpec]:
    """Every run of the experiment (restricted by ``only`` patterns ``DATASET/METHOD`` and the first ``splits``)."""
    only = list(only or [])
    proto = exp.protocol
    n_splits = proto.splits if splits is None else min(splits, proto.splits)
    specs: list[RunSpec] = []
    for ds in exp.datasets:
        task = task_of(ds.name, ds.options)
        fp = dataset_fingerprint(ds.name, ds.options)
        for m in exp.methods:
            if not _matches(ds.label, m.name, only) or not m.runs_on(ds.label):
                continue
            if exp.kind == "density":
                specs.extend(_density_specs(exp, ds, m, task, fp, n_splits))
                continue
            fam = get_family(m.family)
            fixed = exp.kind in ("scaling", "landscape")  # fixed parameters, no CV
            grid = {} if fixed else dict(fam.default_grid if m.grid is None else m.grid)
            if not fixed and ds.label in m.per_dataset_grid:
                grid = dict(m.per_dataset_grid[ds.label])
            params = {**m.params, **m.per_dataset.get(ds.label, {})}
            if any(k not in applicable(fam, task, m.solver) for k in params):  # e.g. epsilon on a classifier
                params = {k: v for k, v in params.items() if k in applicable(fam, task, m.solver)}
            base = _common(exp, ds, m, task, fp, solver=m.solver or fam.default_solver, params=params, grid=grid,
                           scaler=m.scaler or fam.scaler, target_scaler=m.target_scaler or fam.target_scaler,
                           trace=exp.kind == "convergence",
                           landscape=(exp.landscape or Landscape()).model_dump() if exp.kind == "landscape" else None)
            if exp.kind == "scaling":
                sc = exp.scaling
                repeats = sc.repeats if splits is None else min(splits, sc.repeats)
                axis = m.vary or sc.vary  # a method's own vary axis replaces the experiment's
                vary_values = axis.values if axis else [None]
                for size in [*sc.sizes, *([None] if sc.full_size else [])]:  # None: the whole training part
                    for value in vary_values:
                        vary = None if axis is None else {"param": axis.param, "value": value, "size": axis.size}
                        params = dict(base["params"])
                        if vary is not None:
                            params[vary["param"]] = value
                        for r in range(repeats):
                            specs.append(_keyed(RunSpec(**{**base, "params": params}, split=r,
                                                        seed=split_seed(proto.seed, r), size=size,
                                                        test_size=sc.test_size, vary=vary)))
            else:
                cell_splits = _cell_splits(n_splits, ds, m)
                cap = m.max_train.get(ds.label) if isinstance(m.max_train, dict) else m.max_train
                cv_cap = m.cv_max_train.get(ds.label) if isinstance(m.cv_max_train, dict) else m.cv_max_train
                tuning = None
                if proto.tune_on_first and grid:
                    k = proto.tune_on_first
                    tuning = {"first": k, "seeds": [split_seed(proto.seed, r) for r in range(k)]}
                for i in range(cell_splits):  # a training cap is the scaling experiments' `size` (a subset)
                    specs.append(_keyed(RunSpec(**base, split=i, seed=split_seed(proto.seed, i), size=cap,
                                                tuning=tuning, cv_size=cv_cap if grid else None)))
    return specs


def _cell_splits(n_splits: int, ds, m) -> int:
    """The splits a (dataset, method) cell runs: the protocol's, cut by the dataset's and the method's own limits."""
    return min([n_splits] + [k for k in (ds.splits, m.splits_on(ds.label)) if k is not None])


def _common(exp: Experiment, ds, m, task: str, fp: str, **fields) -> dict[str, Any]:
    """The RunSpec fields every kind shares, plus the kind's own ``fields``."""
    proto = exp.protocol
    return dict(experiment=exp.name, kind=exp.kind, dataset=ds.name, label=ds.label, options=dict(ds.options),
                fingerprint=fp, task=task, method=m.name, family=m.family,
                test_fraction=proto.test_fraction if ds.test_fraction is None else ds.test_fraction,
                cv_folds=proto.cv_folds, stratify=proto.stratify, subsample=ds.subsample or proto.subsample,
                blas_threads=proto.blas_threads, timeout=proto.timeout,
                cv_score=None if proto.cv_score == "default" else proto.cv_score,
                features=None if ds.features is None else tuple(ds.features)) | fields


def _density_specs(exp: Experiment, ds, m, task: str, fp: str, n_splits: int) -> list[RunSpec]:
    """One run per (kernel class, varied value, draw): the class fitted to the optimal kernel matrix of a balanced
    draw of ``subsample`` rows (paper 000 section 4.3.3)."""
    proto = exp.protocol
    params = {**m.params, **m.per_dataset.get(ds.label, {})}
    base = _common(exp, ds, m, task, fp, solver=m.solver or "clarabel", grid={}, scaler="minmax",
                   target_scaler="none", stratify=True)
    out = []
    axis = m.vary
    for value in (axis.values if axis else [None]):
        vary = None if axis is None else {"param": axis.param, "value": value, "size": axis.size}
        run_params = dict(params) if vary is None else {**params, vary["param"]: value}
        for i in range(_cell_splits(n_splits, ds, m)):
            out.append(_keyed(RunSpec(**base, params=run_params, split=i, seed=split_seed(proto.seed, i),
                                      vary=vary)))
    return out


def applicable(family, task: str, solver: str | None) -> set[str]:
    """The parameters of the family's estimator for this task (a mixed config may set task-specific ones)."""
    return _param_names(family.name, task, solver)


@functools.cache
def _param_names(family: str, task: str, solver: str | None) -> set[str]:
    return get_family(family).param_names(task, solver)


def _keyed(spec: RunSpec) -> RunSpec:
    object.__setattr__(spec, "key", run_key(spec))
    return spec
