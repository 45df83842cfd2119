"""Seeded synthetic problems.

- ``sine1d``: one feature uniform on [0, 10], the label the sign of sin(2 pi x / 5) (plus Gaussian noise of
  standard deviation ``noise`` before the sign): a one-dimensional labelling problem (paper 000 Figure 1(a) does not
  give its generator).
- ``spiral``: Lang's two interleaved spirals (Lang 1988; the 2-D example of paper 000, Figs 2, 3, 5, 6).
- ``circle``: points uniform in a square, +1 inside the unit circle (paper 000, Figs 3 and 6). The square's
  half-width sqrt(pi/2) makes the classes balanced.
- ``twonorm``, ``ringnorm``, ``waveform``: Breiman's generators (Breiman, "Bias, variance and arcing
  classifiers", 1996): twonorm N(+-a 1, I) with a = 2/sqrt(n); ringnorm N(0, 4I) vs N(a 1, I) with a = 1/sqrt(n);
  waveform: 3 classes, 21 features, convex combinations of two of three shifted triangular waves plus N(0,1) noise.

Options (all optional): ``n_samples``, ``seed``, ``noise`` (spiral, circle: standard deviation of Gaussian noise
added to the inputs), ``n_features`` (twonorm, ringnorm), ``turns`` (spiral).
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tkbench.errors import DatasetError

GENERATOR_VERSION = 1
# the range of each option: n_samples up to 10 million rows (20 features: 1.6 GB), enough for any table here
MAX_CELLS = 200_000_000  # values in one generated X (1.5 GiB), well within the 24 GiB machine with copies
LIMITS = {"n_samples": (4, 10_000_000), "seed": (0, 2**63 - 1), "noise": (0.0, 1e6), "turns": (0.01, 1e3),
          "n_features": (1, 10_000)}


@dataclass(frozen=True)
class Generator:
    fn: Callable[..., tuple[np.ndarray, np.ndarray]]
    task: str
    defaults: dict[str, Any]
    doc: str


def _spiral(n_samples: int, rng: np.random.Generator, noise: float, turns: float):
    half = n_samples // 2
    sizes = (n_samples - half, half)
    X, y = [], []
    for label, sign, size in ((1, 1.0, sizes[0]), (-1, -1.0, sizes[1])):
        t = np.sqrt(rng.uniform(0.0, 1.0, size))  # denser towards the outside, like Lang's point set
        theta = 2.0 * np.pi * turns * t
        r = 0.05 + 0.95 * t
        pts = sign * np.column_stack([r * np.cos(theta), r * np.sin(theta)])
        X.append(pts)
        y.append(np.full(size, label))
    X = np.vstack(X) + noise * rng.standard_normal((n_samples, 2))
    return X, np.concatenate(y)


def _circle(n_samples: int, rng: np.random.Generator, noise: float):
    half_width = np.sqrt(np.pi / 2.0)
    X = rng.uniform(-half_width, half_width, size=(n_samples, 2))
    y = np.where(np.sum(X**2, axis=1) < 1.0, 1, -1)
    return X + noise * rng.standard_normal(X.shape), y


def _twonorm(n_samples: int, rng: np.random.Generator, n_features: int):
    a = 2.0 / np.sqrt(n_features)
    y = np.where(rng.uniform(size=n_samples) < 0.5, 1, -1)
    X = rng.standard_normal((n_samples, n_features)) + a * y[:, None]
    return X, y


def _ringnorm(n_samples: int, rng: np.random.Generator, n_features: int):
    a = 1.0 / np.sqrt(n_features)
    y = np.where(rng.uniform(size=n_samples) < 0.5, 1, -1)
    X = rng.standard_normal((n_samples, n_features))
    X[y == 1] *= 2.0
    X[y == -1] += a
    return X, y


def _waveform(n_samples: int, rng: np.random.Generator):
    i = np.arange(1, 22)
    h1 = np.maximum(6 - np.abs(i - 11), 0).astype(float)
    h2 = np.maximum(6 - np.abs(i - 15), 0).astype(float)  # h1 shifted right by 4
    h3 = np.maximum(6 - np.abs(i - 7), 0).astype(float)  # h1 shifted left by 4
    pairs = [(h1, h2), (h1, h3), (h2, h3)]
    y = rng.integers(0, 3, size=n_samples)
    u = rng.uniform(size=(n_samples, 1))
    first = np.stack([pairs[c][0] for c in y])
    second = np.stack([pairs[c][1] for c in y])
    X = u * first + (1 - u) * second + rng.standard_normal((n_samples, 21))
    return X, y.astype(np.int64)


def _sine1d(n_samples: int, rng: np.random.Generator, noise: float):
    x = rng.uniform(0.0, 10.0, n_samples)
    g = np.sin(2.0 * np.pi * x / 5.0) + noise * rng.standard_normal(n_samples)
    return x[:, None], np.where(g > 0, 1, -1).astype(np.int64)


GENERATORS: dict[str, Generator] = {
    "spiral": Generator(_spiral, "classification", {"n_samples": 500, "noise": 0.0, "turns": 1.5, "seed": 0},
                        "two interleaved spirals (Lang 1988), 2 features"),
    "circle": Generator(_circle, "classification", {"n_samples": 500, "noise": 0.0, "seed": 0},
                        "inside / outside the unit circle, 2 features"),
    "twonorm": Generator(_twonorm, "classification", {"n_samples": 7400, "n_features": 20, "seed": 0},
                         "Breiman's twonorm, 20 features"),
    "ringnorm": Generator(_ringnorm, "classification", {"n_samples": 7400, "n_features": 20, "seed": 0},
                          "Breiman's ringnorm, 20 features"),
    "sine1d": Generator(_sine1d, "classification", {"n_samples": 60, "noise": 0.0, "seed": 0},
                        "one feature uniform on [0, 10], label the sign of sin(2 pi x / 5) + noise N(0, noise^2)"),
    "waveform": Generator(_waveform, "classification", {"n_samples": 5000, "seed": 0},
                          "Breiman's waveform, 21 features, 3 classes"),
}


def resolve(name: str, options: dict[str, Any]) -> dict[str, Any]:
    gen = GENERATORS[name]
    unknown = sorted(set(options) - set(gen.defaults))
    if unknown:
        raise DatasetError(
            f"synthetic dataset {name!r} has no option {unknown[0]!r}; its options: {', '.join(gen.defaults)}"
        )
    params = {**gen.defaults, **options}
    for key, value in params.items():
        low, high = LIMITS[key]
        integral = key != "noise" and key != "turns"
        ok = (isinstance(value, int) and not isinstance(value, bool)) if integral else \
            (isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value))
        if not ok or not low <= value <= high:
            kind = "an integer" if integral else "a finite number"
            raise DatasetError(f"synthetic dataset {name!r}: option {key}: {value!r}: expected {kind} from {low} "
                               f"to {high}")
    width = params.get("n_features", {"spiral": 2, "circle": 2, "waveform": 21}.get(name, 1))
    if params["n_samples"] * width > MAX_CELLS:  # what the generator would allocate, in float64 values
        raise DatasetError(f"synthetic dataset {name!r}: n_samples x features = {params['n_samples']} x {width}: "
                           f"expected at most {MAX_CELLS:.0e} values ({MAX_CELLS * 8 / 2**30:.1f} GiB of float64)")
    return params


def fingerprint(name: str, options: dict[str, Any]) -> str:
    params = resolve(name, options)
    return hashlib.sha256(repr(("synthetic", GENERATOR_VERSION, name, sorted(params.items()))).encode()).hexdigest()


def generate(name: str, options: dict[str, Any]):
    """Draw the synthetic dataset ``name``; the same options (including ``seed``) give the same arrays."""
    from tkbench.data.base import Dataset

    params = resolve(name, options)
    rng = np.random.default_rng(int(params["seed"]))
    kwargs = {k: v for k, v in params.items() if k not in ("seed", "n_samples")}
    X, y = GENERATORS[name].fn(int(params["n_samples"]), rng, **kwargs)
    names = [f"x{j + 1}" for j in range(X.shape[1])]
    info = {"title": GENERATORS[name].doc, "options": params, "synthetic": True, "notes": ""}
    return Dataset(name, np.ascontiguousarray(X, dtype=float), y, GENERATORS[name].task, names,
                   fingerprint(name, options), info)
