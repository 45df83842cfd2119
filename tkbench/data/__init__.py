"""Datasets: the vendored UCI registry, synthetic generators and seeded splits."""
from tkbench.data.registry import Dataset, all_names, dataset_fingerprint, load_dataset, task_of, verify_files
from tkbench.data.splits import split_seed, train_test_indices, training_subset

__all__ = [
    "Dataset",
    "all_names",
    "dataset_fingerprint",
    "load_dataset",
    "split_seed",
    "task_of",
    "train_test_indices",
    "training_subset",
    "verify_files",
]
