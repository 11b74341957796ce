"""Slow, obviously-correct references for the problem and solver tests (not a test module).

- ``zero_one_oracle``: the 0-1 (binary SVM) hinge, straight from docs/design.md §1.
- ``brute_ap_oracle``: AP loss-augmented inference by enumerating every ranking (n ≤ 7).
- ``ap_constraints``: every (Δ, Ψ(R) − Ψ(R*)) of a query, built from explicit pairwise feature
  differences — for the full primal QP solved directly with cvxpy.
- data: breast cancer (standardised) and the LETOR sample with its queries.
"""

import itertools
from functools import lru_cache

import numpy as np

from ssvm.datasets.samples import DATA_DIR

LETOR = DATA_DIR / "letor_sample"


def zero_one_oracle(scores, y):
    """0-1 hinge: c_i = −y_i/n where 1 − y_i s_i > 0 (y in ±1), delta = #violations / n."""
    ys = np.where(y, 1.0, -1.0)
    n = scores.size
    viol = 1.0 - ys * scores > 0
    return np.where(viol, -ys / n, 0.0), viol.sum() / n


def ap_loss_of_order(order, y):
    """1 − AP of the ranking listing samples ``order`` from the top."""
    rel = y[np.asarray(order)]
    hits = np.cumsum(rel)
    pos = np.flatnonzero(rel) + 1
    return 1.0 - np.mean(hits[rel] / pos)


def pair_matrix(order, y):
    """R_xy = +1 if positive x is ranked above negative y, −1 otherwise (P × N)."""
    rank = np.empty(len(order), dtype=int)
    rank[np.asarray(order)] = np.arange(len(order))
    P, N = np.flatnonzero(y), np.flatnonzero(~y)
    return np.where(rank[P][:, None] < rank[N][None, :], 1.0, -1.0)


@lru_cache(maxsize=64)
def _rankings(y_key):
    """Distinct (Δ, c) over all rankings of a query with relevance pattern ``y_key``."""
    y = np.array(y_key, dtype=bool)
    P, N = np.flatnonzero(y), np.flatnonzero(~y)
    p, nn = P.size, N.size
    seen = {}
    for order in itertools.permutations(range(y.size)):
        R = pair_matrix(order, y)
        c = np.zeros(y.size)
        c[P] = R.sum(axis=1) / (p * nn) - 1.0 / p
        c[N] = -R.sum(axis=0) / (p * nn) + 1.0 / nn
        key = tuple(np.round(c, 12))
        seen.setdefault(key, (ap_loss_of_order(order, y), c))
    deltas = np.array([d for d, _ in seen.values()])
    cs = np.array([c for _, c in seen.values()])
    return deltas, cs


def brute_ap_oracle(scores, y):
    """AP loss-augmented inference by enumeration: argmax over rankings of Δ + scores·c."""
    if y.size > 7:
        raise ValueError("brute force only for queries of at most 7 samples")
    deltas, cs = _rankings(tuple(bool(v) for v in y))
    values = deltas + cs @ scores
    k = int(np.argmax(values))
    return cs[k].copy(), float(deltas[k])


def ap_constraints(Xq, y):
    """All (Δ(R), Ψ(R) − Ψ(R*)) of a query, Ψ as the explicit pairwise sum of docs/design.md §1."""
    P, N = np.flatnonzero(y), np.flatnonzero(~y)
    diff = Xq[P][:, None, :] - Xq[N][None, :, :]  # ψ(x) − ψ(y)
    scale = 1.0 / (P.size * N.size)
    psi_star = scale * diff.sum(axis=(0, 1))
    out = {}
    for order in itertools.permutations(range(y.size)):
        R = pair_matrix(order, y)
        psi = scale * np.einsum("pn,pnd->d", R, diff)
        key = tuple(np.round(R.ravel(), 0))
        out.setdefault(key, (ap_loss_of_order(order, y), psi - psi_star))
    return [v for v in out.values()]


def tiny_ranking_problem(seed, n_queries=2, d=3, sizes=(5, 6)):
    """Random queries of at most 7 samples with a positive and a negative each."""
    rng = np.random.default_rng(seed)
    sizes = [sizes[k % len(sizes)] for k in range(n_queries)]
    n = sum(sizes)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 2.0, size=d)
    y = np.zeros(n, dtype=bool)
    queries, start = [], 0
    for m in sizes:
        q = np.arange(start, start + m)
        n_pos = rng.integers(1, m)
        y[rng.choice(q, n_pos, replace=False)] = True
        queries.append(q)
        start += m
    return X, y, queries


def breast_cancer():
    """Standardised breast cancer features and boolean labels."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y.astype(bool)


def letor(max_queries=None):
    """LETOR sample (CSR features, relevance > 0, queries with a positive and a negative)."""
    from sklearn.datasets import load_svmlight_file

    X, rel = load_svmlight_file(str(LETOR / "rank.train.gz"))  # sklearn's reader, not ssvm's
    sizes = np.loadtxt(LETOR / "rank.train.query", dtype=np.int64)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    y = rel > 0
    queries = [np.arange(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
    queries = [q for q in queries if 0 < y[q].sum() < q.size]
    if max_queries is not None:
        queries = queries[:max_queries]
    return X.tocsr(), y, queries
