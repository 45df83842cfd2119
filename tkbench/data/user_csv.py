"""A user's own CSV file as a dataset, named in a config without touching the registry (issue 22).

A config entry ``{csv: data/mine.csv, target: label, task: classification}`` (optional: ``alias`` (default: the
file's stem), ``positive`` (the +1 class value(s): a binary task), ``threshold`` (``{op: ">", value: 3}``: +1 when
the target satisfies it), ``drop`` (columns that are not features), ``delimiter`` (default ``,``), plus every
usual dataset field (``features``, ``subsample``, ``test_fraction``, ``splits``)) becomes the dataset ``csv`` with
the options below. The path is relative to the config file. The file needs a header row; every column but the
target and ``drop`` must be numeric.

The file's sha256 is taken when the config is loaded and travels in the options: it is part of every run key
(a changed file never reuses rows of the old one), checked again when a run loads the file (a file changed during
a sweep fails those runs with a checksum error), and recorded in every row (``spec.options.sha256``). The
absolute path travels too, but is not part of the run key (``RunSpec.identity``), so that a clone elsewhere keeps
its keys.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from tkbench.errors import ChecksumError, DatasetError

NAME = "csv"
RULE_FIELDS = ("target", "task", "positive", "threshold", "drop", "delimiter")


def options_for(path: Path, rule: dict[str, Any]) -> dict[str, Any]:
    """The dataset options of a CSV entry: its absolute path, its sha256 and its label rule."""
    from tkbench.data.registry import sha256_file

    return {"path": str(path.absolute()), "sha256": sha256_file(path),
            **{k: v for k, v in rule.items() if v is not None}}


def identity(options: dict[str, Any]) -> dict[str, Any]:
    """The options that define the data (everything but where the file lies)."""
    return {k: v for k, v in options.items() if k != "path"}


def fingerprint(options: dict[str, Any]) -> str:
    return hashlib.sha256(repr((NAME, sorted(identity(options).items()))).encode()).hexdigest()


def load(options: dict[str, Any]):
    """The dataset (checksum verified against the one taken when the config was loaded)."""
    from tkbench.data.registry import Dataset, _label, _read_table, sha256_file

    path = Path(options["path"])
    if not path.exists():
        raise ChecksumError(f"{path}: the CSV file of this dataset is missing (expected sha256 {options['sha256']})")
    actual = sha256_file(path)
    if actual != options["sha256"]:
        raise ChecksumError(f"{path}: sha256 mismatch: the file changed since the config was loaded (expected "
                            f"{options['sha256']}, found {actual})")
    spec = {"header": True, "delimiter": options.get("delimiter", ","), "task": options["task"],
            "positive": options.get("positive"), "threshold": options.get("threshold")}
    if spec["positive"] is not None and not isinstance(spec["positive"], list):
        spec["positive"] = [spec["positive"]]
    table = _read_table([path], spec)
    target = options["target"]
    if target not in table.columns:
        raise DatasetError(f"{path}: target column {target!r} not in the header {list(table.columns)}")
    features = [c for c in table.columns if c != target and c not in set(options.get("drop") or [])]
    try:
        X = table[features].astype(float).to_numpy()
    except ValueError as exc:
        raise DatasetError(f"{path}: a feature column is not numeric ({exc}); list it under 'drop'") from None
    if options["task"] == "classification":
        y = _label(table[target], spec)
        if len(np.unique(y)) < 2:
            raise DatasetError(f"{path}: the target {target!r} has one class only")
    else:
        try:
            y = table[target].astype(float).to_numpy()
        except ValueError:
            raise DatasetError(f"{path}: target {target!r} is not numeric (task regression)") from None
    info = {"title": path.name, "options": identity(options), "rows_in_files": len(table), "rows_dropped": 0,
            "target": target, "notes": f"user CSV {path} (sha256 {options['sha256']})"}
    return Dataset(NAME, np.ascontiguousarray(X), y, options["task"], features, fingerprint(options), info)
