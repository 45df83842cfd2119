"""Kernel libraries for multiple kernel learning (SimpleMKL, Rakotomamonjy et al. 2008; papers 000 and 003).

The standard library of the papers: Gaussian kernels with bandwidths between 0.5 and 10 and polynomial kernels of
degree 1 to 3, each on all features and on every single feature: 13 (n + 1) kernels with the default 10 widths.
Each kernel is normalised to unit mean diagonal on the training rows (trace m; Gaussians are unchanged), so that C
means what it means for a single-kernel SVM (the SimpleMKL toolbox's unit trace would divide the effective C by m);
the same factor is applied to test rows.

A library is a list of :class:`BaseKernel`; combined kernels sum_k d_k K_k and the quadratic forms w^T K_k w are
computed in row blocks from the features, so memory stays O(m^2) whatever the number of kernels (at m = 8000 the
65 matrices of a 4-feature library would need 33 GB). When the training kernels fit in ``cache_mb`` (default 2 GB,
like LIBSVM's kernel cache) they are computed once and kept: on the papers' small data sets (m < 700) this makes
SimpleMKL several times faster, since every SVM solve of the reduced-gradient descent needs them.
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
        from tkbench.kernels.tessellated import box

        return box(n, self.delta)

    def raw(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        from tkbench.kernels.tessellated import tk_kernel

        a, b = self._box(X.shape[1])
        return tk_kernel(np.clip(X, 0, 1), np.clip(Y, 0, 1), self.P, a, b, self.degree, self.basis)

    def diagonal(self, X: np.ndarray) -> np.ndarray:
        from tkbench.kernels.tessellated import tk_diagonal

        a, b = self._box(X.shape[1])
        return tk_diagonal(np.clip(X, 0, 1), self.P, a, b, self.degree, self.basis)

    @property
    def kind(self) -> str:
        return "tk"

    @property
    def name(self) -> str:
        return f"tk(P{self.index}, d={self.degree}, delta={self.delta:g})"


def random_tk_library(n_features: int, count: int, *, degree: int = 1, delta: float = 0.1, basis: str = "x",
                      seed: int = 0) -> list[TKBaseKernel]:
    """``count`` TK kernels with random PSD matrices P_s = A A^T / (2q), A standard normal (seeded)."""
    from tkbench.kernels.tessellated import n_basis

    size = 2 * n_basis(n_features, degree, basis)
    rng = np.random.default_rng(seed)
    out = []
    for s in range(count):
        A = rng.standard_normal((size, size))
        out.append(TKBaseKernel(A @ A.T / size, degree, float(delta), basis, s))
    return out


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
        self.tk = [k for k, kern in enumerate(self.kernels) if isinstance(kern, TKBaseKernel)]
        self.other = [k for k in range(len(self.kernels)) if k not in set(self.tk)]
        if self.tk:
            first = self.kernels[self.tk[0]]
            if any((self.kernels[k].degree, self.kernels[k].delta, self.kernels[k].basis)
                   != (first.degree, first.delta, first.basis) for k in self.tk):
                raise ValueError("the TK kernels of one library must share degree, delta and basis")
        self.scale = np.array([len(self.X) / k.diagonal(self.X).sum() for k in self.kernels])
        self._stack: np.ndarray | None = None  # the normalised non-TK training kernels, when they fit cache_mb
        if self.other and len(self.other) * len(self.X) ** 2 * 8 <= cache_mb * 2**20:
            self._stack = np.stack([self.scale[k] * self.kernels[k].raw(self.X, self.X) for k in self.other])

    def release_cache(self) -> None:
        """Drop the cached training kernels (a fitted estimator keeps the library for prediction only)."""
        self._stack = None

    def _tk_combined_P(self, weights: np.ndarray) -> np.ndarray:
        return sum(weights[k] * self.scale[k] * self.kernels[k].P for k in self.tk)

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
        if self.tk and np.any(weights[self.tk]):
            first = self.kernels[self.tk[0]]
            combined = TKBaseKernel(self._tk_combined_P(weights), first.degree, first.delta, first.basis, -1)
            out += combined.raw(Y, self.X)
        if Y is self.X and self._stack is not None:  # SimpleMKL keeps few weights nonzero: touch only those
            for r in np.flatnonzero(weights[self.other]):
                out += weights[self.other[r]] * self._stack[r]
            return out
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
        if self.tk:  # every w^T K(P_s) w = <P_s, D(w)> from one D(w)
            from tkbench.kernels.tessellated import box, tk_gradient

            first = self.kernels[self.tk[0]]
            a, b = box(self.X.shape[1], first.delta)
            D = tk_gradient(np.clip(Xa, 0, 1), wa, a, b, first.degree, first.basis)
            for k in self.tk:
                out[k] = np.sum(self.kernels[k].P * D)
        out *= self.scale
        if self._stack is not None and self.other:  # cached kernels are already normalised
            out[self.other] = _stack_quadratic_forms(self._stack, active, wa)
            return out
        step = max(1, _BLOCK_BYTES // (8 * max(1, len(active))))
        for start in range(0, len(active), step):
            rows = slice(start, start + step)
            for k in self.other:
                out[k] += self.scale[k] * (wa[rows] @ self.kernels[k].raw(Xa[rows], Xa) @ wa)
        return out


    def frobenius_products(self, M: np.ndarray) -> np.ndarray:
        """(<M, K_k>_F)_k for an m x m matrix M (NKRR's gradient, paper 001 Prop. 1), from the cached stack or in
        row blocks of each kernel. Non-TK kernels only (a TK kernel's products need D of a rank-1 M)."""
        if self.tk:
            raise NotImplementedError("Frobenius products with TK kernels of a library are not implemented")
        if self._stack is not None:
            return self._stack.reshape(len(self.other), -1) @ M.ravel()
        out = np.zeros(len(self.kernels))
        step = max(1, _BLOCK_BYTES // (8 * len(self.X)))
        for start in range(0, len(self.X), step):
            rows = slice(start, start + step)
            for k in self.other:
                out[k] += self.scale[k] * float(np.sum(self.kernels[k].raw(self.X[rows], self.X) * M[rows]))
        return out


def _stack_quadratic_forms(stack: np.ndarray, active: np.ndarray, wa: np.ndarray) -> np.ndarray:
    """(w_A^T K_k[A, A] w_A)_k for a cached (L, m, m) stack and the support A of w (a^2 L reads, not m^2 L)."""
    from tkbench.kernels._library_numba import stack_quadratic_forms

    return stack_quadratic_forms(stack, np.ascontiguousarray(active, dtype=np.int64), np.ascontiguousarray(wa))
