"""Ranking quality: mean AP and mean NDCG of rankings, per query or one-vs-rest per class."""

from __future__ import annotations

import numpy as np

__all__ = ["METRICS", "evaluate_model", "ranking_metrics"]

#: metric name -> ssvm loss whose ``1 - ranking_loss`` it is
METRICS = {"AP": "ap", "NDCG": "ndcg"}


def ranking_metrics(scores, relevant, qid=None):
    """Mean AP and mean NDCG of the rankings given by ``scores``, one query per ``qid`` value.

    Each query's samples are ranked by decreasing score (ties by index, as everywhere in ssvm) and
    scored with ``1 - ssvm.losses.ranking_loss``. Queries without a relevant or without an
    irrelevant sample have no defined AP and are skipped.

    Parameters
    ----------
    scores : array-like of float, shape (n_samples,)
    relevant : array-like of bool, shape (n_samples,)
    qid : array-like, shape (n_samples,), optional
        Query id per sample; by default all samples form one query.

    Returns
    -------
    dict
        ``{"AP": mean AP, "NDCG": mean NDCG, "queries": number of queries scored}``.

    Raises
    ------
    ValueError
        If the lengths differ or no query has both a relevant and an irrelevant sample.
    """
    from ssvm.losses import ranking_loss

    scores = np.asarray(scores, dtype=np.float64)
    relevant = np.asarray(relevant, dtype=bool)
    if scores.ndim != 1 or scores.shape != relevant.shape:
        raise ValueError(
            f"scores and relevant must be 1-D of equal length, got {scores.shape} and {relevant.shape}"
        )
    if qid is None:
        groups = [np.arange(scores.size)]
    else:
        qid = np.asarray(qid)
        if qid.shape != scores.shape:
            raise ValueError(f"qid has shape {qid.shape}, expected {scores.shape}")
        _, inverse = np.unique(qid, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        groups = np.split(order, np.flatnonzero(np.diff(inverse[order])) + 1)
    values = {name: [] for name in METRICS}
    for idx in groups:
        y = relevant[idx]
        if y.all() or not y.any():
            continue
        for name, loss in METRICS.items():
            values[name].append(1.0 - ranking_loss(scores[idx], y, loss=loss))
    if not values["AP"]:
        raise ValueError("no query has both a relevant and an irrelevant sample")
    result = {name: float(np.mean(v)) for name, v in values.items()}
    result["queries"] = len(values["AP"])
    return result


def _one_vs_rest_metrics(scores, y, classes):
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 1:  # binary: one query, the second class is the relevant one
        return ranking_metrics(scores, y == classes[1])
    per_class = [ranking_metrics(scores[:, k], y == c) for k, c in enumerate(classes)]
    out = {name: float(np.mean([m[name] for m in per_class])) for name in METRICS}
    out["queries"] = len(per_class)
    return out


def evaluate_model(model, X, y, qid=None):
    """Mean AP and mean NDCG of a fitted model's rankings.

    Parameters
    ----------
    model : fitted estimator with ``decision_function`` and ``classes_``
    X : array-like or sparse matrix
    y : ndarray
        Class labels (one-vs-rest retrieval, one query per class) when ``qid`` is None, else
        relevance grades (``y > 0`` relevant) with one query per ``qid`` value.
    qid : ndarray, optional

    Returns
    -------
    dict
        See :func:`ranking_metrics`.
    """
    scores = model.decision_function(X)
    y = np.asarray(y)
    if qid is None:
        return _one_vs_rest_metrics(scores, y, model.classes_)
    return ranking_metrics(scores, y > 0, qid)
