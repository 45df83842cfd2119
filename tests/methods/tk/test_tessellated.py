"""The TK closed form against an exact quadrature of its defining integral (paper 000, Eq. (7) and (10))."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from tkbench.methods.tk.kernel import box, n_basis, tk_basis, tk_diagonal, tk_gradient, tk_kernel


def _random_psd(size, rng, definite=False):
    A = rng.standard_normal((size, size))
    P = A @ A.T / size
    return P + (0.5 * np.eye(size) if definite else 0)


def _N(Z, x, bs):
    """N(z, x) straight from the definition, for each row z of Z: [Z(z,x) I(z >= x); Z(z,x) (1 - I(z >= x))]."""
    monomials = np.prod(x[None, :] ** bs.delta, axis=1)[None, :] * np.prod(Z[:, None, :] ** bs.gamma[None], axis=2)
    inside = np.all(Z >= x[None, :], axis=1).astype(float)[:, None]
    return np.concatenate([monomials * inside, monomials * (1.0 - inside)], axis=1)


def quadrature_kernel(x, y, P, a, b, d, basis):
    """int_[a,b] N(z,x)^T P N(z,y) dz by tensor Gauss-Legendre on the cells cut by x, y: exact (the integrand is a
    polynomial of degree <= 2d in each z_k on every cell). All the tensor grid's points at once."""
    bs = tk_basis(len(x), d, basis)
    nodes, weights = np.polynomial.legendre.leggauss(d + 2)
    per_coord = []
    for k in range(len(x)):
        cuts = np.unique(np.clip([a[k], x[k], y[k], b[k]], a[k], b[k]))
        pts, wts = [], []
        for lo, hi in itertools.pairwise(cuts):
            pts += list((hi - lo) / 2 * nodes + (hi + lo) / 2)
            wts += list((hi - lo) / 2 * weights)
        per_coord.append((np.array(pts), np.array(wts)))
    Z = np.stack(np.meshgrid(*(p for p, _ in per_coord), indexing="ij"), axis=-1).reshape(-1, len(x))
    W = np.prod(np.stack(np.meshgrid(*(w for _, w in per_coord), indexing="ij"), axis=-1).reshape(-1, len(x)), axis=1)
    return float(W @ np.einsum("mi,ij,mj->m", _N(Z, x, bs), P, _N(Z, y, bs)))


@pytest.mark.slow
@pytest.mark.parametrize("basis", ["x", "zx"])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("d", [0, 1, 2])
def test_closed_form_equals_quadrature(n, d, basis):
    rng = np.random.default_rng(100 * n + 10 * d + (basis == "zx"))
    a, b = box(n, 0.3)
    X = rng.uniform(0, 1, size=(3, n))
    X[2, 0] = X[0, 0]  # a tie in one coordinate
    P = _random_psd(2 * n_basis(n, d, basis), rng)
    K = tk_kernel(X, None, P, a, b, d, basis)
    for i in range(3):
        for j in range(3):
            exact = quadrature_kernel(X[i], X[j], P, a, b, d, basis)
            assert K[i, j] == pytest.approx(exact, rel=1e-10, abs=1e-10), (i, j)


def test_basis_sizes_and_order():
    assert n_basis(4, 1, "x") == 5 and n_basis(4, 1, "zx") == 9 and n_basis(2, 3, "zx") == 35
    bs = tk_basis(2, 1, "zx")  # paper 000 Appendix A: Z_1(x, z) = [1, x1, x2, z1, z2]
    np.testing.assert_array_equal(bs.delta, [[0, 0], [1, 0], [0, 1], [0, 0], [0, 0]])
    np.testing.assert_array_equal(bs.gamma, [[0, 0], [0, 0], [0, 0], [1, 0], [0, 1]])


def test_appendix_a_worked_example():
    """Paper 000 Appendix A: a = (0, 0), b = (3, 4), d = 1, entries i, j in {1, 2, 4} (1-based)."""
    a, b = np.array([0.0, 0.0]), np.array([3.0, 4.0])
    x, y = np.array([1.2, 0.7]), np.array([0.4, 2.5])
    p1, p2 = np.maximum(x, y)
    x1, y1 = x[0], y[0]
    g = np.array([
        [(3 - p1) * (4 - p2), y1 * (3 - p1) * (4 - p2), 0.5 * (9 - p1**2) * (4 - p2)],
        [x1 * (3 - p1) * (4 - p2), x1 * y1 * (3 - p1) * (4 - p2), x1 * 0.5 * (9 - p1**2) * (4 - p2)],
        [0.5 * (9 - p1**2) * (4 - p2), y1 * 0.5 * (9 - p1**2) * (4 - p2), (27 - p1**3) / 3 * (4 - p2)],
    ])
    t_xy = np.array([
        [(3 - x1) * (4 - x[1]), y1 * (3 - x1) * (4 - x[1]), 0.5 * (9 - x1**2) * (4 - x[1])],
        [x1 * (3 - x1) * (4 - x[1]), x1 * y1 * (3 - x1) * (4 - x[1]), x1 * 0.5 * (9 - x1**2) * (4 - x[1])],
        [0.5 * (9 - x1**2) * (4 - x[1]), y1 * 0.5 * (9 - x1**2) * (4 - x[1]), (27 - x1**3) / 3 * (4 - x[1])],
    ]) - g
    y2 = y[1]
    t_yx_printed = np.array([
        [(3 - y1) * (4 - y2), x1 * (3 - y1) * (4 - y2), 0.5 * (9 - y1**2) * (4 - y2)],
        [y1 * (3 - y1) * (4 - y2), x1 * y1 * (3 - y1) * (4 - y2), y1 * 0.5 * (9 - y1**2) * (4 - y2)],
        [0.5 * (9 - y1**2) * (4 - y2), x1 * 0.5 * (9 - y1**2) * (4 - y2), (27 - y1**3) / 3 * (4 - y2)],
    ]) - g
    # the printed constant matrix of h is [[12, 12 y1, 36], [12 x1, ...], [36, 36 y1, 108]]; T(a, b, zeta) with its
    # 1/zeta factor gives 18 and 36 where it prints 36 and 108
    full = np.array([[12, 12 * y1, 18], [12 * x1, 12 * x1 * y1, 18 * x1], [18, 18 * y1, 36]])
    idx = [0, 1, 3]
    q = 5
    for r, i in enumerate(idx):
        for c, j in enumerate(idx):
            P = np.zeros((2 * q, 2 * q))
            P[i, j] = 1.0  # Q_ij alone: g_ij
            assert tk_kernel(x[None], y[None], P, a, b, 1, "zx")[0, 0] == pytest.approx(g[r, c], rel=1e-12)
            # a symmetric P with R_ij = 1 (so R^T_ji = 1): t_ij(x, y) plus the (2,1)-block integral
            # x^delta_j y^delta_i T(y, b) - g_ji, which is the printed t(y, x) entry with g_ij swapped for g_ji
            P = np.zeros((2 * q, 2 * q))
            P[i, q + j] = 1.0
            expected = t_xy[r, c] + t_yx_printed[r, c] + g[r, c] - g[c, r]
            assert tk_kernel(x[None], y[None], P, a, b, 1, "zx")[0, 0] == pytest.approx(expected, rel=1e-12)
    # all four blocks together integrate z^(gamma_i + gamma_j) over the whole box
    for r, i in enumerate(idx):
        for c, j in enumerate(idx):
            E = np.zeros((q, q))
            E[i, j] = E[j, i] = 1.0
            P = np.block([[E, E], [E, E]])  # the four indicator products sum to 1 on the whole box
            k = tk_kernel(x[None], y[None], P, a, b, 1, "zx")[0, 0]
            assert k == pytest.approx(full[r, c] + (full[c, r] if i != j else 0.0), rel=1e-12)


@pytest.mark.parametrize("basis", ["x", "zx"])
def test_kernel_is_symmetric_psd_and_universal(basis):
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, size=(60, 3))
    a, b = box(3, 0.1)
    q = n_basis(3, 1, basis)
    K = tk_kernel(X, None, _random_psd(2 * q, rng, definite=True), a, b, 1, basis)
    np.testing.assert_allclose(K, K.T, rtol=1e-12, atol=1e-12)
    eig = np.linalg.eigvalsh(K)
    assert eig.min() > 1e-12 * eig.max()  # positive definite on distinct points: full rank
    assert np.linalg.matrix_rank(K) == 60
    Kpsd = tk_kernel(X, None, _random_psd(2 * q, rng), a, b, 1, basis)
    assert np.linalg.eigvalsh(Kpsd).min() > -1e-9 * np.abs(Kpsd).max()


@pytest.mark.parametrize("basis", ["x", "zx"])
@pytest.mark.parametrize("d", [0, 1, 2])
def test_gradient_matrix_gives_the_quadratic_form(basis, d):
    rng = np.random.default_rng(d)
    X = rng.uniform(0, 1, size=(40, 3))
    a, b = box(3, 0.2)
    w = rng.standard_normal(40)
    q = n_basis(3, d, basis)
    D = tk_gradient(X, w, a, b, d, basis)
    np.testing.assert_allclose(D, D.T)
    for _ in range(3):
        P = _random_psd(2 * q, rng)
        K = tk_kernel(X, None, P, a, b, d, basis)
        assert np.sum(P * D) == pytest.approx(w @ K @ w, rel=1e-10)


def test_blocking_does_not_change_the_result(monkeypatch):
    import tkbench.methods.tk.kernel as tk

    monkeypatch.setenv("TKBENCH_TK_ENGINE", "numpy")  # row blocks belong to the NumPy engine
    rng = np.random.default_rng(0)
    X, Y = rng.uniform(0, 1, (50, 2)), rng.uniform(0, 1, (30, 2))
    a, b = box(2, 0.1)
    P = _random_psd(2 * n_basis(2, 2, "zx"), rng)
    full = tk_kernel(X, Y, P, a, b, 2, "zx")
    monkeypatch.setattr(tk, "_BLOCK_BYTES", 8 * 30 * 7)  # a few rows per block
    np.testing.assert_allclose(tk_kernel(X, Y, P, a, b, 2, "zx"), full, rtol=1e-13)
    w = rng.standard_normal(50)
    D_small = tk_gradient(X, w, a, b, 2, "zx")
    monkeypatch.setattr(tk, "_BLOCK_BYTES", 64 * 2**20)
    np.testing.assert_allclose(D_small, tk_gradient(X, w, a, b, 2, "zx"), rtol=1e-12)


@pytest.mark.parametrize("basis", ["x", "zx"])
def test_cross_kernel_is_consistent_with_its_transpose(basis):
    """k(x, y) = k(y, x) for symmetric P: the test kernel pairs P's blocks as the training kernel does."""
    rng = np.random.default_rng(9)
    X, Y = rng.uniform(0, 1, (20, 3)), rng.uniform(0, 1, (15, 3))
    a, b = box(3, 0.2)
    P = _random_psd(2 * n_basis(3, 2, basis), rng)
    np.testing.assert_allclose(tk_kernel(X, Y, P, a, b, 2, basis), tk_kernel(Y, X, P, a, b, 2, basis).T, rtol=1e-12)
    both = np.vstack([X, Y])
    np.testing.assert_allclose(tk_kernel(X, Y, P, a, b, 2, basis), tk_kernel(both, None, P, a, b, 2, basis)[:20, 20:],
                               rtol=1e-12)


@pytest.mark.parametrize("basis", ["x", "zx"])
@pytest.mark.parametrize("d", [0, 1, 2])
def test_numba_and_numpy_engines_agree(basis, d, monkeypatch):
    import tkbench.methods.tk.kernel as tk

    monkeypatch.setenv("TKBENCH_TK_ENGINE", "numba")
    if tk.engine() != "numba":
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(d)
    X, Y = rng.uniform(0, 1, (70, 3)), rng.uniform(0, 1, (40, 3))
    a, b = box(3, 0.25)
    P = _random_psd(2 * n_basis(3, d, basis), rng)
    w = rng.standard_normal(70)
    fast = tk_kernel(X, Y, P, a, b, d, basis), tk_gradient(X, w, a, b, d, basis)
    monkeypatch.setenv("TKBENCH_TK_ENGINE", "numpy")
    assert tk.engine() == "numpy"
    ref = tk_kernel(X, Y, P, a, b, d, basis), tk_gradient(X, w, a, b, d, basis)
    np.testing.assert_allclose(fast[0], ref[0], rtol=1e-12, atol=1e-12 * np.abs(ref[0]).max())
    np.testing.assert_allclose(fast[1], ref[1], rtol=1e-11, atol=1e-12 * np.abs(ref[1]).max())


@pytest.mark.parametrize("basis", ["x", "zx"])
@pytest.mark.parametrize("n,d", [(1, 0), (1, 2), (2, 1), (3, 2), (4, 1)])
def test_diagonal_equals_the_kernel_matrix_diagonal(n, d, basis):
    rng = np.random.default_rng(n * 10 + d)
    X = rng.uniform(0, 1, (25, n))
    a, b = box(n, 0.3)
    size = 2 * n_basis(n, d, basis)
    Ps = np.stack([_random_psd(size, rng) for _ in range(3)])
    Ps[0, : size // 2, size // 2 :] += 0.7  # R (the cross block) does not enter the diagonal
    Ps[0, size // 2 :, : size // 2] += 0.7
    stacked = tk_diagonal(X, Ps, a, b, d, basis)
    assert stacked.shape == (25, 3)
    for k, P in enumerate(Ps):
        expected = np.diag(tk_kernel(X, None, P, a, b, d, basis))
        np.testing.assert_allclose(tk_diagonal(X, P, a, b, d, basis), expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(stacked[:, k], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("basis", ["x", "zx"])
@pytest.mark.parametrize("d", [0, 1, 2])
def test_the_symmetric_training_kernel_equals_the_general_one(basis, d, monkeypatch):
    """tk_kernel(X, None, P) with a symmetric P visits half the pairs (numba): the same matrix as the general
    (X, Y) path with Y a copy of X, and as the NumPy reference; exactly symmetric."""
    import tkbench.methods.tk.kernel as tk

    monkeypatch.setenv("TKBENCH_TK_ENGINE", "numba")
    if tk.engine() != "numba":
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(10 + d)
    X = rng.uniform(0, 1, (203, 3))  # not a multiple of the 64-row tiles
    a, b = box(3, 0.25)
    P = _random_psd(2 * n_basis(3, d, basis), rng)
    fast = tk_kernel(X, None, P, a, b, d, basis)
    general = tk_kernel(X, X.copy(), P, a, b, d, basis)
    assert np.array_equal(fast, fast.T)
    np.testing.assert_allclose(fast, general, rtol=1e-12, atol=1e-12 * np.abs(general).max())
    monkeypatch.setenv("TKBENCH_TK_ENGINE", "numpy")
    np.testing.assert_allclose(fast, tk_kernel(X, None, P, a, b, d, basis), rtol=1e-12,
                               atol=1e-12 * np.abs(general).max())


@pytest.mark.parametrize("basis,d", [("x", 1), ("zx", 2)])
def test_the_compiled_passes_agree_across_column_blocks(basis, d, monkeypatch):
    """The compiled loops take the columns in blocks of BLOCK (256): rows and columns that span several blocks
    and end mid-block give the NumPy reference's training kernel, cross kernel and gradient."""
    import tkbench.methods.tk.kernel as tk

    monkeypatch.setenv("TKBENCH_TK_ENGINE", "numba")
    if tk.engine() != "numba":
        pytest.skip("numba is not installed")
    from tkbench.methods.tk._numba import BLOCK

    rng = np.random.default_rng(5)
    X, Y = rng.uniform(0, 1, (2 * BLOCK + 37, 3)), rng.uniform(0, 1, (BLOCK + 5, 3))
    a, b = box(3, 0.2)
    P = _random_psd(2 * n_basis(3, d, basis), rng)
    w = rng.standard_normal(len(X))
    fast = tk_kernel(X, None, P, a, b, d, basis), tk_kernel(X, Y, P, a, b, d, basis), tk_gradient(X, w, a, b, d, basis)
    monkeypatch.setenv("TKBENCH_TK_ENGINE", "numpy")
    ref = tk_kernel(X, None, P, a, b, d, basis), tk_kernel(X, Y, P, a, b, d, basis), tk_gradient(X, w, a, b, d, basis)
    for f, r in zip(fast, ref, strict=True):
        np.testing.assert_allclose(f, r, rtol=1e-11, atol=1e-12 * np.abs(r).max())
