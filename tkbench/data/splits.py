"""Train/test splits derived only from the config seed and the split index.

Every method sees the same split of a dataset; the worker, the number of workers and the method never enter the
seed. ``subsample`` draws the rows used by a split first (a different subsample per split), then splits them.
"""
from __future__ import annotations

import numpy as np


def split_seed(base_seed: int, split_index: int) -> int:
    """A 32-bit seed from (config seed, split index) via numpy's SeedSequence (stable across versions)."""
    return int(np.random.SeedSequence([int(base_seed), int(split_index)]).generate_state(1)[0])


def _can_stratify(y: np.ndarray, n_test: int, n_train: int) -> bool:
    _, counts = np.unique(y, return_counts=True)
    return counts.min() >= 2 and n_test >= len(counts) and n_train >= len(counts)


def train_test_indices(
    y: np.ndarray,
    *,
    test_fraction: float,
    seed: int,
    stratify: bool,
    subsample: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the training and test parts of one split (both sorted)."""
    # imported here, not at the top: `tkbench datasets list` imports this module and needs no scikit-learn (2-3 s
    # of import on the 2-core workstation)
    from sklearn.model_selection import train_test_split

    n = len(y)
    rng = np.random.default_rng(seed)
    rows = np.arange(n)
    if subsample is not None and subsample < n:
        rows = np.sort(rng.choice(n, size=int(subsample), replace=False))
    n_test = max(1, int(round(test_fraction * len(rows))))
    strat = y[rows] if stratify and _can_stratify(y[rows], n_test, len(rows) - n_test) else None
    train, test = train_test_split(rows, test_size=n_test, random_state=seed % (2**32 - 1), stratify=strat)
    return np.sort(train), np.sort(test)


def training_subset(train: np.ndarray, size: int, seed: int) -> np.ndarray:
    """The first ``size`` rows of a seeded permutation of ``train`` (nested: a larger size contains a smaller)."""
    if size > len(train):
        raise ValueError(f"requested {size} training rows but the training part has only {len(train)}")
    perm = np.random.default_rng(seed).permutation(train)
    return np.sort(perm[:size])
