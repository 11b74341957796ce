"""Ranking quality per query: mean AP, mean NDCG (binary or graded gains), precision@k.

One query grouping and one convention, shared by ``RankSVM.score``, ``LatentRankSVM.score``, the
experiments and the scripts:

* **Queries.** Rows with the same ``qid`` form a query (any order of rows; the grouping is
  :func:`ssvm._queries.resolve_queries`, the one the estimators train with). Without ``qid``
  all rows form one query.
* **Ranking.** Each query's rows are ranked by decreasing score; ties are broken by row order
  (the first row ranks higher), as in training. scikit-learn's
  ``average_precision_score`` / ``ndcg_score`` treat ties differently; without ties they agree.
* **Which queries count.** A query on which every ranking scores the same tells nothing about
  the model, so it is left out of the mean: for the binary measures (AP, binary-gain NDCG,
  precision@k) a query without a relevant row (``y > 0``) or without a non-relevant row; for
  graded-gain NDCG a query whose rows all have the same grade. Training skips the same queries
  (:class:`~ssvm.exceptions.DegenerateQueriesWarning`). Accuracy (``loss="zero_one"``) counts
  every query. If no query counts, the score is NaN with an ``UndefinedMetricWarning``.

The functions take ``(y_true, y_score)`` in scikit-learn's order, so they plug into
:func:`sklearn.metrics.make_scorer`; with metadata routing a scorer can ask for ``qid``::

    scorer = make_scorer(mean_ndcg, response_method="decision_function", gains="exponential")
    scorer = scorer.set_score_request(qid=True)
"""

import warnings

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning

from ssvm._queries import check_relevance_grades, resolve_queries
from ssvm.exceptions import external_stacklevel
from ssvm.losses import QSLoss, ranking_loss

__all__ = ["ranking_score", "query_scores", "one_vs_rest_score", "mean_average_precision",
           "mean_ndcg", "accuracy_threshold"]

GAINS = ("binary", "linear", "exponential")
_BINARY_LOSSES = ("ap", "ndcg", "precision_at_k")


def mean_average_precision(y_true, y_score, *, qid=None):
    """Mean over queries of the average precision of the ranking by ``y_score``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance: bool, or numeric grades with ``y > 0`` relevant.
    y_score : array-like of shape (n_samples,)
        Finite scores; higher ranks first, ties by row order.
    qid : array-like of shape (n_samples,), default=None
        Query id per row; by default all rows form one query.

    Returns
    -------
    float
        Mean AP over the queries with a relevant and a non-relevant row (NaN, with a warning,
        if there is none).

    Examples
    --------
    >>> from ssvm.metrics import mean_average_precision
    >>> # query 1: the relevant row ranks 2nd (AP 1/2); query 2: first (AP 1); query 3 is all
    >>> # relevant, so every ranking is perfect and it does not count
    >>> mean_average_precision([0, 1, 1, 0, 1, 1], [3., 2., 5., 4., 1., 0.], qid=[1, 1, 2, 2, 3, 3])
    0.75
    """
    return ranking_score(y_true, y_score, qid=qid, loss="ap")


def mean_ndcg(y_true, y_score, *, qid=None, gains="binary", k=None):
    """Mean over queries of the NDCG of the ranking by ``y_score``.

    ``NDCG = DCG / ideal DCG`` with ``DCG = Σ_i gain(y_(i)) / log2(1 + i)`` over positions
    ``i = 1, 2, ...`` (up to ``k``) of the ranking.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance grades (bool or numeric; non-negative for graded gains).
    y_score : array-like of shape (n_samples,)
        Finite scores; higher ranks first, ties by row order.
    qid : array-like of shape (n_samples,), default=None
        Query id per row; by default all rows form one query.
    gains : {"binary", "linear", "exponential"}, default="binary"
        ``"binary"``: gain 1 for ``y > 0``, else 0 — the NDCG that ``RankSVM(loss="ndcg")``
        trains on. ``"linear"``: gain ``y`` (as :func:`sklearn.metrics.ndcg_score`).
        ``"exponential"``: gain ``2**y - 1`` (the usual LETOR / LightGBM / XGBoost NDCG).
    k : int, default=None
        Only the top ``k`` positions count (NDCG@k); None: all.

    Returns
    -------
    float
        Mean NDCG over the queries on which it depends on the ranking (NaN, with a warning,
        if there is none).

    Examples
    --------
    >>> from ssvm.metrics import mean_ndcg
    >>> y, s = [2, 1, 0], [0.1, 0.9, 0.5]  # ranked: grade 1, grade 0, grade 2
    >>> round(mean_ndcg(y, s), 4)  # binary gains: both relevant rows count alike
    0.9197
    >>> round(mean_ndcg(y, s, gains="exponential"), 4)  # gains 1, 0, 3 against ideal 3, 1, 0
    0.6885
    """
    return ranking_score(y_true, y_score, qid=qid, loss="ndcg", gains=gains, k=k)


def ranking_score(y_true, y_score, *, qid=None, loss="ap", gains="binary", k=None):
    """One minus the mean per-query task loss of the ranking by ``y_score`` (see the module).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance: bool, or numeric grades with ``y > 0`` relevant.
    y_score : array-like of shape (n_samples,)
        Finite scores.
    qid : array-like of shape (n_samples,), default=None
        Query id per row; by default all rows form one query.
    loss : {"ap", "ndcg", "precision_at_k", "zero_one"} or QSLoss, default="ap"
        Mean AP, mean NDCG, mean precision@k, mean accuracy of ``y_score > 0``, or one minus
        a user loss object's value.
    gains : {"binary", "linear", "exponential"}, default="binary"
        Gains of ``loss="ndcg"`` (see :func:`mean_ndcg`); the other losses are binary.
    k : int, default=None
        Cut-off of ``"precision_at_k"`` (None: 10; clipped to each query's size) or of
        ``"ndcg"`` (None: no cut-off). Not used by the other losses.

    Returns
    -------
    float
        NaN, with an ``UndefinedMetricWarning``, if no query counts.

    Raises
    ------
    ValueError
        On mismatched or non-finite input, non-numeric ``y_true``, or an option the loss does
        not use.
    """
    return _mean_or_nan(query_scores(y_true, y_score, qid=qid, loss=loss, gains=gains, k=k))


def _mean_or_nan(values):
    """Mean of per-query (or per-class) scores; NaN with a warning when there are none."""
    if len(values) == 0:
        warnings.warn(
            "score is undefined: no query has both a relevant and a non-relevant row "
            "(every ranking of them scores the same); returning nan.",
            UndefinedMetricWarning,
            stacklevel=external_stacklevel(),
        )
        return float("nan")
    return float(np.mean(values))


def one_vs_rest_score(y, y_score, classes, **options):
    """Mean over the classes present in ``y`` of the :func:`ranking_score` of that class's column.

    Class ``classes[j]`` is the relevant one for column ``j`` of ``y_score`` (one-vs-rest
    retrieval: rank the samples so that those of the class come first).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    y_score : array-like of shape (n_samples, n_classes)
        One column of scores per class.
    classes : array-like of shape (n_classes,)
    **options
        ``qid``, ``loss``, ``gains``, ``k`` of :func:`ranking_score`.

    Returns
    -------
    float
        NaN, with an ``UndefinedMetricWarning``, if no query of any class counts.
    """
    y, y_score = np.asarray(y), np.asarray(y_score)
    if y_score.ndim != 2 or y_score.shape != (y.shape[0], len(classes)):
        raise ValueError(f"y_score must have shape ({y.shape[0]}, {len(classes)}) (one column per "
                         f"class); got {y_score.shape}.")
    values = [query_scores(y == c, y_score[:, j], **options) for j, c in enumerate(classes)
              if np.any(y == c)]
    return _mean_or_nan([float(np.mean(v)) for v in values if v.size])


def query_scores(y_true, y_score, *, qid=None, loss="ap", gains="binary", k=None):
    """Score of every query that counts (see :func:`ranking_score`), in order of first appearance.

    Parameters
    ----------
    y_true, y_score, qid, loss, gains, k
        As for :func:`ranking_score`.

    Returns
    -------
    ndarray of float64, shape (n_counted_queries,)
    """
    y_score = np.asarray(y_score)
    if y_score.ndim != 1 or y_score.dtype.kind not in "iuf":
        raise ValueError(f"y_score must be a 1-D array of real scores; got shape {y_score.shape} "
                         f"and dtype {y_score.dtype}.")
    y_score = y_score.astype(np.float64, copy=False)
    if not np.all(np.isfinite(y_score)):
        raise ValueError("y_score contains NaN or infinity.")
    grades = check_relevance_grades(y_true, y_score.shape[0], name="y_true")
    per_query = _per_query_function(loss, gains, k, grades)
    graded = _is_ndcg(loss) and gains != "binary"
    values = []
    for q in resolve_queries(y_score.shape[0], qid=qid):
        g = grades[q]
        if _is_loss(loss, "zero_one"):
            values.append(float(np.mean((y_score[q] > 0) == (g > 0))))
        elif (g.min() < g.max()) if graded else (0 < np.count_nonzero(g > 0) < g.shape[0]):
            values.append(per_query(y_score[q], g))
    return np.array(values, dtype=np.float64)


def _per_query_function(loss, gains, k, grades):
    """``f(scores, grades) -> score`` of one counted query; ValueError on options the loss ignores."""
    if not (isinstance(loss, QSLoss) or loss in _BINARY_LOSSES or _is_loss(loss, "zero_one")):
        raise ValueError(f"unknown loss {loss!r}; choose from {_BINARY_LOSSES + ('zero_one',)} "
                         "or pass a QSLoss instance.")
    if gains not in GAINS:
        raise ValueError(f"gains must be one of {GAINS}; got {gains!r}.")
    if gains != "binary" and not _is_ndcg(loss):
        raise ValueError(f"gains={gains!r} applies to NDCG only; loss {_loss_label(loss)!r} is binary.")
    if k is not None:
        if not (_is_ndcg(loss) or _is_loss(loss, "precision_at_k")):
            raise ValueError(f"k is a cut-off of 'ndcg' and 'precision_at_k'; loss "
                             f"{_loss_label(loss)!r} does not use it.")
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be an integer >= 1; got {k!r}.")
    if gains != "binary" and np.any(grades < 0):
        raise ValueError(f"gains={gains!r} needs non-negative relevance grades.")
    if _is_ndcg(loss) and (gains != "binary" or k is not None):
        gain = {"binary": lambda g: (g > 0).astype(np.float64), "linear": lambda g: g,
                "exponential": lambda g: np.exp2(g) - 1.0}[gains]
        return lambda s, g: _ndcg(s, gain(g), k)
    params = {"k": 10 if k is None else int(k)} if _is_loss(loss, "precision_at_k") else {}
    return lambda s, g: 1.0 - ranking_loss(s, g > 0, loss=loss, **params)


def _ndcg(scores, gains, k):
    """NDCG (at ``k``) of the ranking by ``scores`` (ties by index) for per-row ``gains``."""
    n = scores.shape[0] if k is None else min(int(k), scores.shape[0])
    discount = 1.0 / np.log2(np.arange(2, n + 2))
    ranked = gains[np.argsort(-scores, kind="stable")[:n]]
    ideal = np.sort(gains)[::-1][:n]
    return float(ranked @ discount / (ideal @ discount))


def accuracy_threshold(scores, relevant):
    """Threshold t maximising the accuracy of ``scores > t`` as a predictor of ``relevant``.

    Candidate cuts lie halfway between consecutive distinct scores, or just below the smallest /
    above the largest score; among the cuts of maximal accuracy the middle one is taken (so the
    result is deterministic and not on the edge of the tie set). The estimators of ranking
    losses, which are invariant to shifting all scores, place their ``intercept_`` here.

    Parameters
    ----------
    scores : ndarray of shape (n,)
        Finite training scores.
    relevant : ndarray of bool of shape (n,)
        True labels.

    Returns
    -------
    t : float
        Finite; ``scores > t`` is exactly the chosen cut (rows tied in score fall on the same
        side). Usually strictly between two scores; it equals the lower one only when the two
        are adjacent floats.

    Examples
    --------
    >>> from ssvm.metrics import accuracy_threshold
    >>> round(accuracy_threshold([0.1, 0.4, 0.35, 0.8], [False, False, True, True]), 6)
    0.225
    """
    scores = np.asarray(scores, dtype=np.float64)
    order = np.argsort(scores, kind="stable")
    s = scores[order]
    r = np.asarray(relevant, dtype=bool)[order]
    n = s.shape[0]
    # cut i: rows s[:i] predicted negative, s[i:] positive
    correct = np.concatenate(([0], np.cumsum(~r))) + (
        np.count_nonzero(r) - np.concatenate(([0], np.cumsum(r)))
    )
    allowed = np.ones(n + 1, dtype=bool)
    allowed[1:n] = s[:-1] < s[1:]
    correct = np.where(allowed, correct, -1)
    best = np.flatnonzero(correct == correct.max())
    i = int(best[(best.shape[0] - 1) // 2])
    spread = s[-1] - s[0]
    step = spread / n if 0 < spread < np.inf else max(1.0, abs(s[0]) / 2)
    if i == 0:
        t = s[0] - step
        return float(t if t < s[0] else np.nextafter(s[0], -np.inf))
    if i == n:
        t = s[-1] + step
        return float(t if t > s[-1] else s[-1])
    lo, hi = s[i - 1], s[i]
    t = lo + (hi - lo) / 2
    return float(t if lo <= t < hi else lo)


def _is_loss(loss, name):
    """Whether ``loss`` (a name or a loss object) is the loss called ``name``."""
    return isinstance(loss, str) and loss == name


def _loss_label(loss):
    """A loss's name, or its class name for a loss object (for messages)."""
    return loss if isinstance(loss, str) else type(loss).__name__


def _is_ndcg(loss):
    return _is_loss(loss, "ndcg")
