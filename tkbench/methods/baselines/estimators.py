"""Baselines of papers 000 and 003: random forest, neural net, RBF SVM (classification and regression), and the
Gaussian process with one length scale per feature (``gp_ard``, :mod:`tkbench.methods.baselines.gp`; issue 51).

- ``random_forest``: scikit-learn forests, 50..650 trees in steps of 50 chosen by CV (paper 003, section 7, [RF]).
  The number of trees is scored along a path: one forest of the largest size per fold, whose first k trees are
  exactly the forest of k trees that scikit-learn would grow with the same seed.
- ``neural_net``: 3 hidden layers of 50 units with early stopping (paper 003 [NNet]: stop after 50 epochs without
  validation improvement; paper 000: MATLAB patternnet).
- ``svm_rbf``: LIBSVM through scikit-learn's SVC / SVR with a Gaussian kernel, C and gamma by CV.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.svm import SVC, SVR

from tkbench.methods._shared.report import SolverReport
from tkbench.methods.family import Family, register


def _build_forest(task: str, solver: str, params: dict[str, Any], seed: int):
    cls = RandomForestClassifier if task == "classification" else RandomForestRegressor
    return cls(**{"n_estimators": 100, "random_state": seed, "n_jobs": 1, **params})


def _forest_path(model, X: np.ndarray, values: list[int], decision: bool = False) -> dict[int, np.ndarray]:
    """Predictions of the forests made of the first k trees, for every k in ``values`` (one pass over the trees);
    ``decision``: a classifier's 2 P(c | x) - 1 (the second class's for two classes), the decision values of
    :func:`tkbench.bench.least_squares.decision_matrix` for learners without a ``decision_function``."""
    wanted = sorted(set(int(v) for v in values))
    if wanted[-1] > len(model.estimators_):
        raise ValueError(f"path asks for {wanted[-1]} trees but the forest has {len(model.estimators_)}")
    classify = hasattr(model, "classes_")
    total = None
    out: dict[int, np.ndarray] = {}
    for k, tree in enumerate(model.estimators_, start=1):
        part = tree.predict_proba(X) if classify else tree.predict(X)
        total = part.astype(float) if total is None else total + part
        if k in wanted:
            avg = total / k
            if not classify:
                out[k] = avg
            elif decision:
                out[k] = 2.0 * (avg[:, 1] if avg.shape[1] == 2 else avg) - 1.0
            else:
                out[k] = model.classes_[np.argmax(avg, axis=1)]
        if k == wanted[-1]:
            break
    return out


def _forest_diagnostics(model) -> dict[str, Any]:
    depths = [t.get_depth() for t in model.estimators_]
    return SolverReport("CART trees (scikit-learn)", None, None, "no iterative solver: each tree grown until its "
                        "leaves are pure or at min_samples_split", extras={"n_trees": len(model.estimators_),
                                                                           "mean_depth": float(np.mean(depths))}
                        ).as_diagnostics()


def _build_mlp(task: str, solver: str, params: dict[str, Any], seed: int):
    cls = MLPClassifier if task == "classification" else MLPRegressor
    defaults = {
        "hidden_layer_sizes": (50, 50, 50),
        "early_stopping": True,
        "n_iter_no_change": 50,
        "max_iter": 2000,
        "random_state": seed,
        "solver": solver,
    }
    merged = {**defaults, **params}
    if isinstance(merged["hidden_layer_sizes"], list):
        merged["hidden_layer_sizes"] = tuple(merged["hidden_layer_sizes"])
    return cls(**merged)


def _mlp_diagnostics(model) -> dict[str, Any]:
    extras = {"final_loss": float(model.loss_)}
    if getattr(model, "best_validation_score_", None) is not None:
        extras["best_validation_score"] = float(model.best_validation_score_)
    early = bool(getattr(model, "early_stopping", False))
    rule = (f"no improvement of the validation score by tol = {model.tol:g} for n_iter_no_change = "
            f"{model.n_iter_no_change} epochs" if early else
            f"no improvement of the training loss by tol = {model.tol:g} for {model.n_iter_no_change} epochs")
    return SolverReport(f"{model.solver} (scikit-learn MLP)", int(model.n_iter_), int(model.n_iter_) < model.max_iter,
                        f"{rule}, or max_iter = {model.max_iter}", extras=extras).as_diagnostics()


def _mlp_trace(model) -> list[dict[str, Any]]:
    scores = getattr(model, "validation_scores_", None) or [None] * len(model.loss_curve_)
    return [{"iteration": i + 1, "loss": float(v), "validation_score": s}
            for i, (v, s) in enumerate(zip(model.loss_curve_, scores, strict=False))]


def _build_svm(task: str, solver: str, params: dict[str, Any], seed: int):
    if task == "classification":
        return SVC(**{"kernel": "rbf", "C": 1.0, "gamma": "scale", "cache_size": 500, "random_state": seed, **params})
    return SVR(**{"kernel": "rbf", "C": 1.0, "gamma": "scale", "epsilon": 0.1, "cache_size": 500, **params})


def _svm_diagnostics(model) -> dict[str, Any]:
    n_iter = getattr(model, "n_iter_", None)
    return SolverReport("LIBSVM SMO (scikit-learn SVC / SVR)", None if n_iter is None else int(np.sum(n_iter)),
                        int(model.fit_status_) == 0,
                        f"LIBSVM's KKT tolerance tol = {model.tol:g}, or its iteration cap (max_iter = "
                        f"{model.max_iter})",
                        extras={"n_support": int(np.sum(model.n_support_)) if hasattr(model, "n_support_")
                                else len(model.support_), "fit_status": int(model.fit_status_)}).as_diagnostics()


register(Family(
    name="random_forest",
    description="random forest (scikit-learn), number of trees 50..650 by CV",
    build=_build_forest,
    solvers=("cart",),
    default_grid={"n_estimators": list(range(50, 651, 50))},
    scaler="none",
    path_param="n_estimators",
    path_predict=_forest_path,
    diagnostics=_forest_diagnostics,
    reference="Breiman 2001; paper 003 section 7 [RF]",
))

register(Family(
    name="neural_net",
    description="multi-layer perceptron, 3 hidden layers of 50, early stopping (patience 50)",
    build=_build_mlp,
    solvers=("adam", "lbfgs", "sgd"),
    default_grid={},
    scaler="standard",
    target_scaler="standard",
    diagnostics=_mlp_diagnostics,
    trace=_mlp_trace,
    reference="paper 000 section 8 and paper 003 section 7 [NNet]",
))

register(Family(
    name="svm_rbf",
    description="SVM / SVR with a Gaussian kernel (LIBSVM via scikit-learn), C and gamma by CV",
    build=_build_svm,
    solvers=("libsvm",),
    default_grid={"C": [0.1, 1.0, 10.0, 100.0], "gamma": [0.001, 0.01, 0.1, 1.0]},
    scaler="standard",
    target_scaler="standard",
    diagnostics=_svm_diagnostics,
    reference="Chang & Lin, LIBSVM (2011)",
))


def _build_gp_ard(task: str, solver: str, params: dict[str, Any], seed: int):
    from tkbench.methods.baselines.gp import ARDGaussianProcessClassifier, ARDGaussianProcessRegressor

    cls = ARDGaussianProcessClassifier if task == "classification" else ARDGaussianProcessRegressor
    return cls(**{"random_state": seed, **params})


register(Family(
    name="gp_ard",
    description="Gaussian process with an anisotropic (ARD) RBF kernel, one length scale per feature by maximum "
                "marginal likelihood (scikit-learn); no CV grid",
    build=_build_gp_ard,
    solvers=("lbfgs",),
    default_grid={},
    scaler="standard",
    diagnostics=lambda model: model.diagnostics(),
    reference="Rasmussen & Williams 2006, section 5.4.1 (scikit-learn's GaussianProcessRegressor / Classifier)",
))
