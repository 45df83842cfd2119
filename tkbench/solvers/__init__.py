"""Optimisation only (no configs, no data loading): SVM duals, Frank-Wolfe TK learning, ..."""
