"""Registry of losses and oracles, and the public entry points of :mod:`ssvm.losses`."""

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ._validation import validate_scores_labels
from .brute import precision_at_k_brute_oracle, rank_brute_oracle, zero_one_brute_oracle
from .classification import precision_at_k_oracle, zero_one_batch, zero_one_oracle
from .dp import dp_oracle
from .greedy import search_oracle, sorted_scan_oracle
from .qs import batchable, qs_batch, qs_oracle
from .rank_losses import APLoss, NDCGLoss, QSLoss

__all__ = ["LOSS_NAMES", "ORACLE_NAMES", "Oracle", "as_oracle", "supported_oracles", "get_oracle",
           "loss_augmented_inference", "ranking_loss"]

LOSS_NAMES = ("ap", "ndcg", "zero_one", "precision_at_k")
ORACLE_NAMES = ("auto", "qs", "yue", "chakrabarti", "search", "dp", "brute")

# oracle name -> module-level function taking (scores, y, loss)
_RANK_ORACLES = {
    "ap": {"qs": qs_oracle, "yue": sorted_scan_oracle, "search": search_oracle, "dp": dp_oracle,
           "brute": rank_brute_oracle},
    "ndcg": {"qs": qs_oracle, "chakrabarti": sorted_scan_oracle, "brute": rank_brute_oracle},
}
_CUSTOM_ORACLES = {"qs": qs_oracle, "brute": rank_brute_oracle}
# the fastest exact oracle per loss, measured with scripts/bench_oracles.py
_AUTO = {"ap": "qs", "ndcg": "qs", "custom": "qs"}
_RANK_LOSS_CLASSES = {"ap": APLoss, "ndcg": NDCGLoss}
_PARAMS = {"ap": (), "ndcg": (), "zero_one": (), "precision_at_k": ("k",)}


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
    """

    single: Callable
    batched: Optional[Callable] = None
    params: dict = field(default_factory=dict)
    name: str = ""

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


def _check_loss(loss):
    if isinstance(loss, QSLoss):
        return loss
    if isinstance(loss, str) and loss in LOSS_NAMES:
        return loss
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
        Always starts with ``"auto"``.

    Raises
    ------
    ValueError
        For an unknown loss.
    """
    loss = _check_loss(loss)
    if isinstance(loss, QSLoss):
        return ("auto",) + tuple(_CUSTOM_ORACLES)
    if loss in _RANK_ORACLES:
        return ("auto",) + tuple(name for name in ORACLE_NAMES if name in _RANK_ORACLES[loss])
    return ("auto", "brute")


def _check_k(k):
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"precision_at_k needs an integer k >= 1, got {k!r}")
    return int(k)


def get_oracle(loss="ap", oracle="auto", **loss_params):
    """Return the oracle of a loss: ``f(scores, y) -> (c, delta)`` (no input validation inside).

    Parameters
    ----------
    loss : str or QSLoss, default="ap"
        ``"ap"``, ``"ndcg"``, ``"zero_one"``, ``"precision_at_k"`` or a QS loss object.
    oracle : str, default="auto"
        One of ``supported_oracles(loss)``; ``"auto"`` picks the fastest exact one.
    **loss_params
        ``k`` (int ≥ 1, default 10) for ``"precision_at_k"``; nothing else.

    Returns
    -------
    Oracle
        Callable as ``f(scores: float64 (n,), y: bool (n,)) -> (c: float64 (n,), delta: float)``
        and, over many stacked queries, as ``f.batch(scores, y, starts, ends)``; picklable.

    Raises
    ------
    ValueError
        Unknown loss or oracle, an oracle that does not support the loss, unknown or invalid
        loss parameters.
    """
    loss = _check_loss(loss)
    if oracle not in ORACLE_NAMES:
        raise ValueError(f"unknown oracle {oracle!r}; choose from {ORACLE_NAMES}")
    allowed = _PARAMS.get(loss, ()) if isinstance(loss, str) else ()
    extra = set(loss_params) - set(allowed)
    if extra:
        raise ValueError(f"unknown parameter(s) {sorted(extra)} for loss {loss!r}; allowed: {list(allowed)}")
    if oracle not in supported_oracles(loss):
        raise ValueError(f"oracle {oracle!r} does not support loss {loss!r}; "
                         f"supported: {supported_oracles(loss)}")
    if isinstance(loss, QSLoss):
        name = _AUTO["custom"] if oracle == "auto" else oracle
        return _declare(name, _CUSTOM_ORACLES[name], loss=loss)
    if loss in _RANK_ORACLES:
        name = _AUTO[loss] if oracle == "auto" else oracle
        return _declare(name, _RANK_ORACLES[loss][name], loss=_RANK_LOSS_CLASSES[loss]())
    if loss == "zero_one":
        if oracle == "brute":
            return Oracle(zero_one_brute_oracle, name="brute")
        return Oracle(zero_one_oracle, zero_one_batch, name="auto")
    k = _check_k(loss_params.get("k", 10))
    if oracle == "brute":
        return Oracle(precision_at_k_brute_oracle, params={"k": k}, name="brute")
    return Oracle(precision_at_k_oracle, params={"k": k}, name="auto")


def _declare(name, single, loss):
    """The :class:`Oracle` of a ranking loss: QS has a batch form for the losses its loop serves."""
    batched = qs_batch if single is qs_oracle and batchable(loss) else None
    return Oracle(single, batched, {"loss": loss}, name)


def loss_augmented_inference(scores, y, loss="ap", oracle="auto", **loss_params):
    """Solve max_R Δ(R*, R) + w·Ψ(X, R) for one query and return its (c, delta).

    Parameters
    ----------
    scores : array-like of shape (n,)
        Scores s = X w of the query's samples (finite).
    y : array-like of shape (n,)
        Binary relevance: bool, {0, 1} or {-1, 1}; needs a positive and a negative.
    loss : str or QSLoss, default="ap"
        See :func:`get_oracle`.
    oracle : str, default="auto"
        See :func:`supported_oracles`.
    **loss_params
        ``k`` for ``"precision_at_k"``.

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
    s, yb = validate_scores_labels(scores, y)
    return f(s, yb)


def ranking_loss(scores, y, loss="ap", **loss_params):
    """Task loss Δ(R*, R) of the ranking obtained by sorting ``scores`` (ties by index).

    Parameters
    ----------
    scores : array-like of shape (n,)
    y : array-like of shape (n,)
        Binary relevance; needs a positive and a negative.
    loss : str or QSLoss, default="ap"
        ``"ap"`` → 1 − AP, ``"ndcg"`` → 1 − NDCG, ``"zero_one"`` → error rate of
        ``scores > 0``, ``"precision_at_k"`` → 1 − precision@k, or a QS loss object.
    **loss_params
        ``k`` for ``"precision_at_k"`` (default 10, clipped to n).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On invalid input, unknown loss or parameters.
    """
    loss = _check_loss(loss)
    allowed = _PARAMS.get(loss, ()) if isinstance(loss, str) else ()
    extra = set(loss_params) - set(allowed)
    if extra:
        raise ValueError(f"unknown parameter(s) {sorted(extra)} for loss {loss!r}; allowed: {list(allowed)}")
    s, yb = validate_scores_labels(scores, y)
    if loss == "zero_one":
        return float(np.mean((s > 0) != yb))
    order = np.argsort(-s, kind="stable")
    ranked = yb[order]
    if loss == "precision_at_k":
        k = min(_check_k(loss_params.get("k", 10)), s.size)
        return float(np.count_nonzero(~ranked[:k])) / k
    obj = loss if isinstance(loss, QSLoss) else _RANK_LOSS_CLASSES[loss]()
    n_pos = int(np.count_nonzero(yb))
    neg_before = np.cumsum(~ranked)[ranked]  # negatives above each positive, in rank order
    counts = np.bincount(np.searchsorted(neg_before, np.arange(1, (~yb).sum() + 1), side="left") + 1,
                         minlength=n_pos + 2)[1:]
    return float(obj.value(counts))
