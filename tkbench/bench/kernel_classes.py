"""Kernel classes as linear maps from their decision variables to a kernel matrix (paper 000, section 4.3.3).

The pointwise-density study (paper 000, Figure 2, Optimization Problems (20) and (21)) asks how well each class
can match a target kernel matrix on given points. A class here is the linear map and the cone its variables live
in, with no learning attached:

- ``tk``: tessellated kernels of degree d, K = sum_ij P_ij H_ij with P symmetric PSD of size 2q (the TK class with
  the strict positivity P > 0 relaxed to P >= 0, as in section 4.3.2); basis "x" (q = C(d + n, d)) or "zx";
- ``gpk``: generalised polynomial kernels of degree d, K = Z_d(X) P Z_d(X)^T with P PSD of size q = C(d + n, d)
  (paper 000 Eq. (6)/(22) context; the class that Lemma 11 embeds in the TK class);
- ``gaussian_sum``: positive sums of Gaussians, K = sum_k mu_k exp(-||x - y||^2 / gamma_k), mu >= 0 (Eq. (22),
  whose printed exponent lacks the minus sign), with bandwidths gamma_k log-spaced in [0.01, 10]. Figure 2 matches
  the number of bandwidths to the number of TK decision variables at each degree: ``match_degree``.

``KernelClass.basis(X, params)`` returns a :class:`LinearKernelMap`; :mod:`tkbench.bench.kernel_fit` solves the
approximation problems over it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tkbench.methods.tk.kernel import (
    BASES,
    _exponents,
    _monomials,
    box,
    n_basis,
    symmetric_units,
    tk_basis_kernels,
)


@dataclass(frozen=True)
class LinearKernelMap:
    """K(v) = sum_k v_k A[k] (A: (p, m, m)) with v in a cone: ``psd`` (v = the upper triangle, row by row, of a
    symmetric PSD matrix of order ``order``; off-diagonal basis matrices already count both (i, j) and (j, i)) or
    ``nonneg`` (v >= 0)."""

    matrices: np.ndarray
    cone: str
    order: int | None = None

    @property
    def n_variables(self) -> int:
        return int(self.matrices.shape[0])


@dataclass(frozen=True)
class KernelClass:
    name: str
    description: str
    defaults: dict[str, Any]
    build: Callable[[np.ndarray, dict[str, Any]], LinearKernelMap]
    checks: dict[str, Callable[[Any], bool]] = field(default_factory=dict)

    def basis(self, X: np.ndarray, params: dict[str, Any] | None = None) -> LinearKernelMap:
        full = self.resolve(params or {})
        return self.build(np.asarray(X, dtype=float), full)

    def resolve(self, params: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            raise ValueError(f"kernel class {self.name!r} has no parameter {unknown[0]!r} "
                             f"(expected one of {', '.join(sorted(self.defaults))})")
        full = {**self.defaults, **params}
        for key, ok in self.checks.items():
            if not ok(full[key]):
                raise ValueError(f"kernel class {self.name!r}: {key}={full[key]!r} is not valid")
        return full


def _tk(X: np.ndarray, p: dict[str, Any]) -> LinearKernelMap:
    a, b = box(X.shape[1], float(p["delta"]))
    basis_kernels = tk_basis_kernels(X, a, b, int(p["degree"]), p["basis"])
    return LinearKernelMap(np.stack([H for *_, H in basis_kernels]), "psd",
                           2 * n_basis(X.shape[1], int(p["degree"]), p["basis"]))


def _gpk(X: np.ndarray, p: dict[str, Any]) -> LinearKernelMap:
    d = int(p["degree"])
    Z = _monomials(X, _exponents(X.shape[1], d))  # (m, q): Z_d(x) for every row
    q = Z.shape[1]
    mats = np.stack([Z @ E @ Z.T for _, _, E in symmetric_units(q)])
    return LinearKernelMap(mats, "psd", q)


def tk_variables(n: int, d: int, basis: str = "x") -> int:
    """Decision variables of the TK class of degree d: the (2q)(2q + 1)/2 entries of a symmetric 2q x 2q P."""
    size = 2 * n_basis(n, d, basis)
    return size * (size + 1) // 2


def _gaussian_sum(X: np.ndarray, p: dict[str, Any]) -> LinearKernelMap:
    count = p["n_bandwidths"]
    if p["match_degree"] is not None:
        count = tk_variables(X.shape[1], int(p["match_degree"]), p["match_basis"])
    gammas = np.logspace(np.log10(p["bandwidth_min"]), np.log10(p["bandwidth_max"]), int(count))
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return LinearKernelMap(np.exp(-sq[None] / gammas[:, None, None]), "nonneg")


def _degree(v: Any) -> bool:
    return isinstance(v, int | np.integer) and v >= 0


CLASSES: dict[str, KernelClass] = {c.name: c for c in (
    KernelClass("tk", "tessellated kernels of degree d (P >= 0; paper 000 Eq. (7), Corollary 13)",
                {"degree": 1, "delta": 0.1, "basis": "x"}, _tk,
                {"degree": _degree, "delta": lambda v: v >= 0, "basis": lambda v: v in BASES}),
    KernelClass("gpk", "generalised polynomial kernels Z_d(x)^T P Z_d(y), P >= 0 (paper 000 Lemma 11)",
                {"degree": 1}, _gpk, {"degree": _degree}),
    KernelClass("gaussian_sum", "positive sums of Gaussians, bandwidths log-spaced (paper 000 Eq. (22))",
                {"n_bandwidths": 10, "match_degree": None, "match_basis": "x", "bandwidth_min": 0.01,
                 "bandwidth_max": 10.0}, _gaussian_sum,
                {"n_bandwidths": lambda v: isinstance(v, int) and v >= 1,
                 "match_degree": lambda v: v is None or _degree(v), "match_basis": lambda v: v in BASES,
                 "bandwidth_min": lambda v: v > 0, "bandwidth_max": lambda v: v > 0}),
)}


def get_kernel_class(name: str) -> KernelClass:
    if name not in CLASSES:
        raise KeyError(f"unknown kernel class {name!r}; expected one of {', '.join(CLASSES)}")
    return CLASSES[name]


__all__ = ["CLASSES", "KernelClass", "LinearKernelMap", "get_kernel_class", "tk_variables"]
