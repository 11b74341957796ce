"""Every warning ssvm raises points at the caller's line (this file), also through scikit-learn's wrappers."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning, UndefinedMetricWarning
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ssvm import LabelRankSVM, LatentRankSVM, RankSVM
from ssvm.exceptions import DegenerateQueriesWarning, MissingQidWarning, external_stacklevel
from ssvm.metrics import mean_average_precision

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 3))
Y_REL = (X[:, 0] > 0).astype(float)
QID = np.arange(40) // 10
BAGS = list(np.random.default_rng(0).normal(size=(8, 3, 3)))


def _caught(category, call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # also restores the once-per-session warnings
        call()
    found = [w for w in caught if issubclass(w.category, category)]
    assert found, f"no {category.__name__} raised"
    return found


@pytest.mark.parametrize("category, call", [
    (ConvergenceWarning, lambda: RankSVM(max_iter=1, tol=1e-12).fit(X, Y_REL)),
    (ConvergenceWarning, lambda: make_pipeline(StandardScaler(), RankSVM(max_iter=1, tol=1e-12)).fit(X, Y_REL)),
    (DegenerateQueriesWarning, lambda: RankSVM(max_iter=20).fit(X, np.r_[Y_REL[:30], np.zeros(10)], qid=QID)),
    (DegenerateQueriesWarning,
     lambda: make_pipeline(StandardScaler(), RankSVM(max_iter=20)).fit(X, np.r_[Y_REL[:30], np.zeros(10)],
                                                                       ranksvm__qid=QID)),
    (MissingQidWarning, lambda: RankSVM(max_iter=20).fit(X, Y_REL, qid=QID).score(X, Y_REL)),
    (MissingQidWarning, lambda: GridSearchCV(RankSVM(max_iter=20), {"C": [1.0]}, cv=GroupKFold(2)).fit(
        X, Y_REL, qid=QID, groups=QID)),
    (UserWarning, lambda: RankSVM(k=3, max_iter=20).fit(X, Y_REL)),
    (UndefinedMetricWarning, lambda: mean_average_precision(np.zeros(5), np.arange(5.0))),
    (ConvergenceWarning, lambda: LabelRankSVM(max_iter=1, tol=1e-12).fit(X, X[:, :3] > 0)),
    (ConvergenceWarning, lambda: LatentRankSVM(max_cccp_iter=1, cccp_tol=0, max_iter=30, init="mean",
                                               hinge_scale=1.0).fit(BAGS, np.arange(8) % 2)),
])
def test_warnings_point_at_the_callers_line(category, call):
    for warning in _caught(category, call):
        assert warning.filename == __file__, (warning.filename, str(warning.message))


def test_external_stacklevel_is_one_outside_ssvm():
    assert external_stacklevel() == 1
