"""Slow, obviously-right twins for the label-ranking tests: every label set enumerated."""

from itertools import combinations

import numpy as np


def random_star(rng, L_max=7):
    """A tiny c-star instance: unary scores ``a`` (L,), symmetric pairwise ``P`` (L, L) on the
    star of a random core, with ties (integer and dyadic values) and scales from 1e-6 to 1e6."""
    L = int(rng.integers(1, L_max + 1))
    C = int(rng.integers(0, L + 1))
    core = rng.permutation(L)[:C]
    kind = rng.integers(4)
    if kind == 0:
        a, p = np.zeros(L), np.zeros((L, L))  # everything tied
    elif kind == 1:
        a, p = rng.integers(-2, 3, L).astype(float), rng.integers(-2, 3, (L, L)).astype(float)
    elif kind == 2:
        a, p = rng.integers(-4, 5, L) / 4.0, rng.integers(-4, 5, (L, L)) / 4.0
    else:
        scale = 10.0 ** rng.uniform(-6, 6)
        a, p = scale * rng.standard_normal(L), scale * rng.standard_normal((L, L))
    P = np.zeros((L, L))
    for c in core:
        for j in range(L):
            if j != c:
                P[c, j] = P[j, c] = p[min(c, j), max(c, j)]
    return a, P, core


def all_sets(L, k, fixed=None):
    """Every indicator vector of size ``k`` (any size if ``k < 0``) respecting ``fixed``."""
    sizes = range(L + 1) if k < 0 else [k]
    for r in sizes:
        for members in combinations(range(L), r):
            t = np.zeros(L, dtype=bool)
            t[list(members)] = True
            if fixed is not None and (np.any(t[fixed == -1]) or np.any(~t[fixed == 1])):
                continue
            yield t


def set_score(a, P, t):
    """``Σ t_i a_i + Σ_{i<j} t_i t_j P_ij`` by a double loop."""
    L = len(a)
    value = sum(a[i] for i in range(L) if t[i])
    value += sum(P[i, j] for i in range(L) for j in range(i + 1, L) if t[i] and t[j])
    return value


def brute_inference(a, P, k, fixed=None):
    """Best score, a best set and the in/out max-marginals, by enumeration."""
    L = len(a)
    best, best_t = -np.inf, None
    vin, vout = np.full(L, -np.inf), np.full(L, -np.inf)
    for t in all_sets(L, k, fixed):
        v = set_score(a, P, t)
        if v > best:
            best, best_t = v, t
        vin[t] = np.maximum(vin[t], v)
        vout[~t] = np.maximum(vout[~t], v)
    return best, best_t, vin, vout
