"""Compile the training round's numba kernels ahead of a first fit (``ssvm warmup`` runs this after
the oracles' :func:`ssvm.losses.warm_up`).

A fit's round (:mod:`._fused`) compiles its loop once for every layout of ``X`` (dense or CSR,
float32 or float64: one tuple type, see :func:`._fused._as_rows`) and every oracle with a compiled
form (the form is a runtime value): in the calling thread for small problems, numba's parallel
loop for large ones. The products of the two-pass path (:mod:`._products`: the line search, queries
too large for the batch kernels) compile once per dtype and layout, and again in row chunks on
numba's threads for a large ``X``.
"""

import logging

import numpy as np
import scipy.sparse as sp

from ..losses import get_oracle
from ..losses.warmup import CompileNotice, cache_is_cold
from . import _fused, _products
from ._ticks import seconds_per_tick
from .score_space import ScoreHinge

__all__ = ["warm_up_rounds"]

logger = logging.getLogger(__name__)

_ESTIMATE = "about 75 s"  # CPU time of compiling it all, cold, after the oracles' warm_up (rounded up)


def _layouts():
    """A tiny ``X`` (8 rows, 2 features) in every layout a fit takes."""
    X = np.random.default_rng(0).normal(size=(8, 2))
    dense = [X, X.astype(np.float32)]
    return dense + [sp.csr_matrix(x) for x in dense]


def _chunked_products(X, w, c):
    """The products' parallel loops (:mod:`._products` takes them for ``X`` of 8 MiB or more) on two
    row chunks of ``X``."""
    cuts = np.array([0, X.shape[0] // 2, X.shape[0]], dtype=np.int64)
    if sp.issparse(X):
        _products._csr_scores_chunks(X.data, X.indices, X.indptr, w, cuts)
        _products._csr_transpose_chunks(X.data, X.indices, X.indptr, c, X.shape[1], cuts)
    else:
        _products._dense_scores_chunks(X, w, cuts)
        _products._dense_transpose_chunks(X, c, cuts)


def warm_up_rounds(*, log=None, notice_after=3.0):
    """Compile (or load from numba's cache) the kernels of a training round.

    The fused round of two tiny queries runs once as one chunk in the calling thread and once as
    two chunks in numba's threads, and the products of the two-pass path once whole and once in
    two row chunks, for float64 and float32, dense and CSR ``X``.

    Parameters
    ----------
    log : logging.Logger, optional
        Told, at INFO, "compiling ssvm's kernels, once ..." when numba's cache is cold (at once) or
        when loading takes longer than ``notice_after`` seconds, and then how long it took.
        Defaults to this module's logger.
    notice_after : float, default=3.0

    Returns
    -------
    float
        Seconds spent.
    """
    log = logger if log is None else log
    y = np.array([True, False, False, True, False, True, True, False])
    # 0-1: the round's numba loop serves it (interim, issue #34: the QS family is compiled with the package)
    hinge = ScoreHinge(y, [np.arange(4), np.arange(4, 8)], get_oracle("zero_one"), check_input=False)
    w = np.array([0.5, -1.0])
    cold = cache_is_cold(_fused._chunk) or cache_is_cold(_fused._round)
    with CompileNotice(log, cold, _ESTIMATE, notice_after) as notice:
        seconds_per_tick()  # the cycle counter's first calibration
        for X in _layouts():
            fused = _fused.FusedRound(X, hinge, False)
            fused.plane(w)  # one chunk
            fused.block_cuts = fused.chunk_cuts = np.arange(3)  # a block and a chunk per query
            fused.plane(w)  # the parallel loop
            _products.transpose(X, _products.scores(X, w))
            _chunked_products(X, w, np.linspace(0.0, 1.0, X.shape[0]))
    return notice.seconds
