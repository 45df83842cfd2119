"""Tessellated kernels (paper 000, sections 3.2-5, Eq. (7), Eq. (10), Corollary 13 / Eq. (23)).

For a box [a, b] in R^n, a monomial basis Z and a PSD matrix P = [[Q, R], [R^T, S]] of size 2q,

    k(x, y) = int_[a,b] N(z, x)^T P N(z, y) dz,   N(z, x) = [ Z(z, x) I(z >= x) ; Z(z, x) (1 - I(z >= x)) ],

where I(z >= x) = 1 when z_i >= x_i for every i. The second block uses the *complement* of the first indicator.
Eq. (10) of the paper writes it as I(x >= z); for n >= 2 the two differ on a set of positive measure, and the
closed form (23) (the g / t / h functions) integrates the complement: t(x, y) = int_{z>=x} - int_{z>=max(x,y)}.
This module implements the complement, so the closed form is exactly the integral (tested against piecewise
Gauss-Legendre quadrature of the integral itself).

Two bases:
- ``basis="zx"``: all monomials of degree <= d in (x, z) jointly (Corollary 13), q = C(d + 2n, d), ordered as in
  paper 000 Appendix A (degree first, then x_1..x_n, z_1..z_n).
- ``basis="x"``: monomials of degree <= d in x only (the authors' code, "gamma = 0"), q = C(d + n, d).

Closed form. Let A = I(z >= x), B = I(z >= y). Then A B Q + A(1-B) R + (1-A) B R^T + (1-A)(1-B) S
= A B M + A (R - S) + B (R^T - S) + S with M = Q - R - R^T + S, so with z-monomials integrated per coordinate,

    k(x, y) = sum_s [ T_s(max(x, y)) * Phi(x)^T C^M_s Phi(y) + T_s(x) Phi(x)^T C^{R-S}_s Phi(y)
                      + T_s(y) Phi(x)^T C^{R^T-S}_s Phi(y) + T_s(a) Phi(x)^T C^S_s Phi(y) ],

where s runs over the distinct z-exponent sums gamma_i + gamma_j, T_s(p) = prod_k (b_k^{s_k+1} - p_k^{s_k+1}) /
(s_k + 1) (the paper's T(p, b, s + 1)), Phi(x) are the distinct x-monomials and C^X_s collects the entries of X
whose pair (i, j) has z-exponent sum s. Only the first term involves max(x, y): one Hadamard product per s (one in
all for ``basis="x"``); the rest is a single low-rank product. Rows are processed in blocks to bound memory.

Paper 000 Appendix A (a = (0, 0), b = (3, 4), d = 1) prints g and t(x, y) as this module computes them; its
constant matrix in h has 36 and 108 where T(a, b, zeta) gives 18 and 36 (the 1/zeta factor is missing), and its
t(y, x) matrix pairs x^delta_j y^delta_i with g(x, y)_ij, which equals the integral only for symmetric R. The
tests check the printed g and t(x, y) and the corrected h.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from functools import lru_cache
from math import comb

import numpy as np

from tkbench.methods._shared.compiled import charge

BASES = ("x", "zx")
_BLOCK_BYTES = 64 * 2**20  # memory per row block of an m x m intermediate (NumPy engine)
# the training kernel's low-rank part is fused into the compiled pass up to this many columns, and a BLAS product
# beyond (CPU time, one thread: m = 8000 basis x (10 columns) fused 0.55 s, BLAS first 1.5 s; Airfoil basis zx
# (132 columns) fused 0.18 s, BLAS first 0.14 s)
_FUSED_RANK = 32


def engine(pairs: int | None = None) -> str:
    """``numba`` (compiled, parallel loops, no m x m temporaries) or ``numpy`` (the reference) for a pass over
    ``pairs`` (x, y) pairs: the choice of :mod:`tkbench.methods._shared.compiled` (NumPy for small passes until the compiled code
    pays for its loading; ``TKBENCH_TK_ENGINE=numpy`` or ``numba`` forces one)."""
    from tkbench.methods._shared.compiled import use_compiled

    return "numba" if use_compiled(pairs) else "numpy"


def n_basis(n: int, d: int, basis: str) -> int:
    """q, the length of Z: C(d + n, d) for ``basis="x"``, C(d + 2n, d) for ``basis="zx"``."""
    return comb(d + n, d) if basis == "x" else comb(d + 2 * n, d)


def _exponents(n_vars: int, d: int) -> np.ndarray:
    """All exponent vectors of total degree <= d in ``n_vars`` variables, degree by degree, variables in order."""
    rows = []
    for degree in range(d + 1):
        for combo in itertools.combinations_with_replacement(range(n_vars), degree):
            e = np.zeros(n_vars, dtype=np.int64)
            for v in combo:
                e[v] += 1
            rows.append(e)
    return np.array(rows, dtype=np.int64).reshape(-1, n_vars)


@dataclass(frozen=True)
class TKBasis:
    """The monomial basis and its grouping for the closed form (precomputed once per n, d, basis)."""

    n: int
    d: int
    basis: str
    delta: np.ndarray  # (q, n) exponents of x
    gamma: np.ndarray  # (q, n) exponents of z
    x_exponents: np.ndarray = field(repr=False)  # (p, n) distinct rows of delta
    x_index: np.ndarray = field(repr=False)  # (q,) row of delta in x_exponents
    sums: np.ndarray = field(repr=False)  # (G, n) distinct gamma_i + gamma_j
    pair_group: np.ndarray = field(repr=False)  # (q, q) index into sums of gamma_i + gamma_j

    @property
    def q(self) -> int:
        return len(self.delta)


@lru_cache(maxsize=64)
def tk_basis(n: int, d: int, basis: str = "x") -> TKBasis:
    if basis not in BASES:
        raise ValueError(f"basis must be one of {BASES}, got {basis!r}")
    if n < 1 or d < 0:
        raise ValueError(f"need n >= 1 and d >= 0, got n={n}, d={d}")
    if basis == "x":
        delta = _exponents(n, d)
        gamma = np.zeros_like(delta)
    else:
        joint = _exponents(2 * n, d)
        delta, gamma = joint[:, :n], joint[:, n:]
    x_exp, x_index = np.unique(delta, axis=0, return_inverse=True)
    pair_sums = gamma[:, None, :] + gamma[None, :, :]
    sums, group = np.unique(pair_sums.reshape(-1, n), axis=0, return_inverse=True)
    return TKBasis(n, d, basis, delta, gamma, x_exp, x_index.ravel(), sums, group.reshape(len(delta), len(delta)))


def box(n: int, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """The integration box [-delta, 1 + delta]^n used with data scaled to [0, 1]^n (papers 000 and 003)."""
    return np.full(n, -float(delta)), np.full(n, 1.0 + float(delta))


def _monomials(X: np.ndarray, exps: np.ndarray) -> np.ndarray:
    """Phi(X): (m, p) values of the x-monomials.

    Each monomial has at most d nonzero exponents, so only those columns are touched: O(m p d), not O(m p n)
    (at n = 100, d = 1 this is 100x less work than powering every column of every monomial).
    """
    out = np.ones((X.shape[0], len(exps)))
    for k in range(X.shape[1]):
        cols = np.flatnonzero(exps[:, k])
        if len(cols):
            out[:, cols] *= X[:, k : k + 1] ** exps[cols, k][None, :]
    return out


def _tail_integral(p: np.ndarray, b: np.ndarray, s: np.ndarray) -> np.ndarray:
    """T_s(p) = prod_k int_{p_k}^{b_k} z^{s_k} dz, for p of shape (..., n)."""
    e = s + 1
    return np.prod((b**e - p**e) / e, axis=-1)


def _symmetric(P: np.ndarray) -> bool:
    return bool(np.array_equal(P, P.T))


def _split(P: np.ndarray, q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    P = np.asarray(P, dtype=float)
    if P.shape != (2 * q, 2 * q):
        raise ValueError(f"P must be {2 * q} x {2 * q} for this basis (q={q}), got {P.shape}")
    return P[:q, :q], P[:q, q:], P[q:, q:]


def _grouped(basis: TKBasis, C: np.ndarray) -> np.ndarray:
    """(G, p, p): the entries of a q x q coefficient matrix summed per (z-exponent sum, x-monomial pair)."""
    G, p = len(basis.sums), len(basis.x_exponents)
    out = np.zeros((G, p, p))
    ii, jj = np.indices(C.shape)
    np.add.at(out, (basis.pair_group, basis.x_index[ii], basis.x_index[jj]), C)
    return out


def _rows_per_block(m_other: int, arrays: int) -> int:
    return max(1, _BLOCK_BYTES // (8 * max(1, m_other) * max(1, arrays)))


def _max_factors(Xb: np.ndarray, Y: np.ndarray, b: np.ndarray, sums: np.ndarray) -> list[np.ndarray]:
    """T_s(max(x, y)) for a block of rows, every group s: products of per-coordinate factors, powers reused."""
    n = Xb.shape[1]
    per_coord: list[dict[int, np.ndarray]] = []
    for k in range(n):
        pk = np.maximum(Xb[:, k : k + 1], Y[None, :, k])
        needed = sorted(set(int(e) for e in sums[:, k]))
        per_coord.append({e: (b[k] ** (e + 1) - pk ** (e + 1)) / (e + 1) for e in needed})
    out = []
    for s in sums:
        t = per_coord[0][int(s[0])].copy()
        for k in range(1, n):
            t *= per_coord[k][int(s[k])]
        out.append(t)
    return out


def tk_kernel(X: np.ndarray, Y: np.ndarray | None, P: np.ndarray, a: np.ndarray, b: np.ndarray,
              d: int, basis: str = "x") -> np.ndarray:
    """The kernel matrix K[i, j] = k(X[i], Y[j]; P) on the box [a, b] (Corollary 13 with the complement block).

    X, Y must lie in [a, b] (clip them first); ``Y=None`` means ``Y = X``.
    """
    X = np.ascontiguousarray(X, dtype=float)
    Y = X if Y is None else np.ascontiguousarray(Y, dtype=float)
    a, b = np.asarray(a, float), np.asarray(b, float)
    bs = tk_basis(X.shape[1], d, basis)
    Q, R, S = _split(P, bs.q)
    CM = _grouped(bs, Q - R - R.T + S)
    CA, CB, CS = _grouped(bs, R - S), _grouped(bs, R.T - S), _grouped(bs, S)
    PhiX, PhiY = _monomials(X, bs.x_exponents), _monomials(Y, bs.x_exponents)

    # low-rank part: [Phi, T_s(x) Phi ...] W [Phi, T_s(y) Phi ...]^T
    TX = np.stack([_tail_integral(X, b, s) for s in bs.sums], axis=1)  # (m, G)
    TY = np.stack([_tail_integral(Y, b, s) for s in bs.sums], axis=1)
    Ta = np.array([_tail_integral(a, b, s) for s in bs.sums])
    G, p = CM.shape[0], CM.shape[1]
    W = np.zeros(((G + 1) * p, (G + 1) * p))
    W[:p, :p] = np.einsum("g,gij->ij", Ta, CS)
    for g in range(G):
        W[(g + 1) * p : (g + 2) * p, :p] = CA[g]
        W[:p, (g + 1) * p : (g + 2) * p] = CB[g]
    LX = np.hstack([PhiX] + [TX[:, g : g + 1] * PhiX for g in range(G)])
    LY = np.hstack([PhiY] + [TY[:, g : g + 1] * PhiY for g in range(G)])

    # the max(x, y) part: one Hadamard product per group with a nonzero coefficient
    active = [g for g in range(G) if np.any(CM[g])]
    if engine(len(X) * len(Y)) == "numba":
        from tkbench.methods.tk._numba import add_max_part, b_powers

        expo = np.ascontiguousarray(bs.sums[active] + 1, dtype=np.int64).reshape(len(active), bs.n)
        # (G, p, m_y): the coefficients of each group and monomial along contiguous columns
        RTT = np.ascontiguousarray(np.stack([CM[g] @ PhiY.T for g in active], axis=0)
                                   if active else np.zeros((0, p, len(Y))))
        top = int(expo.max()) + 1 if len(active) else 2
        YT = np.ascontiguousarray(Y.T)
        if Y is X and _symmetric(P):  # the training kernel: half the pairs, the low-rank part fused
            from numba import get_num_threads

            from tkbench.methods.tk._numba import symmetric_kernel

            if LX.shape[1] <= _FUSED_RANK:  # few low-rank columns (basis x): fused, one pass over K
                K = np.zeros((len(X), len(X)))
                symmetric_kernel(X, YT, b_powers(b, top), expo, np.ascontiguousarray(PhiX), RTT,
                                 np.ascontiguousarray(LX), np.ascontiguousarray(W @ LY.T), K, 4 * get_num_threads())
                return K
            K = LX @ (W @ LY.T)  # many (basis zx: (G + 1) p): BLAS, then the max part on half the pairs
            symmetric_kernel(X, YT, b_powers(b, top), expo, np.ascontiguousarray(PhiX), RTT,
                             np.zeros((len(X), 0)), np.zeros((0, len(X))), K, 4 * get_num_threads())
            return K
        K = LX @ (W @ LY.T)
        add_max_part(X, YT, b_powers(b, top), expo, np.ascontiguousarray(PhiX), RTT, K)
        return K
    started = time.perf_counter()
    K = LX @ W @ LY.T
    step = _rows_per_block(len(Y), bs.n + len(active) + 2)
    right = [CM[g] @ PhiY.T for g in active]
    for start in range(0, len(X), step):
        rows = slice(start, start + step)
        for t, r in zip(_max_factors(X[rows], Y, b, bs.sums[active]), right, strict=True):
            K[rows] += t * (PhiX[rows] @ r)
    charge(time.perf_counter() - started)
    return K


def tk_diagonal(X: np.ndarray, P: np.ndarray, a: np.ndarray, b: np.ndarray, d: int,
                basis: str = "x") -> np.ndarray:
    """k(x_i, x_i; P) for every row, without the m x m matrix: O(m q^2) per P.

    At x = y, max(x, y) = x and the closed form above collapses to
    k(x, x) = sum_s [ T_s(x) Phi(x)^T C^{Q-S}_s Phi(x) + T_s(a) Phi(x)^T C^S_s Phi(x) ]
    (the two indicator blocks are disjoint, so R does not enter). ``P`` may be one 2q x 2q matrix (returns (m,))
    or a stack (L, 2q, 2q) (returns (m, L)): the unit-diagonal normalisation of a library of random TK kernels.
    """
    X = np.ascontiguousarray(X, dtype=float)
    a, b = np.asarray(a, float), np.asarray(b, float)
    bs = tk_basis(X.shape[1], d, basis)
    stack = np.asarray(P, dtype=float)
    single = stack.ndim == 2
    stack = stack[None] if single else stack
    Phi = _monomials(X, bs.x_exponents)  # (m, p)
    TX = np.stack([_tail_integral(X, b, s) for s in bs.sums], axis=1)  # (m, G)
    Ta = np.array([_tail_integral(a, b, s) for s in bs.sums])  # (G,)
    out = np.empty((len(X), len(stack)))
    for k, Pk in enumerate(stack):
        Q, _, S = _split(Pk, bs.q)
        CQS, CS = _grouped(bs, Q - S), _grouped(bs, S)  # (G, p, p)
        quad = np.einsum("ip,gpr,ir->ig", Phi, CQS, Phi)  # Phi^T C^{Q-S}_s Phi per row and group
        const = np.einsum("ip,pr,ir->i", Phi, np.einsum("g,gpr->pr", Ta, CS), Phi)
        out[:, k] = (TX * quad).sum(1) + const
    return out[:, 0] if single else out


def tk_gradient(X: np.ndarray, w: np.ndarray, a: np.ndarray, b: np.ndarray, d: int,
                basis: str = "x") -> np.ndarray:
    """D(w), the symmetric 2q x 2q matrix with <P, D(w)> = w^T K(X, X; P) w for every symmetric P.

    This is the gradient of the P-step of Frank-Wolfe TK learning (paper 003, Theorem 15); it costs one pass over
    the m x m max(x, y) factors, never the 2q x 2q x m x m tensor of basis kernels.
    """
    X = np.ascontiguousarray(X, dtype=float)
    w = np.asarray(w, dtype=float).ravel()
    a, b = np.asarray(a, float), np.asarray(b, float)
    bs = tk_basis(X.shape[1], d, basis)
    q, G = bs.q, len(bs.sums)
    Phi = _monomials(X, bs.x_exponents)
    Psi = w[:, None] * Phi
    # E_s = Psi^T T_s(max) Psi, p x p per group
    if engine(len(X) * len(X)) == "numba":
        from numba import get_num_threads

        from tkbench.methods.tk._numba import b_powers, max_part_gradient

        expo = np.ascontiguousarray(bs.sums + 1, dtype=np.int64)
        E = max_part_gradient(X, np.ascontiguousarray(X.T), b_powers(b, int(expo.max()) + 1), expo,
                              np.ascontiguousarray(Psi.T), get_num_threads())
    else:
        started = time.perf_counter()
        E = np.zeros((G, Phi.shape[1], Phi.shape[1]))
        step = _rows_per_block(len(X), bs.n + G + 2)
        for start in range(0, len(X), step):
            rows = slice(start, start + step)
            for g, t in enumerate(_max_factors(X[rows], X, b, bs.sums)):
                E[g] += Psi[rows].T @ (t @ Psi)
        charge(time.perf_counter() - started)
    z = Phi.T @ w  # (p,)
    u = np.stack([Phi.T @ (_tail_integral(X, b, s) * w) for s in bs.sums])  # (G, p)
    Ta = np.array([_tail_integral(a, b, s) for s in bs.sums])

    gi, xi = bs.pair_group, bs.x_index
    rows, cols = np.indices((q, q))
    xr, xc = xi[rows], xi[cols]
    gM = E[gi, xr, xc]
    gA = u[gi, xr] * z[xc]  # coefficient of (R - S)
    gB = z[xr] * u[gi, xc]  # coefficient of (R^T - S)
    gS = Ta[gi] * z[xr] * z[xc]
    dQ = gM
    dR = -gM - gM.T + gA + gB.T
    dS = gM - gA - gB + gS
    D = np.empty((2 * q, 2 * q))
    D[:q, :q] = (dQ + dQ.T) / 2
    D[q:, q:] = (dS + dS.T) / 2
    D[:q, q:] = dR / 2
    D[q:, :q] = dR.T / 2
    return D


def tk_basis_kernels(X: np.ndarray, a: np.ndarray, b: np.ndarray, d: int,
                     basis: str = "x") -> list[tuple[int, int, np.ndarray]]:
    """(i, j, H_ij) for i <= j with K(X, X; P) = sum P_ij H_ij for symmetric P (the SDP's linear map, Opt. (24)).

    H_ii is the kernel of the unit matrix E_ii and H_ij (i < j) that of E_ij + E_ji. Memory: (2q)(2q+1)/2 m x m
    matrices, so for small m only.
    """
    size = 2 * n_basis(X.shape[1], d, basis)
    return [(i, j, tk_kernel(X, None, E, a, b, d, basis)) for i, j, E in symmetric_units(size)]


def symmetric_units(size: int):
    """(i, j, E) over i <= j with E = E_ij + E_ji (E_ii on the diagonal): coordinates of symmetric matrices, the
    linear maps of the TK SDP and of the density study."""
    for i in range(size):
        for j in range(i, size):
            E = np.zeros((size, size))
            E[i, j] = E[j, i] = 1.0
            yield i, j, E
