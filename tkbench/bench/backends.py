"""Parallel backends: joblib's loky (default, local processes) and dask (a cluster or a LocalCluster), and ray.

Each yields a callable that takes joblib ``delayed`` jobs and yields their results as they finish; the jobs are the
run supervisors of :mod:`tkbench.bench.isolation` (ray's tasks are submitted with ray's own API, because its
joblib backend returns nothing before the whole batch is done). The
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
                yield _streaming_parallel()
        return
    if backend == "ray":
        try:
            import ray
        except ImportError:
            raise MissingDependencyError(
                "--backend ray needs ray, which is not installed: pip install -e '.[ray]' (or pip install ray)"
            ) from None
        if not ray.is_initialized():
            ray.init(address=address, num_cpus=None if address else n_jobs, include_dashboard=False)
        yield lambda jobs: _ray_stream(ray, jobs)
        return
    raise ValueError(f"unknown backend {backend!r}; one of {', '.join(BACKENDS)}")


def _streaming_parallel() -> Parallel:
    """Results as they finish where the backend allows it, else in submission order."""
    try:
        return Parallel(return_as="generator_unordered", pre_dispatch="n_jobs")
    except ValueError:
        return Parallel(return_as="generator", pre_dispatch="n_jobs")


def _ray_stream(ray, jobs) -> Iterator:
    """Ray tasks for joblib-style ``delayed`` jobs, yielded as they finish (ray's joblib backend cannot stream)."""
    remote = {}
    pending = []
    for func, args, kwargs in jobs:
        if func not in remote:
            remote[func] = ray.remote(num_cpus=1)(func)
        pending.append(remote[func].remote(*args, **kwargs))
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        yield ray.get(done[0])


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
