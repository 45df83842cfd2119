"""What every kind of dataset source shares: the loaded :class:`Dataset`, file checksums, and the label rules.

The three sources (a vendored file, :mod:`tkbench.data.registry`; a generator, :mod:`tkbench.data.synthetic`; a
user's CSV, :mod:`tkbench.data.user_csv`) build on this module; it imports none of them, so that no source has to
import another back (issue 49: registry, synthetic and user_csv imported each other).
"""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

_OPS = {
    ">": np.greater,
    ">=": np.greater_equal,
    "<": np.less,
    "<=": np.less_equal,
}



@dataclass(frozen=True)
class Dataset:
    """A loaded dataset. ``y`` is +-1 for binary classification, integer codes for multi-class, float for regression."""

    name: str
    X: np.ndarray
    y: np.ndarray
    task: str
    feature_names: list[str]
    fingerprint: str
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def n_classes(self) -> int:
        return int(len(np.unique(self.y))) if self.task == "classification" else 0



def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()



def label_values(values: pd.Series, spec: dict[str, Any]) -> np.ndarray:
    """Labels from a target column: +1 / -1 by ``positive`` values or a ``threshold`` rule (binary), else class
    codes 0 .. k-1 in sorted order."""
    if spec.get("positive") is not None:
        positive = {str(v) for v in spec["positive"]}
        as_text = values.astype(str).str.strip()
        # numeric labels may be written 2 or 2.0
        as_text = as_text.map(lambda s: s[:-2] if s.endswith(".0") else s)
        return np.where(as_text.isin(positive), 1, -1).astype(np.int64)
    if spec.get("threshold") is not None:
        rule = spec["threshold"]
        numbers = values.astype(float).to_numpy()
        bound = float(np.median(numbers)) if rule["value"] == "median" else float(rule["value"])
        return np.where(_OPS[rule["op"]](numbers, bound), 1, -1).astype(np.int64)
    codes, _ = pd.factorize(values.astype(str), sort=True)
    return codes.astype(np.int64)




def select_features(ds: Dataset, features) -> Dataset:
    """The dataset restricted to the feature columns ``features`` (0-based; None: all of them)."""
    if features is None:
        return ds
    n = ds.X.shape[1]
    bad = [f for f in features if not 0 <= int(f) < n]
    if bad:
        raise ValueError(f"features {list(features)}: dataset {ds.name!r} has {n} features (indices 0..{n - 1})")
    cols = [int(f) for f in features]
    return dataclasses.replace(ds, X=np.ascontiguousarray(ds.X[:, cols]),
                               feature_names=[ds.feature_names[c] for c in cols])
