"""``accuracy``: the papers' tables. Every (dataset, method) on every split: hyper-parameters by CV on the training
part, the final fit, test metrics; the report sets them beside the paper's numbers with paired tests, the
Friedman / Nemenyi statistics and the final fits' convergence."""
from __future__ import annotations

from pathlib import Path

from tkbench.kinds.base import Kind


class Accuracy(Kind):
    name = "accuracy"
    summary = "test metrics over train/test splits, hyper-parameters by CV: the papers' tables"
    paired = True
    evaluation = True
    preflight_splits = True
    headline = True

    def summary_extras(self, res, summary, out: Path, reference) -> tuple[list, list[Path]]:
        from tkbench.report.significance import significance_tables

        tables, images = significance_tables(res, summary, out, ranks=res.experiment.leaderboard is None)
        if res.experiment.leaderboard is not None:
            from tkbench.report.leaderboard import leaderboard_tables

            more, figures = leaderboard_tables(res, summary, out, res.experiment.leaderboard)
            tables, images = tables + more, images + figures
        if res.experiment.learning_curve is not None:
            from tkbench.report.learning import learning_curve_tables

            more, figures = learning_curve_tables(res, summary, out, res.experiment.learning_curve)
            tables, images = tables + more, images + figures
        if res.experiment.relative_errors is not None:
            from tkbench.report.relative import relative_error_tables

            more, figures = relative_error_tables(res, summary, out, reference, res.experiment.relative_errors)
            tables, images = tables + more, images + figures
        return tables, images

    def final_tables(self, res) -> list:
        from tkbench.report import checks

        fits = checks.final_fit_table(res)
        return [fits] if fits is not None else []

    def extra_notes(self, res, reference) -> list[str]:
        from tkbench.report.parts import size_notes

        return size_notes(res, reference)
