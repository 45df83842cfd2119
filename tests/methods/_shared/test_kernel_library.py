"""The SimpleMKL kernel library: size, normalisation, blocked combinations equal the explicit sums."""
from __future__ import annotations

import numpy as np
import pytest

import tkbench.methods._shared.library as lib
from tkbench.methods._shared.library import Library, standard_library


def _unpack_upper(packed: np.ndarray, m: int) -> np.ndarray:
    """The symmetric m x m matrix whose upper triangle, row by row, is ``packed`` (the cache's layout)."""
    out = np.zeros((m, m))
    out[np.triu_indices(m)] = packed
    return out + np.triu(out, 1).T


def test_pack_upper_is_the_row_by_row_upper_triangle_with_a_scaled_diagonal_for_every_size():
    rng = np.random.default_rng(3)
    for m in (1, 7, 7, 12, 5, 7):  # repeated sizes use the cached mask: it must not carry anything between calls
        M = rng.normal(size=(m, m))
        rows, cols = np.triu_indices(m)
        assert np.array_equal(lib.pack_upper(M), M[rows, cols])
        expected = M[rows, cols] * np.where(rows == cols, 0.5, 1.0)
        assert np.array_equal(lib.pack_upper(M, diagonal=0.5), expected)
        assert np.array_equal(_unpack_upper(lib.pack_upper(M + M.T), m), M + M.T)
    with pytest.raises(ValueError):  # the cached mask is read-only
        lib._upper_mask(7)[0, 0] = False


def test_standard_library_has_13_n_plus_1_kernels():
    kernels = standard_library(4)
    assert len(kernels) == 13 * 5
    assert {k.kind for k in kernels} == {"gaussian", "polynomial"}
    widths = sorted({k.param for k in kernels if k.kind == "gaussian"})
    assert widths[0] == 0.5 and widths[-1] == 10.0 and len(widths) == 10
    assert {k.feature for k in kernels} == {None, 0, 1, 2, 3}


def test_unit_mean_diagonal_and_psd():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (40, 3))
    L = Library(standard_library(3), X)
    for k in range(len(L)):
        K = L.kernel(k)
        assert np.trace(K) == pytest.approx(len(X))
        assert np.linalg.eigvalsh(K).min() > -1e-10


@pytest.mark.parametrize("cache_mb", [0.0, 1024.0], ids=["blocked", "cached"])
def test_blocked_combination_and_quadratic_forms(monkeypatch, cache_mb):
    rng = np.random.default_rng(1)
    X, Y = rng.uniform(0, 1, (50, 2)), rng.uniform(0, 1, (20, 2))
    L = Library(standard_library(2), X, cache_mb=cache_mb)
    assert (L._stack is not None) == (cache_mb > 0)
    d = rng.dirichlet(np.ones(len(L)))
    d[3] = 0.0
    w = rng.standard_normal(50)
    w[:5] = 0.0
    explicit = sum(d[k] * L.kernel(k) for k in range(len(L)))
    explicit_test = sum(d[k] * L.kernel(k, Y).T for k in range(len(L)))
    monkeypatch.setattr(lib, "_BLOCK_BYTES", 8 * 50 * 7)  # 7 rows per block
    np.testing.assert_allclose(L.combined(d), explicit, rtol=1e-12)
    np.testing.assert_allclose(L.combined(d, Y), explicit_test, rtol=1e-12)
    np.testing.assert_allclose(L.quadratic_forms(w), [w @ L.kernel(k) @ w for k in range(len(L))], rtol=1e-10)
    if L._stack is not None:  # the compiled combination adds the same terms in the same order as NumPy would
        by_numpy = np.zeros((50, 50))
        for r in np.flatnonzero(d[L.other]):
            by_numpy += d[L.other[r]] * _unpack_upper(L._stack[r], 50)
        assert np.array_equal(L.combined(d), by_numpy)


def test_library_kernels_are_exactly_symmetric_so_the_cache_keeps_upper_triangles():
    """The cache stores each training kernel's upper triangle (half the memory and reads): exact only because every
    kernel of the standard library is symmetric bit for bit, which this checks, and the packing round-trips."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((60, 5))
    L = Library(standard_library(5), X)
    for k in range(len(L)):
        K = L.kernel(k)
        assert np.array_equal(K, K.T), L.kernels[k].name
    for r, k in enumerate(L.other):
        assert np.array_equal(_unpack_upper(L._stack[r], 60), L.kernel(k))
    assert L._stack.shape == (len(L.other), lib.packed_size(60))


@pytest.mark.parametrize("support", [1.0, 0.6, 0.41, 0.39, 0.1, 0.02])
def test_cached_quadratic_forms_and_frobenius_products_on_either_side_of_the_dense_rule(support):
    """Quadratic forms from the packed cache, by the dense product (support above PACKED_DENSE_SUPPORT) and by
    gathering the support's entries (below), and the Frobenius products, equal the explicit ones."""
    rng = np.random.default_rng(5)
    m = 100
    X = rng.uniform(0, 1, (m, 3))
    cached, blocked = Library(standard_library(3), X), Library(standard_library(3), X, cache_mb=0.0)
    assert cached._stack is not None and blocked._stack is None
    w = rng.standard_normal(m)
    w[rng.permutation(m)[:m - max(1, int(round(support * m)))]] = 0.0
    explicit = [w @ cached.kernel(k) @ w for k in range(len(cached))]
    np.testing.assert_allclose(cached.quadratic_forms(w), explicit, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(blocked.quadratic_forms(w), explicit, rtol=1e-11, atol=1e-12)
    M = rng.standard_normal((m, m))  # not symmetric: <M, K> = <(M + M^T) / 2, K>
    frob = [float(np.sum(M * cached.kernel(k))) for k in range(len(cached))]
    np.testing.assert_allclose(cached.frobenius_products(M), frob, rtol=1e-10)
    np.testing.assert_allclose(blocked.frobenius_products(M), frob, rtol=1e-10)


@pytest.mark.parametrize("cache_mb", [0.0, 1024.0], ids=["blocked", "cached"])
def test_tk_bases_are_combined_through_P(cache_mb):
    from tkbench.methods.simplemkl.tk_bases import random_tk_library

    rng = np.random.default_rng(2)
    X, Y = rng.uniform(0, 1, (40, 2)), rng.uniform(0, 1, (15, 2))
    kernels = random_tk_library(2, 6, degree=1, delta=0.2, seed=3) + standard_library(2, widths=(1.0,), degrees=(2,))
    L = Library(kernels, X, cache_mb=cache_mb)
    assert len(L.grouped) == 6 and len(L) == 6 + 2 * 3
    d = rng.dirichlet(np.ones(len(L)))
    w = rng.standard_normal(40)
    explicit = sum(d[k] * L.kernel(k) for k in range(len(L)))
    np.testing.assert_allclose(L.combined(d), explicit, rtol=1e-10)
    np.testing.assert_allclose(L.combined(d, Y), sum(d[k] * L.kernel(k, Y).T for k in range(len(L))), rtol=1e-10)
    np.testing.assert_allclose(L.quadratic_forms(w), [w @ L.kernel(k) @ w for k in range(len(L))], rtol=1e-9)
    for k in L.grouped:
        assert np.trace(L.kernel(k)) == pytest.approx(40)
    L.release_cache()
    np.testing.assert_allclose(L.combined(d), explicit, rtol=1e-10)
    again = random_tk_library(2, 6, degree=1, delta=0.2, seed=3)
    assert all(np.array_equal(p.P, q.P) for p, q in zip(kernels[:6], again, strict=True))


@pytest.mark.parametrize("n_features,count", [(2, 300), (30, 40)])
def test_tk_bases_stacked_sums_are_the_per_kernel_sums_bit_for_bit(n_features, count):
    """The stacked P-step products and the compiled combination add in the order of the per-kernel formulas they
    replace (so that SimpleMKL_TK rows made before and after agree to the last digit); 30 features: chunks of one."""
    from tkbench.methods.simplemkl.tk_bases import TKBaseKernel, random_tk_library
    from tkbench.methods.tk.kernel import box, tk_gradient

    rng = np.random.default_rng(5)
    X, w = rng.uniform(0, 1, (25, n_features)), rng.standard_normal(25)
    kernels = random_tk_library(n_features, count, degree=1, delta=0.1, seed=4)
    a, b = box(n_features, 0.1)
    D = tk_gradient(X, w, a, b, 1, "x")
    assert np.array_equal(TKBaseKernel.quadratic_forms(kernels, X, w), np.array([np.sum(k.P * D) for k in kernels]))
    d = rng.dirichlet(np.ones(count))
    d[rng.random(count) < 0.5] = 0.0  # SimpleMKL's weights: many exactly zero
    combined = TKBaseKernel.combine(kernels, d).P
    assert np.array_equal(combined, sum(dk * k.P for dk, k in zip(d, kernels, strict=True)))
    with pytest.raises(ValueError, match="weights for"):
        TKBaseKernel.combine(kernels, d[:-1])
