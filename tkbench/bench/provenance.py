"""Where and with what a result was produced: versions, git state, machine, threads (one dict per run)."""
from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import tkbench

KEY_PACKAGES = ("numpy", "scipy", "scikit-learn", "pandas", "joblib", "cvxpy", "clarabel", "pydantic")


def _git(*args: str) -> str | None:
    repo = Path(tkbench.__file__).resolve().parents[1]
    try:
        out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def git_state() -> dict[str, Any]:
    sha = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"git_sha": sha, "git_dirty": bool(status) if status is not None else None}


@lru_cache(maxsize=1)
def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in KEY_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def collect(n_jobs: int, backend: str, blas_threads: int) -> dict[str, Any]:
    """Provenance shared by every run of one ``tkbench run`` invocation."""
    return {
        "tkbench_version": tkbench.__version__,
        **git_state(),
        "python": sys.version.split()[0],
        "packages": package_versions(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "workers": n_jobs,
        "cores_used": n_jobs * blas_threads,
        "backend": backend,
        "blas_threads": blas_threads,
    }
