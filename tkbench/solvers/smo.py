"""A warm-startable SMO solver for the C-SVC and epsilon-SVR duals on a kernel (1 - g) K + g K_S (issue 21).

Frank-Wolfe (paper 003, Algorithm 2) and its line search, and SimpleMKL's, solve a sequence of SVM duals whose
kernels differ little; LIBSVM (through scikit-learn) starts each from zero and needs the kernel as one matrix.
This solver takes the previous solution as its start, reads the kernel as ``(1 - g) K + g K_S`` from the two
stored matrices (either may be float32, to halve memory; arithmetic is in float64) without forming it, and
follows LIBSVM's algorithm (Chang & Lin, "LIBSVM: a library for support vector machines", 2011, section 4;
Fan, Chen & Lin, JMLR 2005) so that its answers and stopping rule are LIBSVM's:

- the common form  min_a 1/2 a^T Q a + p^T a,  y^T a = Delta,  0 <= a_t <= C,  Q_st = y_s y_t K(s, t):
  C-SVC: a in R^m, y the +-1 labels, p = -1;  epsilon-SVR: a = (a+, a-) in R^2m, y = (1, -1), p = (eps - z,
  eps + z), K(s, t) of the indices modulo m; the SVR coefficients are b = a+ - a-;
- working set by second-order information (WSS 3 of Fan et al.): i = argmax_{t in I_up} -y_t G_t, then j in I_low
  minimising -(b_it^2) / a_it with b_it = -y_i G_i + y_t G_t > 0 and a_it = K_ii + K_tt - 2 K_it (tau = 1e-12 when
  not positive);
- the analytic two-variable update clipped to the box, and G += Q_i da_i + Q_j da_j;
- stopping rule: m(a) - M(a) = max_{I_up} -y G - min_{I_low} -y G < tol (LIBSVM's eps, 1e-3 by default);
- the intercept as LIBSVM's rho: the mean of y_t G_t over free variables, else the midpoint of the bounds;
- the iteration cap of LIBSVM, max(10^7, 100 m): a capped solution is flagged, as in :mod:`tkbench.solvers.svm`.

- shrinking (LIBSVM's, on by default): every min(l, 1000) iterations the bounded variables that cannot enter a
  violating pair leave the active set, and selection, columns and gradient updates run over the active set only;
  once the violation falls below 10 tol the whole problem is taken up again (the shrunk variables' gradient
  rebuilt), and the stopping rule is always confirmed on every variable.

Not taken from LIBSVM: the kernel cache (the kernel is stored, so a column costs one or two row reads). A warm start needs a feasible start (the previous solution for the same C, epsilon and labels is one:
the kernel does not enter the constraints); its gradient costs one pass per nonzero coefficient.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from tkbench.solvers.svm import DualSolution, libsvm_iteration_cap

TAU = 1e-12


@njit(cache=True, inline="always")
def _k(K0, KS, g, s, t):
    if g == 0.0:
        return np.float64(K0[s, t])
    if g == 1.0:
        return np.float64(KS[s, t])
    return (1.0 - g) * np.float64(K0[s, t]) + g * np.float64(KS[s, t])


@njit(cache=True)
def _column(K0, KS, g, y, i, m, out):
    """out[t] = Q_it = y_i y_t K(i mod m, t mod m) for every variable t: the kernel row once (blended in one
    vectorisable pass), then signed (for the SVR's 2m variables, twice: y = (1, -1) there)."""
    n = y.shape[0]
    ii = i % m
    a = K0[ii]
    b = KS[ii]
    yi = y[i]
    if g == 0.0:
        for t in range(m):
            out[t] = yi * y[t] * np.float64(a[t])
    elif g == 1.0:
        for t in range(m):
            out[t] = yi * y[t] * np.float64(b[t])
    else:
        h = 1.0 - g
        for t in range(m):
            out[t] = yi * y[t] * (h * np.float64(a[t]) + g * np.float64(b[t]))
    for t in range(m, n):  # the SVR's second half: Q(i, t) = y_i y_t K(ii, t - m) with y_t = -y_(t - m)
        out[t] = -out[t - m]


@njit(cache=True)
def _gradient(K0, KS, g, y, p, alpha, m, col):
    """G = Q alpha + p, one column per nonzero alpha (the cost of a warm start)."""
    n = y.shape[0]
    G = p.copy()
    for s in range(n):
        if alpha[s] != 0.0:
            _column(K0, KS, g, y, s, m, col)
            a = alpha[s]
            for t in range(n):
                G[t] += a * col[t]
    return G


@njit(cache=True)
def _column_active(K0, KS, g, y, i, m, act, n_act, out):
    """out[t] = Q_it for the active variables t = act[:n_act] only (a gather from the kernel row; the branch on g
    is taken once, and the SVR's second half maps to its kernel column by a subtraction, not a modulo)."""
    ii = i % m
    a = K0[ii]
    b = KS[ii]
    yi = y[i]
    h = 1.0 - g
    if g == 0.0:
        for k in range(n_act):
            t = act[k]
            out[t] = yi * y[t] * np.float64(a[t if t < m else t - m])
    elif g == 1.0:
        for k in range(n_act):
            t = act[k]
            out[t] = yi * y[t] * np.float64(b[t if t < m else t - m])
    else:
        for k in range(n_act):
            t = act[k]
            tt = t if t < m else t - m
            out[t] = yi * y[t] * (h * np.float64(a[tt]) + g * np.float64(b[tt]))


@njit(cache=True)
def _reconstruct(K0, KS, g, y, p, alpha, m, act, n_act, G, col):
    """The gradient of the inactive (shrunk) variables from scratch: G_t = p_t + sum_s alpha_s Q_st (LIBSVM keeps
    G_bar instead; with the kernel stored, one row pass per nonzero alpha is as cheap)."""
    n = y.shape[0]
    inactive = np.ones(n, np.bool_)
    for k in range(n_act):
        inactive[act[k]] = False
    for t in range(n):
        if inactive[t]:
            G[t] = p[t]
    for s in range(n):
        if alpha[s] != 0.0:
            _column(K0, KS, g, y, s, m, col)
            a = alpha[s]
            for t in range(n):
                if inactive[t]:
                    G[t] += a * col[t]


@njit(cache=True)
def _violation(y, G, alpha, C, act, n_act):
    """(Gmax1, Gmax2) over the active set: max over I_up of -y G and max over I_low of y G (LIBSVM's names)."""
    gmax1 = -np.inf
    gmax2 = -np.inf
    for k in range(n_act):
        t = act[k]
        if y[t] > 0:
            if alpha[t] < C:
                gmax1 = max(gmax1, -G[t])
            if alpha[t] > 0.0:
                gmax2 = max(gmax2, G[t])
        else:
            if alpha[t] < C:
                gmax2 = max(gmax2, -G[t])
            if alpha[t] > 0.0:
                gmax1 = max(gmax1, G[t])
    return gmax1, gmax2


@njit(cache=True)
def _shrink(y, G, alpha, C, act, n_act, gmax1, gmax2):
    """LIBSVM's be_shrunk test: drop from the active set (compacted in place, order kept) the bounded variables
    that cannot enter a violating pair; returns the new active count."""
    kept = 0
    for k in range(n_act):
        t = act[k]
        shrunk = False
        if alpha[t] >= C:
            shrunk = (-G[t] > gmax1) if y[t] > 0 else (-G[t] > gmax2)
        elif alpha[t] <= 0.0:
            shrunk = (G[t] > gmax2) if y[t] > 0 else (G[t] > gmax1)
        if not shrunk:
            act[kept] = t
            kept += 1
    return kept


@njit(cache=True)
def _select(K0, KS, g, y, alpha, C, G, QD, m, act, n_act, col_i):
    """LIBSVM's WSS 3 over the active set: i the maximal violating variable of I_up, j the second-order choice in
    I_low (col_i is filled with Q_i on the active set). Returns (i, j, m(a) - M(a) on the active set)."""
    n = y.shape[0]
    Gmax = -np.inf
    i = -1
    for k in range(n_act):
        t = act[k]
        if y[t] > 0:
            if alpha[t] < C and -G[t] >= Gmax:
                Gmax = -G[t]
                i = t
        else:
            if alpha[t] > 0.0 and G[t] >= Gmax:
                Gmax = G[t]
                i = t
    if i < 0:
        return -1, -1, -np.inf
    if n_act == n:
        _column(K0, KS, g, y, i, m, col_i)
    else:
        _column_active(K0, KS, g, y, i, m, act, n_act, col_i)
    j = -1
    Gmax2 = -np.inf
    best = np.inf
    for k in range(n_act):
        t = act[k]
        if y[t] > 0:
            if alpha[t] > 0.0:
                diff = Gmax + G[t]
                if G[t] >= Gmax2:
                    Gmax2 = G[t]
                if diff > 0.0:
                    quad = QD[i] + QD[t] - 2.0 * y[i] * col_i[t]
                    obj = -(diff * diff) / (quad if quad > 0.0 else TAU)
                    if obj <= best:
                        best = obj
                        j = t
        else:
            if alpha[t] < C:
                diff = Gmax - G[t]
                if -G[t] >= Gmax2:
                    Gmax2 = -G[t]
                if diff > 0.0:
                    quad = QD[i] + QD[t] + 2.0 * y[i] * col_i[t]
                    obj = -(diff * diff) / (quad if quad > 0.0 else TAU)
                    if obj <= best:
                        best = obj
                        j = t
    return i, j, Gmax + Gmax2


@njit(cache=True)
def _solve(K0, KS, g, y, p, C, alpha, tol, max_iter, m, shrinking):
    """LIBSVM's SMO (module docstring) from the feasible ``alpha`` (changed in place). Returns (G, iterations, the
    smallest active set size reached)."""
    n = y.shape[0]
    col_i = np.empty(n)
    col_j = np.empty(n)
    G = _gradient(K0, KS, g, y, p, alpha, m, col_i)
    QD = np.empty(n)
    for t in range(n):
        QD[t] = _k(K0, KS, g, t % m, t % m)
    act = np.arange(n)
    n_act = n
    fewest = n
    unshrunk = False
    counter = min(n, 1000)
    it = 0
    while it < max_iter:
        if shrinking:
            counter -= 1
            if counter == 0:
                counter = min(n, 1000)
                gmax1, gmax2 = _violation(y, G, alpha, C, act, n_act)
                if not unshrunk and gmax1 + gmax2 <= 10.0 * tol:  # near the end: the whole problem once more
                    unshrunk = True
                    if n_act < n:
                        _reconstruct(K0, KS, g, y, p, alpha, m, act, n_act, G, col_i)
                        for t in range(n):
                            act[t] = t
                        n_act = n
                n_act = _shrink(y, G, alpha, C, act, n_act, gmax1, gmax2)
                fewest = min(fewest, n_act)
        i, j, gap = _select(K0, KS, g, y, alpha, C, G, QD, m, act, n_act, col_i)
        if i < 0 or j < 0 or gap < tol:
            if n_act == n:
                break
            # optimal on the active set: LIBSVM reconstructs the gradient, takes up every variable, selects again
            _reconstruct(K0, KS, g, y, p, alpha, m, act, n_act, G, col_i)
            for t in range(n):
                act[t] = t
            n_act = n
            i, j, gap = _select(K0, KS, g, y, alpha, C, G, QD, m, act, n_act, col_i)
            if i < 0 or j < 0 or gap < tol:
                break
            counter = 1  # shrink again after this step
        it += 1
        if n_act == n:
            _column(K0, KS, g, y, j, m, col_j)
        else:
            _column_active(K0, KS, g, y, j, m, act, n_act, col_j)
        ai, aj = alpha[i], alpha[j]
        if y[i] != y[j]:
            quad = QD[i] + QD[j] + 2.0 * col_i[j]
            if quad <= 0.0:
                quad = TAU
            delta = (-G[i] - G[j]) / quad
            diff = ai - aj
            alpha[i] = ai + delta
            alpha[j] = aj + delta
            if diff > 0.0:
                if alpha[j] < 0.0:
                    alpha[j] = 0.0
                    alpha[i] = diff
            else:
                if alpha[i] < 0.0:
                    alpha[i] = 0.0
                    alpha[j] = -diff
            if diff > 0.0:  # C_i - C_j = 0
                if alpha[i] > C:
                    alpha[i] = C
                    alpha[j] = C - diff
            else:
                if alpha[j] > C:
                    alpha[j] = C
                    alpha[i] = C + diff
        else:
            quad = QD[i] + QD[j] - 2.0 * col_i[j]
            if quad <= 0.0:
                quad = TAU
            delta = (G[i] - G[j]) / quad
            total = ai + aj
            alpha[i] = ai - delta
            alpha[j] = aj + delta
            if total > C:
                if alpha[i] > C:
                    alpha[i] = C
                    alpha[j] = total - C
                if alpha[j] > C:
                    alpha[j] = C
                    alpha[i] = total - C
            else:
                if alpha[j] < 0.0:
                    alpha[j] = 0.0
                    alpha[i] = total
                if alpha[i] < 0.0:
                    alpha[i] = 0.0
                    alpha[j] = total
        dai, daj = alpha[i] - ai, alpha[j] - aj
        for k in range(n_act):
            t = act[k]
            G[t] += col_i[t] * dai + col_j[t] * daj
    if n_act < n:  # stopped at the iteration cap with variables shrunk: their gradient for rho and the objective
        _reconstruct(K0, KS, g, y, p, alpha, m, act, n_act, G, col_i)
    return G, it, fewest


@njit(cache=True)
def _rho(y, G, alpha, C):
    """LIBSVM's rho: mean of y_t G_t over the free variables, else the midpoint of its bounds."""
    ub, lb, total, free = np.inf, -np.inf, 0.0, 0
    for t in range(y.shape[0]):
        yG = y[t] * G[t]
        if alpha[t] >= C:
            if y[t] < 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        elif alpha[t] <= 0.0:
            if y[t] > 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        else:
            free += 1
            total += yG
    return total / free if free > 0 else (ub + lb) / 2.0


@dataclass
class WarmStart:
    """The variables of a previous solve (``alpha`` of the common form), to start the next one from, and the
    smallest active set that solve shrank to (a diagnostic)."""

    alpha: np.ndarray
    fewest_active: int = 0


@dataclass
class CommonForm:
    """The SVM dual in LIBSVM's common form (module docstring): min_a 1/2 a^T Q a + p^T a, s^T a = 0, 0 <= a <= C,
    with Q_st = s_s s_t K(s mod m, t mod m). C-SVC: a in R^m, s the +-1 labels, p = -1; epsilon-SVR: a = (a+, a-),
    s = (1, -1), p = (eps - z, eps + z). Used by the SMO solver and by the booster (:mod:`tkbench.solvers.apd`)."""

    task: str
    m: int
    signs: np.ndarray
    p: np.ndarray

    @classmethod
    def of(cls, y: np.ndarray, task: str, epsilon: float = 0.1) -> CommonForm:
        m = len(y)
        if task == "classification":
            labels = np.asarray(y, float)
            if not np.all(np.abs(labels) == 1.0):
                raise ValueError("classification labels must be -1 and +1")
            return cls(task, m, labels, -np.ones(m))
        if task == "regression":
            z = np.asarray(y, float)
            return cls(task, m, np.concatenate([np.ones(m), -np.ones(m)]), np.concatenate([epsilon - z, epsilon + z]))
        raise ValueError(f"task {task!r}: expected 'classification' or 'regression'")

    def w(self, a: np.ndarray) -> np.ndarray:
        """The signed coefficients on the kernel: a^T Q a = w^T K w."""
        return self.signs * a if self.task == "classification" else a[: self.m] - a[self.m:]

    def variables(self, w: np.ndarray) -> np.ndarray:
        """A feasible ``a`` with w(a) = w (for a solution that carries only w, as LIBSVM's)."""
        w = np.asarray(w, float)
        return np.abs(w) if self.task == "classification" else np.concatenate([np.maximum(w, 0), np.maximum(-w, 0)])

    def unfold(self, u: np.ndarray) -> np.ndarray:
        """Q a from u = K w(a)."""
        return self.signs * (u if self.task == "classification" else np.concatenate([u, u]))

    @property
    def q_scale(self) -> float:
        """lambda_max(Q) / lambda_max(K): 1, or 2 for the SVR's Q = [K -K; -K K]."""
        return 1.0 if self.task == "classification" else 2.0


def smo_dual(K: np.ndarray, y: np.ndarray, *, task: str, C: float, epsilon: float = 0.1, tol: float = 1e-3,
             KS: np.ndarray | None = None, g: float = 0.0, warm: WarmStart | None = None,
             max_iter: int | None = None, shrinking: bool = True) -> tuple[DualSolution, WarmStart]:
    """Solve the SVM dual on the kernel (1 - g) K + g KS (KS None: K) from ``warm`` (None: from zero).

    Same conventions as :func:`tkbench.solvers.svm.solve_dual` (``y`` +-1 for classification; decision function
    k(x, X) @ w + intercept). Returns the solution and the warm start for the next solve.
    """
    m = len(y)
    if KS is None:
        KS, g = K, 0.0
    if not 0.0 <= g <= 1.0:
        raise ValueError(f"g = {g}: expected a value in [0, 1]")
    form = CommonForm.of(y, task, epsilon)
    yv, p = form.signs, form.p
    n = len(yv)
    alpha = np.zeros(n) if warm is None else np.array(warm.alpha, float)
    if alpha.shape != (n,):
        raise ValueError(f"warm start of {alpha.shape} variables for a problem with {n}")
    cap = libsvm_iteration_cap(m) if max_iter is None else int(max_iter)
    G, n_iter, fewest = _solve(K, KS, float(g), yv, p, float(C), alpha, float(tol), cap, m, bool(shrinking))
    rho = _rho(yv, G, alpha, float(C))
    w = form.w(alpha)
    quad = float(alpha @ (G - p))  # a^T Q a = w^T K w, from the gradient (no kernel pass)
    if task == "classification":
        kappa = float(np.sum(alpha))
    else:
        kappa = float(np.asarray(y, float) @ w - epsilon * np.sum(np.abs(w)))
    warm_next = WarmStart(alpha, int(fewest))
    sol = DualSolution(w, -rho, kappa, quad, int(n_iter), capped=bool(n_iter >= cap), state=warm_next)
    return sol, warm_next
