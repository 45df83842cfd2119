"""Load the compiled (numba) kernels once per process, outside the timed parts of a run.

numba caches machine code on disk (``cache=True``), but every new process still pays for loading it (about a
second here) at the first call (see :mod:`tkbench.methods._shared.compiled`). A run's process calls :func:`warmup` before CV and
the final fit, so fit times measure the algorithm, not the loader; the same call sets numba's thread count to the
run's thread budget (``protocol.blas_threads``), so that parallel workers do not oversubscribe the cores.
"""
from __future__ import annotations

import numpy as np


def compile_all() -> None:
    """Every compiled loop a TK fit may run (``tkbench compile``): the warm-up's, and those it leaves to their first
    call: the SMO dual (``dual_solver`` "auto" takes it above m = 1000 rows) for both tasks, and the kernel-pair
    loops of the line search on float64 and float32 kernels (float32: ``kernel_dtype``)."""
    from tkbench.methods._shared.compiled import use_compiled

    warmup(1)
    if not use_compiled():
        return
    from tkbench.methods._shared.smo import smo_dual
    from tkbench.methods.tk._kernel_pair_numba import _matvec, _quadratic_difference

    w = np.ones(4)
    for dtype in (np.float64, np.float32):
        K = (np.eye(4) + 0.1).astype(dtype)
        smo_dual(K, np.array([1.0, -1.0, 1.0, -1.0]), task="classification", C=1.0)
        smo_dual(K, np.array([0.1, 0.4, 0.2, 0.3]), task="regression", C=1.0, epsilon=0.1,
                 KS=np.eye(4, dtype=dtype), g=0.5)
        _quadratic_difference(K, K, w, 4)
        _matvec(K, w)


def warmup(threads: int = 1) -> None:
    from tkbench.methods._shared.compiled import mark_loaded, set_threads, use_compiled

    if not use_compiled():  # TKBENCH_TK_ENGINE=numpy, or no numba
        return
    mark_loaded()  # every later TK pass of this process runs compiled, whatever its size (tkbench.methods._shared.compiled)
    set_threads(threads)
    from tkbench.methods._shared._library_numba import (
        packed_combination,
        packed_quadratic_forms_sparse,
        stack_combination,
    )
    from tkbench.methods.tk.kernel import box, n_basis, tk_gradient, tk_kernel

    X = np.linspace(0.1, 0.9, 6).reshape(3, 2)
    a, b = box(2, 0.1)
    P = np.eye(2 * n_basis(2, 1, "x"))
    tk_kernel(X, None, P, a, b, 1, "x")  # the training kernel (symmetric_kernel)
    tk_kernel(X, X[:2], P, a, b, 1, "x")  # against other points (add_max_part: predictions)
    tk_gradient(X, np.ones(3), a, b, 1, "x")
    packed_quadratic_forms_sparse(np.ones((1, 6)), np.arange(3, dtype=np.int64), np.ones(3), 3)
    packed_combination(np.ones((1, 6)), np.arange(1, dtype=np.int64), np.ones(1), np.zeros((3, 3)))
    stack_combination(np.ones((1, 3, 3)), np.arange(1, dtype=np.int64), np.ones(1), np.zeros((3, 3)))
