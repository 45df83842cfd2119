"""Kernel libraries for multiple kernel learning (SimpleMKL, Rakotomamonjy et al. 2008; papers 000 and 003).

The standard library of the papers: Gaussian kernels with bandwidths between 0.5 and 10 and polynomial kernels of
degree 1 to 3, each on all features and on every single feature: 13 (n + 1) kernels with the default 10 widths.
Each kernel is normalised to unit mean diagonal on the training rows (trace m; Gaussians are unchanged), so that C
means what it means for a single-kernel SVM (the SimpleMKL toolbox's unit trace would divide the effective C by m);
the same factor is applied to test rows.

A library is a list of :class:`BaseKernel`; combined kernels sum_k d_k K_k and the quadratic forms w^T K_k w are
computed in row blocks from the features, so memory stays O(m^2) whatever the number of kernels (at m = 8000 the
65 matrices of a 4-feature library would need 33 GB).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_WIDTHS = tuple(float(w) for w in np.round(np.geomspace(0.5, 10.0, 10), 3))
DEFAULT_DEGREES = (1, 2, 3)
_BLOCK_BYTES = 64 * 2**20


@dataclass(frozen=True)
class BaseKernel:
    kind: str  # "gaussian" | "polynomial"
    param: float  # bandwidth sigma, or degree
    feature: int | None  # None: all features; j: feature j only

    def raw(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        if self.feature is not None:
            X, Y = X[:, [self.feature]], Y[:, [self.feature]]
        if self.kind == "gaussian":
            sq = (X**2).sum(1)[:, None] + (Y**2).sum(1)[None, :] - 2 * X @ Y.T
            return np.exp(-np.maximum(sq, 0.0) / (2 * self.param**2))
        return (1.0 + X @ Y.T) ** int(self.param)

    def diagonal(self, X: np.ndarray) -> np.ndarray:
        if self.kind == "gaussian":
            return np.ones(len(X))
        Z = X if self.feature is None else X[:, [self.feature]]
        return (1.0 + (Z**2).sum(1)) ** int(self.param)

    @property
    def name(self) -> str:
        where = "all" if self.feature is None else f"x{self.feature + 1}"
        return f"{self.kind}({self.param:g}, {where})"


def standard_library(n_features: int, widths=DEFAULT_WIDTHS, degrees=DEFAULT_DEGREES) -> list[BaseKernel]:
    """Gaussians and polynomials on all features and on each single feature: (len(widths)+len(degrees))(n+1)."""
    out = []
    for feature in [None, *range(n_features)]:
        out += [BaseKernel("gaussian", float(w), feature) for w in widths]
        out += [BaseKernel("polynomial", float(d), feature) for d in degrees]
    return out


class Library:
    """A kernel library fitted to training rows: unit-trace scale factors, blocked combinations."""

    def __init__(self, kernels: list[BaseKernel], X_train: np.ndarray):
        self.kernels = list(kernels)
        self.X = np.ascontiguousarray(X_train, dtype=float)
        self.scale = np.array([len(self.X) / k.diagonal(self.X).sum() for k in self.kernels])

    def __len__(self) -> int:
        return len(self.kernels)

    def kernel(self, k: int, Y: np.ndarray | None = None) -> np.ndarray:
        """One normalised kernel matrix K_k(X_train, Y) (Y = X_train by default)."""
        Y = self.X if Y is None else Y
        return self.scale[k] * self.kernels[k].raw(self.X, Y)

    def combined(self, weights: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        """sum_k weights_k K_k(Y, X_train): rows of Y against the training rows (kernels with weight 0 skipped)."""
        Y = self.X if Y is None else np.asarray(Y, dtype=float)
        out = np.zeros((len(Y), len(self.X)))
        step = max(1, _BLOCK_BYTES // (8 * len(self.X)))
        for start in range(0, len(Y), step):
            rows = slice(start, start + step)
            for k, wk in enumerate(weights):
                if wk != 0.0:
                    out[rows] += wk * self.scale[k] * self.kernels[k].raw(Y[rows], self.X)
        return out

    def quadratic_forms(self, w: np.ndarray) -> np.ndarray:
        """(w^T K_k w)_k for every kernel of the library, in row blocks (the SimpleMKL gradient is -1/2 of it)."""
        w = np.asarray(w, dtype=float)
        active = np.flatnonzero(w)
        Xa, wa = self.X[active], w[active]
        out = np.zeros(len(self.kernels))
        step = max(1, _BLOCK_BYTES // (8 * max(1, len(active))))
        for start in range(0, len(active), step):
            rows = slice(start, start + step)
            for k, kern in enumerate(self.kernels):
                out[k] += wa[rows] @ kern.raw(Xa[rows], Xa) @ wa
        return out * self.scale
