"""Paper 000 Figure 1(b), drawn from the kernel code: the normalised TK kernel k(5, z) on X = [0, 10] for the
paper's four P11 blocks (Eq. (14)), P12 = P21 = P22 = 0, monomials in x only ("we exclude monomials with z").

With only the P11 block, k(x, z) = (b - max(x, z)) Z(x)^T A Z(z) (Corollary 13 with the complement block; the
"gamma = 0" basis of the authors' code): a piecewise polynomial whose slope changes at the datum x = 5, which is
what the figure shows. Each curve is divided by its maximum over z (the paper: "normalized kernel function").
Called by ``tkbench report --all`` through ``illustrations`` in docs/reproduction.yaml.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tkbench.methods.tk.kernel import tk_kernel

# Eq. (14): A1 .. A3 on the degree-1 basis (1, x), A4 on the degree-2 basis (1, x, x^2)
BLOCKS = {
    "A1": (1, np.diag([1.0, 0.0])),
    "A2": (1, np.diag([1.0, 0.1])),
    "A3": (1, np.diag([1.0, 1.0])),
    "A4": (2, np.diag([0.0, 1.0, 1.0])),
}


def kernel_slice(block: np.ndarray, degree: int, x: float = 5.0, z: np.ndarray | None = None,
                 a: float = 0.0, b: float = 10.0) -> tuple[np.ndarray, np.ndarray]:
    """(z, k(x, z)) for P = [[block, 0], [0, 0]] on the box [a, b] (one feature)."""
    z = np.linspace(a, b, 401) if z is None else np.asarray(z, float)
    q = block.shape[0]
    P = np.zeros((2 * q, 2 * q))
    P[:q, :q] = block
    k = tk_kernel(np.array([[x]]), z[:, None], P, np.array([a]), np.array([b]), degree, basis="x")[0]
    return z, k


def figure_1b(out: Path) -> tuple[list[Path], str]:
    """Draw the figure into ``out``; returns the files and the Markdown that presents them."""
    import matplotlib.pyplot as plt

    from tkbench.report.plots import save_figure

    fig, ax = plt.subplots(figsize=(6, 4.2))
    peaks = {}
    for name, (degree, block) in BLOCKS.items():
        z, k = kernel_slice(block, degree)
        peaks[name] = float(z[np.argmax(k)])
        ax.plot(z, k / k.max(), label=f"P11 = {name} (degree {degree})")
    ax.axvline(5.0, color="grey", lw=0.8, ls=":")
    out.mkdir(parents=True, exist_ok=True)
    files = save_figure(fig, ax, out / "figure_1b_kernel_slices", "z", "k(5, z) / max",
                        "Paper 000 Figure 1(b): TK kernels k(5, z) on [0, 10]")
    text = ("**Figure 1(b)** (drawn from `tkbench/methods/tk/illustration.py`, the kernel code, not from rows): "
            "k(5, z) for P11 = A1 .. A4 of Eq. (14), P12 = P21 = P22 = 0, monomials in x only, on X = [0, 10], "
            "each curve divided by its maximum. Every curve changes slope at the datum z = 5, the paper's point: "
            "the kernel is piecewise polynomial, tessellated by the training datum. Maxima at z = "
            + ", ".join(f"{p:g} ({n})" for n, p in peaks.items()) + ".\n\n"
            f"![Figure 1(b)]({files[0].name})")
    return files, text
