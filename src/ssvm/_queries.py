"""Query bookkeeping shared by the estimators: ``qid`` / ``group`` → index arrays; relevance.

**Relevance** has one convention, checked here and nowhere else: ``y`` is bool or finite numeric
grades, and ``y > 0`` is relevant (:func:`check_relevance`, the binary view every binary loss, oracle
and problem takes); a graded measure takes the grades themselves (:func:`check_relevance_grades`).

A *query* is a set of rows of ``X`` ranked against each other. Users describe queries either by
a query id per row (``qid``, as svmlight / XGBRanker do) or by the sizes of consecutive blocks of
rows (``group``, as LightGBM does). Both are turned into the same list of index arrays here, in the
order in which the queries first appear, with the row indices of each query ascending — so the two
descriptions of the same data give identical training problems.
"""

import numpy as np

from ssvm.exceptions import DegenerateQueriesWarning, warn_once

__all__ = ["queries_from_qid", "queries_from_group", "resolve_queries", "informative_queries",
           "check_relevance", "check_relevance_grades", "check_group", "check_informative"]


def check_relevance(y, n_samples, name="y"):
    """Binary relevance: ``y`` (bool, or numeric grades of which ``y > 0`` are relevant) as bool.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    n_samples : int
        Expected length.
    name : str, default="y"

    Returns
    -------
    ndarray of bool, shape (n_samples,)
        ``y`` itself if it is a bool array of the right shape.

    Raises
    ------
    ValueError
        As :func:`check_relevance_grades`.
    """
    y = np.asarray(y)
    if y.dtype == bool and y.shape == (n_samples,):
        return y
    if y.dtype.kind in "iu" and y.shape == (n_samples,):
        return y > 0  # integers are finite: one comparison, no float copy
    return check_relevance_grades(y, n_samples, name=name) > 0


def check_relevance_grades(y, n_samples, name="y"):
    """Relevance grades as a finite float64 vector (bool or numeric input; ``y > 0`` is relevant).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Relevance: bool, or numeric grades.
    n_samples : int
        Expected length.
    name : str, default="y"
        The argument's name, for messages.

    Returns
    -------
    ndarray of float64, shape (n_samples,)

    Raises
    ------
    ValueError
        If ``y`` is not 1-D of length ``n_samples``, not numeric (e.g. strings), or not finite.
    """
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(
            f"{name} must be 1-D with one relevance grade per row ({n_samples}); got shape "
            f"{y.shape}."
        )
    if y.dtype.kind == "O":  # numbers held as objects are fine; anything else is refused below
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            pass
    if y.dtype.kind not in "biuf":
        raise ValueError(
            f"{name} must hold numeric relevance grades (y > 0 is relevant); got dtype "
            f"{y.dtype}. Encode the labels as numbers first, e.g. (y == 'relevant').astype(int)."
        )
    y = y.astype(np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinity; relevance grades must be finite.")
    return y


def queries_from_qid(qid, n_samples, rows="X"):
    """Index arrays of the queries described by one query id per row.

    Parameters
    ----------
    qid : array-like of shape (n_samples,)
        Query id of each row (any hashable, comparable values: ints, strings, ...). Rows of a query
        need not be consecutive.
    n_samples : int
        Number of rows of ``X``.
    rows : str, default="X"
        What holds the rows, for messages (``"y_score"``, ``"scores"``).

    Returns
    -------
    queries : list of ndarray of int64
        One ascending index array per distinct id, in the order of first appearance.

    Raises
    ------
    ValueError
        If ``qid`` is not 1-D, has the wrong length, or contains NaN.
    """
    qid = np.asarray(qid)
    if qid.ndim != 1:
        raise ValueError(
            f"qid must be 1-D with one query id per row of X; got an array of shape {qid.shape}."
        )
    if qid.shape[0] != n_samples:
        raise ValueError(
            f"qid has {qid.shape[0]} entries but {rows} has {n_samples} rows; "
            "qid needs one query id per row."
        )
    if qid.dtype.kind == "f" and not np.all(np.isfinite(qid)):
        raise ValueError("qid contains NaN or infinity; query ids must be finite.")
    try:
        _, first, inverse = np.unique(qid, return_index=True, return_inverse=True)
    except TypeError as exc:
        raise ValueError(f"qid values must be mutually comparable: {exc}") from None
    # relabel queries by first appearance, then group rows (stable sort keeps rows ascending)
    rank = np.empty(first.shape[0], dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    label = rank[inverse.ravel()]
    order = np.argsort(label, kind="stable")
    bounds = np.cumsum(np.bincount(label, minlength=first.shape[0]))[:-1]
    return [q.astype(np.int64, copy=False) for q in np.split(order, bounds)]


def queries_from_group(group, n_samples, rows="X"):
    """Index arrays of consecutive queries given their sizes (LightGBM's ``group``).

    Parameters
    ----------
    group : array-like of int of shape (n_queries,)
        Number of rows of each query; the first ``group[0]`` rows form query 0, and so on.
    n_samples : int
        Number of rows of ``X``.
    rows : str, default="X"
        What holds the rows, for messages (``"y_score"``, ``"scores"``).

    Returns
    -------
    queries : list of ndarray of int64

    Raises
    ------
    ValueError
        If a size is not a positive integer or the sizes do not sum to ``n_samples``.
    """
    group = check_group(group, n_samples, rows)
    return np.split(np.arange(n_samples, dtype=np.int64), np.cumsum(group)[:-1])


def check_group(group, n_samples, rows="X"):
    """Query sizes (LightGBM's ``group``) as int64, checked against the number of rows.

    Parameters
    ----------
    group : array-like of int of shape (n_queries,)
    n_samples : int
    rows : str, default="X"
        What holds the rows, for messages.

    Returns
    -------
    ndarray of int64, shape (n_queries,)

    Raises
    ------
    ValueError
        If a size is not a positive integer or the sizes do not sum to ``n_samples``.
    """
    group = np.asarray(group)
    if group.ndim != 1 or group.shape[0] == 0:
        raise ValueError(
            f"group must be a non-empty 1-D array of query sizes; got shape {group.shape}."
        )
    if group.dtype.kind == "f":
        if not np.all(np.isfinite(group)) or not np.all(group == np.round(group)):
            raise ValueError("group sizes must be integers.")
        group = group.astype(np.int64)
    elif group.dtype.kind not in "iub":
        raise ValueError(f"group sizes must be integers; got dtype {group.dtype}.")
    group = group.astype(np.int64)
    if np.any(group < 1):
        raise ValueError(f"group sizes must be positive; got minimum {group.min()}.")
    total = int(group.sum())
    if total != n_samples:
        raise ValueError(
            f"group sizes sum to {total} but {rows} has {n_samples} rows; "
            "group must give the sizes of consecutive queries covering every row."
        )
    return group


def resolve_queries(n_samples, qid=None, group=None, rows="X"):
    """Queries from ``qid`` or ``group`` (at most one of them), or one query of all rows.

    Parameters
    ----------
    n_samples : int
        Number of rows of ``X``.
    qid : array-like of shape (n_samples,), default=None
        Query id per row.
    group : array-like of int, default=None
        Sizes of consecutive queries.
    rows : str, default="X"
        What holds the rows, for messages (``"y_score"``, ``"scores"``).

    Returns
    -------
    queries : list of ndarray of int64

    Raises
    ------
    ValueError
        If both ``qid`` and ``group`` are given, or either is malformed.
    """
    if qid is not None and group is not None:
        raise ValueError(
            "Pass either qid (a query id per row) or group (sizes of consecutive queries), not both."
        )
    if qid is not None:
        return queries_from_qid(qid, n_samples, rows)
    if group is not None:
        return queries_from_group(group, n_samples, rows)
    return [np.arange(n_samples, dtype=np.int64)]


def informative_queries(queries, relevant, *, warn=True):
    """Keep the queries with at least one relevant and one non-relevant row (binary relevance), or
    with two distinct grades (graded relevance).

    Parameters
    ----------
    queries : list of ndarray of int
        Row indices of each query.
    relevant : ndarray of bool or of int of shape (n_samples,)
        Binary relevance of each row, or its non-negative grade (graded NDCG: a query whose
        grades are all equal is skipped, counted as without a relevant row if they are 0 and
        without a non-relevant one otherwise).
    warn : bool, default=True
        Emit a :class:`~ssvm.exceptions.DegenerateQueriesWarning` if any query is skipped (its
        text is the same for every call, so by default it shows once per session).

    Returns
    -------
    kept : list of ndarray of int
        The informative queries, in their original order.

    Raises
    ------
    ValueError
        If no query has both a relevant and a non-relevant row.
    """
    kept, no_pos, no_neg = [], 0, 0
    for q in queries:
        lowest, highest = relevant[q].min(), relevant[q].max()
        if lowest < highest:
            kept.append(q)
        elif highest <= 0:
            no_pos += 1
        else:
            no_neg += 1
    check_informative(len(queries), no_pos, no_neg, warn=warn)
    return kept


def check_informative(n_queries, no_pos, no_neg, *, warn=True):
    """Fail if every query is degenerate; warn (once per session) if some are.

    Parameters
    ----------
    n_queries : int
        Number of queries.
    no_pos, no_neg : int
        Queries without a relevant row, and with only relevant rows.
    warn : bool, default=True
        Emit a :class:`~ssvm.exceptions.DegenerateQueriesWarning` if any query is skipped (it
        points at the user's line that called ssvm).

    Raises
    ------
    ValueError
        If no query has both a relevant and a non-relevant row.
    """
    if no_pos + no_neg == n_queries:
        raise ValueError(
            f"All {n_queries} queries are degenerate ({no_pos} without a relevant row, "
            f"{no_neg} without a non-relevant row): every query needs at least one positive "
            "(y > 0) and one negative row to be trained on."
        )
    if warn and (no_pos or no_neg):
        warn_once(
            "Skipping queries that cannot be ranked: a query without a relevant row (y > 0) or "
            "without a non-relevant row has the same loss under every ranking. The fitted "
            "n_skipped_queries_ gives each fit's count. (Shown once per session; "
            "warnings.simplefilter('always', ssvm.exceptions.DegenerateQueriesWarning) shows it "
            "at every fit.)",
            DegenerateQueriesWarning,
        )
