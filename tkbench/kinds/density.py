"""``density``: how closely kernel classes approximate the optimal kernel matrix of a +-1 labelling (paper 000
section 4.3.3, Figure 2). The methods are kernel classes (:mod:`tkbench.bench.kernel_classes`: TK, GPK, sums of
Gaussians) fitted by cvxpy to K* = y y^T on balanced draws of the points; nothing is trained."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tkbench.bench.spec import RunSpec, cell_splits, common_fields, keyed
from tkbench.data import split_seed
from tkbench.kinds.base import Kind


class Density(Kind):
    name = "density"
    summary = "kernel classes fitted to the optimal kernel matrix of a labelling (cvxpy): approximation error"
    learners = False
    tuned = False
    no_grid = "no CV grid in a density experiment (nothing is trained)"
    realisations = False
    preflight_data = False

    def kernel_class_problems(self, where: str, m) -> list[tuple[str, Any, str]]:
        """A density experiment's methods are kernel classes (tkbench.bench.kernel_classes), fitted by cvxpy."""
        from tkbench.bench.kernel_classes import CLASSES
        from tkbench.methods._shared.conic import SOLVERS

        if m.family not in CLASSES:
            return [(f"{where}.family", m.family,
                     f"one of the kernel classes of a density experiment: {', '.join(CLASSES)}")]
        problems = []
        allowed = set(CLASSES[m.family].defaults)
        if m.solver is not None and m.solver not in SOLVERS:
            problems.append((f"{where}.solver", m.solver, f"a cvxpy solver: {', '.join(SOLVERS)}"))
        for key, value in {**m.params, **{k: v for over in m.per_dataset.values() for k, v in over.items()}}.items():
            if key not in allowed:
                problems.append((f"{where}.params.{key}", value,
                                 f"a parameter of {m.family}: {', '.join(sorted(allowed))}"))
        if m.grid:
            problems.append((f"{where}.grid", m.grid, self.no_grid))
        if m.vary is not None and m.vary.param not in allowed:
            problems.append((f"{where}.vary.param", m.vary.param,
                             f"a parameter of {m.family}: {', '.join(sorted(allowed))}"))
        return problems

    def specs(self, exp, ds, m, task: str, fp: str, n_splits: int, limit: int | None) -> list[RunSpec]:
        """One run per (kernel class, varied value, draw): the class fitted to the optimal kernel matrix of a
        balanced draw of ``subsample`` rows (paper 000 section 4.3.3)."""
        proto = exp.protocol
        params = {**m.params, **m.per_dataset.get(ds.label, {})}
        base = common_fields(exp, ds, m, task, fp, solver=m.solver or "clarabel", grid={}, scaler="minmax",
                             target_scaler="none", stratify=True)
        out = []
        axis = m.vary
        for value in (axis.values if axis else [None]):
            vary = None if axis is None else {"param": axis.param, "value": value, "size": axis.size}
            run_params = dict(params) if vary is None else {**params, vary["param"]: value}
            for i in range(cell_splits(n_splits, ds, m)):
                out.append(keyed(RunSpec(**base, params=run_params, split=i, seed=split_seed(proto.seed, i),
                                         vary=vary)))
        return out

    def execute(self, spec, row: dict[str, Any], threads: int, root: str | None) -> None:
        from tkbench.bench.density import run_density

        run_density(spec, row)

    def protocol_note(self, exp) -> str | None:
        p = exp.protocol
        return (f"Protocol: {p.splits} random balanced draw(s) of the points (seed {p.seed}), scaled to [0, 1]^n; "
                "K* = y y^T (Theorem 10 with sum y = 0); solved by cvxpy "
                f"({', '.join(sorted({m.solver or 'clarabel' for m in exp.methods}))}); nothing is trained.")

    def subsample_note(self, size: int) -> str:
        return f"{size} points per draw, half per class"

    def tables(self, res, out: Path, reference) -> tuple[list, list[Path], Any]:
        if res.rows.empty:
            return [], [], None
        from tkbench.report.density import density_plots, density_table

        return [density_table(res.rows)], density_plots(res.rows, out), None
