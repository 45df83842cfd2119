"""``scaling``: fit time (and memory) against the training size m and, optionally, one parameter's values (q,
L, ...): fixed parameters, repeats instead of splits, log-log slopes beside the papers' exponents (paper 000
Figures 3-4, paper 003 Table 1 and Figure 3)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tkbench.bench.spec import RunSpec, keyed
from tkbench.data import split_seed
from tkbench.kinds.base import Kind
from tkbench.kinds.budget import SizeBudget


class Scaling(Kind):
    name = "scaling"
    summary = "fit time and memory against m (and a parameter): fixed parameters, log-log slopes"
    section = "scaling"
    section_required = True
    tuned = False
    no_grid = "no CV grid in a scaling experiment (fixed params)"
    realisations = False
    varies = True
    capped_training = False
    no_max_train = "no max_train in a scaling experiment (sizes)"
    split_limits = False
    exact_size = True  # m is the run's training size (a seeded subset of the training part)

    def method_problems(self, exp, where: str, m, allowed: set[str]) -> list[tuple[str, Any, str]]:
        problems = super().method_problems(exp, where, m, allowed)
        axis = exp.scaling.vary if exp.scaling else None
        if m.vary is None and axis and axis.param not in allowed:
            problems.append(("scaling.vary.param", axis.param,
                             f"a parameter of every method's family ({m.family}: {', '.join(sorted(allowed))})"))
        return problems

    def specs(self, exp, ds, m, task: str, fp: str, n_splits: int, limit: int | None) -> list[RunSpec]:
        """One run per (size m, varied value, repeat); m None is the whole training part (``full_size``)."""
        base = self.family_base(exp, ds, m, task, fp)
        sc = exp.scaling
        repeats = sc.repeats if limit is None else min(limit, sc.repeats)
        axis = m.vary or sc.vary  # a method's own vary axis replaces the experiment's
        out = []
        for size in [*sc.sizes, *([None] if sc.full_size else [])]:
            for value in (axis.values if axis else [None]):
                vary = None if axis is None else {"param": axis.param, "value": value, "size": axis.size}
                params = dict(base["params"])
                if vary is not None:
                    params[vary["param"]] = value
                for r in range(repeats):
                    out.append(keyed(RunSpec(**{**base, "params": params}, split=r,
                                             seed=split_seed(exp.protocol.seed, r), size=size,
                                             test_size=sc.test_size, vary=vary)))
        return out

    def gate(self, exp, plan: list[RunSpec]):
        budget = exp.scaling.budget_seconds if exp.scaling is not None else None
        return None if budget is None else SizeBudget(budget, plan)

    def protocol_note(self, exp) -> str | None:
        return ""  # the sizes, repeats and thread counts are in the tables and the machine note

    def extra_notes(self, res, reference) -> list[str]:
        from tkbench.report.parts import ref_names
        from tkbench.report.tables import fmt_time

        if reference is None or reference.data.get("metric") != "train_seconds":
            return []
        names = ref_names(res)
        notes = []
        for ds in res.experiment.datasets:
            parts = []
            for m in res.experiment.methods:
                value = reference.lookup(names["datasets"][ds.label], names["methods"][m.name], "time")
                if value is not None and value.time is not None:
                    parts.append(f"{m.name} {fmt_time(*value.time)} s")
            if parts:
                notes.append(f"Paper ({reference.title}), {ds.label} at full size: " + ", ".join(parts)
                             + (f"; hardware: {reference.data['hardware']}" if reference.data.get("hardware") else ""))
        return notes

    def tables(self, res, out: Path, reference) -> tuple[list, list[Path], Any]:
        from tkbench.report import plots
        from tkbench.report.parts import dataset_order
        from tkbench.report.scaling import not_reached, scaling_failures, slope_table, time_table

        tables, images = [], []
        if res.rows.empty:
            return tables, images, None
        exp = res.experiment
        vary = exp.scaling.vary if exp.scaling is not None else None
        order = dataset_order(res)  # tables and figures in the config's order
        in_order = res.rows.sort_values("dataset", key=lambda s: s.map(order), kind="stable")
        images, slopes = plots.scaling_plots(in_order, out, size_label=vary.size if vary is not None else None)
        if not slopes.empty:
            tables.append(slope_table(res, slopes, reference))
            slopes.to_csv(out / "slopes.csv", index=False, float_format="%.10g")  # stable across BLAS builds
        times = time_table(res)
        if times is not None:
            tables.append(times)
        if tables:
            tables[-1].notes = scaling_failures(res) + not_reached(res) + tables[-1].notes
        return tables, images, None

