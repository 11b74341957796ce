"""The dynamic program of Song, Schwing, Zemel & Urtasun (ICML 2016) for AP, both directions (:mod:`.dp`).

h(i, j) is the best value of a prefix with i positives and j negatives, each sorted by
(−score, index); placing the i-th positive after j negatives adds (N − 2j) s⁺ᵢ / (PN) − σε i /
(P(i+j)), placing the j-th negative after i positives adds (P − 2i) s⁻ⱼ / (PN). Two rows of h are
kept, and one decision bit per cell (O(PN / 8) bytes) for the backtrack; ties prefer "negative
last", i.e. negatives as low as possible (the same rule as every oracle).
"""

import numpy as np

from libc.stdint cimport int64_t, uint8_t
from libcpp.vector cimport vector

__all__ = ["dp_ranks"]


def dp_ranks(const double[::1] sp, const double[::1] sn, double coef):
    """Negative ranks maximising score + coef·(−Σ prec / P), the AP objective's loss part.

    Parameters
    ----------
    sp, sn : ndarray of float64
        Positives' and negatives' scores, each sorted by (−score, index); at least one of each.
    coef : float
        σ ε: +1 for the loss-augmented oracle, −ε for the loss-diminished direction.

    Returns
    -------
    ranks : ndarray of int64, shape (N,)
        The j-th negative's interleaving rank (1..P+1).
    value : float
        The maximum, h(P, N).
    """
    cdef int64_t n_pos = sp.shape[0], n_neg = sn.shape[0]
    cdef int64_t width = (n_neg + 1 + 7) >> 3
    cdef double u = 1.0 / (n_pos * n_neg)
    cdef vector[uint8_t] bits = vector[uint8_t]((n_pos + 1) * width, 0)
    cdef vector[double] rows = vector[double](2 * (n_neg + 1))
    cdef double* prev = rows.data()
    cdef double* cur = rows.data() + n_neg + 1
    cdef double* held
    out = np.empty(n_neg, dtype=np.int64)
    cdef int64_t[::1] ranks = out
    cdef int64_t i, j
    cdef double spi, negw, a, b
    with nogil:
        prev[0] = 0.0  # row i = 0: only negatives
        for j in range(1, n_neg + 1):
            prev[j] = prev[j - 1] + n_pos * sn[j - 1] * u
            bits[j >> 3] |= <uint8_t>(1 << (j & 7))
        for i in range(1, n_pos + 1):
            spi = sp[i - 1] * u
            negw = (n_pos - 2 * i) * u
            cur[0] = prev[0] + n_neg * spi - coef * i / (n_pos * <double>i)
            for j in range(1, n_neg + 1):
                a = prev[j] + (n_neg - 2 * j) * spi - coef * i / (n_pos * <double>(i + j))
                b = cur[j - 1] + negw * sn[j - 1]
                if b >= a:
                    cur[j] = b
                    bits[i * width + (j >> 3)] |= <uint8_t>(1 << (j & 7))
                else:
                    cur[j] = a
            held = prev
            prev = cur
            cur = held
        i = n_pos
        j = n_neg
        while j > 0:
            if (bits[i * width + (j >> 3)] >> (j & 7)) & 1:
                ranks[j - 1] = i + 1
                j -= 1
            else:
                i -= 1
    return out, prev[n_neg]
