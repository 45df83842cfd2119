"""Binary SVM-type classifiers as scikit-learn classifiers: labels -> +-1 targets, one-vs-rest beyond two classes."""
from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets


class SignedTargetsMixin:
    """For estimators that solve binary problems with +-1 labels and expose ``_decision(X)``.

    Two classes: one problem, +1 is ``classes_[1]``. More: one-vs-rest, one problem per class, ``multiclass_`` says
    which. A continuous target is an error (scikit-learn's ``check_classification_targets``), never a regression.
    """

    def _signed_targets(self, y) -> list[np.ndarray]:
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; the data contain only one "
                             "class")
        if len(self.classes_) == 2:
            self.multiclass_ = "binary"
            return [np.where(y == self.classes_[1], 1, -1)]
        self.multiclass_ = "one-vs-rest"
        return [np.where(y == c, 1, -1) for c in self.classes_]

    def decision_function(self, X):
        return self._decision(X)

    def predict(self, X):
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
