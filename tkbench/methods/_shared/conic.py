"""The cvxpy solver choice shared by every conic problem of tkbench (the TK SDP of paper 000, the density
experiment's kernel fits): Clarabel by default, SCS, or MOSEK when installed and licensed (optional: no licence is
ever required). Solvers are always passed to cvxpy explicitly: with MOSEK installed, cvxpy's own default would pick
it and fail without a licence."""
from __future__ import annotations

from tkbench.errors import MissingDependencyError, TkbenchError

SOLVERS = ("clarabel", "scs", "mosek")


def thread_budget() -> int:
    """The thread limit the run set for BLAS (threadpoolctl), used for solvers with their own thread pools."""
    from threadpoolctl import threadpool_info

    counts = [int(info["num_threads"]) for info in threadpool_info() if info.get("user_api") == "blas"]
    return max(1, min(counts)) if counts else 1


def check_solver(name: str) -> str:
    """The cvxpy solver name for ``name``; a clear error when it is unknown, not installed or not licensed."""
    import cvxpy as cp

    if name not in SOLVERS:
        raise TkbenchError(f"sdp_solver {name!r}: expected one of {', '.join(SOLVERS)}")
    solver = name.upper()
    if solver not in cp.installed_solvers():
        hint = "pip install -e '.[mosek]' and a MOSEK licence" if name == "mosek" else f"pip install {name}"
        raise MissingDependencyError(f"sdp_solver {name!r} is not installed ({hint}); clarabel is the default")
    if name == "mosek":
        x = cp.Variable()
        try:
            cp.Problem(cp.Minimize(x), [x >= 1]).solve(solver=cp.MOSEK)
        except cp.error.SolverError as exc:
            raise MissingDependencyError(
                "sdp_solver 'mosek' was asked for, but MOSEK cannot run here: no valid licence was found "
                f"({str(exc).splitlines()[0][:160]}). Use sdp_solver: clarabel (default) or scs; MOSEK is optional "
                "and only makes the SDP faster."
            ) from None
    return solver
