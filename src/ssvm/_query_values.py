"""One value per query of a ranking measure: the computation behind :mod:`ssvm.metrics`.

:func:`query_values` checks the input, groups the rows into queries and returns every query's
value, NaN for a query that does not count (the conventions are stated in :mod:`ssvm.metrics`).
"""

import numpy as np

from ssvm._queries import check_relevance_grades, resolve_queries
from ssvm.losses import loss_entry, ranking_loss
from ssvm.losses._validation import check_grades
from ssvm.losses.graded import graded_ndcg_value
from ssvm.losses.pairwise import pair_order_score
from ssvm.losses.registry import GAINS

__all__ = ["query_values", "check_scores", "ranked_first", "trec_precision"]


def check_scores(y_true, y_score):
    """``(grades, scores)`` as float64 vectors of one length, or a ValueError naming the culprit."""
    y_score = np.asarray(y_score)
    if y_score.ndim != 1 or y_score.dtype.kind not in "iuf":
        raise ValueError(f"y_score must be a 1-D array of real scores; got shape {y_score.shape} "
                         f"and dtype {y_score.dtype}.")
    y_score = y_score.astype(np.float64, copy=False)
    if not np.all(np.isfinite(y_score)):
        raise ValueError("y_score contains NaN or infinity.")
    n_true = np.shape(y_true)[0] if np.ndim(y_true) == 1 else None
    if n_true is not None and n_true != y_score.shape[0]:
        raise ValueError(f"y_true and y_score must have one entry per row: y_true has {n_true} rows, "
                         f"y_score {y_score.shape[0]}.")
    return check_relevance_grades(y_true, y_score.shape[0], name="y_true"), y_score


def ranked_first(scores, n):
    """Rows of the top ``n`` of the ranking by decreasing score, ties by row order (the first row first)."""
    return np.argsort(-scores, kind="stable")[:n]


def trec_precision(scores, grades, k):
    """trec_eval's P@k of one query: relevant rows (``y > 0``) among the top ``k``, divided by ``k``."""
    return np.count_nonzero(grades[ranked_first(scores, k)] > 0) / k


def query_values(y_true, y_score, *, qid, loss, gain, k, all_queries, precision="trained"):
    """Every query's value of a measure, and each query's id.

    Parameters
    ----------
    y_true, y_score, qid, loss, gain, k
        As for :func:`ssvm.metrics.ranking_score` (``gain`` None: the loss's own).
    all_queries : bool
        False: a query that does not count is NaN. True: it gets the value every ranking of it
        has (0 with no relevant row; 1 for AP and NDCG when every row is relevant or all grades
        are equal; trec_eval's values).
    precision : {"trained", "trec"}, default="trained"
        For ``loss="precision_at_k"``: the trained measure (divided by ``min(k, query size)``) or
        trec_eval's P@k (divided by ``k``).

    Returns
    -------
    ids : list
        The query id of each query (its first row's ``qid``; 0 without ``qid``), in order of
        first appearance.
    values : ndarray of float64
    """
    grades, y_score = check_scores(y_true, y_score)
    entry = loss_entry(loss)
    if gain is None:
        gain = entry.params["gain"][0] if "gain" in entry.params else "binary"
    if k is None and entry.gains and "k" in entry.params:  # a truncated measure: its default cut-off
        k = entry.params["k"][0]
    per_query = _per_query_function(loss, entry, gain, k)
    if gain != "binary":  # graded gains: the grades training accepts, by the same check (±1 labels: 0 and 1)
        grades = check_grades(grades, name="y_true", gain=gain).astype(np.float64)
    if precision == "trec":
        per_query = lambda s, g: trec_precision(s, g, int(k))  # noqa: E731 (defined for every query)
    if entry.metric == "accuracy":
        counts = _every_query
    elif entry.metric == "pairs" or gain != "binary":
        counts = _several_grades
    else:
        counts = _both_classes
    queries = resolve_queries(y_score.shape[0], qid=qid, rows="y_score")
    values = np.full(len(queries), np.nan)
    for i, q in enumerate(queries):
        if counts(grades[q]):
            values[i] = per_query(y_score[q], grades[q])
        elif all_queries:
            values[i] = per_query(y_score[q], grades[q]) if precision == "trec" else float(np.any(grades[q] > 0))
    ids = [0] * len(queries) if qid is None else [np.asarray(qid)[q[0]].item() for q in queries]
    return ids, values


def _every_query(grades):
    return True


def _several_grades(grades):
    return grades.min() < grades.max()


def _both_classes(grades):
    return 0 < np.count_nonzero(grades > 0) < grades.shape[0]


def _accuracy(scores, grades):
    return float(np.mean((scores > 0) == (grades > 0)))


def _per_query_function(loss, entry, gain, k):
    """``f(scores, grades) -> value`` of one counted query; ValueError on options the loss ignores."""
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
            raise ValueError(f"k is a cut-off of 'ndcg', 'ndcg_at_k', 'precision_at_k' and 'recall_at_k'; loss "
                             f"{entry.name!r} does not use it.")
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be an integer >= 1; got {k!r}.")
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
