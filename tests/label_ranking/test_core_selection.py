"""Greedy joint-mutual-information core selection against a hand-counted twin."""

from collections import Counter
from math import log

import numpy as np
import pytest

from ssvm.label_ranking import mutual_information, select_core


def mi_by_counting(a, b):
    """I(a; b) in nats from explicit joint and marginal frequency tables."""
    n = len(a)
    pa, pb, pab = Counter(a), Counter(b), Counter(zip(a, b))
    return sum(c / n * log((c / n) / ((pa[x] / n) * (pb[y] / n))) for (x, y), c in pab.items())


def greedy_by_counting(Y, n_core):
    """The same greedy rule with the core's state as a tuple of label values."""
    L = Y.shape[1]
    core = []
    for _ in range(n_core):
        scores = {}
        for c in range(L):
            if c in core:
                continue
            state = [tuple(row) for row in Y[:, core + [c]]]
            scores[c] = sum(mi_by_counting(list(Y[:, j]), state)
                            for j in range(L) if j not in core and j != c)
        top = max(scores.values())
        core.append(min(c for c, v in scores.items() if v >= top - 1e-12))
    return core


def test_mutual_information_matches_counting():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        a, b = rng.integers(0, 3, n), rng.integers(0, 5, n)
        assert mutual_information(a, b) == pytest.approx(mi_by_counting(list(a), list(b)),
                                                         abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_greedy_matches_counting_twin(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n, L = int(rng.integers(2, 30)), int(rng.integers(1, 7))
        base = rng.random((n, 2)) < 0.5
        mix = rng.integers(0, 3, L)  # labels copy a hidden bit, its negation, or are noise
        Y = np.where(mix == 0, base[:, [0]], np.where(mix == 1, ~base[:, [1]],
                                                     rng.random((n, L)) < 0.3))
        n_core = int(rng.integers(0, L + 1))
        assert select_core(Y, n_core).tolist() == greedy_by_counting(Y, n_core)


def test_picks_the_informative_label_and_breaks_ties_low():
    rng = np.random.default_rng(0)
    hub = rng.random(300) < 0.5
    Y = np.column_stack([rng.random(300) < 0.5, hub, hub ^ (rng.random(300) < 0.05),
                         hub ^ (rng.random(300) < 0.1), rng.random(300) < 0.5])
    assert select_core(Y, 1)[0] in (1, 2)
    assert select_core(np.zeros((5, 4), dtype=bool), 2).tolist() == [0, 1]  # all tied


def test_bad_n_core():
    with pytest.raises(ValueError, match="n_core must lie"):
        select_core(np.zeros((3, 2), dtype=bool), 3)
