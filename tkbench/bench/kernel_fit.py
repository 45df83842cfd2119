"""Best approximation of a target kernel matrix within a kernel class (paper 000, section 4.3.3).

Optimization Problems (20) and (21) of paper 000:

    (20)  min_{k in K}  ||K - K*||_1 / m^2        (21)  min_{k in K}  ||K - K*||_inf,    K_ij = k(x_i, x_j),

with element-wise matrix norms (sum and largest absolute entry) and K* the optimal kernel matrix of Theorem 10
(:func:`optimal_kernel_matrix`). The class enters as a linear map with its cone
(:class:`tkbench.bench.kernel_classes.LinearKernelMap`): PSD classes (TK, GPK) give an SDP, positive sums of fixed
kernels (Gaussians) a linear program. Solved with cvxpy and an explicitly named solver (Clarabel by default).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tkbench.bench.kernel_classes import LinearKernelMap
from tkbench.methods._shared.conic import check_solver

NORMS = ("l1", "linf")


def optimal_kernel_matrix(y: np.ndarray) -> np.ndarray:
    """K* of paper 000 Theorem 10 for labels in {-1, +1}: with gamma* = -mean(y) and v = e + gamma* y,
    K* = m / ||v||^2 Y v v^T Y (Y = diag(y)); for balanced labels (sum y = 0) K* = y y^T."""
    y = np.asarray(y, dtype=float).ravel()
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("optimal_kernel_matrix needs labels in {-1, +1}")
    v = 1.0 - y.mean() * y
    u = y * v
    return len(y) / float(v @ v) * np.outer(u, u)


@dataclass
class KernelFit:
    norm: str
    value: float  # the problem's objective: ||K - K*||_1 / m^2 or ||K - K*||_inf
    status: str
    seconds: float
    K: np.ndarray
    variables: np.ndarray


def _whitened(kmap: LinearKernelMap) -> tuple[np.ndarray, np.ndarray]:
    """The PSD class in well-conditioned coordinates: (T, H) with K(T P' T^T) = sum_ab P'_ab H[a, b].

    With H'_ij the kernel matrix of the unit matrix E_ij, M_ij = trace(H'_ij) is the PSD second-moment matrix of the
    class's feature map on the data, and T = V Lambda^{-1/2} over the eigenvalues of M above 1e-12 of the largest.
    Directions in the null space of M give the zero kernel matrix on the data, so {K(T P' T^T) : P' >= 0} is the
    same set as {K(P) : P >= 0}: an exact change of variables (for a GPK it orthonormalises the monomial features
    on the data), without which interior-point solvers stall on the ill-conditioned monomial bases.
    """
    order, m = kmap.order, kmap.matrices.shape[1]
    iu = np.triu_indices(order)
    full = np.zeros((order, order, m, m))
    off = (iu[0] != iu[1])[:, None, None]
    full[iu] = np.where(off, 0.5, 1.0) * kmap.matrices  # H'_ij = H_ij / 2 off the diagonal
    full[iu[1], iu[0]] = full[iu]
    M = np.trace(full, axis1=2, axis2=3)
    lam, V = np.linalg.eigh(M)
    keep = lam > 1e-12 * lam.max()
    T = V[:, keep] / np.sqrt(lam[keep])
    r = T.shape[1]
    half = np.tensordot(T, full, axes=([0], [0]))  # (r, order, m, m)
    H = np.tensordot(half, T, axes=([1], [0]))  # (r, m, m, r)
    return T, np.moveaxis(H, 3, 1).reshape(r, r, m, m)


class KernelFitProblem:
    """Problems (20) and (21) over one class and one target, with the class's design matrix built once.

    K and K* are symmetric, so only the upper triangle enters (the diagonal once, the rest with weight 2 in the
    1-norm). PSD classes are solved in whitened coordinates (:func:`_whitened`, computed here once for both norms).
    """

    def __init__(self, kmap: LinearKernelMap, target: np.ndarray):
        self.kmap, self.target = kmap, np.asarray(target, dtype=float)
        m = self.target.shape[0]
        self.iu = np.triu_indices(m)
        self.weight = np.where(self.iu[0] == self.iu[1], 1.0, 2.0)
        if kmap.cone == "psd":
            self.T, H = _whitened(kmap)
            r = self.T.shape[1]
            self.A = H.reshape(r * r, m, m)[:, self.iu[0], self.iu[1]].T  # vec(K_upper) = A vec(P')
        elif kmap.cone == "nonneg":
            self.T, self.A = None, kmap.matrices[:, self.iu[0], self.iu[1]].T
        else:
            raise ValueError(f"unknown cone {kmap.cone!r}")

    def solve(self, norm: str, solver: str = "clarabel") -> KernelFit:
        """``variables`` of the result is P itself (row-major vec) or the nonnegative weights."""
        import cvxpy as cp

        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
        m = self.target.shape[0]
        if self.T is not None:
            r = self.T.shape[1]
            Pw = cp.Variable((r, r), symmetric=True)
            v, constraints = cp.vec(Pw, order="C"), [Pw >> 0]
        else:
            v, constraints = cp.Variable(self.kmap.n_variables, nonneg=True), []
        residual = self.A @ v - self.target[self.iu]
        objective = (cp.sum(cp.multiply(self.weight, cp.abs(residual))) / m**2 if norm == "l1"
                     else cp.norm(residual, "inf"))
        problem = cp.Problem(cp.Minimize(objective), constraints)
        t0 = time.perf_counter()
        problem.solve(solver=check_solver(solver))
        seconds = time.perf_counter() - t0
        if v.value is None:
            raise RuntimeError(f"the {norm} kernel-fit problem was not solved: solver status {problem.status!r}")
        if self.T is not None:
            P = self.T @ np.asarray(Pw.value, dtype=float) @ self.T.T
            K = np.tensordot(P[np.triu_indices(self.kmap.order)], self.kmap.matrices, axes=1)  # sum_{i<=j} P_ij H_ij
            values = P.ravel()
        else:
            values = np.asarray(v.value, dtype=float).ravel()
            K = np.tensordot(values, self.kmap.matrices, axes=1)
        diff = np.abs(K - self.target)
        value = float(diff.sum() / m**2) if norm == "l1" else float(diff.max())  # recomputed from the solution
        return KernelFit(norm, value, str(problem.status), seconds, K, values)
