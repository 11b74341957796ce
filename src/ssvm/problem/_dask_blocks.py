"""Row blocks of a dask array that hold whole queries, and each block's score-space hinge.

Preparing a :class:`~ssvm.problem.dask_space.DaskStructuredHinge` takes two passes over the small
per-row arrays (``qid`` and ``y``, never ``X``):

1. :func:`aligned_chunks`: one task per block summarises its ``qid`` as runs of equal ids; the
   client moves every block boundary that falls inside a query back to that query's first row, so
   no query straddles two blocks (``X`` is then re-chunked to these boundaries).
2. :func:`block_queries`: per aligned block, the relevance and the ranges of its informative
   queries (a positive and a negative); the client adds up their number ``Q``, and
   :func:`block_hinge` builds each block's :class:`ScoreHinge` normalised by that ``Q``.

Every function that runs on a block takes the block's ``(number, first row)`` so that its errors
name the block and the rows.
"""

import os
import weakref
from contextlib import contextmanager

import dask
import numpy as np

from .._threads import limited_threads
from ._fused import FusedRound
from .score_space import ScoreHinge

__all__ = ["BlockQueries", "aligned_chunks", "balanced_chunks", "block_hinge", "block_homes", "block_queries",
           "block_rows", "default_block_bytes", "fused_round", "merged_chunks", "qid_runs", "query_starts",
           "task_threads"]

_FUSED = weakref.WeakKeyDictionary()  # a block's hinge -> (its X_b, the FusedRound or None)


def _where(block, n_rows=None):
    k, row0 = block
    return f"block {k} (rows {row0}:{row0 + n_rows})" if n_rows is not None else f"block {k}"


def _show(qid):
    """A query id as users wrote it (``5``, ``'a'``; not ``np.int64(5)``)."""
    return repr(qid.item() if isinstance(qid, np.generic) else qid)


def _runs(qid):
    """First row of each run of equal consecutive ids."""
    return np.concatenate(([0], np.flatnonzero(qid[1:] != qid[:-1]) + 1))


def qid_runs(qid_b, n_rows, block):
    """A block's ``qid`` as runs: their ids and first rows (local). Runs on a worker.

    Raises
    ------
    ValueError
        If the block does not hold ``n_rows`` ids, holds NaN, or a query's rows are split by
        another query inside it.
    """
    qid_b = np.asarray(qid_b)
    if qid_b.shape != (n_rows,):
        raise ValueError(f"qid's {_where(block, n_rows)} holds {qid_b.shape[0]} ids; its chunk "
                         f"says {n_rows}: the chunk sizes of qid do not match its data")
    if qid_b.dtype.kind == "f" and not np.all(np.isfinite(qid_b)):
        row = block[1] + int(np.flatnonzero(~np.isfinite(qid_b))[0])
        raise ValueError(f"qid holds NaN or infinity in {_where(block, n_rows)}, first at row {row}")
    starts = _runs(qid_b)
    values = qid_b[starts]
    unique, counts = np.unique(values, return_counts=True)
    if unique.shape[0] < values.shape[0]:
        q = unique[np.argmax(counts > 1)]
        rows = block[1] + np.flatnonzero(qid_b == q)
        raise ValueError(f"the rows of query {_show(q)} are not consecutive (rows {rows[0]} to "
                         f"{rows[-1]} of {_where(block, n_rows)}, interleaved with other queries); "
                         "with a dask X the rows of each query must be consecutive: sort them by "
                         "qid first")
    return values, starts


def query_starts(runs, chunks):
    """The first row of every query of the whole array, from its blocks' runs (client side).

    Parameters
    ----------
    runs : list of (values, starts)
        :func:`qid_runs` of each block, in order.
    chunks : tuple of int
        The blocks' sizes (all positive).

    Returns
    -------
    values : ndarray
        The queries' ids, in row order.
    starts : ndarray of int
        Their first rows (``starts[0] == 0``).

    Raises
    ------
    ValueError
        If a query's rows are not consecutive (it appears in two places).
    """
    bounds = np.concatenate(([0], np.cumsum(chunks)))
    values = np.concatenate([v for v, _ in runs])
    starts = np.concatenate([s + b for (_, s), b in zip(runs, bounds[:-1])])
    first = np.cumsum([0] + [len(v) for v, _ in runs[:-1]])  # each block's first run
    same = np.zeros(values.shape[0], dtype=bool)
    same[first[1:]] = values[first[1:]] == values[first[1:] - 1]  # continues the last block's run
    values, starts = values[~same], starts[~same]
    unique, counts = np.unique(values, return_counts=True)
    if unique.shape[0] < values.shape[0]:
        k = int(np.argmax(counts > 1))
        where = starts[values == unique[k]]
        raise ValueError(f"the rows of query {_show(unique[k])} are not consecutive (they start at "
                         f"rows {where[0]} and {where[1]}); with a dask X the rows of each query "
                         "must be consecutive: sort them by qid first")
    return values, starts


def aligned_chunks(runs, chunks):
    """Row chunks whose boundaries are query boundaries (client side).

    Parameters
    ----------
    runs : list of (values, starts)
        :func:`qid_runs` of each block, in order.
    chunks : tuple of int
        The blocks' sizes (all positive).

    Returns
    -------
    tuple of int
        New sizes: each boundary inside a query moved back to the query's first row.

    Raises
    ------
    ValueError
        If a query's rows are not consecutive (it appears in two places), or a query does not
        fit in one block (the boundaries around it would meet).
    """
    values, starts = query_starts(runs, chunks)
    bounds = np.concatenate(([0], np.cumsum(chunks)))
    ends = np.append(starts[1:], bounds[-1])
    j = np.searchsorted(starts, bounds[1:-1], side="right") - 1
    new = np.concatenate(([0], starts[j], [bounds[-1]]))
    tight = np.flatnonzero(np.diff(new) <= 0)
    if tight.size:
        b = int(tight[0])  # block b lies inside one query
        q = int(np.searchsorted(starts, bounds[b], side="right") - 1)
        size = int(ends[q] - starts[q])
        largest = int((ends - starts).max())
        raise ValueError(f"query {_show(values[q])} has {size} rows (rows {starts[q]}:{ends[q]}) "
                         f"and does not fit in block {b} of X ({chunks[b]} rows): every query must "
                         "lie in one block; re-chunk X with row chunks at least as large as the "
                         f"largest query ({largest} rows), e.g. "
                         f"X.rechunk({{0: {max(largest, max(chunks))}}})")
    return tuple(int(n) for n in np.diff(new))


_MAX_DEFAULT_BLOCK = 1 << 30  # the default persisted block: at most 1 GiB of X (a task's memory)


def default_block_bytes(persisted=True):
    """The default size of the largest joined block.

    Blocks read from their source every round (not persisted: out of core) are joined every round,
    a copy of their rows: up to dask's ``array.chunk-size`` (128 MiB unless configured). Persisted
    blocks are joined once: up to 1 GiB (or that chunk size, if larger), and of about equal rows
    (:func:`balanced_chunks`). 0 (no joining) when the chunk size is configured as 0.

    Parameters
    ----------
    persisted : bool, default=True
        Whether the joined blocks are persisted.

    Returns
    -------
    int
    """
    low = dask.utils.parse_bytes(dask.config.get("array.chunk-size"))
    if low == 0 or not persisted:  # 0 configured: the blocks are kept as they are
        return low
    return max(low, _MAX_DEFAULT_BLOCK)


def block_rows(block_bytes, row_bytes, persisted=True):
    """Rows of the largest joined block: ``block_bytes`` of X (int, or a string such as
    ``"512MiB"``); 0: no joining; None: :func:`default_block_bytes`."""
    if block_bytes is None:
        block_bytes = default_block_bytes(persisted)
    if isinstance(block_bytes, str):
        block_bytes = dask.utils.parse_bytes(block_bytes)
    if isinstance(block_bytes, bool) or not isinstance(block_bytes, (int, np.integer)) \
            or block_bytes < 0:
        raise ValueError(f"block_bytes must be a number of bytes >= 0 (or a string such as "
                         f"'128MiB'), got {block_bytes!r}")
    return max(1, int(block_bytes) // row_bytes)


def balanced_chunks(n_rows, n_blocks, starts=None):
    """``n_blocks`` blocks of about equal rows, cut at the allowed rows nearest to equal shares.

    A round waits for its slowest worker: blocks of equal rows, as many as the worker threads
    (or a multiple), keep every thread busy for the same time; the blocks joined from chunks as
    they come (:func:`merged_chunks`) may leave one worker a block more than the other.

    Parameters
    ----------
    n_rows : int
        Rows of X (at least 1).
    n_blocks : int
        Blocks wanted (at least 1).
    starts : array-like of int, optional
        Ascending rows where a block may start (the queries' first rows, ``starts[0] == 0``);
        default: any row.

    Returns
    -------
    tuple of int
        The blocks' rows, all positive; fewer than ``n_blocks`` when there are fewer places to cut.
    """
    targets = n_rows * np.arange(1, n_blocks) / n_blocks
    if starts is None:
        cuts = np.ceil(targets - 0.5).astype(np.int64)  # the nearest row, the lower one on a tie
    else:
        inner = np.asarray(starts, dtype=np.int64)[1:]
        if inner.size == 0:
            return (int(n_rows),)
        j = np.searchsorted(inner, targets)
        below, above = inner[np.clip(j - 1, 0, inner.size - 1)], inner[np.clip(j, 0, inner.size - 1)]
        cuts = np.where(targets - below <= above - targets, below, above)
    bounds = np.unique(np.concatenate(([0], cuts, [n_rows])))
    return tuple(int(n) for n in np.diff(bounds))


def merged_chunks(chunks, max_rows, min_blocks):
    """Fewer, larger blocks: consecutive chunks joined while a block stays within ``max_rows``
    rows and ``ceil(n / min_blocks)`` (so that ``min_blocks`` tasks can still run at once).

    A task costs the scheduler milliseconds whatever its size; a block boundary between queries
    stays one (chunks are only joined, never split).

    Parameters
    ----------
    chunks : tuple of int
        Rows of each block (query-aligned, all positive).
    max_rows : int
        Rows of the largest block wanted (at least 1).
    min_blocks : int
        Blocks to keep at least, when there are that many.

    Returns
    -------
    tuple of int
    """
    cap = max(1, min(int(max_rows), -(-sum(chunks) // max(1, int(min_blocks)))))
    out = [chunks[0]]
    for size in chunks[1:]:
        if out[-1] + size <= cap:
            out[-1] += size
        else:
            out.append(size)
    return tuple(int(n) for n in out)


def block_homes(owners, nthreads):
    """Where each persisted block should live so that every worker thread has its share: a
    block stays on its worker while that worker holds fewer than its share, the others move to
    the workers furthest below theirs (the fewest moves).

    dask places a persisted block where its inputs were computed, which can be one worker for
    all of them (a loaded machine, inputs made on one worker); a round would then run on that
    worker's threads only.

    Parameters
    ----------
    owners : list of str or None
        The worker holding each block (None: unknown or lost).
    nthreads : dict of str to int
        Each worker's threads.

    Returns
    -------
    list of str
        Each block's worker; a worker with ``t`` threads holds at most
        ``t * ceil(n_blocks / total threads)`` blocks.
    """
    per_thread = -(-len(owners) // max(1, sum(nthreads.values())))
    room = {w: t * per_thread for w, t in sorted(nthreads.items())}
    homes = [None] * len(owners)
    for k, w in enumerate(owners):
        if room.get(w, 0) > 0:
            homes[k], room[w] = w, room[w] - 1
    for k in range(len(owners)):
        if homes[k] is None:
            w = max(room, key=room.get)  # the first of the emptiest, in address order
            homes[k], room[w] = w, room[w] - 1
    return homes


class BlockQueries:
    """A block's relevance and the row ranges of its informative queries.

    Attributes
    ----------
    relevant : ndarray of bool, shape (n_rows,)
    starts, ends : ndarray of int64
        Local row ranges of the queries with a positive and a negative row.
    n_queries, no_positive, no_negative : int
        All the block's queries, and the degenerate ones.
    """

    def __init__(self, relevant, starts, ends, n_queries, no_positive, no_negative):
        self.relevant = relevant
        self.starts, self.ends = starts, ends
        self.n_queries, self.no_positive, self.no_negative = n_queries, no_positive, no_negative

    def counts(self):
        """``(informative, queries, without a positive, without a negative)``."""
        return self.starts.shape[0], self.n_queries, self.no_positive, self.no_negative


def block_queries(y_b, qid_b, block):
    """Relevance (``y > 0``) and informative queries of an aligned block. Runs on a worker.

    Raises
    ------
    ValueError
        If ``y`` and ``qid`` differ in length in the block, or ``y`` is not numeric or not finite.
    """
    y_b, qid_b = np.asarray(y_b), np.asarray(qid_b)
    if y_b.shape != qid_b.shape:
        raise ValueError(f"{_where(block, qid_b.shape[0])}: y holds {y_b.shape[0]} rows but qid "
                         f"{qid_b.shape[0]}; the chunk sizes of y do not match its data")
    if y_b.dtype.kind not in "biuf":
        raise ValueError(f"y must hold numeric relevance, got dtype {y_b.dtype}")
    if y_b.dtype.kind == "f" and not np.all(np.isfinite(y_b)):
        row = block[1] + int(np.flatnonzero(~np.isfinite(y_b))[0])
        raise ValueError(f"y holds NaN or infinity in {_where(block, y_b.shape[0])}, first at "
                         f"row {row}")
    relevant = y_b > 0
    starts = _runs(qid_b)
    ends = np.append(starts[1:], qid_b.shape[0])
    n_pos = np.add.reduceat(relevant.astype(np.int64), starts)
    keep = (n_pos > 0) & (n_pos < ends - starts)
    return BlockQueries(relevant, starts[keep].astype(np.int64), ends[keep].astype(np.int64),
                        starts.shape[0], int(np.count_nonzero(n_pos == 0)),
                        int(np.count_nonzero(n_pos == ends - starts)))


def block_hinge(queries, oracle, normaliser):
    """The block's :class:`ScoreHinge`, normalised by the whole problem's ``Q``. Runs on a worker.

    Parameters
    ----------
    queries : BlockQueries
        With at least one informative query.
    oracle : Oracle
    normaliser : int

    Returns
    -------
    ScoreHinge
    """
    ranges = [np.arange(a, b, dtype=np.int64) for a, b in zip(queries.starts, queries.ends)]
    return ScoreHinge(queries.relevant, ranges, oracle, check_input=False, normaliser=normaliser)


@contextmanager
def task_threads():
    """The OpenMP threads of the compiled loops of one block task: one, unless ``OMP_NUM_THREADS``
    is set in the worker's environment (then as it says).

    dask runs a task on every worker thread at once, and its clusters give each worker thread a
    core (``LocalCluster`` splits the cores among workers and threads); a task's fused round on one
    thread per core would put several threads on each core. dask's nanny sets ``OMP_NUM_THREADS=1``
    in its workers for BLAS for the same reason. The limit is OpenMP's per-thread one
    (:class:`ssvm._threads.limited_threads`, what ``threadpool_limits(1, user_api="openmp")`` does to
    ssvm's kernels, in microseconds): other threads of the process keep theirs.
    """
    if os.environ.get("OMP_NUM_THREADS"):
        yield
        return
    with limited_threads(1):
        yield


def fused_round(X_b, hinge, fit_intercept):
    """The block's :class:`~ssvm.problem._fused.FusedRound`, or None. Runs on a worker.

    Made once per block and kept beside its hinge while the worker holds the same ``X_b`` (a
    persisted block; out of core, every round reads a new one). None when the oracle has no
    compiled form or ``X_b`` is not finite: the two-pass path then runs, and names the bad row.

    Parameters
    ----------
    X_b : ndarray
    hinge : ScoreHinge
    fit_intercept : bool

    Returns
    -------
    FusedRound or None
    """
    kept = _FUSED.get(hinge)
    if kept is None or kept[0] is not X_b:
        stacked = X_b[hinge.rows]  # a view: a block's queries are one range of its rows
        fused = FusedRound(stacked, hinge, fit_intercept)
        if not (fused.supported and np.all(np.isfinite(stacked))):
            fused = None
        kept = (X_b, fused)
        _FUSED[hinge] = kept
    return kept[1]
