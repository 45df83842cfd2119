"""The dataset registry: ``datasets/registry.yaml`` -> verified arrays.

Every vendored file is checked against the sha256 recorded in the registry before it is parsed; a missing
file or a mismatch raises :class:`~tkbench.errors.ChecksumError` naming the file and both digests.

A registry entry describes how the table becomes ``(X, y)``:

- ``files``: one or more CSV files (several are concatenated, e.g. Gas Turbine's five years);
- ``header`` / ``columns``: whether the file has a header row, else the column names to use;
- ``target``: the column to predict; ``drop``: columns that are neither target nor feature (ids);
- ``positive``: target values that make the +1 class (binary classification, the other values are -1);
  or ``threshold: {op, value}``: +1 when ``target op value`` holds (``value: median`` uses the column median);
- ``target_codes``: (regression) the target is a class label turned into its rank among the sorted labels,
  0 .. k-1 (paper 002 regresses its multi-class labels scaled to [-1, 1]: option ``task: regression_codes``);
- ``missing``: a token (such as ``?``) whose rows are dropped;
- ``encode``: categorical columns mapped to numbers;
- ``options``: named variants a config can pick (``liver: {label: drinks}``), each a set of field overrides;
- ``realisations``: a benchmark that comes with fixed train/test realisations (the Raetsch/IDA sets): ``member``
  (the path pattern of the ``{part}_{kind}_{k}`` files inside the archive), ``count`` (realisations held), ``of``
  (realisations published), ``checksums`` (the SHA256SUMS member listing every file's sha256) and
  ``checksums_sha256`` (that listing's own sha256). Each member is checked against the listing, and the listing
  against the registry, when it is read: the checksums are those of the original bytes, not of the archive.
  The loaded dataset stacks train_1, test_1, train_2, ... and records each realisation's row indices in
  ``info["fixed_splits"]``; split i of a config is realisation i + 1 (:func:`fixed_split`).
"""
from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tkbench.data import cache as data_cache
from tkbench.data import user_csv
from tkbench.data.base import _OPS, Dataset, label_values, sha256_file  # noqa: F401 (re-exported)
from tkbench.errors import ChecksumError, DatasetError
from tkbench.textfile import UnreadableFile, load_yaml


def datasets_dir() -> Path:
    """Where the vendored data live: ``$TKBENCH_DATASETS`` or ``<repo>/datasets``."""
    env = os.environ.get("TKBENCH_DATASETS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "datasets"


@lru_cache(maxsize=4)
def _load_registry_file(path: str) -> dict[str, Any]:
    try:
        doc = load_yaml(path, "dataset registry")
    except UnreadableFile as exc:
        raise DatasetError(f"{path}: {exc.where}: {exc.what}") from None
    entries = doc.get("datasets") if isinstance(doc, dict) else None
    if not isinstance(entries, dict) or not all(isinstance(e, dict) and isinstance(e.get("files"), list)
                                                for e in entries.values()):
        raise DatasetError(f"{path}: not a dataset registry: expected a mapping 'datasets' of name -> entry with "
                           "'files' (see the datasets section of README.md)")
    return entries


def registry() -> dict[str, dict[str, Any]]:
    """The raw registry entries, keyed by dataset name."""
    path = datasets_dir() / "registry.yaml"
    if not path.exists():
        raise DatasetError(f"{path}: dataset registry not found (set TKBENCH_DATASETS to the folder holding registry.yaml)")
    return _load_registry_file(str(path))


def file_names(name: str) -> list[str]:
    return [f["path"] for f in registry()[name]["files"]]


def resolve_options(name: str, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Apply a config's dataset options to the registry entry.

    Returns ``(spec, chosen)``: the entry with the chosen variants' overrides applied, and the full set of option
    values (defaults filled in) that identifies the variant.
    """
    reg = registry()
    if name not in reg:
        raise DatasetError(f"unknown dataset {name!r}; known: {', '.join(sorted(reg))}")
    entry = dict(reg[name])
    declared = entry.pop("options", None) or {}
    options = dict(options or {})
    unknown = sorted(set(options) - set(declared))
    if unknown:
        allowed = ", ".join(sorted(declared)) or "none"
        raise DatasetError(f"dataset {name!r} has no option {unknown[0]!r}; its options: {allowed}")
    chosen: dict[str, Any] = {}
    for opt, decl in declared.items():
        value = options.get(opt, decl["default"])
        choices = decl["choices"]
        if value not in choices:
            raise DatasetError(
                f"dataset {name!r} option {opt!r} = {value!r} is not one of: {', '.join(map(str, choices))}"
            )
        chosen[opt] = value
        entry.update(choices[value] or {})
    return entry, chosen


def verify_files(name: str) -> list[Path]:
    """Check every file of dataset ``name`` against its registered sha256; return the paths."""
    root = datasets_dir()
    paths = []
    for f in registry()[name]["files"]:
        path = root / f["path"]
        if not path.exists():
            raise ChecksumError(f"{path}: data file of dataset {name!r} is missing (expected sha256 {f['sha256']})")
        actual = sha256_file(path)
        if actual != f["sha256"]:
            raise ChecksumError(
                f"{path}: sha256 mismatch for dataset {name!r}: expected {f['sha256']}, found {actual}; "
                "the file was modified or corrupted (restore it with `git checkout -- datasets/`)"
            )
        paths.append(path)
    return paths


def fingerprint(name: str, chosen: dict[str, Any]) -> str:
    """A sha256 over the registered file checksums and the chosen options (no file is read)."""
    files = registry()[name]["files"]
    text = repr((name, [f["sha256"] for f in files], sorted(chosen.items())))
    return hashlib.sha256(text.encode()).hexdigest()


def _read_libsvm(raw: str, columns: list[str]) -> pd.DataFrame:
    """LIBSVM's sparse text format (label, then index:value pairs, 1-based) as a dense table of strings: the label
    in ``columns[0]``, feature j in ``columns[j]``; an absent index is 0."""
    rows = []
    for number, line in enumerate(raw.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        row = [parts[0]] + ["0"] * (len(columns) - 1)
        for item in parts[1:]:
            index, _, value = item.partition(":")
            if not index.isdigit() or not 1 <= int(index) < len(columns):
                raise DatasetError(f"LIBSVM line {number}: feature {item!r} is not index:value with index in "
                                   f"1..{len(columns) - 1}")
            row[int(index)] = value
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def _read_table(paths: list[Path], spec: dict[str, Any]) -> pd.DataFrame:
    frames = []
    for path in paths:
        raw = path.read_bytes().decode("utf-8")
        if spec.get("format") == "libsvm":
            frames.append(_read_libsvm(raw, spec["columns"]))
            continue
        kw: dict[str, Any] = {"sep": spec.get("delimiter", ","), "skipinitialspace": True, "dtype": str}
        if spec.get("header", False):
            kw["header"] = 0
        else:
            kw["header"] = None
            kw["names"] = spec["columns"]
        frames.append(pd.read_csv(io.StringIO(raw), **kw))
    table = pd.concat(frames, ignore_index=True)
    table.columns = [str(c).strip() for c in table.columns]
    return table


_label = label_values  # (the name the registry's own code uses)


def _class_codes(values: pd.Series) -> np.ndarray:
    """``target_codes``: the class of each row as its rank among the sorted distinct labels (0 .. k-1), a float
    regression target. Numeric labels sort as numbers (satimage's 1-5 and 7 become 0-5), others as text."""
    text = values.astype(str).str.strip()
    numeric = pd.to_numeric(text, errors="coerce")
    keys = numeric if not numeric.isna().any() else text
    codes, _ = pd.factorize(keys, sort=True)
    return codes.astype(float)


def read_realisation_members(spec: dict[str, Any], archive: Path) -> dict[str, bytes]:
    """The members of a realisations archive, each checked against the archive's SHA256SUMS listing, which is
    itself checked against the registry's ``checksums_sha256``."""
    real = spec["realisations"]
    with tarfile.open(archive, mode="r:*") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    listing = members.get(real["checksums"])
    if listing is None:
        raise ChecksumError(f"{archive}: member {real['checksums']!r} (the checksum listing) is missing")
    actual = hashlib.sha256(listing).hexdigest()
    if actual != real["checksums_sha256"]:
        raise ChecksumError(f"{archive}: {real['checksums']} has sha256 {actual}, expected {real['checksums_sha256']}")
    folder = real["checksums"].rpartition("/")[0]
    expected = {}
    for line in listing.decode().splitlines():
        digest, _, fname = line.strip().partition("  ")
        if digest:
            expected[f"{folder}/{fname}" if folder else fname] = digest
    for member, digest in expected.items():
        if member not in members:
            raise ChecksumError(f"{archive}: member {member!r} listed in {real['checksums']} is missing")
        found = hashlib.sha256(members[member]).hexdigest()
        if found != digest:
            raise ChecksumError(f"{archive}: member {member!r} has sha256 {found}, expected {digest} (original bytes)")
    return members


def _load_realisations(name: str, spec: dict[str, Any], chosen: dict[str, Any], archive: Path) -> Dataset:
    real = spec["realisations"]
    members = read_realisation_members(spec, archive)
    blocks_X, blocks_y, fixed = [], [], []
    start = 0
    for k in range(1, int(real["count"]) + 1):
        idx = []
        for part in ("train", "test"):
            data = members[real["member"].format(part=part, kind="data", k=k)]
            labels = members[real["member"].format(part=part, kind="labels", k=k)]
            X = np.loadtxt(io.BytesIO(data), ndmin=2)
            y = np.loadtxt(io.BytesIO(labels), ndmin=1)
            if len(X) != len(y):
                raise DatasetError(f"dataset {name!r} realisation {k} {part}: {len(X)} rows of data, {len(y)} labels")
            blocks_X.append(X)
            blocks_y.append(y)
            idx.append(np.arange(start, start + len(y)))
            start += len(y)
        fixed.append((idx[0], idx[1]))
    X = np.vstack(blocks_X)
    labels = pd.Series(np.concatenate(blocks_y))
    y = _label(labels, spec)
    info = {
        "title": spec.get("title", name),
        "options": chosen,
        "rows_in_files": len(y),
        "rows_dropped": 0,
        "target": spec.get("target", "label"),
        "notes": spec.get("notes", ""),
        "fixed_splits": fixed,
        "realisations": {"count": int(real["count"]), "of": int(real["of"])},
    }
    names = [f"x{j + 1}" for j in range(X.shape[1])]
    return Dataset(name, np.ascontiguousarray(X), y, spec["task"], names, fingerprint(name, chosen), info)


def _read_idx(raw: bytes) -> np.ndarray:
    """An IDX array (the MNIST format: magic 0x0000 type ndim, big-endian sizes, then the values)."""
    types = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in types:
        raise DatasetError("not an IDX file (bad magic number)")
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    values = np.frombuffer(raw, dtype=types[raw[2]], offset=4 + 4 * ndim)
    if values.size != int(np.prod(shape)):
        raise DatasetError(f"IDX file: {values.size} values for shape {shape}")
    return values.reshape(shape)


def _fixed_split_parts(name: str, spec: dict[str, Any], paths: list[Path]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{'train': (X, digits), 'test': (X, digits)} of a dataset with one fixed train/test split, X in the file's
    own dtype (MNIST's uint8 pixels): the caller converts only the rows its task keeps (:func:`_as_features`)."""
    fmt = spec["fixed_split"]
    if fmt["format"] == "idx":
        parts = {}
        for part in ("train", "test"):
            images, labels = (_read_idx(gzip.decompress(paths[i].read_bytes())) for i in fmt[part])
            parts[part] = (images.reshape(len(images), -1), labels.astype(np.int64))
        return parts
    if fmt["format"] == "npz":
        with np.load(paths[0], allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in fmt["arrays"]}
        for key, digest in fmt["arrays"].items():
            found = hashlib.sha256(np.ascontiguousarray(arrays[key]).tobytes()).hexdigest()
            if found != digest:
                raise ChecksumError(f"{paths[0]}: array {key!r} has sha256 {found}, expected {digest}")
        return {part: (arrays[f"{part}_data"].reshape(len(arrays[f"{part}_data"]), -1),
                       arrays[f"{part}_target"].astype(np.int64)) for part in ("train", "test")}
    raise DatasetError(f"dataset {name!r}: unknown fixed_split format {fmt['format']!r} (expected idx or npz)")


def _as_features(X: np.ndarray, fmt: dict[str, Any]) -> np.ndarray:
    """Float features of a fixed split's kept rows: the values as float64, divided by ``divide_by`` (MNIST: 255).
    Converting after the rows are picked and stacked gives the same numbers as converting the whole files first
    (elementwise), with one float64 array made instead of four: MNIST's 70 000 x 784 pixels are 440 MB as
    float64, and making those arrays was most of an uncached load (the 3v8 task 7.5 s before, 1.0 s after;
    ``train_rows: all`` 10.2 and 6.2 s; one process beside two sweeps, 2026-12-03)."""
    out = np.array(X, dtype=float, order="C")
    out /= float(fmt.get("divide_by", 1.0))
    return out


def _load_fixed_split(name: str, spec: dict[str, Any], chosen: dict[str, Any], paths: list[Path]) -> Dataset:
    """A dataset with one fixed train/test split and a binary task over digit classes (``classes``: the +1 digits,
    the -1 digits; other rows dropped); ``train_rows`` keeps the first k training rows of the task's digits."""
    parts = _fixed_split_parts(name, spec, paths)
    positive, negative = ({int(d) for d in group} for group in spec["classes"])
    blocks_X, blocks_y, idx, start = [], [], [], 0
    for part in ("train", "test"):
        X, digits = parts[part]
        keep = np.flatnonzero(np.isin(digits, list(positive | negative)))
        if part == "train" and spec.get("train_rows") is not None:
            if len(keep) < int(spec["train_rows"]):
                raise DatasetError(f"dataset {name!r}: {len(keep)} training rows of the task, "
                                   f"{spec['train_rows']} asked for")
            keep = keep[:int(spec["train_rows"])]
        blocks_X.append(X[keep])
        blocks_y.append(np.where(np.isin(digits[keep], list(positive)), 1, -1).astype(np.int64))
        idx.append(np.arange(start, start + len(keep)))
        start += len(keep)
    X, y = _as_features(np.vstack(blocks_X), spec["fixed_split"]), np.concatenate(blocks_y)
    info = {
        "title": spec.get("title", name),
        "options": chosen,
        "rows_in_files": sum(len(p[1]) for p in parts.values()),
        "rows_dropped": sum(len(p[1]) for p in parts.values()) - len(y),
        "target": spec.get("target", "label"),
        "notes": spec.get("notes", ""),
        "fixed_splits": [(idx[0], idx[1])],
        "realisations": {"count": 1, "of": 1},
    }
    names = [f"x{j + 1}" for j in range(X.shape[1])]
    return Dataset(name, np.ascontiguousarray(X), y, spec["task"], names, fingerprint(name, chosen), info)


def fixed_split(ds: Dataset, split: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The (train, test) rows of split ``split`` of a dataset with fixed realisations (realisation split + 1);
    None for a dataset without them."""
    fixed = ds.info.get("fixed_splits")
    if fixed is None:
        return None
    if not 0 <= split < len(fixed):
        raise DatasetError(f"dataset {ds.name!r} has {len(fixed)} fixed realisations; split {split} "
                           f"(realisation {split + 1}) does not exist")
    return fixed[split]


def realisation_count(name: str) -> int | None:
    """How many fixed realisations a registered dataset holds (None: it is split at random)."""
    entry = registry().get(name) or {}
    if entry.get("fixed_split"):
        return 1
    real = entry.get("realisations")
    return None if real is None else int(real["count"])


def load_dataset(name: str, options: dict[str, Any] | None = None) -> Dataset:
    """Load a registered dataset (checksums verified) or a synthetic one (see :mod:`tkbench.data.synthetic`)."""
    from tkbench.data import synthetic

    if name in synthetic.GENERATORS:
        return synthetic.generate(name, options or {})
    if name == user_csv.NAME:
        return user_csv.load(options or {})
    spec, chosen = resolve_options(name, options)
    paths = verify_files(name)  # on every load: a cached dataset is only as good as its files
    return data_cache.load_or_build(datasets_dir(), name, spec, chosen, lambda: _parse(name, spec, chosen, paths))


def _parse(name: str, spec: dict[str, Any], chosen: dict[str, Any], paths: list[Path]) -> Dataset:
    """The dataset from its (verified) files, as the registry entry ``spec`` with options ``chosen`` says."""
    if spec.get("realisations"):
        return _load_realisations(name, spec, chosen, paths[0])
    if spec.get("fixed_split"):
        return _load_fixed_split(name, spec, chosen, paths)
    table = _read_table(paths, spec)
    n_raw = len(table)
    if spec.get("missing") is not None:
        token = str(spec["missing"])
        table = table[~table.apply(lambda col: col.str.strip() == token).any(axis=1)].reset_index(drop=True)
    for col, mapping in (spec.get("encode") or {}).items():
        unknown = set(table[col]) - set(mapping)
        if unknown:
            raise DatasetError(f"dataset {name!r}: column {col!r} has values {sorted(unknown)} with no code")
        table[col] = table[col].map(mapping)
    target = spec["target"]
    if target not in table.columns:
        raise DatasetError(f"dataset {name!r}: target column {target!r} not in {list(table.columns)}")
    features = [c for c in table.columns if c != target and c not in set(spec.get("drop") or [])]
    X = table[features].astype(float).to_numpy()
    task = spec["task"]
    if task == "classification":
        y = _label(table[target], spec)
    elif spec.get("target_codes"):
        y = _class_codes(table[target])
    else:
        y = table[target].astype(float).to_numpy()
    info = {
        "title": spec.get("title", name),
        "options": chosen,
        "rows_in_files": n_raw,
        "rows_dropped": n_raw - len(table),
        "target": target,
        "notes": spec.get("notes", ""),
    }
    return Dataset(name, np.ascontiguousarray(X), y, task, features, fingerprint(name, chosen), info)


def dataset_fingerprint(name: str, options: dict[str, Any] | None = None) -> str:
    """The fingerprint used in run keys, without reading the data files."""
    from tkbench.data import synthetic

    if name in synthetic.GENERATORS:
        return synthetic.fingerprint(name, options or {})
    if name == user_csv.NAME:
        return user_csv.fingerprint(options or {})
    _, chosen = resolve_options(name, options)
    return fingerprint(name, chosen)


def task_of(name: str, options: dict[str, Any] | None = None) -> str:
    from tkbench.data import synthetic

    if name in synthetic.GENERATORS:
        return synthetic.GENERATORS[name].task
    if name == user_csv.NAME:
        return (options or {})["task"]
    spec, _ = resolve_options(name, options)
    return spec["task"]


def all_names() -> list[str]:
    from tkbench.data import synthetic

    return sorted(registry()) + sorted(synthetic.GENERATORS)
