"""A cache of parsed registered datasets: the arrays :func:`tkbench.data.registry.load_dataset` made, kept as one
``.npz`` per (registry entry, file checksums, options, loader code) in ``<datasets>/.cache/`` (git-ignored).

Why: parsing the vendored text files is most of a load, and every run of a sweep loads its dataset in its own
process. Measured on the 2-core workstation (2026-11-29, ``load_dataset`` of each registered set): bank 1.26 s,
mnist 1.01 s, the Raetsch archives 0.2-0.8 s (ringnorm 0.83 s), 7.0 s for all 45; ``tkbench datasets list`` loads
every one. An RBF SVM run on ringnorm fits in about a second, so the parse was a large share of it.

What keeps it safe:

- The file name is a sha256 over :data:`FORMAT`, the dataset's name, its registry entry, the chosen options, the
  registered sha256 of each of its files (part of the entry) and the source of the loader modules (``registry.py``, ``base.py``). A
  changed data file, entry, option or loader therefore never meets an old entry. The files' checksums are still
  verified on every load, cached or not (``verify_files`` runs first), so a changed data file is still refused.
- An entry is written to a temporary name and renamed, so a reader never sees half of one; numpy's ``.npz`` is a zip
  whose members carry a CRC-32, checked when a member is read whole, so a corrupted entry fails to read.
- An entry that cannot be read, fails its CRC or does not hold what the loader would have made (missing arrays,
  another dataset, another shape) is reported as a warning naming the file and what is wrong, removed, and rebuilt
  from the data files: it is derived data, and rebuilding it is what a user would do by hand.
- A folder that cannot be written is skipped (a read-only checkout loads as before). ``TKBENCH_DATA_CACHE=0`` turns
  the cache off.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tkbench.data.base import Dataset

FORMAT = 1  # bump when the layout of an entry changes
_LOADER_SOURCES = ("registry.py", "base.py")


class DataCacheWarning(UserWarning):
    """A cache entry was unreadable or wrong and has been rebuilt from the data files."""


def enabled() -> bool:
    return os.environ.get("TKBENCH_DATA_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


@functools.lru_cache(maxsize=1)
def _loader_digest() -> str:  # once per process: the loader's source does not change under a running process
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in _LOADER_SOURCES:
        digest.update((here / name).read_bytes())
    return digest.hexdigest()


def entry_path(folder: Path, name: str, spec: dict[str, Any], chosen: dict[str, Any]) -> Path:
    """Where the entry of dataset ``name`` with registry entry ``spec`` and options ``chosen`` lives."""
    key = json.dumps({"format": FORMAT, "name": name, "spec": spec, "options": chosen, "loader": _loader_digest()},
                     sort_keys=True, default=str)
    return folder / ".cache" / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:24]}.npz"


def _to_arrays(ds: Dataset) -> dict[str, np.ndarray]:
    info = dict(ds.info)
    fixed = info.pop("fixed_splits", None)
    meta = {"name": ds.name, "task": ds.task, "feature_names": list(ds.feature_names), "fingerprint": ds.fingerprint,
            "info": info, "fixed_splits": None if fixed is None else len(fixed),
            "X": [list(ds.X.shape), ds.X.dtype.str], "y": [list(ds.y.shape), ds.y.dtype.str]}
    arrays = {"meta": np.array(json.dumps(meta)), "X": ds.X, "y": ds.y}
    for k, (train, test) in enumerate(fixed or []):
        arrays[f"fixed_{k}_train"], arrays[f"fixed_{k}_test"] = np.asarray(train), np.asarray(test)
    return arrays


class _BadEntry(Exception):
    pass


def _from_file(path: Path, name: str) -> Dataset:
    try:
        with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as archive:  # (np.load leaks a bad file)
            meta = json.loads(str(archive["meta"]))
            X, y = archive["X"], archive["y"]
            n_fixed = meta["fixed_splits"]
            fixed = None if n_fixed is None else [(archive[f"fixed_{k}_train"], archive[f"fixed_{k}_test"])
                                                  for k in range(int(n_fixed))]
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
        raise _BadEntry(f"cannot be read ({type(exc).__name__}: {exc})") from None
    if meta.get("name") != name:
        raise _BadEntry(f"holds dataset {meta.get('name')!r}, expected {name!r}")
    for label, array in (("X", X), ("y", y)):
        if [list(array.shape), array.dtype.str] != meta.get(label):
            raise _BadEntry(f"array {label} is {array.shape} {array.dtype.str}, its header says {meta.get(label)}")
    if X.ndim != 2 or y.ndim != 1 or len(X) != len(y):
        raise _BadEntry(f"holds X of shape {X.shape} and y of shape {y.shape}, expected n x d and n")
    info = dict(meta["info"])
    if fixed is not None:
        info["fixed_splits"] = fixed
    return Dataset(name, np.ascontiguousarray(X), y, meta["task"], list(meta["feature_names"]), meta["fingerprint"],
                   info)


def _write(path: Path, ds: Dataset) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".tmp", dir=path.parent)
    except OSError:
        return  # a folder we cannot write: no cache, as before
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **_to_arrays(ds))
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


def load_or_build(folder: Path, name: str, spec: dict[str, Any], chosen: dict[str, Any],
                  build: Callable[[], Dataset]) -> Dataset:
    """The cached dataset if its entry is sound, else ``build()`` (stored for the next load)."""
    if not enabled():
        return build()
    path = entry_path(folder, name, spec, chosen)
    if path.exists():
        try:
            return _from_file(path, name)
        except _BadEntry as exc:
            warnings.warn(f"{path}: cached dataset {name!r} {exc}; rebuilt from the data files", DataCacheWarning,
                          stacklevel=3)
            path.unlink(missing_ok=True)
    ds = build()
    _write(path, ds)
    return ds
