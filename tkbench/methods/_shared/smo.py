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
- the iteration cap of LIBSVM, max(10^7, 100 m): a capped solution is flagged, as in :mod:`tkbench.methods._shared.svm`.

- shrinking (LIBSVM's, on by default): every min(l, 1000) iterations the bounded variables that cannot enter a
  violating pair leave the active set, and selection, columns and gradient updates run over the active set only;
  once the violation falls below 10 tol the whole problem is taken up again (the shrunk variables' gradient
  rebuilt), and the stopping rule is always confirmed on every variable.

Not taken from LIBSVM: the kernel cache (the kernel is stored, so a column costs one or two row reads). A warm start needs a feasible start (the previous solution for the same C, epsilon and labels is one:
the kernel does not enter the constraints); its gradient costs one pass per nonzero coefficient.

The compiled loops are in :mod:`tkbench.methods._shared._smo_numba`, imported at the first solve (importing numba costs
about 0.3 s, which a LIBSVM-only fit in a fresh process need not pay).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tkbench.methods._shared.svm import DualSolution, libsvm_iteration_cap


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
    s = (1, -1), p = (eps - z, eps + z). Used by the SMO solver and by the booster (:mod:`tkbench.methods.tk.apd`)."""

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

    Same conventions as :func:`tkbench.methods._shared.svm.solve_dual` (``y`` +-1 for classification; decision function
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
    from tkbench.methods._shared._smo_numba import _rho, _solve
    from tkbench.methods._shared.compiled import mark_loaded

    mark_loaded()  # numba's one-time price is paid here: the TK passes may run compiled from now on
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
