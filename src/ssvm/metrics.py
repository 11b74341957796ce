"""Ranking quality per query: mean AP, mean NDCG (graded or binary gains) and NDCG@k, precision@k.

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
  precision@k, which count ``y > 0`` as relevant) a query without a relevant row or without a
  non-relevant row; for graded-gain NDCG a query whose rows all have the same grade. Training skips the same queries
  (:class:`~ssvm.exceptions.DegenerateQueriesWarning`). Accuracy (``loss="zero_one"``) counts
  every query. If no query counts, the score is NaN with an ``UndefinedMetricWarning``.

The functions take ``(y_true, y_score)`` in scikit-learn's order, so they plug into
:func:`sklearn.metrics.make_scorer`; with metadata routing a scorer can ask for ``qid``::

    scorer = make_scorer(ndcg_at_k, response_method="decision_function", k=10, gain="exponential")
    scorer = scorer.set_score_request(qid=True)

NDCG takes ``gain=``: ``"exponential"`` (2^y − 1, the LETOR convention and the
default), ``"linear"`` (y) or ``"binary"`` ([y > 0]); with 0/1 labels the three agree, bit for bit.
The older name ``gains=`` still works, with a ``FutureWarning``.
"""

import warnings

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning

from ssvm._queries import check_relevance_grades, resolve_queries
from ssvm.exceptions import external_stacklevel
from ssvm.losses import loss_entry, ranking_loss
from ssvm.losses.graded import graded_ndcg_value
from ssvm.losses.pairwise import pair_order_score
from ssvm.losses.registry import GAINS

__all__ = ["ranking_score", "query_scores", "one_vs_rest_score", "mean_average_precision",
           "mean_ndcg", "ndcg_at_k", "accuracy_threshold"]



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
        if there is none). AP is binary: grades count as relevant when ``y > 0``.

    Examples
    --------
    >>> from ssvm.metrics import mean_average_precision
    >>> # query 1: the relevant row ranks 2nd (AP 1/2); query 2: first (AP 1); query 3 is all
    >>> # relevant, so every ranking is perfect and it does not count
    >>> mean_average_precision([0, 1, 1, 0, 1, 1], [3., 2., 5., 4., 1., 0.], qid=[1, 1, 2, 2, 3, 3])
    0.75
    """
    return ranking_score(y_true, y_score, qid=qid, loss="ap")


def mean_ndcg(y_true, y_score, *, qid=None, gain="exponential", k=None, gains=None):
    """Mean over queries of the NDCG of the ranking by ``y_score``.

    ``NDCG = DCG / ideal DCG`` with ``DCG = Σ_i g(y_(i)) / log2(1 + i)`` over positions
    ``i = 1, 2, ...`` (up to ``k``) of the ranking.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance grades (bool or numeric; non-negative for graded gains).
    y_score : array-like of shape (n_samples,)
        Finite scores; higher ranks first, ties by row order.
    qid : array-like of shape (n_samples,), default=None
        Query id per row; by default all rows form one query.
    gain : {"exponential", "linear", "binary"}, default="exponential"
        ``"exponential"``: g(y) = 2^y − 1 (the usual LETOR / LightGBM / XGBoost NDCG, and what
        ``RankSVM(loss="ndcg")`` trains on by default). ``"linear"``: g(y) = y (as
        :func:`sklearn.metrics.ndcg_score`). ``"binary"``: 1 for ``y > 0``, else 0. With 0/1
        labels all three give the same number.
    k : int, default=None
        Only the top ``k`` positions count (NDCG@k, see :func:`ndcg_at_k`); None: all.
    gains : str, optional
        The former name of ``gain`` (deprecated; a ``FutureWarning``).

    Returns
    -------
    float
        Mean NDCG over the queries on which it depends on the ranking (NaN, with a warning,
        if there is none).

    Examples
    --------
    >>> from ssvm.metrics import mean_ndcg
    >>> y, s = [2, 1, 0], [0.1, 0.9, 0.5]  # ranked: grade 1, grade 0, grade 2
    >>> round(mean_ndcg(y, s), 4)  # exponential gains 1, 0, 3 against the ideal 3, 1, 0
    0.6885
    >>> round(mean_ndcg(y, s, gain="binary"), 4)  # both relevant rows count alike
    0.9197
    """
    gain = _renamed_gain(gain, gains)
    return ranking_score(y_true, y_score, qid=qid, loss="ndcg", gain=gain, k=k)


def ndcg_at_k(y_true, y_score, *, k=10, qid=None, gain="exponential"):
    """Mean over queries of NDCG@k, the number learning-to-rank papers report.

    :func:`mean_ndcg` with a cut-off: only the top ``k`` positions of each query's ranking
    count, in the DCG and in the ideal DCG.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance grades (non-negative for graded gains).
    y_score : array-like of shape (n_samples,)
        Finite scores; higher ranks first, ties by row order.
    k : int, default=10
        The cut-off (a query with fewer rows is ranked whole).
    qid : array-like of shape (n_samples,), default=None
        Query id per row; by default all rows form one query.
    gain : {"exponential", "linear", "binary"}, default="exponential"
        As in :func:`mean_ndcg`.

    Returns
    -------
    float
        NaN, with an ``UndefinedMetricWarning``, if no query counts.

    Examples
    --------
    >>> from ssvm.metrics import ndcg_at_k
    >>> y, s = [2, 1, 0], [0.1, 0.9, 0.5]  # ranked: grade 1, grade 0, grade 2
    >>> round(ndcg_at_k(y, s, k=1), 4)  # gain 1 at the top against the ideal 3
    0.3333
    """
    return ranking_score(y_true, y_score, qid=qid, loss="ndcg", gain=gain, k=k)


def _renamed_gain(gain, gains):
    """``gain``, or the deprecated ``gains`` if it is given (with a FutureWarning)."""
    if gains is None:
        return gain
    warnings.warn("gains= is renamed gain= (its default is now 'exponential', the LETOR convention); "
                  "pass gain=... instead.", FutureWarning, stacklevel=external_stacklevel())
    return gains


def ranking_score(y_true, y_score, *, qid=None, loss="ap", gain=None, k=None, gains=None):
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
    gain : {"exponential", "linear", "binary"}, default=None
        Gains of ``loss="ndcg"`` (see :func:`mean_ndcg`; None: ``"exponential"``); the other
        losses are binary (``y > 0`` relevant).
    k : int, default=None
        Cut-off of ``"precision_at_k"`` (None: 10; clipped to each query's size) or of
        ``"ndcg"`` (None: no cut-off). Not used by the other losses.
    gains : str, optional
        The former name of ``gain`` (deprecated).

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
    gain = _renamed_gain(gain, gains)
    return _mean_or_nan(query_scores(y_true, y_score, qid=qid, loss=loss, gain=gain, k=k))


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
        ``qid``, ``loss``, ``gain``, ``k`` of :func:`ranking_score`.

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


def query_scores(y_true, y_score, *, qid=None, loss="ap", gain=None, k=None, gains=None):
    """Score of every query that counts (see :func:`ranking_score`), in order of first appearance.

    Parameters
    ----------
    y_true, y_score, qid, loss, gain, k, gains
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
    entry = loss_entry(loss)
    gain = _renamed_gain(gain, gains)
    if gain is None:
        gain = entry.params["gain"][0] if "gain" in entry.params else "binary"
    if k is None and entry.gains and "k" in entry.params:  # a truncated measure: its default cut-off
        k = entry.params["k"][0]
    per_query = _per_query_function(loss, entry, gain, k, grades)
    if entry.metric == "accuracy":
        counts = _every_query
    elif entry.metric == "pairs":
        counts = _several_grades
    else:
        counts = _several_grades if gain != "binary" else _both_classes
    values = [per_query(y_score[q], grades[q]) for q in resolve_queries(y_score.shape[0], qid=qid)
              if counts(grades[q])]
    return np.array(values, dtype=np.float64)


def _every_query(grades):
    return True


def _several_grades(grades):
    return grades.min() < grades.max()


def _both_classes(grades):
    return 0 < np.count_nonzero(grades > 0) < grades.shape[0]


def _accuracy(scores, grades):
    return float(np.mean((scores > 0) == (grades > 0)))


def _per_query_function(loss, entry, gain, k, grades):
    """``f(scores, grades) -> score`` of one counted query; ValueError on options the loss ignores."""
    if entry.metric == "pairs":
        if k is not None or gain != "binary":
            raise ValueError(f"loss {entry.name!r} scores the order of pairs of grades; it takes no k or gain.")
        return _pairs
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {GAINS}; got {gain!r}.")
    if gain != "binary" and gain not in entry.gains:
        raise ValueError(f"gain={gain!r} applies to NDCG only; loss {entry.name!r} is binary (y > 0 relevant).")
    if k is not None:
        if not (entry.gains or "k" in entry.params):
            raise ValueError(f"k is a cut-off of 'ndcg' and 'precision_at_k'; loss "
                             f"{entry.name!r} does not use it.")
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be an integer >= 1; got {k!r}.")
    if gain != "binary" and np.any(grades < 0):
        n_bad = int(np.count_nonzero(grades < 0))
        raise ValueError(f"gain={gain!r} needs non-negative relevance grades; y_true has {n_bad} of "
                         f"{grades.size} rows below 0: pass grades 0, 1, 2, ... or gain='binary' (y > 0 relevant).")
    if entry.metric == "accuracy":
        return _accuracy
    if entry.gains:
        return lambda s, g: _ndcg(s, g, gain, k)
    params = entry.check_params({"k": int(k)} if k is not None and "k" in entry.params else {})
    return lambda s, g: 1.0 - ranking_loss(s, g > 0, loss=loss, **params)


def _pairs(scores, grades):
    """The fraction of one query's pairs of grades r_i > r_j in order (any real grades: their order counts)."""
    return pair_order_score(scores, np.unique(grades, return_inverse=True)[1].reshape(-1))


def _ndcg(scores, grades, gain, k):
    """NDCG (at ``k``) of one query's ranking by ``scores``: the binary loss's value without a cut-off
    when every gain is 0 or 1 (bit for bit the binary NDCG whatever ``gain``), else the graded one."""
    if k is None and (gain == "binary" or np.all((grades == 0) | (grades == 1))):
        return 1.0 - ranking_loss(scores, grades > 0, loss="ndcg", gain="binary")
    return graded_ndcg_value(scores, grades, gain, k)


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
    return _cut_value(n, s[0], s[-1], s[i - 1] if i > 0 else None, s[i] if i < n else None)


def _cut_value(n, first, last, lo, hi):
    """The threshold :func:`accuracy_threshold` places at a cut of ``n`` sorted scores.

    Parameters
    ----------
    n : int
    first, last : float
        The lowest and the highest score.
    lo, hi : float or None
        The scores on either side of the cut, ``lo < hi``: ``lo`` None below every score, ``hi``
        None above every score.

    Returns
    -------
    float
        Halfway between ``lo`` and ``hi`` (``lo`` when they are adjacent floats); below the
        lowest or above the highest score by ``(last − first) / n`` (at least ``max(1,
        |first| / 2)`` when that is 0 or not finite) at the ends.
    """
    spread = last - first
    step = spread / n if 0 < spread < np.inf else max(1.0, abs(first) / 2)
    if lo is None:
        t = first - step
        return float(t if t < first else np.nextafter(first, -np.inf))
    if hi is None:
        t = last + step
        return float(t if t > last else last)
    t = lo + (hi - lo) / 2
    return float(t if lo <= t < hi else lo)
