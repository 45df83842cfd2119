"""Hierarchical Gaussian kernels (paper 002, section 2, Lemma 4.1): formulas, derivatives, architecture syntax."""
from __future__ import annotations

import numpy as np
import pytest

from tkbench.methods.hgk.kernel import Architecture, ArchitectureError, kernel, kernel_and_gradient

RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, size=(7, 4))
Z = RNG.uniform(-1, 1, size=(5, 4))
ARCHS = {1: [0, 1, 2, 3], 2: [[0, 1], [1, 2, 3], [3]], 3: [[[0, 1], [2]], [[3], [0, 2]], [1, 3]]}


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_lemma_4_1_derivatives_equal_finite_differences(depth):
    arch = Architecture(ARCHS[depth], 4)
    assert arch.depth == depth
    w = RNG.uniform(0.3, 1.5, size=arch.n_weights)
    K, G = kernel_and_gradient(arch, w, X, Z)
    assert np.allclose(K, kernel(arch, w, X, Z))
    h = 1e-6
    for i in range(arch.n_weights):
        e = np.zeros_like(w)
        e[i] = h
        fd = (kernel(arch, w + e, X, Z) - kernel(arch, w - e, X, Z)) / (2 * h)
        assert np.allclose(G[i], fd, atol=1e-8, rtol=1e-6), f"weight {i}"


def test_depth2_equals_the_gaussian_of_the_first_layer_feature_maps():
    """Eq. (2) the slow way: ||Phi(x) - Phi(x')||^2 = sum_i w_i^2 (k_i(x,x) - 2 k_i(x,x') + k_i(x',x')), with the
    first-layer kernels evaluated one pair at a time."""
    arch = Architecture([[0, 1], [2, 3]], 4)
    w = np.array([0.7, 1.3, 0.5, 2.0, 1.1, 0.4])  # top (w1, w2), leaf 1 (v0, v1), leaf 2 (v2, v3)
    K = kernel(arch, w, X, Z)

    def leaf(v, a, b):
        return np.exp(-np.sum(v ** 2 * (a - b) ** 2))

    for p in range(len(X)):
        for q in range(len(Z)):
            dist = sum(wi ** 2 * (leaf(v, X[p, I], X[p, I]) - 2 * leaf(v, X[p, I], Z[q, I]) + leaf(v, Z[q, I], Z[q, I]))
                       for wi, v, I in ((w[0], w[2:4], [0, 1]), (w[1], w[4:6], [2, 3])))  # noqa: E741
            assert K[p, q] == pytest.approx(np.exp(-dist))


def test_one_first_layer_node_with_equal_weights_is_the_closed_form():
    arch = Architecture([[0, 1, 2, 3]], 4)
    w, v = 0.8, 0.6
    K = kernel(arch, np.array([w, v, v, v, v]), X, Z)
    sq = ((X[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    assert np.allclose(K, np.exp(-2 * w ** 2 * (1 - np.exp(-v ** 2 * sq))))


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_universal_kernel_matrix_of_distinct_points_has_full_rank(depth):
    arch = Architecture(ARCHS[depth], 4)
    P = RNG.uniform(-1, 1, size=(30, 4))
    K = kernel(arch, arch.initial_weights(scale=2.0), P)
    assert np.allclose(K, K.T) and np.allclose(np.diag(K), 1.0)
    assert np.linalg.eigvalsh(K).min() > 1e-10


def test_architecture_syntax_and_errors():
    assert Architecture("inhomogeneous", 3).describe() == [0, 1, 2]
    arch = Architecture("depth2:4", 3)
    assert arch.depth == 2 and arch.n_weights == 4 + 4 * 3 and arch.describe() == [[0, 1, 2]] * 4
    for bad, match in [([0, 5], "0..3"), ([[0], 1], "either feature indices"), ([], "non-empty"),
                       ("depth2:0", "l >= 1"), ("deep", "nested lists"), ([0, 0], "distinct")]:
        with pytest.raises(ArchitectureError, match=match):
            Architecture(bad, 4)
    with pytest.raises(ArchitectureError, match="expected 5 values"):
        kernel(Architecture([[0, 1, 2, 3]], 4), np.ones(3), X)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_incremental_updates_equal_a_from_scratch_recomputation(depth):
    from tkbench.methods.hgk.kernel import BlockState

    arch = Architecture(ARCHS[depth], 4)
    w = arch.initial_weights()
    state = BlockState(arch, w, X, Z)
    rng = np.random.default_rng(depth)
    for _step in range(300):
        index = int(rng.integers(arch.n_weights))
        value = float(w[index] * np.exp(rng.normal(0, 0.3)))
        trial = w.copy()
        trial[index] = value
        alpha = rng.normal(size=len(Z))
        assert np.allclose(state.propose_predict(index, value, alpha), kernel(arch, trial, X, Z) @ alpha, atol=1e-11)
        proposed = state.propose(index, value)
        assert np.allclose(proposed, kernel(arch, trial, X, Z), atol=1e-12)
        if rng.random() < 0.5:  # accept half of the proposals, as annealing would
            state.commit()
            w = trial
        assert np.allclose(state.kernel, kernel(arch, w, X, Z), atol=1e-11)
    assert np.array_equal(state.weights, w)
    with pytest.raises(RuntimeError):  # nothing proposed since the state was built
        BlockState(arch, w, X, Z).commit()


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_the_reference_kernel_equals_the_compiled_kernel(depth):
    """(The compiled gradient is checked against this reference in test_hierarchical_fast: the fused risk and
    gradient; the factored-gradient entry that only its own test called was removed in issue 49.)"""
    arch = Architecture(ARCHS[depth], 4)
    w = RNG.uniform(0.3, 1.5, size=arch.n_weights)
    K, _ = kernel_and_gradient(arch, w, X, Z)
    assert np.allclose(K, kernel(arch, w, X, Z))
