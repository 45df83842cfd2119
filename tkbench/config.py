"""The experiment config: a YAML file validated into pydantic models (unknown keys are errors).

Example::

    name: smoke
    kind: accuracy              # accuracy (tables) | scaling (time vs size) | convergence (solver traces)
                                # | surface (2-feature data: tables + decision surfaces on a grid)
                                # | landscape (a family's objective over two kernel weights, paper 001 Fig. 1)
                                # | density (kernel classes fitted to the optimal kernel matrix, paper 000 Fig. 2;
                                #   methods name kernel classes: tk, gpk, gaussian_sum)
    reference: reference/tkl2021_table2.yaml   # optional paper numbers, relative to this file or configs/
    protocol: {splits: 30, test_fraction: 0.2, seed: 0, cv_folds: 5, timeout: 600}
    datasets:
      - liver
      - {name: liver, alias: liver_drinks, options: {label: drinks}}
      - {name: ccpp, subsample: 2000}
    methods:
      - {name: rf, family: random_forest, grid: {n_estimators: [50, 100]}}
      - {name: svm, family: svm_rbf, params: {cache_size: 1000}, grid: {C: [1, 10], gamma: [0.1]}}
      - {name: tk, family: tk, params: {degree: 1}, per_dataset: {liver_drinks: {degree: 2}}}

Every error is reported as ``file: key.path: value: what was expected``; :func:`load_config` raises
:class:`~tkbench.errors.ConfigError` with all of them.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tkbench.errors import NOTHING, ConfigError, DatasetError
from tkbench.textfile import UnreadableFile, load_yaml

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


MAX_SPLITS = 10_000  # a plan is built in memory: 10^30 splits would never finish planning


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_name_or_none(value: str) -> str | None:
    return value if NAME_RE.match(value) else None


def _check_name(value: str) -> str:
    if not NAME_RE.match(value):
        raise ValueError("a name of letters, digits, '_', '-', '.', '+' (no spaces or '/')")
    return value


class Protocol(_Strict):
    """How runs are split, tuned and limited (GUIDE section 3)."""

    splits: int = Field(30, ge=1, le=MAX_SPLITS, description="number of random train/test splits")
    test_fraction: float = Field(0.2, description="fraction of rows in the test part, in (0, 1)")
    seed: int = Field(0, ge=0, description="base seed; split i uses a seed derived from (seed, i) only")
    cv_folds: int = Field(5, ge=2, description="k of the k-fold CV on the training part")
    stratify: bool = Field(True, description="stratified splits and folds for classification")
    timeout: float | None = Field(None, gt=0, description="seconds per run before it is killed (none: no limit)")
    subsample: int | None = Field(None, ge=10, description="rows drawn per split before splitting (all datasets)")
    blas_threads: int = Field(1, ge=1, description="BLAS/OpenMP threads per run (workers x threads <= cores)")
    cv_score: Literal["default", "ls_error"] = Field(
        "default", description="what CV maximises: 'default' (accuracy; minus the MSE for regression) or "
        "'ls_error' (minus the least-squares error of the clipped decision values on labels scaled to [-1, 1]: "
        "paper 002's Table 1 metric, tkbench.bench.least_squares)")
    tune_on_first: int | None = Field(
        None, ge=1, description="choose hyper-parameters once per (dataset, method): k-fold CV on the training parts "
        "of the first k splits, then the median of the k choices per parameter, used on every split (the protocol of "
        "Raetsch et al. 2001 and paper 004: 5-fold CV on the first five realisations); none: CV on every split")

    @field_validator("test_fraction")
    @classmethod
    def _fraction(cls, v: float) -> float:
        if not 0.0 < v < 1.0:
            raise ValueError("a number strictly between 0 and 1")
        return v


class Threshold(_Strict):
    op: Literal[">", ">=", "<", "<=", "=="]
    value: float | Literal["median"]


class DatasetEntry(_Strict):
    name: str = Field(description="a registered or synthetic dataset (tkbench datasets list); 'csv' for a "
                      "'csv' entry")
    alias: str | None = Field(None, description="the label in tables (default: name, or a CSV file's stem); needed "
                              "to use a dataset twice")
    csv: str | None = Field(None, description="your own CSV file (with a header row), relative to the config file; "
                            "with target and task (tkbench.data.user_csv)")
    target: str | None = Field(None, description="csv: the target column")
    task: Literal["classification", "regression"] | None = Field(None, description="csv: the task")
    positive: Any = Field(None, description="csv, classification: the value(s) of the +1 class (a binary task)")
    threshold: Threshold | None = Field(None, description="csv, classification: +1 when the target satisfies it")
    drop: list[str] | None = Field(None, description="csv: columns that are not features (ids, text)")
    delimiter: str | None = Field(None, description="csv: the field separator (default ',')")
    options: dict[str, Any] = Field(default_factory=dict)
    subsample: int | None = Field(None, ge=10, description="rows drawn per split before splitting")
    splits: int | None = Field(None, ge=1, le=MAX_SPLITS, description="run only the first k of the protocol's splits here "
                               "(an expensive dataset; the report says so)")
    reference: str | None = Field(None, description="the dataset's key in the reference file (default: alias)")
    features: list[int] | None = Field(None, min_length=1, description="use only these feature columns "
                                       "(0-based indices into the dataset's features, e.g. [0, 1])")
    test_fraction: float | None = Field(None, description="this dataset's own test fraction (replaces the "
                                        "protocol's), e.g. 300/768 for Pima as 'diabetis' with 468/300 splits")

    @field_validator("test_fraction")
    @classmethod
    def _dataset_fraction(cls, v: float | None) -> float | None:
        if v is not None and not 0.0 < v < 1.0:
            raise ValueError("a number strictly between 0 and 1")
        return v

    @field_validator("features")
    @classmethod
    def _features(cls, v: list[int] | None) -> list[int] | None:
        if v is not None and (min(v) < 0 or len(set(v)) != len(v)):
            raise ValueError("distinct column indices >= 0")
        return v

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("csv") is not None and "name" not in data:
            return {**data, "name": "csv"}  # (the user's file: see tkbench.data.user_csv)
        return {"name": data} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _csv_fields(self) -> DatasetEntry:
        rule = {k: getattr(self, k) for k in ("target", "task", "positive", "threshold", "drop", "delimiter")}
        if self.csv is None:
            given = [k for k, v in rule.items() if v is not None]
            if given:
                raise ValueError(f"{', '.join(given)} only with 'csv' (a registered dataset has its own label rule; "
                                 "see its options in `tkbench datasets show NAME`)")
            return self
        if self.name != "csv":
            raise ValueError("either 'name' (a registered dataset) or 'csv' (your file), not both; 'alias' names a "
                             "CSV dataset in tables")
        if self.target is None or self.task is None:
            raise ValueError("a 'csv' dataset needs 'target' (the column) and 'task' (classification or regression)")
        if self.options and set(self.options) - {"path", "sha256", *rule}:
            raise ValueError("no 'options' with 'csv' (target, task, positive, threshold, drop, delimiter are fields)")
        if self.task == "regression" and (self.positive is not None or self.threshold is not None):
            raise ValueError("positive / threshold define classes: task classification")
        return self

    @field_validator("alias")
    @classmethod
    def _alias(cls, v: str | None) -> str | None:
        return None if v is None else _check_name(v)

    @property
    def label(self) -> str:
        return self.alias or (_check_name_or_none(Path(self.csv).stem) if self.csv else None) or self.name


class MethodEntry(_Strict):
    name: str
    family: str = Field(description="a method family (tkbench methods); set from 'estimator' when that is given")
    estimator: str | None = Field(None, description="any scikit-learn estimator class by import path, e.g. "
                                  "sklearn.linear_model.LogisticRegression (instead of 'family'; "
                                  "tkbench.methods.external)")
    solver: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    per_dataset: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="params that replace 'params' on the named datasets (by label), e.g. "
        "{ionosphere: {degree: 0}} as in paper 000 Table 1")
    grid: dict[str, list[Any]] | None = Field(None, description="CV grid; omitted: the family default; {}: no CV")
    per_dataset_grid: dict[str, dict[str, list[Any]]] = Field(
        default_factory=dict, description="a CV grid that replaces 'grid' on the named datasets (by label)")
    datasets: list[str] | None = Field(
        None, min_length=1, description="run this method on these datasets only (labels); none: on all of them")
    splits: int | dict[str, int] | None = Field(
        None, description="run only the first k of the protocol's splits for this method (an expensive method; the "
        "report says so), or {dataset label: k} for the named datasets only")
    vary: VaryParam | None = Field(None, description="scaling experiments: this method's own second size axis "
                                   "(replaces scaling.vary for it)")
    max_train: int | dict[str, int] | None = Field(
        None, description="train this method on at most this many rows of each split's training part (seeded; "
        "the test part is unchanged), or {dataset label: rows}; the report says so")
    cv_max_train: int | dict[str, int] | None = Field(
        None, description="choose the hyper-parameters by CV on at most this many of the training rows (seeded), "
        "then fit on all of them (or on max_train), or {dataset label: rows}; the report says so")
    scaler: str | None = Field(None, description="input pre-processing, fitted on the training rows (default: the "
                               "family's own); one of tkbench.methods._shared.scalers.SCALERS")
    target_scaler: Literal["none", "standard", "minmax_pm1"] | None = None
    reference: str | None = Field(None, description="the method's key in the reference file (default: name)")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return _check_name(v)

    @model_validator(mode="before")
    @classmethod
    def _estimator_family(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("estimator") is not None:
            if data.get("family") is not None:
                raise ValueError("either 'family' or 'estimator' (an import path), not both")
            return {**data, "family": f"estimator:{data['estimator']}"}
        return data

    def runs_on(self, label: str) -> bool:
        """Whether the method runs on the dataset labelled ``label`` (its ``datasets`` list, if any)."""
        return self.datasets is None or label in self.datasets

    def splits_on(self, label: str) -> int | None:
        """The method's own limit on the number of splits for dataset ``label`` (None: no limit of its own)."""
        return self.splits.get(label) if isinstance(self.splits, dict) else self.splits


class VaryParam(_Strict):
    param: str = Field(description="a method parameter varied as the second size axis (e.g. degree)")
    values: list[Any] = Field(min_length=1)
    size: str | None = Field(None, description="a diagnostic of the fitted model giving the size (e.g. q)")


MethodEntry.model_rebuild()


class Scaling(_Strict):
    sizes: list[int] = Field(min_length=1, description="training-set sizes m")
    repeats: int = Field(1, ge=1, le=MAX_SPLITS)
    test_size: int | None = Field(None, ge=1, description="test rows per run (default: the split's test part)")
    full_size: bool = Field(False, description="also run every method on each split's whole training part (the "
                            "paper's m); a run the method refuses (e.g. the SDP's memory guard) is recorded as failed")
    vary: VaryParam | None = None

    @field_validator("sizes")
    @classmethod
    def _sizes(cls, v: list[int]) -> list[int]:
        if any(s < 2 for s in v):
            raise ValueError("sizes of at least 2")
        return v


class Comparison(_Strict):
    """Paired comparisons on shared splits: each of ``methods`` against the best of ``against`` per dataset."""

    methods: list[str] = Field(min_length=1, description="methods to compare")
    against: list[str] = Field(min_length=1, description="the reference group; per dataset its best mean is used")


class Calibrated(_Strict):
    """A choice made by matching the paper's own numbers (e.g. a label rule picked because it reproduces the paper's
    random forest): the table marks every cell it touches and prints the note under the table."""

    note: str = Field(min_length=1, description="what was chosen, and against which of the paper's numbers")
    datasets: list[str] | None = Field(None, description="dataset labels it applies to (default: every dataset)")
    methods: list[str] | None = Field(None, description="methods it applies to (default: every method)")

    def applies(self, dataset: str, method: str) -> bool:
        return (self.datasets is None or dataset in self.datasets) and (self.methods is None or method in self.methods)


class Evaluation(_Strict):
    """The evaluation-time table of an accuracy experiment: test-set prediction time per method with the model-size
    factors that set it (support vectors, cosines, Gaussians; from the fits' diagnostics), optionally beside a
    paper's table and with the speed-up of one method over another."""

    reference: str | None = Field(None, description="paper YAML with results: {dataset: {method: {test_ms, nsv, "
                                  "m, m_gauss}}}, relative to the config or configs/")
    speedup: list[str] | None = Field(None, min_length=2, max_length=2, description="[fast, slow]: report slow's "
                                      "test time over fast's, ours (measured in the same run) beside the paper's")


class Landscape(_Strict):
    """The grid of a ``landscape`` experiment: a family's learning objective over two kernel weights."""

    low: float = Field(0.0, description="lowest value of each weight")
    high: float = Field(1.0, description="highest value of each weight")
    points: int = Field(41, ge=3, le=401, description="grid points per axis")
    hessian: bool = Field(True, description="also the smallest Hessian eigenvalue at each grid point (convexity)")

    @model_validator(mode="after")
    def _range(self) -> Landscape:
        if not self.high > self.low:
            raise ValueError(f"high ({self.high}) must be greater than low ({self.low})")
        return self


class Experiment(_Strict):
    name: str
    description: str = ""
    kind: str = Field("accuracy", description="the experiment kind (tkbench.kinds): accuracy, convergence, "
                      "scaling, surface, density or landscape")
    reference: str | None = Field(None, description="paper reference YAML, relative to the config or configs/")
    protocol: Protocol = Field(default_factory=Protocol)
    metric: Literal["default", "ls_error"] = Field(
        "default", description="the metric of the tables: 'default' (accuracy; MSE for regression) or 'ls_error' "
        "(the least-squares error of the clipped decision values on labels scaled to [-1, 1], every task: paper "
        "002's Table 1)")
    datasets: list[DatasetEntry] = Field(min_length=1)
    methods: list[MethodEntry] = Field(min_length=1)
    scaling: Scaling | None = None
    landscape: Landscape | None = Field(None, description="kind 'landscape': the weight grid (default 0..1, 41 "
                                        "points per axis)")
    compare: list[Comparison] = Field(default_factory=list, description="paired comparisons reported beside the "
                                      "tables (wins / ties / losses over the shared splits, Wilcoxon signed-rank)")
    evaluation: Evaluation | None = Field(None, description="accuracy experiments: add the evaluation-time table "
                                          "(test-set prediction time and model size per method)")
    notes: list[str] = Field(default_factory=list, description="deviations from the paper, printed under tables")
    calibrated: list[Calibrated] = Field(default_factory=list, description="choices calibrated on the paper's own "
                                         "numbers: each marks the table cells it applies to, its note under the table")
    no_data: list[str] = Field(default_factory=list, description="datasets of the reference table we have no data "
                               "for (their keys in the reference file): their paper rows are shown, marked 'no data'")
    not_run: list[str] = Field(default_factory=list, description="methods of the reference table we do not run "
                               "(their keys in the reference file): their paper rows are shown beside each data set's "
                               "rows, marked 'not run'")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return _check_name(v)

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        from tkbench.kinds import KINDS

        if v not in KINDS:
            raise ValueError(f"one of the experiment kinds: {', '.join(KINDS)}")
        return v

    @model_validator(mode="after")
    def _kind_fields(self) -> Experiment:  # (surface: 2 features, checked when the data is loaded)
        """The kind's own section (tkbench.kinds: ``scaling:``, ``landscape:``): required where the kind says so
        (an optional one takes its defaults, :meth:`tkbench.kinds.base.Kind.section_of`), refused under any other
        kind."""
        from tkbench.kinds import KINDS

        mine = KINDS[self.kind]
        for kind in KINDS.values():
            if kind.section is None:
                continue
            given = getattr(self, kind.section) is not None
            if kind is mine and not given and kind.section_required:
                raise ValueError(f"kind {kind.name!r} needs a {kind.section!r} section (sizes, repeats, vary)")
            if kind is not mine and given:
                raise ValueError(f"a {kind.section!r} section only goes with kind {kind.name!r}, not {self.kind!r}")
        return self

    # the file the experiment came from (set by load_config; not part of the YAML)
    _source: Path | None = None

    @property
    def source(self) -> Path | None:
        return self._source

    def reference_path(self) -> Path | None:
        if self.reference is None:
            return None
        return resolve_reference(self.reference, self._source)


def resolve_reference(ref: str, source: Path | None) -> Path:
    candidates = [Path(ref)]
    if source is not None:
        candidates.insert(0, source.parent / ref)
    candidates.append(Path(__file__).resolve().parents[1] / "configs" / ref)
    for c in candidates:
        if c.exists():
            return c
    return candidates[0]


class _UniqueKeyLoader(yaml.SafeLoader):
    pass


def _mapping_no_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen[key] = loader.construct_object(value_node, deep=deep)
    return seen


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_no_duplicates)


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("function-after[_from_string()]",) or str(part).startswith(("function-", "constrained-")):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _expected(err: dict[str, Any]) -> str:
    typ, msg = err["type"], err["msg"]
    if typ == "extra_forbidden":
        return "unknown key (check the spelling; see the config reference in README.md)"
    if typ == "missing":
        return "required key is missing"
    if msg.startswith("Value error, "):
        return "expected " + msg[len("Value error, "):]
    return "expected: " + msg[0].lower() + msg[1:]


def _input_at(raw: Any, loc: tuple[Any, ...]) -> Any:
    node = raw
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def parse_config(raw: Any, file: str | Path = "<config>", base: Path | None = None) -> Experiment:
    """Validate an already-loaded YAML document; ``base`` is the folder CSV paths are relative to (default: the
    file's)."""
    file = str(file)
    if not isinstance(raw, dict):
        raise ConfigError(file, [("(top level)", raw, "expected a mapping with name, protocol, datasets, methods")])
    try:
        exp = Experiment.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(p for p in err["loc"] if not str(p).startswith(("function-", "constrained-")))
            value = err.get("input") if err["type"] != "missing" and loc else NOTHING  # (top level: not the file)
            if err["type"] == "extra_forbidden":
                value = _input_at(raw, loc)
            problems.append((_loc(loc), value, _expected(err)))
        raise ConfigError(file, problems) from None
    exp = _resolve_csv(exp, file, base)
    problems = check_semantics(exp)
    if problems:
        raise ConfigError(file, problems)
    return exp


def _resolve_csv(exp: Experiment, file: str, base: Path | None = None) -> Experiment:
    """Each ``csv`` entry's file, relative to the config file (to the current directory for a config without a
    file), read for its sha256 into the entry's options (:func:`tkbench.data.user_csv.options_for`)."""
    from tkbench.data import user_csv

    if not any(ds.csv for ds in exp.datasets):
        return exp
    if base is None:
        base = Path(file).parent if not file.startswith("<") else Path.cwd()
    entries, problems = [], []
    for i, ds in enumerate(exp.datasets):
        if ds.csv is None:
            entries.append(ds)
            continue
        path = base / ds.csv
        if not path.is_file():
            problems.append((f"datasets[{i}].csv", ds.csv, f"a CSV file that exists (looked for {path.absolute()})"))
            entries.append(ds)
            continue
        rule = {k: getattr(ds, k) for k in user_csv.RULE_FIELDS}
        rule["threshold"] = ds.threshold.model_dump() if ds.threshold is not None else None
        entries.append(ds.model_copy(update={"options": user_csv.options_for(path, rule)}))
    if problems:
        raise ConfigError(file, problems)
    resolved = exp.model_copy(update={"datasets": entries})
    resolved._source = exp._source
    return resolved


def load_config(path: str | Path, check_reference: bool = True, base: Path | None = None) -> Experiment:
    """Read, parse and validate an experiment config (``base``: the folder its CSV paths are relative to, when not
    the file's own: a config copied into a results folder)."""
    path = Path(path)
    try:
        raw = load_yaml(path, "config file", _UniqueKeyLoader)
    except UnreadableFile as exc:
        raise ConfigError(str(path), [(exc.where, NOTHING, exc.what)]) from None
    if raw is None:
        raise ConfigError(str(path), [("(file)", NOTHING, "the file is empty (or only comments): expected a mapping with "
                                       "name, protocol, datasets, methods")])
    exp = parse_config(raw, path, base)
    exp._source = path.resolve()
    ref = exp.reference_path()
    if check_reference and ref is not None and not ref.exists():
        raise ConfigError(str(path), [("reference", exp.reference, "a reference YAML file that exists")])
    if check_reference and ref is not None and (exp.no_data or exp.not_run):
        problems = _paper_only_problems(exp, ref)
        if problems:
            raise ConfigError(str(path), problems)
    if (check_reference and exp.evaluation is not None and exp.evaluation.reference is not None
            and not resolve_reference(exp.evaluation.reference, exp._source).exists()):
        raise ConfigError(str(path), [("evaluation.reference", exp.evaluation.reference,
                                       "a reference YAML file that exists")])
    return exp


def _paper_only_problems(exp: Experiment, ref: Path) -> list[tuple[str, Any, str]]:
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
        needed = sorted(set(tasks.values()))
        for task in needed:
            if task not in fam.tasks:
                problems.append((f"{where}.family", m.family, f"a family that supports {task} (datasets need it)"))
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
        grids = [fam.default_grid if m.grid is None else m.grid, *m.per_dataset_grid.values()]
        if exp.protocol.cv_score == "ls_error" and fam.path_param and any(fam.path_param in g for g in grids):
            problems.append((f"{where}.grid.{fam.path_param}", fam.path_param,
                             "no path parameter in the grid with protocol.cv_score 'ls_error' (it scores decision "
                             "values, the path gives labels only): fix it in params, or grid: {}"))
        for label in m.datasets or []:
            if label not in labels:
                problems.append((f"{where}.datasets", label,
                                 f"the label of a dataset of this config: {', '.join(labels) or '(none)'}"))
        for field_name in ("max_train", "cv_max_train"):
            value = getattr(m, field_name)
            for label, cap in (value if isinstance(value, dict) else {}).items():
                if label not in labels:
                    problems.append((f"{where}.{field_name}.{label}", cap,
                                     f"the label of a dataset of this config: {', '.join(labels) or '(none)'}"))
                elif not isinstance(cap, int) or cap < 10:
                    problems.append((f"{where}.{field_name}.{label}", cap, "a number of rows >= 10"))
            if isinstance(value, int) and value < 10:
                problems.append((f"{where}.{field_name}", value, "a number of rows >= 10"))
        for label, k in (m.splits if isinstance(m.splits, dict) else {}).items():
            if label not in labels:
                problems.append((f"{where}.splits.{label}", k,
                                 f"the label of a dataset of this config: {', '.join(labels) or '(none)'}"))
            elif not isinstance(k, int) or k < 1:
                problems.append((f"{where}.splits.{label}", k, "a number of splits >= 1"))
        if isinstance(m.splits, int) and m.splits < 1:
            problems.append((f"{where}.splits", m.splits, "a number of splits >= 1"))
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
                elif len(values) == 0:
                    problems.append((f"{where}.per_dataset_grid.{label}.{key}", values, "a non-empty list of values"))
                elif key in m.params or key in m.per_dataset.get(label, {}):
                    problems.append((f"{where}.per_dataset_grid.{label}.{key}", values,
                                     "a parameter set in either params or grid, not both"))
        for key, values in (m.grid or {}).items():
            if key not in allowed:
                problems.append((f"{where}.grid.{key}", values, not_a_param(key)))
            elif len(values) == 0:
                problems.append((f"{where}.grid.{key}", values, "a non-empty list of values"))
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
    problems.extend(kind.experiment_problems(exp))
    return problems
