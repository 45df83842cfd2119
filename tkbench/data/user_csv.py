"""A user's own CSV file as a dataset, named in a config without touching the registry (issue 22).

A config entry ``{csv: data/mine.csv, target: label, task: classification}`` (optional: ``alias`` (default: the
file's stem), ``positive`` (the +1 class value(s): a binary task), ``threshold`` (``{op: ">", value: 3}``: +1 when
the target satisfies it), ``drop`` (columns that are not features), ``delimiter`` (default ``,``), plus every
usual dataset field (``features``, ``subsample``, ``test_fraction``, ``splits``)) becomes the dataset ``csv`` with
the options below. The path is relative to the config file. The file needs a header row; every column but the
target and ``drop`` must be numeric.

Read safely (each a DatasetError naming the file, and the line or column, never a traceback): gzip-compressed,
non-UTF-8 and empty files, ragged rows, duplicate column names (``y,y`` would keep a copy of the target as a
feature), an empty target cell, a file with no feature column, and feature values that are empty, not finite or
beyond +-1e100 (so that squares and sums of squares in every kernel stay finite) are refused.

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
    from tkbench.data.base import sha256_file

    return {"path": str(path.absolute()), "sha256": sha256_file(path),
            **{k: v for k, v in rule.items() if v is not None}}


def identity(options: dict[str, Any]) -> dict[str, Any]:
    """The options that define the data (everything but where the file lies)."""
    return {k: v for k, v in options.items() if k != "path"}


def fingerprint(options: dict[str, Any]) -> str:
    return hashlib.sha256(repr((NAME, sorted(identity(options).items()))).encode()).hexdigest()


def load(options: dict[str, Any]):
    """The dataset (checksum verified against the one taken when the config was loaded)."""
    from tkbench.data.base import Dataset, label_values, sha256_file

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
    if spec["positive"] is not None:  # YAML reads `positive: [yes]` as a boolean: match the label's spellings
        spec["positive"] = [w for v in spec["positive"] for w in (YAML_BOOL_WORDS[v] if isinstance(v, bool) else [v])]
    table = read_csv(path, spec["delimiter"])
    target = options["target"]
    if target not in table.columns:
        raise DatasetError(f"{path}: target column {target!r} not in the header {list(table.columns)}")
    features = [c for c in table.columns if c != target and c not in set(options.get("drop") or [])]
    if not features:
        raise DatasetError(f"{path}: no feature column: every column is the target {target!r} or listed under "
                           f"'drop' (header {list(table.columns)})")
    empty = table[target].isna() | (table[target].astype(str).str.strip() == "")
    if empty.any():
        raise DatasetError(f"{path}: line {int(np.argmax(empty.to_numpy())) + 2}: the target {target!r} is empty "
                           f"({int(empty.sum())} row(s)); fill or remove those rows")
    X = _features(path, table, features)
    if options["task"] == "classification":
        y = label_values(table[target], spec)
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


# The label spellings a YAML boolean came from (YAML 1.1, which PyYAML reads): `positive: [yes]` is True.
YAML_BOOL_WORDS = {True: ["yes", "Yes", "YES", "y", "Y", "true", "True", "TRUE", "on", "On", "ON"],
                   False: ["no", "No", "NO", "n", "N", "false", "False", "FALSE", "off", "Off", "OFF"]}

# Beyond this magnitude a feature's square (every distance, every kernel) overflows float64 or loses all precision.
MAX_ABS = 1e100


def read_csv(path: Path, delimiter: str):
    """The table of a user's CSV file, every cell as text; DatasetError for what cannot be read as such."""
    import csv
    import io

    import pandas as pd

    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raise DatasetError(f"{path}: gzip-compressed: decompress it first (gunzip -k {path.name})")
    if not raw.strip():
        raise DatasetError(f"{path}: the file is empty: expected a header row and data rows")
    if b"\x00" in raw[:8192]:
        raise DatasetError(f"{path}: a binary file, not CSV text")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DatasetError(f"{path}: line {line}: byte 0x{raw[exc.start]:02x} is not UTF-8: save the file as UTF-8 "
                           "(e.g. iconv -f latin1 -t utf-8)") from None
    header = next(csv.reader(io.StringIO(text), delimiter=delimiter, skipinitialspace=True))
    names = [h.strip() for h in header]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise DatasetError(f"{path}: line 1: duplicate column name(s) {dupes}: every column needs its own name (a "
                           "copy of the target kept as a feature would give a perfect score)")
    if any(n == "" for n in names):
        raise DatasetError(f"{path}: line 1: column {names.index('') + 1} has no name in the header")
    width = len(names)
    for number, fields in enumerate(csv.reader(io.StringIO(text), delimiter=delimiter), start=1):
        if fields and len(fields) != width and number > 1:
            raise DatasetError(f"{path}: line {number}: {len(fields)} fields, expected {width} (as in the header)")
    try:
        table = pd.read_csv(io.StringIO(text), sep=delimiter, skipinitialspace=True, dtype=str, header=0,
                            skip_blank_lines=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise DatasetError(f"{path}: not readable as CSV ({exc})") from None
    if table.empty:
        raise DatasetError(f"{path}: a header but no data rows")
    table.columns = names
    return table


def _features(path: Path, table, features: list[str]) -> np.ndarray:
    """The feature columns as floats: every cell a finite number of magnitude at most MAX_ABS."""
    import pandas as pd

    cols = []
    for name in features:
        values = pd.to_numeric(table[name].str.strip(), errors="coerce")
        bad = values.isna().to_numpy() | ~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))
        if bad.any():
            i = int(np.argmax(bad))
            raise DatasetError(f"{path}: line {i + 2}: column {name!r}: {table[name].iloc[i]!r}: not numeric: "
                               "expected a finite number (a text column can be listed under 'drop')")
        big = np.abs(values.to_numpy(dtype=float)) > MAX_ABS
        if big.any():
            i = int(np.argmax(big))
            raise DatasetError(f"{path}: line {i + 2}: column {name!r}: {table[name].iloc[i]}: beyond +-{MAX_ABS:g}; "
                               "rescale the column (its square overflows in every kernel)")
        cols.append(values.to_numpy(dtype=float))
    return np.column_stack(cols)
