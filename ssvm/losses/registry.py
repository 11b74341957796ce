"""Registry of losses and oracles, and the public entry points of :mod:`ssvm.losses`."""

from functools import partial

import numpy as np

from ._validation import validate_scores_labels
from .brute import precision_at_k_brute_oracle, rank_brute_oracle, zero_one_brute_oracle
from .classification import precision_at_k_oracle, zero_one_batch, zero_one_oracle
from .dp import dp_oracle
from .greedy import search_oracle, sorted_scan_oracle
from .qs import batchable, qs_batch, qs_oracle
from .rank_losses import APLoss, NDCGLoss, QSLoss

__all__ = ["LOSS_NAMES", "ORACLE_NAMES", "supported_oracles", "get_oracle", "batched_oracle",
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
    """Return a picklable oracle ``f(scores, y) -> (c, delta)`` (no input validation inside).

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
    callable
        ``f(scores: float64 (n,), y: bool (n,)) -> (c: float64 (n,), delta: float)``; a
        ``functools.partial`` of a module-level function.

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
        return partial(_CUSTOM_ORACLES[name], loss=loss)
    if loss in _RANK_ORACLES:
        name = _AUTO[loss] if oracle == "auto" else oracle
        return partial(_RANK_ORACLES[loss][name], loss=_RANK_LOSS_CLASSES[loss]())
    if loss == "zero_one":
        return partial(zero_one_brute_oracle) if oracle == "brute" else partial(zero_one_oracle)
    k = _check_k(loss_params.get("k", 10))
    fn = precision_at_k_brute_oracle if oracle == "brute" else precision_at_k_oracle
    return partial(fn, k=k)


def batched_oracle(oracle):
    """The many-query version of an oracle from :func:`get_oracle`, if it has one.

    Parameters
    ----------
    oracle : callable
        ``(scores, y) -> (c, delta)``.

    Returns
    -------
    callable or None
        ``f(scores, y, starts, ends) -> (c, delta)`` giving exactly what ``oracle`` gives on each
        query ``scores[starts[k]:ends[k]]`` (``c`` in the queries' rows, zero elsewhere; ``delta``
        per query) without a Python call per query — the QS oracle of AP and NDCG (one compiled
        loop) and the 0-1 oracle (vectorised); None for the others.
    """
    if not isinstance(oracle, partial) or oracle.args:
        return None
    if oracle.func is qs_oracle and set(oracle.keywords) == {"loss"} and batchable(oracle.keywords["loss"]):
        return partial(qs_batch, loss=oracle.keywords["loss"])
    if oracle.func is zero_one_oracle and not oracle.keywords:
        return zero_one_batch
    return None


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
