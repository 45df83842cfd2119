"""The config checks that need the registries (datasets, families, experiment kinds): names, options, solvers,
parameters by the estimators' own ``_parameter_constraints``, grids, and the rules each kind sets
(:mod:`tkbench.kinds`)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tkbench.config.schema import Experiment
from tkbench.errors import DatasetError
from tkbench.textfile import UnreadableFile, load_yaml


def paper_only_problems(exp: Experiment, ref: Path) -> list[tuple[str, Any, str]]:
    """``no_data`` must name data sets, ``not_run`` methods, of the reference table (else nothing would show)."""
    try:
        results = (load_yaml(ref, "reference file") or {}).get("results") or {}
    except (UnreadableFile, AttributeError):
        return []  # the report says what is wrong with the reference file itself
    methods = sorted({m for row in results.values() if isinstance(row, dict) for m in row})
    problems = [(f"no_data[{i}]", key, f"a data set of {ref.name}: {', '.join(sorted(results))}")
                for i, key in enumerate(exp.no_data) if key not in results]
    problems += [(f"not_run[{i}]", key, f"a method of {ref.name}: {', '.join(methods)}")
                 for i, key in enumerate(exp.not_run) if key not in methods]
    return problems


def _defaults(fam, tasks: list[str], solver: str | None) -> dict[str, Any]:
    """Per parameter of the family's estimators for ``tasks``: ``(default value, scikit-learn constraints or None)``
    (the estimator's ``_parameter_constraints``: scikit-learn's declaration of what a parameter takes, which every
    tkbench estimator makes once and checks in ``fit``)."""
    out: dict[str, Any] = {}
    for task in tasks or [fam.tasks[0]]:
        if task in fam.tasks:
            est = fam.build(task, solver or fam.default_solver, {}, 0)
            constraints = getattr(type(est), "_parameter_constraints", {})
            out.update({k: (v, constraints.get(k)) for k, v in est.get_params(deep=False).items()})
    return out


def _not_a_param(fam, key: str, allowed: set[str], tasks: list[str], solver: str | None) -> str:
    """What to say about ``key``, which no estimator of the family takes for the config's tasks: the task it
    belongs to when it is another task's parameter (epsilon is an SVR's), else the family's parameters."""
    for other in fam.tasks:
        if other not in tasks and key in fam.param_names(other, solver):
            return (f"a parameter of {fam.name} for {other} only, and this config's datasets are "
                    f"{' and '.join(tasks) or fam.tasks[0]} (parameters for {' and '.join(tasks)}: "
                    f"{', '.join(sorted(allowed))})")
    return f"a parameter of {fam.name}: {', '.join(sorted(allowed))}"


def _type_problems(where: str, key: str, values: list[Any], defaults: dict[str, Any], listed: bool
                   ) -> list[tuple[str, Any, str]]:
    """Values a parameter cannot take, by the estimator's scikit-learn ``_parameter_constraints`` for ``key``
    (``C: ten`` for an SVC: "must be a float in the range (0.0, inf]"). An estimator that declares nothing for
    ``key`` (an external one) checks its value itself when the run fits it."""
    from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints

    _, constraints = defaults.get(key, (None, None))
    out = []
    if constraints is None:
        return out
    for i, value in enumerate(values):
        at = f"{where}[{i}]" if listed else where
        try:
            validate_parameter_constraints({key: constraints}, {key: value}, caller_name="the estimator")
        except InvalidParameterError as exc:
            said = str(exc).split(" must be ", 1)[-1].split(". Got ", 1)[0]
            out.append((at, value, f"{said} ({key})"))
    return out


def check_semantics(exp: Experiment) -> list[tuple[str, Any, str]]:
    """Checks that need the registries: dataset names and options, families, solvers, parameters, grids."""
    from tkbench.data import registry as data_registry
    from tkbench.data import synthetic
    from tkbench.methods.registry import get_family, load_families

    FAMILIES = load_families()
    from tkbench.kinds import get_kind
    from tkbench.methods._shared.scalers import SCALERS

    kind = get_kind(exp.kind)

    problems: list[tuple[str, Any, str]] = []
    labels: dict[str, int] = {}
    tasks: dict[int, str] = {}
    known = data_registry.all_names()
    for i, ds in enumerate(exp.datasets):
        where = f"datasets[{i}]"
        if ds.csv is not None:
            tasks[i] = str(ds.task)
            if ds.label in labels:
                problems.append((f"{where}", ds.label, f"a unique dataset label (same as datasets[{labels[ds.label]}]; "
                                 "set 'alias')"))
            labels[ds.label] = i
            continue
        if ds.name not in known:
            problems.append((f"{where}.name", ds.name, f"one of the known datasets: {', '.join(known)}"))
            continue
        try:
            if ds.name in synthetic.GENERATORS:
                synthetic.resolve(ds.name, ds.options)
            else:
                data_registry.resolve_options(ds.name, ds.options)
            tasks[i] = data_registry.task_of(ds.name, ds.options)
        except DatasetError as exc:
            problems.append((f"{where}.options", ds.options, f"valid options ({exc})"))
        if ds.label in labels:
            problems.append((f"{where}", ds.label, f"a unique dataset label (same as datasets[{labels[ds.label]}]; "
                             "set 'alias')"))
        fixed = data_registry.realisation_count(ds.name) if ds.name in data_registry.registry() else None
        if fixed is not None:
            asked = min(exp.protocol.splits, ds.splits or exp.protocol.splits)
            if asked > fixed and kind.realisations:
                problems.append((f"{where}.splits", ds.splits if ds.splits is not None else exp.protocol.splits,
                                 (f"at most {fixed}: {ds.name} comes with fixed realisations 1-{fixed} (split i is "
                                  f"realisation i + 1; set protocol.splits or datasets[{i}].splits <= {fixed})")
                                 if fixed > 1 else f"1: {ds.name} comes with one fixed train/test split (set "
                                 f"protocol.splits or datasets[{i}].splits to 1)"))
            tune = exp.protocol.tune_on_first
            if tune is not None and tune > fixed:
                problems.append(("protocol.tune_on_first", tune, f"at most {fixed}: {ds.name} has {fixed} fixed "
                                 "realisations to tune on"))
            for j, m in enumerate(exp.methods):
                own = m.tune_on(ds.label)
                if own is not None and own > fixed and m.runs_on(ds.label):
                    field = f"methods[{j}].tune_on_first" + (f".{ds.label}" if isinstance(m.tune_on_first, dict)
                                                             else "")
                    problems.append((field, own, f"at most {fixed}: {ds.name} has {fixed} fixed realisations to "
                                     "tune on"))
            for what, value in (("subsample", ds.subsample), ("test_fraction", ds.test_fraction)):
                if value is not None:
                    problems.append((f"{where}.{what}", value, f"nothing: {ds.name} has fixed train/test realisations"))
        labels[ds.label] = i
    names: dict[str, int] = {}
    for j, m in enumerate(exp.methods):
        where = f"methods[{j}]"
        if m.name in names:
            problems.append((f"{where}.name", m.name, f"a unique method name (same as methods[{names[m.name]}])"))
        names[m.name] = j
        if m.scaler is not None and m.scaler not in SCALERS:
            problems.append((f"{where}.scaler", m.scaler, f"one of the scalers: {', '.join(map(repr, SCALERS))}"))
        if not kind.learners:  # kernel classes (density), not families
            problems.extend(kind.kernel_class_problems(where, m))
            continue
        try:
            fam = get_family(m.family)
        except KeyError:
            visible = sorted(f for f, v in FAMILIES.items() if not v.hidden)
            problems.append((f"{where}.family", m.family, f"one of the method families: {', '.join(visible)} (or "
                             "'estimator: module.Class' for any scikit-learn estimator)"))
            continue
        except ValueError as exc:  # an import path that does not give an estimator
            problems.append((f"{where}.estimator", m.estimator, str(exc)))
            continue
        own, usable = kind.family_problems(where, m, fam, FAMILIES)
        problems.extend(own)
        if not usable:
            continue
        if m.solver is not None and m.solver not in fam.solvers:
            problems.append((f"{where}.solver", m.solver, f"a solver of family {m.family!r}: {', '.join(fam.solvers)}"))
            continue
        # a method runs on the datasets whose task its family supports (bench.plan.empty_cells names the others);
        # the datasets it names must all be of such a task, and at least one dataset of the config must be
        config_tasks = sorted(set(tasks.values()))
        if m.datasets:
            named = {labels[label]: label for label in m.datasets if label in labels}
            for i, label in sorted(named.items()):
                if i in tasks and tasks[i] not in fam.tasks:
                    problems.append((f"{where}.datasets", label, f"a dataset of a task {m.family!r} supports "
                                     f"({', '.join(fam.tasks)}): {label} is {tasks[i]}"))
            needed = sorted({tasks[i] for i in named if i in tasks} & set(fam.tasks)) or config_tasks
        else:
            needed = sorted(set(config_tasks) & set(fam.tasks))
            if config_tasks and not needed:
                problems.append((f"{where}.family", m.family, f"a family that supports {' or '.join(config_tasks)} "
                                 "(the config's datasets need it)"))
                needed = config_tasks
        # a parameter must belong to the family's estimator for at least one task of the config (epsilon is a
        # regressor's: in a mixed config it applies to the regression datasets only, see bench.plan)
        defaults = _defaults(fam, needed, m.solver)
        allowed = set(defaults)  # the parameters of the family's estimators for the config's tasks

        def not_a_param(key: str, fam=fam, allowed=allowed, needed=needed, solver=m.solver) -> str:
            return _not_a_param(fam, key, allowed, needed, solver)
        for key, value in m.params.items():
            if key == "solver":
                problems.append((f"{where}.params.solver", value, "the solver in the method's 'solver' field"))
            elif key not in allowed:
                problems.append((f"{where}.params.{key}", value, not_a_param(key)))
            else:
                problems.extend(_type_problems(f"{where}.params.{key}", key, [value], defaults, listed=False))
        for label in m.datasets or []:
            if label not in labels:
                problems.append((f"{where}.datasets", label,
                                 f"the label of a dataset of this config: {', '.join(labels) or '(none)'}"))
        for field_name in ("max_train", "cv_max_train", "tune_on_first", "splits"):  # {dataset label: value} forms
            value = getattr(m, field_name)
            for label, cap in (value if isinstance(value, dict) else {}).items():
                if label not in labels:
                    problems.append((f"{where}.{field_name}.{label}", cap,
                                     f"the label of a dataset of this config: {', '.join(labels) or '(none)'}"))
        for label, over in m.per_dataset.items():
            if label not in labels:
                problems.append((f"{where}.per_dataset.{label}", over,
                                 f"the label of a dataset of this config: {', '.join(labels) or '(none)'}"))
            for key, value in over.items():
                if key == "solver" or key not in allowed:
                    problems.append((f"{where}.per_dataset.{label}.{key}", value, not_a_param(key)))
                elif key in m.per_dataset_grid.get(label, m.grid or {}):
                    problems.append((f"{where}.per_dataset.{label}.{key}", value,
                                     "a parameter that is not in the CV grid"))
                else:
                    problems.extend(_type_problems(f"{where}.per_dataset.{label}.{key}", key, [value], defaults,
                                                   listed=False))
        for label, grid in m.per_dataset_grid.items():
            if label not in labels:
                problems.append((f"{where}.per_dataset_grid.{label}", grid,
                                 f"the label of a dataset of this config: {', '.join(labels) or '(none)'}"))
            for key, values in grid.items():
                if key not in allowed:
                    problems.append((f"{where}.per_dataset_grid.{label}.{key}", values, not_a_param(key)))
                elif key in m.params or key in m.per_dataset.get(label, {}):
                    problems.append((f"{where}.per_dataset_grid.{label}.{key}", values,
                                     "a parameter set in either params or grid, not both"))
        for key, values in (m.grid or {}).items():
            if key not in allowed:
                problems.append((f"{where}.grid.{key}", values, not_a_param(key)))
            elif key in m.params:
                problems.append((f"{where}.grid.{key}", values, "a parameter set in either params or grid, not both"))
            else:
                problems.extend(_type_problems(f"{where}.grid.{key}", key, values, defaults, listed=True))
        problems.extend(kind.method_problems(exp, where, m, allowed))
    for c, comp in enumerate(exp.compare):
        for part in ("methods", "against"):
            for name in getattr(comp, part):
                if name not in names:
                    problems.append((f"compare[{c}].{part}", name, f"a method of this config: {', '.join(names)}"))
    if exp.relative_errors is not None:
        rel = exp.relative_errors
        for where, name in [("relative_errors.baseline", rel.baseline),
                            *(("relative_errors.methods", n) for n in rel.methods)]:
            if name not in names:
                problems.append((where, name, f"a method of this config: {', '.join(names)}"))
    labels = [ds.label for ds in exp.datasets]
    for c, cal in enumerate(exp.calibrated):
        for name in cal.methods or []:
            if name not in names:
                problems.append((f"calibrated[{c}].methods", name, f"a method of this config: {', '.join(names)}"))
        for label in cal.datasets or []:
            if label not in labels:
                problems.append((f"calibrated[{c}].datasets", label, f"a dataset of this config: {', '.join(labels)}"))
    for name in (exp.evaluation.speedup or []) if exp.evaluation is not None else []:
        if name not in names:
            problems.append(("evaluation.speedup", name, f"a method of this config: {', '.join(names)}"))
    index = {label: i for i, label in enumerate(labels)}
    for group, members in (exp.leaderboard.groups if exp.leaderboard is not None else {}).items():
        where = f"leaderboard.groups.{group}"
        unknown = [label for label in members if label not in labels]
        for label in unknown:
            problems.append((where, label, f"a dataset of this config: {', '.join(labels)}"))
        kinds = {label: tasks[index[label]] for label in members if label not in unknown and index[label] in tasks}
        if len(set(kinds.values())) > 1:
            problems.append((where, members, "datasets of one task (a leaderboard ranks one metric): "
                             + ", ".join(f"{label} is {task}" for label, task in kinds.items())))
    problems.extend(kind.experiment_problems(exp))
    return problems
