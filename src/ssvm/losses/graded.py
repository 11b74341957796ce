"""Graded NDCG, exact by threshold decomposition (docs/design.md §9).

For a query with non-negative integer grades r and gains g ("exponential": 2^r − 1, the default;
"linear": r; "binary": [r > 0]), graded NDCG decomposes exactly over the thresholds t = 1..max r:

    1 − NDCG_graded = Σ_t α_t (1 − NDCG_t),   α_t = (g(t) − g(t−1)) · IDCG_t / IDCG,

NDCG_t the binary NDCG of ``[r ≥ t]`` and IDCG_t its ideal DCG, IDCG the graded one (the graded
ideal order is ideal for every threshold at once, so IDCG = Σ_t (g(t) − g(t−1)) IDCG_t, α_t ≥ 0 and
Σ α_t = 1).  Since α does not depend on the ranking, the graded structured hinge of a query is
``H = Σ_t α_t H_t``, H_t the exact binary NDCG hinge of ``[r ≥ t]``: its oracle answers
``c = Σ_t α_t c_t``, ``delta = Σ_t α_t δ_t`` — the oracle contract, so solvers, dask blocks and
network losses need no change.  Thresholds between two consecutive distinct grades of a query split
its rows alike and are taken together; a threshold that leaves no row irrelevant adds nothing.

Here: the grades' validation, the graded oracle (:func:`graded_ndcg_oracle`, and
:func:`graded_ndcg_batch` over stacked queries: one sort per query and one certified walk per grade
level, ``_core/graded.pyx``), :func:`combine_levels` (the same sum over levels around any binary
batch function: the other NDCG oracles, the ranking by score of the direct loss) and
:func:`graded_ndcg_value` (the graded NDCG of the ranking by score, optionally cut at k).
"""

import numpy as np

from ._core.derivative import inverse_log_table
from ._core.graded import GAIN_CODES, graded_batch, graded_large_query, level_alphas
from ._score_ranking import ranked_by_score
from ._validation import check_grades
from .qs import qs_batch, qs_oracle
from .rank_losses import NDCGLoss

__all__ = ["GAINS", "check_gain", "check_grades", "graded_ndcg_oracle", "graded_ndcg_batch", "combine_levels",
           "level_weights", "graded_by_levels", "graded_ranked_by_score", "graded_ndcg_value"]

#: the gains of graded NDCG, the default first
GAINS = ("exponential", "linear", "binary")
_BATCH_MAX = 4096  # queries up to this size are sorted inside the compiled loop; larger ones by numpy
_NDCG = NDCGLoss()


def check_gain(gain):
    """``gain`` if it is one of :data:`GAINS`, else a ValueError.

    Parameters
    ----------
    gain : str

    Returns
    -------
    str
    """
    if not isinstance(gain, str) or gain not in GAINS:
        raise ValueError(f"gain must be one of {GAINS} (g(r) = 2^r − 1, r, or [r > 0]); got {gain!r}")
    return gain


def level_weights(grades, gain="exponential"):
    """The distinct grades of one query and the weight α of each level's split ``[r ≥ v]``.

    Parameters
    ----------
    grades : array-like of int, shape (n,)
        One query's non-negative integer grades.
    gain : {"exponential", "linear", "binary"}, default="exponential"

    Returns
    -------
    levels : ndarray of int64, shape (L + 1,)
        The distinct grades v_0 < ... < v_L.
    alpha : ndarray of float64, shape (L + 1,)
        α_k = (g(v_k) − g(v_{k−1})) · IDCG_k / IDCG for k ≥ 1 (α_0 = 0); they sum to 1 when the
        lowest grade has gain 0.
    """
    return level_alphas(np.ascontiguousarray(grades, dtype=np.int64), GAIN_CODES[check_gain(gain)])


def graded_ndcg_batch(scores, y, starts, ends, gain="exponential"):
    """The graded NDCG oracle on stacked queries: exactly :func:`graded_ndcg_oracle` on each.

    One packed-key sort per query (inside a compiled loop up to 4096 rows, numpy's above), then per
    grade level one pass that splits the sorted keys and one certified QS walk.  With grades in
    {0, 1} it is the binary NDCG oracle (``qs_batch``), bit for bit.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
        Stacked scores; rows outside the queries are ignored.
    y : ndarray of int64, shape (n,)
        Non-negative integer grades (:func:`check_grades`).
    starts, ends : ndarray of int64, shape (Q,)
        Query ``k`` is ``scores[starts[k]:ends[k]]``; disjoint ranges, each with two distinct grades.
    gain : {"exponential", "linear", "binary"}, default="exponential"

    Returns
    -------
    c : ndarray of float64, shape (n,)
        Each query's ``Σ_t α_t c_t`` in its rows, zero elsewhere.
    delta : ndarray of float64, shape (Q,)
        ``Σ_t α_t δ_t`` per query.
    """
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    grades = np.asarray(y)
    if grades.dtype == bool or (grades.size and int(grades.max()) <= 1):
        return qs_batch(scores, grades > 0, starts, ends, _NDCG)
    code = GAIN_CODES[check_gain(gain)]
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    grades = np.ascontiguousarray(grades, dtype=np.int64)
    sizes = ends - starts
    c = np.zeros(scores.size)
    delta = np.empty(starts.size)
    lt = inverse_log_table(int(sizes.max()) + 2)
    small = sizes <= _BATCH_MAX
    if np.all(small):
        graded_batch(scores, grades, starts, ends, code, lt, c, delta)
        return c, delta
    if np.any(small):
        delta_small = np.empty(int(np.count_nonzero(small)))
        graded_batch(scores, grades, starts[small], ends[small], code, lt, c, delta_small)
        delta[small] = delta_small
    for k in np.flatnonzero(~small):  # a large query's keys: numpy's or the radix sort (_core.sorting.sort_large)
        a, b = starts[k], ends[k]
        delta[k] = graded_large_query(scores[a:b], grades[a:b], code, lt, c[a:b])
    return c, delta


def graded_ndcg_oracle(scores, y, gain="exponential"):
    """Loss-augmented inference for graded NDCG on one query (the oracle contract).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of int64, shape (n,)
        Non-negative integer grades, at least two distinct ones.
    gain : {"exponential", "linear", "binary"}, default="exponential"

    Returns
    -------
    c : ndarray of float64, shape (n,)
        ``Σ_t α_t c_t``: ``H = delta + scores @ c`` is the graded hinge and ``c`` its subgradient.
    delta : float
        ``Σ_t α_t δ_t``, the graded 1 − NDCG of the maximiser.
    """
    if np.asarray(y).dtype == bool:  # binary relevance: the binary oracle itself
        return qs_oracle(scores, y, _NDCG)
    c, delta = graded_ndcg_batch(scores, y, np.array([0]), np.array([scores.size]), gain)
    return c, float(delta[0])


def combine_levels(binary_batch, scores, y, starts, ends, gain="exponential"):
    """``Σ_t α_t (c_t, δ_t)`` over the grade levels of every query, each level by a binary batch function.

    Parameters
    ----------
    binary_batch : callable
        ``binary_batch(scores, y_bool, starts, ends) -> (c, delta)`` over stacked queries (a binary
        NDCG oracle's batch form, the ranking by score of the direct loss, ...).
    scores : ndarray of float64, shape (n,)
    y : ndarray of int64, shape (n,)
        Non-negative integer grades.
    starts, ends : ndarray of int64, shape (Q,)
        Disjoint query ranges, each with two distinct grades.
    gain : {"exponential", "linear", "binary"}, default="exponential"

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : ndarray of float64, shape (Q,)
    """
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    grades = np.asarray(y, dtype=np.int64)
    levels = [level_weights(grades[a:b], gain) for a, b in zip(starts, ends)]
    values = np.unique(np.concatenate([v[1:] for v, _ in levels]))
    row_query = np.full(scores.size, -1, dtype=np.int64)
    for k, (a, b) in enumerate(zip(starts, ends)):
        row_query[a:b] = k
    c = np.zeros(scores.size)
    delta = np.zeros(starts.size)
    for v in values:  # ascending: every query adds its levels in the order of graded_ndcg_batch
        alpha = np.array([a[np.searchsorted(lv, v)] if v in lv[1:] else 0.0 for lv, a in levels])
        use = alpha != 0.0
        if not np.any(use):
            continue
        c_v, d_v = binary_batch(scores, grades >= v, starts[use], ends[use])
        inside = row_query >= 0
        c[inside] += alpha[row_query[inside]] * c_v[inside]
        delta[use] += alpha[use] * d_v
    return c, delta


def graded_by_levels(scores, y, gain, binary, **binary_params):
    """A binary NDCG oracle made graded: ``Σ_t α_t binary(scores, [y ≥ t], **binary_params)`` on one query.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of int64, shape (n,)
        Non-negative integer grades, at least two distinct ones.
    gain : {"exponential", "linear", "binary"}
    binary : callable
        ``binary(scores, y_bool, **binary_params) -> (c, delta)``, a binary NDCG oracle
        (``"brute"``, ``"chakrabarti"``, ...).
    **binary_params
        Its keyword arguments (the loss object).

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
    """
    if np.asarray(y).dtype == bool:  # binary relevance: the binary oracle itself
        return binary(scores, y, **binary_params)

    def per_query(s, yb, starts, ends):
        c_v = np.zeros(s.size)
        d_v = np.empty(starts.size)
        for k, (a, b) in enumerate(zip(starts, ends)):
            c_v[a:b], d_v[k] = binary(s[a:b], yb[a:b], **binary_params)
        return c_v, d_v

    c, delta = combine_levels(per_query, scores, y, np.array([0]), np.array([scores.size]), gain)
    return c, float(delta[0])


def graded_ranked_by_score(scores, y, starts, ends, loss, gain="exponential"):
    """``(c, delta)`` of R_w, the ranking by score, for NDCG with grades: ``Σ_t α_t`` of the binary
    ones per level (Ψ_t(R_w) − Ψ_t(R*) and the graded 1 − NDCG of R_w).  Boolean ``y`` (binary
    relevance) is :func:`~ssvm.losses._score_ranking.ranked_by_score` itself.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of int64 or bool, shape (n,)
    starts, ends : ndarray of int64, shape (Q,)
    loss : NDCGLoss
    gain : {"exponential", "linear", "binary"}, default="exponential"

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : ndarray of float64, shape (Q,)
    """
    if np.asarray(y).dtype == bool:
        return ranked_by_score(scores, y, starts, ends, loss)
    return combine_levels(lambda s, yb, a, b: ranked_by_score(s, yb, a, b, loss), scores, y, starts, ends, gain)


def graded_ndcg_value(scores, y, gain="exponential", k=None):
    """Graded NDCG (at ``k``) of the ranking of one query by ``scores`` (ties by index).

    ``DCG = Σ_i g(r_(i)) / log2(1 + i)`` over the positions i = 1.. (up to k) of the ranking,
    divided by the ideal DCG of the grades sorted in decreasing order.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : array-like of shape (n,)
        Non-negative grades (integers for the decomposition; any non-negative numbers here).
    gain : {"exponential", "linear", "binary"}, default="exponential"
    k : int, optional
        Only the top ``k`` positions count; None: all.

    Returns
    -------
    float
        NaN when the ideal DCG is 0 (no row with a positive gain).
    """
    gains = _gains(np.asarray(y, dtype=np.float64), check_gain(gain))
    n = scores.shape[0] if k is None else min(int(k), scores.shape[0])
    discount = 1.0 / np.log2(np.arange(2, n + 2))
    ranked = gains[np.argsort(-np.asarray(scores), kind="stable")[:n]]
    ideal = np.sort(gains)[::-1][:n] @ discount
    return float(ranked @ discount / ideal) if ideal > 0 else float("nan")


def _gains(grades, gain):
    if gain == "exponential":
        return np.exp2(grades) - 1.0
    if gain == "linear":
        return grades
    return (grades > 0).astype(np.float64)
