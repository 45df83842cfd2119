"""The SVM dual with a fixed (precomputed) kernel, solved by LIBSVM through scikit-learn: OPT_A of paper 003.

Classification (C-SVC dual, paper 003 Eq. (9) with kappa_c):   max_a  sum(a) - 1/2 (y*a)^T K (y*a),
    0 <= a <= C, y^T a = 0.
Regression (epsilon-SVR dual, kappa_r):   max_b  y^T b - eps |b|_1 - 1/2 b^T K b,   -C <= b <= C, 1^T b = 0.

Both are returned in one form: ``w`` (length m: y*a, or b), the intercept, and the dual objective value.
``kappa`` is the linear part (sum(a), or y^T b - eps |b|_1), so that OPT_A = kappa - 1/2 w^T K w.

Iteration cap: LIBSVM itself (3.x, ``svm.cpp``) stops SMO after max(10^7, 100 m) iterations with a warning;
scikit-learn's copy runs without a cap (``max_iter=-1``). On an ill-conditioned kernel at large C SMO can cycle:
one Hill-Valley solve (m = 485, C = 1000) ran for over an hour, where the cap stops it after ~1.5 s. ``solve_dual``
applies LIBSVM's cap by default and says so in ``DualSolution.capped``; the solution is then feasible but not
optimal, so its value is a lower bound on OPT_A, not OPT_A (callers must not certify a gap with it).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC, SVR


@dataclass
class DualSolution:
    w: np.ndarray  # (m,) signed dual coefficients: y_i a_i (classification) or b_i (regression)
    intercept: float
    kappa: float  # the linear part of the dual objective
    quad: float  # w^T K w
    n_iter: int
    capped: bool = False  # SMO stopped at the iteration cap: feasible, not optimal
    state: object = None  # what a warm-startable solver needs to start the next solve here (tkbench.methods._shared.smo)

    @property
    def value(self) -> float:
        """The dual objective OPT_A = kappa - 1/2 w^T K w."""
        return self.kappa - 0.5 * self.quad

    @property
    def support(self) -> np.ndarray:
        return np.flatnonzero(self.w)


DUAL_SOLVERS = ("smo", "libsvm")  # the dual solvers of Frank-Wolfe and SimpleMKL: ours (warm) or LIBSVM


def solve_dual(K: np.ndarray, y: np.ndarray, *, task: str, C: float, epsilon: float = 0.1, tol: float = 1e-4,
               cache_mb: float = 500.0, max_iter: int | None = None) -> DualSolution:
    """Solve the SVM dual for kernel matrix K; ``y`` is +-1 for classification.

    The decision function is ``K(x, X) @ w + intercept`` (positive -> class +1). ``max_iter``: SMO iteration cap,
    by default LIBSVM's own max(10^7, 100 m); -1 for none.
    """
    m = len(y)
    if max_iter is None:
        max_iter = libsvm_iteration_cap(m)
    if task == "classification":
        model = SVC(kernel="precomputed", C=C, tol=tol, cache_size=cache_mb, max_iter=max_iter)
    else:
        model = SVR(kernel="precomputed", C=C, epsilon=epsilon, tol=tol, cache_size=cache_mb, max_iter=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # reported as DualSolution.capped instead
        model.fit(K, y)
    w = np.zeros(m)
    coef = model.dual_coef_.ravel()
    intercept = float(model.intercept_[0])
    if task == "classification" and model.classes_[0] != -1:
        raise ValueError("classification labels must be -1 and +1")
    w[model.support_] = coef
    quad = float(w @ K @ w)
    if task == "classification":
        kappa = float(np.sum(np.abs(w)))
    else:
        kappa = float(y @ w - epsilon * np.sum(np.abs(w)))
    n_iter = int(np.sum(model.n_iter_))
    return DualSolution(w, intercept, kappa, quad, n_iter, capped=bool(max_iter > 0 and n_iter >= max_iter))


def libsvm_iteration_cap(m: int) -> int:
    """LIBSVM's SMO iteration limit for m training points: max(10^7, 100 m), bounded by INT_MAX."""
    return int(min(max(10_000_000, 100 * m), 2**31 - 1))
