"""What an experiment kind is: one class that says what its config may hold, plans its runs, executes one run and
builds its report (issue 49: no ``kind ==`` branches anywhere else).

The defaults are those of the kinds whose methods are families trained on random (or fixed) train/test splits
with hyper-parameters by CV (``accuracy``, ``convergence``, ``surface``); the other kinds override what differs.
"""
from __future__ import annotations

import typing
from pathlib import Path
from typing import Any, ClassVar

from tkbench.bench.spec import RunSpec, applicable, cell_splits, common_fields, keyed
from tkbench.data import split_seed
from tkbench.methods import get_family


class Kind:
    """One experiment kind. Class attributes are the rules the config check, the plan and the report read."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""  # one line for the docs and error messages
    section: ClassVar[str | None] = None  # the kind's own config section (``scaling:``, ``landscape:``)
    section_required: ClassVar[bool] = False
    learners: ClassVar[bool] = True  # methods are families (density: kernel classes fitted by cvxpy)
    tuned: ClassVar[bool] = True  # CV grids; False: fixed parameters, ``no_grid`` says why
    no_grid: ClassVar[str] = ""
    realisations: ClassVar[bool] = True  # split i is a dataset's fixed realisation i + 1 (checked against its count)
    varies: ClassVar[bool] = False  # a method's ``vary`` axis
    capped_training: ClassVar[bool] = True  # ``max_train``; False: ``no_max_train`` says why
    no_max_train: ClassVar[str] = ""
    split_limits: ClassVar[bool] = True  # the datasets' and methods' ``splits`` limits apply
    paired: ClassVar[bool] = False  # ``compare``: paired comparisons beside the tables
    evaluation: ClassVar[bool] = False  # ``evaluation``: the evaluation-time table
    preflight_data: ClassVar[bool] = True  # the pre-flight loads its data and checks subsample, features, CV folds
    preflight_splits: ClassVar[bool] = False  # ... and every train/test split the runs will draw
    trace: ClassVar[bool] = False  # runs keep their solver's per-iteration trace
    exact_size: ClassVar[bool] = False  # a run's ``size`` is its m even when not below the training part's rows
    headline: ClassVar[bool] = False  # its tables are the papers' (README's "at a glance" counts their verdicts)

    def section_of(self, exp):
        """The experiment's section of this kind, or its defaults when the config leaves it out."""
        given = getattr(exp, self.section)
        return given if given is not None else typing.get_args(type(exp).model_fields[self.section].annotation)[0]()

    # --- the config ------------------------------------------------------------------------------------------
    def kernel_class_problems(self, where: str, m) -> list[tuple[str, Any, str]]:
        """The checks of a method that is not a family (``learners = False``)."""
        return []

    def family_problems(self, where: str, m, fam, families: dict) -> tuple[list[tuple[str, Any, str]], bool]:
        """Kind-specific checks of a method's family; the flag says whether the family's parameters are worth
        checking further (False: the family cannot serve this kind at all)."""
        return [], True

    def method_problems(self, exp, where: str, m, allowed: set[str]) -> list[tuple[str, Any, str]]:
        """Kind-specific checks of a method once its family's parameters (``allowed``) are known."""
        problems = []
        if m.max_train is not None and not self.capped_training:
            problems.append((f"{where}.max_train", m.max_train, self.no_max_train))
        if m.vary is not None and not self.varies:
            problems.append((f"{where}.vary", m.vary.param, "a vary axis only in a scaling experiment"))
        elif m.vary is not None and m.vary.param not in allowed:
            problems.append((f"{where}.vary.param", m.vary.param,
                             f"a parameter of {m.family}: {', '.join(sorted(allowed))}"))
        return problems

    def experiment_problems(self, exp) -> list[tuple[str, Any, str]]:
        """Experiment-wide checks: the sections and tables this kind takes."""
        problems = []
        if exp.evaluation is not None and not self.evaluation:
            problems.append(("evaluation", exp.evaluation.model_dump(), "an evaluation table in an accuracy or "
                             "convergence experiment only"))
        for section, what in (("leaderboard", "a leaderboard in an accuracy experiment only (it ranks test metrics "
                                               "over shared splits)"),
                              ("learning_curve", "learning curves in an accuracy experiment only"),
                              ("relative_errors", "relative errors in an accuracy experiment only")):
            given = getattr(exp, section)
            if given is not None and not self.paired:  # sections that read test metrics over shared splits
                problems.append((section, given.model_dump(), what))
        if exp.compare and not self.paired:
            problems.append(("compare", [c.model_dump() for c in exp.compare], "paired comparisons in an accuracy "
                             "experiment only"))
        if not self.tuned and self.learners:
            problems += [(f"methods[{j}].grid", m.grid, self.no_grid) for j, m in enumerate(exp.methods) if m.grid]
        return problems

    # --- the plan ----------------------------------------------------------------------------------------------
    def run_fields(self, exp) -> dict[str, Any]:
        """RunSpec fields this kind sets on every run of a family (beyond the shared ones)."""
        return {"trace": self.trace}

    def family_base(self, exp, ds, m, task: str, fp: str) -> dict[str, Any]:
        """The fields of a (dataset, method) cell's runs: the family's defaults, the method's params and grid."""
        fam = get_family(m.family)
        grid = dict(fam.default_grid if m.grid is None else m.grid) if self.tuned else {}
        if self.tuned and ds.label in m.per_dataset_grid:
            grid = dict(m.per_dataset_grid[ds.label])
        params = {**m.params, **m.per_dataset.get(ds.label, {})}
        if any(k not in applicable(fam, task, m.solver) for k in params):  # e.g. epsilon on a classifier
            params = {k: v for k, v in params.items() if k in applicable(fam, task, m.solver)}
        return common_fields(exp, ds, m, task, fp, solver=m.solver or fam.default_solver, params=params, grid=grid,
                             scaler=m.scaler or fam.scaler, target_scaler=m.target_scaler or fam.target_scaler,
                             **self.run_fields(exp))

    def specs(self, exp, ds, m, task: str, fp: str, n_splits: int, limit: int | None) -> list[RunSpec]:
        """The runs of one (dataset, method) cell: one per split, each trained on the split's training part (at
        most ``max_train`` rows of it, a seeded subset) with parameters by CV (on at most ``cv_max_train`` rows)."""
        proto = exp.protocol
        base = self.family_base(exp, ds, m, task, fp)
        cap = m.max_train.get(ds.label) if isinstance(m.max_train, dict) else m.max_train
        cv_cap = m.cv_max_train.get(ds.label) if isinstance(m.cv_max_train, dict) else m.cv_max_train
        tuning = None
        k = m.tune_on(ds.label) or proto.tune_on_first  # a method's own count first
        if k and base["grid"]:
            tuning = {"first": k, "seeds": [split_seed(proto.seed, r) for r in range(k)]}
        return [keyed(RunSpec(**base, split=i, seed=split_seed(proto.seed, i), size=cap, tuning=tuning,
                              cv_size=cv_cap if base["grid"] else None))
                for i in range(cell_splits(n_splits, ds, m))]

    def gate(self, exp, plan: list[RunSpec]):
        """A rule that lets a sweep leave out runs depending on how earlier runs went: an object with
        ``note(key, status, seconds)`` (a finished run) and ``__call__(spec) -> str | None`` (the reason a run is not
        started, None to run it); None when every planned run runs."""
        return None

    # --- one run -----------------------------------------------------------------------------------------------
    def execute(self, spec: RunSpec, row: dict[str, Any], threads: int, root: str | None) -> None:
        """One run: fill ``row`` (the learner path: data, split, CV, final fit, test metrics)."""
        from tkbench.bench.learn import run_learner

        run_learner(spec, row, threads, root, after_fit=self.after_fit, exact_size=self.exact_size)

    def after_fit(self, spec, row, estimator, model, family, data) -> None:
        """What this kind records beyond the learner path's metrics, once the final fit is done."""

    # --- the report ----------------------------------------------------------------------------------------------
    def protocol_note(self, exp) -> str | None:
        """The protocol line under the tables (None: the shared split-and-CV line)."""
        return None

    def subsample_note(self, size: int) -> str:
        return f"subsampled to {size} rows per split"

    def extra_notes(self, res, reference) -> list[str]:
        return []

    def tables(self, res, out: Path, reference) -> tuple[list, list[Path], Any]:
        """The report's tables and figures, and the summary of its cells (a DataFrame, or None)."""
        from tkbench.report.evaluation import evaluation_tables, selection_table, time_breakdown_table
        from tkbench.report.parts import ref_names, summary_tables

        summary, tables = summary_tables(res, reference)
        extra, images = self.summary_extras(res, summary, out, reference)
        tables += extra
        tables += evaluation_tables(res, ref_names(res))
        tables += [t for t in (time_breakdown_table(res), selection_table(res)) if t is not None]
        tables += self.final_tables(res)
        summary.drop(columns=["errors"]).to_csv(out / "summary.csv", index=False, float_format="%.10g")
        if not res.rows.empty:
            images = images + self.figures(res, out)
        return tables, images, summary

    def summary_extras(self, res, summary, out: Path, reference) -> tuple[list, list[Path]]:
        """Tables (and their figures) this kind adds after the metric and paired tables."""
        return [], []

    def figures(self, res, out: Path) -> list[Path]:
        """Figures drawn from the rows."""
        return []

    def final_tables(self, res) -> list:
        """Tables after the evaluation and selection tables."""
        return []
