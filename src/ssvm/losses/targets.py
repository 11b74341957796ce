"""Graded or binary: the one place that decides what relevance a fit reads and which oracle reads it.

:class:`~ssvm.RankSVM`, :class:`~ssvm.RankSVMCV` (per fold), :func:`ssvm.losses.rank_hinge`,
:func:`ssvm.losses.direct_loss_gradient`, :func:`ssvm.losses.ranking_loss` and
:func:`ssvm.losses.loss_augmented_inference` all call :func:`fit_targets`; none of them looks at a
loss's gains or an oracle's gain to choose for itself.
"""

import numpy as np

from ssvm._queries import check_relevance

from ._validation import check_grades, check_query_target, scores_and_labels
from .oracle import as_oracle

__all__ = ["fit_targets", "validate_scores_target"]


def fit_targets(oracle, y, n_samples=None, name="y"):
    """The target a fit reads and the oracle that reads it.

    The rule: an oracle that does not read grades (:attr:`Oracle.graded <ssvm.losses.Oracle.graded>`
    false) reads binary relevance ``y > 0``. One that reads grades reads the non-negative integer
    grades; when they are all 0 or 1 the target is binary relevance instead, and the oracle its
    :attr:`~ssvm.losses.Oracle.binary` form where it has one (graded NDCG on 0/1 grades is binary
    NDCG, bit for bit, and the binary oracle has the binary compiled forms), else itself (the
    pairwise losses read 0/1 relevance as two grades).

    Parameters
    ----------
    oracle : Oracle
        From :func:`ssvm.losses.get_oracle` (or a plain callable, binary).
    y : array-like of shape (n_samples,) or None
        Relevance: bool, or numbers (grades for a graded oracle). None: the targets are binary
        already (the classes of a classification, ``y > 0`` on dask blocks): the oracle only.
    n_samples : int, optional
        The expected length of ``y`` (default: its own).
    name : str, default="y"
        The argument's name, for messages.

    Returns
    -------
    oracle : Oracle
    target : ndarray of bool or of int64, shape (n_samples,), or None
        Binary relevance, or the grades (two distinct ones above 1 at least somewhere); None when
        ``y`` is None.

    Raises
    ------
    ValueError
        As :func:`ssvm._queries.check_relevance` or, for a graded oracle,
        :func:`ssvm.losses.graded.check_grades`.
    """
    oracle = as_oracle(oracle)
    binary = oracle.binary or oracle
    if y is None:
        return binary, None
    if n_samples is None:
        n_samples = len(y)
    if not oracle.graded:
        return oracle, check_relevance(y, n_samples, name=name)
    grades = check_grades(y, n_samples, name=name, gain=oracle.gain)
    if grades.max(initial=0) > 1:
        return oracle, grades
    return binary, grades > 0


def validate_scores_target(scores, y, oracle):
    """One query's checked scores, and the target and oracle :func:`fit_targets` decides for it.

    Parameters
    ----------
    scores, y : array-like of shape (n,)
        As in :func:`ssvm.losses.loss_augmented_inference`.
    oracle : Oracle

    Returns
    -------
    scores : ndarray of float64, shape (n,)
    target : ndarray of bool or int64, shape (n,)
        With a positive and a negative (bool), or two distinct grades.
    oracle : Oracle

    Raises
    ------
    ValueError
        On bad scores or labels, or a query with nothing to rank.
    """
    s, lab = scores_and_labels(scores, y)
    reads_grades = as_oracle(oracle).graded  # then one grade is what is refused, 0/1 grades or not
    oracle, target = fit_targets(oracle, lab, lab.shape[0])
    return s, check_query_target(np.ascontiguousarray(target), reads_grades), oracle
