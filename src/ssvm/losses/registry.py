"""The loss table, and the public entry points of :mod:`ssvm.losses` that read it.

One declarative table, ``_REGISTRY``: per loss name a :class:`LossEntry` (and, for any user
:class:`QSLoss` object, one built from ``_QS_LOSS_ENTRY``) says everything the rest of ssvm needs to
know about the loss: its label, its parameters and their defaults, the oracles that serve it
(each an :class:`OracleSpec`) and the one ``"auto"`` resolves to, its value, its gains, its
direct-loss directions, whether it learns an intercept, whether the latent bound holds for it and
how its trained measure is computed, and the forms the problem layer runs it in: the batch form of
each oracle (many stacked queries in one call, :attr:`OracleSpec.batched`), the fused round's and
the giant query's (:class:`~ssvm.losses.oracle.FusedForm`, :class:`~ssvm.losses.oracle.GiantForm`),
which :func:`get_oracle` puts on the :class:`Oracle` it returns.  :func:`loss_entry` is how other
modules ask; nothing outside this table compares a loss's name or class or an oracle's function.
"""

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Callable, Optional

import numpy as np

from ._classification_kernels import precision_at_k_batch, recall_at_k_batch
from ._core.graded import GAIN_CODES
from ._score_ranking import ap_diminished, labelled_by_score, ranked_by_score, zero_one_diminished
from .brute import (
    f1_brute_oracle,
    ndcg_at_k_brute_oracle,
    pairwise_brute_oracle,
    prbep_brute_oracle,
    precision_at_k_brute_oracle,
    rank_brute_oracle,
    recall_at_k_brute_oracle,
    zero_one_brute_oracle,
)
from .classification import (
    precision_at_k_oracle,
    recall_at_k_oracle,
    recall_at_k_value,
    zero_one_batch,
    zero_one_oracle,
)
from .contingency import (
    f1_batch,
    f1_by_score,
    f1_oracle,
    f1_value,
    prbep_batch,
    prbep_by_score,
    prbep_oracle,
    prbep_value,
)
from .dp import dp_oracle
from .graded import (
    GAINS,
    check_gain,
    graded_by_levels,
    graded_ndcg_batch,
    graded_ndcg_oracle,
    graded_ndcg_value,
    graded_ranked_by_score,
)
from .greedy import search_oracle, sorted_scan_oracle
from .mrr import MRRLoss, mrr_batch, mrr_oracle
from .ndcg_at_k import (
    graded_ndcg_at_k_batch,
    graded_ndcg_at_k_oracle,
    ndcg_at_k_batch,
    ndcg_at_k_by_score,
    ndcg_at_k_oracle,
    ndcg_at_k_value,
)
from .oracle import FusedForm, GiantForm, Oracle, OracleSpec, as_oracle
from .pairwise import pairs_by_score, pairwise_batch, pairwise_oracle, swapped_pairs
from .qs import qs_batch, qs_oracle
from .rank_losses import APLoss, NDCGLoss, QSLoss
from .targets import validate_scores_target

__all__ = ["LOSS_NAMES", "ORACLE_NAMES", "DIRECTIONS", "GAINS", "LossEntry", "loss_entry", "Oracle", "OracleSpec",
           "as_oracle", "supported_oracles", "get_oracle", "loss_augmented_inference", "ranking_loss"]

LOSS_NAMES = ("ap", "ndcg", "zero_one", "precision_at_k", "pairwise", "roc_auc", "mrr", "f1", "prbep", "ndcg_at_k",
              "recall_at_k")
ORACLE_NAMES = ("auto", "qs", "yue", "chakrabarti", "search", "dp", "brute")
#: directions of the direct-loss gradient (:func:`ssvm.losses.direct_loss_gradient`)
DIRECTIONS = ("positive", "negative", "perceptron")
#: gains of a graded measure (:func:`ssvm.metrics.mean_ndcg`)
METRICS = ("ranking", "accuracy", "pairs")
#: the gain a loss that reads grades without gains carries on its Oracle (only the grades' order counts)
GRADES_ONLY = "linear"


def _check_k(k):
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"a cut-off needs an integer k >= 1, got {k!r}")
    return int(k)


def _rank_value(s, yb, loss):
    """Δ of the ranking by score (ties by index) for a QS loss, from its ± pattern."""
    ranked = yb[np.argsort(-s, kind="stable")]
    n_pos = int(np.count_nonzero(yb))
    neg_before = np.cumsum(~ranked)[ranked]  # negatives above each positive, in rank order
    counts = np.bincount(np.searchsorted(neg_before, np.arange(1, (~yb).sum() + 1), side="left") + 1,
                         minlength=n_pos + 2)[1:]
    return float(loss.value(counts))


def _ndcg_value(s, y, loss, gain):
    """1 − NDCG of the ranking by score: binary for boolean ``y``, else graded with ``gain``."""
    if y.dtype == bool:
        return _rank_value(s, y, loss)
    return 1.0 - graded_ndcg_value(s, y, gain)


def _zero_one_value(s, yb):
    return float(np.mean((s > 0) != yb))


def _precision_value(s, yb, k):
    k = min(k, s.size)
    return float(np.count_nonzero(~yb[np.argsort(-s, kind="stable")][:k])) / k


def _pairs_value(s, y, normalise=False):
    return swapped_pairs(s, y, normalise)


def _graded_at_k(name, spec, params, gain):
    """Graded NDCG@k: the levels' binary NDCG@k oracle summed with the truncated weights α_t."""
    if name == "brute":
        return Oracle(graded_ndcg_at_k_oracle, None, {"gain": gain, "k": params["k"], "binary": spec.single},
                      name, gain=gain)
    return Oracle(graded_ndcg_at_k_oracle, graded_ndcg_at_k_batch, {"gain": gain, "k": params["k"]}, name, gain=gain)


def _given(loss):
    """The user's loss object itself (an entry's ``loss_object`` for a :class:`QSLoss` instance)."""
    return loss


@dataclass(frozen=True)
class LossEntry:
    """What ssvm knows about one loss: one row of the loss table (see :func:`loss_entry`).

    Parameters
    ----------
    name : str
        The loss's name, for messages (``"ap"``, ...; a user loss object's class name).
    label : str
        Short label for tables (``"AP"``, ``"NDCG"``, ``"0-1"``, ``"P@k"``; a user loss object's
        ``name``).
    oracles : dict of str to OracleSpec
        The oracles that serve the loss, by name.
    auto : str
        The oracle ``"auto"`` resolves to (the fastest exact one, measured with
        ``scripts/bench_oracles.py``).
    value : callable
        ``value(scores, y, **arguments) -> float``: Δ of the ranking (or labelling) by score.
    loss_object : callable or None, default=None
        Builds the :class:`QSLoss` the oracles and ``value`` take as ``loss=`` (None: they take none).
    params : dict, default={}
        Loss parameter name -> ``(default, checker)``; ``checker(value)`` returns the checked value
        or raises a ValueError. The one place a default (precision@k's ``k``) is defined.
    gains : tuple of str, default=()
        The gains (:data:`GAINS`) its measure takes; () for a binary measure.
    binary_only : bool, default=True
        Training sees relevance as binary (``y > 0`` relevant).
    reads_grades : bool, default=False
        Its oracles read ``y`` as integer grades although it has no ``gain`` (``"pairwise"``: any two
        distinct grades make a pair); its :class:`Oracle` carries the gain :data:`GRADES_ONLY`, so
        the problem layer carries the grades and counts the queries with two distinct grades.
    metric : {"ranking", "accuracy", "pairs"}, default="ranking"
        The trained measure: ``"ranking"``, one minus Δ of the ranking by score over the queries
        with a relevant and a non-relevant row; ``"accuracy"``, the share of rows whose
        ``score > 0`` matches ``y > 0``, over every query; ``"pairs"``, the fraction of a query's
        pairs r_i > r_j the ranking by score puts in order (ROC area), over the queries with two
        distinct grades.
    intercept : bool, default=False
        The loss is not invariant to shifting all scores, so the estimators learn an intercept.
    latent : bool, default=True
        The hinge is non-increasing in a positive's score and non-decreasing in a negative's, which
        makes :class:`~ssvm.LatentRankSVM`'s CCCP bound valid.
    by_score : callable or None, default=None
        ``by_score(scores, y, starts, ends, **arguments) -> (c, delta)``: Ψ(R_w) − Ψ(R*) and
        Δ(R*, R_w) of the output by score over stacked queries; None: no direct-loss gradient.
    diminished : callable or None, default=None
        ``diminished(scores, y, starts, ends, epsilon) -> (c, delta)``: the loss-diminished output
        argmax F − εΔ; None: no ``"negative"`` direction.
    graded_oracle : callable or None, default=None
        ``graded_oracle(name, spec, params, gain) -> Oracle``: the oracle of a graded ``gain``; None:
        the binary oracle summed over the grade levels with NDCG's weights (``"ndcg"``).
    fused : {"qs", "per_row", "top_k"} or None, default=None
        The fused training round's mode (:data:`~ssvm.losses.oracle.FUSED_MODES`) of the oracle
        with a batch form (:attr:`OracleSpec.batched`), the parameters taken from the oracle's:
        the loss object's ``kind``, ``k``. None: no fused round, the two-pass path.
    giant : {"ranked", "per_row", "top_k"} or None, default=None
        The block-task family (:data:`~ssvm.losses.oracle.GIANT_FAMILIES`) that serves one query
        spread over dask blocks, for every oracle of the loss (the family computes the exact answer
        itself), with the oracle's loss object or ``k``. None: the gathered hinge.
    """

    name: str
    label: str
    oracles: dict
    auto: str
    value: Callable
    loss_object: Optional[Callable] = None
    params: dict = field(default_factory=dict)
    gains: tuple = ()
    binary_only: bool = True
    reads_grades: bool = False
    metric: str = "ranking"
    intercept: bool = False
    latent: bool = True
    by_score: Optional[Callable] = None
    diminished: Optional[Callable] = None
    graded_oracle: Optional[Callable] = None
    fused: Optional[str] = None
    giant: Optional[str] = None

    @property
    def directions(self):
        """The direct-loss directions (:data:`DIRECTIONS`) the loss has, () if none."""
        if self.by_score is None:
            return ()
        return tuple(d for d in DIRECTIONS if d != "negative" or self.diminished is not None)

    def check_params(self, given):
        """The loss parameters ``given`` (a dict), checked, with the defaults filled in.

        Raises
        ------
        ValueError
            On a parameter the loss does not have, or an invalid value.
        """
        extra = set(given) - set(self.params)
        if extra:
            raise ValueError(f"unknown parameter(s) {sorted(extra)} for loss {self.name!r}; "
                             f"allowed: {list(self.params)}")
        return {name: check(given.get(name, default)) for name, (default, check) in self.params.items()}

    def arguments(self, given):
        """Keyword arguments of the loss's oracles, ``value`` and ``by_score``: the checked
        parameters and, for a rank loss, its loss object as ``loss``."""
        arguments = self.check_params(given)
        if self.loss_object is not None:
            arguments["loss"] = self.loss_object()
        return arguments


_RANK_ORACLES = {"qs": OracleSpec(qs_oracle, qs_batch), "brute": OracleSpec(rank_brute_oracle)}
# "auto": the fastest exact oracle per loss, measured with scripts/bench_oracles.py
_REGISTRY = {
    "ap": LossEntry("ap", "AP", {**_RANK_ORACLES, "yue": OracleSpec(sorted_scan_oracle),
                                 "search": OracleSpec(search_oracle), "dp": OracleSpec(dp_oracle)},
                    auto="qs", value=_rank_value, loss_object=APLoss, by_score=ranked_by_score,
                    diminished=ap_diminished, fused="qs", giant="ranked"),
    "ndcg": LossEntry("ndcg", "NDCG", {**_RANK_ORACLES, "chakrabarti": OracleSpec(sorted_scan_oracle)},
                      auto="qs", value=_ndcg_value, loss_object=NDCGLoss, params={"gain": ("exponential", check_gain)},
                      gains=GAINS, binary_only=False, by_score=graded_ranked_by_score, fused="qs", giant="ranked"),
    "zero_one": LossEntry("zero_one", "0-1", {"auto": OracleSpec(zero_one_oracle, zero_one_batch),
                                              "brute": OracleSpec(zero_one_brute_oracle)},
                          auto="auto", value=_zero_one_value, metric="accuracy", intercept=True,
                          by_score=labelled_by_score, diminished=zero_one_diminished, fused="per_row",
                          giant="per_row"),
    "precision_at_k": LossEntry("precision_at_k", "P@k",
                                {"auto": OracleSpec(precision_at_k_oracle, precision_at_k_batch),
                                 "brute": OracleSpec(precision_at_k_brute_oracle)},
                                auto="auto", value=_precision_value, params={"k": (10, _check_k)},
                                latent=False, fused="top_k", giant="top_k"),  # Ψ is not monotone in the scores
    # SVM^rank's objective and SVM^perf's ROC area: the pairs r_i > r_j of the grades (ssvm.losses.pairwise)
    "pairwise": LossEntry("pairwise", "pairs", {"auto": OracleSpec(pairwise_oracle, pairwise_batch),
                                                "brute": OracleSpec(pairwise_brute_oracle)},
                          auto="auto", value=_pairs_value, binary_only=False, reads_grades=True, metric="pairs",
                          by_score=pairs_by_score, latent=False),
    "roc_auc": LossEntry("roc_auc", "AUC", {"auto": OracleSpec(partial(pairwise_oracle, normalise=True),
                                                               partial(pairwise_batch, normalise=True)),
                                            "brute": OracleSpec(partial(pairwise_brute_oracle, normalise=True))},
                         auto="auto", value=partial(_pairs_value, normalise=True), binary_only=False,
                         reads_grades=True, metric="pairs", by_score=partial(pairs_by_score, normalise=True),
                         latent=False),
    # 1 − MRR: exact by enumerating the negatives above the first positive (ssvm.losses.mrr)
    "mrr": LossEntry("mrr", "MRR", {"auto": OracleSpec(mrr_oracle, mrr_batch),
                                    "brute": OracleSpec(partial(rank_brute_oracle, loss=MRRLoss()))},
                     auto="auto", value=partial(_rank_value, loss=MRRLoss()),
                     by_score=partial(ranked_by_score, loss=MRRLoss())),
    # SVM^perf's contingency-table losses over labellings (ssvm.losses.contingency); direct loss: no loss-diminished
    # inference, so the positive and perceptron directions
    "f1": LossEntry("f1", "F1", {"auto": OracleSpec(f1_oracle, f1_batch), "brute": OracleSpec(f1_brute_oracle)},
                    auto="auto", value=f1_value, intercept=True, by_score=f1_by_score),
    "prbep": LossEntry("prbep", "PRBEP", {"auto": OracleSpec(prbep_oracle, prbep_batch),
                                          "brute": OracleSpec(prbep_brute_oracle)},
                       auto="auto", value=prbep_value, by_score=prbep_by_score),
    # truncated NDCG: a DP over the top-k region, graded by threshold decomposition (ssvm.losses.ndcg_at_k)
    "ndcg_at_k": LossEntry("ndcg_at_k", "NDCG@k", {"auto": OracleSpec(ndcg_at_k_oracle, ndcg_at_k_batch),
                                                   "brute": OracleSpec(ndcg_at_k_brute_oracle)},
                           auto="auto", value=ndcg_at_k_value,
                           params={"k": (10, _check_k), "gain": ("exponential", check_gain)}, gains=GAINS,
                           binary_only=False, graded_oracle=_graded_at_k, by_score=ndcg_at_k_by_score),
    # recall in the top k: precision@k's top-k sets with the normaliser min(P, k) (ssvm.losses.classification)
    "recall_at_k": LossEntry("recall_at_k", "R@k", {"auto": OracleSpec(recall_at_k_oracle, recall_at_k_batch),
                                                    "brute": OracleSpec(recall_at_k_brute_oracle)},
                             auto="auto", value=recall_at_k_value, params={"k": (10, _check_k)}, latent=False),
}
# any QSLoss object: the generic QS kernel and the exhaustive oracle (loss_entry fills in the object and the
# forms it declares: those of the built-in AP and NDCG for a loss that declares compiled_batch, else none)
_QS_LOSS_ENTRY = LossEntry("qs_loss", "QSLoss", _RANK_ORACLES, auto="qs", value=_rank_value,
                           by_score=ranked_by_score, fused="qs", giant="ranked")
_PER_QUERY_QS = {"qs": OracleSpec(qs_oracle), "brute": OracleSpec(rank_brute_oracle)}


def loss_entry(loss):
    """The loss table's entry of a loss name or user loss object.

    Parameters
    ----------
    loss : str or QSLoss
        A name from ``LOSS_NAMES`` or a loss object.

    Returns
    -------
    LossEntry
        For a loss object, the entry of the generic QS oracles with the object as its
        ``loss_object``.

    Raises
    ------
    ValueError
        For an unknown loss.

    Examples
    --------
    >>> from ssvm.losses import loss_entry
    >>> entry = loss_entry("precision_at_k")
    >>> entry.label, entry.params["k"][0], entry.directions
    ('P@k', 10, ())
    >>> loss_entry("ap").directions
    ('positive', 'negative', 'perceptron')
    """
    if isinstance(loss, QSLoss):
        entry = replace(_QS_LOSS_ENTRY, name=type(loss).__name__, label=loss.name, loss_object=partial(_given, loss))
        if loss.compiled_batch:
            return entry
        return replace(entry, oracles=_PER_QUERY_QS, fused=None, giant=None)
    if isinstance(loss, str) and loss in _REGISTRY:
        return _REGISTRY[loss]
    raise ValueError(f"unknown loss {loss!r}; choose from {LOSS_NAMES} or pass a QSLoss instance")


def supported_oracles(loss):
    """Oracle names that can solve loss-augmented inference for ``loss``.

    Parameters
    ----------
    loss : str or QSLoss
        A name from ``LOSS_NAMES`` or a loss object.

    Returns
    -------
    tuple of str
        Always starts with ``"auto"``, then the loss's oracles in the order of ``ORACLE_NAMES``.

    Raises
    ------
    ValueError
        For an unknown loss.
    """
    oracles = loss_entry(loss).oracles
    return ("auto",) + tuple(name for name in ORACLE_NAMES[1:] if name in oracles)


def get_oracle(loss="ap", oracle="auto", **loss_params):
    """Return the oracle of a loss: ``f(scores, y) -> (c, delta)`` (no input validation inside).

    Parameters
    ----------
    loss : str or QSLoss, default="ap"
        ``"ap"``, ``"ndcg"``, ``"zero_one"``, ``"precision_at_k"``, ``"pairwise"``, ``"roc_auc"``, ``"mrr"``,
        ``"f1"``, ``"prbep"`` or a QS loss object.
    oracle : str, default="auto"
        One of ``supported_oracles(loss)``; ``"auto"`` picks the fastest exact one.
    **loss_params
        ``k`` (int ≥ 1, default 10) for ``"precision_at_k"``; ``gain`` for ``"ndcg"``:
        ``"exponential"`` (g(r) = 2^r − 1, the default), ``"linear"`` (g(r) = r) or ``"binary"``
        ([r > 0]); nothing else.

    Returns
    -------
    Oracle
        Callable as ``f(scores: float64 (n,), y: bool (n,)) -> (c: float64 (n,), delta: float)``
        and, over many stacked queries, as ``f.batch(scores, y, starts, ends)``; picklable. For
        NDCG with a ``gain`` other than ``"binary"``, and for ``"pairwise"`` and ``"roc_auc"``, it is a
        graded oracle (``f.graded``): ``y`` is then int64 grades (graded NDCG: ``(c, delta) = Σ_t α_t
        (c_t, δ_t)`` over the grade thresholds, :mod:`ssvm.losses.graded`).

    Raises
    ------
    ValueError
        Unknown loss or oracle, an oracle that does not support the loss, unknown or invalid
        loss parameters.
    """
    entry = loss_entry(loss)
    if oracle not in ORACLE_NAMES:
        raise ValueError(f"unknown oracle {oracle!r}; choose from {ORACLE_NAMES}")
    params = entry.arguments(loss_params)
    if oracle not in supported_oracles(loss):
        raise ValueError(f"oracle {oracle!r} does not support loss {loss!r}; "
                         f"supported: {supported_oracles(loss)}")
    name = entry.auto if oracle == "auto" else oracle
    spec = entry.oracles[name]
    if entry.reads_grades:
        return Oracle(spec.single, spec.batched, params, name, gain=GRADES_ONLY, **_forms(entry, spec, params))
    gain = params.pop("gain", "binary")
    binary = Oracle(spec.single, spec.batched, params, name, **_forms(entry, spec, params))
    if gain == "binary":
        return binary
    graded = (entry.graded_oracle or _graded_oracle)(name, spec, params, gain)
    # 0/1 grades: the binary oracle (fit_targets); one query over dask blocks reads y > 0, where it is the loss
    return replace(graded, binary=binary, giant=binary.giant)


def _forms(entry, spec, params):
    """The fused and giant forms of the oracle ``spec`` of ``entry`` (keyword arguments of :class:`Oracle`): the
    fused form for the oracle with a batch form (the fused round runs its compiled kernels), the giant
    form for every oracle."""
    loss = params.get("loss")
    k = int(params.get("k", 0))
    forms = {}
    if entry.fused is not None and spec.batched is not None:
        forms["fused"] = FusedForm(entry.fused, kind=int(getattr(loss, "kind", 0)), k=k)
    if entry.giant is not None:
        forms["giant"] = GiantForm(entry.giant, loss=loss, k=k)
    return forms


def _graded_oracle(name, spec, params, gain):
    """Graded NDCG by threshold decomposition (:mod:`ssvm.losses.graded`): the fused QS kernel, or
    any other binary NDCG oracle summed over the grade levels."""
    if name == "qs":
        return Oracle(graded_ndcg_oracle, graded_ndcg_batch, {"gain": gain}, name, gain=gain,
                      fused=FusedForm("graded", kind=GAIN_CODES[gain]))
    return Oracle(graded_by_levels, None, {"gain": gain, "binary": spec.single, **params}, name, gain=gain)


def loss_augmented_inference(scores, y, loss="ap", oracle="auto", **loss_params):
    """Solve max_R Δ(R*, R) + w·Ψ(X, R) for one query and return its (c, delta).

    Parameters
    ----------
    scores : array-like of shape (n,)
        Scores s = X w of the query's samples (finite).
    y : array-like of shape (n,)
        Relevance: bool, or numbers of which those > 0 are relevant; needs a positive and a
        negative. For ``loss="ndcg"`` with a graded ``gain`` (the default): non-negative integer
        grades, two distinct ones at least (AP and precision@k keep the ``y > 0`` rule).
    loss : str or QSLoss, default="ap"
        See :func:`get_oracle`.
    oracle : str, default="auto"
        See :func:`supported_oracles`.
    **loss_params
        ``k`` for ``"precision_at_k"``, ``gain`` for ``"ndcg"`` (see :func:`get_oracle`).

    Returns
    -------
    c : ndarray of float64, shape (n,)
        Coefficients of Ψ(X, R̂) − Ψ(X, R*): ``X.T @ c`` is a subgradient of the query's hinge
        H at w, and ``H(w) = delta + scores @ c``.
    delta : float
        Δ(R*, R̂) of the maximising output.

    Raises
    ------
    ValueError
        On invalid input (see :func:`get_oracle` and the validation of scores and labels).

    Examples
    --------
    >>> import numpy as np
    >>> from ssvm.losses import loss_augmented_inference
    >>> scores = np.array([2.0, 1.0, 0.5])
    >>> c, delta = loss_augmented_inference(scores, np.array([1, 0, 1]))
    >>> c.tolist(), round(delta, 4)  # the negative goes between the positives
    ([0.0, 1.0, -1.0], 0.1667)
    >>> round(float(delta + scores @ c), 4)  # the structured hinge H
    0.6667
    """
    s, target, f = validate_scores_target(scores, y, get_oracle(loss, oracle, **loss_params))
    return f(s, target)


def ranking_loss(scores, y, loss="ap", **loss_params):
    """Task loss Δ(R*, R) of the ranking obtained by sorting ``scores`` (ties by index).

    Parameters
    ----------
    scores : array-like of shape (n,)
    y : array-like of shape (n,)
        Binary relevance; needs a positive and a negative. Grades for ``"ndcg"`` with a graded
        ``gain`` (two distinct ones at least).
    loss : str or QSLoss, default="ap"
        ``"ap"`` → 1 − AP, ``"ndcg"`` → 1 − NDCG (graded: gains as ``gain``), ``"zero_one"`` →
        error rate of ``scores > 0``, ``"precision_at_k"`` → 1 − precision@k, ``"pairwise"`` → the
        swapped pairs r_i > r_j (grades), ``"roc_auc"`` → their fraction, ``"mrr"`` → 1 − 1/(rank of
        the first relevant row), ``"f1"`` → 1 − F1 of ``scores > 0``, ``"prbep"`` → 1 − the precision
        of the P best-scored rows, or a QS loss object.
    **loss_params
        ``k`` for ``"precision_at_k"`` (default 10, clipped to n), ``gain`` for ``"ndcg"``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On invalid input, unknown loss or parameters.
    """
    entry = loss_entry(loss)
    arguments = entry.arguments(loss_params)
    s, target, _ = validate_scores_target(scores, y, get_oracle(loss, **loss_params))  # 0/1: binary, bit for bit
    return entry.value(s, target, **arguments)
