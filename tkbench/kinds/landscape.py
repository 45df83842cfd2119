"""``landscape``: a family's training objective over a grid of two kernel weights (paper 001 Figure 1: the NKRR
objective F(mu1, mu2)); every dataset's rows, no split, nothing is trained. The family says how through its
``landscape`` hook (:class:`tkbench.methods.family.Family`)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tkbench.kinds.base import Kind


class Landscape(Kind):
    name = "landscape"
    summary = "a family's objective over a grid of two kernel weights (no training)"
    section = "landscape"
    tuned = False
    no_grid = "no CV grid in a landscape experiment (nothing is trained)"
    realisations = False

    def family_problems(self, where: str, m, fam, families: dict) -> tuple[list[tuple[str, Any, str]], bool]:
        if fam.landscape is None:
            able = sorted(f for f, v in families.items() if v.landscape is not None)
            return [(f"{where}.family", m.family, f"a family with an objective landscape: {', '.join(able)}")], False
        return ([(f"{where}.grid", m.grid, self.no_grid)] if m.grid else []), True

    def experiment_problems(self, exp) -> list[tuple[str, Any, str]]:
        # the grid is checked with the family (family_problems), before its parameters
        problems = super().experiment_problems(exp)
        return [p for p in problems if not p[0].endswith(".grid")]

    def run_fields(self, exp) -> dict[str, Any]:
        return {**super().run_fields(exp), "landscape": self.section_of(exp).model_dump()}

    def execute(self, spec, row: dict[str, Any], threads: int, root: str | None) -> None:
        from tkbench.bench.landscape import run_landscape

        run_landscape(spec, row)

    def protocol_note(self, exp) -> str | None:
        grid = self.section_of(exp)
        lo, hi, pts = grid.low, grid.high, grid.points
        return (f"Landscape: every dataset's rows (no split), pre-processed by each method's scaler; the objective "
                f"on a {pts} x {pts} grid of [{lo:g}, {hi:g}]^2; nothing is trained.")

    def tables(self, res, out: Path, reference) -> tuple[list, list[Path], Any]:
        if res.rows.empty:
            return [], [], None
        from tkbench.report.landscape import landscape_plots, landscape_table

        order = {m.name: i for i, m in enumerate(res.experiment.methods)}  # the config's order
        in_order = res.rows.sort_values("method", key=lambda s: s.map(order), kind="stable")
        return [landscape_table(in_order)], landscape_plots(in_order, out), None
