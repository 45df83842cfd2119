"""One run of a ``density`` experiment (paper 000, section 4.3.3, Figure 2).

A balanced draw of ``subsample`` rows (half per class, seeded; Theorem 10's K* = y y^T needs sum(y) = 0 for the
figure's setting) is scaled to [0, 1]^n, and the kernel class named by the method is fitted to the optimal kernel
matrix K* in the element-wise 1-norm (Problem (20), divided by m^2) and infinity-norm (Problem (21)).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.preprocessing import MinMaxScaler

from tkbench.bench.kernel_classes import get_kernel_class
from tkbench.bench.kernel_fit import NORMS, KernelFitProblem, optimal_kernel_matrix
from tkbench.bench.spec import RunSpec
from tkbench.data import load_dataset


def balanced_draw(y: np.ndarray, size: int, seed: int) -> np.ndarray:
    """``size`` row indices, ``size // 2`` from each of the two classes, drawn without replacement."""
    classes = np.unique(y)
    if len(classes) != 2:
        raise ValueError(f"a density experiment needs two classes, the data has {len(classes)}")
    if size % 2:
        raise ValueError(f"subsample must be even for a balanced draw (sum y = 0), got {size}")
    rng = np.random.default_rng(seed)
    parts = []
    for c in classes:
        rows = np.flatnonzero(y == c)
        if len(rows) < size // 2:
            raise ValueError(f"class {c!r} has {len(rows)} rows, fewer than {size // 2}")
        parts.append(rng.choice(rows, size // 2, replace=False))
    return np.sort(np.concatenate(parts))


def run_density(spec: RunSpec, row: dict[str, Any]) -> None:
    ds = load_dataset(spec.dataset, spec.options)
    if ds.task != "classification":
        raise ValueError(f"a density experiment needs a classification data set, {spec.dataset} is {ds.task}")
    size = spec.subsample or 20
    rows = balanced_draw(ds.y, int(size), spec.seed)
    X = ds.X[rows]
    X01 = MinMaxScaler().fit_transform(X)  # the TK class needs [0, 1]^n (spec scaler: minmax)
    y = np.where(ds.y[rows] == np.unique(ds.y)[1], 1.0, -1.0)
    target = optimal_kernel_matrix(y)
    cls = get_kernel_class(spec.family)
    kmap = cls.basis(X01, spec.params)
    row.update(n_train=len(rows), n_test=0, n_features=X.shape[1], n_classes=2, metric="objective_l1",
               n_variables=kmap.n_variables, params=cls.resolve(spec.params))
    fits = {}
    problem = KernelFitProblem(kmap, target)
    for norm in NORMS:
        fit = problem.solve(norm, solver=spec.solver)
        fits[norm] = fit
        row[f"objective_{norm}"] = fit.value
        row[f"status_{norm}"] = fit.status
        row[f"seconds_{norm}"] = fit.seconds
    row["fit_seconds"] = sum(f.seconds for f in fits.values())
    row["negative_entries"] = float(np.mean(fits["l1"].K < 0))  # share of negative entries in the 1-norm fit
    if spec.vary:
        row["size_value"] = spec.vary["value"]
