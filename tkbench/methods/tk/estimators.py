"""Tessellated-kernel learners: ``TKClassifier`` and ``TKRegressor`` (papers 000 and 003), family ``tk``.

Fit: inputs are min-max scaled to [0, 1]^n on the training data (test inputs are scaled the same way and clipped
to [0, 1]: outside the box the closed form is not the kernel), the integration box is [-delta, 1 + delta]^n, and
P (2q x 2q, PSD, trace(P) = 2q as in paper 003; P_0 = I) is learned jointly with the SVM / SVR dual by the
primal-dual Frank-Wolfe algorithm (paper 003, Algorithm 2; :mod:`tkbench.methods.tk.frank_wolfe`).

Scaling of P: paper 003 fixes trace(P) = 2q, paper 000's SDP uses trace(P) <= 1. Since K(cP) = c K(P), a C under
trace 2q corresponds to C' = C * 2q under trace 1 (the same classifier): ``trace`` is a parameter.

Classification with more than two classes is one-vs-rest (one P per class), and says so in ``multiclass_``.

Centring (``center=True``, default). The SVM and SVR duals have the bias constraint sum(w) = 0, so a kernel and
the same kernel plus f(x) + f(y) + c give the same dual problem, the same saddle problem in P and the same
predictor (the extra terms multiply sum(w) = 0, or are a constant the intercept absorbs). The solvers therefore see
the centred training kernel H K(P) H (H = I - 11^T/m), an exact reformulation. It matters numerically: in n
dimensions the TK kernel carries the constant block T(a) ~ (1 + 2 delta)^n (S block; the whole kernel when
d = 0) and terms in x or y alone, which dwarf its informative part -- on Ionosphere (n = 34, d = 0, delta = 0.1)
by a factor 1e11, below LIBSVM's single-precision kernel cache, so the SVM sees a constant kernel and predicts one
class. Prediction uses the raw kernel against the support vectors and an intercept corrected by the centring
terms (exact, since sum(w) = 0).

Normalisation (``normalize=True``, default off). The kernel is divided by s = mean diag(H K(P_0) H) on the training
data (P_0 = the starting point, T/2q I): a fixed positive factor, equivalent to using C / s, which puts the C grid
on the same footing whatever n and delta (the TK kernel's scale grows or shrinks like a product over the n
coordinates).
"""
from __future__ import annotations

import dataclasses
import os
import warnings
from numbers import Integral, Real
from pathlib import Path
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from tkbench.methods._shared.binary import SignedTargetsMixin
from tkbench.methods._shared.checkpoint import Checkpoint, fingerprint
from tkbench.methods._shared.compiled import SMALL_PAIRS
from tkbench.methods._shared.conic import SOLVERS as SDP_SOLVERS
from tkbench.methods._shared.report import SolverReport
from tkbench.methods._shared.svm import solve_dual
from tkbench.methods.family import Family, register
from tkbench.methods.tk.frank_wolfe import DUAL_SOLVERS, FWResult, frank_wolfe
from tkbench.methods.tk.kernel import BASES, box, n_basis, tk_basis_kernels, tk_gradient, tk_kernel
from tkbench.methods.tk.sdp import solve_tk_sdp
from tkbench.methods.tk.warmup import compile_all, warmup

SOLVERS = ("fw", "sdp")


class _TKBase(BaseEstimator):
    """The shared parameters of the TK learners.

    Parameters
    ----------
    C : float > 0, default=1.0
        SVM penalty.
    degree : int >= 0, default=1
        d of the monomial basis.
    delta : float >= 0, default=0.1
        box margin.
    basis : {'x', 'zx'}, default='x'
        "x": monomials in x, q = C(d+n, d); "zx": in (z, x), Corollary 13.
    tol : float > 0, default=0.01
        relative duality gap.
    max_iter : int >= 0, default=100
        Frank-Wolfe iterations.
    svm_tol : float > 0 or None, default=None
        the SVM solver's tolerance, LIBSVM's rule; default min(1e-3, tol/10).
    trace : float > 0 or None, default=None
        trace of P, default 2q.
    solver : {'fw', 'sdp'}, default='fw'
        "fw": Frank-Wolfe; "sdp": one SDP, small m only.
    sdp_solver : {'clarabel', 'mosek', 'scs'}, default='clarabel'
        clarabel, scs or mosek.
    center : bool, default=True
        solve with the centred kernel, exact; see the module docstring.
    normalize : bool, default=False
        divide the kernel by its mean centred diagonal at P_0 (this rescales C).
    dual_solver : {'auto', 'libsvm', 'smo'}, default='auto'
        "smo": our SMO in double precision, each solve warm-started from the nearest solved step,
        tkbench.methods._shared.smo; "libsvm": LIBSVM from scratch for every solve, whose kernel cache is single
        precision (the default before 2026-11-28: rows made then name it in their configs); "auto": SMO above
        m = 1000 training rows, LIBSVM at or below (docs/methods/tk.md, issue 50).
    checkpoint : str or path-like or None, default=None
        a file path: Frank-Wolfe saves its state there after every iteration and a fit of the same problem continues
        from it; the runner sets it for final fits, tkbench.methods._shared.checkpoint.
    booster_step : float > 0 or None, default=None
        switch to the accelerated primal-dual booster of paper 003 section 5.5 once a Frank-Wolfe step falls below
        this value; None: never; tkbench.methods.tk.apd.
    booster_max_iter : int >= 0, default=1000
        the booster's iteration cap.
    kernel_dtype : {'float32', 'float64'}, default='float64'
        "float64" or "float32": the storage of the two m x m training kernels; float32 halves memory and the SMO
        solver's memory traffic, its arithmetic stays float64; centring is done in float64 before the rounding, at
        the cost of a second kernel pass.
    block_scale : bool, default=False
        not the papers' kernel: learn P in the reparametrisation P_eff = D P D, D = diag(sqrt(s1) I_q, sqrt(s2) I_q),
        with s1, s2 making the indicator block (P11's kernel) and the complement block (P22's) each of unit mean
        centred diagonal on the training data (the first 1000 rows). The kernel class is TK's (every PSD P_eff); the
        trace constraint, and so what Frank-Wolfe favours, changes. In many dimensions the indicator block is
        exponentially smaller than the complement (3e-17 on sonar, 60 features) and the papers' parametrisation
        learns a polynomial kernel; this one lets the tessellated part compete (docs/methods/tk.md, high
        dimension). ``P_`` is P_eff. Frank-Wolfe only.
    epsilon : float >= 0, default=0.1
        SVR tube width, regression. TKRegressor only.
    """

    _task = ""

    # every parameter, declared once (scikit-learn's format): fit validates with scikit-learn's own
    # ``_validate_params``, the config check (tkbench.config) reads the same declarations
    _parameter_constraints: ClassVar[dict] = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "degree": [Interval(Integral, 0, None, closed="left")],
        "delta": [Interval(Real, 0, None, closed="left")],
        "basis": [StrOptions(set(BASES))],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "svm_tol": [Interval(Real, 0, None, closed="neither"), None],
        "trace": [Interval(Real, 0, None, closed="neither"), None],
        "solver": [StrOptions(set(SOLVERS))],
        "sdp_solver": [StrOptions(set(SDP_SOLVERS))],
        "center": ["boolean"],
        "normalize": ["boolean"],
        "dual_solver": [StrOptions(set(DUAL_SOLVERS) | {"auto"})],
        "checkpoint": [str, os.PathLike, None],
        "booster_step": [Interval(Real, 0, None, closed="neither"), None],
        "booster_max_iter": [Interval(Integral, 0, None, closed="left")],
        "kernel_dtype": [StrOptions({"float64", "float32"})],
        "block_scale": ["boolean"],
    }

    def _check_params(self) -> None:
        """scikit-learn's validation of :attr:`_parameter_constraints`, then the combinations it cannot express."""
        self._validate_params()
        if self.kernel_dtype == "float32" and (self.solver != "fw" or self.dual_solver == "libsvm"):
            raise ValueError("kernel_dtype='float32' needs solver='fw' and dual_solver='smo' (LIBSVM and the SDP "
                             "take float64 matrices)")
        if self.block_scale and self.solver != "fw":
            raise ValueError("block_scale=True needs solver='fw' (the SDP is written in the papers' parametrisation)")
        if self.normalize and not self.center:
            raise ValueError("normalize=True needs center=True (the scale is that of the centred kernel)")

    def _scale(self, X: np.ndarray) -> np.ndarray:
        return np.clip((X - self.data_min_) * self.scale_, 0.0, 1.0)

    def _checkpoint(self, X01: np.ndarray, y: np.ndarray, task: str, problem: int) -> Checkpoint | None:
        """The state file of one Frank-Wolfe problem (one per one-vs-rest class), keyed by everything that defines
        the saddle problem and its iterates (not tol or max_iter: a state stays valid when they change)."""
        if self.checkpoint is None:
            return None
        facts = {k: getattr(self, k, None) for k in ("C", "epsilon", "degree", "delta", "basis", "trace", "center",
                                                        "normalize", "svm_tol", "dual_solver", "kernel_dtype", "block_scale")}
        return Checkpoint(f"{self.checkpoint}.{problem}.npz", fingerprint(X01, y, task=task, **facts))

    def _dual_solver(self, m: int) -> str:
        """``dual_solver`` resolved: "auto" is SMO above m = 1000 training rows (or with float32 kernels), LIBSVM
        at or below (a rule on the size alone, so that a config's numbers never depend on what ran before in the
        process): at m = 1202 (Airfoil) SMO was 2.8x faster, while the first fit of a small problem in a fresh
        process pays about a second to load SMO's compiled code (tkbench.methods._shared.compiled)."""
        if self.dual_solver != "auto":
            return self.dual_solver
        return "smo" if m * m > SMALL_PAIRS or self.kernel_dtype == "float32" else "libsvm"

    def _fit_problem(self, X01: np.ndarray, y: np.ndarray, task: str, problem: int = 0):
        a, b = box(X01.shape[1], self.delta)
        d, basis = int(self.degree), self.basis
        size = 2 * n_basis(X01.shape[1], d, basis)
        trace = None if self.trace is None else float(self.trace)
        T = float(size if trace is None else trace)
        epsilon = float(getattr(self, "epsilon", 0.1))
        center = bool(self.center)
        scale = 1.0
        P0 = np.eye(size) * (T / size)  # the solvers' starting point
        dtype = np.dtype(self.kernel_dtype)
        means = {}  # the raw kernel's row means at the last evaluation (= its column means: K is symmetric)
        # block_scale: Frank-Wolfe's P is P_eff / outer(D, D); every kernel and gradient pass sees P_eff
        DD = np.outer(self.block_scales_, self.block_scales_) if self.block_scale else None

        def raw(P):  # the training kernel matrix, centred if asked, stored in ``dtype``; its raw row means
            if DD is not None:
                P = P * DD
            if dtype == np.float64:
                K = tk_kernel(X01, None, P, a, b, d, basis)
                if not center:
                    return K, None
                rows = K.mean(axis=1)
                return _centred(K, rows), rows
            return _kernel_rows(lambda sl: tk_kernel(X01[sl], X01, P, a, b, d, basis), len(X01), dtype, center)

        start = None  # (the centred kernel at P0, its means): computed for the scale, reused by the first evaluation
        if self.normalize:
            start = raw(P0)
            scale = float(np.mean(np.diag(start[0]), dtype=np.float64))
            if not scale > 0:
                raise ValueError("normalize=True: the centred TK kernel is zero on the training data (all rows "
                                 "equal?)")

        # In place throughout: at m = 30 000 each m x m copy is 7 GB. The kernel at P0 (computed above for the
        # scale) serves the first evaluation only, whatever its P, and is released then: a run resumed from a
        # checkpoint starts elsewhere, and holding it on kept a third m x m matrix for the whole fit (20.6 GB at
        # m = 29 386).
        def kernel(P):
            nonlocal start
            first, start = start, None
            if first is not None and np.array_equal(P, P0):
                K, means["last"] = first
            else:
                first = None
                K, means["last"] = raw(P)
            if scale != 1.0:
                K /= scale
            return K

        def gradient(w):
            w = w - w.mean() if center else w  # <P, D(Hw)> = w^T H K(P) H w
            D = tk_gradient(X01, w, a, b, d, basis)  # <P_eff, D> = <P, D * DD>
            if DD is not None:
                D = D * DD
            return D / scale if scale != 1.0 else D

        if self.solver == "fw":
            res = frank_wolfe(kernel, gradient, size, y, task=task, C=float(self.C), epsilon=epsilon, trace=trace,
                              tol=float(self.tol), max_iter=int(self.max_iter), svm_tol=self.svm_tol,
                              dual_solver=self._dual_solver(len(y)), checkpoint=self._checkpoint(X01, y, task, problem),
                              booster_step=self.booster_step, booster_max_iter=int(self.booster_max_iter),
                              track=(lambda: means["last"]) if center else None)
        else:  # the SDP of paper 000 Opt. (24); the predictor is the SVM refitted on K(P*)
            basis_kernels = [(i, j, (_centred(H) if center else H) / scale)
                             for i, j, H in tk_basis_kernels(X01, a, b, d, basis)]
            sdp = solve_tk_sdp(basis_kernels, size, y, task=task, C=float(self.C),
                               epsilon=epsilon, trace=trace, solver=self.sdp_solver)
            sol = solve_dual(kernel(sdp.P), y, task=task, C=float(self.C), epsilon=epsilon,
                             tol=self.svm_tol or 1e-6)
            dual = float(sol.kappa - 0.5 * T * np.linalg.eigvalsh(gradient(sol.w))[-1])
            rel = (float(sol.value) - dual) / max(abs(float(sol.value)), 1e-12)
            entry = {"iteration": 0, "primal": float(sol.value), "dual": dual, "gap": float(sol.value) - dual,
                     "relative_gap": rel, "sdp_value": sdp.value, "sdp_status": sdp.status + (" (retried)" if sdp.retried else ""), "seconds": sdp.seconds}
            # converged = certified: the refitted SVM's duality gap on K(P*) (Clarabel often says
            # "optimal_inaccurate" for solutions whose certified gap is 1e-7); a capped refit certifies nothing
            res = FWResult(sdp.P, sol, 0, bool(rel <= float(self.tol) and not sol.capped), [entry], 1, 1,
                           n_svm_capped=int(sol.capped))
        if DD is not None:  # the predictor's kernel is K(P_eff)
            res = dataclasses.replace(res, P=res.P * DD)
        sv = res.solution.support
        coef = res.solution.w[sv] / scale
        intercept = float(res.solution.intercept)
        if center and len(sv):  # f(x) = sum_i w_i [k(x, x_i) - mean_j k(x_j, x_i)] / s + b  (sum_i w_i = 0)
            if res.tracked is not None:  # Frank-Wolfe kept the raw row means at its P (linear in P)
                column_means = res.tracked[sv]
            else:  # the SDP route: one pass against the support vectors
                column_means = sum(_blocks(X01, lambda rows: tk_kernel(rows, X01[sv], res.P, a, b, d, basis)
                                           .sum(0))) / len(X01)
            intercept -= float(coef @ column_means)
        self.resumed_ = self.resumed_ or res.resumed  # the first problem that continued from a checkpoint
        return res, sv, coef, intercept

    def _fit_common(self, X, y):
        self._check_params()
        self.data_min_ = X.min(axis=0)
        span = X.max(axis=0) - self.data_min_
        self.scale_ = np.where(span > 0, 1.0 / np.where(span > 0, span, 1.0), 0.0)
        self.a_, self.b_ = box(X.shape[1], self.delta)
        self.q_ = n_basis(X.shape[1], int(self.degree), self.basis)
        self.resumed_ = None
        X01 = self._scale(X)
        self.tessellated_share_ = tessellated_share(X01, self.a_, self.b_)
        # D of block_scale, once per fit (every one-vs-rest problem shares the inputs); None without it
        self.block_scales_ = block_scales(X01, self.a_, self.b_, int(self.degree), self.basis, bool(self.center)) \
            if self.block_scale else None
        if self.tessellated_share_ < SHARE_WARN and not self.block_scale:  # (block_scale keeps it: its own scale)
            warnings.warn(
                f"TK: on these {X.shape[1]} features the kernel's tessellated part is {self.tessellated_share_:.1e} "
                f"of its constant block (1 + 2 delta)^n (the median over pairs of training rows); below "
                f"{SHARE_WARN:g} it keeps at most 4 significant digits in float64, and the learned kernel is in "
                f"effect a polynomial kernel of degree {self.degree} (docs/methods/tk.md, high dimension). "
                f"block_scale=True learns P where the tessellated part competes (not the papers' parametrisation); "
                f"fewer features (PCA, say) also help.", UserWarning, stacklevel=3)
        return X01

    def _store(self, results, X01):
        self.P_ = np.stack([r.P for r, *_ in results])
        self.support_vectors_ = [X01[s] for _, s, *_ in results]
        self.support_ = [s for _, s, *_ in results]
        self.dual_coef_ = [coef for *_, coef, _ in results]  # on the raw kernel k(x, x_i) (centring, scale folded in)
        self.intercept_ = np.array([b0 for *_, b0 in results])
        self.n_iters_ = np.array([r.n_iter for r, *_ in results])  # per one-vs-rest problem
        self.n_iter_ = int(self.n_iters_.max())  # an int, as scikit-learn's single-problem estimators have
        self.converged_ = np.array([r.converged for r, *_ in results])
        self.gap_history_ = [r.history for r, *_ in results]
        self.objective_ = np.array([r.primal for r, *_ in results])
        self.n_svm_solves_ = int(sum(r.n_svm_solves for r, *_ in results))
        self.n_svm_capped_ = int(sum(r.n_svm_capped for r, *_ in results))
        self.fit_seconds_before_resume_ = float(sum((r.resumed or {}).get("seconds", 0.0) for r, *_ in results))
        if not np.all(self.converged_):  # scikit-learn's convention (LIBSVM's too): say it, do not fail
            stopped = [r for r, *_ in results if not r.converged]
            gaps = [float(r.history[-1].get("relative_gap", np.nan)) for r in stopped if r.history]
            capped = sum(r.n_iter >= int(self.max_iter) for r in stopped)
            # a gap computed from an SVM solve stopped at LIBSVM's iteration cap is no certificate, however small
            # it reads (an SDP refit at the cap left "relative gap 5e-09": the warning must say why that is not done)
            svm_capped = sum(r.n_svm_capped > 0 for r in stopped)
            why = ([f"{capped} at max_iter={self.max_iter}"] if capped else []) + \
                ([f"{svm_capped} with SVM solves stopped at LIBSVM's iteration cap: a gap from a capped solve "
                  "certifies nothing"]
                 if svm_capped else [])
            warnings.warn(
                f"TK learning stopped before its duality-gap tolerance tol={self.tol:g} on {len(stopped)} of "
                f"{len(results)} problem(s)" + (f" ({'; '.join(why)})" if why else "")
                + (f", relative gap left {max(gaps):.3g}" if gaps else "") + ". Raise max_iter or loosen tol; a gap "
                "far above tol, or a capped SVM solve, usually means an ill-conditioned kernel: try normalize=True or "
                "a smaller C.", ConvergenceWarning, stacklevel=3)
        if self.checkpoint is not None:  # finished: the states are no longer needed
            for k in range(len(results)):
                Path(f"{self.checkpoint}.{k}.npz").unlink(missing_ok=True)
        if len(results) == 1:  # binary / regression: plain arrays as in scikit-learn's SVMs
            self.P_, self.support_vectors_, self.support_ = self.P_[0], self.support_vectors_[0], self.support_[0]
            self.dual_coef_, self.gap_history_ = self.dual_coef_[0], self.gap_history_[0]

    def _decision(self, X) -> np.ndarray:
        check_is_fitted(self, "P_")
        X = validate_data(self, X, reset=False)
        X01 = self._scale(X)
        d = int(self.degree)
        def decision(P, sv, coef, b0):  # in row blocks: no (test x support vectors) matrix beyond one block
            return np.concatenate(list(_blocks(
                X01, lambda rows: tk_kernel(rows, sv, P, self.a_, self.b_, d, self.basis) @ coef + b0))) \
                if len(X01) else np.zeros(0)

        if self.P_.ndim == 2:
            return decision(self.P_, self.support_vectors_, self.dual_coef_, self.intercept_[0])
        return np.column_stack([decision(*args) for args in zip(self.P_, self.support_vectors_, self.dual_coef_,
                                                                 self.intercept_, strict=True)])

    def diagnostics(self) -> dict:
        """Solver facts for a result row: the one solver report (:mod:`tkbench.methods._shared.report`)."""
        last = self.gap_history_[-1] if self.P_.ndim == 2 else {}
        sdp = bool(last) and "sdp_status" in last
        gap = float(last.get("relative_gap", np.nan)) if last else None
        extras = {"objective": float(self.objective_[0]), "n_svm_solves": self.n_svm_solves_,
                  "n_svm_capped": self.n_svm_capped_, "q": 2 * self.q_,
                  "tessellated_share": float(getattr(self, "tessellated_share_", np.nan)),
                  # one-vs-rest: a list of index arrays of different lengths (not one array)
                  "n_support": int(sum(len(s) for s in self.support_)) if self.P_.ndim == 3 else len(self.support_),
                  "basis": self.basis,
                  **({"sdp_status": last["sdp_status"]} if sdp else {})}
        if sdp:  # paper 000's SDP (Opt. 24) by an interior-point solver: its iterations are not counted
            report = SolverReport("SDP, paper 000 Opt. 24 (cvxpy)", None, bool(np.all(self.converged_)),
                                  f"the SVM refitted on the SDP's kernel has a relative duality gap <= tol = "
                                  f"{self.tol:g}", {"relative_gap": gap}, extras=extras)
        else:
            report = SolverReport("Frank-Wolfe, paper 003 Algorithm 2", self.n_iter_, bool(np.all(self.converged_)),
                                  f"relative duality gap (OPT_P - OPT_A) / |OPT_A| <= tol = {self.tol:g}, or "
                                  f"max_iter = {self.max_iter}", {"relative_gap": gap}, extras=extras)
        return report.as_diagnostics()


def block_scales(X01: np.ndarray, a: np.ndarray, b: np.ndarray, d: int, basis: str, center: bool,
                 rows: int = 1000) -> np.ndarray:
    """D of ``block_scale``: sqrt(s1) on the first q coordinates of P, sqrt(s2) on the last q, where 1 / s1 and
    1 / s2 are the mean (centred, when ``center``) diagonals of the kernels at P = diag(I_q, 0) (the indicator
    block) and P = diag(0, I_q) (the complement), on the first ``rows`` training rows (deterministic). A block
    whose kernel vanishes there keeps the factor 1."""
    q = n_basis(X01.shape[1], d, basis)
    Z = X01[:rows]
    out = np.ones(2 * q)
    for half in (slice(0, q), slice(q, 2 * q)):
        P = np.zeros((2 * q, 2 * q))
        P[half, half] = np.eye(q)
        K = tk_kernel(Z, None, P, a, b, d, basis)
        diag = np.diag(_centred(K, K.mean(axis=1)) if center else K)
        mean = float(np.mean(diag))
        if mean > 0 and np.isfinite(mean):
            out[half] = 1.0 / np.sqrt(mean)
    return out


SHARE_WARN = 1e-12  # below it the tessellated part has at most 4 of float64's ~16 significant digits left


def tessellated_share(X01: np.ndarray, a: np.ndarray, b: np.ndarray, rows: int = 64) -> float:
    """The median over pairs of (at most ``rows``) training rows of prod_k (b_k - max(x_k, y_k)) / (b_k - a_k):
    the weight of the kernel's indicator ("tessellated") part, K_11 of Corollary 13 at degree 0, against its constant
    block prod_k (b_k - a_k). It falls exponentially with the number of features (sonar, 60 features, delta = 1:
    3e-17), and below float64's resolution the learned kernel is a polynomial kernel (docs/methods/tk.md). Computed
    in logarithms, on the first ``rows`` rows (a deterministic subset: the same data gives the same share)."""
    Z = X01[:rows]
    if len(Z) < 2:
        return 1.0
    logs = np.log(b[None, None, :] - np.maximum(Z[:, None, :], Z[None, :, :])).sum(-1) - np.log(b - a).sum()
    return float(np.exp(np.median(logs[np.triu_indices(len(Z), 1)])))


class TKClassifier(SignedTargetsMixin, ClassifierMixin, _TKBase):
    """Soft-margin SVM with a learned tessellated kernel (paper 003, Algorithm 2); parameters in :class:`_TKBase`."""

    def __init__(self, C=1.0, degree=1, delta=0.1, basis="x", tol=1e-2, max_iter=100, svm_tol=None, trace=None,
                 solver="fw", sdp_solver="clarabel", center=True, normalize=False, dual_solver="auto",
                 checkpoint=None, booster_step=None, booster_max_iter=1000, kernel_dtype="float64",
                 block_scale=False):
        self.block_scale = block_scale
        self.kernel_dtype = kernel_dtype
        self.booster_step = booster_step
        self.booster_max_iter = booster_max_iter
        self.checkpoint = checkpoint
        self.dual_solver = dual_solver
        self.center = center
        self.normalize = normalize
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
        self._store([self._fit_problem(X01, t, "classification", k) for k, t in enumerate(targets)], X01)
        return self


class TKRegressor(RegressorMixin, _TKBase):
    """Epsilon-SVR with a learned tessellated kernel (paper 003, Algorithm 2); ``epsilon`` as in paper 003 (0.1)."""

    def __init__(self, C=1.0, epsilon=0.1, degree=1, delta=0.1, basis="x", tol=1e-2, max_iter=100, svm_tol=None,
                 trace=None, solver="fw", sdp_solver="clarabel", center=True, normalize=False, dual_solver="auto",
                 checkpoint=None, booster_step=None, booster_max_iter=1000, kernel_dtype="float64",
                 block_scale=False):
        self.block_scale = block_scale
        self.kernel_dtype = kernel_dtype
        self.booster_step = booster_step
        self.booster_max_iter = booster_max_iter
        self.checkpoint = checkpoint
        self.dual_solver = dual_solver
        self.center = center
        self.normalize = normalize
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


def _blocks(X: np.ndarray, fn, rows: int = 2048):
    """fn over row blocks of X (kernel rows against the support vectors: at m = 30 000 the whole matrix is 7 GB)."""
    for start in range(0, len(X), rows):
        yield fn(X[start:start + rows])


def _kernel_rows(rows_of, m: int, dtype, center: bool, block: int = 1024) -> tuple[np.ndarray, np.ndarray | None]:
    """The m x m training kernel stored in ``dtype`` (float32: half the memory), computed in row blocks of float64
    by ``rows_of(X[block])``. Centring is done in float64 before the rounding (the raw TK kernel can dwarf its
    centred part by 1e11, below float32's precision): a first pass sums the rows, the second centres each block
    with them (the kernel is symmetric, so column means are row means). Two kernel passes instead of one.
    Returns the matrix and the raw row means (None without centring)."""
    K = np.empty((m, m), dtype=dtype)
    starts = range(0, m, block)
    r = np.concatenate([rows_of(slice(i, i + block)).mean(axis=1) for i in starts]) if center else None
    if center:
        mean = r.mean()
    for i in starts:
        Kb = rows_of(slice(i, i + block))
        if center:
            Kb -= r[i:i + block, None]
            Kb -= r[None, :]
            Kb += mean
        K[i:i + block] = Kb
    return K, r


def _centred(K: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """H K H with H = I - 11^T/m (in place on K), for a square kernel matrix (``rows``: its row means, if known)."""
    rows = K.mean(axis=1) if rows is None else rows
    K -= rows[:, None]
    K -= K.mean(axis=0)[None, :]
    return K


def _build(task: str, solver: str, params: dict, seed: int):
    return (TKClassifier if task == "classification" else TKRegressor)(solver=solver, **params)


def _diagnostics(model) -> dict:
    return model.diagnostics()


def _trace(model) -> list[dict]:
    history = model.gap_history_ if model.P_.ndim == 2 else model.gap_history_[0]
    return [dict(h) for h in history]


register(Family(
    name="tk",
    stop_rule="relative duality gap (OPT_P - OPT_A) / |OPT_A| <= tol, or max_iter (Frank-Wolfe, paper 003 Algorithm 2)",
    description="tessellated kernel learned with the SVM / SVR: fw (paper 003 Alg. 2) or sdp (paper 000 Opt. 24)",
    build=_build,
    solvers=SOLVERS,
    default_grid={"C": [0.1, 1.0, 10.0, 100.0], "delta": [0.01, 0.1, 1.0]},
    scaler="none",  # the estimator scales to [0, 1]^n itself (the kernel's domain)
    scales_inside="min-max to [0, 1]^n on the training rows (the kernel's domain, paper 000 section 6)",
    diagnostics=_diagnostics,
    trace=_trace,
    reference="Colbert & Peet 2020 (paper 000); paper 003 Algorithm 2",
    warmup=warmup,
    compile=compile_all,
    changed_defaults={"dual_solver": ("libsvm", "auto")},  # 2026-11-28 (issue 50): SMO above m = 1000
    # each CV fit saves its Frank-Wolfe state after every iteration (frank_wolfe.py): a fit at C = 1e4 on German
    # ran 55 minutes unfinished, and one longer than a session would never end. Measured 2026-12-03 (TKClassifier, C = 10, delta = 1, basis x, random
    # data, beside two sweeps): with its state saved a fit took as long as without, 1.07 / 1.10 s against 1.14 /
    # 1.11 s (560 rows, 3 iterations), 0.98 / 0.96 s against 0.96 / 0.99 s (640 rows), 58.8 / 60.0 s against
    # 59.7 / 60.5 s (166 rows, 100 iterations: a save per iteration); the state is P and the duals, kilobytes
    checkpoint_cv_fits=True,
))
