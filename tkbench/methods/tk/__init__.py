"""Tessellated kernels (papers 000 and 003): the kernel (Eq. 7/10 of paper 000, compiled loops in ``_numba``),
Frank-Wolfe with the alternating-direction step (paper 003, Algorithm 2; ``frank_wolfe``, ``apd``, ``kernel_pair``),
the SDP of paper 000 (Opt. 24; ``sdp``) and the estimators. Details: docs/methods/tk.md."""
ESTIMATORS = ("TKClassifier", "TKRegressor")
