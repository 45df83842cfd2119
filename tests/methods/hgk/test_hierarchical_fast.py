"""The compiled hierarchical-kernel loops against the NumPy reference (tkbench.methods.hgk._numba)."""
from __future__ import annotations

import numpy as np
import pytest

from tkbench.methods.hgk._numba import fast_exp, fast_exp32, one_minus_exp
from tkbench.methods.hgk.kernel import (
    Architecture,
    BlockState,
    kernel,
    kernel_and_gradient,
    kernel_predict,
    node_kernel,
    weighted_gradient,
)

RNG = np.random.default_rng(7)
X = RNG.uniform(-1, 1, size=(37, 5))
Z = RNG.uniform(-1, 1, size=(23, 5))
# depth 1, 2, 3 (mixed leaf depths), leaves of every feature and of some (the leaves' matrix products: a feature
# a leaf does not use has weight 0 there), of several features and of one
ARCHS = ["inhomogeneous", "depth2:3", [[[0, 1], [2]], [[3, 4], [0, 4]], [1, 2, 3]], [[0, 1, 2, 3], [4], [0, 2, 4]]]
IDS = ["depth1", "depth2", "depth3", "depth2-blocks"]


def _elementwise(f):
    """A compiled loop applying the compiled scalar function ``f`` to each element of an array."""
    from numba import njit

    @njit
    def apply(x):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = f(x[i])
        return out

    return apply


def test_fast_exp_matches_numpy_to_an_ulp_and_underflows_to_zero():
    apply = _elementwise(fast_exp)
    x = np.concatenate([-np.geomspace(1e-300, 708, 200_000), RNG.uniform(-708, 0, 200_000), [0.0, -0.0],
                        RNG.uniform(0, 700, 1000)])
    got, ref = apply(x), np.exp(x)
    assert np.max(np.abs(got - ref) / ref) < 5e-16  # about two units in the last place
    assert np.all(apply(np.array([-708.01, -745.0, -1e5, -np.inf])) == 0.0)


def test_fast_exp32_matches_numpy_to_two_float32_ulps_and_underflows_to_zero():
    apply = _elementwise(fast_exp32)
    x = np.concatenate([-np.geomspace(1e-30, 87, 200_000), RNG.uniform(-87, 0, 200_000), [0.0, -0.0]])
    x = x.astype(np.float32)
    got = apply(x)
    assert got.dtype == np.float32
    ref = np.exp(x.astype(np.float64))  # the exact exponential of the float32 argument
    assert np.max(np.abs(got - ref) / ref) < 2 * np.finfo(np.float32).eps  # 2.4e-7
    assert np.all(apply(np.array([-87.01, -104.0, -1e30, -np.inf], np.float32)) == 0.0)


@pytest.mark.parametrize("spec", ARCHS, ids=IDS)
def test_compiled_kernel_predict_and_gradient_equal_the_numpy_reference(spec):
    arch = Architecture(spec, 5)
    w = arch.initial_weights() * RNG.uniform(0.5, 2.0, arch.n_weights)
    ref = node_kernel(arch.root, w, X, Z)
    assert np.allclose(kernel(arch, w, X, Z), ref, rtol=1e-13, atol=1e-15)
    alpha = RNG.normal(size=(23, 3))
    assert np.allclose(kernel_predict(arch, w, X, Z, alpha), ref @ alpha, rtol=1e-12, atol=1e-13)
    assert np.allclose(kernel_predict(arch, w, X, Z, alpha[:, 0]), ref @ alpha[:, 0], rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("spec", ARCHS, ids=IDS)
def test_the_symmetric_pass_is_symmetric_and_equals_the_full_one_for_every_row_count_and_thread_count(spec):
    """k(X, X) from the upper triangle mirrored: exactly symmetric, every entry written, the full pass's matrix to
    rounding (the leaves' exponents are matrix products, so k(x_u, x_v) and k(x_v, x_u) of the full pass may
    differ in the last bits), for row counts around the row chunks (fewer rows than a chunk, one chunk, an odd and
    an even number of chunks, whose ends pair up in the parallel loop), one and two threads, the root's kernel and
    every node's; and the NumPy reference to rounding."""
    import numba

    from tkbench.methods.hgk._numba import CHUNK, tree_kernel, tree_kernel_symmetric

    arch = Architecture(spec, 5)
    w = arch.initial_weights() * RNG.uniform(0.5, 2.0, arch.n_weights)
    flat = arch.flat.arrays()
    n_nodes = len(flat[0])
    threads = numba.get_num_threads()
    try:
        for t in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(t)
            for m in (1, 5, CHUNK, CHUNK + 1, 3 * CHUNK + 2, 4 * CHUNK, 70):
                A = RNG.uniform(-1, 1, size=(m, 5))
                At = np.ascontiguousarray(A.T)
                for nodes in (1, n_nodes):
                    full, sym = np.empty((nodes, m, m)), np.full((nodes, m, m), np.nan)
                    tree_kernel(A, At, *flat, w ** 2, full)
                    tree_kernel_symmetric(A, At, *flat, w ** 2, sym)
                    assert np.array_equal(sym, sym.transpose(0, 2, 1)), (t, m, nodes)
                    assert np.allclose(sym, full, rtol=1e-14, atol=1e-15), (t, m, nodes)
                    assert np.allclose(np.diagonal(sym, axis1=1, axis2=2), 1.0, rtol=0, atol=1e-14)
                assert np.allclose(kernel(arch, w, A), full[-1], rtol=1e-14, atol=1e-15)  # whichever pass it takes
                assert np.allclose(kernel(arch, w, A), node_kernel(arch.root, w, A, A), rtol=1e-13, atol=1e-15)
    finally:
        numba.set_num_threads(threads)


def _direct_kernel(node, weights, A, B):
    """A node's kernel from the squared differences themselves (exact for close points): the compiled loops'
    leaves take them as matrix products, whose rounding this bounds."""
    w = weights[node.offset:node.offset + node.size]
    if node.is_leaf:
        idx = list(node.features)
        return np.exp(-np.einsum("j,juv->uv", w ** 2, (A[:, idx].T[:, :, None] - B[:, idx].T[:, None, :]) ** 2))
    return np.exp(-2.0 * sum(w[i] ** 2 * (1.0 - _direct_kernel(c, weights, A, B)) for i, c in enumerate(node.children)))


@pytest.mark.parametrize("scale", [1.0, 4.0, 16.0])
@pytest.mark.parametrize("spec", ARCHS, ids=IDS)
def test_the_leaves_matrix_products_stay_within_their_rounding_bound_at_large_weights(spec, scale):
    """The module's bound: a top exponent off by at most about 8 eps sum_i w_i^2 |v_i|^2 (the sum over the inner
    nodes' children of their weight times the leaves' squared weights below), so |k - k_direct| is at most that
    (k <= 1), at weights up to 16 times the initial ones (256 times their squares), with near-duplicate points
    (where 1 - k_leaf is smallest and the expansion's cancellation largest)."""
    arch = Architecture(spec, 5)
    w = arch.initial_weights() * scale * RNG.uniform(0.5, 1.0, arch.n_weights)
    A = np.vstack([X, X[:10] + 1e-6 * RNG.normal(size=(10, 5))])

    def size(node) -> float:  # sum over paths of the products of squared weights: the exponent's scale
        ws = w[node.offset:node.offset + node.size] ** 2
        if node.is_leaf:
            return float(ws.sum())
        return float(sum(2.0 * ws[i] * max(size(c), 1.0) for i, c in enumerate(node.children)))

    bound = 8 * np.finfo(float).eps * max(size(arch.root), 1.0)
    ref = _direct_kernel(arch.root, w, A, A)
    assert np.max(np.abs(kernel(arch, w, A) - ref)) <= bound
    assert np.max(np.abs(kernel(arch, w, A, Z) - _direct_kernel(arch.root, w, A, Z))) <= bound


@pytest.mark.parametrize("spec", ARCHS, ids=IDS)
def test_extreme_widths_take_the_squared_differences_and_keep_the_gram_matrix_positive_definite(spec):
    """Widths Algorithm 1 reached on thyroid (2026-12-05: 1.8e6 and 2.4e4 among 21): the leaves' matrix products
    lost about 1e-3 to cancellation there and made K + m lambda I indefinite. Such rows and leaves now sum the
    squared differences (``EXPANSION_TOL``): the kernel equals the direct one to rounding, its diagonal is 1, every
    pass agrees, and the least-squares SVM's Cholesky factorisation succeeds. A kernel with ordinary widths is
    unchanged (the other tests). Inner-node weights of that size: the next test."""
    import scipy.linalg

    from tkbench.methods.hgk.annealing import ls_svm_coefficients, refit_risk_gradient

    arch = Architecture(spec, 5)
    w = arch.initial_weights()
    leaves = [node for node in arch.nodes() if node.is_leaf]
    w[leaves[0].offset], w[leaves[-1].offset + leaves[-1].size - 1] = 1.8e6, 2.4e4  # leaf widths, as thyroid's
    rng = np.random.default_rng(3)
    base = rng.uniform(-1, 1, size=(40, 5))
    # near-duplicates, as thyroid's repeated rows: where the cancellation was largest
    A = np.vstack([base, base[:20] + 1e-7 * rng.normal(size=(20, 5)), base[:10]])
    ref = _direct_kernel(arch.root, w, A, A)
    K = kernel(arch, w, A)
    assert np.allclose(np.diagonal(K), 1.0, rtol=0, atol=1e-12)
    assert np.max(np.abs(K - ref)) <= 1e-9
    assert np.max(np.abs(kernel(arch, w, A, Z) - _direct_kernel(arch.root, w, A, Z))) <= 1e-9
    assert np.min(np.linalg.eigvalsh((K + K.T) / 2)) >= -1e-9
    m, lam = len(A), 1e-8
    scipy.linalg.cho_factor(K + m * lam * np.eye(m), lower=True)  # raised LinAlgError before
    y = rng.uniform(-1, 1, m)
    assert np.allclose(ls_svm_coefficients(K, y, lam), np.linalg.solve(ref + m * lam * np.eye(m), y), rtol=1e-5,
                       atol=1e-6)
    refit = refit_risk_gradient(arch, w, A, y, Z, rng.uniform(-1, 1, len(Z)), lam)
    assert np.isfinite(refit.risk)
    assert np.allclose(kernel_predict(arch, w, Z, A, y), _direct_kernel(arch.root, w, Z, A) @ y, rtol=1e-9,
                       atol=1e-8)


def _exponent_ld(node, weights, A, B):
    """A node's exponent e (k = exp(-e)) in long double, each 1 - k_i as -expm1(-e_i) and each leaf from the
    squared differences: exact to far below the compiled loops' rounding, whatever the weights."""
    w = weights[node.offset:node.offset + node.size].astype(np.longdouble)
    A, B = A.astype(np.longdouble), B.astype(np.longdouble)
    if node.is_leaf:
        idx = list(node.features)
        return np.einsum("j,juv->uv", w ** 2, (A[:, idx].T[:, :, None] - B[:, idx].T[:, None, :]) ** 2)
    return 2 * sum(w[i] ** 2 * -np.expm1(-_exponent_ld(c, weights, A, B)) for i, c in enumerate(node.children))


def test_one_minus_exp_matches_expm1_to_its_bound():
    """The series up to 1/16 to a few ulps, 1 - k above it within k's rounding (4e-15 relative at most)."""
    from numba import njit

    @njit
    def apply(e, k):
        out = np.empty_like(e)
        for i in range(e.shape[0]):
            out[i] = one_minus_exp(e[i], k[i])
        return out

    e = np.concatenate([np.geomspace(1e-300, 700, 200_000), RNG.uniform(0, 0.1, 200_000), [0.0, 0.0625]])
    got, ref = apply(e, np.exp(-e)), -np.expm1(-e)
    series = e <= 0.0625
    assert np.max(np.abs(got - ref)[series] / np.maximum(ref[series], 1e-300)) < 1e-15  # a few ulps
    assert np.max(np.abs(got - ref)[~series] / ref[~series]) < 4e-15
    assert apply(np.zeros(1), np.ones(1))[0] == 0.0
    # where 1 - k keeps only k's rounding: e = 1e-12, k rounded to 1 - 1.000088900582341e-12
    assert apply(np.array([1e-12]), np.exp(-np.array([1e-12])))[0] == pytest.approx(1e-12, rel=1e-15)


@pytest.mark.parametrize("spec", ARCHS[1:], ids=IDS[1:])
def test_large_inner_weights_take_one_minus_k_from_the_childs_exponent(spec):
    """Inner-node weights Algorithm 1 reached on thyroid (2026-12-05: a top weight of 1.8e6 in depth2:3). 1 - k_i
    from the rounded k_i is off by about eps, all of its value for close points, and the top exponent takes it
    times 2 w^2 = 6.5e12: two evaluations exact but for this differed by 7e-4. Such terms now come from the
    child's exponent (``EPS_COMPLEMENT``): every pass equals a long-double evaluation to 1e-9, the gradients of
    the top weights equal the long-double ones, and the Gram matrix is positive semi-definite to rounding."""
    arch = Architecture(spec, 5)
    w = arch.initial_weights()
    w[arch.root.offset] = 1.8e6  # the top weight of the first child
    inner = [node for node in arch.nodes() if not node.is_leaf and node is not arch.root]
    if inner:
        w[inner[0].offset] = 3e3  # and one of the first inner child's own (depth 3)
    rng = np.random.default_rng(5)
    base = rng.uniform(-1, 1, size=(30, 5))
    A = np.vstack([base, base[:15] + 1e-8 * rng.normal(size=(15, 5)), base[:5]])
    B = np.vstack([Z, A[25:40]])
    for P, Q, got in [(A, A, kernel(arch, w, A)), (A, B, kernel(arch, w, A, B))]:
        ref = np.exp(-_exponent_ld(arch.root, w, P, Q)).astype(float)
        assert np.max(np.abs(got - ref)) <= 1e-9
    assert np.min(np.linalg.eigvalsh(kernel(arch, w, A))) >= -1e-9
    alpha = rng.normal(size=len(B))
    assert np.allclose(kernel_predict(arch, w, A, B, alpha),
                       np.exp(-_exponent_ld(arch.root, w, A, B)).astype(float) @ alpha, rtol=1e-9, atol=1e-8)
    # dk/dw_i = -4 w_i (1 - k_i) k for the top weights (Lemma 4.1), in long double
    V, Al = rng.normal(size=len(A)), rng.normal(size=len(A))
    W = np.outer(V, Al).astype(np.longdouble)
    k = np.exp(-_exponent_ld(arch.root, w, A, A))
    wr = w[arch.root.offset:arch.root.offset + arch.root.size]
    for i, child in enumerate(arch.root.children):
        one_minus = -np.expm1(-_exponent_ld(child, w, A, A))
        ref_g = float(np.sum(W * (-4 * np.longdouble(wr[i]) * one_minus * k)))
        for g in (weighted_gradient(arch, w, A, A, V, Al), weighted_gradient(arch, w, A, None, V, Al)):
            assert g[arch.root.offset + i] == pytest.approx(ref_g, rel=1e-7, abs=1e-9 * max(1.0, wr[i]))


@pytest.mark.parametrize("spec", ARCHS, ids=IDS)
def test_block_state_steps_equal_a_rebuild_at_every_depth(spec):
    arch = Architecture(spec, 5)
    w = arch.initial_weights()
    state = BlockState(arch, w, X, Z)
    rng = np.random.default_rng(0)
    alpha = RNG.normal(size=23)
    for _ in range(40):
        i = int(rng.integers(arch.n_weights))
        value = float(state.weights[i] * np.exp(0.4 * rng.normal()))
        f = state.propose_predict(i, value, alpha)
        trial = state.weights.copy()
        trial[i] = value
        assert np.allclose(f, node_kernel(arch.root, trial, X, Z) @ alpha, rtol=1e-11, atol=1e-12)
        if rng.random() < 0.5:
            state.commit()
    assert np.allclose(state.kernel, node_kernel(arch.root, state.weights, X, Z), rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("spec", ARCHS, ids=IDS)
def test_float32_block_state_follows_the_float64_one_within_its_rounding(spec):
    """annealing_dtype="float32": the same proposals and commits on float32 blocks give F and the kernel within
    float32's rounding of the float64 state's (about 1e-7 per factor, growing with the commits on a path), and a
    refresh brings the blocks back to one rounding of the exact kernel."""
    arch = Architecture(spec, 5)
    w = arch.initial_weights()
    s64, s32 = BlockState(arch, w, X, Z), BlockState(arch, w, X, Z, np.float32)
    assert s32.K.dtype == np.float32 and s32.K.nbytes * 2 == s64.K.nbytes
    rng = np.random.default_rng(3)
    alpha = RNG.normal(size=(23, 2))
    commits = 0
    for _ in range(120):
        i = int(rng.integers(arch.n_weights))
        value = float(s64.weights[i] * np.exp(0.4 * rng.normal()))
        f64, f32 = s64.propose_predict(i, value, alpha), s32.propose_predict(i, value, alpha)
        assert f32.dtype == np.float64
        assert np.max(np.abs(f32 - f64)) <= 2e-6 * np.max(np.abs(alpha).sum(axis=0))
        if rng.random() < 0.5:
            s64.commit()
            s32.commit()
            commits += 1
    assert commits > 40 and np.array_equal(s32.weights, s64.weights)
    exact = node_kernel(arch.root, s64.weights, X, Z)
    drift = np.max(np.abs(s32.kernel - exact))
    assert 1e-9 < drift < commits * 2 * np.finfo(np.float32).eps  # rounded (not float64), a few ulps a commit
    s32.refresh()
    assert np.max(np.abs(s32.kernel - exact)) <= 1.2e-7  # one float32 rounding of values <= 1
    with pytest.raises(ValueError, match="float64 or float32"):
        BlockState(arch, w, X, Z, np.float16)


@pytest.mark.parametrize("spec", ARCHS, ids=IDS)
def test_fused_risk_and_gradient_equal_the_two_pass_computation(spec):
    from tkbench.methods.hgk.kernel import risk_and_gradient

    arch = Architecture(spec, 5)
    w = arch.initial_weights() * RNG.uniform(0.5, 2.0, arch.n_weights)
    alpha, Y = RNG.normal(size=(23, 2)), RNG.normal(size=(37, 2))
    residual = Y - node_kernel(arch.root, w, X, Z) @ alpha
    risk, g = risk_and_gradient(arch, w, X, Z, Y, alpha)
    assert risk == pytest.approx(np.mean(residual ** 2), rel=1e-12)
    weight = residual @ alpha.T * (-2.0 / residual.size)
    g_ref = np.einsum("uv,wuv->w", weight, kernel_and_gradient(arch, w, X, Z)[1])
    assert np.allclose(g, g_ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("spec", ARCHS, ids=IDS)
def test_the_symmetric_gradient_pass_equals_the_full_one_and_the_numpy_reference(spec):
    """sum_{u,v} V_u. A_v.^T dk(x_u, x_v)/dW from the upper triangle (pairs weighted W_uv + W_vu, the diagonal
    dropped): the full pass's gradient to rounding and the NumPy reference's dK/dW contracted, for row counts
    around the chunks (the ends pair up in the parallel loop), one and two outputs, one and two threads."""
    import numba

    from tkbench.methods.hgk._numba import CHUNK
    from tkbench.methods.hgk.kernel import weighted_gradient

    arch = Architecture(spec, 5)
    w = arch.initial_weights() * RNG.uniform(0.5, 2.0, arch.n_weights)
    threads = numba.get_num_threads()
    try:
        for t in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(t)
            for m in (1, 5, CHUNK + 1, 3 * CHUNK + 2, 4 * CHUNK):
                A_ = RNG.uniform(-1, 1, size=(m, 5))
                for outputs in (1, 2):
                    V, A = RNG.normal(size=(m, outputs)), RNG.normal(size=(m, outputs))
                    sym = weighted_gradient(arch, w, A_, None, V, A)
                    full = weighted_gradient(arch, w, A_, A_, V, A)
                    ref = np.einsum("uv,wuv->w", V @ A.T, kernel_and_gradient(arch, w, A_)[1])
                    if m == 1:  # the diagonal alone: every node's kernel is 1 there (the reference to rounding)
                        assert np.all(sym == 0.0) and np.max(np.abs(ref)) < 1e-13
                        continue
                    scale = np.max(np.abs(ref))
                    assert np.max(np.abs(sym - full)) <= 1e-12 * scale, (t, m, outputs)
                    assert np.max(np.abs(sym - ref)) <= 1e-10 * scale, (t, m, outputs)
    finally:
        numba.set_num_threads(threads)
