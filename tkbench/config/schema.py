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

The schema: pydantic models of every section (unknown keys are errors); loading is :mod:`tkbench.config.load`,
the checks that need the registries :mod:`tkbench.config.checks`. Every error is reported as
``file: key.path: value: what was expected``; :func:`tkbench.config.load_config` raises
:class:`~tkbench.errors.ConfigError` with all of them.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


MAX_SPLITS = 10_000  # a plan is built in memory: 10^30 splits would never finish planning


def _rule(ok, said: str):
    """A check pydantic runs after the type (its error: ``expected <said>``)."""
    def check(value):
        if not ok(value):
            raise ValueError(said)
        return value
    return AfterValidator(check)


# the list and count rules, as types: pydantic checks them wherever they appear, the error names the key
Rows = Annotated[int, Field(strict=True), _rule(lambda v: 10 <= v <= 10**9, "a number of rows >= 10")]
SplitCount = Annotated[int, Field(strict=True), _rule(lambda v: 1 <= v <= MAX_SPLITS,
                                                      f"a number of splits from 1 to {MAX_SPLITS}")]
GridValues = Annotated[list[Any], _rule(len, "a non-empty list of values")]


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
    grid: dict[str, GridValues] | None = Field(None, description="CV grid; omitted: the family default; {}: no CV")
    per_dataset_grid: dict[str, dict[str, GridValues]] = Field(
        default_factory=dict, description="a CV grid that replaces 'grid' on the named datasets (by label)")
    datasets: list[str] | None = Field(
        None, min_length=1, description="run this method on these datasets only (labels); none: on all of them")
    splits: SplitCount | dict[str, SplitCount] | None = Field(
        None, description="run only the first k of the protocol's splits for this method (an expensive method; the "
        "report says so), or {dataset label: k} for the named datasets only")
    vary: VaryParam | None = Field(None, description="scaling experiments: this method's own second size axis "
                                   "(replaces scaling.vary for it)")
    max_train: Rows | dict[str, Rows] | None = Field(
        None, description="train this method on at most this many rows of each split's training part (seeded; "
        "the test part is unchanged), or {dataset label: rows}; the report says so")
    tune_on_first: SplitCount | dict[str, SplitCount] | None = Field(
        None, description="this method's own protocol.tune_on_first (a costly family: e.g. 1, CV on the first "
        "split's training part only, the choice used on every split), or {dataset label: k} for the named datasets "
        "only (the others keep the protocol's); the report says so")
    cv_max_train: Rows | dict[str, Rows] | None = Field(
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

    def tune_on(self, label: str) -> int | None:
        """The method's own ``tune_on_first`` for dataset ``label`` (None: the protocol's)."""
        return self.tune_on_first.get(label) if isinstance(self.tune_on_first, dict) else self.tune_on_first


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
    budget_seconds: float | None = Field(
        None, gt=0, description="a series (dataset, method, varied value) stops growing at its first run that took "
        "longer than this or did not finish ok: its larger sizes are not started, and the report lists them as "
        "not reached (sizes run in the order given: list them ascending)")

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


class RelativeErrors(_Strict):
    """Relative errors against one baseline and the gain / risk curves among a group of methods (paper 002's
    Figure 2; tkbench.report.relative), ours beside the paper's from the reference file."""

    baseline: str = Field(description="the method every error is divided by (paper 002: the SVM)")
    methods: list[str] = Field(min_length=2, description="the methods compared (the gain and risk panels compare "
                               "each with the best of the others)")
    max_percent: float = Field(50.0, gt=0, le=1000, description="the right end of the gain and risk axes (%)")


class LearningCurve(_Strict):
    """Test accuracy against the training size for the datasets of an accuracy config that hold the same data at
    several sizes (tkbench.report.learning; paper 000 Figures 5 and 7)."""

    residual: bool = Field(False, description="draw the residual error 1 - accuracy on a log axis (the paper's "
                           "semilog plot) instead of the accuracy")


class Leaderboard(_Strict):
    """The cross-method leaderboard of an accuracy experiment (tkbench.report.leaderboard): per task, average ranks
    with Friedman / Nemenyi, ranking stability under a bootstrap over datasets and leave-one-dataset-out, the
    Bayesian signed-rank test for the leading pairs, the win / tie / loss matrix and accuracy against time."""

    rope_accuracy: float = Field(1.0, ge=0, description="region of practical equivalence for accuracy, in "
                                 "percentage points")
    rope_mse: float = Field(0.01, ge=0, description="region of practical equivalence for MSE: a relative "
                            "difference (the test compares -log MSE)")
    bootstrap: int = Field(2000, ge=100, le=100_000, description="bootstrap resamples of the datasets")
    pairs: int = Field(3, ge=2, le=10, description="the Bayesian signed-rank test for every pair among the top "
                       "this many methods by average rank")
    groups: dict[str, list[str]] = Field(default_factory=dict, description="named subsets of the config's datasets "
                                         "(their labels, one task per subset), each with a leaderboard of its own "
                                         "that ranks the methods with a mean on every dataset of the subset (a "
                                         "method unfinished or not planned on a set of another subset is still "
                                         "ranked here)")

    @field_validator("groups")
    @classmethod
    def _groups(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for name, labels in value.items():
            if not name.strip():
                raise ValueError("a group needs a name (the key)")
            if len(labels) < 2:
                raise ValueError(f"group {name!r}: {labels!r}: at least two datasets (a ranking needs two)")
            twice = sorted({x for x in labels if labels.count(x) > 1})
            if twice:
                raise ValueError(f"group {name!r}: {', '.join(twice)} listed twice")
        return value


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
    leaderboard: Leaderboard | None = Field(None, description="accuracy experiments: add the per-task leaderboard "
                                            "(ranks, their stability, Bayesian signed-rank tests, win / tie / loss "
                                            "matrix, accuracy against time)")
    learning_curve: LearningCurve | None = Field(None, description="accuracy experiments: accuracy against the "
                                                 "training size for datasets held at several sizes")
    relative_errors: RelativeErrors | None = Field(None, description="accuracy experiments: relative errors against "
                                                   "a baseline and the gain / risk curves (paper 002 Figure 2)")
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
    candidates.append(Path(__file__).resolve().parents[2] / "configs" / ref)  # the checkout's configs/
    for c in candidates:
        if c.exists():
            return c
    return candidates[0]
