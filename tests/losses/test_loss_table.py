"""The loss table: what each entry declares, that every module asks it (no loss name compared by hand
elsewhere), and that a user's QSLoss object goes through every path a built-in rank loss goes through."""

import re
from pathlib import Path

import numpy as np
import pytest

import ssvm
from ssvm.losses import (
    LOSS_NAMES,
    APLoss,
    LossEntry,
    NDCGLoss,
    direct_loss_gradient,
    loss_entry,
    rank_hinge,
    ranking_loss,
)
from ssvm.losses.registry import DIRECTIONS

SubAP = type("SubAP", (APLoss,), {})  # AP's loss, but not served by the compiled batch loops


def test_every_entry_declares_what_the_modules_ask():
    labels = {name: loss_entry(name).label for name in LOSS_NAMES}
    assert labels == {"ap": "AP", "ndcg": "NDCG", "zero_one": "0-1", "precision_at_k": "P@k", "pairwise": "pairs",
                      "roc_auc": "AUC", "mrr": "MRR", "f1": "F1",
                      "prbep": "PRBEP", "ndcg_at_k": "NDCG@k", "recall_at_k": "R@k"}
    assert [name for name in LOSS_NAMES if loss_entry(name).intercept] == ["zero_one", "f1"]
    assert [name for name in LOSS_NAMES if loss_entry(name).metric == "accuracy"] == ["zero_one"]
    assert [name for name in LOSS_NAMES if not loss_entry(name).latent] == ["precision_at_k", "pairwise", "roc_auc",
                                                                                     "recall_at_k"]
    assert [name for name in LOSS_NAMES if loss_entry(name).reads_grades] == ["pairwise", "roc_auc"]
    assert loss_entry("precision_at_k").params["k"][0] == 10
    assert loss_entry("precision_at_k").check_params({}) == {"k": 10}
    assert loss_entry("ndcg").gains and not loss_entry("ap").gains
    assert loss_entry("ap").directions == DIRECTIONS
    assert loss_entry("zero_one").directions == DIRECTIONS
    assert loss_entry("ndcg").directions == ("positive", "perceptron")
    assert loss_entry("precision_at_k").directions == () == loss_entry("recall_at_k").directions
    for name in LOSS_NAMES:
        entry = loss_entry(name)
        assert isinstance(entry, LossEntry) and entry.name == name and entry.auto in entry.oracles
        assert entry.metric in ("ranking", "accuracy", "pairs")


def test_a_loss_object_gets_the_generic_entry_with_itself_as_the_loss():
    loss = NDCGLoss("chakrabarti")
    entry = loss_entry(loss)
    assert entry.name == "NDCGLoss" and entry.label == "ndcg" and entry.arguments({})["loss"] is loss
    assert entry.directions == ("positive", "perceptron") and entry.latent and not entry.intercept
    with pytest.raises(ValueError, match="unknown loss"):
        loss_entry("auc")
    with pytest.raises(ValueError, match="unknown parameter"):
        loss_entry("ap").check_params({"k": 3})
    with pytest.raises(ValueError, match="integer k >= 1"):
        loss_entry("precision_at_k").check_params({"k": 0})


def test_no_loss_name_is_compared_outside_the_table():
    root = Path(ssvm.__file__).parent
    name = r'"(?:ap|ndcg|zero_one|precision_at_k)"'
    compared = re.compile(rf"(?:==|!=|\bin)\s*\(?{name}|{name}\s*(?:==|!=|:)")
    offenders = [f"{path.relative_to(root)}:{i}" for path in root.rglob("*.py")
                 if path.name != "registry.py"
                 for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if compared.search(line.split("#")[0]) and "``" not in line]
    assert offenders == []


@pytest.mark.parametrize("direction", ["positive", "perceptron"])
def test_direct_loss_of_a_loss_object_is_that_of_its_builtin(direction):
    """A loss object not served by the compiled loops (a subclass of APLoss) gives exactly the
    built-in AP's task loss and gradient, on many queries with ties."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(4, 30))
        s = np.round(rng.normal(size=n), 1)
        y = rng.random(n) < 0.4
        y[:4] = True, True, False, False
        qid = np.arange(n) % 2
        expected = direct_loss_gradient(s, y, qid, loss="ap", epsilon=0.5, direction=direction)
        got = direct_loss_gradient(s, y, qid, loss=SubAP(), epsilon=0.5, direction=direction)
        assert got[0] == pytest.approx(expected[0], abs=1e-12)
        np.testing.assert_allclose(got[1], expected[1], atol=1e-12)


def test_perceptron_task_loss_of_a_loss_object_is_its_own_value():
    """The output by score of a generic QS loss takes Δ from the loss's own value (the old code read
    its kernel kind and computed NDCG with the log2 discount for any table loss)."""
    rng = np.random.default_rng(1)
    loss = NDCGLoss("chakrabarti")
    for _ in range(50):
        n = int(rng.integers(2, 20))
        s, y = rng.normal(size=n), rng.random(n) < 0.5
        y[0], y[-1] = True, False
        task_loss, grad = direct_loss_gradient(s, y, loss=loss, direction="perceptron")
        assert task_loss == pytest.approx(ranking_loss(s, y, loss), abs=1e-12)
        _, grad_ndcg = direct_loss_gradient(s, y, loss="ndcg", direction="perceptron")
        np.testing.assert_allclose(grad, grad_ndcg, atol=1e-12)  # Ψ depends on the ranking only


def test_a_loss_object_has_no_negative_direction():
    with pytest.raises(ValueError, match="no 'negative' direction"):
        direct_loss_gradient([0.2, 0.1], [1, 0], loss=SubAP(), direction="negative")
    value, _ = rank_hinge([0.2, 0.1], [1, 0], loss=SubAP())
    assert value == rank_hinge([0.2, 0.1], [1, 0], loss="ap")[0]
