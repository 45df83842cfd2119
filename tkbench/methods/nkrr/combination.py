"""Polynomial combinations of base kernels (paper 001, Cortes, Mohri & Rostamizadeh 2009, section 2).

The kernel family is Eq. (3) with the product coefficients of section 2:

    K_mu = (sum_k mu_k K_k)^(o d),        mu >= 0,  d = 1..4,

the d-th elementwise (Hadamard) power of a non-negative combination of p base kernels; d = 2 is Eq. (4), d = 1 the
linear combination of classical multiple kernel learning. The learner (:mod:`tkbench.methods.nkrr.projected_gradient`)
needs three things from the base kernels, which every base set here provides:

- ``combined(mu, Y)``: S(Y, X) = sum_k mu_k K_k(Y, X) against the training rows X (Y = X by default);
- ``weighted_forms(alpha, W)``: (alpha^T (W o K_k) alpha)_k for every k, with W an m x m matrix. Proposition 1,
  generalised to degree d, gives dF/dmu_k = -d alpha^T ((S^(o(d-1))) o K_k) alpha: one call with W = S^(o(d-1));
- ``matrix(k)``: one base kernel on the training rows (the Hessian in tests and landscapes; small p only).

Base sets (the ``base`` parameter of the NKRR estimators):

- ``linear_feature``: one rank-1 kernel per feature, K_k = x_k x_k^T (the paper's Figure 1 uses "two linear base
  kernels generated from the first two features of the sonar dataset"). No m x m matrix per kernel is ever formed:
  S = X diag(mu) X^T, and all p weighted forms come from one m x m by m x p product, sum_i Z_ik (W Z)_ik with
  Z = alpha o X (O(m^2 p) time, O(m p) extra memory).
- ``gaussian_feature``: one Gaussian per feature, K_k(x, z) = exp(-(x_k - z_k)^2 / (2 width^2)); S and the
  weighted forms are computed by compiled loops over the pairs, never storing a kernel per feature.
- ``library``: the SimpleMKL standard library (:mod:`tkbench.methods._shared.library`: Gaussians of widths 0.5..10 and
  polynomials of degree 1..3 on all and on single features, each normalised to unit mean diagonal), whose
  cached or row-blocked kernels give the weighted forms as Frobenius products <alpha alpha^T o W, K_k>.

``constant=True`` adds the all-ones kernel K_0 = 1 1^T as one more base kernel with its own weight mu_0 (so that
a degree-d combination of linear features is an inhomogeneous polynomial kernel, with a learned offset). The
paper's Figure 1 has no such kernel; it is an option, off by default.

Memory: O(m^2) for the training kernel whatever p (the paper's rank-1 kernels, and the issue's requirement), never
O(p m^2), except ``matrix(k)`` callers that ask for all p matrices themselves (the Hessian, small p).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

BASES = ("linear_feature", "gaussian_feature", "library")


class LinearFeatureKernels:
    """K_k = x_k x_k^T for each feature k (rank-1 linear base kernels)."""

    def __init__(self, X: np.ndarray):
        self.X = np.ascontiguousarray(X, dtype=float)
        self.names = [f"linear(x{k + 1})" for k in range(self.X.shape[1])]

    @property
    def p(self) -> int:
        return self.X.shape[1]

    def combined(self, mu: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        Y = self.X if Y is None else np.asarray(Y, dtype=float)
        return (Y * mu) @ self.X.T

    def weighted_forms(self, alpha: np.ndarray, W: np.ndarray | None) -> np.ndarray:
        """(alpha^T (W o x_k x_k^T) alpha)_k = (z_k^T W z_k)_k with z_k = alpha o x_k; W None means all ones."""
        Z = alpha[:, None] * self.X
        if W is None:  # d = 1: (1^T z_k)^2
            return Z.sum(axis=0) ** 2
        return np.einsum("ik,ik->k", Z, W @ Z)

    def matrix(self, k: int) -> np.ndarray:
        return np.outer(self.X[:, k], self.X[:, k])

    def factor(self) -> np.ndarray:
        """Z with K_k = z_k z_k^T (every base kernel rank-1): the explicit feature map of ``feature_map``."""
        return self.X


class GaussianFeatureKernels:
    """K_k(x, z) = exp(-(x_k - z_k)^2 / (2 width^2)) for each feature k."""

    def __init__(self, X: np.ndarray, width: float = 1.0):
        if not width > 0:
            raise ValueError(f"width must be > 0, got {width!r}")
        self.X = np.ascontiguousarray(X, dtype=float)
        self.gamma = 1.0 / (2.0 * float(width) ** 2)
        self.names = [f"gaussian({width:g}, x{k + 1})" for k in range(self.X.shape[1])]

    @property
    def p(self) -> int:
        return self.X.shape[1]

    def combined(self, mu: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        from tkbench.methods.nkrr._numba import gaussian_feature_sum

        Y = self.X if Y is None else np.ascontiguousarray(Y, dtype=float)
        return gaussian_feature_sum(Y, self.X, np.ascontiguousarray(mu, dtype=float), self.gamma)

    def weighted_forms(self, alpha: np.ndarray, W: np.ndarray | None) -> np.ndarray:
        from tkbench.methods.nkrr._numba import gaussian_feature_forms

        m = len(alpha)
        W = np.ones((1, 1)) if W is None else W  # a 1 x 1 W stands for all ones (d = 1)
        return gaussian_feature_forms(self.X, np.ascontiguousarray(alpha, dtype=float),
                                      np.ascontiguousarray(W, dtype=float), self.gamma, W.shape[0] == m)

    def matrix(self, k: int) -> np.ndarray:
        diff = self.X[:, k][:, None] - self.X[:, k][None, :]
        return np.exp(-self.gamma * diff**2)


class LibraryKernels:
    """The SimpleMKL standard library as NKRR base kernels (each normalised to unit mean diagonal)."""

    def __init__(self, X: np.ndarray, widths, degrees, per_feature: bool = True):
        from tkbench.methods._shared.library import Library, standard_library

        kernels = standard_library(X.shape[1], tuple(widths), tuple(degrees))
        if not per_feature:
            kernels = [k for k in kernels if k.feature is None]
        if not kernels:
            raise ValueError("the kernel library is empty: give widths and/or degrees")
        self.library = Library(kernels, X)
        self.names = [k.name for k in kernels]

    @property
    def p(self) -> int:
        return len(self.library)

    def combined(self, mu: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        return self.library.combined(np.asarray(mu, dtype=float), Y)

    def weighted_forms(self, alpha: np.ndarray, W: np.ndarray | None) -> np.ndarray:
        M = np.outer(alpha, alpha)
        if W is not None:
            M *= W
        return self.library.frobenius_products(M)

    def matrix(self, k: int) -> np.ndarray:
        return self.library.kernel(k)

    def release_cache(self) -> None:
        self.library.release_cache()


class WithConstant:
    """A base set plus the all-ones kernel K_0 = 1 1^T as its first kernel (weight mu_0)."""

    def __init__(self, base):
        self.base = base
        self.names = ["constant", *base.names]

    @property
    def p(self) -> int:
        return self.base.p + 1

    def combined(self, mu: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        S = self.base.combined(mu[1:], Y)
        S += mu[0]
        return S

    def weighted_forms(self, alpha: np.ndarray, W: np.ndarray | None) -> np.ndarray:
        first = float(alpha.sum() ** 2) if W is None else float(alpha @ W @ alpha)
        return np.concatenate([[first], self.base.weighted_forms(alpha, W)])

    def matrix(self, k: int) -> np.ndarray:
        m = len(self.base.X) if hasattr(self.base, "X") else self.base.library.X.shape[0]
        return np.ones((m, m)) if k == 0 else self.base.matrix(k - 1)

    def release_cache(self) -> None:
        getattr(self.base, "release_cache", lambda: None)()

    def factor(self) -> np.ndarray | None:
        Z = getattr(self.base, "factor", lambda: None)()
        return None if Z is None else np.column_stack([np.ones(len(Z)), Z])


def feature_map_size(r: int, degree: int) -> int:
    """D = C(r + d - 1, d): the columns of :func:`feature_map` for r rank-1 kernels and degree d."""
    from math import comb

    return comb(r + degree - 1, degree)


def feature_map(Z: np.ndarray, mu: np.ndarray, degree: int) -> np.ndarray:
    """Phi (m x D) with Phi Phi^T = (Z diag(mu) Z^T)^(o d), when every base kernel is rank-1 (K_k = z_k z_k^T).

    By the multinomial theorem, (sum_k mu_k z_ik z_jk)^d = sum over multisets c of d indices of
    (d! / prod_a c_a!) prod_{a in c} mu_a z_ia z_ja, so the column of c is sqrt(d! / prod c_a! prod mu_a) prod z_a.
    A degree-0 map is the all-ones column. Used by ``ridge_solve="feature_map"``
    (:class:`tkbench.methods.nkrr.projected_gradient.NKRRObjective`).
    """
    m, r = Z.shape
    if degree == 0:
        return np.ones((m, 1))
    scaled = Z * np.sqrt(np.asarray(mu, dtype=float))
    index, coef = _multisets(r, degree)
    cols = coef * scaled[:, index[:, 0]]  # one column per multiset, a factor of it per pass: m x D memory only
    for k in range(1, degree):
        cols *= scaled[:, index[:, k]]
    return cols


@lru_cache(maxsize=32)
def _multisets(r: int, degree: int) -> tuple[np.ndarray, np.ndarray]:
    """The multisets of ``degree`` indices out of r (D x degree, in combinations_with_replacement order) and
    sqrt(d! / prod c_a!) for each: the feature map's columns (one fit evaluates it once per mu)."""
    from collections import Counter
    from itertools import combinations_with_replacement
    from math import factorial

    sets = list(combinations_with_replacement(range(r), degree))
    coef = np.empty(len(sets))
    for j, c in enumerate(sets):
        value = factorial(degree)
        for count in Counter(c).values():
            value //= factorial(count)
        coef[j] = np.sqrt(float(value))
    index = np.array(sets, dtype=np.intp).reshape(len(sets), degree)
    index.setflags(write=False)
    coef.setflags(write=False)
    return index, coef


_THREADS: dict[str, int | None] = {"budget": None}


def set_thread_budget(threads: int) -> None:
    """A run's thread budget (``protocol.blas_threads``, ``--threads``) for the compiled loops of the Gaussian and
    library base kernels (numba parallel loops, a thread per core by default; threadpoolctl, which bounds BLAS,
    does not reach them). Applied when such a base set is built, so that the linear bases, which need no compiled
    code, do not load numba (the family's warm-up, :func:`tkbench.methods.nkrr.estimators._warmup`)."""
    _THREADS["budget"] = int(threads)  # clamped to 1 .. numba's threads where applied (compiled.set_threads)


def _apply_thread_budget() -> None:
    if _THREADS["budget"] is not None:
        from tkbench.methods._shared.compiled import set_threads

        set_threads(_THREADS["budget"])


def make_base_kernels(base: str, X: np.ndarray, *, constant: bool = False, width: float = 1.0,
                      widths=(), degrees=(), per_feature: bool = True):
    """The base kernel set named ``base`` (one of :data:`BASES`) on the training rows X."""
    if base == "linear_feature":
        kernels = LinearFeatureKernels(X)
    elif base == "gaussian_feature":
        _apply_thread_budget()
        kernels = GaussianFeatureKernels(X, width)
    elif base == "library":
        _apply_thread_budget()
        kernels = LibraryKernels(X, widths, degrees, per_feature)
    else:
        raise ValueError(f"base must be one of {BASES}, got {base!r}")
    return WithConstant(kernels) if constant else kernels


def combination_kernel(kernels, mu: np.ndarray, degree: int, Y: np.ndarray | None = None) -> np.ndarray:
    """K_mu(Y, X) = (sum_k mu_k K_k(Y, X))^(o d), Eq. (3) with product coefficients (Eq. (4) for d = 2)."""
    S = kernels.combined(np.asarray(mu, dtype=float), Y)
    if degree != 1:
        S **= degree
    return S
