"""The digit datasets of paper 004 sections 9.2-9.3 (MNIST, USPS): one fixed train/test split, binary tasks."""
from __future__ import annotations

import gzip

import numpy as np
import pytest
import yaml

from tests.conftest import ROOT
from tkbench.config import parse_config
from tkbench.data.registry import _read_idx, fixed_split, load_dataset
from tkbench.errors import ChecksumError, ConfigError

MANIFEST = yaml.safe_load((ROOT / "datasets" / "digits" / "MANIFEST.yaml").read_text())


def _counts(file: str, part: str | None = None) -> list[int]:
    entry = next(e for e in MANIFEST["datasets"] if e["file"] == file)
    return entry["splits"][part]["label_counts_0_to_9"] if part else entry["label_counts_0_to_9"]


def test_mnist_tasks_match_the_manifest_label_counts():
    test = _counts("t10k-labels-idx1-ubyte.gz")
    for task, (pos, neg) in {"3v8": ([3], [8]), "4v7": ([4], [7]), "odd_even": ([1, 3, 5, 7, 9], [0, 2, 4, 6, 8])}.items():
        ds = load_dataset("mnist", {"task": task})
        train, held_out = fixed_split(ds, 0)
        assert len(train) == 3000 and ds.X.shape[1] == 784
        assert int((ds.y[held_out] == 1).sum()) == sum(test[d] for d in pos)  # the whole test file's rows
        assert int((ds.y[held_out] == -1).sum()) == sum(test[d] for d in neg)
        assert 0.0 <= ds.X.min() and ds.X.max() == 1.0  # pixels / 255
    full = load_dataset("mnist", {"task": "odd_even", "train_rows": "all"})
    assert len(fixed_split(full, 0)[0]) == sum(_counts("train-labels-idx1-ubyte.gz")) == 60000


def test_mnist_first_training_rows_are_the_files_first_rows():
    ds = load_dataset("mnist", {"task": "odd_even"})
    raw = _read_idx(gzip.decompress((ROOT / "datasets/digits/train-images-idx3-ubyte.gz").read_bytes()))
    assert np.array_equal(ds.X[fixed_split(ds, 0)[0]], raw[:3000].reshape(3000, -1) / 255.0)


def test_usps_zero_to_four_against_five_to_nine():
    ds = load_dataset("usps")
    train, test = fixed_split(ds, 0)
    assert (len(train), len(test), ds.X.shape[1]) == (7291, 2007, 256)
    tr, te = _counts("usps.h5", "train"), _counts("usps.h5", "test")
    assert int((ds.y[train] == 1).sum()) == sum(tr[:5]) and int((ds.y[test] == 1).sum()) == sum(te[:5])
    assert 0.0 <= ds.X.min() and ds.X.max() <= 1.0


def test_idx_reader_and_a_changed_array_is_refused(copied_datasets):
    raw = bytes([0, 0, 0x08, 2, 0, 0, 0, 2, 0, 0, 0, 3]) + bytes(range(6))
    assert _read_idx(raw).tolist() == [[0, 1, 2], [3, 4, 5]]
    dest = copied_datasets
    with np.load(dest / "digits/usps.npz") as z:
        arrays = {k: z[k] for k in z.files}
    arrays["test_target"] = arrays["test_target"].copy()
    arrays["test_target"][0] += 1
    np.savez_compressed(dest / "digits/usps.npz", **arrays)
    with pytest.raises(ChecksumError):  # the file's own sha256 no longer matches
        load_dataset("usps")


def test_a_fixed_split_dataset_has_one_split():
    raw = {"name": "d", "protocol": {"splits": 2}, "datasets": ["usps"], "methods": [{"name": "s", "family": "svm_rbf"}]}
    with pytest.raises(ConfigError, match="one fixed train/test split"):
        parse_config(raw, "d.yaml")
