"""A run's typed spec and its stable key (the plan makes them, the run kinds fill them in, execution reads them).

The key is the sha256 of the run's resolved identity: dataset fingerprint (file checksums + options), method
(family, solver, params, grid, pre-processing), protocol values that change the numbers, split index and seed.
Names used only for display (the experiment name, a dataset alias), the timeout and thread counts are not part
of it; fields added after keys were stored follow the one rule of :mod:`tkbench.keys`.
"""
from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from tkbench.data import user_csv
from tkbench.keys import with_changed_defaults, without_implied
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
        # the fields as they are, not dataclasses.asdict's deep copy: the same JSON (the fields hold plain values and
        # containers, never a dataclass) and nothing below changes a nested value; asdict was 4 of the 18 s of
        # README's at-a-glance check (10,335 keys)
        d = {f.name: getattr(self, f.name) for f in _FIELDS}
        for k in ("experiment", "label", "timeout", "blas_threads", "key", "method"):
            d.pop(k)
        d = without_implied(d, "run")  # fields added after rows were stored (tkbench.keys): old keys hold
        d["params"] = keyed_params(self.family, self.params, self.kind)
        if self.dataset == user_csv.NAME:  # a user's CSV: its sha256 and label rule, not where the file lies
            d["options"] = user_csv.identity(d["options"])
        d["schema"] = RUN_SCHEMA
        return d

    def to_dict(self) -> dict[str, Any]:
        """The plain form a run's process receives and its row keeps (``spec``)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunSpec:
        """The typed spec back from :meth:`to_dict` (in the run's process: execution reads typed fields), its key
        carried over, not recomputed."""
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in d.items() if k in names}
        if values.get("features") is not None:
            values["features"] = tuple(values["features"])
        spec = cls(**{k: v for k, v in values.items() if k != "key"})
        object.__setattr__(spec, "key", d.get("key", ""))
        return spec

    @property
    def cell(self) -> str:
        return f"{self.label}/{self.method}"


_FIELDS = fields(RunSpec)


def changed_defaults(family: str) -> dict[str, tuple[Any, Any]]:
    """The family's changed estimator defaults ``{param: (old, new)}`` (:mod:`tkbench.keys`); none for an unknown
    family (it never reaches a key: the config check names it)."""
    try:
        return dict(get_family(family).changed_defaults or {})
    except (KeyError, ValueError, ImportError):
        return {}


def keyed_params(family: str, params: dict[str, Any], kind: str) -> dict[str, Any]:
    """``params`` as run and tuning keys see them: the family's changed estimator defaults applied
    (:mod:`tkbench.keys`), for kinds whose methods are the family's estimators (not density's kernel classes)."""
    from tkbench.kinds import get_kind

    changed = changed_defaults(family) if get_kind(kind).learners else {}
    return with_changed_defaults(params, changed) if changed else dict(params)


def run_key(spec: RunSpec) -> str:
    text = json.dumps(spec.identity(), sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def cell_splits(n_splits: int, ds, m) -> int:
    """The splits a (dataset, method) cell runs: the protocol's, cut by the dataset's and the method's own limits."""
    return min([n_splits] + [k for k in (ds.splits, m.splits_on(ds.label)) if k is not None])


def common_fields(exp, ds, m, task: str, fp: str, **fields) -> dict[str, Any]:
    """The RunSpec fields every kind shares, plus the kind's own ``fields``."""
    proto = exp.protocol
    return dict(experiment=exp.name, kind=exp.kind, dataset=ds.name, label=ds.label, options=dict(ds.options),
                fingerprint=fp, task=task, method=m.name, family=m.family,
                test_fraction=proto.test_fraction if ds.test_fraction is None else ds.test_fraction,
                cv_folds=proto.cv_folds, stratify=proto.stratify, subsample=ds.subsample or proto.subsample,
                blas_threads=proto.blas_threads, timeout=proto.timeout,
                cv_score=None if proto.cv_score == "default" else proto.cv_score,
                features=None if ds.features is None else tuple(ds.features)) | fields


def applicable(family, task: str, solver: str | None) -> set[str]:
    """The parameters of the family's estimator for this task (a mixed config may set task-specific ones)."""
    return _param_names(family.name, task, solver)


@functools.cache
def _param_names(family: str, task: str, solver: str | None) -> set[str]:
    return get_family(family).param_names(task, solver)


def keyed(spec: RunSpec) -> RunSpec:
    object.__setattr__(spec, "key", run_key(spec))
    return spec
