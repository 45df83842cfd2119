"""The papers' published numbers (``configs/reference/*.yaml``) looked up per (dataset, method).

Reference files hold ``results: {dataset: {method: value}}`` where a value is either a mapping with
``accuracy`` / ``mse`` / ``time`` / ``train_accuracy`` entries (each ``[mean, std]``, std .nan when the paper
gives none; in an ``error_percent`` file ``error`` / ``train_error`` instead), or a bare list read through the file's
``metric``: ``[mean, std]`` of ``train_seconds`` (a time), ``[error, std, seconds]`` of ``error_percent``
(accuracy = 100 - error), or ``[mean, std]`` of an MSE-like metric.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tkbench.textfile import UnreadableFile, load_yaml


@dataclass(frozen=True)
class PaperValue:
    metric: tuple[float, float] | None = None
    time: tuple[float, float] | None = None
    note: str = ""
    train: tuple[float, float] | None = None  # the training-set metric, when the paper prints it


class Reference:
    def __init__(self, path: Path):
        self.path = Path(path)
        data = load_yaml(self.path, "reference file")
        if not isinstance(data, dict):
            raise UnreadableFile(self.path, "(file)", "expected a mapping with source, table, metric and results "
                                 "(see 'Reference files' in README.md)")
        self.data: dict[str, Any] = data
        self.results: dict[str, dict[str, Any]] = self.data.get("results") or {}
        problem = _results_problem(self.results)
        if problem:
            raise UnreadableFile(self.path, problem[0], problem[1])

    @property
    def title(self) -> str:
        return f"{self.data.get('source', self.path.stem)} {self.data.get('table', '')}".strip()

    def lookup(self, dataset: str, method: str, metric: str) -> PaperValue | None:
        value = (self.results.get(dataset) or {}).get(method)
        if value is None:
            return None
        kind = str(self.data.get("metric", ""))
        if isinstance(value, dict) and kind == "error_percent" and metric == "accuracy":
            return PaperValue(_complement(value.get("error")), _pair(value.get("time")), str(value.get("note", "")),
                              _complement(value.get("train_error")))
        if isinstance(value, dict):
            pair = value.get(metric)
            time = value.get("time")
            return PaperValue(_pair(pair), _pair(time), str(value.get("note", "")), _pair(value.get(f"train_{metric}")))
        if kind == "train_seconds":
            return PaperValue(None, _pair(value))
        if kind == "error_percent" and len(value) >= 2:
            return PaperValue((100.0 - float(value[0]), float(value[1])),
                              (float(value[2]), float("nan")) if len(value) > 2 else None)
        return PaperValue(_pair(value), None)

    def exponents(self, key: str) -> dict[str, Any] | None:
        """Scaling exponents (``scaling.yaml``: ``key: {m_exponent, q_exponent, ...}``)."""
        entry = self.data.get(key)
        return entry if isinstance(entry, dict) else None


def _complement(value: Any) -> tuple[float, float] | None:
    """An [error %, std] pair as (accuracy %, std)."""
    pair = _pair(value)
    return None if pair is None else (100.0 - pair[0], pair[1])


def _pair(value: Any) -> tuple[float, float] | None:
    if value is None:
        return None
    return float(value[0]), float(value[1])


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _results_problem(results: Any) -> tuple[str, str] | None:
    """(where, what) of the first value in ``results`` that is not what a lookup reads, or None. Values are
    [mean, std, ...] lists of numbers (.nan for a std the paper does not give), single numbers (model sizes,
    times), null, or text under ``note``."""
    if not isinstance(results, dict):
        return "results", f"expected a mapping dataset -> method -> values, found {type(results).__name__}"
    for ds, methods in results.items():
        if not isinstance(methods, dict):
            return f"results.{ds}", f"expected a mapping method -> values, found {methods!r:.80}"
        for method, value in methods.items():
            entries = value.items() if isinstance(value, dict) else [(None, value)]
            for key, v in entries:
                where = f"results.{ds}.{method}" + (f".{key}" if key is not None else "")
                if key == "note" or v is None or (key is not None and _is_number(v)):
                    continue
                if key == "note" or not isinstance(v, list) or len(v) < 2 or not all(_is_number(x) for x in v):
                    return where, f"{v!r:.80}: expected a list [mean, std] of numbers (.nan for a missing std)"
    return None
