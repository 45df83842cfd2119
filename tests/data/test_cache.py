"""The parsed-dataset cache (tkbench/data/cache.py): a cached load is the parse, bit for bit; a bad entry is said,
removed and rebuilt; a changed entry, option, file or loader never meets an old entry."""
from __future__ import annotations

import numpy as np
import pytest

from tkbench.data import cache, registry
from tkbench.data.cache import DataCacheWarning


def _parse(name: str, options: dict | None = None):
    spec, chosen = registry.resolve_options(name, options)
    paths = registry.verify_files(name)
    return spec, chosen, (lambda: registry._parse(name, spec, chosen, paths))


def _refuse():
    raise AssertionError("the cache was sound: the data files should not have been parsed")


def _same(a, b) -> None:
    assert (a.name, a.task, a.feature_names, a.fingerprint) == (b.name, b.task, b.feature_names, b.fingerprint)
    for x, y in ((a.X, b.X), (a.y, b.y)):
        assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y)
    assert a.X.flags["C_CONTIGUOUS"]
    fixed_a, fixed_b = a.info.get("fixed_splits"), b.info.get("fixed_splits")
    assert {k: v for k, v in a.info.items() if k != "fixed_splits"} == \
           {k: v for k, v in b.info.items() if k != "fixed_splits"}
    assert (fixed_a is None) == (fixed_b is None)
    for (tr_a, te_a), (tr_b, te_b) in zip(fixed_a or [], fixed_b or [], strict=True):
        assert np.array_equal(tr_a, tr_b) and np.array_equal(te_a, te_b)


# every way the registry turns files into arrays: CSV, '?' rows dropped, categorical codes, LIBSVM, class codes as a
# regression target, a Raetsch archive's realisations, a fixed train/test split from an .npz
@pytest.mark.parametrize("name, options", [("liver", None), ("cancer", None), ("abalone", None), ("cpusmall", None),
                                           ("letter", {"task": "regression_codes"}), ("raetsch_banana", None),
                                           ("usps", None)])
def test_a_cached_load_is_the_parse_bit_for_bit(tmp_path, name, options):
    spec, chosen, build = _parse(name, options)
    fresh = build()
    first = cache.load_or_build(tmp_path, name, spec, chosen, build)
    _same(first, fresh)
    assert len(list((tmp_path / ".cache").glob(f"{name}-*.npz"))) == 1
    _same(cache.load_or_build(tmp_path, name, spec, chosen, _refuse), fresh)


def test_load_dataset_uses_the_cache_and_still_verifies_the_files(tmp_path, monkeypatch):
    import shutil

    from tkbench.errors import ChecksumError

    for f in ("registry.yaml", "liver_bupa.csv"):
        shutil.copy(registry.datasets_dir() / f, tmp_path / f)
    monkeypatch.setenv("TKBENCH_DATASETS", str(tmp_path))
    first = registry.load_dataset("liver")
    assert len(list((tmp_path / ".cache").glob("liver-*.npz"))) == 1
    monkeypatch.setattr(registry, "_parse", lambda *a: _refuse())
    _same(registry.load_dataset("liver"), first)
    with open(tmp_path / "liver_bupa.csv", "a") as fh:
        fh.write("1,2,3,4,5,6,1\n")
    with pytest.raises(ChecksumError, match="sha256 mismatch"):  # the cached arrays do not hide a changed file
        registry.load_dataset("liver")


def _entry(tmp_path, name="liver"):
    spec, chosen, build = _parse(name)
    fresh = cache.load_or_build(tmp_path, name, spec, chosen, build)
    return spec, chosen, build, fresh, cache.entry_path(tmp_path, name, spec, chosen)


@pytest.mark.parametrize("damage", ["flipped", "truncated", "not a zip", "other dataset", "missing array"])
def test_a_bad_entry_is_said_removed_and_rebuilt(tmp_path, damage):
    spec, chosen, build, fresh, path = _entry(tmp_path)
    raw = bytearray(path.read_bytes())
    if damage == "flipped":  # one byte of X's data: the zip member's CRC-32 no longer holds
        at = raw.index(fresh.X.tobytes()[:64]) + 100
        raw[at] ^= 0xFF
        path.write_bytes(bytes(raw))
    elif damage == "truncated":
        path.write_bytes(bytes(raw[: len(raw) // 2]))
    elif damage == "not a zip":
        path.write_text("hello")
    elif damage == "other dataset":
        other_spec, other_chosen, other_build = _parse("sonar")
        cache.load_or_build(tmp_path, "sonar", other_spec, other_chosen, other_build)
        path.write_bytes(cache.entry_path(tmp_path, "sonar", other_spec, other_chosen).read_bytes())
    else:
        arrays = dict(np.load(path))
        del arrays["y"]
        with open(path, "wb") as fh:
            np.savez(fh, **arrays)
    with pytest.warns(DataCacheWarning) as caught:
        again = cache.load_or_build(tmp_path, "liver", spec, chosen, build)
    (message,) = [str(w.message) for w in caught]
    assert str(path) in message and "rebuilt from the data files" in message
    if damage == "other dataset":
        assert "holds dataset 'sonar', expected 'liver'" in message
    _same(again, fresh)
    _same(cache.load_or_build(tmp_path, "liver", spec, chosen, _refuse), fresh)  # the rebuilt entry is sound


def test_a_changed_entry_option_file_or_loader_never_meets_an_old_entry(tmp_path, monkeypatch):
    spec, chosen, _, _, path = _entry(tmp_path)
    _, drinks = registry.resolve_options("liver", {"label": "drinks"})
    assert cache.entry_path(tmp_path, "liver", spec, drinks) != path
    assert cache.entry_path(tmp_path, "liver", {**spec, "positive": ["2"]}, chosen) != path
    files = [{**f, "sha256": "0" * 64} for f in spec["files"]]
    assert cache.entry_path(tmp_path, "liver", {**spec, "files": files}, chosen) != path
    monkeypatch.setattr(cache, "_loader_digest", lambda: "another loader")
    assert cache.entry_path(tmp_path, "liver", spec, chosen) != path


def test_the_cache_can_be_turned_off_and_an_unwritable_folder_is_skipped(tmp_path, monkeypatch):
    spec, chosen, build = _parse("liver")
    monkeypatch.setenv("TKBENCH_DATA_CACHE", "0")
    _same(cache.load_or_build(tmp_path, "liver", spec, chosen, build), build())
    assert not (tmp_path / ".cache").exists()
    monkeypatch.delenv("TKBENCH_DATA_CACHE")
    (tmp_path / ".cache").write_text("a file where the folder would be")
    _same(cache.load_or_build(tmp_path, "liver", spec, chosen, build), build())
    assert (tmp_path / ".cache").is_file()
