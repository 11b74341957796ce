"""The compared models (:class:`ModelSpec`), fitting and evaluating them, picking C by CV."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from ssvm.metrics import one_vs_rest_score, query_scores, ranking_score

logger = logging.getLogger(__name__)

__all__ = ["DEMO_MODELS", "METRICS", "ModelSpec", "evaluate_model", "fit_model", "select_C"]

#: metric name -> ssvm loss whose ``1 - loss`` it is (with :mod:`ssvm.metrics`' conventions)
METRICS = {"AP": "ap", "NDCG": "ndcg"}


@dataclass(frozen=True)
class ModelSpec:
    """A model of the comparison: a ``RankSVM`` loss, or scikit-learn's ``LinearSVC``.

    Parameters
    ----------
    name : str
        Row label in the tables.
    loss : str or None
        ``RankSVM`` loss; None means ``LinearSVC(loss="hinge", C=C/n)``, the same function as the
        0-1 SVM (docs/design.md §1) solved by liblinear.
    select_by : {"AP", "NDCG"}
        Validation metric that picks C.
    params : dict
        Extra ``RankSVM`` parameters (solver, tol, ...).
    """

    name: str
    loss: str | None
    select_by: str = "AP"
    params: dict = field(default_factory=dict)

    def make(self, C, n_samples, random_state=0):
        """Build the unfitted estimator for regularisation ``C`` (``n_samples`` rows to fit)."""
        if self.loss is None:
            from sklearn.svm import LinearSVC

            return LinearSVC(loss="hinge", C=C / n_samples, max_iter=20000, random_state=random_state)
        from ssvm import RankSVM

        return RankSVM(loss=self.loss, C=C, random_state=random_state, **self.params)


#: the three models of the demo and of the QS paper's comparison
DEMO_MODELS = (
    ModelSpec("AP-SVM", "ap", "AP"),
    ModelSpec("NDCG-SVM", "ndcg", "NDCG"),
    ModelSpec("0-1 SVM", "zero_one", "AP"),
)


def fit_model(spec, C, X, y, qid=None, random_state=0):
    """Fit ``spec``'s estimator: with ``qid`` on graded relevance, otherwise on class labels.

    Parameters
    ----------
    spec : ModelSpec
    C : float
    X : array-like or sparse matrix, shape (n_samples, n_features)
    y : ndarray, shape (n_samples,)
        Class labels (``qid`` None) or relevance grades (``y > 0`` is relevant).
    qid : ndarray, optional
    random_state : int, default=0

    Returns
    -------
    estimator
        The fitted estimator.
    """
    model = spec.make(C, X.shape[0], random_state=random_state)
    if qid is None:
        return model.fit(X, y)
    if spec.loss is None:
        return model.fit(X, np.asarray(y) > 0)
    return model.fit(X, y, qid=qid)


def evaluate_model(model, X, y, qid=None):
    """Mean AP and mean NDCG (gains 2^y − 1 for graded relevance) of a fitted model's rankings (:mod:`ssvm.metrics`).

    Parameters
    ----------
    model : fitted estimator with ``decision_function`` and ``classes_``
    X : array-like or sparse matrix
    y : ndarray
        Class labels (one-vs-rest retrieval: one query per class present in ``y``) when ``qid``
        is None, else relevance grades (``y > 0`` relevant) with one query per ``qid`` value.
    qid : ndarray, optional

    Returns
    -------
    dict
        ``{"AP": ..., "NDCG": ..., "queries": number of queries (classes) scored}``.
    """
    scores = np.asarray(model.decision_function(X), dtype=np.float64)
    y = np.asarray(y)
    if qid is None and scores.ndim == 2:  # one-vs-rest: mean over the classes present
        out = {name: one_vs_rest_score(y, scores, model.classes_, loss=loss)
               for name, loss in METRICS.items()}
        out["queries"] = int(np.isin(model.classes_, y).sum())
        return out
    relevance = y if qid is not None else y == model.classes_[1]
    out = {name: ranking_score(relevance, scores, qid=qid, loss=loss)
           for name, loss in METRICS.items()}
    out["queries"] = int(query_scores(relevance, scores, qid=qid, loss="ap").size)
    return out


def _cv_splits(X, y, qid, n_folds, random_state):
    from sklearn.model_selection import GroupKFold, StratifiedKFold

    if qid is None:
        cv = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=random_state)
        return list(cv.split(X, y))
    return list(GroupKFold(n_splits=n_folds).split(X, y, groups=qid))


def select_C(spec, X, y, grid, *, qid=None, n_folds=3, random_state=0, progress=None):
    """Pick C from ``grid`` by k-fold cross-validation of ``spec.select_by``.

    Folds are stratified by class without ``qid`` and keep queries whole with it.

    Parameters
    ----------
    spec : ModelSpec
    X, y, qid
        As for :func:`fit_model`.
    grid : sequence of float
        Candidate values of C (> 0).
    n_folds : int, default=3
    random_state : int, default=0
    progress : tqdm-like, optional
        ``update(1)`` is called after every fit.

    Returns
    -------
    best_C : float
    scores : dict
        C -> mean validation score.

    Raises
    ------
    ValueError
        For an empty grid or a non-positive C.
    """
    grid = [float(c) for c in grid]
    if not grid or min(grid) <= 0:
        raise ValueError(f"the C grid must be non-empty and positive, got {grid}")
    y = np.asarray(y)
    splits = _cv_splits(X, y, qid, n_folds, random_state)
    cv_scores = {}
    for C in grid:
        fold_scores = []
        for train, val in splits:
            model = fit_model(
                spec, C, X[train], y[train], None if qid is None else qid[train], random_state
            )
            metrics = evaluate_model(model, X[val], y[val], None if qid is None else qid[val])
            fold_scores.append(metrics[spec.select_by])
            if progress is not None:
                progress.update(1)
        cv_scores[C] = float(np.mean(fold_scores))
    best = max(grid, key=lambda c: (cv_scores[c], -c))  # ties: the smaller C
    logger.info("%s: C=%g chosen by %d-fold CV (%s %s)", spec.name, best, n_folds,
                spec.select_by, {c: round(s, 4) for c, s in cv_scores.items()})
    return best, cv_scores
