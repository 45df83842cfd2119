"""Arithmetic on the pair of stored kernel matrices (K, K_S) of a Frank-Wolfe line search, without forming their
blend or their difference (issue 21: at m = 30 000 one more m x m matrix is 7 GB in float64).

Either matrix may be float32 (storage only: every product and sum here is accumulated in float64).
"""
from __future__ import annotations

import time

import numpy as np

from tkbench.methods._shared.compiled import charge, use_compiled


def quadratic_difference(K: np.ndarray, KS: np.ndarray, w: np.ndarray) -> float:
    """w^T (KS - K) w for symmetric K and KS, the difference taken entry by entry (the difference of the two
    quadratic forms would cancel: near the optimum of a line search it is many orders below either form); compiled:
    one pass over the lower triangle, rows with w_i = 0 skipped; NumPy (small problems, :mod:`tkbench.methods._shared.compiled`):
    the difference matrix, then two products."""
    if K.shape != KS.shape or K.shape[0] != K.shape[1] or K.shape[0] != len(w):
        raise ValueError(f"quadratic_difference: K {K.shape}, KS {KS.shape} and w ({len(w)},) do not match")
    w = np.ascontiguousarray(w, dtype=np.float64)
    if not use_compiled(len(w) * len(w)):  # a small problem in a fresh process: NumPy (tkbench.methods._shared.compiled)
        started = time.perf_counter()
        value = float(w @ ((KS.astype(np.float64) - K) @ w))
        charge(time.perf_counter() - started)
        return value
    from numba import get_num_threads

    from tkbench.methods.tk._kernel_pair_numba import _quadratic_difference

    return float(_quadratic_difference(K, KS, w, 4 * get_num_threads()))


def matvec(K: np.ndarray, w: np.ndarray) -> np.ndarray:
    """K @ w accumulated in float64 whatever K's storage (NumPy would copy a float32 K to float64 first: 7 GB at
    m = 30 000); BLAS for a float64 K."""
    w = np.ascontiguousarray(w, dtype=np.float64)
    if K.dtype == np.float64:
        return K @ w
    from tkbench.methods.tk._kernel_pair_numba import _matvec

    return _matvec(K, w)
