"""Checks a run makes before dispatching anything (issue 22): problems that would fail every run of a cell are
reported at once, as bad input (exit 2), also by ``--dry-run``.

- every dataset the pending runs need is loaded once: a changed or missing data file (sha256 against the registry)
  stops here, not run by run;
- ``subsample`` must not exceed the dataset's rows (it used to be ignored silently);
- ``cv_folds`` must not exceed the rows of a training part that is tuned by CV (k-fold CV needs k rows at least;
  every split's training part is drawn here, as the run will draw it, so the smallest one is checked);
- ``features`` must be columns the dataset has;
- every split must leave a training part of at least 2 rows (with 2 classes, for classification) and a test part
  of at least 1 row (a ``test_fraction`` close to 1 used to fail every run after loading its data).
"""
from __future__ import annotations

from tkbench.bench.learn import split_rows
from tkbench.config import Experiment
from tkbench.data import load_dataset
from tkbench.data.base import select_features
from tkbench.errors import ConfigError, DatasetError
from tkbench.kinds import get_kind


def check_requirements(exp: Experiment, specs) -> None:
    """Raise one error naming every method whose runs in ``specs`` need an optional extra that is not installed
    (the peers': MKLpy, liquidSVM, GPyTorch): nothing runs, rather than one failed row per run."""
    if not get_kind(exp.kind).learners:
        return
    from tkbench.methods import get_family

    used = {s.method for s in specs}
    problems: list[tuple[str, object, str]] = []
    for j, m in enumerate(exp.methods):
        if m.name not in used:
            continue
        fam = get_family(m.family)
        missing = fam.missing()
        if missing:
            problems.append((f"methods[{j}].family", m.family, f"an installed family: it needs {', '.join(missing)} "
                             f"({fam.install_hint or 'not installed'}), or leave {m.name} out "
                             f"(--only DATASET/METHOD patterns of the other methods)"))
    if problems:
        raise ConfigError(str(exp.source or exp.name), problems)


def check_data(exp: Experiment, specs) -> None:
    """Raise one error naming every problem of the datasets the runs in ``specs`` use."""
    kind = get_kind(exp.kind)
    if not kind.preflight_data:  # its runs draw their own points (density: balanced draws)
        return
    needed = {(s.label, s.dataset) for s in specs}
    problems: list[tuple[str, object, str]] = []
    for i, ds in enumerate(exp.datasets):
        if (ds.label, ds.name) not in needed:
            continue
        try:
            data = load_dataset(ds.name, ds.options)
        except DatasetError as exc:
            problems.append((f"datasets[{i}]", ds.name, f"readable, unchanged data ({exc})"))
            continue
        if ds.features is not None:
            try:
                select_features(data, ds.features)
            except ValueError as exc:
                problems.append((f"datasets[{i}].features", ds.features, f"columns of {ds.label} ({exc})"))
                continue
        sub = ds.subsample or exp.protocol.subsample
        if sub is not None and sub > len(data.y):
            field = f"datasets[{i}].subsample" if ds.subsample is not None else "protocol.subsample"
            problems.append((field, sub, f"at most {len(data.y)} (the rows of {ds.label})"))
            continue
        drawn: dict[tuple, tuple] = {}  # each split is drawn once here (the check and the CV's size share it)

        def rows_of(s, data=data, drawn=drawn):
            key = (s.split, s.size, s.seed, s.test_fraction, s.stratify, s.subsample)
            if key not in drawn:
                drawn[key] = split_rows(data, s, s.split, s.seed, kind.exact_size)
            return drawn[key]

        problem = _split_problem(data, [s for s in specs if s.label == ds.label], rows_of) \
            if kind.preflight_splits else None
        if problem is not None:
            field = f"datasets[{i}].test_fraction" if ds.test_fraction is not None else "protocol.test_fraction"
            problems.append((field, ds.test_fraction or exp.protocol.test_fraction, problem))
            continue
        tuned = [s for s in specs if s.label == ds.label and s.grid]
        smallest = min(((len(rows_of(s)[0]), s) for s in
                        {(s.split, s.size, s.seed): s for s in tuned}.values()), default=None,
                       key=lambda pair: pair[0])
        if smallest is not None and smallest[0] < exp.protocol.cv_folds:
            rows, s = smallest
            problems.append(("protocol.cv_folds", exp.protocol.cv_folds,
                             f"at most {rows}: the training part of {ds.label} split {s.split}"
                             + (f" (m = {s.size})" if s.size is not None else "") + f" has {rows} rows for the CV "
                             f"of {s.method} (lower cv_folds, or give the method fixed params and grid: {{}})"))
    if problems:
        raise ConfigError(str(exp.source or exp.name), problems)


def _split_problem(data, specs, rows_of) -> str | None:
    """What is wrong with the splits the runs in ``specs`` will draw (None: nothing); ``rows_of(spec)`` draws a
    run's (training, test) rows."""
    import numpy as np

    for s in {(s.split, s.size, s.seed): s for s in specs}.values():
        try:
            train, test = rows_of(s)
        except ValueError as exc:  # scikit-learn's splitter: no row left on one side
            return f"a fraction that leaves rows on both sides of split {s.split} of {s.label} ({exc})"
        if len(train) < 2 or len(test) < 1:
            return (f"a fraction that leaves at least 2 training rows and 1 test row: split {s.split} of {s.label} "
                    f"has {len(train)} training and {len(test)} test rows")
        if data.task == "classification" and len(np.unique(data.y[train])) < 2:
            return (f"a fraction whose training parts hold 2 classes or more: split {s.split} of {s.label} has one "
                    f"class in its {len(train)} training rows")
    return None
