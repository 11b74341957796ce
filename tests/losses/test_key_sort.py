"""The sort of a large query's packed keys (``ssvm.losses._key_sort``): the compiled radix sort
against numpy's sort, bit for bit, and the oracles of large queries the same whichever sort the
process chose."""

import numpy as np
import pytest

from ssvm.losses import _key_sort as ks
from ssvm.losses import get_oracle
from ssvm.losses._graded_kernel import pack_all
from ssvm.losses._packed_keys import index_bits, packed_order
from ssvm.losses.graded import graded_ndcg_batch
from ssvm.losses.qs import qs_batch


def _keys(scores):
    """The packed keys of ``scores``, in index order (as the oracles write them), and the shift."""
    shift = int(index_bits(max(scores.size, 1)))  # (a query has a row: index_bits(0) is not defined)
    keys = np.empty(scores.size, dtype=np.uint64)
    pack_all(np.ascontiguousarray(scores, dtype=np.float64), shift, keys)
    return keys, shift


def _radix(keys, shift):
    out = keys.copy()
    ks.radix_sort_high(out, shift, np.empty(out.size + 3, dtype=np.uint64))  # work may be longer
    return out


SCORES = {
    "normal": lambda rng, n: rng.normal(size=n),
    "ties": lambda rng, n: rng.integers(0, 5, n).astype(float),
    "all_equal": lambda rng, n: np.full(n, 0.25),  # every pass skipped
    "signed": lambda rng, n: rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, n),  # the top digit varies
    "near": lambda rng, n: 1.0 + rng.integers(0, 4, n) * np.finfo(float).eps,  # tie in the high bits
    "one_apart": lambda rng, n: np.where(np.arange(n) == n // 2, 3.0, 1.0),  # one key moves in one pass
    "zeros": lambda rng, n: rng.choice([0.0, -0.0, 1e-310, -1e-310], n),
}


@pytest.mark.parametrize("case", sorted(SCORES))
@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 1000, 5000, 40000])
def test_radix_is_numpys_sort(case, n):
    rng = np.random.default_rng(n)
    keys, shift = _keys(SCORES[case](rng, n))
    np.testing.assert_array_equal(_radix(keys, shift), np.sort(keys))


@pytest.mark.parametrize("shift", [1, 4, 5, 9, 10, 11, 12, 14, 20, 22, 32, 42, 53, 54, 63])
def test_radix_any_shift_and_pass_count(shift):
    """Every shift: one to seven passes (an odd or even number moved: the copy back)."""
    rng = np.random.default_rng(shift)
    for _ in range(20):
        n = int(rng.integers(1, 300))
        high = rng.integers(0, 2 ** 63, n, dtype=np.uint64) >> np.uint64(rng.integers(0, 64))
        high &= ~np.uint64(0) << np.uint64(shift)
        keys = np.sort(high | (np.arange(n, dtype=np.uint64) & np.uint64((1 << shift) - 1)))
        keys = keys[np.argsort(keys >> np.uint64(shift), kind="stable")]  # high bits only: then shuffled
        keys = keys[rng.permutation(n)]
        order = np.argsort(keys >> np.uint64(shift), kind="stable")
        np.testing.assert_array_equal(_radix(keys, shift), keys[order])


def test_radix_is_stable_in_the_high_bits():
    """Keys that tie from ``shift`` up keep their order, whatever their low bits."""
    shift = 4
    keys = np.array([(3 << 4) | 9, (1 << 4) | 7, (3 << 4) | 2, (1 << 4) | 1, (1 << 4) | 15], dtype=np.uint64)
    expected = np.array([(1 << 4) | 7, (1 << 4) | 1, (1 << 4) | 15, (3 << 4) | 9, (3 << 4) | 2], dtype=np.uint64)
    np.testing.assert_array_equal(_radix(keys, shift), expected)


def test_radix_moves_a_key_whose_digit_alone_differs():
    """A pass is skipped only when every key shares its digit: one key apart in the top digit."""
    shift = 1
    keys = np.array([5 << 60, 5 << 60 | 2, 1 << 60 | 4, 5 << 60 | 6], dtype=np.uint64)
    np.testing.assert_array_equal(_radix(keys, shift), np.sort(keys))


@pytest.fixture
def choice():
    """Set the process's choice of sort for the test, restore it after."""
    saved = dict(ks._CHOICE)

    def set_choice(name):
        ks._CHOICE.clear()
        if name is not None:
            ks._CHOICE["sort"] = name

    yield set_choice
    ks._CHOICE.clear()
    ks._CHOICE.update(saved)


@pytest.mark.parametrize("name", [None, "numpy", "radix"])
def test_sort_large_sorts_whichever_way(choice, name):
    choice(name)
    rng = np.random.default_rng(3)
    for n in (10, ks.RADIX_MIN - 1, ks.RADIX_MIN, 50000):
        keys, shift = _keys(rng.integers(-20, 20, n) * 0.5)
        expected = np.sort(keys)
        ks.sort_large(keys, shift)
        np.testing.assert_array_equal(keys, expected)
    assert ks.sort_choice() == (name or ks.sort_choice())
    assert ks.sort_choice() in ("numpy", "radix")  # the first large sort chose when nothing was set


def test_no_choice_before_a_large_sort(choice):
    choice(None)
    keys, shift = _keys(np.arange(100.0))
    ks.sort_large(keys, shift)
    assert ks.sort_choice() is None


def _large_query(rng, n, frac_pos, ties):
    s = rng.integers(0, 50, n) * 0.1 if ties else rng.normal(size=n)
    y = rng.random(n) < frac_pos
    y[0], y[1] = True, False
    return s, y


@pytest.mark.parametrize("ties", [False, True])
def test_large_query_oracles_agree_across_sorts(choice, ties):
    """The walk (AP, NDCG), graded NDCG and the ranking by score on one query of 40,000 rows: the
    same numbers, bit for bit, by numpy's sort and by the radix sort."""
    rng = np.random.default_rng(7)
    s, y = _large_query(rng, 40000, 0.2, ties)
    grades = np.where(y, rng.integers(1, 5, y.size), 0)
    starts, ends = np.array([0]), np.array([s.size])
    results = {}
    for name in ("numpy", "radix"):
        choice(name)
        results[name] = [
            *qs_batch(s, y, starts, ends, get_oracle("ap").params["loss"]),
            *qs_batch(s, y, starts, ends, get_oracle("ndcg", gain="binary").params["loss"]),
            *graded_ndcg_batch(s, grades, starts, ends),
            *packed_order(s, y),
        ]
    for a, b in zip(results["numpy"], results["radix"], strict=True):
        np.testing.assert_array_equal(a, b)
