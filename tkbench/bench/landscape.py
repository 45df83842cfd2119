"""One run of a ``landscape`` experiment: a family's learning objective over a grid of two kernel weights.

Paper 001, Figure 1 plots F(mu1, mu2) = y^T (K_mu + lambda I)^-1 y for two linear base kernels made from the first
two features of Sonar, at lambda = 1, 10, 100, and notes concave regions near mu = 0 for large lambda. Here the
dataset (all its rows, restricted to the config's ``features``) is pre-processed by the method's scaler, the
labels are coded -1 / +1 (classification) or standardised (regression), and the family's ``landscape`` function
evaluates its objective, and the smallest eigenvalue of its Hessian (negative: F is not convex there), on the
``points x points`` grid of [low, high]^2. Nothing is trained and nothing is split: ``protocol.splits`` should
be 1 (each further split is the same computation).
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from tkbench.bench.spec import RunSpec
from tkbench.data import load_dataset
from tkbench.data.base import select_features
from tkbench.methods import get_family
from tkbench.methods._shared.scalers import make_scaler


def run_landscape(spec: RunSpec, row: dict[str, Any]) -> None:
    ds = select_features(load_dataset(spec.dataset, spec.options), spec.features)
    scaler = make_scaler(spec.scaler)
    X = ds.X if scaler == "passthrough" else scaler.fit_transform(ds.X)
    if ds.task == "classification":
        if ds.n_classes != 2:
            raise ValueError(f"a landscape on labels needs two classes, {ds.name} has {ds.n_classes}")
        y = np.where(ds.y == np.unique(ds.y)[1], 1.0, -1.0)
    else:
        y = (ds.y - ds.y.mean()) / (ds.y.std() or 1.0)
    grid = spec.landscape
    axis = np.linspace(float(grid["low"]), float(grid["high"]), int(grid["points"]))
    family = get_family(spec.family)
    t0 = time.perf_counter()
    out = family.landscape(ds.task, dict(spec.params), X, y, axis, hessian=bool(grid["hessian"]))
    row["fit_seconds"] = time.perf_counter() - t0
    values = np.asarray(out.pop("values"), dtype=float)
    eig = out.pop("min_eigenvalue", None)
    i, j = np.unravel_index(np.argmin(values), values.shape)
    row.update(n_train=len(y), n_test=0, n_features=X.shape[1], n_classes=ds.n_classes, metric="objective_min",
               params=dict(spec.params), landscape={
                   "axis": np.round(axis, 10).tolist(), "values": values.tolist(),
                   "min_eigenvalue": None if eig is None else np.asarray(eig, dtype=float).tolist(), **out},
               objective_min=float(values.min()), objective_max=float(values.max()),
               argmin=[float(axis[j]), float(axis[i])], y_norm2=float(y @ y))
    if eig is not None:
        row["concave_fraction"] = float(np.mean(np.asarray(eig) < 0))
