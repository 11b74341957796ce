"""scikit-learn's estimator checks where they apply to a multi-label ranker.

The generic checks that fit feed a single-column target (``y`` of shape (n, 1), several class
values) to a multi-output estimator. A label ranking needs at least two binary labels, so
LabelRankSVM rejects that target with a ValueError, and those checks are listed below as expected
failures; ``test_label_rank_svm.py::test_sklearn_contract_on_multilabel_data`` tests the same
properties (fit returns self, parameters untouched, idempotence, pickling, sparse and read-only
input, sample-order and subset invariance, n_features_in_) on multi-label data. Every check that
does not fit passes.
"""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from ssvm import LabelRankSVM

_SINGLE_COLUMN = "fits on a single-column target; a label ranking needs >= 2 binary labels"

EXPECTED_FAILED = {name: _SINGLE_COLUMN for name in (
    "check_fit_score_takes_y", "check_estimators_overwrite_params",
    "check_dont_overwrite_parameters", "check_estimators_fit_returns_self",
    "check_readonly_memmap_input", "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit", "check_estimators_dtypes", "check_dtype_object",
    "check_pipeline_consistency", "check_estimators_nan_inf", "check_estimator_sparse_tag",
    "check_estimator_sparse_array", "check_estimator_sparse_matrix", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_fit2d_1sample", "check_fit2d_1feature",
    "check_dict_unchanged", "check_fit_idempotent", "check_fit_check_is_fitted",
    "check_n_features_in", "check_fit2d_predict1d",
)}


@parametrize_with_checks([LabelRankSVM()], expected_failed_checks=lambda est: EXPECTED_FAILED)
def test_sklearn_checks(estimator, check):
    check(estimator)


def test_expected_failures_fail_for_the_stated_reason():
    """An expected failure must be the single-column rejection, not another error."""
    import numpy as np

    with pytest.raises(ValueError, match="at least two labels"):
        LabelRankSVM().fit(np.zeros((5, 2)), np.zeros((5, 1)))
