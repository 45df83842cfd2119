"""Arithmetic on the stored kernel pair (K, K_S) of the Frank-Wolfe line search (tkbench.methods.tk.kernel_pair)."""
import numpy as np
import pytest

from tkbench.methods.tk.kernel_pair import quadratic_difference


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_quadratic_difference_equals_the_formed_difference(dtype):
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((2, 300, 300))
    K, KS = (A @ A.T).astype(dtype), (B @ B.T).astype(dtype)
    w = rng.standard_normal(300)
    w[::7] = 0.0  # rows skipped
    exact = float(w @ (KS.astype(np.float64) - K.astype(np.float64)) @ w)
    assert quadratic_difference(K, KS, w) == pytest.approx(exact, rel=1e-12)


def test_quadratic_difference_does_not_cancel():
    """Two kernels on a 1e12 constant that differ by ~1e-2 entry-wise: the entry-wise difference (exact for such
    close numbers) keeps the answer to rounding, while the difference of the two quadratic forms loses it (checked
    here, so that the test tells the two apart)."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((200, 200))
    K = A @ A.T + 1e12
    E = rng.standard_normal((200, 5))
    KS = K + 1e-2 * (E @ E.T)
    w = rng.standard_normal(200)
    exact = float(w @ (KS - K) @ w)  # KS - K is exact (Sterbenz): the stored matrices' true difference
    naive = float(w @ KS @ w - w @ K @ w)
    assert abs(naive - exact) > 1e-4 * abs(exact)  # the cancellation this function exists to avoid
    assert quadratic_difference(K, KS, w) == pytest.approx(exact, rel=1e-9)


def test_quadratic_difference_checks_shapes():
    with pytest.raises(ValueError, match="do not match"):
        quadratic_difference(np.eye(3), np.eye(4), np.ones(3))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matvec_accumulates_in_float64(dtype):
    from tkbench.methods.tk.kernel_pair import matvec

    rng = np.random.default_rng(2)
    K = rng.standard_normal((200, 200)).astype(dtype)
    w = rng.standard_normal(200)
    out = matvec(K, w)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, K.astype(np.float64) @ w, rtol=1e-12, atol=1e-12)
