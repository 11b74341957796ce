"""The loss table: what each entry declares, that every module asks it (no loss name compared by hand
elsewhere), and that a user's QSLoss object goes through every path a built-in rank loss goes through."""

import ast
import re
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pytest

import ssvm
from ssvm.losses import (
    LOSS_NAMES,
    APLoss,
    LossEntry,
    NDCGLoss,
    QSLoss,
    direct_loss_gradient,
    get_oracle,
    loss_entry,
    rank_hinge,
    ranking_loss,
    registry,
    supported_oracles,
)
from ssvm.losses.oracle import FUSED_MODES, GIANT_FAMILIES, OracleSpec
from ssvm.losses.registry import DIRECTIONS
from ssvm.problem import StructuredHinge

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


# ---- the table decides everything: no dispatch on which function an oracle is or which class a loss is ----

# isinstance checks of a user's argument, not dispatch on the loss: check_qs_suitable refuses what is not a QSLoss
VALIDATING = {("losses/suitability.py", "isinstance", "QSLoss")}


def _unwrap(f):
    while isinstance(f, partial):
        f = f.func
    return f


def _oracles_of_the_table():
    """Every Oracle the table makes: each loss, each of its oracles, binary and each gain, and their
    binary forms."""
    for name in LOSS_NAMES:
        entry = loss_entry(name)
        for oracle in supported_oracles(name):
            for gain in entry.gains or (None,):
                oracle_ = get_oracle(name, oracle, **({} if gain is None else {"gain": gain}))
                yield oracle_
                if oracle_.binary is not None:
                    yield oracle_.binary


def table_functions_and_classes():
    """The oracle functions (single, batch, the binary oracle a graded one sums) and the loss classes
    (with their QSLoss bases) named by the loss table itself."""
    functions, losses = set(), []
    for oracle in _oracles_of_the_table():
        for f in (oracle.single, oracle.batched, oracle.params.get("binary")):
            if f is not None:
                functions.add(_unwrap(f))
        losses += [oracle.params.get("loss"), *getattr(oracle.single, "keywords", {}).values()]
    for name in LOSS_NAMES:  # the loss objects bound into a row's value and output by score
        entry = loss_entry(name)
        losses += [v for f in (entry.value, entry.by_score) for v in getattr(f, "keywords", {}).values()]
    classes = {c for loss in losses if isinstance(loss, QSLoss) for c in type(loss).__mro__ if issubclass(c, QSLoss)}
    return {f.__name__ for f in functions}, {c.__name__ for c in classes | {QSLoss}}


def _names(node):
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*map(_names, node.elts)) if node.elts else set()
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute):
        return {node.attr}
    return set()


def _is_call_of(node, names):
    return isinstance(node, ast.Call) and _names(node.func) & set(names)


def dispatch_sites(source, functions, classes):
    """``(line, what, name)`` of each ``is``-comparison with an oracle function, ``isinstance`` /
    ``issubclass`` on a loss class and ``type(...)`` compared with a loss class in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
                found += [(node.lineno, "is", name) for o in operands for name in sorted(_names(o) & functions)]
            if any(_is_call_of(o, ["type"]) for o in operands):
                found += [(node.lineno, "type", name) for o in operands for name in sorted(_names(o) & classes)]
        elif _is_call_of(node, ["isinstance", "issubclass"]) and len(node.args) == 2:
            found += [(node.lineno, _names(node.func).pop(), name) for name in sorted(_names(node.args[1]) & classes)]
    return found


def test_the_scan_sees_both_forms_of_dispatch():
    functions, classes = table_functions_and_classes()
    assert {"qs_batch", "graded_ndcg_batch", "zero_one_batch", "precision_at_k_batch", "zero_one_oracle",
            "precision_at_k_oracle", "graded_ndcg_oracle", "qs_oracle", "pairwise_oracle"} <= functions
    assert {"QSLoss", "APLoss", "NDCGLoss", "MRRLoss"} <= classes
    old = ("if oracle.batched is qs_batch:\n    pass\n"
           "if oracle.single is not zero_one_oracle:\n    pass\n"
           "if type(loss) in (APLoss, NDCGLoss):\n    pass\n"
           "if isinstance(self.loss, QSLoss):\n    pass\n"
           "ok = isinstance(oracle, Oracle) and type(a) is type(b) and x is None\n")
    assert dispatch_sites(old, functions, classes) == [
        (1, "is", "qs_batch"), (3, "is", "zero_one_oracle"), (5, "type", "APLoss"), (5, "type", "NDCGLoss"),
        (7, "isinstance", "QSLoss")]


def test_no_dispatch_on_oracle_functions_or_loss_classes_outside_the_table():
    functions, classes = table_functions_and_classes()
    root = Path(ssvm.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        if where == "losses/registry.py":
            continue
        for line, what, name in dispatch_sites(path.read_text(encoding="utf-8"), functions, classes):
            if (where, what, name) not in VALIDATING:
                offenders.append(f"{where}:{line}: {what} {name}")
    assert offenders == []


def _rows(monkeypatch, name, **changes):
    """Loss ``name``'s row with ``changes``, in the table for this test."""
    monkeypatch.setitem(registry._REGISTRY, name, replace(registry._REGISTRY[name], **changes))


def _ranking(seed=0, n_queries=20):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), rng.integers(3, 40, n_queries))
    y = rng.random(qid.size) < 0.3
    X = rng.normal(size=(qid.size, 4)) + 0.5 * y[:, None]
    queries = [q for q in (np.flatnonzero(qid == k) for k in range(n_queries)) if y[q].any() and not y[q].all()]
    return X, y, queries, rng.normal(size=4)


@pytest.mark.parametrize("name", ["ap", "zero_one", "precision_at_k"])
def test_the_fused_form_is_honoured(monkeypatch, name):
    """A row with a fused form trains by the fused round; the same row without one by the two-pass
    path, to the same plane."""
    X, y, queries, w = _ranking()
    oracle = get_oracle(name)
    assert oracle.fused is not None and oracle.fused.mode == loss_entry(name).fused
    fused = StructuredHinge(X, y, queries, oracle)
    H, offset, g = fused.plane(w)
    assert fused.fused_seconds > 0
    _rows(monkeypatch, name, fused=None)
    plain = get_oracle(name)
    assert plain.fused is None and plain.batched is oracle.batched
    two_pass = StructuredHinge(X, y, queries, plain)
    H2, offset2, g2 = two_pass.plane(w)
    assert two_pass.fused_seconds == 0
    assert offset2 == pytest.approx(offset, rel=1e-12) and H2 == pytest.approx(H, rel=1e-12)
    np.testing.assert_allclose(g2, g, rtol=1e-10, atol=1e-12)


def test_the_batch_form_is_honoured(monkeypatch):
    """Without a batch form the oracle's batch runs its single form per query (and has no fused
    round: the fused round runs the batch form's kernels), bit for bit."""
    X, y, queries, w = _ranking(1)
    starts = np.cumsum([0] + [len(q) for q in queries[:-1]])
    ends = starts + [len(q) for q in queries]
    s = np.concatenate([X[q] @ w for q in queries])
    yq = np.concatenate([y[q] for q in queries])
    batched = get_oracle("mrr")
    calls = []

    def single(scores, labels):
        calls.append(scores.size)
        return batched.single(scores, labels)

    _rows(monkeypatch, "mrr", oracles={**loss_entry("mrr").oracles, "auto": OracleSpec(single)})
    per_query = get_oracle("mrr")
    assert per_query.batched is None and per_query.fused is None
    c, delta = per_query.batch(s, yq, starts, ends)
    assert calls == [len(q) for q in queries]
    c_want, delta_want = batched.batch(s, yq, starts, ends)
    np.testing.assert_array_equal(c, c_want)
    np.testing.assert_array_equal(delta, delta_want)
    _rows(monkeypatch, "ap", oracles={**loss_entry("ap").oracles, "qs": OracleSpec(registry.qs_oracle)})
    assert get_oracle("ap").fused is None and get_oracle("ap").giant is not None


@pytest.mark.parametrize("name", ["ap", "zero_one", "precision_at_k"])
def test_the_giant_form_is_honoured(monkeypatch, name):
    """One query over dask blocks: the giant hinge for a row with a giant form, the gathered one
    without, with the same plane."""
    da = pytest.importorskip("dask.array")
    import dask

    from ssvm.problem.dask_gathered import DaskGatheredHinge
    from ssvm.problem.dask_giant import DaskGiantHinge
    from ssvm.problem.dask_training import training_set

    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + rng.normal(size=300) > 0.8).astype(int)
    Xd = da.from_array(X, chunks=(100, 3))
    w = np.array([0.5, -0.2, 0.1])
    planes = {}
    with dask.config.set(scheduler="sync"):
        for giant in ("row", None):
            if giant is None:
                _rows(monkeypatch, name, giant=None)
            oracle = get_oracle(name)
            assert (oracle.giant is None) == (giant is None)
            data = training_set(Xd, y, qid=None, group=None, oracle=oracle, fit_intercept=False,
                                solver="cutting_plane")
            problem = data.problems[0]
            assert type(problem) is (DaskGiantHinge if giant else DaskGatheredHinge)
            planes[giant] = problem.plane(w)
    np.testing.assert_allclose(planes[None][2], planes["row"][2], rtol=1e-10, atol=1e-12)
    assert planes[None][1] == pytest.approx(planes["row"][1], rel=1e-12)


class DeclaredAP(APLoss):
    """AP's loss again, declaring that the compiled loops serve it."""

    compiled_batch = True


def test_a_loss_object_row_follows_what_it_declares():
    """A QSLoss that declares compiled_batch gets the built-in rank losses' forms; one that does not
    gets none (its queries one call at a time, the two-pass round, the gathered dask hinge)."""
    served, unserved = get_oracle(DeclaredAP()), get_oracle(SubAP())
    assert served.batched is not None and served.fused is not None and served.giant is not None
    assert (served.fused.mode, served.fused.kind, served.giant.family) == ("qs", APLoss.kind, "ranked")
    assert unserved.batched is None and unserved.fused is None and unserved.giant is None
    assert get_oracle(NDCGLoss("chakrabarti")).fused is None and get_oracle(NDCGLoss()).fused.mode == "qs"
    X, y, queries, w = _ranking(3)
    got, want = StructuredHinge(X, y, queries, unserved), StructuredHinge(X, y, queries, get_oracle("ap"))
    H, H_want = got.plane(w)[0], want.plane(w)[0]
    assert got.fused_seconds == 0 and want.fused_seconds > 0
    assert H == pytest.approx(H_want, rel=1e-12)


def test_every_oracle_carries_its_rows_forms():
    for name in LOSS_NAMES:
        entry = loss_entry(name)
        for oracle_name in supported_oracles(name):
            oracle = get_oracle(name, oracle_name, **({"gain": "binary"} if entry.gains else {}))
            assert (oracle.fused is not None) == (entry.fused is not None and oracle.batched is not None), name
            assert (oracle.giant is not None) == (entry.giant is not None), name
            if oracle.fused is not None:
                assert oracle.fused.mode in FUSED_MODES
            if oracle.giant is not None:
                assert oracle.giant.family in GIANT_FAMILIES
