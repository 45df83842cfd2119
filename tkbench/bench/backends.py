"""Parallel backends: joblib's loky (default, local processes) and dask (a cluster or a LocalCluster).

Each yields a callable that takes joblib ``delayed`` jobs and yields their results as they finish; the jobs are the
run supervisors of :mod:`tkbench.bench.isolation`. The tasks carry only small run specs (each child loads its
dataset from disk), so nothing large is shipped per run.

Ray is not a backend (removed 2026-11-28, issue 48): it was documented but never exercised, and ray 2.60's local
cluster binds the machine's network address and asks for an authentication token, so no test confined to the
loopback interface could start one here. A dask cluster covers the same use (``--backend dask --address``).
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from joblib import Parallel, parallel_config

from tkbench.errors import MissingDependencyError

BACKENDS = ("loky", "dask")


@contextmanager
def parallel(backend: str, n_jobs: int, address: str | None = None) -> Iterator[Parallel]:
    if backend == "loky":
        if n_jobs == 1:
            yield Parallel(n_jobs=1, backend="sequential", return_as="generator")
        else:
            yield Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered", pre_dispatch="n_jobs")
        return
    if backend == "dask":
        with _dask_client(n_jobs, address):
            with parallel_config(backend="dask"):
                yield _streaming_parallel()
        return
    raise ValueError(f"unknown backend {backend!r}; one of {', '.join(BACKENDS)}")


def _streaming_parallel() -> Parallel:
    """Results as they finish where the backend allows it, else in submission order."""
    try:
        return Parallel(return_as="generator_unordered", pre_dispatch="n_jobs")
    except ValueError:
        return Parallel(return_as="generator", pre_dispatch="n_jobs")


@contextmanager
def _dask_client(n_jobs: int, address: str | None):
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise MissingDependencyError(
            "--backend dask needs dask and distributed: pip install -e '.[dask]'"
        ) from None
    if address:
        client = Client(address)
        try:
            yield client
        finally:
            client.close()
        return
    # non-daemonic workers may start the forkserver children that isolate each run
    with dask.config.set({"distributed.worker.daemon": False}):
        cluster = LocalCluster(n_workers=n_jobs, threads_per_worker=1, processes=True, dashboard_address=None,
                               env={"OMP_NUM_THREADS": "1"})
        client = Client(cluster)
        try:
            yield client
        finally:
            client.close()
            cluster.close()


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
