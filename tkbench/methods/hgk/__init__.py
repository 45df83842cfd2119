"""Hierarchical Gaussian kernels (paper 002): the kernel trees (``kernel``, compiled loops in ``_numba``),
Algorithm 1 (annealing on the kernel weights, ``annealing``; hinge SVM by dual coordinate descent, ``hinge_svm``)
and the estimators. Details: docs/methods/hgk.md."""
ESTIMATORS = ("HGKClassifier", "HGKRegressor")
