"""Parts of the QS kernels with a contract of their own: the compiled key sort, the index bits, and
the caches kept from call to call (bounded: past the bound a call gets arrays of its own)."""

import numpy as np
import pytest

from ssvm.losses._core import derivative as walk  # the 1/log2 table's cache
from ssvm.losses._core import sorting as key_sort
from ssvm.losses._core import sorting as keys


@pytest.mark.parametrize("n", [0, 1, 2, 31, 32, 33, 100, 4096, 70_000])
def test_sort_keys_is_numpys_sort(n):
    rng = np.random.default_rng(n)
    for high in (np.uint64(0), np.uint64(0xFFFF_0000_0000_0000)):  # keys sharing their top bytes, or not
        k = np.unique(rng.integers(0, 2**63, size=n, dtype=np.uint64) | high)  # distinct, as keys are
        rng.shuffle(k)
        got = k.copy()
        keys.py_sort_keys(got)
        np.testing.assert_array_equal(got, np.sort(k))
    ids = rng.permutation(n).astype(np.int64)  # non-negative int64, viewed as uint64
    keys.py_sort_keys(ids.view(np.uint64))
    np.testing.assert_array_equal(ids, np.arange(n))


def _score_samples(rng, n):
    """Scores of one query as they come: spread, tied, rounded, over many binades, with outliers,
    huge, tiny, signed zeros; each with the packed keys' index bits."""
    yield rng.normal(size=n)
    yield np.round(rng.normal(size=n), 1)                        # many ties
    yield np.full(n, 0.25)                                       # one score: no span
    yield rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, size=n)  # every binade
    yield np.r_[rng.normal(size=max(n - 1, 0)), 1e6][:n]               # one outlier: a crowded bucket
    yield np.r_[rng.normal(size=max(n - 2, 0)), 1.7e308, -1.7e308][:n] # a span past the floats
    yield rng.normal(size=n) * 5e-324                            # subnormal: the scale overflows
    yield rng.choice([0.0, -0.0, 1e-310, -1e-310, 1.0], size=n)  # signed zeros and subnormals
    yield rng.normal(size=n) + np.nextafter(0.0, 1.0) * rng.integers(0, 3, size=n)  # a few ulps apart


@pytest.mark.parametrize("n", [0, 1, 2, 31, 32, 33, 34, 100, 1000, 4096, 70_000])
def test_sort_score_keys_is_numpys_sort(n):
    """The bucket sort of packed score keys gives exactly numpy's order of the keys, whatever the
    scores' spread (the bucket of a key never falls as the key rises)."""
    from ssvm.losses._core.sorting import py_pack_all as pack_all

    rng = np.random.default_rng(n)
    shift = keys.index_bits(max(n, 1))
    for scores in _score_samples(rng, n):
        packed = np.empty(n, dtype=np.uint64)
        pack_all(np.ascontiguousarray(scores, dtype=np.float64), shift, packed)
        perm = rng.permutation(n)
        got = packed[perm]
        keys.py_sort_score_keys(got, shift)
        np.testing.assert_array_equal(got, np.sort(packed))


def test_index_bits():
    for n in (1, 2, 3, 4, 5, 1000, 1024, 1025, 2**20):
        assert keys.index_bits(n) == max((n - 1).bit_length(), 1)


@pytest.mark.parametrize("name", ["keys", "work"])
def test_key_buffers_are_kept_up_to_their_bound(monkeypatch, name):
    """The packed keys' buffer and the radix sort's work array (``_core.sorting.kept_keys``), each
    kept per thread under its name."""
    monkeypatch.setattr(key_sort, "CACHE_MAX_ENTRIES", 1000)
    for kept in ("keys", "work"):
        monkeypatch.setattr(key_sort._LOCAL, kept, None, raising=False)
    a = key_sort.kept_keys(name, 500)
    assert key_sort.kept_keys(name, 400) is a  # reused
    assert key_sort.kept_keys("work" if name == "keys" else "keys", 400) is not a  # one array a name
    big = key_sort.kept_keys(name, 5000)
    assert big.size >= 5000 and big is not a
    assert getattr(key_sort._LOCAL, name) is a  # past the bound: not kept
    assert key_sort.kept_keys(name, 800) is not a and getattr(key_sort._LOCAL, name).size >= 800  # grown


def test_inverse_log_table_is_kept_up_to_its_bound(monkeypatch):
    monkeypatch.setattr(walk, "CACHE_MAX_ENTRIES", 1000)
    monkeypatch.setattr(walk, "_INVERSE_LOGS", np.zeros(0))
    t = walk.inverse_log_table(300)
    assert walk.inverse_log_table(200) is t and t.size <= 1000
    big = walk.inverse_log_table(3000)
    assert big.size >= 3000 and walk._INVERSE_LOGS is t  # past the bound: computed, not kept
    np.testing.assert_array_equal(big[:t.size], t)


def test_huge_queries_are_refused_by_the_packed_keys(monkeypatch):
    monkeypatch.setattr(keys, "_MAX_SAMPLES", 10)
    with pytest.raises(ValueError, match="too large for the packed keys"):
        keys.sorted_keys(np.zeros(11), np.arange(11) < 5, 5)
