"""Neural kernel ridge regression (paper 001): polynomial combinations of base kernels (``combination``),
projected gradient on the combination weights (``projected_gradient``, Prop. 1) and the estimators.
Details: docs/methods/nkrr.md."""
ESTIMATORS = ("NKRRClassifier", "NKRRRegressor", "KRRClassifier")
