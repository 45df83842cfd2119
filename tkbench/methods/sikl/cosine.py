"""Stabilised translation-invariant kernels as cosine mixtures, and isotropic Gaussian atoms (paper 004).

Paper 004 (Ghiasi-Shirazi, Safabakhsh & Shamsi, JMLR 2010) learns a kernel of the class K_beta of section 2,

    k(x, z) = sum_j mu_j G_beta(||gamma_j||) cos(gamma_j^T (x - z))  (+ tau delta(x, z)),

with the stabiliser G_beta(r) = exp(-beta r^2) of section 9 (a decreasing function, G(0) = 1, that limits the
high frequencies: the complexity control of section 2). The optimal kernel is a finite mixture (Theorem 7,
section 6), so a learned kernel is an array of frequencies ``gammas`` (one per row) and weights.

Everything here works on the training signs w = alpha o y (the SVM's alpha times the +-1 labels):

- :func:`cosine_value`: alpha^T G(gamma) alpha = |sum_u w_u exp(j gamma^T x_u)|^2 G_beta(||gamma||), Eq. (5), in
  O(l n) with its gradient in gamma (section 5.5: c', s');
- :func:`cosine_rows`: the rank-2 factors v_c, v_s of section 5.3 scaled by sqrt(G_beta), so that
  alpha^T G(gamma_i) alpha = (v_c,i^T alpha)^2 + (v_s,i^T alpha)^2 (problem (21), no l x l matrix);
- :func:`cosine_kernel`: the kernel matrix of a mixture between two sets of points (O((l + l') m) memory beyond
  the output);
- :func:`gaussian_value` and :func:`gaussian_kernel`: the stabilised isotropic Gaussian atoms of section 4.7,
  k_omega(x, z) = exp(-omega ||x - z||^2) exp(-eta omega^2), omega >= 0 (the class K_eta; CGM and GM).

The kernels never include the delta term: tau only acts on the training points (the 2-norm soft margin).
"""
from __future__ import annotations

import numpy as np


def stabilizer(gammas: np.ndarray, beta: float) -> np.ndarray:
    """G_beta(||gamma||) = exp(-beta ||gamma||_2^2) for each row of ``gammas`` (section 9)."""
    gammas = np.atleast_2d(gammas)
    return np.exp(-beta * np.einsum("ij,ij->i", gammas, gammas))


def cosine_value(gamma: np.ndarray, X: np.ndarray, w: np.ndarray, beta: float) -> float:
    """alpha^T G(gamma) alpha by Eq. (5): (c^2 + s^2) G_beta(||gamma||), with w = alpha o y."""
    phase = X @ gamma
    c = float(w @ np.cos(phase))
    s = float(w @ np.sin(phase))
    return (c * c + s * s) * float(np.exp(-beta * gamma @ gamma))


def cosine_value_grad(gamma: np.ndarray, X: np.ndarray, w: np.ndarray, beta: float) -> tuple[float, np.ndarray]:
    """Eq. (5) and its gradient in gamma (section 5.5):
    grad = (c^2 + s^2) grad G + 2 (c c' + s s') G with c' = -sum w_u x_u sin, s' = sum w_u x_u cos, and
    grad G = -2 beta gamma G."""
    phase = X @ gamma
    cos, sin = np.cos(phase), np.sin(phase)
    c = float(w @ cos)
    s = float(w @ sin)
    g = float(np.exp(-beta * gamma @ gamma))
    power = c * c + s * s
    dc = -(w * sin) @ X
    ds = (w * cos) @ X
    grad = power * (-2.0 * beta * g) * gamma + 2.0 * g * (c * dc + s * ds)
    return power * g, grad


def cosine_rows(gammas: np.ndarray, X: np.ndarray, y: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """The rank-2 factors of section 5.3 (m x l each): rows sqrt(G_i) y_u cos(gamma_i^T x_u) and
    sqrt(G_i) y_u sin(gamma_i^T x_u), so that alpha^T G(gamma_i) alpha = (Vc alpha)_i^2 + (Vs alpha)_i^2."""
    gammas = np.atleast_2d(gammas)
    phase = gammas @ X.T
    root = np.sqrt(stabilizer(gammas, beta))[:, None]
    return root * np.cos(phase) * y, root * np.sin(phase) * y


def cosine_kernel(X: np.ndarray, Z: np.ndarray, gammas: np.ndarray, weights: np.ndarray, beta: float) -> np.ndarray:
    """k(x, z) = sum_j weights_j G_beta(||gamma_j||) cos(gamma_j^T (x - z)) for all pairs (rows of X, rows of Z),
    through cos(a - b) = cos a cos b + sin a sin b."""
    gammas = np.atleast_2d(gammas)
    if len(gammas) == 0:
        return np.zeros((len(X), len(Z)))
    scale = np.asarray(weights, float) * stabilizer(gammas, beta)
    px, pz = X @ gammas.T, Z @ gammas.T
    return (np.cos(px) * scale) @ np.cos(pz).T + (np.sin(px) * scale) @ np.sin(pz).T


def squared_distances(X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """||x - z||^2 for all pairs, clipped at 0 against rounding."""
    d = (X * X).sum(1)[:, None] + (Z * Z).sum(1)[None, :] - 2.0 * X @ Z.T
    return np.maximum(d, 0.0)


def gaussian_value_grad(omega: float, D: np.ndarray, w: np.ndarray, eta: float) -> tuple[float, float]:
    """alpha^T G_omega alpha = w^T exp(-omega D) w exp(-eta omega^2) (section 4.7, D the squared distances of the
    points w refers to) and its derivative in omega: exp(-eta omega^2) [-w^T (D o K) w - 2 eta omega w^T K w]."""
    K = np.exp(-omega * D)
    quad = float(w @ K @ w)
    dquad = -float(w @ (D * K) @ w)
    stab = float(np.exp(-eta * omega * omega))
    return quad * stab, stab * (dquad - 2.0 * eta * omega * quad)


def gaussian_kernel(X: np.ndarray, Z: np.ndarray, omegas: np.ndarray, weights: np.ndarray, eta: float) -> np.ndarray:
    """k(x, z) = sum_j weights_j exp(-eta omega_j^2) exp(-omega_j ||x - z||^2)."""
    omegas = np.atleast_1d(np.asarray(omegas, float))
    out = np.zeros((len(X), len(Z)))
    if len(omegas) == 0:
        return out
    D = squared_distances(X, Z)
    for omega, weight in zip(omegas, weights, strict=True):
        out += weight * np.exp(-eta * omega * omega) * np.exp(-omega * D)
    return out
