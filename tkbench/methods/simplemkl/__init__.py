"""SimpleMKL (Rakotomamonjy et al. 2008): reduced-gradient descent on the kernel weights
(``reduced_gradient``) over the standard library (``tkbench.methods._shared.library``) or over random TK bases
(paper 000, Opt. 25; ``tk_bases``). Details: docs/methods/simplemkl.md."""
ESTIMATORS = ("SimpleMKLClassifier", "SimpleMKLRegressor")
