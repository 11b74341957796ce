"""The discrete derivative of a QS loss as the compiled kernels evaluate it (Mohapatra et al.,
section 4.1): ``d_j(i) = δ_j(i+1) − δ_j(i)`` from ``(kind, table)`` (:meth:`ssvm.losses.QSLoss.kernel_spec`).

The per-negative objective f_j of problem (5) (``loss_step``, ``best_rank``, ``sum_table``) is
declared in ``_objective.pxd`` and inlined into its users; :func:`derivative_matrix` is its
Python-facing table (the QS-suitability check and the threshold tests read it).
"""

import numpy as np

__all__ = ["derivative_matrix", "LOSS_KINDS"]

#: (KIND_AP, KIND_NDCG_LOG2, KIND_SUM_TABLE) as the compiled kernels know them
LOSS_KINDS = (KIND_AP, KIND_NDCG_LOG2, KIND_SUM_TABLE)


def derivative_matrix(int kind, const double[::1] table, int64_t n_pos, int64_t n_neg):
    """``d[j-1, i-1] = δ_j(i+1) − δ_j(i)`` for j = 1..N, i = 1..P, bit for bit as the kernels
    evaluate it.

    Parameters
    ----------
    kind : int
        The loss's kind (``KIND_AP``, ``KIND_NDCG_LOG2`` or ``KIND_SUM_TABLE``).
    table : ndarray of float64
        The loss's table (at least one entry; ``P + N + 1`` for ``KIND_SUM_TABLE``).
    n_pos, n_neg : int
        Query size.

    Returns
    -------
    ndarray of float64, shape (n_neg, n_pos)
    """
    out = np.empty((n_neg, n_pos), dtype=np.float64)
    cdef double[:, ::1] d = out
    cdef int64_t i, j
    with nogil:
        for j in range(1, n_neg + 1):
            for i in range(1, n_pos + 1):
                d[j - 1, i - 1] = loss_step(kind, &table[0], n_pos, i, j)
    return out
