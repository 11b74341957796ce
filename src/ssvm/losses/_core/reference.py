"""A readable reference of the QS paper's algorithms, in plain Python: the tests' oracle.

Mohapatra, Rolínek, Jawahar, Kolmogorov, Kumar, "Efficient Optimization for Rank-based Loss
Functions" (CVPR 2018, long version §4), for any QS-suitable loss given by its discrete derivative:

* **Problem (5)** splits over the negatives (Observation 3): with the P positives sorted by
  (−score, index) into ``sp`` and the j-th negative (in that order, score s) at interleaving rank r
  (1 + the positives above it), the objective is Σ_j f_j(r_j) with

      f_j(i+1) − f_j(i) = (sp[i] − s) · 2/(PN) + d_j(i),      d_j(i) = δ_j(i+1) − δ_j(i),

  and opt_j, the largest maximiser of f_j (the tie rule of the paper's footnote 1), never decreases
  in j (Observation 4, from condition C3).
* **Algorithm 1**: sort the positives (line 1), find every opt_j by OptRanks(1, N, 1, P + 1)
  (line 2), compute the output (line 3, Observation 2 and Lemma 6).
* **Algorithm 2**, OptRanks(ℓ⁻, r⁻, ℓ⁺, r⁺): the negatives at positions ℓ⁻..r⁻ (a block of the
  partially sorted array) have their opts in [ℓ⁺, r⁺]; if ℓ⁺ = r⁺ they all get it; else MEDIAN and
  SELECT put the block's median at its place m, opt_m is found by trying every rank in [ℓ⁺, r⁺], and
  the two sides recurse with [ℓ⁺, opt_m] and [opt_m, r⁺].
* **Lemma 6**: c(negative of rank r) = 2 (P + 1 − r)/(PN), c(k-th positive) = −2 #(negatives of
  rank ≤ k)/(PN) (the coefficients of Ψ(X, R) − Ψ(X, R*)); Δ from the ± pattern (condition C1).

Nothing here is fast: MEDIAN sorts the block, SELECT builds lists.  The arithmetic of a step, of the
running comparison in :func:`best_rank` and of the coefficients is the compiled kernels' (the same
float64 operations in the same order), so the compiled QS paths must agree with this one bit for bit.
"""

import math

import numpy as np

from ..rank_losses import KIND_AP, KIND_NDCG_LOG2

__all__ = ["derivative", "best_rank", "opt_ranks", "lemma6", "pattern_loss", "qs_reference"]


def derivative(kind, table, n_pos):
    """d(i, j) = δ_j(i+1) − δ_j(i) of the loss ``(kind, table)`` (:meth:`ssvm.losses.QSLoss.kernel_spec`).

    AP: −i / (P (i+j−1)(i+j)); NDCG (log2): (D(i+j) − D(i+j−1)) · table[0] with D(m) = 1/log2(1 + m);
    any other loss: ``table[i + j]``.

    Returns
    -------
    callable
    """
    if kind == KIND_AP:
        return lambda i, j: -i / (n_pos * (float(i + j) - 1.0) * float(i + j))
    if kind == KIND_NDCG_LOG2:
        return lambda i, j: (1.0 / math.log2(i + j + 1) - 1.0 / math.log2(i + j)) * table[0]
    return lambda i, j: table[i + j]


def best_rank(step, lo, hi):
    """The largest maximiser over ranks lo..hi of f with f(k+1) − f(k) = ``step(k)``.

    The difference to the best value so far is summed step by step and reset at every new best
    (ties go to the larger rank).

    Returns
    -------
    int
    """
    best, diff = lo, 0.0
    for k in range(lo, hi):
        diff += step(k)
        if diff >= 0.0:
            best, diff = k + 1, 0.0
    return best


def opt_ranks(neg, lo, hi, left, right, opt, order_key, step):
    """Algorithm 2: the opts of the negatives ``neg[lo:hi]`` (orders lo + 1..hi once sorted), known
    to lie in [left, right], into ``opt`` (by index); ``neg`` is SELECTed in place.

    ``order_key(i)``: the (−score, index) key of negative ``i``; ``step(k, i, j)``: f_j(k+1) − f_j(k)
    of negative ``i`` at order j.
    """
    if lo >= hi:
        return
    if left == right:  # lines 2-3
        for i in neg[lo:hi]:
            opt[i] = left
        return
    block = neg[lo:hi]
    median = sorted(block, key=order_key)[len(block) // 2]  # line 5: MEDIAN
    higher = [i for i in block if order_key(i) < order_key(median)]  # line 6: SELECT
    lower = [i for i in block if order_key(i) > order_key(median)]
    neg[lo:hi] = higher + [median] + lower
    m = lo + len(higher)
    opt[median] = best_rank(lambda k: step(k, median, m + 1), left, right)  # line 7
    opt_ranks(neg, lo, m, left, opt[median], opt, order_key, step)  # line 8
    opt_ranks(neg, m + 1, hi, opt[median], right, opt, order_key, step)  # line 9


def lemma6(opt, pos_sorted, neg, n):
    """Lemma 6's coefficients and the ± pattern from the negatives' ranks ``opt`` (by index).

    Each coefficient is computed as the kernels compute it: (P + 1 − r) · inv and −#(ranks ≤ k) · inv
    with inv = 2 / (P N).

    Returns
    -------
    c : ndarray of float64, shape (n,)
    counts : ndarray of int64, shape (P + 1,)
        Negatives per interleaving rank.
    """
    n_pos, n_neg = len(pos_sorted), len(neg)
    inv = 2.0 / (n_pos * n_neg)
    c = np.zeros(n)
    counts = np.zeros(n_pos + 1, dtype=np.int64)
    for i in neg:
        counts[opt[i] - 1] += 1
        c[i] = (n_pos + 1 - opt[i]) * inv
    cum = 0
    for k, i in enumerate(pos_sorted):
        cum += int(counts[k])
        c[i] = -cum * inv
    return c, counts


def pattern_loss(kind, counts):
    """Δ of the ± pattern ``counts`` for AP (1 − the mean over positives of k / ind(k)) or NDCG with
    the log2 discount (1 − Σ D(ind(k)) / Σ_{i≤P} D(i)), positive k at ind(k) = k + #(negatives of
    rank ≤ k), summed in the order of k.

    Returns
    -------
    float
    """
    n_pos = len(counts) - 1
    before, acc = 0, 0.0
    for k in range(1, n_pos + 1):
        before += int(counts[k - 1])
        acc += k / (k + before) if kind == KIND_AP else 1.0 / math.log2(1.0 + (k + before))
    if kind == KIND_AP:
        return 1.0 - acc / n_pos
    ideal = 0.0
    for i in range(1, n_pos + 1):
        ideal += 1.0 / math.log2(1.0 + i)
    return 1.0 - acc / ideal


def qs_reference(scores, y, loss):
    """Algorithm 1 for a QS-suitable loss: ``(c, Δ)`` of the most violated ranking of one query.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
        At least one positive and one negative.
    loss : QSLoss

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
        A loss that declares ``compiled_batch`` (the built-in AP and NDCG log2) by :func:`pattern_loss`,
        any other loss by its ``value``.
    """
    scores = [float(v) for v in scores]
    pos = [i for i in range(len(scores)) if y[i]]
    neg = [i for i in range(len(scores)) if not y[i]]
    n_pos, n_neg = len(pos), len(neg)

    def order_key(i):  # (−score, index): the paper's footnote 1
        return (-scores[i], i)

    pos_sorted = sorted(pos, key=order_key)  # Algorithm 1, line 1
    sp = [scores[i] for i in pos_sorted]
    kind, table = loss.kernel_spec(n_pos, n_neg)
    d = derivative(kind, np.asarray(table, dtype=np.float64), n_pos)
    inv = 2.0 / (n_pos * n_neg)

    def step(k, i, j):  # f_j(k+1) − f_j(k) of negative i at order j
        return (sp[k - 1] - scores[i]) * inv + d(k, j)

    opt = {}
    opt_ranks(list(neg), 0, n_neg, 1, n_pos + 1, opt, order_key, step)  # Algorithm 1, line 2
    c, counts = lemma6(opt, pos_sorted, neg, len(scores))  # Algorithm 1, line 3
    builtin = loss.compiled_batch and kind in (KIND_AP, KIND_NDCG_LOG2)  # Δ is the built-in AP's or NDCG's
    return c, pattern_loss(kind, counts) if builtin else float(loss.value(counts))
