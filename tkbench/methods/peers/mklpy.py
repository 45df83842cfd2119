"""MKLpy 0.6 (Lauriola & Aiolli 2020) as a scikit-learn classifier on a list of kernels built from the inputs.

MKLpy's estimators take lists of precomputed kernel matrices (torch tensors); this adapter builds the list from X
the way MKLpy's own example does (rows rescaled to [0, 1] by the runner's min-max scaler, then each row scaled to
unit norm, ``MKLpy.preprocessing.normalization``; homogeneous polynomial kernels of degrees 1..10,
``MKLpy.metrics.pairwise.homogeneous_polynomial_kernel``), optionally with Gaussian kernels on the same rows, and
the test kernels against the training rows. Algorithms (classification only, as MKLpy):

- ``easymkl``: EasyMKL (Aiolli & Donini 2015), margin-based combination with its default KOMD learner, ``lam``
  in [0, 1];
- ``gram``: GRAM (Lauriola et al. 2017), radius-margin ratio by gradient steps on the weights (``max_iter``,
  ``learning_rate``), then an SVC (``C``) on the combined kernel, as MKLpy's tutorial;
- ``average``: AverageMKL, the uniform average of the kernels, then an SVC (``C``).

More than two classes: MKLpy's own one-vs-rest wrapper (``multiclass_strategy='ova'``).
"""
from __future__ import annotations

import warnings
from contextlib import contextmanager
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from tkbench.methods._shared.report import SolverReport
from tkbench.methods.peers.imports import need, version

ALGORITHMS = {"easymkl": "EasyMKL", "gram": "GRAM", "average": "AverageMKL"}


def _numpy(values) -> np.ndarray:
    return values.detach().cpu().numpy() if hasattr(values, "detach") else np.asarray(values)



@contextmanager
def _quiet_torch():
    """MKLpy 0.6 uses two idioms that torch deprecates (``x.T`` on tensors that are not 2-D, ``torch.tensor`` of a
    tensor), and torch warns on every call, which buries a sweep's log: those two warnings only are silenced,
    around MKLpy's own calls."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"The use of `x\.T` on tensors", category=UserWarning)
        warnings.filterwarnings("ignore", message=r"To copy construct from a tensor", category=UserWarning)
        yield


class MKLpyClassifier(ClassifierMixin, BaseEstimator):
    """Parameters
    ----------
    algorithm : {"easymkl", "gram", "average"}, default="easymkl"
        the MKLpy algorithm (the family's solver).
    kernels : {"hpk", "rbf", "both"}, default="hpk"
        homogeneous polynomial kernels of ``degrees`` (MKLpy's example), Gaussian kernels of ``gammas``, or both.
    degrees : list of int, default=(1, ..., 10)
        degrees of the homogeneous polynomial kernels (MKLpy's example).
    gammas : list of float, default=(0.5, 1, 2, 4, 8, 16, 32)
        Gaussian widths on the unit-norm rows (squared distances in [0, 2] for non-negative inputs).
    lam : float in [0, 1], default=0.1
        EasyMKL's lambda (and its KOMD learner's).
    C : float > 0, default=1000.0
        the SVC's C for ``gram`` and ``average`` (MKLpy's tutorial value).
    max_iter : int >= 1, default=100
        GRAM's gradient steps (MKLpy's default 1000 costs ten times more; the tutorial stops on a plateau).
    learning_rate : float > 0, default=0.01
        GRAM's step size (MKLpy's default).
    """

    _parameter_constraints: ClassVar[dict] = {
        "algorithm": [StrOptions(set(ALGORITHMS))],
        "kernels": [StrOptions({"hpk", "rbf", "both"})],
        "degrees": [list, tuple],
        "gammas": [list, tuple],
        "lam": [Interval(Real, 0, 1, closed="both")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, algorithm="easymkl", kernels="hpk", degrees=tuple(range(1, 11)),
                 gammas=(0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0), lam=0.1, C=1000.0, max_iter=100, learning_rate=0.01):
        self.algorithm = algorithm
        self.kernels = kernels
        self.degrees = degrees
        self.gammas = gammas
        self.lam = lam
        self.C = C
        self.max_iter = max_iter
        self.learning_rate = learning_rate

    def _rows(self, X: np.ndarray):
        """MKLpy's ``normalization`` (each row to unit norm), except that a zero row stays zero where MKLpy
        divides by its zero norm and hands NaN to the solver (``Input X contains NaN``): on the original breast
        cancer every benign row at the minimum of all nine features is zero after min-max scaling. A zero row
        has kernel value 0 with every row under the homogeneous polynomial kernels, as its limit would."""
        torch = need("torch", "torch")
        prep = need("MKLpy.preprocessing", "MKLpy")
        X = np.asarray(X, dtype=float)
        zero = ~np.any(X != 0, axis=1)
        out = prep.normalization(torch.tensor(np.where(zero[:, None], 1.0, X)))
        out[torch.from_numpy(zero)] = 0.0
        return out

    def _kernel_list(self, A, B) -> list:
        pairwise = need("MKLpy.metrics.pairwise", "MKLpy")
        out = []
        if self.kernels in ("hpk", "both"):
            out += [pairwise.homogeneous_polynomial_kernel(A, B, degree=int(d)) for d in self.degrees]
        if self.kernels in ("rbf", "both"):
            out += [pairwise.rbf_kernel(A, B, gamma=float(g)) for g in self.gammas]
        return out

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_data(self, X, y)
        torch = need("torch", "torch")
        algorithms = need("MKLpy.algorithms", "MKLpy")
        svm = need("sklearn.svm", "scikit-learn")
        self.encoder_ = LabelEncoder().fit(y)
        self.classes_ = self.encoder_.classes_
        if len(self.classes_) < 2:
            raise ValueError(f"MKLpy needs at least 2 classes, got {len(self.classes_)}")
        self.rows_ = self._rows(X)
        KL = self._kernel_list(self.rows_, self.rows_)
        target = torch.tensor(self.encoder_.transform(y))
        cls = getattr(algorithms, ALGORITHMS[self.algorithm])
        if self.algorithm == "easymkl":
            komd = need("MKLpy.algorithms.komd", "MKLpy").KOMD
            model = cls(lam=float(self.lam), learner=komd(lam=float(self.lam)))
        elif self.algorithm == "gram":
            model = cls(max_iter=int(self.max_iter), learning_rate=float(self.learning_rate),
                        learner=svm.SVC(C=float(self.C)))
        else:
            model = cls(learner=svm.SVC(C=float(self.C)))
        with _quiet_torch():
            try:
                self.model_ = model.fit(KL, target)
            except ValueError as exc:
                if self.algorithm != "gram" or "domain error" not in str(exc):
                    raise
                raise ValueError(self._gram_failure(KL, target)) from exc
        self.n_kernels_ = len(KL)
        solution = getattr(self.model_, "solution", None)
        weights = getattr(solution, "weights", None)
        self.weights_ = None if weights is None else _numpy(weights).astype(float)
        return self

    def _gram_failure(self, KL: list, target) -> str:
        """Why GRAM failed, in words (cvxopt only says "domain error"). GRAM minimises the radius-margin ratio
        with the hard margin between the classes (MKLpy's ``opt_margin``: the distance between their convex hulls
        in the kernel's feature space). Where the classes are not separable that margin is about 0, the ratio's
        gradient divides by its square, the first exponentiated step on the weights overflows (exp of a step of
        about 7e4 in log-weight on Liver's split 0: NaN weights), and cvxopt's next QP meets a NaN kernel. Measured on split 0 of the benchmark
        (MKLpy's ``margin`` of the kernels' average): Liver 0.00042 and Pima 0.00076, where GRAM fails on every
        split so far, against Heart 0.056 and Sonar 0.11, where it runs."""
        reason = (f"GRAM (MKLpy {version('MKLpy')}) failed: cvxopt's QP got a kernel with non-finite entries "
                  f"after the first steps on the weights (learning_rate {self.learning_rate:g}).")
        if len(self.classes_) != 2:
            return reason + (" GRAM's radius-margin ratio needs a hard margin between the classes, and one of the "
                             "one-vs-rest problems has none; EasyMKL and AverageMKL do not need one.")
        metrics = need("MKLpy.metrics", "MKLpy")
        average = sum(KL) / len(KL)
        try:
            gap = float(metrics.margin(average, target))
        except Exception:  # noqa: BLE001 (the explanation is best effort: never hide the failure behind another)
            return reason + " GRAM needs a hard margin between the classes (its radius-margin ratio)."
        return reason + (f" The classes have no usable hard margin in the kernels' average (MKLpy's margin "
                         f"{gap:.3g}): GRAM's radius-margin ratio then has a gradient near 1 / 0 and its step "
                         "overflows. GRAM needs classes separable in the kernels' feature space; EasyMKL and "
                         "AverageMKL do not.")

    def _test_kernels(self, X) -> list:
        check_is_fitted(self, "model_")
        X = validate_data(self, X, reset=False)
        return self._kernel_list(self._rows(X), self.rows_)

    def predict(self, X):
        with _quiet_torch():
            codes = _numpy(self.model_.predict(self._test_kernels(X))).astype(int)
        return self.encoder_.inverse_transform(codes)

    def decision_function(self, X):
        with _quiet_torch():
            return _numpy(self.model_.decision_function(self._test_kernels(X))).astype(float)

    def diagnostics(self) -> dict[str, Any]:
        w = self.weights_
        extras: dict[str, Any] = {"n_kernels": self.n_kernels_, "peer": f"MKLpy {version('MKLpy')}"}
        if w is not None and w.ndim == 1:
            extras["largest_weight"] = float(w.max())
            extras["kernels_used"] = int(np.sum(w > 1e-6))
        return SolverReport(f"MKLpy {version('MKLpy')} {ALGORITHMS[self.algorithm]}",
                            int(self.max_iter) if self.algorithm == "gram" else None, None,
                            "MKLpy's own: EasyMKL / AverageMKL one solve, GRAM a fixed count of gradient steps",
                            extras=extras).as_diagnostics()
