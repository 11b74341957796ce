"""The registry's one table: every public entry point reads it, losses declare their kind and
whether the compiled batch loop serves them, and a loss that contradicts its declaration is told so."""

import numpy as np
import pytest

from ssvm.losses import (
    LOSS_NAMES,
    APLoss,
    NDCGLoss,
    Oracle,
    QSLoss,
    get_oracle,
    loss_augmented_inference,
    ranking_loss,
    supported_oracles,
)
from ssvm.losses.qs import qs_batch, qs_oracle
from ssvm.losses.rank_losses import KIND_AP, KIND_NDCG_LOG2, KIND_SUM_TABLE
from ssvm.losses.registry import _QS_LOSS_ENTRY, _REGISTRY

S = np.array([0.3, -1.0, 2.0, 0.1, 0.7])
Y = np.array([True, False, False, True, False])


def test_the_table_is_what_the_entry_points_read():
    assert set(_REGISTRY) == set(LOSS_NAMES)
    for loss, entry in _REGISTRY.items():
        assert set(supported_oracles(loss)) == {"auto", *entry.oracles}
        binary = {"gain": "binary"} if "gain" in entry.params else {}  # graded NDCG: its own oracle
        for name in supported_oracles(loss):
            oracle = get_oracle(loss, name, **binary)
            resolved = entry.auto if name == "auto" else name
            assert isinstance(oracle, Oracle) and oracle.name == resolved and oracle.graded == entry.reads_grades
            assert oracle.single is entry.oracles[resolved].single
            c, d = oracle(S, Y)
            np.testing.assert_array_equal(c, loss_augmented_inference(S, Y, loss, name, **binary)[0])
            if binary:  # with 0/1 labels the graded oracle is the binary one
                assert get_oracle(loss, name).graded
                np.testing.assert_array_equal(c, loss_augmented_inference(S, Y, loss, name)[0])
    assert supported_oracles(APLoss()) == ("auto",) + tuple(_QS_LOSS_ENTRY.oracles)
    assert ranking_loss(S, Y, APLoss()) == ranking_loss(S, Y, "ap")  # a loss object: the same value


def test_losses_declare_their_kind():
    assert APLoss.kind == KIND_AP and APLoss().kernel_spec(3, 4)[0] == KIND_AP
    assert NDCGLoss().kind == KIND_NDCG_LOG2 == NDCGLoss().kernel_spec(3, 4)[0]
    assert NDCGLoss("chakrabarti").kind == KIND_SUM_TABLE == NDCGLoss("chakrabarti").kernel_spec(3, 4)[0]
    assert QSLoss.kind == KIND_SUM_TABLE


def test_compiled_batch_is_declared_per_class():
    assert APLoss.compiled_batch and NDCGLoss().compiled_batch
    assert not NDCGLoss("chakrabarti").compiled_batch and not QSLoss.compiled_batch
    sub_ap = type("SubAP", (APLoss,), {})
    sub_ndcg = type("SubNDCG", (NDCGLoss,), {})
    assert not sub_ap.compiled_batch and not sub_ndcg().compiled_batch  # not inherited: value() may differ
    assert sub_ap.kind == KIND_AP and sub_ndcg().kind == KIND_NDCG_LOG2  # the derivative is inherited
    assert type("Declared", (APLoss,), {"compiled_batch": True}).compiled_batch
    assert get_oracle(APLoss(), "qs").batched is qs_batch and get_oracle(sub_ap(), "qs").batched is None
    with pytest.raises(ValueError, match="do not serve SubAP"):
        qs_batch(S, Y, np.array([0]), np.array([5]), sub_ap())


class _Contradicting(QSLoss):
    """Returns AP's closed form from kernel_spec without declaring kind = KIND_AP."""

    def kernel_spec(self, n_pos, n_neg):
        return KIND_AP, np.zeros(1)

    def value(self, counts):
        return APLoss().value(counts)


def test_a_loss_contradicting_its_declared_kind_is_refused():
    with pytest.raises(ValueError, match="kernel_spec returns kind 0 but the loss declares kind = 2"):
        qs_oracle(S, Y, _Contradicting())
    declared = type("Declared", (_Contradicting,), {"kind": KIND_AP})()
    np.testing.assert_array_equal(qs_oracle(S, Y, declared)[0], qs_oracle(S, Y, APLoss())[0])


def test_unknown_parameters_and_k_are_checked_from_the_table():
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['k'\] for loss 'ndcg'; allowed: \['gain'\]"):
        ranking_loss(S, Y, "ndcg", k=3)
    with pytest.raises(ValueError, match="integer k"):
        get_oracle("precision_at_k", k=True)
    assert get_oracle("precision_at_k", k=np.int64(2)).params == {"k": 2}
