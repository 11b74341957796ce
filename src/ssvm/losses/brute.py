"""Exhaustive oracles for tests: enumerate every ± pattern (or labelling / top-k set).

They evaluate Ψ(X, R) from the pairwise definition (eq. 1), not from Lemma 6, and pick the best
pattern; among patterns within a relative 1e-12 of the best they take the one whose negatives sit
lowest (largest interleaving ranks, compared from the last negative up) — the tie rule of every
fast oracle.  Exponential: refuse more than ``MAX_BRUTE_SAMPLES`` samples.
"""

from itertools import combinations

import numpy as np

from .classification import ground_truth_topk_weights

__all__ = ["MAX_BRUTE_SAMPLES", "MAX_BRUTE_PAIRS", "rank_brute_oracle", "zero_one_brute_oracle",
           "precision_at_k_brute_oracle", "recall_at_k_brute_oracle", "pairwise_brute_oracle", "f1_brute_oracle",
           "prbep_brute_oracle", "ndcg_at_k_brute_oracle", "rank_patterns"]

MAX_BRUTE_SAMPLES = 16
MAX_BRUTE_PAIRS = 16
_REL_TIE = 1e-12


def _check_size(n):
    if n > MAX_BRUTE_SAMPLES:
        raise ValueError(f"the brute-force oracle is exponential; got {n} samples, at most "
                         f"{MAX_BRUTE_SAMPLES} allowed")


def rank_patterns(n_pos, n_neg):
    """All ± patterns as positions of the sorted positives and negatives.

    Returns
    -------
    pos_at : ndarray of int, shape (M, P)
        0-based positions of the k-th positive in each pattern.
    neg_at : ndarray of int, shape (M, N)
        0-based positions of the j-th negative.
    """
    n = n_pos + n_neg
    pos_at = np.array(list(combinations(range(n), n_pos)), dtype=np.int64).reshape(-1, n_pos)
    is_pos = np.zeros((pos_at.shape[0], n), dtype=bool)
    np.put_along_axis(is_pos, pos_at, True, axis=1)
    neg_at = np.nonzero(~is_pos)[1].reshape(-1, n_neg)
    return pos_at, neg_at


def _rank_objective(scores, y, value_of_counts):
    """Per pattern: (c matrix in original order, loss, negative ranks)."""
    n = scores.size
    pos = np.flatnonzero(y)
    neg = np.flatnonzero(~y)
    pos = pos[np.argsort(-scores[pos], kind="stable")]
    neg = neg[np.argsort(-scores[neg], kind="stable")]
    n_pos, n_neg = pos.size, neg.size
    pos_at, neg_at = rank_patterns(n_pos, n_neg)
    above = pos_at[:, :, None] < neg_at[:, None, :]  # R_xy = +1 where the positive is above
    r_xy = np.where(above, 1.0, -1.0)
    norm = n_pos * n_neg
    c = np.zeros((pos_at.shape[0], n))
    c[:, pos] = r_xy.sum(axis=2) / norm - 1.0 / n_pos  # Ψ(R) − Ψ(R*) coefficients
    c[:, neg] = -r_xy.sum(axis=1) / norm + 1.0 / n_neg
    ranks = 1 + above.sum(axis=1)  # interleaving rank: 1 + #positives above the negative
    counts = np.zeros((pos_at.shape[0], n_pos + 1), dtype=np.int64)
    for r in range(1, n_pos + 2):
        counts[:, r - 1] = (ranks == r).sum(axis=1)
    loss = np.asarray(value_of_counts(counts), dtype=np.float64)
    return c, loss, ranks


def _pick(values, prefer):
    """Index of the best value; near-ties (relative 1e-12) resolved by lexsort key ``prefer``."""
    best = values.max()
    cand = np.flatnonzero(values >= best - _REL_TIE * max(1.0, abs(best)))
    if cand.size == 1:
        return int(cand[0])
    keys = prefer[cand]
    order = np.lexsort(keys.T[::-1]) if keys.ndim == 2 else np.argsort(keys, kind="stable")
    return int(cand[order[-1]])


def rank_brute_oracle(scores, y, loss, sigma_eps=1.0):
    """Exhaustive oracle for a ranking loss: max over patterns of s·c + σε·Δ.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    loss : QSLoss
        Provides ``value(counts)``.
    sigma_eps : float, default=1.0
        Weight of the loss (−ε for the loss-diminished direction).

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
    """
    _check_size(scores.size)
    c, delta, ranks = _rank_objective(scores, y, loss.value)
    values = c @ scores + sigma_eps * delta
    # prefer larger ranks of the last negative first, then the one before, ...
    i = _pick(values, ranks[:, ::-1])
    return c[i], float(delta[i])


def zero_one_brute_oracle(scores, y):
    """Exhaustive 0-1 oracle over all 2ⁿ labellings ŷ (ties: fewest flips).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
    """
    n = scores.size
    _check_size(n)
    ypm = np.where(y, 1.0, -1.0)
    flips = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(bool)
    yhat = np.where(flips, -ypm, ypm)
    c = (yhat - ypm) / (2.0 * n)
    delta = flips.sum(axis=1) / n
    values = delta + c @ scores
    i = _pick(values, -flips.sum(axis=1))
    return c[i], float(delta[i])


def precision_at_k_brute_oracle(scores, y, k=10):
    """Exhaustive precision@k oracle over all top-k sets (ties: fewest negatives, then by index).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    k : int, default=10
        Clipped to n.

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
    """
    n = scores.size
    _check_size(n)
    k = min(int(k), n)
    sets = np.array(list(combinations(range(n), k)), dtype=np.int64)
    t = np.zeros((sets.shape[0], n))
    np.put_along_axis(t, sets, 1.0, axis=1)
    n_neg_in = (t[:, ~y]).sum(axis=1)
    delta = n_neg_in / k
    c = (t - ground_truth_topk_weights(y, k)) / k
    values = delta + c @ scores
    # combinations come in lexicographic order: prefer fewer negatives, then the earliest set
    prefer = np.stack([-n_neg_in, -np.arange(sets.shape[0])], axis=1)
    i = _pick(values, prefer)
    return c[i], float(delta[i])


def recall_at_k_brute_oracle(scores, y, k=10):
    """Exhaustive recall@k oracle over all top-k sets (ties: fewest negatives, then by index).

    From the definitions, not from precision@k's: Δ = 1 − (positives in the set) / min(P, k), Ψ = the
    set's indicator / min(P, k), and Ψ(R*) the average indicator of the sets with Δ = 0, enumerated.

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    k : int, default=10
        Clipped to n.

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
    """
    n = scores.size
    _check_size(n)
    k = min(int(k), n)
    sets = np.array(list(combinations(range(n), k)), dtype=np.int64)
    t = np.zeros((sets.shape[0], n))
    np.put_along_axis(t, sets, 1.0, axis=1)
    found = t[:, y].sum(axis=1)
    norm = min(int(np.count_nonzero(y)), k)
    delta = 1.0 - found / norm
    truth = t[found == norm].mean(axis=0)
    c = (t - truth) / norm
    values = delta + c @ scores
    prefer = np.stack([found, -np.arange(sets.shape[0])], axis=1)
    i = _pick(values, prefer)
    return c[i], float(delta[i])


def pairwise_brute_oracle(scores, y, normalise=False):
    """Exhaustive pairwise (SVM^rank) oracle over every labelling of the pairs r_i > r_j as in order or
    swapped (ties: fewest swapped pairs).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of int64 or bool, shape (n,)
        Relevance grades.
    normalise : bool, default=False
        Divide Δ and c by the number of pairs (``"roc_auc"``).

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
    """
    g = np.asarray(y, dtype=np.int64)
    pairs = [(i, j) for i in range(g.size) for j in range(g.size) if g[i] > g[j]]
    if len(pairs) > MAX_BRUTE_PAIRS:
        raise ValueError(f"the brute-force oracle is exponential; got {len(pairs)} pairs, at most "
                         f"{MAX_BRUTE_PAIRS} allowed")
    m = len(pairs)
    swapped = ((np.arange(2 ** m)[:, None] >> np.arange(m)) & 1).astype(bool)
    c = np.zeros((2 ** m, g.size))
    for t, (i, j) in enumerate(pairs):  # a swapped pair: Ψ(ȳ) − Ψ(y*) = x_j − x_i
        c[swapped[:, t], i] -= 1.0
        c[swapped[:, t], j] += 1.0
    delta = swapped.sum(axis=1).astype(np.float64)
    if normalise and m:
        c /= m
        delta /= m
    i = _pick(delta + c @ np.asarray(scores, dtype=np.float64), -swapped.sum(axis=1))
    return c[i], float(delta[i])


def _labelling_brute(scores, y, loss_of_table, valid):
    n = scores.size
    _check_size(n)
    ypm = np.where(y, 1.0, -1.0)
    plus = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(bool)  # ȳ_i = +1
    a = (plus & y).sum(axis=1)
    b = (plus & ~y).sum(axis=1)
    keep = valid(a, b)
    plus, a, b = plus[keep], a[keep], b[keep]
    c = (np.where(plus, 1.0, -1.0) - ypm) / (2.0 * n)
    delta = loss_of_table(a, b)
    flips = (plus != y).sum(axis=1)
    i = _pick(delta + c @ scores, -flips)
    return c[i], float(delta[i])


def f1_brute_oracle(scores, y):
    """Exhaustive 1 − F1 oracle over all 2ⁿ labellings (ties: fewest flips; F1 = 0 without a true positive).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
    """
    n_pos = int(np.count_nonzero(y))
    return _labelling_brute(scores, y, lambda a, b: np.where(a > 0, 1.0 - 2.0 * a / np.maximum(n_pos + a + b, 1), 1.0),
                            lambda a, b: np.ones(a.shape, bool))


def prbep_brute_oracle(scores, y):
    """Exhaustive 1 − PRBEP oracle over the labellings with as many +1 as positives (ties: fewest flips).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
    """
    n_pos = int(np.count_nonzero(y))
    return _labelling_brute(scores, y, lambda a, b: 1.0 - a / n_pos, lambda a, b: a + b == n_pos)


def ndcg_at_k_brute_oracle(scores, y, k=10):
    """Exhaustive binary 1 − NDCG@k oracle over every ± pattern (:func:`rank_brute_oracle`'s tie rule).

    Parameters
    ----------
    scores : ndarray of float64, shape (n,)
    y : ndarray of bool, shape (n,)
    k : int, default=10

    Returns
    -------
    c : ndarray of float64, shape (n,)
    delta : float
    """
    from .ndcg_at_k import NDCGAtK  # NDCG@k's value from a pattern

    return rank_brute_oracle(scores, y, NDCGAtK(k))
