"""Ranking quality per query: mean AP, NDCG and NDCG@k (graded or binary gains), precision@k.

One query grouping and one convention, shared by ``RankSVM.score``, ``LatentRankSVM.score``,
``ssvm eval``, the experiments and the scripts:

* **Queries.** Rows with the same ``qid`` form a query (any order of rows; the grouping is
  :func:`ssvm._queries.resolve_queries`, the one the estimators train with). Without ``qid``
  all rows form one query.
* **Ranking and ties.** Each query's rows are ranked by decreasing score; tied scores are ranked
  by row order (the first row ranks higher), as in training. trec_eval (and ``pytrec_eval``)
  rank tied scores by document name in *descending* order (``strcmp``); scikit-learn's
  ``average_precision_score`` / ``ndcg_score`` average over the ties. Without ties all agree;
  to get trec_eval's number on a run with ties, order each query's tied rows by decreasing
  document name first.
* **Relevance.** AP, precision@k and binary-gain NDCG count ``y > 0`` as relevant (any real
  grade: 0.5 is relevant). NDCG with graded gains (``gain="exponential"``: 2^y − 1, the LETOR
  convention and the default; ``"linear"``: y, trec_eval's ``ndcg``) needs non-negative integer
  grades, checked as training checks them: evaluation and ``RankSVM(loss="ndcg")`` refuse 0.5
  alike. With 0/1 labels the three gains agree, bit for bit.
* **Which queries count.** A query on which every ranking scores the same tells nothing about
  the model, so by default it is left out of the mean: for the binary measures a query without a
  relevant row or without a non-relevant row; for graded-gain NDCG a query whose rows all have
  the same grade. Training skips the same queries
  (:class:`~ssvm.exceptions.DegenerateQueriesWarning`). With ``all_queries=True`` every query
  counts, as in trec_eval: one without a relevant row scores 0 on every measure, one whose rows
  are all relevant (or all of one positive grade) scores 1 on AP and NDCG and
  ``min(k, its size) / k`` on trec_eval's P@k. Accuracy (``loss="zero_one"``) counts every
  query. If no query counts, the score is NaN with an ``UndefinedMetricWarning``.
* **Precision at k.** :func:`precision_at_k` is trec_eval's ``P_k``: the relevant rows among the
  top k, divided by k (a query of 6 rows, 2 relevant, has P@10 = 0.2). The *trained* measure,
  ``ranking_score(loss="precision_at_k")`` and ``RankSVM.score``, divides by ``min(k, query
  size)`` instead, so that a query shorter than k can still be ranked well or badly.

:func:`evaluate` computes several measures at once under trec_eval's names (``map``, ``ndcg``,
``ndcg_cut_10``, ``P_10``, ``recip_rank``, ``Rprec``), means or per query: what ``ssvm eval`` prints.

The functions take ``(y_true, y_score)`` in scikit-learn's order, so they plug into
:func:`sklearn.metrics.make_scorer`; with metadata routing a scorer can ask for ``qid``::

    scorer = make_scorer(ndcg_at_k, response_method="decision_function", k=10, gain="exponential")
    scorer = scorer.set_score_request(qid=True)

The older name ``gains=`` of ``gain=`` still works, with a ``FutureWarning``.
"""

import warnings

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning

from ssvm._query_values import query_values
from ssvm._threshold import accuracy_threshold
from ssvm.exceptions import external_stacklevel
from ssvm.losses import loss_entry

__all__ = ["ranking_score", "query_scores", "one_vs_rest_score", "mean_average_precision",
           "mean_ndcg", "ndcg_at_k", "precision_at_k", "evaluate", "accuracy_threshold"]

#: the measures of :func:`evaluate`: trec_eval's name, the loss it is one minus, whether it is taken at each
#: cut-off k (named ``{name}_{k}``) and whether it takes ``gain``
MEASURES = dict(map=("ap", False), ndcg=("ndcg", False), ndcg_cut=("ndcg", True), P=("precision_at_k", True),
                recip_rank=("mrr", False), Rprec=("prbep", False))


def mean_average_precision(y_true, y_score, *, qid=None, all_queries=False):
    """Mean over queries of the average precision of the ranking by ``y_score``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance: bool, or numeric grades with ``y > 0`` relevant.
    y_score : array-like of shape (n_samples,)
        Finite scores; higher ranks first, ties by row order.
    qid : array-like of shape (n_samples,), default=None
        Query id per row; by default all rows form one query.
    all_queries : bool, default=False
        Average over every query, as trec_eval's ``map`` (a query without a relevant row scores 0,
        one with only relevant rows 1); by default over the queries with a relevant and a
        non-relevant row.

    Returns
    -------
    float
        Mean AP (NaN, with a warning, if no query counts). AP is binary: grades count as
        relevant when ``y > 0``.

    Examples
    --------
    >>> from ssvm.metrics import mean_average_precision
    >>> # query 1: the relevant row ranks 2nd (AP 1/2); query 2: first (AP 1); query 3 is all
    >>> # relevant, so every ranking is perfect and it does not count
    >>> mean_average_precision([0, 1, 1, 0, 1, 1], [3., 2., 5., 4., 1., 0.], qid=[1, 1, 2, 2, 3, 3])
    0.75
    """
    return ranking_score(y_true, y_score, qid=qid, loss="ap", all_queries=all_queries)


def mean_ndcg(y_true, y_score, *, qid=None, gain="exponential", k=None, all_queries=False, gains=None):
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
    all_queries : bool, default=False
        Average over every query, as trec_eval (a query without a relevant row scores 0, one
        whose rows all have the same positive grade 1); by default over the queries on which
        NDCG depends on the ranking.
    gains : str, optional
        The former name of ``gain`` (deprecated; a ``FutureWarning``).

    Returns
    -------
    float
        Mean NDCG (NaN, with a warning, if no query counts).

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
    return ranking_score(y_true, y_score, qid=qid, loss="ndcg", gain=gain, k=k, all_queries=all_queries)


def ndcg_at_k(y_true, y_score, *, k=10, qid=None, gain="exponential", all_queries=False):
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
    all_queries : bool, default=False
        As in :func:`mean_ndcg` (trec_eval's ``ndcg_cut_k`` with ``gain="linear"``).

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
    return ranking_score(y_true, y_score, qid=qid, loss="ndcg", gain=gain, k=k, all_queries=all_queries)


def precision_at_k(y_true, y_score, *, k=10, qid=None, all_queries=False):
    """Mean over queries of precision at k as trec_eval computes it (``P_k``): relevant rows in the top k, / k.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance: bool, or numeric grades with ``y > 0`` relevant.
    y_score : array-like of shape (n_samples,)
        Finite scores; higher ranks first, ties by row order.
    k : int, default=10
        The cut-off. Always the divisor: a query with fewer than k rows cannot reach 1 (unlike the
        trained measure, ``ranking_score(loss="precision_at_k")``, see the module).
    qid : array-like of shape (n_samples,), default=None
        Query id per row; by default all rows form one query.
    all_queries : bool, default=False
        Average over every query, as trec_eval; by default over the queries with a relevant and
        a non-relevant row.

    Returns
    -------
    float
        NaN, with an ``UndefinedMetricWarning``, if no query counts.

    Examples
    --------
    >>> from ssvm.metrics import precision_at_k
    >>> # 6 rows, the 2 relevant ones ranked 1st and 3rd: 2 relevant in the top 10, divided by 10
    >>> precision_at_k([1, 0, 1, 0, 0, 0], [6., 5., 4., 3., 2., 1.], k=10)
    0.2
    """
    _, values = query_values(y_true, y_score, qid=qid, loss="precision_at_k", gain=None, k=k,
                             all_queries=all_queries, precision="trec")
    return _mean_or_nan(values[~np.isnan(values)])


def evaluate(y_true, y_score, *, qid=None, k=(1, 5, 10), gain="exponential", all_queries=False, per_query=False,
             measures=tuple(MEASURES)):
    """Several ranking measures at once, under trec_eval's names: what ``ssvm eval`` prints.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance grades (``y > 0`` relevant for ``map`` and ``P``).
    y_score : array-like of shape (n_samples,)
        Finite scores; higher ranks first, ties by row order.
    qid : array-like of shape (n_samples,), default=None
        Query id per row; by default all rows form one query.
    k : sequence of int, default=(1, 5, 10)
        The cut-offs of ``ndcg_cut`` and ``P``.
    gain : {"exponential", "linear", "binary"}, default="exponential"
        Gains of ``ndcg`` and ``ndcg_cut`` (as in :func:`mean_ndcg`). trec_eval's are
        ``"linear"``.
    all_queries : bool, default=False
        Every query counts (trec_eval's means); by default only the queries that count (see the
        module).
    per_query : bool, default=False
        Return every query's value instead of the means.
    measures : sequence of str, default=("map", "ndcg", "ndcg_cut", "P", "recip_rank", "Rprec")
        Which measures: keys of :data:`MEASURES` (mean AP; NDCG; NDCG@k and trec_eval's P@k at
        each cut-off; the reciprocal rank of the first relevant row; R-precision, the precision
        at R = the number of relevant rows, which is the precision/recall break-even point).

    Returns
    -------
    dict
        ``{name: mean}`` with names ``"map"``, ``"ndcg"``, ``"ndcg_cut_5"``, ``"P_5"``, ... (NaN
        when no query counts; no warning) and ``"num_q"``, the number of queries; with
        ``per_query=True``, ``{query id: {name: value}}`` as ``pytrec_eval`` returns, NaN for a
        query left out of the means.

    Raises
    ------
    ValueError
        On an unknown measure, a cut-off below 1, or what :func:`ranking_score` refuses.

    Examples
    --------
    >>> from ssvm.metrics import evaluate
    >>> y, s, q = [2, 0, 1, 0, 0, 1], [0.9, 0.8, 0.1, 0.3, 0.2, 0.4], [1, 1, 1, 2, 2, 2]
    >>> {name: round(value, 4) for name, value in evaluate(y, s, qid=q, k=[1]).items()}
    {'num_q': 2, 'map': 0.9167, 'ndcg': 0.982, 'ndcg_cut_1': 1.0, 'P_1': 1.0, 'recip_rank': 1.0, 'Rprec': 0.75}
    """
    ids, columns = measure_table(y_true, y_score, qid=qid, k=k, gain=gain, all_queries=all_queries,
                                 measures=measures)
    if per_query:
        return {query: {name: float(values[i]) for name, values in columns.items()} for i, query in enumerate(ids)}
    return {"num_q": len(ids), **{name: _nan_mean(values) for name, values in columns.items()}}


def measure_table(y_true, y_score, *, qid, k, gain, all_queries, measures):
    """:func:`evaluate`'s table: the query ids and ``{name: value of every query}`` (NaN: does not count)."""
    unknown = [name for name in measures if name not in MEASURES]
    if unknown:
        raise ValueError(f"unknown measure {unknown[0]!r}; measures are {', '.join(MEASURES)}")
    cutoffs = sorted(set(k))
    if any(isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)) or c < 1 for c in cutoffs):
        raise ValueError(f"k must hold integers >= 1; got {list(k)!r}.")
    columns, ids = {}, []
    for name in measures:
        loss, at_k = MEASURES[name]
        for cutoff in cutoffs if at_k else [None]:
            ids, columns[name if cutoff is None else f"{name}_{cutoff}"] = query_values(
                y_true, y_score, qid=qid, loss=loss, gain=gain if loss_entry(loss).gains else None, k=cutoff,
                all_queries=all_queries, precision="trec" if name == "P" else "trained")
    return ids, columns


def _nan_mean(values):
    """Mean of the values that are not NaN; NaN (no warning) when there are none."""
    counted = values[~np.isnan(values)]
    return float(np.mean(counted)) if counted.size else float("nan")


def _renamed_gain(gain, gains):
    """``gain``, or the deprecated ``gains`` if it is given (with a FutureWarning)."""
    if gains is None:
        return gain
    warnings.warn("gains= is renamed gain= (its default is now 'exponential', the LETOR convention); "
                  "pass gain=... instead.", FutureWarning, stacklevel=external_stacklevel())
    return gains


def ranking_score(y_true, y_score, *, qid=None, loss="ap", gain=None, k=None, all_queries=False, gains=None):
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
        Cut-off of ``"precision_at_k"`` and ``"recall_at_k"`` (None: 10; clipped to each query's size:
        the trained measures, see :func:`precision_at_k` for trec_eval's P@k; recall@k counts at most
        min(P, k) positives) or of ``"ndcg"`` (None: no cut-off).
        Not used by the other losses.
    all_queries : bool, default=False
        Average over every query, as trec_eval (see the module); by default over the queries
        that count.
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
    return _mean_or_nan(query_scores(y_true, y_score, qid=qid, loss=loss, gain=gain, k=k, all_queries=all_queries))


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


def query_scores(y_true, y_score, *, qid=None, loss="ap", gain=None, k=None, all_queries=False, gains=None):
    """Score of every query that counts (see :func:`ranking_score`), in order of first appearance.

    Parameters
    ----------
    y_true, y_score, qid, loss, gain, k, all_queries, gains
        As for :func:`ranking_score`.

    Returns
    -------
    ndarray of float64, shape (n_counted_queries,)
        With ``all_queries=True``, one value for every query.
    """
    gain = _renamed_gain(gain, gains)
    _, values = query_values(y_true, y_score, qid=qid, loss=loss, gain=gain, k=k, all_queries=all_queries)
    return values[~np.isnan(values)]
