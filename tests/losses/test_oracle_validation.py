"""Bad input gets a ValueError that names the problem."""

import numpy as np
import pytest

from ssvm.losses import (
    LOSS_NAMES,
    ORACLE_NAMES,
    ap_direct_loss_inference,
    check_qs_suitable,
    get_oracle,
    loss_augmented_inference,
    loss_entry,
    ranking_loss,
    supported_oracles,
)
from ssvm.losses.brute import MAX_BRUTE_SAMPLES

S = np.array([0.5, -1.0, 2.0])
Y = np.array([1, 0, 0])


@pytest.mark.parametrize("scores,y,match", [
    ([0.5, np.nan, 1.0], Y, "NaN or inf"),
    ([0.5, np.inf, 1.0], Y, "NaN or inf"),
    (S, ["a", "b", "c"], "numeric relevance grades"),
    (S, [1, np.nan, 0], "NaN or infinity"),
    (S, [0, 0, 0], "no positive"),
    (S, [True, True, True], "no negative"),
    (S, [1, 0], "length mismatch"),
    (S[None], Y, "1-D"),
    (S, Y[None], "1-D"),
    (["x", "y", "z"], Y, "real numbers"),
])
@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_bad_scores_and_labels(scores, y, match, loss):
    params = {"gain": "binary"} if "gain" in loss_entry(loss).params else {}  # graded: test_bad_grades
    if loss_entry(loss).reads_grades:  # grades: one grade is what the pairwise losses refuse
        match = {"no positive": "two distinct grades", "no negative": "two distinct grades",
                 "NaN or infinity": "NaN or infinite"}.get(match, match)
    with pytest.raises(ValueError, match=match):
        loss_augmented_inference(scores, y, loss=loss, **params)
    with pytest.raises(ValueError, match=match):
        ranking_loss(scores, y, loss=loss, **params)


@pytest.mark.parametrize("y,match", [
    ([1, -2, 0], "1 of 3 rows with negative relevance grades"),
    ([1, 0.5, 0], "1 of 3 rows with non-integer"),
    ([np.nan, 1, 0], "1 of 3 rows with NaN"),
    (["a", "b", "c"], "numeric relevance grades"),
    ([2, 2, 2], "two distinct grades"),
])
@pytest.mark.parametrize("gain", ["exponential", "linear"])
def test_bad_grades(y, match, gain):
    """Graded NDCG reads grades: a negative, fractional or missing one is refused, saying what to pass."""
    with pytest.raises(ValueError, match=match):
        loss_augmented_inference(S, y, loss="ndcg", gain=gain)
    with pytest.raises(ValueError, match=match):
        ranking_loss(S, y, loss="ndcg", gain=gain)
    c, delta = loss_augmented_inference(S, [1, 0, 2], loss="ndcg", gain=gain)  # grades are fine
    assert c.shape == (3,) and delta == 0.0  # ranked ideally with margins above the loss


def test_label_codings_are_equivalent():
    ref = loss_augmented_inference(S, np.array([True, False, False]))
    # one convention everywhere (ssvm._queries.check_relevance): y > 0 is relevant
    for y in ([1, 0, 0], [1, -1, -1], [1.0, 0.0, 0.0], [2, 0, -1], [0.5, -1, 0]):
        np.testing.assert_array_equal(loss_augmented_inference(S, y)[0], ref[0])


def test_unknown_names_and_unsupported_pairs():
    with pytest.raises(ValueError, match="unknown loss"):
        get_oracle("map")
    with pytest.raises(ValueError, match="unknown oracle"):
        get_oracle("ap", "fast")
    with pytest.raises(ValueError, match="does not support"):
        get_oracle("ap", "chakrabarti")
    with pytest.raises(ValueError, match="does not support"):
        get_oracle("ndcg", "yue")
    with pytest.raises(ValueError, match="does not support"):
        loss_augmented_inference(S, Y, "zero_one", "qs")
    with pytest.raises(ValueError, match="unknown parameter"):
        get_oracle("ap", k=3)
    with pytest.raises(ValueError, match="integer k"):
        get_oracle("precision_at_k", k=0)
    with pytest.raises(ValueError, match="integer k"):
        ranking_loss(S, Y, "precision_at_k", k=1.5)
    with pytest.raises(ValueError, match="unknown loss"):
        supported_oracles("auc")


def test_registry_names():
    assert LOSS_NAMES == ("ap", "ndcg", "zero_one", "precision_at_k", "pairwise", "roc_auc", "mrr", "f1", "prbep",
                          "ndcg_at_k", "recall_at_k")
    assert ORACLE_NAMES == ("auto", "qs", "yue", "chakrabarti", "search", "dp", "brute")
    assert supported_oracles("ap") == ("auto", "qs", "yue", "search", "dp", "brute")
    assert supported_oracles("ndcg") == ("auto", "qs", "chakrabarti", "brute")
    for loss in LOSS_NAMES:
        assert supported_oracles(loss)[0] == "auto"


def test_brute_refuses_large_inputs():
    n = MAX_BRUTE_SAMPLES + 1
    y = np.arange(n) % 2 == 0
    for loss in LOSS_NAMES:
        with pytest.raises(ValueError, match="exponential"):
            loss_augmented_inference(np.zeros(n), y, loss=loss, oracle="brute")


def test_direct_loss_and_check_arguments():
    with pytest.raises(ValueError, match="direction"):
        ap_direct_loss_inference(S, Y, direction=0)
    with pytest.raises(ValueError, match="epsilon"):
        ap_direct_loss_inference(S, Y, epsilon=-1)
    with pytest.raises(ValueError, match="no positive"):
        ap_direct_loss_inference(S, [0, 0, 0])
    with pytest.raises(ValueError, match="QSLoss"):
        check_qs_suitable("ap", 2, 2)
    with pytest.raises(ValueError, match="integers >= 1"):
        check_qs_suitable(__import__("ssvm.losses", fromlist=["APLoss"]).APLoss(), 0, 2)


BATCH_LOSSES = [(loss, oracle) for loss in ("ap", "ndcg", "precision_at_k") for oracle in supported_oracles(loss)
                if oracle != "brute"]


def _batch_oracle(loss, oracle, **params):
    return get_oracle(loss, oracle, **({"k": 1} if loss == "precision_at_k" else {}), **params)


# an empty query once looped forever in the packed keys' index bits (pytest's timeout, 600 s, ends such a loop)
@pytest.mark.parametrize("loss,oracle", BATCH_LOSSES + [("zero_one", "auto")])
def test_batch_refuses_an_empty_query(loss, oracle):
    o = _batch_oracle(loss, oracle)
    s, y = np.array([1.0, 0.5, 0.2]), np.array([True, False, True])
    with pytest.raises(ValueError, match=r"query 1 is empty \(starts\[1\] = 3, ends\[1\] = 3\)"):
        o.batch(s, y if not o.graded else y.astype(np.int64), np.array([0, 3]), np.array([3, 3]))


@pytest.mark.parametrize("loss,oracle", BATCH_LOSSES)
@pytest.mark.parametrize("labels,which", [([True, True], "no negative"), ([False, False], "no positive")])
def test_batch_names_a_query_without_a_positive_or_a_negative(loss, oracle, labels, which):
    o = _batch_oracle(loss, oracle, **({"gain": "binary"} if loss == "ndcg" else {}))
    s, y = np.array([1.0, 0.5, 0.2, 0.1]), np.array([True, False, *labels])
    try:
        c, delta = o.batch(s, y, np.array([0, 2]), np.array([2, 4]))
    except ValueError as err:  # an oracle that cannot serve it says which query and why
        assert f"query 1 (rows 2:4) has {which} row" in str(err)
    else:  # one that can gives the degenerate query's own answer: no loss to gain
        assert np.isfinite(delta).all() and np.isfinite(c).all()


def test_graded_batch_names_a_query_whose_grades_are_equal():
    """With 0/1 grades the graded oracle is the binary one, which cannot serve the query: named;
    with more grades it skips it (no loss, no coefficients; docs/design.md §9)."""
    o = get_oracle("ndcg")
    s, starts, ends = np.array([0.5, 1.0, 0.2, 0.1]), np.array([0, 2]), np.array([2, 4])  # query 0 mis-ranked
    with pytest.raises(ValueError, match=r"query 1 \(rows 2:4\) has all its grades equal \(1\)"):
        o.batch(s, np.array([1, 0, 1, 1]), starts, ends)
    c, delta = o.batch(s, np.array([2, 0, 1, 1]), starts, ends)
    assert delta[1] == 0.0 and not c[2:].any() and delta[0] > 0


def test_index_bits_of_no_sample_ends():
    from ssvm.losses._core.sorting import index_bits

    assert index_bits(0) == 1 and index_bits(1) == 1
