"""Kernel libraries for multiple kernel learning (SimpleMKL, Rakotomamonjy et al. 2008; papers 000 and 003).

The standard library of the papers: Gaussian kernels with bandwidths between 0.5 and 10 and polynomial kernels of
degree 1 to 3, each on all features and on every single feature: 13 (n + 1) kernels with the default 10 widths.
Each kernel is normalised to unit mean diagonal on the training rows (trace m; Gaussians are unchanged), so that C
means what it means for a single-kernel SVM (the SimpleMKL toolbox's unit trace would divide the effective C by m);
the same factor is applied to test rows.

A library is a list of :class:`BaseKernel` and, optionally, kernels linear in a shared matrix parameter (SimpleMKL-TK's
bases, :mod:`tkbench.methods.simplemkl.tk_bases`): such a kernel class provides ``combine(kernels, weights)`` (one
kernel equal to the weighted sum) and ``quadratic_forms(kernels, X, w)`` (every w^T K_s w at once), and the library
calls those for them instead of evaluating each kernel; combined kernels sum_k d_k K_k and the quadratic forms
w^T K_k w are computed in row blocks from the features, so memory stays O(m^2) whatever the number of kernels (at
m = 8000 the 65 matrices of a 4-feature library would need 33 GB). When the training kernels' upper triangles (the
kernels are symmetric) fit in ``cache_mb`` (default 2 GB, like LIBSVM's kernel cache) they are computed once and
kept: on the papers' small data sets (m < 700) this makes SimpleMKL several times faster, since every SVM solve of
the reduced-gradient descent needs them.
"""
from __future__ import annotations

import functools
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

    def __init__(self, kernels: list, X_train: np.ndarray, cache_mb: float = 2048.0):
        self.kernels = list(kernels)
        self.X = np.ascontiguousarray(X_train, dtype=float)
        # kernels linear in a shared matrix (one class per library): combined and differentiated together
        self.grouped = [k for k, kern in enumerate(self.kernels) if hasattr(kern, "quadratic_forms")]
        self.other = [k for k in range(len(self.kernels)) if k not in set(self.grouped)]
        if self.grouped:
            kinds = {type(self.kernels[k]) for k in self.grouped}
            if len(kinds) > 1:
                raise ValueError("a library holds at most one class of grouped kernels")
            self._group = kinds.pop()
            self._group.check_group([self.kernels[k] for k in self.grouped])
        self.scale = np.array([len(self.X) / k.diagonal(self.X).sum() for k in self.kernels])
        # the normalised ungrouped training kernels, when they fit cache_mb: each plane's upper triangle, packed
        # (pack_upper): the kernels are symmetric (exactly: tested), so half the memory and half the reads
        self._stack: np.ndarray | None = None
        m = len(self.X)
        if self.other and len(self.other) * packed_size(m) * 8 <= cache_mb * 2**20:
            self._stack = np.empty((len(self.other), packed_size(m)))
            for r, k in enumerate(self.other):
                self._stack[r] = pack_upper(self.scale[k] * self.kernels[k].raw(self.X, self.X))

    def release_cache(self) -> None:
        """Drop the cached training kernels (a fitted estimator keeps the library for prediction only)."""
        self._stack = None

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
        if self.grouped and np.any(weights[self.grouped]):
            combined = self._group.combine([self.kernels[k] for k in self.grouped],
                                           weights[self.grouped] * self.scale[self.grouped])
            out += combined.raw(Y, self.X)
        if Y is self.X and self._stack is not None:  # SimpleMKL keeps few weights nonzero: touch only those
            from tkbench.methods._shared._library_numba import packed_combination

            w = np.asarray(weights, dtype=float)[self.other]  # (a list index: a new contiguous array)
            return packed_combination(self._stack, np.flatnonzero(w).astype(np.int64), w, out)
        step = max(1, _BLOCK_BYTES // (8 * len(self.X)))
        for start in range(0, len(Y), step):
            rows = slice(start, start + step)
            for k in self.other:
                if weights[k] != 0.0:
                    out[rows] += weights[k] * self.scale[k] * self.kernels[k].raw(Y[rows], self.X)
        return out

    def quadratic_forms(self, w: np.ndarray) -> np.ndarray:
        """(w^T K_k w)_k for every kernel of the library, in row blocks (the SimpleMKL gradient is -1/2 of it)."""
        w = np.asarray(w, dtype=float)
        active = np.flatnonzero(w)
        Xa, wa = self.X[active], w[active]
        out = np.zeros(len(self.kernels))
        if self.grouped:
            out[self.grouped] = self._group.quadratic_forms([self.kernels[k] for k in self.grouped], Xa, wa)
        out *= self.scale
        if self._stack is not None and self.other:  # cached kernels are already normalised
            out[self.other] = _packed_quadratic_forms(self._stack, w, active)
            return out
        step = max(1, _BLOCK_BYTES // (8 * max(1, len(active))))
        for start in range(0, len(active), step):
            rows = slice(start, start + step)
            for k in self.other:
                out[k] += self.scale[k] * (wa[rows] @ self.kernels[k].raw(Xa[rows], Xa) @ wa)
        return out


    def frobenius_products(self, M: np.ndarray) -> np.ndarray:
        """(<M, K_k>_F)_k for an m x m matrix M (NKRR's gradient, paper 001 Prop. 1), from the cached stack or in
        row blocks of each kernel. Ungrouped kernels only (a grouped kernel's products are not implemented)."""
        if self.grouped:
            raise NotImplementedError("Frobenius products with grouped (TK) kernels of a library are not implemented")
        if self._stack is not None:  # <M, K> = sum over the upper triangle of K_ij (M_ij + M_ji), diagonal once
            return self._stack @ pack_upper(M + M.T, diagonal=0.5)
        out = np.zeros(len(self.kernels))
        step = max(1, _BLOCK_BYTES // (8 * len(self.X)))
        for start in range(0, len(self.X), step):
            rows = slice(start, start + step)
            for k in self.other:
                out[k] += self.scale[k] * float(np.sum(self.kernels[k].raw(self.X[rows], self.X) * M[rows]))
        return out


PACKED_DENSE_SUPPORT = 0.4  # above this share of nonzero weights, quadratic forms by one BLAS product over all
# entries; below, the support's entries gathered. Measured (260 planes, m = 1000, one thread, 2026-12-02, a loaded
# machine): support 1.0: 0.34 s against 1.09 s gathered; 0.5: 0.31 / 0.48; 0.3: 0.30 / 0.22; 0.15: 0.38 / 0.20.


def packed_size(m: int) -> int:
    """Entries of an m x m symmetric matrix's upper triangle, diagonal included."""
    return m * (m + 1) // 2


@functools.lru_cache(maxsize=4)
def _upper_mask(m: int) -> np.ndarray:
    """The m x m upper-triangle mask of :func:`pack_upper`, built once per size (a library's cache packs one kernel
    per call, all of one size); read-only, so a cached mask cannot be changed by a caller."""
    mask = np.triu(np.ones((m, m), dtype=bool))
    mask.setflags(write=False)
    return mask


def pack_upper(M: np.ndarray, diagonal: float = 1.0) -> np.ndarray:
    """M's upper triangle, row by row (row i: columns i..m-1), the diagonal multiplied by ``diagonal``: the cached
    kernels' layout (:class:`Library`)."""
    m = len(M)
    out = M[_upper_mask(m)]
    if diagonal != 1.0:
        i = np.arange(m)
        out[i * m - i * (i - 1) // 2] *= diagonal  # row i starts at its diagonal entry
    return out


def _packed_quadratic_forms(stack: np.ndarray, w: np.ndarray, active: np.ndarray) -> np.ndarray:
    """(w^T K_k w)_k for a packed cached stack (:func:`pack_upper`) and w with support ``active``: one matrix-vector
    product with the packed w w^T (off-diagonal entries doubled) when the support is dense, else only the support's
    entries (a^2 / 2 reads per kernel, not m^2 / 2)."""
    m = len(w)
    if len(active) > PACKED_DENSE_SUPPORT * m:
        return stack @ pack_upper(2.0 * np.outer(w, w), diagonal=0.5)
    from tkbench.methods._shared._library_numba import packed_quadratic_forms_sparse

    return packed_quadratic_forms_sparse(stack, np.ascontiguousarray(active, dtype=np.int64),
                                         np.ascontiguousarray(w, dtype=float), m)
