"""The baselines of the papers: random forest, neural net (MLP), RBF SVM / SVR, RBF kernel ridge."""
ESTIMATORS = ()
