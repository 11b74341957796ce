"""QS's score grid (steps 1–2 of :mod:`ssvm.losses.qs`): the bins, the histogram of the negatives
over them, and each non-empty bin's interval of possible ranks from its corners.

The grid has bins of width 2^e (a power of two), so a negative's bin ``floor(s · 2^−e) − base`` is
computed exactly and bin k holds exactly the scores in [E_k, E_k+1), E_k = (base + k) · 2^e; bin 0
also holds the scores below the grid (its lower edge is −∞).
"""

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ._numerics import GRID_BITS, GRID_EXPONENT_LIMIT
from ._qs_recursion import chain_opts

__all__ = ["Grid", "Bins", "make_grid", "bin_of", "histogram", "corner_ranks"]

_NEG_PER_BIN = 8
_BINS_PER_POS = 32
_LO_SAMPLE = 4096
_MAX_BINS = 1 << 22

Grid = namedtuple("Grid", ["inv_w", "width", "base", "hi", "n_bins"])
Grid.__doc__ = """The score grid: 2^−e and 2^e, the bin of its lowest edge (``base``), the highest score
binned (``hi``: the top positive when negatives above it are settled apart, else the maximum) and the
number of bins."""

Bins = namedtuple("Bins", ["bins", "j0", "lo_rank", "hi_rank"])
Bins.__doc__ = """The non-empty bins from the top (``bins``), their first order minus one (``j0``) and the
interval [lo_rank[t], hi_rank[t]] of the ranks of the t-th one's negatives."""


@njit(cache=True)
def _exponent(lo, hi, n_pos, n_neg, n_bins):
    """Bin width 2^e and the bin of ``lo``: between ``n_bins`` / 4 and ``n_bins`` / 2 bins over
    [lo, hi] (``n_bins`` <= 0: the default, min(max(N / 8, 32 P), 64 N) capped at 2^22).

    The width is a power of two no finer than 2^−GRID_BITS of the scores' magnitude, so s · 2^−e is
    exact and its floor fits an int64; edges (base + k) · 2^e are exact doubles.
    """
    if n_bins <= 0:  # much finer than the positives: their thresholds make bins open
        n_bins = min(max(n_neg // _NEG_PER_BIN, _BINS_PER_POS * n_pos, 1), 64 * n_neg, _MAX_BINS)
    bits = 0  # n_bins.bit_length()
    while n_bins >> bits:
        bits += 1
    span = hi / 2 - lo / 2  # (hi − lo) / 2 without overflow
    e = math.frexp(span)[1] + 2 - bits
    mag = max(abs(lo), abs(hi))
    if mag > 0.0:
        e = max(e, math.frexp(mag)[1] - GRID_BITS)
    e = min(max(e, -GRID_EXPONENT_LIMIT), GRID_EXPONENT_LIMIT)
    inv_w = math.ldexp(1.0, -e)
    return inv_w, math.ldexp(1.0, e), _floor_scaled(lo, inv_w)


@njit(cache=True, inline="always")
def _floor_scaled(s, inv_w):
    """floor(s · inv_w) for a power of two ``inv_w`` (exact: the product only shifts the exponent)."""
    x = np.floor(s * inv_w)
    if s < 0.0 and x >= 0.0:  # the product underflowed to −0; a negative number floors to ≤ −1
        x = -1.0
    return np.int64(x)


@njit(cache=True)
def make_grid(scores, sp, use_above, n_bins):
    """The :class:`Grid` of one query: up to ``hi`` = the top positive (``use_above``: a negative
    above every positive has rank 1, settled apart) or the top score, down to the minimum of a
    strided sample (scores below go to bin 0); about ``n_bins`` bins (<= 0: the default)."""
    n_pos = sp.size
    hi = sp[0] if use_above else scores.max()
    lo = min(scores[::max(scores.size // _LO_SAMPLE, 1)].min(), hi)  # scores below lo go to bin 0
    inv_w, width, base = _exponent(lo, hi, n_pos, scores.size - n_pos, n_bins)
    return Grid(inv_w, width, base, hi, _floor_scaled(hi, inv_w) - base + 1)


@njit(cache=True, inline="always")
def bin_of(s, grid):
    """The bin of a score ``s`` ≤ hi; bin 0 also holds everything below the grid."""
    return max(_floor_scaled(s, grid.inv_w) - grid.base, 0)


@njit(cache=True)
def histogram(scores, y, grid):
    """Pass 1: negatives per bin, and the number scoring above ``grid.hi``."""
    hist = np.zeros(grid.n_bins, dtype=np.int32)
    hi = grid.hi
    n_above = 0
    for i in range(scores.size):
        if y[i]:
            continue
        s = scores[i]
        if s > hi:
            n_above += 1
        else:
            hist[bin_of(s, grid)] += 1
    return hist, n_above


@njit(cache=True)
def corner_ranks(hist, n_above, grid, n_neg, obj):
    """The :class:`Bins` of the histogram: every non-empty bin's interval of ranks.

    Bin t (scores in [E_k, E_k+1), orders j1..j2) has its ranks between the opts of its corners
    (E_k+1, j1) and (E_k, j2 + 1) (order N for the last bin); the second corner of a bin is the
    first of the next one when no empty bin lies between them.  Along the corners, taken from the
    top, s never rises and j never falls, so their opts are non-decreasing and found by the divide
    and conquer of Algorithm 2 over them (:func:`chain_opts`): each is searched only between the
    opts of the nearest computed corners before and after it, and a stretch whose bracket has
    collapsed is filled at once.
    """
    base = grid.base
    width = grid.width
    hi = grid.hi
    nb = 0
    for k in range(hist.size):
        nb += hist[k] > 0
    bins = np.empty(nb + 1, dtype=np.int32)
    t = 0
    for k in range(hist.size - 1, -1, -1):  # branch-free: the empty bins are sparse and unpredictable
        bins[t] = k
        t += hist[k] > 0
    bins = bins[:nb]
    j0 = np.empty(nb, dtype=np.int64)
    s_pt = np.empty(2 * nb, dtype=np.float64)
    j_pt = np.empty(2 * nb, dtype=np.int64)
    first = np.empty(nb, dtype=np.int32)  # bin t's corners are points first[t] and first[t] + 1
    n_pt = 0
    j = n_above
    prev = -1  # the last non-empty bin
    for t in range(nb):
        k = bins[t]
        j0[t] = j
        # adjacent bins share a corner: (E_k+1, j + 1) overwrites the equal point the previous bin ended with
        n_pt -= t > 0 and k + 1 == prev
        s_pt[n_pt] = min((base + k + 1) * width, hi)
        j_pt[n_pt] = j + 1
        first[t] = n_pt
        j += hist[k]
        s_pt[n_pt + 1] = (base + k) * width if k > 0 else -np.inf  # bin 0 also holds everything below lo
        j_pt[n_pt + 1] = min(j + 1, n_neg)
        n_pt += 2
        prev = k
    ranks = np.empty(n_pt, dtype=np.int64)
    chain_opts(s_pt[:n_pt], j_pt[:n_pt], np.int64(1), obj.n_pos + 1, obj, ranks)
    lo_rank = np.empty(nb, dtype=np.int64)
    hi_rank = np.empty(nb, dtype=np.int64)
    for t in range(nb):
        lo_rank[t] = ranks[first[t]]
        hi_rank[t] = ranks[first[t] + 1]
    return Bins(bins, j0, lo_rank, hi_rank)
