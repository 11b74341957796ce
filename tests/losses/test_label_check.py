"""The public oracle entry's label check: every binary coding, each bad label named, no hashing."""

import numpy as np
import pytest

import ssvm.losses._validation as validation
from ssvm.losses import loss_augmented_inference
from ssvm.losses._validation import validate_scores_labels

S = np.array([0.3, -1.0, 2.0, 0.5])
POSITIVES = np.array([True, False, True, False])


@pytest.mark.parametrize("y", [
    POSITIVES,
    POSITIVES.astype(np.int8), POSITIVES.astype(np.uint8), POSITIVES.astype(np.int32), POSITIVES.astype(np.int64),
    POSITIVES.astype(np.float32), POSITIVES.astype(np.float64),
    np.where(POSITIVES, 1, -1), np.where(POSITIVES, 1.0, -1.0).astype(np.float32),
    [1, 0, 1, 0], [True, False, True, False], [1.0, -1.0, 1.0, -1.0],
])
def test_every_binary_coding_gives_the_same_positives(y):
    s, yb = validate_scores_labels(S, y)
    assert yb.dtype == bool and np.array_equal(yb, POSITIVES)
    c, delta = loss_augmented_inference(S, y)
    c_ref, delta_ref = loss_augmented_inference(S, POSITIVES)
    assert np.array_equal(c, c_ref) and delta == delta_ref


@pytest.mark.parametrize("y", [[1, 0, 2, 0], [1.0, 0.5, 1.0, 0.0], [1, -1, 0, 1], [2, 0, 2, 0]])
def test_grades_and_mixed_codings_follow_the_one_convention(y):
    """One relevance convention (ssvm._queries.check_relevance): y > 0 is relevant."""
    _, yb = validate_scores_labels(S, np.asarray(y))
    np.testing.assert_array_equal(yb, np.asarray(y) > 0)


@pytest.mark.parametrize("y, match", [
    ([1.0, np.nan, 1.0, 0.0], "NaN or infinity"),
    (["a", "b", "a", "b"], "numeric relevance grades"),
    ([1, 1, 1, 1], "no negative"),
    ([-1, -1, -1, -1], "no positive"),
    ([0.0, 0.0, 0.0, 0.0], "no positive"),
])
def test_bad_labels_are_named(y, match):
    with pytest.raises(ValueError, match=match):
        validate_scores_labels(S, np.asarray(y))


def test_label_check_uses_no_sort_or_hashing(monkeypatch):
    """The check is comparisons only (np.unique hashed or sorted all N labels: most of a call's time)."""
    def forbidden(*args, **kwargs):
        raise AssertionError("the label check must not sort or hash the labels")

    for name in ("unique", "isin", "sort", "argsort"):
        monkeypatch.setattr(validation.np, name, forbidden)
    y = np.random.default_rng(0).random(10_000) < 0.1
    for coded in (y, y.astype(np.int64), y.astype(np.float64), np.where(y, 1, -1)):
        assert np.array_equal(validate_scores_labels(np.zeros(y.size), coded)[1], y)
