"""One solver report for every family (issue 49), in the spirit of cvxpy's ``SolverStats`` and LIBSVM's summary.

Every estimator's ``diagnostics()`` returns :meth:`SolverReport.as_diagnostics`: the same standard fields for every
family, whatever its solver calls them internally,

- ``solver``: what ran, in words (e.g. "Frank-Wolfe (paper 003, Algorithm 2)");
- ``iterations``: the solver's own iterations (None where it has none, e.g. a forest or an interior-point solve
  whose count is not reported);
- ``converged``: whether it met its stop rule (None where the rule is a fixed count of steps: nothing to meet);
- ``stop_rule``: the rule in words, with its tolerance;
- ``certificate``: what certifies the answer, by name (relative duality gap, stationarity, ...), empty if none;
- ``seconds``: the solver's time where it measures it;

followed by the family's extras (model sizes, solve counts, chosen architecture, ...), flat, so that tables that
read them by name (evaluation sizes, a scaling experiment's size axis) keep working. The per-iteration history is
the row's ``trace``, not repeated here.

:func:`read_report` reads these fields from a row's diagnostics of any vintage: rows written before the report
existed named the iteration count ``n_iter``, ``iterations`` or ``rounds`` and kept their gap beside it; that
translation lives here only.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

STANDARD = ("solver", "iterations", "converged", "stop_rule", "certificate", "seconds")
# the names older rows gave their iteration count, and the certificates they kept as plain fields
_LEGACY_ITERATIONS = ("n_iter", "iterations", "rounds")
_LEGACY_CERTIFICATES = ("relative_gap", "stationarity")


@dataclass
class SolverReport:
    solver: str
    iterations: int | None
    converged: bool | None
    stop_rule: str
    certificate: dict[str, float] = field(default_factory=dict)
    seconds: float | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    def as_diagnostics(self) -> dict[str, Any]:
        clash = set(self.extras) & set(STANDARD)
        if clash:
            raise ValueError(f"extras may not reuse the standard fields {sorted(clash)}")
        return {"solver": self.solver, "iterations": None if self.iterations is None else int(self.iterations),
                "converged": None if self.converged is None else bool(self.converged), "stop_rule": self.stop_rule,
                "certificate": {k: float(v) for k, v in self.certificate.items() if v is not None},
                "seconds": None if self.seconds is None else float(self.seconds), **self.extras}


def read_report(diagnostics: Any) -> dict[str, Any]:
    """The standard fields of a row's diagnostics (rows of any vintage); empty values where a row has none."""
    d = diagnostics if isinstance(diagnostics, dict) else {}
    if "stop_rule" in d:  # written by SolverReport
        return {k: d.get(k) for k in STANDARD}
    iterations = next((d[k] for k in _LEGACY_ITERATIONS if isinstance(d.get(k), int | float)
                       and not isinstance(d.get(k), bool)), None)
    if "sdp_status" in d:  # the SDP route recorded n_iter = 0 for an interior-point solve it did not count
        iterations = None
    certificate = {k: float(d[k]) for k in _LEGACY_CERTIFICATES if isinstance(d.get(k), int | float)}
    converged, rule = d.get("converged"), None
    if "rounds" in d:  # HGK's Algorithm 1: a fixed count of steps, nothing to converge to
        converged, rule = None, "a fixed count of Algorithm 1 steps (paper 002); no convergence test"
    elif "fit_status" in d and converged is None:  # LIBSVM: fit_status 0 = stopped on its KKT tolerance
        converged, rule = d["fit_status"] == 0, "LIBSVM's KKT tolerance, or its iteration cap"
    return {"solver": None, "iterations": iterations, "converged": converged, "stop_rule": rule,
            "certificate": certificate, "seconds": None}
