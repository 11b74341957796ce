"""Registry of losses and oracles, and the public entry points of :mod:`ssvm.losses`.

One declarative table, ``_REGISTRY``: per loss name (and ``_QS_LOSS_ENTRY`` for any
:class:`QSLoss` object) the oracles that serve it, each an :class:`OracleSpec` (its per-query
function and its batch form, if any), the oracle ``"auto"`` resolves to, the loss's parameters and
its value.  :func:`supported_oracles`, :func:`get_oracle`, :func:`loss_augmented_inference` and
:func:`ranking_loss` all read it; nothing inspects a loss's type or an oracle's function.
"""

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ._classification_kernels import precision_at_k_batch
from ._validation import validate_scores_grades, validate_scores_labels
from .brute import precision_at_k_brute_oracle, rank_brute_oracle, zero_one_brute_oracle
from .classification import precision_at_k_oracle, zero_one_batch, zero_one_oracle
from .dp import dp_oracle
from .graded import check_gain, graded_by_levels, graded_ndcg_batch, graded_ndcg_oracle, graded_ndcg_value
from .greedy import search_oracle, sorted_scan_oracle
from .qs import qs_batch, qs_oracle
from .rank_losses import APLoss, NDCGLoss, QSLoss

__all__ = ["LOSS_NAMES", "ORACLE_NAMES", "Oracle", "OracleSpec", "as_oracle", "supported_oracles", "get_oracle",
           "loss_augmented_inference", "ranking_loss"]

LOSS_NAMES = ("ap", "ndcg", "zero_one", "precision_at_k")
ORACLE_NAMES = ("auto", "qs", "yue", "chakrabarti", "search", "dp", "brute")


@dataclass(frozen=True)
class OracleSpec:
    """One (loss, oracle) pair of the registry: what solves one query, and many at once.

    Parameters
    ----------
    single : callable
        ``single(scores, y, **params) -> (c, delta)``, a module-level function.
    batched : callable or None, default=None
        ``batched(scores, y, starts, ends, **params) -> (c, delta)`` over stacked queries, exactly
        ``single`` on each; None: :meth:`Oracle.batch` loops over ``single``.  A batch form taking
        a loss object serves only the losses that declare ``compiled_batch``
        (:class:`~ssvm.losses.QSLoss`).
    """

    single: Callable
    batched: Optional[Callable] = None


def _check_k(k):
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"precision_at_k needs an integer k >= 1, got {k!r}")
    return int(k)


def _rank_value(s, yb, loss):
    """Δ of the ranking by score (ties by index) for a QS loss, from its ± pattern."""
    ranked = yb[np.argsort(-s, kind="stable")]
    n_pos = int(np.count_nonzero(yb))
    neg_before = np.cumsum(~ranked)[ranked]  # negatives above each positive, in rank order
    counts = np.bincount(np.searchsorted(neg_before, np.arange(1, (~yb).sum() + 1), side="left") + 1,
                         minlength=n_pos + 2)[1:]
    return float(loss.value(counts))


def _zero_one_value(s, yb):
    return float(np.mean((s > 0) != yb))


def _precision_value(s, yb, k):
    k = min(k, s.size)
    return float(np.count_nonzero(~yb[np.argsort(-s, kind="stable")][:k])) / k


@dataclass(frozen=True)
class _LossEntry:
    """A loss in the registry: its oracles, what "auto" picks, how its oracles get their parameters.

    ``loss_object`` builds the :class:`QSLoss` that rank-loss oracles take as ``loss=`` (None: the
    oracles take no loss object); ``params`` maps each loss parameter to its default and checker;
    ``value(scores, y, **params)`` is the loss of the ranking (or labelling) by score.
    """

    oracles: dict
    auto: str
    value: Callable
    loss_object: Optional[Callable] = None
    params: dict = field(default_factory=dict)


_RANK_ORACLES = {"qs": OracleSpec(qs_oracle, qs_batch), "brute": OracleSpec(rank_brute_oracle)}
# "auto": the fastest exact oracle per loss, measured with scripts/bench_oracles.py
_REGISTRY = {
    "ap": _LossEntry({**_RANK_ORACLES, "yue": OracleSpec(sorted_scan_oracle), "search": OracleSpec(search_oracle),
                      "dp": OracleSpec(dp_oracle)}, auto="qs", value=_rank_value, loss_object=APLoss),
    "ndcg": _LossEntry({**_RANK_ORACLES, "chakrabarti": OracleSpec(sorted_scan_oracle)}, auto="qs",
                       value=_rank_value, loss_object=NDCGLoss, params={"gain": ("exponential", check_gain)}),
    "zero_one": _LossEntry({"auto": OracleSpec(zero_one_oracle, zero_one_batch),
                            "brute": OracleSpec(zero_one_brute_oracle)}, auto="auto", value=_zero_one_value),
    "precision_at_k": _LossEntry({"auto": OracleSpec(precision_at_k_oracle, precision_at_k_batch),
                                  "brute": OracleSpec(precision_at_k_brute_oracle)}, auto="auto",
                                 value=_precision_value, params={"k": (10, _check_k)}),
}
# any QSLoss object: the generic QS kernel and the exhaustive oracle
_QS_LOSS_ENTRY = _LossEntry(_RANK_ORACLES, auto="qs", value=_rank_value)


@dataclass(frozen=True, eq=False)
class Oracle:
    """A loss-augmented inference oracle: its per-query function and, if it has one, its batch form.

    The registry declares, for each (loss, oracle) pair, the function that solves one query and the
    one that solves many stacked queries in one call (compiled or vectorised); the problem layer
    only ever calls :meth:`__call__` and :meth:`batch`, so nothing downstream inspects which
    function it got. Picklable (module-level functions and plain parameters).

    Parameters
    ----------
    single : callable
        ``single(scores, y, **params) -> (c, delta)`` for one query.
    batched : callable or None, default=None
        ``batched(scores, y, starts, ends, **params) -> (c, delta)`` giving exactly what ``single``
        gives on each query ``scores[starts[k]:ends[k]]`` (``c`` in the queries' rows, zero
        elsewhere; ``delta`` per query). None: :meth:`batch` calls ``single`` per query.
    params : dict, default={}
        Keyword arguments of both functions (the loss object, ``k``, ...).
    name : str, default=""
        The oracle's name (``"qs"``, ``"yue"``, ...), for messages and timing tables.
    graded : bool, default=False
        The oracle reads ``y`` as non-negative integer grades (int64; graded NDCG, docs/design.md §9)
        instead of boolean relevance: the problem layer then carries the grades, and a query
        counts when its grades are not all equal.
    """

    single: Callable
    batched: Optional[Callable] = None
    params: dict = field(default_factory=dict)
    name: str = ""
    graded: bool = False

    def __call__(self, scores, y):
        """``(c, delta)`` of one query (no validation: see :func:`loss_augmented_inference`)."""
        return self.single(scores, y, **self.params)

    def batch(self, scores, y, starts, ends):
        """``(c, delta)`` of the stacked queries ``scores[starts[k]:ends[k]]``.

        Parameters
        ----------
        scores : ndarray of float64, shape (n,)
            Stacked scores; rows outside the queries are ignored.
        y : ndarray of bool, shape (n,)
        starts, ends : ndarray of int64, shape (Q,)
            Ascending, disjoint ranges, each with a positive and a negative.

        Returns
        -------
        c : ndarray of float64, shape (n,)
            Each query's ``c`` in its rows, zero elsewhere.
        delta : ndarray of float64, shape (Q,)
        """
        if self.batched is not None:
            return self.batched(scores, y, starts, ends, **self.params)
        c_all = np.zeros(scores.shape[0])
        delta = np.empty(starts.shape[0])
        for k in range(delta.shape[0]):
            a, b = starts[k], ends[k]
            c, delta[k] = self.single(scores[a:b], y[a:b], **self.params)
            c = np.asarray(c, dtype=np.float64)
            if c.shape != (b - a,):
                raise ValueError(f"oracle returned c of shape {c.shape} for a query of {b - a} samples")
            c_all[a:b] = c
        return c_all, delta


def as_oracle(oracle):
    """An :class:`Oracle` as it is, or a plain callable ``f(scores, y) -> (c, delta)`` wrapped as one.

    Parameters
    ----------
    oracle : Oracle or callable

    Returns
    -------
    Oracle

    Raises
    ------
    ValueError
        If ``oracle`` is not callable.
    """
    if isinstance(oracle, Oracle):
        return oracle
    if not callable(oracle):
        raise ValueError(f"oracle must be callable, got {type(oracle).__name__}")
    return Oracle(single=oracle, name=getattr(oracle, "__name__", type(oracle).__name__))


def _entry(loss):
    """The registry's entry of a loss name or :class:`QSLoss` object."""
    if isinstance(loss, QSLoss):
        return _QS_LOSS_ENTRY
    if isinstance(loss, str) and loss in _REGISTRY:
        return _REGISTRY[loss]
    raise ValueError(f"unknown loss {loss!r}; choose from {LOSS_NAMES} or pass a QSLoss instance")


def _loss_params(loss, entry, given):
    """The loss parameters, checked and with their defaults filled in."""
    extra = set(given) - set(entry.params)
    if extra:
        raise ValueError(f"unknown parameter(s) {sorted(extra)} for loss {loss!r}; allowed: {list(entry.params)}")
    return {name: check(given.get(name, default)) for name, (default, check) in entry.params.items()}


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
    oracles = _entry(loss).oracles
    return ("auto",) + tuple(name for name in ORACLE_NAMES[1:] if name in oracles)


def get_oracle(loss="ap", oracle="auto", **loss_params):
    """Return the oracle of a loss: ``f(scores, y) -> (c, delta)`` (no input validation inside).

    Parameters
    ----------
    loss : str or QSLoss, default="ap"
        ``"ap"``, ``"ndcg"``, ``"zero_one"``, ``"precision_at_k"`` or a QS loss object.
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
        NDCG with ``gain`` other than ``"binary"`` it is the graded oracle (``f.graded``): ``y`` is
        then int64 grades, and ``(c, delta) = Σ_t α_t (c_t, δ_t)`` over the grade thresholds
        (:mod:`ssvm.losses.graded`).

    Raises
    ------
    ValueError
        Unknown loss or oracle, an oracle that does not support the loss, unknown or invalid
        loss parameters.
    """
    entry = _entry(loss)
    if oracle not in ORACLE_NAMES:
        raise ValueError(f"unknown oracle {oracle!r}; choose from {ORACLE_NAMES}")
    params = _loss_params(loss, entry, loss_params)
    if oracle not in supported_oracles(loss):
        raise ValueError(f"oracle {oracle!r} does not support loss {loss!r}; "
                         f"supported: {supported_oracles(loss)}")
    name = entry.auto if oracle == "auto" else oracle
    spec = entry.oracles[name]
    batched = spec.batched
    gain = params.pop("gain", "binary")
    loss_object = _loss_object(loss, entry)
    if loss_object is not None:
        params["loss"] = loss_object
        if not loss_object.compiled_batch:
            batched = None
    if gain != "binary":
        return _graded_oracle(name, spec, params, gain)
    return Oracle(spec.single, batched, params, name)


def _graded_oracle(name, spec, params, gain):
    """Graded NDCG by threshold decomposition (:mod:`ssvm.losses.graded`): the fused QS kernel, or
    any other binary NDCG oracle summed over the grade levels."""
    if name == "qs":
        return Oracle(graded_ndcg_oracle, graded_ndcg_batch, {"gain": gain}, name, graded=True)
    return Oracle(graded_by_levels, None, {"gain": gain, "binary": spec.single, **params}, name, graded=True)


def _loss_object(loss, entry):
    """The :class:`QSLoss` a rank loss's oracles and value take (None for the other losses)."""
    if isinstance(loss, QSLoss):
        return loss
    return entry.loss_object() if entry.loss_object is not None else None


def loss_augmented_inference(scores, y, loss="ap", oracle="auto", **loss_params):
    """Solve max_R Δ(R*, R) + w·Ψ(X, R) for one query and return its (c, delta).

    Parameters
    ----------
    scores : array-like of shape (n,)
        Scores s = X w of the query's samples (finite).
    y : array-like of shape (n,)
        Binary relevance: bool, {0, 1} or {-1, 1}; needs a positive and a negative. For
        ``loss="ndcg"`` with a graded ``gain``: non-negative integer grades, two distinct ones
        at least (AP and precision@k count ``y > 0`` as relevant).
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
    f = get_oracle(loss, oracle, **loss_params)
    if f.graded:
        s, grades = validate_scores_grades(scores, y, f.params["gain"])
        return f(s, grades)
    s, yb = validate_scores_labels(scores, y)
    return f(s, yb)


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
        error rate of ``scores > 0``, ``"precision_at_k"`` → 1 − precision@k, or a QS loss object.
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
    entry = _entry(loss)
    params = _loss_params(loss, entry, loss_params)
    gain = params.pop("gain", "binary")
    if gain != "binary":
        s, grades = validate_scores_grades(scores, y, gain)
        if grades.max() > 1:  # 0/1 grades: the binary loss below, bit for bit
            return 1.0 - graded_ndcg_value(s, grades, gain)
        y = grades
    s, yb = validate_scores_labels(scores, y)
    loss_object = _loss_object(loss, entry)
    if loss_object is not None:
        params["loss"] = loss_object
    return entry.value(s, yb, **params)
