"""Load HGK's compiled (numba) loops once per process, outside the timed parts of a run (see
:mod:`tkbench.methods.tk.warmup` for why)."""
from __future__ import annotations

import numpy as np


def hierarchical_warmup(threads: int = 1) -> None:
    """The same for the hierarchical Gaussian kernels (paper 002): thread count, then every compiled loop once."""
    from tkbench.methods._shared.compiled import mark_loaded, set_threads

    mark_loaded()
    set_threads(threads)
    from tkbench.methods.hgk.kernel import (
        Architecture,
        BlockState,
        kernel,
        kernel_predict,
        risk_and_gradient,
        weighted_gradient,
    )

    arch = Architecture("depth2:2", 2)
    X = np.linspace(-0.9, 0.9, 6).reshape(3, 2)
    w = arch.initial_weights()
    kernel(arch, w, X)  # the symmetric pass (Z = X)
    kernel(arch, w, X, X)  # the full one
    kernel_predict(arch, w, X, X, np.ones(3))
    risk_and_gradient(arch, w, X, X, np.ones(3), np.ones(3))
    weighted_gradient(arch, w, X, X, np.ones(3), np.ones(3))
    weighted_gradient(arch, w, X, None, np.ones(3), np.ones(3))  # K11's adjoint term (the refit objective)
    for dtype in (np.float64, np.float32):  # annealing_dtype
        state = BlockState(arch, w, X, X, dtype)
        state.propose_predict(0, 0.5, np.ones(3))
        state.propose_predict(3, 0.5, np.ones(3))


def hierarchical_compile() -> None:
    """Every compiled loop an HGK fit may run (``tkbench compile``): the warm-up's and the hinge SVM's dual
    coordinate descent (``svm: hinge``), which the warm-up leaves to its first call."""
    from tkbench.methods.hgk.hinge_svm import hinge_svm

    hierarchical_warmup(1)
    hinge_svm(np.eye(3) + 0.1, np.array([1.0, -1.0, 1.0]), 0.1)
    from tkbench.methods.hgk.kernel import Architecture, kernel, kernel_predict, weighted_gradient

    arch = Architecture("depth2:2", 2)  # read-only inputs (scikit-learn's memory-mapped CV data) are other types
    X = np.linspace(-0.9, 0.9, 6).reshape(3, 2)
    X.setflags(write=False)
    w = arch.initial_weights()
    kernel(arch, w, X)
    kernel(arch, w, X, X.copy())  # the full pass (and a single Gaussian's K(X, X)) on read-only rows
    weighted_gradient(arch, w, X, None, np.ones(3), np.ones(3))
    coef = np.ones(3)
    coef.setflags(write=False)
    for A, B, c in ((X, X, np.ones(3)), (X.copy(), X, np.ones(3)), (X.copy(), X.copy(), coef)):
        kernel_predict(arch, w, A, B, c)
