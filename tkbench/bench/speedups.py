"""Measured speedups of the code since committed rows ran (docs/reproduction.yaml's ``speedups:``); a row's price
at today's speed is :func:`tkbench.bench.cost.today_seconds`.

A row's seconds are those of the code it ran with. Where a later change made the same runs faster, and the change
was measured (a ratio in one run, its conservative end), the change is recorded once in the project's
docs/reproduction.yaml and applied wherever rows price future work: COST.md's *today's defaults* column
(:mod:`tkbench.report.cost`) and the dry run's estimates (:func:`tkbench.bench.cost.estimate`). The factors are
measured ratios applied to rows, not re-runs.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tkbench.bench.cost import run_parts


@dataclass(frozen=True)
class Speedup:
    """A change that made committed rows' runs faster since they ran, as measured (docs/reproduction.yaml)."""

    name: str  # short label, printed under the table
    family: str  # the rows' family
    params: dict[str, tuple[Any, ...]]  # each parameter's values the row's must be among (None: a row without it,
    # i.e. made before the parameter existed, which ran its old default)
    before: str  # ISO time the change landed: rows started before it ran without it
    factor: float  # the old path's time over the new one's, measured in one run (its conservative end)
    measured: str  # where and how the factor was measured
    min_train: int = 0  # rows with fewer training rows are not affected
    min_features: int = 0  # rows of data with fewer features are not affected
    part: str = "run"  # "run": the row's whole time; "fit": its final fit only (fit_seconds; its CV as it ran);
    # "cv": its hyper-parameter CV only (its own CV's cv_seconds, or the CV its cell shares)

    def saved(self, row: dict[str, Any], seconds: float, shared: bool = False) -> float:
        """The seconds this change saves of ``seconds`` of ``row``'s time (its own part, :func:`run_parts`, or with
        ``shared`` the CV its cell shares; what earlier speedups left of either); 0 when it does not apply. With
        ``part: fit``, the final fit's share of the row's own time (none of a shared CV); with ``part: cv``, its own
        CV's share of its own time, or all of a shared CV."""
        if not self.applies(row) or (shared and self.part == "fit"):
            return 0.0
        if not shared and self.part != "run":  # the named part's share of the row's own time
            own, shared_cv = run_parts(row)
            part = row.get("fit_seconds") if self.part == "fit" else (None if shared_cv else row.get("cv_seconds"))
            seconds *= min(1.0, float(part or 0.0) / own) if own > 0 else 0.0
        return seconds * (1.0 - 1.0 / self.factor)

    def applies(self, row: dict[str, Any]) -> bool:
        params = row.get("params") if isinstance(row.get("params"), dict) else {}
        started = str(row.get("started_at") or "")
        return (row.get("family") == self.family and bool(started) and started < self.before
                and int(row.get("n_train") or 0) >= self.min_train
                and int(row.get("n_features") or 0) >= self.min_features
                and all(params.get(k) in vals for k, vals in self.params.items())
                and (self.part != "cv" or float(row.get("cv_seconds") or 0.0) > 0.0))  # "cv": rows with a CV


class _SpeedupEntry(BaseModel):
    """One item of docs/reproduction.yaml's ``speedups:`` as written (validated, then made a :class:`Speedup`)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    family: str
    params: dict[str, Any]  # parameter: value or [values] (null: unset, i.e. its old default)
    before: str = Field(pattern=r"^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d)?([+-]\d\d:\d\d)?)?$")  # ISO date or time
    factor: Annotated[float, Field(ge=1.0, strict=True)]  # a measured ratio, old time over new time
    measured: str
    min_train: Annotated[int, Field(ge=0, strict=True)] = 0
    min_features: Annotated[int, Field(ge=0, strict=True)] = 0
    part: Literal["run", "fit", "cv"] = "run"


def load_speedups(root: Path) -> tuple[Speedup, ...]:
    """docs/reproduction.yaml's ``speedups:`` (none when it has none); a malformed entry is an InputError naming
    the file, the entry, the field, the value and what was expected."""
    from tkbench.errors import InputError
    from tkbench.textfile import load_yaml

    path = root / "docs" / "reproduction.yaml"
    if not path.is_file():
        return ()
    doc = load_yaml(path, "reproduction index") or {}
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a mapping with a speedups: list, got {type(doc).__name__}")
    items = doc.get("speedups") or []
    if not isinstance(items, list):
        raise InputError(f"{path}: speedups: expected a list of {{name, family, params, before, factor, measured, "
                         f"min_train?, min_features?, part?}}, got {type(items).__name__}")
    out = []
    for i, item in enumerate(items):
        where = f"{path}: speedups[{i}]"
        try:
            entry = _SpeedupEntry.model_validate(item)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(x) for x in err["loc"])
            if err["type"] == "missing":
                raise InputError(f"{where}: missing field {field} (expected name, family, params, before, factor, "
                                 "measured and optionally min_train, min_features and part)") from None
            if err["type"] == "extra_forbidden":
                raise InputError(f"{where}: unknown field {field} (expected name, family, params, before, factor, "
                                 "measured and optionally min_train, min_features and part)") from None
            raise InputError(f"{where}.{field}: {err.get('input')!r}: {err['msg']}") from None
        out.append(Speedup(name=entry.name, family=entry.family, before=entry.before, factor=entry.factor,
                           measured=entry.measured, min_train=entry.min_train,
                           min_features=entry.min_features, part=entry.part,
                           params={k: tuple(v) if isinstance(v, list) else (v,) for k, v in entry.params.items()}))
    return tuple(out)


def project_speedups(results_root: Path | None) -> tuple[Speedup, ...]:
    """The speedups of the project whose results folder is ``results_root`` (its parent's docs/reproduction.yaml;
    none without one, or without a results folder)."""
    return load_speedups(results_root.parent) if results_root is not None else ()
