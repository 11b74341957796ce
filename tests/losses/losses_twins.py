"""Slow, obviously-right twins for the oracle tests: rankings built explicitly, losses and joint
features computed from their textbook definitions, exhaustive search over permutations."""

from itertools import permutations

import numpy as np


def random_query(rng, n_max=9):
    """A tiny query with ties, one-positive / one-negative cases and scales from 1e-6 to 1e6."""
    n = int(rng.integers(2, n_max + 1))
    kind = rng.integers(6)
    if kind == 0:
        scores = np.zeros(n)  # all equal
    elif kind == 1:
        scores = rng.integers(-2, 3, n).astype(float)  # many ties
    elif kind == 2:
        scores = rng.integers(-4, 5, n) / 4.0  # dyadic ties, exact arithmetic
    else:
        scores = rng.normal(size=n)
    scores = scores * 10.0 ** rng.uniform(-6, 6) if kind != 2 else scores
    layout = rng.integers(4)
    if layout == 0:
        y = np.zeros(n, bool)
        y[rng.integers(n)] = True  # one positive
    elif layout == 1:
        y = np.ones(n, bool)
        y[rng.integers(n)] = False  # one negative
    else:
        y = rng.random(n) < rng.uniform(0.2, 0.8)
        y[rng.integers(n)] = True
        if y.all():
            y[(int(np.flatnonzero(y)[0]) + 1) % n] = False
    return scores, y


def ap_loss(order, y):
    """1 − AP of the ranking ``order`` (sample indices, best first)."""
    rel = y[order]
    hits = np.cumsum(rel)
    prec = hits / np.arange(1, len(order) + 1)
    return 1.0 - prec[rel].mean()


def ndcg_loss(order, y, discount=lambda i: 1.0 / np.log2(1.0 + i)):
    """1 − NDCG of ``order`` for binary relevance."""
    rel = y[order]
    pos = np.flatnonzero(rel) + 1
    ideal = discount(np.arange(1, rel.sum() + 1)).sum()
    return 1.0 - discount(pos).sum() / ideal


def psi_coefficients(order, y):
    """Coefficients of Ψ(X, R) − Ψ(X, R*) from the pairwise definition (eq. 1)."""
    n = len(order)
    where = np.empty(n, int)
    where[order] = np.arange(n)
    pos = np.flatnonzero(y)
    neg = np.flatnonzero(~y)
    norm = pos.size * neg.size
    c = np.zeros(n)
    for x in pos:
        for z in neg:
            r = 1.0 if where[x] < where[z] else -1.0
            c[x] += (r - 1.0) / norm  # R* has +1 for every (positive, negative) pair
            c[z] -= (r - 1.0) / norm
    return c


def ranking_from_c(scores, y, c):
    """The ranking encoded by a rank-loss oracle's c (Lemma 6): negatives' ranks from their c."""
    pos = np.flatnonzero(y)
    neg = np.flatnonzero(~y)
    n_pos, n_neg = pos.size, neg.size
    rank = n_pos + 1 - c[neg] * n_pos * n_neg / 2.0
    r_int = np.rint(rank).astype(int)
    assert np.allclose(rank, r_int, atol=1e-6), "c of a negative is not 2(P+1−r)/(PN)"
    assert r_int.min() >= 1 and r_int.max() <= n_pos + 1
    pos = pos[np.argsort(-scores[pos], kind="stable")]
    o = np.argsort(-scores[neg], kind="stable")
    neg, r_int = neg[o], r_int[o]
    assert np.all(np.diff(r_int) >= 0), "ranks must follow the negatives' score order"
    order = []
    t = 0
    for k in range(n_pos + 1):
        while t < n_neg and r_int[t] == k + 1:
            order.append(neg[t])
            t += 1
        if k < n_pos:
            order.append(pos[k])
    return np.array(order)


def permutation_values(scores, y, loss_fn):
    """Δ + s·c over every permutation (n ≤ 7)."""
    n = scores.size
    assert n <= 7
    vals = []
    for perm in permutations(range(n)):
        order = np.array(perm)
        vals.append(loss_fn(order, y) + scores @ psi_coefficients(order, y))
    return np.array(vals)
