"""``convergence``: accuracy runs that also keep their solver's per-iteration trace (duality gap, bounds, test
error after each iteration): paper 003 Figure 2, paper 004 Figures 1-3."""
from __future__ import annotations

from pathlib import Path

from tkbench.kinds.base import Kind


class Convergence(Kind):
    name = "convergence"
    summary = "accuracy runs that keep the solver's per-iteration trace: convergence figures"
    trace = True
    evaluation = True

    def summary_extras(self, res, summary, out: Path, reference) -> tuple[list, list[Path]]:
        from tkbench.report.parts import ref_names
        from tkbench.report.tables import train_test_table

        table = train_test_table(summary, reference, ref_names(res))
        return ([table] if table is not None else []), []

    def figures(self, res, out: Path) -> list[Path]:
        from tkbench.report import plots

        return plots.convergence_plots(res.rows, out) + plots.booster_plots(res.rows, out) + \
            plots.evolution_plots(res.rows, out)
