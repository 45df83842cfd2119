"""Load HGK's compiled (numba) loops once per process, outside the timed parts of a run (see
:mod:`tkbench.methods.tk.warmup` for why)."""
from __future__ import annotations

import numpy as np


def hierarchical_warmup(threads: int = 1) -> None:
    """The same for the hierarchical Gaussian kernels (paper 002): thread count, then every compiled loop once."""
    import numba

    from tkbench.methods._shared.compiled import mark_loaded

    mark_loaded()

    numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
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
    kernel(arch, w, X)
    kernel_predict(arch, w, X, X, np.ones(3))
    risk_and_gradient(arch, w, X, X, np.ones(3), np.ones(3))
    weighted_gradient(arch, w, X, X, np.ones(3), np.ones(3))
    state = BlockState(arch, w, X, X)
    state.propose_predict(0, 0.5, np.ones(3))
    state.propose_predict(3, 0.5, np.ones(3))
