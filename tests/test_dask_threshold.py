"""The accuracy-maximising threshold of a dask array's scores (ssvm._dask_threshold) against
ssvm.metrics.accuracy_threshold on the gathered scores: bit for bit, whatever the blocks and the
budget; its block tasks against their slow twins.

That no per-row array reaches the client of a LocalCluster in a whole fit is in test_dask_cluster.py.
"""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

from ssvm import _dask_threshold as dask_threshold  # noqa: E402
from ssvm._dask_threshold import (  # noqa: E402
    SortedScores,
    block_counts,
    block_next,
    block_rows,
    block_samples,
    dask_accuracy_threshold,
)
from ssvm.metrics import accuracy_threshold  # noqa: E402
from ssvm.problem import matvec  # noqa: E402

FAMILIES = ("normal", "ties", "zeros", "huge", "tiny", "constant", "adjacent")


def family_scores(family, n, rng):
    return {"normal": lambda: rng.standard_normal(n),
            "ties": lambda: rng.integers(-2, 3, n).astype(float),
            "zeros": lambda: rng.choice([0.0, -0.0, 1.0, -5e-324], n),
            "huge": lambda: rng.choice([-1.0, 1.0], n) * 10.0 ** rng.integers(290, 308, n),
            "tiny": lambda: rng.choice([-1.0, 1.0], n) * 10.0 ** -rng.integers(300, 324, n),
            "constant": lambda: np.full(n, 3.0),
            "adjacent": lambda: 1.0 + rng.integers(0, 4, n) * np.spacing(1.0)}[family]()


def chunks_of(n, rng):
    """Random row chunks of n, some of them empty."""
    cuts = np.sort(rng.integers(0, n + 1, int(rng.integers(0, 5))))
    return tuple(int(c) for c in np.diff(np.concatenate(([0], cuts, [n]))))


def test_equals_accuracy_threshold_on_thousands_of_inputs():
    """Every family of scores (ties, signed zeros, subnormals, 600 decades, neighbouring floats, one
    value), every share of relevant rows (none, all), one row, empty blocks and budgets from 1 (one
    sample a pass, a row shipped at the end: many passes) up: the threshold bit for bit."""
    rng = np.random.default_rng(0)
    with dask.config.set(scheduler="sync"):
        for trial in range(3000):
            n = int(rng.integers(1, 8 if trial % 5 == 0 else 90))
            s = family_scores(FAMILIES[trial % len(FAMILIES)], n, rng)
            y = rng.random(n) < rng.choice([0.0, 0.1, 0.5, 0.9, 1.0])
            X = da.from_array(s[:, None], chunks=(chunks_of(n, rng), (1,)))
            got = dask_accuracy_threshold(X, np.array([1.0]), y, budget=int(rng.integers(1, 40)))
            want = accuracy_threshold(matvec(s[:, None], np.array([1.0])), y)  # in memory, as a fit does
            assert got == want and np.signbit(got) == np.signbit(want), (trial, s, y, got, want)


def test_labels_as_a_dask_array_or_grades_and_features_as_in_a_fit():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((5000, 3)).astype(np.float32)
    w = np.array([0.5, -1.0, 2.0])
    grades = rng.integers(0, 4, 5000) * (rng.random(5000) < 0.3)
    want = accuracy_threshold(matvec(X, w), grades > 0)
    Xd = da.from_array(X, chunks=(700, 3))
    with dask.config.set(scheduler="sync"):
        for labels in (grades, grades > 0, da.from_array(grades, chunks=1234), da.from_array(grades > 0, chunks=900)):
            assert dask_accuracy_threshold(Xd, w, labels, budget=64) == want


def test_block_tasks_against_their_twins():
    rng = np.random.default_rng(2)
    for _ in range(300):
        n = int(rng.integers(0, 40))
        s = rng.integers(-3, 4, n).astype(float)
        y = rng.random(n) < 0.4
        block = SortedScores(s[:, None], y, np.array([1.0]))
        values = np.unique(rng.integers(-4, 5, 6).astype(float))
        le, neg_le, lt, neg_lt = block_counts(block, values)
        for t, v in enumerate(values):
            assert le[t] == np.sum(s <= v) and lt[t] == np.sum(s < v)
            assert neg_le[t] == np.sum((s <= v) & ~y) and neg_lt[t] == np.sum((s < v) & ~y)
        lo, hi = values[:-1], values[1:]
        got_s, got_y = block_rows(block, lo, hi)
        inside = np.zeros(n, dtype=bool)
        for a, b in zip(lo, hi):
            inside |= (s > a) & (s < b)
        assert sorted(zip(got_s, got_y)) == sorted(zip(s[inside], y[inside]))
        k = int(rng.integers(1, 4))
        samples = block_samples(block, lo, hi, k)
        for a, b in zip(lo, hi):
            mine = samples[(samples > a) & (samples < b)]
            m = int(np.sum((s > a) & (s < b)))
            assert mine.shape[0] == min(m, k) and np.all(np.isin(mine, s))
        u = float(rng.integers(-4, 4))
        above = s[s > u]
        assert block_next(block, u) == (above.min() if above.size else np.inf)


def test_only_intervals_that_can_hold_a_best_cut_are_shipped(monkeypatch):
    """200,000 rows in four blocks, a budget of 512: every pass brings back at most the budget's
    numbers (and the lowest and highest score) a block, never a block's 50,000 scores, and the
    counts summed over the blocks; the rows shipped at the end are at most the budget."""
    rng = np.random.default_rng(3)
    y = rng.random(200_000) < 0.1
    s = rng.standard_normal(200_000) + 2.0 * y
    seen = []
    real = dask_threshold.block_pass

    def spy(client, task, per_block, shared=(), keep=False):
        out = real(client, task, per_block, shared, keep)
        if not keep:
            seen.append((task.__name__, max(np.shape(a)[-1] if np.ndim(a) else 1 for part in out
                                            for a in (part if isinstance(part, tuple) else (part,)))))
        return out

    monkeypatch.setattr(dask_threshold, "block_pass", spy)
    with dask.config.set(scheduler="sync"):
        got = dask_accuracy_threshold(da.from_array(s[:, None], chunks=(50_000, 1)), np.array([1.0]), y,
                                      budget=512)
    assert got == accuracy_threshold(s, y)
    assert all(size <= 512 + 2 for _, size in seen), seen
    assert [name for name, _ in seen if name == "block_rows"] == ["block_rows"]
    assert "summed" in dict(seen) and "block_counts" not in dict(seen)  # counts come back added up
