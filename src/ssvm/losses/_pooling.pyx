"""Max pooling of bags (the latent AP-SVM's negative images): each segment's first maximum."""

import numpy as np

from libc.stdint cimport int64_t

__all__ = ["segment_argmax"]


def segment_argmax(const double[::1] values, const int64_t[::1] offsets):
    """Global index of the first maximum of ``values[offsets[i]:offsets[i+1]]`` for every segment i.

    Parameters
    ----------
    values : ndarray of float64, shape (n,)
    offsets : ndarray of int64, shape (n_segments + 1,)
        Ascending, ``offsets[0] = 0``, ``offsets[-1] = n``, no empty segment.

    Returns
    -------
    ndarray of int64, shape (n_segments,)
    """
    cdef Py_ssize_t n_seg = offsets.shape[0] - 1
    out = np.empty(n_seg, dtype=np.int64)
    cdef int64_t[::1] best_of = out
    cdef Py_ssize_t i
    cdef int64_t j, best
    cdef double best_value
    with nogil:
        for i in range(n_seg):
            best = offsets[i]
            best_value = values[best]
            for j in range(offsets[i] + 1, offsets[i + 1]):
                if values[j] > best_value:
                    best = j
                    best_value = values[j]
            best_of[i] = best
    return out
