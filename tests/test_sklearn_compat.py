"""scikit-learn's estimator checks pass for RankSVM with every loss × solver (no expected failures).

The instances use a loose tolerance and a small iteration cap so the whole file stays fast; the
checks test the API contract (validation, shapes, pickling, cloning, determinism, sparse input,
training accuracy > 0.83 on blobs, ...), not the optimum.
"""

import itertools
import warnings

import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from ssvm import RankSVM
from ssvm.losses import LOSS_NAMES
from ssvm.solvers import SOLVERS

# precision@k on the checks' data sets (10..300 rows, half positive): a cut-off that sees most
# of the positives, so that the thresholded ranking classifies well
_LOSS_PARAMS = {"precision_at_k": {"k": 50}}
_SOLVER_PARAMS = {
    "cutting_plane": {"max_iter": 30, "tol": 1e-2},
    "pegasos": {"max_iter": 100, "tol": 1e-2},
    "frank_wolfe": {"max_iter": 30, "tol": 1e-2},
}

ESTIMATORS = [
    RankSVM(loss=loss, solver=solver, random_state=0, **_LOSS_PARAMS.get(loss, {}),
            **_SOLVER_PARAMS[solver])
    for loss, solver in itertools.product(LOSS_NAMES, sorted(SOLVERS))
]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)
