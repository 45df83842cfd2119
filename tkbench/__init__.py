"""tkbench: a command-line benchmarking suite for kernel learning.

Every method is also a scikit-learn estimator; see :mod:`tkbench.learners`.
"""
__version__ = "0.1.0"
