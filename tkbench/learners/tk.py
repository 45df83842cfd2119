"""Tessellated-kernel learners: ``TKClassifier`` and ``TKRegressor`` (papers 000 and 003), family ``tk``.

Fit: inputs are min-max scaled to [0, 1]^n on the training data (test inputs are scaled the same way and clipped
to [0, 1]: outside the box the closed form is not the kernel), the integration box is [-delta, 1 + delta]^n, and
P (2q x 2q, PSD, trace(P) = 2q as in paper 003; P_0 = I) is learned jointly with the SVM / SVR dual by the
primal-dual Frank-Wolfe algorithm (paper 003, Algorithm 2; :mod:`tkbench.solvers.frank_wolfe`).

Scaling of P: paper 003 fixes trace(P) = 2q, paper 000's SDP uses trace(P) <= 1. Since K(cP) = c K(P), a C under
trace 2q corresponds to C' = C * 2q under trace 1 (the same classifier): ``trace`` is a parameter.

Classification with more than two classes is one-vs-rest (one P per class), and says so in ``multiclass_``.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from tkbench.kernels.tessellated import BASES, box, n_basis, tk_basis_kernels, tk_gradient, tk_kernel
from tkbench.kernels.warmup import warmup
from tkbench.learners.binary import SignedTargetsMixin
from tkbench.learners.registry import Family, register
from tkbench.solvers.frank_wolfe import FWResult, frank_wolfe
from tkbench.solvers.sdp import SOLVERS as SDP_SOLVERS
from tkbench.solvers.sdp import solve_tk_sdp
from tkbench.solvers.svm import solve_dual

SOLVERS = ("fw", "sdp")


class _TKBase(BaseEstimator):
    _task = ""

    def _check_params(self) -> None:
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        if self.sdp_solver not in SDP_SOLVERS:
            raise ValueError(f"sdp_solver must be one of {SDP_SOLVERS}, got {self.sdp_solver!r}")
        if self.basis not in BASES:
            raise ValueError(f"basis must be one of {BASES}, got {self.basis!r}")
        if not (isinstance(self.degree, int | np.integer) and self.degree >= 0):
            raise ValueError(f"degree must be an integer >= 0, got {self.degree!r}")
        if not self.C > 0:
            raise ValueError(f"C must be > 0, got {self.C!r}")
        if not self.delta >= 0:
            raise ValueError(f"delta must be >= 0, got {self.delta!r}")
        if not self.tol > 0 or self.max_iter < 0:
            raise ValueError("tol must be > 0 and max_iter >= 0")

    def _scale(self, X: np.ndarray) -> np.ndarray:
        return np.clip((X - self.data_min_) * self.scale_, 0.0, 1.0)

    def _fit_problem(self, X01: np.ndarray, y: np.ndarray, task: str):
        a, b = box(X01.shape[1], self.delta)
        d, basis = int(self.degree), self.basis
        size = 2 * n_basis(X01.shape[1], d, basis)
        trace = None if self.trace is None else float(self.trace)
        epsilon = float(getattr(self, "epsilon", 0.1))

        def kernel(P):
            return tk_kernel(X01, None, P, a, b, d, basis)

        def gradient(w):
            return tk_gradient(X01, w, a, b, d, basis)

        if self.solver == "fw":
            res = frank_wolfe(kernel, gradient, size, y, task=task, C=float(self.C), epsilon=epsilon, trace=trace,
                              tol=float(self.tol), max_iter=int(self.max_iter), svm_tol=self.svm_tol)
        else:  # the SDP of paper 000 Opt. (24); the predictor is the SVM refitted on K(P*)
            sdp = solve_tk_sdp(tk_basis_kernels(X01, a, b, d, basis), size, y, task=task, C=float(self.C),
                               epsilon=epsilon, trace=trace, solver=self.sdp_solver)
            sol = solve_dual(kernel(sdp.P), y, task=task, C=float(self.C), epsilon=epsilon,
                             tol=self.svm_tol or 1e-6)
            T = float(size if trace is None else trace)
            dual = float(sol.kappa - 0.5 * T * np.linalg.eigvalsh(gradient(sol.w))[-1])
            rel = (float(sol.value) - dual) / max(abs(float(sol.value)), 1e-12)
            entry = {"iteration": 0, "primal": float(sol.value), "dual": dual, "gap": float(sol.value) - dual,
                     "relative_gap": rel, "sdp_value": sdp.value, "sdp_status": sdp.status, "seconds": sdp.seconds}
            # converged = certified: the refitted SVM's duality gap on K(P*) (Clarabel often says
            # "optimal_inaccurate" for solutions whose certified gap is 1e-7)
            res = FWResult(sdp.P, sol, 0, bool(rel <= float(self.tol)), [entry], 1, 1)
        return res, res.solution.support

    def _fit_common(self, X, y):
        self._check_params()
        self.data_min_ = X.min(axis=0)
        span = X.max(axis=0) - self.data_min_
        self.scale_ = np.where(span > 0, 1.0 / np.where(span > 0, span, 1.0), 0.0)
        self.a_, self.b_ = box(X.shape[1], self.delta)
        self.q_ = n_basis(X.shape[1], int(self.degree), self.basis)
        return self._scale(X)

    def _store(self, results, X01):
        self.P_ = np.stack([r.P for r, _ in results])
        self.support_vectors_ = [X01[s] for _, s in results]
        self.support_ = [s for _, s in results]
        self.dual_coef_ = [r.solution.w[s] for r, s in results]
        self.intercept_ = np.array([r.solution.intercept for r, _ in results])
        self.n_iter_ = np.array([r.n_iter for r, _ in results])
        self.converged_ = np.array([r.converged for r, _ in results])
        self.gap_history_ = [r.history for r, _ in results]
        self.objective_ = np.array([r.primal for r, _ in results])
        self.n_svm_solves_ = int(sum(r.n_svm_solves for r, _ in results))
        if len(results) == 1:  # binary / regression: plain arrays as in scikit-learn's SVMs
            self.P_, self.support_vectors_, self.support_ = self.P_[0], self.support_vectors_[0], self.support_[0]
            self.dual_coef_, self.gap_history_ = self.dual_coef_[0], self.gap_history_[0]

    def _decision(self, X) -> np.ndarray:
        check_is_fitted(self, "P_")
        X = validate_data(self, X, reset=False)
        X01 = self._scale(X)
        d = int(self.degree)
        if self.P_.ndim == 2:
            K = tk_kernel(X01, self.support_vectors_, self.P_, self.a_, self.b_, d, self.basis)
            return K @ self.dual_coef_ + self.intercept_[0]
        cols = []
        for P, sv, coef, b0 in zip(self.P_, self.support_vectors_, self.dual_coef_, self.intercept_, strict=True):
            cols.append(tk_kernel(X01, sv, P, self.a_, self.b_, d, self.basis) @ coef + b0)
        return np.column_stack(cols)

    def diagnostics(self) -> dict:
        """Solver facts for a result row."""
        last = self.gap_history_[-1] if self.P_.ndim == 2 else {}
        return {"n_iter": int(np.max(self.n_iter_)), "converged": bool(np.all(self.converged_)),
                "relative_gap": float(last.get("relative_gap", np.nan)) if last else None,
                "objective": float(self.objective_[0]), "n_svm_solves": self.n_svm_solves_, "q": 2 * self.q_,
                "n_support": int(np.sum([len(s) for s in np.atleast_1d(self.support_)]))
                if self.P_.ndim == 3 else len(self.support_), "basis": self.basis,
                **({"sdp_status": last["sdp_status"]} if last and "sdp_status" in last else {})}


class TKClassifier(SignedTargetsMixin, ClassifierMixin, _TKBase):
    """Soft-margin SVM with a learned tessellated kernel (paper 003, Algorithm 2).

    Parameters: ``C`` (SVM penalty), ``degree`` (d of the monomial basis), ``delta`` (box margin),
    ``basis`` ("x": monomials in x, q = C(d+n, d); "zx": in (z, x), Corollary 13), ``tol`` (relative duality gap),
    ``max_iter``, ``svm_tol`` (LIBSVM tolerance; default min(1e-3, tol/10)), ``trace`` (trace of P, default 2q),
    ``solver`` ("fw": Frank-Wolfe; "sdp": one SDP, small m only) and ``sdp_solver`` (clarabel, scs or mosek).
    """

    def __init__(self, C=1.0, degree=1, delta=0.1, basis="x", tol=1e-2, max_iter=100, svm_tol=None, trace=None,
                 solver="fw", sdp_solver="clarabel"):
        self.solver = solver
        self.sdp_solver = sdp_solver
        self.C = C
        self.degree = degree
        self.delta = delta
        self.basis = basis
        self.tol = tol
        self.max_iter = max_iter
        self.svm_tol = svm_tol
        self.trace = trace

    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        X01 = self._fit_common(X, y)
        targets = self._signed_targets(y)
        self._store([self._fit_problem(X01, t, "classification") for t in targets], X01)
        return self


class TKRegressor(RegressorMixin, _TKBase):
    """Epsilon-SVR with a learned tessellated kernel (paper 003, Algorithm 2); ``epsilon`` as in paper 003 (0.1)."""

    def __init__(self, C=1.0, epsilon=0.1, degree=1, delta=0.1, basis="x", tol=1e-2, max_iter=100, svm_tol=None,
                 trace=None, solver="fw", sdp_solver="clarabel"):
        self.solver = solver
        self.sdp_solver = sdp_solver
        self.C = C
        self.epsilon = epsilon
        self.degree = degree
        self.delta = delta
        self.basis = basis
        self.tol = tol
        self.max_iter = max_iter
        self.svm_tol = svm_tol
        self.trace = trace

    def fit(self, X, y):
        X, y = validate_data(self, X, y, y_numeric=True)
        y = np.asarray(y, dtype=float)
        X01 = self._fit_common(X, y)
        self._store([self._fit_problem(X01, y, "regression")], X01)
        return self

    def predict(self, X):
        return self._decision(X)


def _build(task: str, solver: str, params: dict, seed: int):
    return (TKClassifier if task == "classification" else TKRegressor)(solver=solver, **params)


def _diagnostics(model) -> dict:
    return model.diagnostics()


def _trace(model) -> list[dict]:
    history = model.gap_history_ if model.P_.ndim == 2 else model.gap_history_[0]
    return [dict(h) for h in history]


register(Family(
    name="tk",
    description="tessellated kernel learned with the SVM / SVR: fw (paper 003 Alg. 2) or sdp (paper 000 Opt. 24)",
    build=_build,
    solvers=SOLVERS,
    default_grid={"C": [0.1, 1.0, 10.0, 100.0], "delta": [0.01, 0.1, 1.0]},
    scaler="none",  # the estimator scales to [0, 1]^n itself (the kernel's domain)
    diagnostics=_diagnostics,
    trace=_trace,
    reference="Colbert & Peet 2020 (paper 000); paper 003 Algorithm 2",
    warmup=warmup,
))
