"""Kernel functions only (no solvers): the tessellated kernel class and, later, the other families' kernels."""
from tkbench.kernels.tessellated import box, n_basis, tk_basis, tk_gradient, tk_kernel

__all__ = ["box", "n_basis", "tk_basis", "tk_gradient", "tk_kernel"]
