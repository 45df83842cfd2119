"""Fixtures of the data tests."""
from __future__ import annotations

import shutil

import pytest

from tests.conftest import ROOT


@pytest.fixture
def copied_datasets(tmp_path, monkeypatch):
    """A copy of ``datasets/`` that tkbench reads from (``TKBENCH_DATASETS``), for tests that change a file. The
    parsed-data cache (``datasets/.cache``, derived data: 1.3 GB once the suite has loaded MNIST) is left out; the
    copy starts with an empty one."""
    dest = tmp_path / "datasets"
    shutil.copytree(ROOT / "datasets", dest, ignore=shutil.ignore_patterns(".cache"))
    monkeypatch.setenv("TKBENCH_DATASETS", str(dest))
    return dest
