"""Input pre-processing a method may name in a config (``scaler:``), fitted on the training rows only.

``minmax`` maps each column to [0, 1] (the TK papers' pre-processing: the tessellated kernel lives on
[-delta, 1 + delta]^n, paper 000 Sec. 4); ``minmax_pm1`` to [-1, 1] (paper 002 section 5); ``standard`` to zero mean and unit variance (the SimpleMKL toolbox's and
the baselines'); ``none`` passes the data through. Two monotone alternatives keep TK's [0, 1] range on
heavy-tailed columns, where min-max scaling squeezes most rows into a sliver next to 0 (Hill-Valley: column 1 has
median 301 and maximum 117807):

- ``log_minmax``: ``log(1 + x)`` then min-max; for non-negative columns (a clear error otherwise);
- ``quantile``: each column's empirical CDF on the training rows (scikit-learn's ``QuantileTransformer``,
  uniform output), which is rank-based and so insensitive to the tails.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.preprocessing import MinMaxScaler, QuantileTransformer, StandardScaler
from sklearn.utils.validation import check_is_fitted, validate_data

SCALERS = ("none", "minmax", "minmax_pm1", "standard", "log_minmax", "quantile")
TARGET_SCALERS = ("none", "standard", "minmax_pm1")  # regression targets (fitted on the training targets)


class LogMinMaxScaler(TransformerMixin, BaseEstimator):
    """``log1p`` of each (non-negative) column, then min-max to [0, 1] on the training rows.

    Test values below 0 (never seen in training) are mapped as 0 before the logarithm; values beyond the
    training range fall outside [0, 1], as with ``MinMaxScaler``.
    """

    def fit(self, X, y=None):
        X = validate_data(self, X, dtype=np.float64)
        lows = X.min(axis=0)
        bad = np.flatnonzero(lows < 0)
        if bad.size:
            j = int(bad[0])
            raise ValueError(
                f"scaler 'log_minmax' needs non-negative features, but column {j} has minimum {lows[j]:g} on the "
                f"training rows ({bad.size} column(s) negative); use scaler 'quantile' or 'minmax' instead")
        self.minmax_ = MinMaxScaler().fit(np.log1p(X))
        return self

    def transform(self, X):
        check_is_fitted(self, "minmax_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.minmax_.transform(np.log1p(np.maximum(X, 0.0)))


class UniformQuantileScaler(TransformerMixin, BaseEstimator):
    """Each column through its empirical CDF on the training rows: values in [0, 1], uniform marginals.

    Uses up to ``n_quantiles`` quantiles (never more than there are training rows, so small CV folds need no
    special case). Deterministic: no subsampling below ``subsample`` rows.
    """

    def __init__(self, n_quantiles: int = 1000, subsample: int = 100_000):
        self.n_quantiles = n_quantiles
        self.subsample = subsample

    def fit(self, X, y=None):
        X = validate_data(self, X, dtype=np.float64)
        n_q = max(2, min(int(self.n_quantiles), X.shape[0]))
        self.quantile_ = QuantileTransformer(n_quantiles=n_q, output_distribution="uniform",
                                             subsample=self.subsample, random_state=0).fit(X)
        return self

    def transform(self, X):
        check_is_fitted(self, "quantile_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.quantile_.transform(X)


def make_scaler(kind: str):
    """The unfitted pre-processing step named ``kind`` (one of ``SCALERS``)."""
    makers = {"minmax": MinMaxScaler, "minmax_pm1": lambda: MinMaxScaler(feature_range=(-1, 1)),
              "standard": StandardScaler, "log_minmax": LogMinMaxScaler,
              "quantile": UniformQuantileScaler, "none": lambda: "passthrough"}
    if kind not in makers:
        raise ValueError(f"unknown scaler {kind!r}; expected one of {', '.join(SCALERS)}")
    return makers[kind]()


def make_target_scaler(kind: str):
    """The unfitted transformer of regression targets named ``kind`` (None for ``none``)."""
    makers = {"standard": StandardScaler, "minmax_pm1": lambda: MinMaxScaler(feature_range=(-1, 1)),
              "none": lambda: None}
    if kind not in makers:
        raise ValueError(f"unknown target scaler {kind!r}; expected one of {', '.join(TARGET_SCALERS)}")
    return makers[kind]()
