"""SimpleMKL over random tessellated-kernel bases (paper 000, Opt. (25): "SimpleMKL TK", and "TK+" with the
standard library added): L kernels k(x, y; P_s) with random PSD matrices P_s. The TK kernel is linear in P, so a
library combines all its TK bases with one kernel evaluation (sum_s d_s P_s) and gets every w^T K_s w = <P_s, D(w)>
from one D(w) (:func:`tkbench.methods.tk.kernel.tk_gradient`): the grouped-kernel protocol of
:class:`tkbench.methods._shared.library.Library`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from tkbench.methods.tk.kernel import box, n_basis, tk_diagonal, tk_gradient, tk_kernel


@dataclass(frozen=True, eq=False)
class TKBaseKernel:
    """A tessellated kernel with a fixed PSD matrix P (paper 000, Opt. (25): SimpleMKL over random TK bases).

    Inputs are expected in [0, 1]^n (clipped), the box is [-delta, 1 + delta]^n. Since the TK kernel is linear in
    P, a library combines all its TK kernels with one kernel evaluation (sum_s d_s P_s) and gets every w^T K_s w
    from one D(w) (see :class:`Library`).
    """

    P: np.ndarray
    degree: int
    delta: float
    basis: str
    index: int

    def _box(self, n):
        return box(n, self.delta)

    def raw(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        a, b = self._box(X.shape[1])
        return tk_kernel(np.clip(X, 0, 1), np.clip(Y, 0, 1), self.P, a, b, self.degree, self.basis)

    def diagonal(self, X: np.ndarray) -> np.ndarray:
        a, b = self._box(X.shape[1])
        return tk_diagonal(np.clip(X, 0, 1), self.P, a, b, self.degree, self.basis)

    @staticmethod
    def check_group(kernels: list[TKBaseKernel]) -> None:
        first = kernels[0]
        if any((k.degree, k.delta, k.basis) != (first.degree, first.delta, first.basis) for k in kernels):
            raise ValueError("the TK kernels of one library must share degree, delta and basis")

    @staticmethod
    def combine(kernels: list[TKBaseKernel], weights: np.ndarray) -> TKBaseKernel:
        """The one TK kernel sum_s weights_s k(.,.; P_s) = k(.,.; sum_s weights_s P_s)."""
        from tkbench.methods._shared._library_numba import stack_combination

        first, weights = kernels[0], np.asarray(weights, dtype=float)
        if len(weights) != len(kernels):
            raise ValueError(f"{len(weights)} weights for {len(kernels)} kernels")
        # the sum in the kernels' order, as sum(w * P for ...) adds it (bit for bit; terms of weight 0 skipped),
        # without a temporary per term: 300 NumPy products per call were 5 % of a fit at 500 rows
        P = stack_combination(_stacked(tuple(kernels)), np.flatnonzero(weights).astype(np.int64), weights,
                              np.zeros_like(first.P))
        return TKBaseKernel(P, first.degree, first.delta, first.basis, -1)

    @staticmethod
    def quadratic_forms(kernels: list[TKBaseKernel], X: np.ndarray, w: np.ndarray) -> np.ndarray:
        """(w^T K(P_s) w)_s = (<P_s, D(w)>)_s from one D(w) (paper 003, Theorem 15's gradient)."""
        first = kernels[0]
        a, b = box(X.shape[1], first.delta)
        D = tk_gradient(np.clip(X, 0, 1), w, a, b, first.degree, first.basis)
        # np.sum(P_s * D) for every s, in chunks of the stacked P_s whose product stays under 1 MB: each row is
        # summed as np.sum sums one matrix (the same values bit for bit, tested), without a Python call per kernel
        # (300 of them per call were 8 % of a fit at 500 rows and a third of one at 45)
        stack = _stacked(tuple(kernels))
        out = np.empty(len(kernels))
        chunk = max(1, (1 << 17) // D.size)
        for start in range(0, len(kernels), chunk):
            out[start:start + chunk] = np.sum(stack[start:start + chunk] * D, axis=(1, 2))
        return out

    @property
    def kind(self) -> str:
        return "tk"

    @property
    def name(self) -> str:
        return f"tk(P{self.index}, d={self.degree}, delta={self.delta:g})"


@lru_cache(maxsize=2)
def _stacked(kernels: tuple[TKBaseKernel, ...]) -> np.ndarray:
    """The kernels' matrices P_s as one (L, size, size) array, kept for the last two libraries (a fit asks for it at
    every SimpleMKL step; the kernels hash by identity, and the cache holds them and one copy of their P_s)."""
    return np.stack([k.P for k in kernels])


def random_tk_library(n_features: int, count: int, *, degree: int = 1, delta: float = 0.1, basis: str = "x",
                      seed: int = 0) -> list[TKBaseKernel]:
    """``count`` TK kernels with random PSD matrices P_s = A A^T / (2q), A standard normal (seeded)."""
    size = 2 * n_basis(n_features, degree, basis)
    rng = np.random.default_rng(seed)
    out = []
    for s in range(count):
        A = rng.standard_normal((size, size))
        out.append(TKBaseKernel(A @ A.T / size, degree, float(delta), basis, s))
    return out
