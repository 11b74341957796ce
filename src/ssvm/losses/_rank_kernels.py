"""TEMPORARY (issue #34, removed when the kernels below are ported): numba forms of the QS family's
discrete derivative and best rank, for the numba kernels the other half of the port (P2) moves to
Cython — the sorting baselines' scans (:mod:`.greedy`), the suitability check (:mod:`.suitability`)
and the dask giant query's ``ranks_at`` (:mod:`ssvm.problem.dask_giant`) call them inside numba code,
which cannot call the compiled core.  Their one home is ``_core/derivative.pxd`` (``loss_step``,
``best_rank``, ``objective_t``; ``derivative.pyx``'s ``sum_table``), bit for bit the same numbers; once
those kernels cimport it, this module goes.  The sorts and Lemma 6's coefficients are the core's.
"""

from collections import namedtuple
from math import log2

import numpy as np
from numba import njit

from ._core.derivative import py_write_coefficients as write_coefficients
from ._core.sorting import sorted_negatives, sorted_positives
from .rank_losses import KIND_AP, KIND_NDCG_LOG2

__all__ = ["Objective", "loss_step", "sum_table", "best_rank", "write_coefficients", "sorted_positives",
           "sorted_negatives"]

Objective = namedtuple("Objective", ["sp", "inv", "kind", "table", "n_pos"])
Objective.__doc__ = """f_j of problem (5) for one query, for the numba kernels: the positives' sorted scores,
2 / (P N), the loss's ``(kind, table)`` and P (``_core.derivative.objective_t``)."""


@njit(cache=True, inline="always")
def loss_step(kind, table, n_pos, i, j):
    """d_j(i) = δ_j(i+1) − δ_j(i): ``_core.derivative.loss_step``, for numba kernels."""
    if kind == KIND_AP:
        a = float(i + j)
        return -i / (n_pos * (a - 1.0) * a)
    if kind == KIND_NDCG_LOG2:
        m = float(i + j)
        return (1.0 / log2(1.0 + m) - 1.0 / log2(m)) * table[0]
    return table[i + j]


@njit(cache=True)
def sum_table(kind, table, n_pos, n_neg):
    """``_core.derivative.sum_table``, for numba kernels."""
    t = np.zeros(n_pos + n_neg + 1, dtype=np.float64)
    for m in range(2, n_pos + n_neg + 1):
        t[m] = loss_step(kind, table, n_pos, 1, m - 1)
    return t


@njit(cache=True, inline="always")
def best_rank(s, j, lo, hi, obj):
    """``_core.derivative.best_rank``, for numba kernels."""
    sp, inv, kind, table, n_pos = obj
    best = lo
    diff = 0.0
    if kind == KIND_NDCG_LOG2:
        scale = table[0]
        prev = 1.0 / log2(float(lo + j))
        for k in range(lo, hi):
            cur = 1.0 / log2(1.0 + float(k + j))
            diff += (sp[k - 1] - s) * inv + (cur - prev) * scale
            prev = cur
            if diff >= 0.0:
                best = k + 1
                diff = 0.0
        return best
    for k in range(lo, hi):
        diff += (sp[k - 1] - s) * inv + loss_step(kind, table, n_pos, k, j)
        if diff >= 0.0:
            best = k + 1
            diff = 0.0
    return best
