"""What several families use: SVM duals (LIBSVM wrapper ``svm``, compiled ``smo``), line search,
checkpoints, the one solver report (``report``), the standard kernel library, scalers, the compiled-or-NumPy choice."""
