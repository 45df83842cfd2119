"""Registration of the peers' families (issue 51): ``mklpy``, ``liquidsvm``, ``gpytorch_sm``. Their libraries
are imported when a model is fitted, never here, so that tkbench loads without the extra."""
from __future__ import annotations

from typing import Any

from tkbench.methods.family import Family, register
from tkbench.methods.peers.imports import EXTRA


def _torch_threads(threads: int) -> None:
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(max(1, int(threads)))


def _build_mklpy(task: str, solver: str, params: dict[str, Any], seed: int):
    from tkbench.methods.peers.mklpy import MKLpyClassifier

    return MKLpyClassifier(**{"algorithm": solver, **params})


def _build_liquid(task: str, solver: str, params: dict[str, Any], seed: int):
    from tkbench.methods.peers.liquidsvm import LiquidSVMClassifier, LiquidSVMRegressor

    cls = LiquidSVMClassifier if task == "classification" else LiquidSVMRegressor
    return cls(**{"random_state": seed, **params})


def _build_sm(task: str, solver: str, params: dict[str, Any], seed: int):
    from tkbench.methods.peers.gpytorch_sm import SpectralMixtureGPRegressor

    return SpectralMixtureGPRegressor(**{"random_state": seed, **params})


register(Family(
    name="mklpy",
    description=f"MKLpy 0.6's EasyMKL / GRAM / AverageMKL on a kernel list (peer; {EXTRA})",
    build=_build_mklpy,
    solvers=("easymkl", "gram", "average"),
    tasks=("classification",),
    default_grid={},  # lam is EasyMKL's, C the others': a config gives the grid of its algorithm
    scaler="minmax",
    scales_inside="each row to unit norm (MKLpy's normalization)",
    diagnostics=lambda model: model.diagnostics(),
    warmup=_torch_threads,
    requires=(("torch", "torch"), ("cvxopt", "cvxopt"), ("MKLpy", "MKLpy")),
    install_hint=EXTRA,
    reference="Lauriola & Aiolli 2020, MKLpy (arXiv:2007.09982); Aiolli & Donini 2015 (EasyMKL)",
))

register(Family(
    name="liquidsvm",
    description=f"liquidSVM 1.0.1, hyper-parameters by its own 5-fold CV on its 10 x 10 grid (peer; {EXTRA})",
    build=_build_liquid,
    default_grid={},
    scaler="minmax",
    target_scaler="none",
    diagnostics=lambda model: model.diagnostics(),
    requires=(("liquidSVM", "liquidSVM"), ("pkg_resources", "setuptools<81")),
    install_hint=EXTRA,
    reference="Steinwart & Thomann 2017, liquidSVM (arXiv:1702.06899); the SVM of paper 002",
))

register(Family(
    name="gpytorch_sm",
    description=f"GPyTorch 1.15's spectral mixture kernel in an exact GP (peer; {EXTRA})",
    build=_build_sm,
    tasks=("regression",),
    default_grid={},
    scaler="standard",
    target_scaler="standard",
    diagnostics=lambda model: model.diagnostics(),
    warmup=_torch_threads,
    # 2026-11-29: the tutorial's precision (3.3x faster); frequencies that start below 1 / range (the tutorial's
    # initialisation left CCPP and cpusmall at the target's variance: gpytorch_sm.py)
    changed_defaults={"dtype": ("float64", "float32"), "init": ("data", "low_frequency")},
    requires=(("torch", "torch"), ("gpytorch", "gpytorch")),
    install_hint=EXTRA,
    reference="Wilson & Adams 2013 (spectral mixture kernels); GPyTorch (Gardner et al. 2018)",
))
