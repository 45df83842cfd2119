"""TK learning as one semidefinite program (paper 000, section 5, Opt. (24)), written with cvxpy.

For a kernel linear in P, K(P) = sum_{i<=j} P_ij H_ij, the SVM dual OPT_A(P) (a QP in alpha) is replaced by its
Lagrange dual, whose quadratic term becomes a linear matrix inequality by a Schur complement.

Classification (C-SVC dual; this is Opt. (24) of paper 000, there with the dual scaled by 2 and the bound
trace(P) <= 1, active at the optimum):

    min_{P, lam >= 0, mu >= 0, eta, t}  C 1^T lam + t / 2
    s.t.  [[diag(y) K(P) diag(y), g], [g^T, t]] PSD,   g = 1 - lam + mu - eta y,   P PSD,   trace(P) = T.

Regression (epsilon-SVR dual, paper 003 Eq. (9) with kappa_r): writing -eps |b|_1 = min_{|s| <= eps} -s^T b and
exchanging min and max (the max is concave, s ranges over a box) gives

    min  C 1^T (lam + mu) + t / 2   s.t.  [[K(P), g], [g^T, t]] PSD,  g = y - lam + mu - eta 1 - s,  |s| <= eps,

an LMI of size m + 1 too.
The optimal value is min_P OPT_A(P), the same saddle value that Frank-Wolfe approaches; the predictor is the
SVM / SVR refitted by LIBSVM on K(P*).

Trace normalisation: K(c P) = c K(P), so a problem with trace T and penalty C has the optimal P of the problem
with trace 1 and penalty T * C, and value OPT_T(C) = OPT_1(T C) / T.

Solvers: ``clarabel`` (default), ``scs`` or ``mosek``, always passed explicitly to cvxpy (with MOSEK installed,
cvxpy's own default would pick it and fail without a licence). Interior-point memory grows like (N(N+1)/2)^2 for
the LMI of size N = m + 1; :func:`estimate_memory_bytes` predicts it from a fit to
measurements on this machine (Clarabel, m = 150, n = 2, d = 1: 6.8 GB) and :func:`solve_tk_sdp` refuses problems
that would not fit, since running out of memory aborts the process uncatchably.

Clarabel factorises with faer, which runs its own thread pool (not BLAS): it is capped at the run's thread budget
(threadpoolctl's BLAS limit, set from the config's ``blas_threads``) so that timed SDP fits use the cores the
config says. When Clarabel stops with a numerical error (seen at m = 25 on Cancer: its first step fails), the solve
is retried once with a larger static regularisation (1e-7 instead of 1e-8); the result records the retry and
its time counts in the fit.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tkbench.errors import TkbenchError
from tkbench.methods._shared.conic import check_solver, thread_budget

_BYTES_PER_SCHUR_ENTRY = 52.0  # measured: 6.8e9 bytes / (151 * 152 / 2) ** 2 entries (Clarabel, m = 150)


class SDPTooLarge(TkbenchError):
    """The SDP would need more memory than the machine has."""


@dataclass
class SDPResult:
    P: np.ndarray
    value: float  # min_P OPT_A(P), in the FW convention (SVM dual with the 1/2 factor)
    status: str
    solver: str
    seconds: float
    lmi_size: int
    retried: bool = False  # Clarabel's numerical error, solved on the retry with more regularisation


CLARABEL_RETRY = {"static_regularization_constant": 1e-7}


def lmi_size(m: int, task: str) -> int:
    return m + 1


def estimate_memory_bytes(m: int, task: str) -> float:
    """Predicted peak memory of an interior-point solve: the dense Schur system of the LMI's N(N+1)/2 entries."""
    n = lmi_size(m, task)
    return _BYTES_PER_SCHUR_ENTRY * (n * (n + 1) / 2) ** 2


def solve_tk_sdp(basis: list[tuple[int, int, np.ndarray]], size: int, y: np.ndarray, *, task: str, C: float,
                 epsilon: float = 0.1, trace: float | None = None, solver: str = "clarabel",
                 memory_limit: float | None = None) -> SDPResult:
    """Solve min_{P PSD, trace P = T} OPT_A(P) as one SDP.

    ``basis`` lists (i, j, H_ij) with K(P) = sum P_ij H_ij over i <= j (H_ij is the kernel matrix of the symmetric
    unit matrix E_ij + E_ji, or E_ii on the diagonal).
    """
    import time

    import cvxpy as cp
    import psutil

    m = len(y)
    need = estimate_memory_bytes(m, task)
    limit = memory_limit if memory_limit is not None else 0.8 * psutil.virtual_memory().available
    if need > limit:
        raise SDPTooLarge(
            f"the TK SDP with m={m} training points ({task}) needs about {need / 2**30:.1f} GiB for the "
            f"interior-point solver, more than the {limit / 2**30:.1f} GiB available; use solver 'fw' "
            "(Frank-Wolfe, same problem) or a subsample"
        )
    cvx_solver = check_solver(solver)
    T = float(size if trace is None else trace)
    P = cp.Variable((size, size), symmetric=True)
    K = sum(P[i, j] * H for i, j, H in basis)
    lam, mu = cp.Variable(m, nonneg=True), cp.Variable(m, nonneg=True)
    eta, t = cp.Variable(), cp.Variable()
    constraints = [P >> 0, cp.trace(P) == T]
    if task == "classification":
        yf = np.asarray(y, dtype=float)
        H = cp.multiply(np.outer(yf, yf), K)  # diag(y) K diag(y)
        g = np.ones(m) - lam + mu - eta * yf
    else:  # -eps |b|_1 = min_{|s| <= eps} -s^T b moves into the Schur vector
        s = cp.Variable(m)
        H = K
        g = np.asarray(y, dtype=float) - lam + mu - eta * np.ones(m) - s
        constraints.append(cp.abs(s) <= epsilon)
    col = cp.reshape(g, (m, 1), order="F")
    M = cp.bmat([[H, col], [col.T, cp.reshape(t, (1, 1), order="F")]])
    constraints.append((M + M.T) / 2 >> 0)
    objective = C * cp.sum(lam) + t / 2 if task == "classification" else C * cp.sum(lam + mu) + t / 2
    problem = cp.Problem(cp.Minimize(objective), constraints)
    options = {"max_threads": thread_budget()} if cvx_solver == "CLARABEL" else {}
    retried = False
    t0 = time.perf_counter()
    try:
        problem.solve(solver=cvx_solver, **options)
    except cp.error.SolverError as exc:
        if cvx_solver != "CLARABEL":
            raise TkbenchError(f"the TK SDP (m={m}) was not solved by {solver}: {exc}") from None
        retried = True
        try:
            problem.solve(solver=cvx_solver, **options, **CLARABEL_RETRY)
        except cp.error.SolverError:
            raise TkbenchError(
                f"the TK SDP (m={m}) was not solved: Clarabel stopped with a numerical error, also when retried "
                f"with {CLARABEL_RETRY}; try sdp_solver: scs, or solver: fw (same problem)") from None
    seconds = time.perf_counter() - t0
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise TkbenchError(f"the TK SDP was not solved: {problem.status} ({solver})")
    Pv = (P.value + P.value.T) / 2
    return SDPResult(Pv, float(problem.value), problem.status, solver, seconds, m + 1, retried)
