"""The examples in the docstrings of ssvm.label_ranking and the emotions loader run as printed."""

import doctest
import warnings

import pytest

import ssvm.datasets.multilabel
import ssvm.label_ranking.core
import ssvm.label_ranking.estimator
import ssvm.label_ranking.inference


@pytest.mark.parametrize("module", [ssvm.label_ranking.core, ssvm.label_ranking.estimator,
                                    ssvm.label_ranking.inference, ssvm.datasets.multilabel])
def test_doctests(module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the example data has unlabelled samples
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
