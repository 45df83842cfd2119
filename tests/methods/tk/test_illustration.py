"""Paper 000 Figure 1(b) from the kernel code (issue 52): the slices are the closed form of the P11 block."""
from __future__ import annotations

import numpy as np

from tkbench.methods.tk.illustration import BLOCKS, figure_1b, kernel_slice


def test_kernel_slices_are_the_closed_form_and_change_slope_at_the_datum(tmp_path):
    """With only P11 = A, k(5, z) = (10 - max(5, z)) Z(5)^T A Z(z) (an independent computation), so A1 is flat
    then falls linearly from z = 5, and every curve's slope jumps at the datum."""
    z = np.linspace(0.0, 10.0, 201)
    for degree, block in BLOCKS.values():
        _, k = kernel_slice(block, degree, z=z)
        Z5 = np.array([5.0 ** p for p in range(degree + 1)])
        Zz = np.stack([z ** p for p in range(degree + 1)], axis=1)
        np.testing.assert_allclose(k, (10.0 - np.maximum(5.0, z)) * (Zz @ block @ Z5), rtol=1e-10, atol=1e-10)
        left = (k[100] - k[99]) / (z[100] - z[99])
        right = (k[101] - k[100]) / (z[101] - z[100])
        assert abs(right - left) > 0.1 * abs(k).max() / 10.0  # a kink at z = 5 (A1: slope 0, then -1)
    files, text = figure_1b(tmp_path)
    assert all(f.exists() for f in files) and "figure_1b_kernel_slices.png" in text
