"""NKRR: learning a polynomial kernel combination with kernel ridge regression (paper 001, section 3).

The problem (Eq. (10)), for K_mu = (sum_k mu_k K_k)^(o d) (:mod:`tkbench.methods.nkrr.combination`) and lambda > 0:

    min_{mu in M}  F(mu) = y^T (K_mu + lambda I)^-1 y,     alpha = (K_mu + lambda I)^-1 y   (Eq. (9)),

    M1 = {mu >= 0, ||mu - mu0||_1 <= Lambda}   or   M2 = {mu >= 0, ||mu - mu0||_2 <= Lambda}   (Eqs. (7)-(8)).

- F and alpha by one Cholesky factorisation of K_mu + lambda I (SciPy), in place: O(m^2) memory; or (the default
  since issue 50) by conjugate gradients preconditioned by the previous evaluation's factor, with a certified
  bound on F's error (:class:`NKRRObjective`).
- Gradient (Proposition 1, generalised from d = 2 to any d): dF/dmu_k = -alpha^T (dK_mu/dmu_k) alpha
  = -d alpha^T (S^(o(d-1)) o K_k) alpha with S = sum_r mu_r K_r. Every entry is <= 0 (U_k is PSD), so a gradient
  step never decreases a weight.
- Hessian (for tests and the landscape of Figure 1): d2F/dmu_k dmu_l = 2 b_k^T (K_mu + lambda I)^-1 b_l
  - d (d - 1) alpha^T (S^(o(d-2)) o K_k o K_l) alpha, b_k = d (S^(o(d-1)) o K_k) alpha. F is convex on a region
  exactly where this matrix is PSD: Proposition 4's condition (18) (the text we have stops at (18) before
  defining its matrices, so the Hessian itself is the test of convexity used here).

Algorithm 1 (projection-based gradient descent):

    mu' <- P_M(mu - eta grad F(mu))     until ||mu' - mu|| < epsilon  (or max_iter iterations).

Choices where the paper is silent or loose, tested in ``tests/methods/nkrr/test_nkrr.py``:

- The projection P_M is the exact Euclidean projection onto M (M1 or M2), not the paper's "normalize mu' so that
  ||mu' - mu0|| = Lambda". How they relate: since grad F <= 0, a step from mu >= 0 stays >= 0 (the thresholding
  is idle, as the paper notes). For M2, the Euclidean projection of such a point outside the ball is then exactly
  the radial rescaling mu0 + Lambda (mu' - mu0) / ||mu' - mu0||_2, i.e. the paper's normalisation; the two differ
  only for a point inside the ball, which the paper pushes out to the sphere and the projection leaves where it is
  (Propositions 2-3: the minimum lies on the boundary, so the descent gets there by itself). For M1 the Euclidean
  projection is a soft-thresholding of mu' - mu0 (sparsifying), the paper's normalisation a rescaling; the paper
  says only that projecting onto M1 "is very similar". Both projections are computed exactly: M2 by a 1-D root
  of ||max(0, mu0 + t (z - mu0)) - mu0||_2 = Lambda in t (bisection to machine precision), M1 by the
  piecewise-linear path of the soft-threshold level (exact interpolation between breakpoints).
- Start: mu_init = mu0 + Lambda u with u = 1 / ||1||_norm (the uniform direction, on the boundary of M). With
  mu0 = 0 this is the uniform combination scaled to the boundary; the ``fixed`` solver keeps it (the uniform
  baseline).
- Step: ``line_search=True`` (default) backtracks from a trial step (Barzilai-Borwein after the first iteration,
  Lambda / ||grad F|| at the first) until Armijo's condition F(mu') <= F(mu) + 1e-4 grad F^T (mu' - mu) holds
  along the projection arc; ``line_search=False`` takes the fixed step ``eta`` as in Algorithm 1.
- Stop: ||mu' - mu|| < tol * Lambda (the paper's epsilon, relative to the radius so that one tol fits every
  scale of mu), or max_iter, or when no projected step can change F by more than 1e-13 |F| (its rounding
  error: the line search cannot tell a decrease from noise there, which is convergence too). Stationarity is recorded independently: ||mu - P_M(mu - t grad F)|| / Lambda with
  t = Lambda / ||grad F||, which is 0 exactly at a KKT point of min_M F.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from tkbench.methods.nkrr.combination import combination_kernel, feature_map, feature_map_size

NORMS = (1, 2)
ARMIJO = 1e-4
ROUNDING = 1e-13  # relative change of F below which a step is rounding noise


# ----------------------------------------------------------------------------------------------------------- sets
def project_l2(z: np.ndarray, center: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection of z onto {mu >= 0, ||mu - center||_2 <= radius} (center >= 0).

    KKT: mu = max(0, (z + s center) / (1 + s)) for the multiplier s >= 0 of the ball, i.e. mu = max(0, center +
    t (z - center)) with t = 1 / (1 + s) in (0, 1], the largest t whose point lies in the ball.
    """
    z, c = np.asarray(z, float), np.asarray(center, float)
    first = np.maximum(z, 0.0)
    if np.linalg.norm(first - c) <= radius:
        return first

    def dist(t):
        return np.linalg.norm(np.maximum(0.0, c + t * (z - c)) - c)

    lo, hi = 0.0, 1.0  # dist(lo) = 0 <= radius < dist(hi); dist is non-decreasing in t
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if dist(mid) <= radius:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-17:
            break
    return np.maximum(0.0, c + lo * (z - c))


def project_l1(z: np.ndarray, center: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection of z onto {mu >= 0, ||mu - center||_1 <= radius} (center >= 0).

    KKT: mu = center + max(-center, soft(z - center, s)) with the soft-threshold level s >= 0 of the l1 ball; the
    distance g(s) = ||mu(s) - center||_1 is piecewise linear and non-increasing in s, so s is found exactly
    between two consecutive breakpoints.
    """
    z, c = np.asarray(z, float), np.asarray(center, float)
    d = z - c

    def mu(s):
        return c + np.maximum(-c, np.sign(d) * np.maximum(np.abs(d) - s, 0.0))

    def g(s):
        return np.abs(mu(s) - c).sum()

    if g(0.0) <= radius:
        return mu(0.0)
    neg = d < 0
    points = np.unique(np.concatenate([[0.0], np.abs(d), np.maximum(np.abs(d[neg]) - c[neg], 0.0)]))
    values = np.array([g(s) for s in points])  # non-increasing, ends at 0
    j = int(np.flatnonzero(values <= radius)[0])  # first breakpoint inside the ball (j >= 1)
    s0, s1, g0, g1 = points[j - 1], points[j], values[j - 1], values[j]
    s = s1 if g0 == g1 else s0 + (g0 - radius) * (s1 - s0) / (g0 - g1)
    return mu(s)


def project(z: np.ndarray, center: np.ndarray, radius: float, norm: int) -> np.ndarray:
    """The Euclidean projection onto M1 (norm 1) or M2 (norm 2), Eqs. (7)-(8)."""
    if norm == 2:
        return project_l2(z, center, radius)
    if norm == 1:
        return project_l1(z, center, radius)
    raise ValueError(f"norm must be 1 or 2, got {norm!r}")


def initial_point(center: np.ndarray, radius: float, norm: int) -> np.ndarray:
    """mu0 + Lambda * 1 / ||1||_norm: the uniform direction, on the boundary of M."""
    ones = np.ones(len(center))
    return np.asarray(center, float) + radius * ones / np.linalg.norm(ones, ord=norm)


# ------------------------------------------------------------------------------------------------------ objective
FEATURE_MAP_RATIO = 0.7  # "auto": the feature map when its D columns are at most this share of the rows
PCG_MIN_ROWS = 1000  # "auto" without a small feature map: CG from this many rows, one factorisation per step below


def auto_solve(m: int, rank_one: int | None, degree: int) -> str:
    """The ``ridge_solve`` "auto" takes for ``m`` rows, ``rank_one`` rank-1 base kernels (None: others) and
    ``degree`` (thresholds in :class:`NKRRObjective`'s docstring)."""
    if rank_one is not None and feature_map_size(rank_one, degree) <= FEATURE_MAP_RATIO * m:
        return "feature_map"
    return "pcg" if m >= PCG_MIN_ROWS else "cholesky"


class NKRRObjective:
    """F(mu) = y^T (K_mu + lambda I)^-1 y, its gradient (Prop. 1) and Hessian, for base kernels on fixed rows.

    ``solve``: how each evaluation gets alpha = (K_mu + lambda I)^-1 y. "feature_map": when every base kernel is
    rank-1 (K_k = z_k z_k^T: base linear_feature, the paper's setting), K_mu = Phi Phi^T with the explicit map Phi
    of D = C(r + d - 1, d) columns (:func:`tkbench.methods.nkrr.combination.feature_map`), and Woodbury's identity
    gives alpha = (y - Phi (lambda I + Phi^T Phi)^-1 Phi^T y) / lambda in O(m D^2) time and O(m D) memory: no
    m x m matrix at all; the gradient is -d ||Psi^T (alpha o z_k)||^2 with Psi the degree-(d-1) map. "auto" (the
    default) takes it when D <= 0.7 m (:data:`FEATURE_MAP_RATIO`), else "pcg" from m = 1000 rows
    (:data:`PCG_MIN_ROWS`) and "cholesky" below (the thresholds measured, docs/methods/nkrr.md: one thread, whole
    fits, best of 3; the feature map 1.8-2.2x faster than a factorisation at D / m = 0.52 (m = 960), about even at
    0.82 and 1.6x slower at 0.95 (m = 2000); CG 10-40 % slower than factorising at m = 400-700, even at 1000 and
    1.2-1.4x faster at 1200-3000). "cholesky": one factorisation per
    evaluation, in place (one m x m matrix). "pcg": the first evaluation is factorised; later ones run
    conjugate gradients preconditioned by the last factor, warm-started from the last alpha (projected-gradient
    steps move mu little, so the old factor is a near-exact preconditioner), and fall back to a new factorisation
    when CG has not converged within ``max_cg`` iterations (the new factor then preconditions the next ones). It
    holds two m x m matrices (the factor and K_mu). Its F is certified: with r = y - A alpha (A = K_mu + lambda I,
    recomputed at the end), F = y^T alpha + alpha^T r + r^T A^-1 r exactly, and the value returned omits the last
    term, 0 <= r^T A^-1 r <= ||r||^2 / lambda, which CG drives below ``1e-14 |F|`` (under the 1e-13 |F| the line
    search treats as rounding), and ||r|| below 3e-10 ||y||, so that alpha (error <= ||r|| / lambda) gives the
    gradient to about the same relative accuracy. ``max_cg`` = 20: a CG iteration (a product with K_mu and two triangular solves)
    cost about 1/25 of a factorisation at m = 4000 (one thread). With "pcg" the kernel sum S = sum_k mu_k K_k
    formed for F is kept for the gradient at the same mu (three m x m matrices at the peak, instead of forming S
    twice). tests/methods/nkrr compares both solves and the fits they give.
    """

    SOLVES = ("auto", "feature_map", "pcg", "cholesky")

    def __init__(self, kernels, y: np.ndarray, lam: float, degree: int, solve: str = "auto", max_cg: int = 20):
        if not lam > 0:
            raise ValueError(f"lambda must be > 0 (Propositions 2-4 assume it), got {lam!r}")
        if int(degree) != degree or not 1 <= degree <= 4:
            raise ValueError(f"degree must be an integer in 1..4, got {degree!r}")
        if solve not in self.SOLVES:
            raise ValueError(f"solve must be one of {self.SOLVES}, got {solve!r}")
        self.kernels, self.y, self.lam, self.degree = kernels, np.asarray(y, float), float(lam), int(degree)
        self.max_cg = int(max_cg)
        Z = getattr(kernels, "factor", lambda: None)()
        if solve == "feature_map" and Z is None:
            raise ValueError("ridge_solve='feature_map' needs rank-1 base kernels (base='linear_feature')")
        self.solve = auto_solve(len(self.y), None if Z is None else Z.shape[1], self.degree) if solve == "auto" \
            else solve
        self._Z = Z if self.solve == "feature_map" else None
        self.n_evals = 0  # objective evaluations
        self.n_factorisations = 0  # Cholesky factorisations among them
        self.n_cg = 0  # conjugate-gradient iterations (matrix-vector products with K_mu) in all
        self.certified_error = 0.0  # the largest bound ||r||^2 / lambda on |F - returned F| of a CG evaluation
        self._factor = None
        self._S: tuple[np.ndarray, np.ndarray] | None = None
        self._alpha: np.ndarray | None = None

    def _factorise(self, K: np.ndarray):
        try:
            factor = cho_factor(K, lower=True, overwrite_a=True, check_finite=False)
        except LinAlgError as exc:  # only through rounding: K_mu is PSD and lambda > 0
            raise LinAlgError(f"K_mu + lambda I is not numerically positive definite (lambda = {self.lam:g}); "
                              "use a larger lambda") from exc
        self.n_factorisations += 1
        return factor

    def _cg(self, A: np.ndarray) -> tuple[float, np.ndarray] | None:
        """(F, alpha) by CG on A alpha = y preconditioned by the last factor, or None after max_cg iterations."""
        y, lam = self.y, self.lam
        yy = float(y @ y)
        x = self._alpha.copy()
        r = y - A @ x
        z = cho_solve(self._factor, r, check_finite=False)
        p, rz = z.copy(), float(r @ z)
        for done in range(self.max_cg + 1):
            F = float(y @ x + x @ r)
            bound = float(r @ r) / lam
            if bound <= 1e-15 * abs(F) and r @ r <= 1e-20 * yy:
                r = y - A @ x  # the true residual (not the recursion's): what the bound certifies
                F, bound = float(y @ x + x @ r), float(r @ r) / lam
                if bound <= 1e-14 * abs(F) and r @ r <= 1e-19 * yy:
                    self.certified_error = max(self.certified_error, bound)
                    return F, x
            if rz <= 0.0 or done == self.max_cg:
                return None
            Ap = A @ p
            self.n_cg += 1
            step = rz / float(p @ Ap)
            x += step * p
            r -= step * Ap
            z = cho_solve(self._factor, r, check_finite=False)
            rz, rz_old = float(r @ z), rz
            p = z + (rz / rz_old) * p
        return None

    def _feature_map_value(self, mu: np.ndarray) -> tuple[float, np.ndarray]:
        """(F, alpha) by Woodbury's identity on K_mu = Phi Phi^T, certified as CG's is: r = y - A alpha in O(m D)."""
        y, lam = self.y, self.lam
        Phi = feature_map(self._Z, mu, self.degree)
        G = Phi.T @ Phi
        G.flat[:: len(G) + 1] += lam
        factor = self._factorise(G)
        alpha = (y - Phi @ cho_solve(factor, Phi.T @ y, check_finite=False)) / lam
        r = y - lam * alpha - Phi @ (Phi.T @ alpha)
        F = float(y @ alpha + alpha @ r)
        self.certified_error = max(self.certified_error, float(r @ r) / lam)
        return F, alpha

    def value(self, mu: np.ndarray) -> tuple[float, np.ndarray]:
        """(F(mu), alpha): by one in-place Cholesky factorisation of K_mu + lambda I, by preconditioned CG
        (``solve="pcg"``) or by the explicit feature map (``solve="feature_map"``; see the class docstring)."""
        if self._Z is not None:
            self.n_evals += 1
            return self._feature_map_value(np.asarray(mu, float))
        mu = np.asarray(mu, float)
        if self.solve == "pcg" and self.degree > 1:  # keep S for the gradient at this mu (one m x m more)
            S = self.kernels.combined(mu)
            self._S = (mu.copy(), S)
            K = S ** self.degree
        else:
            K = combination_kernel(self.kernels, mu, self.degree)
        K.flat[:: len(K) + 1] += self.lam
        self.n_evals += 1
        if self.solve == "pcg" and self._factor is not None:
            found = self._cg(K)
            if found is not None:
                self._alpha = found[1]
                return found
        factor = self._factorise(K)
        alpha = cho_solve(factor, self.y, check_finite=False)
        if self.solve == "pcg":
            self._factor, self._alpha = factor, alpha
        return float(self.y @ alpha), alpha

    def _power(self, mu: np.ndarray, power: int) -> np.ndarray | None:
        """S^(o power) (None for power 0: all ones)."""
        if power == 0:
            return None
        mu = np.asarray(mu, float)
        kept = self._S
        if kept is not None and np.array_equal(kept[0], mu):  # formed by value() at this mu
            S = kept[1] if power == 1 else kept[1] ** power
            self._S = None
            return S
        S = self.kernels.combined(mu)
        if power != 1:
            S **= power
        return S

    def gradient(self, mu: np.ndarray, alpha: np.ndarray) -> np.ndarray:
        """dF/dmu_k = -d alpha^T (S^(o(d-1)) o K_k) alpha (Proposition 1 for degree d); every entry <= 0."""
        if self._Z is not None:  # S^(o(d-1)) = Psi Psi^T: -d ||Psi^T (alpha o z_k)||^2, no m x m matrix
            Psi = feature_map(self._Z, np.asarray(mu, float), self.degree - 1)
            M = Psi.T @ (alpha[:, None] * self._Z)
            return -self.degree * np.einsum("ck,ck->k", M, M)
        W = self._power(mu, self.degree - 1)
        return -self.degree * self.kernels.weighted_forms(alpha, W)

    def hessian(self, mu: np.ndarray) -> np.ndarray:
        """The p x p Hessian of F at mu (holds every base kernel matrix: small p only)."""
        d = self.degree
        mu = np.asarray(mu, float)
        _, alpha = self.value(mu)
        K = combination_kernel(self.kernels, mu, d)
        K.flat[:: len(K) + 1] += self.lam
        S = self.kernels.combined(mu)
        mats = [self.kernels.matrix(k) for k in range(self.kernels.p)]
        first = S ** (d - 1) if d > 1 else np.ones_like(S)
        B = np.column_stack([d * (first * Kk) @ alpha for Kk in mats])
        H = 2.0 * B.T @ np.linalg.solve(K, B)
        if d >= 2:
            second = S ** (d - 2) if d > 2 else np.ones_like(S)
            A = np.outer(alpha, alpha) * second
            C = np.array([[float(np.sum(A * Kk * Kj)) for Kj in mats] for Kk in mats])
            H -= d * (d - 1) * C
        return 0.5 * (H + H.T)


# ------------------------------------------------------------------------------------------------------ algorithm
@dataclass
class NKRRResult:
    mu: np.ndarray
    alpha: np.ndarray
    value: float
    n_iter: int
    converged: bool
    stationarity: float
    history: list[dict] = field(default_factory=list)
    n_evals: int = 0  # objective evaluations (factorisations: NKRRObjective.n_factorisations)
    message: str = ""


def stationarity(mu: np.ndarray, grad: np.ndarray, center: np.ndarray, radius: float, norm: int) -> float:
    """||mu - P_M(mu - t grad)|| / Lambda with t = Lambda / ||grad||: 0 exactly at a KKT point of min_M F."""
    gnorm = float(np.linalg.norm(grad))
    if gnorm == 0.0 or radius == 0.0:
        return 0.0
    moved = project(mu - (radius / gnorm) * grad, center, radius, norm)
    return float(np.linalg.norm(mu - moved) / radius)


def projected_gradient(objective: NKRRObjective, *, norm: int = 2, mu0: np.ndarray, radius: float,
                       eta: float | None = None, line_search: bool = True, tol: float = 1e-4, max_iter: int = 100,
                       init: np.ndarray | None = None) -> NKRRResult:
    """Algorithm 1 of paper 001 on M1 / M2 (see the module docstring for the step and stopping rules)."""
    if norm not in NORMS:
        raise ValueError(f"norm must be 1 or 2, got {norm!r}")
    if not radius >= 0:
        raise ValueError(f"Lambda must be >= 0, got {radius!r}")
    if not line_search and not (eta is not None and eta > 0):
        raise ValueError("a fixed step (line_search=False) needs eta > 0")
    center = np.asarray(mu0, float)
    if center.min() < 0:
        raise ValueError("mu0 must be >= 0")
    t0 = time.perf_counter()
    mu = project(init, center, radius, norm) if init is not None else initial_point(center, radius, norm)
    value, alpha = objective.value(mu)
    grad = objective.gradient(mu, alpha)
    history = [{"iteration": 0, "objective": value, "grad_norm": float(np.linalg.norm(grad)), "step": 0.0,
                "change": 0.0, "stationarity": stationarity(mu, grad, center, radius, norm),
                "seconds": time.perf_counter() - t0}]
    converged, message, step = False, "max_iter reached", None
    for it in range(1, max_iter + 1):
        if radius == 0.0:
            converged, message = True, "M is the single point mu0"
            break
        gnorm = float(np.linalg.norm(grad))
        if gnorm == 0.0:  # Proposition 2: a stationary point maximises F; nothing to descend
            converged, message = True, "zero gradient"
            break
        trial = (eta if eta is not None else radius / gnorm) if step is None or not line_search else step
        accepted, floor = None, False
        for _ in range(60):
            cand = project(mu - trial * grad, center, radius, norm)
            move = cand - mu
            predicted = -float(grad @ move)  # first-order decrease of F along the step (>= 0)
            if not np.any(move) or predicted <= ROUNDING * abs(value):
                floor = True  # no step changes F by more than its rounding error
                break
            new_value, new_alpha = objective.value(cand)
            if not line_search or new_value <= value - ARMIJO * predicted:
                accepted = (cand, new_value, new_alpha, trial)
                break
            trial *= 0.5
        if accepted is None:
            converged = floor or stationarity(mu, grad, center, radius, norm) <= tol
            message = ("F at its rounding floor" if floor else "no descent step (line search exhausted)")
            break
        cand, new_value, new_alpha, used = accepted
        new_grad = objective.gradient(cand, new_alpha)
        s, r = cand - mu, new_grad - grad
        change = float(np.linalg.norm(s))
        curvature = float(s @ r)
        step = float(s @ s) / curvature if curvature > 0 else 2.0 * used  # Barzilai-Borwein, safeguarded
        mu, value, alpha, grad = cand, new_value, new_alpha, new_grad
        history.append({"iteration": it, "objective": value, "grad_norm": float(np.linalg.norm(grad)),
                        "step": used, "change": change,
                        "stationarity": stationarity(mu, grad, center, radius, norm),
                        "seconds": time.perf_counter() - t0})
        if change < tol * radius:
            converged, message = True, "||mu' - mu|| < tol * Lambda"
            break
    return NKRRResult(mu, alpha, value, history[-1]["iteration"], converged,
                      stationarity(mu, grad, center, radius, norm), history, objective.n_evals, message)


def fixed_combination(objective: NKRRObjective, *, norm: int = 2, mu0: np.ndarray, radius: float,
                      init: np.ndarray | None = None) -> NKRRResult:
    """No learning: mu = mu_init (the uniform direction on the boundary of M), the uniform-combination baseline."""
    center = np.asarray(mu0, float)
    mu = project(init, center, radius, norm) if init is not None else initial_point(center, radius, norm)
    value, alpha = objective.value(mu)
    history = [{"iteration": 0, "objective": value}]
    return NKRRResult(mu, alpha, value, 0, True, float("nan"), history, objective.n_evals, "fixed mu")
