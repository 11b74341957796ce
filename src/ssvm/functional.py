"""Rank losses as functions of scores (the functional layer): the structured hinge and Song et
al.'s direct-loss gradient, for a network's loss layer or any framework that hands over a score
vector.

Both run on the score-space half of the problem, :class:`~ssvm.problem.ScoreHinge`: the queries
(from ``qid``) are stacked once and an :class:`~ssvm.losses.Oracle` runs over all of them through
its batch form. For the hinge that is the loss-augmented oracle of the registry; for the direct
loss it is :func:`ssvm.losses.direct.direct_loss_oracle`, whose per-query answer is the direct-loss
gradient with Δ(R*, R_w) in place of ``delta``. This module sits above :mod:`ssvm.problem` (which
sits above :mod:`ssvm.losses`); :mod:`ssvm.losses` re-exports :func:`rank_hinge` and
:func:`direct_loss_gradient`, where users import them.

Queries without a positive or without a negative row are skipped (they contribute no gradient,
as in the estimators, but without a warning: mini-batches meet them all the time); the value is
the mean over the queries left, and a ValueError says so when none is left.
"""

import numpy as np

from ssvm._queries import informative_queries, resolve_queries
from ssvm.losses.direct import direct_loss_oracle
from ssvm.losses.registry import get_oracle
from ssvm.losses.targets import fit_targets
from ssvm.problem.score_space import ScoreHinge

__all__ = ["rank_hinge", "direct_loss_gradient", "evaluate_hinge", "evaluate_direct"]


def _check_scores(scores):
    s = np.asarray(scores)
    if s.ndim != 1:
        hint = " (for a column of scores use scores[:, 0])" if s.ndim == 2 and s.shape[1] == 1 else ""
        raise ValueError(f"scores must be 1-D, one score per row; got shape {s.shape}{hint}")
    if s.dtype == bool or s.dtype.kind not in "fiu":
        raise ValueError(f"scores must be real numbers, got dtype {s.dtype}")
    s64 = np.ascontiguousarray(s, dtype=np.float64)
    n_bad = s64.size - int(np.count_nonzero(np.isfinite(s64)))
    if n_bad:
        raise ValueError(f"scores contain {n_bad} NaN or infinite value(s); check the network's output "
                         "(a diverged training step, a log of 0, ...)")
    return s64, (s.dtype if s.dtype.kind == "f" else np.dtype(np.float64))


def _score_hinge(scores, y, qid, oracle):
    """Validated float64 scores, the scores' float dtype and the :class:`ScoreHinge` of the
    queries that have a positive and a negative (two distinct grades), with the target and oracle
    :func:`~ssvm.losses.targets.fit_targets` decides."""
    s, dtype = _check_scores(scores)
    oracle, target = fit_targets(oracle, y, s.shape[0])
    if s.shape[0] == 0:
        raise ValueError("scores is empty")
    queries = informative_queries(resolve_queries(s.shape[0], qid=qid, rows="scores"), target, warn=False)
    return s, dtype, ScoreHinge(target, queries, oracle, check_input=False)


def evaluate_hinge(oracle, scores, y, qid=None):
    """Mean structured hinge and its gradient for a prepared oracle (:func:`rank_hinge`'s work).

    Parameters
    ----------
    oracle : Oracle
        From :func:`ssvm.losses.get_oracle`.
    scores, y, qid
        As in :func:`rank_hinge`.

    Returns
    -------
    value : float
    grad : ndarray of shape (n,)
    """
    s, dtype, hinge = _score_hinge(scores, y, qid, oracle)
    value, c, _ = hinge(hinge.stack(s))
    return value, hinge.unstack(c).astype(dtype, copy=False)


def evaluate_direct(oracle, scores, y, qid=None):
    """Task loss and direct-loss gradient for an oracle of :func:`~ssvm.losses.direct.direct_loss_oracle`.

    Parameters
    ----------
    oracle : Oracle
    scores, y, qid
        As in :func:`direct_loss_gradient`.

    Returns
    -------
    task_loss : float
    grad : ndarray of shape (n,)
    """
    s, dtype, hinge = _score_hinge(scores, y, qid, oracle)
    c, delta = hinge.terms(hinge.stack(s))
    grad = hinge.unstack(c) / hinge.n_queries
    return float(delta.mean()), grad.astype(dtype, copy=False)


def rank_hinge(scores, y, qid=None, loss="ap", oracle="auto", **loss_params):
    """Mean structured hinge over queries and its exact subgradient with respect to the scores.

    For each query q with scores s_q, ``H_q = max_R Δ(R*, R) + s_q·(Ψ(R) − Ψ(R*)) = delta_q + s_q·c_q``
    (the oracles' contract); the value is ``(1/Q) Σ_q H_q`` and the gradient ``c / Q``.

    Parameters
    ----------
    scores : array-like of shape (n,)
        Real, finite scores (a network's outputs), any float or integer dtype.
    y : array-like of shape (n,)
        Relevance: bool, or numbers of which those > 0 are relevant (0/1, ±1 or graded labels).
        For ``loss="ndcg"`` with a graded ``gain`` (the default): non-negative integer grades,
        used as grades (AP, precision@k and 0-1 keep the ``y > 0`` rule).
    qid : array-like of shape (n,), optional
        Query id of each row (rows of a query need not be consecutive); by default all rows form one
        query. Queries without a relevant or without an irrelevant row are skipped (graded NDCG:
        queries whose grades are all equal).
    loss : str or QSLoss, default="ap"
        ``"ap"``, ``"ndcg"``, ``"zero_one"``, ``"precision_at_k"`` or a QS loss object.
    oracle : str, default="auto"
        Loss-augmented inference (see :func:`ssvm.losses.supported_oracles`); every exact oracle
        gives the same value and gradient.
    **loss_params
        ``k`` for ``"precision_at_k"``; ``gain`` for ``"ndcg"``: ``"exponential"`` (2^r − 1,
        default), ``"linear"`` (r) or ``"binary"`` ([r > 0]) — the graded hinge
        ``Σ_t α_t H_t`` over the grade thresholds (docs/design.md §9); with 0/1 labels all three are
        the binary NDCG hinge, bit for bit.

    Returns
    -------
    value : float
        Mean hinge over the queries that have a relevant and an irrelevant row.
    grad : ndarray of shape (n,)
        ∂value/∂scores where the hinge is differentiable (a subgradient everywhere), zero on the
        rows of skipped queries; float32 for float32 scores, float64 otherwise.

    Raises
    ------
    ValueError
        On NaN or infinite scores, shapes that do not match, an unknown loss or oracle, or when no
        query has both a relevant and an irrelevant row.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvm.losses import rank_hinge
    >>> value, grad = rank_hinge(np.array([2.0, 1.0, 0.5]), np.array([1, 0, 1]))
    >>> round(value, 4), grad.tolist()
    (0.6667, [0.0, 1.0, -1.0])
    """
    return evaluate_hinge(get_oracle(loss, oracle, **loss_params), scores, y, qid)


def direct_loss_gradient(scores, y, qid=None, loss="ap", epsilon=0.1, direction="positive", **loss_params):
    """Task loss of the ranking by score and Song et al.'s direct-loss gradient (ICML 2016, eqs. 2–3).

    With F(R) = s·Ψ(R), R_w = argmax_R F(R) (the ranking by score, ties by index) and
    R_dir = argmax_R F(R) ± εΔ(R*, R), the gradient of the expected task loss is approximated by
    ``± (1/ε) [Ψ(R_dir) − Ψ(R_w)]`` in score space, averaged over queries.

    Parameters
    ----------
    scores : array-like of shape (n,)
        Real, finite scores.
    y : array-like of shape (n,)
        Relevance: bool, or numbers of which those > 0 are relevant.
    qid : array-like of shape (n,), optional
        Query id of each row; by default one query. Queries without a relevant or without an
        irrelevant row are skipped.
    loss : {"ap", "ndcg", "zero_one"} or QSLoss, default="ap"
        Task loss Δ (``ssvm.losses.loss_entry(loss).directions`` lists its directions). ``"ndcg"``
        and loss objects have no negative direction (the loss-diminished problem is not QS-suitable
        and has no dynamic program here). With grades and a graded ``gain`` (the default for
        ``"ndcg"``), by linearity the positive gradient is ``Σ_t α_t (1/ε) [Ψ_t(R_dir,t) − Ψ_t(R_w)]``
        over the grade thresholds (the perceptron's ``Σ_t α_t [Ψ_t(R_w) − Ψ_t(R*)]``), and the
        task loss the graded 1 − NDCG.
    epsilon : float, default=0.1
        ε > 0; smaller is closer to the true gradient of the (smoothed) expected loss and noisier.
    direction : {"positive", "negative", "perceptron"}, default="positive"
        ``"positive"``: R_dir maximises F + εΔ (away from worse; the loss-augmented oracle at s/ε,
        QS for AP and NDCG). ``"negative"``: F − εΔ (towards better; the dynamic program of Song et
        al. for AP, a per-row rule for 0-1). ``"perceptron"``: the gradient Ψ(R_w) − Ψ(R*) of the
        perceptron loss F(R_w) − F(R*) (Song et al.'s "per-AP"; ``epsilon`` unused).
    **loss_params
        ``gain`` for ``"ndcg"`` (see :func:`rank_hinge`).

    Returns
    -------
    task_loss : float
        Mean Δ(R*, R_w) over the queries used: 1 − AP, 1 − NDCG or the error rate of ``scores > 0``.
    grad : ndarray of shape (n,)
        The direct-loss gradient with respect to the scores (zero on skipped queries' rows); float32
        for float32 scores, float64 otherwise.

    Raises
    ------
    ValueError
        On NaN or infinite scores (or scores / ε overflowing), shapes that do not match, ε ≤ 0, an
        unknown loss or direction or one without that direction, or when no query has both a
        relevant and an irrelevant row.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvm.losses import direct_loss_gradient
    >>> scores, y = np.array([0.4, 0.3, 0.2]), np.array([1, 0, 1])
    >>> task_loss, grad = direct_loss_gradient(scores, y, epsilon=1.0)
    >>> round(task_loss, 4), grad.tolist()  # 1 − AP of (+ − +); R_dir puts the negative first
    (0.1667, [-1.0, 1.0, 0.0])
    >>> direct_loss_gradient(scores, y, epsilon=1.0, direction="negative")[1].tolist()  # ... or last
    [0.0, 1.0, -1.0]
    """
    return evaluate_direct(direct_loss_oracle(loss, epsilon, direction, **loss_params), scores, y, qid)
