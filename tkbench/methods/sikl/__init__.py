"""Shift-invariant kernel learning with cosine mixtures (paper 004): the cosine kernels (``cosine``), the
semi-infinite program (``sip``: outer QCQP / level bundle, inner global search with ``active_set`` SVMs and
L-BFGS-B local adaptation) and the estimator. Details: docs/methods/sikl.md."""
ESTIMATORS = ("SIKLClassifier",)
