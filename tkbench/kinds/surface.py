"""``surface``: accuracy runs on two-feature data that also record the fitted model's decision function on a grid
over the data (paper 000 Figure 6)."""
from __future__ import annotations

from pathlib import Path

from tkbench.kinds.base import Kind


class Surface(Kind):
    name = "surface"
    summary = "accuracy runs on 2-feature data that record the decision surface (figures)"

    def after_fit(self, spec, row, estimator, model, family, data) -> None:
        from tkbench.bench.learn import decision_surface

        X_all, X_train, y_train = data
        row["surface"] = decision_surface(estimator, X_all, X_train, y_train)

    def figures(self, res, out: Path) -> list[Path]:
        from tkbench.report import plots

        return plots.surface_plots(res.rows, out, order=[m.name for m in res.experiment.methods])
