"""Parallel backends for joblib: loky (default, local processes), dask (a cluster or a LocalCluster), ray.

Each yields a ``joblib.Parallel`` whose tasks are the run supervisors of :mod:`tkbench.bench.isolation`; the
tasks carry only small run specs (each child loads its dataset from disk), so nothing large is shipped per run.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from joblib import Parallel, parallel_config

from tkbench.errors import MissingDependencyError

BACKENDS = ("loky", "dask", "ray")


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
                yield Parallel(return_as="generator_unordered", pre_dispatch="n_jobs")
        return
    if backend == "ray":
        try:
            import ray
            from ray.util.joblib import register_ray
        except ImportError:
            raise MissingDependencyError(
                "--backend ray needs ray, which is not installed: pip install -e '.[ray]' (or pip install ray)"
            ) from None
        if not ray.is_initialized():
            ray.init(address=address, num_cpus=None if address else n_jobs, include_dashboard=False)
        register_ray()
        with parallel_config(backend="ray", n_jobs=n_jobs):
            yield Parallel(return_as="generator_unordered", pre_dispatch="n_jobs")
        return
    raise ValueError(f"unknown backend {backend!r}; one of {', '.join(BACKENDS)}")


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
