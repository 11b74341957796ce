"""The structured hinge over a dask array: one task per block of rows per round (docs/design.md §6).

A block of rows holds whole queries. Each round sends ``w`` out and runs one task per block (on a
``dask.distributed`` cluster, a call of the block's actor, which skips the scheduler): the
block's scores ``X_b w``, its score-space hinge (a :class:`~ssvm.problem.ScoreHinge` kept on the
worker between rounds) and the transposed product ``X_bᵀ c_b`` — the block's share ``(H_b,
offset_b, g_b)`` of the plane, ``d + 2`` numbers, by the fused round of :mod:`ssvm.problem._fused`
(one pass over ``X_b``) when the oracle has a compiled form. The scores never leave the task that
made them. Small chunks of ``X`` are joined into fewer, larger blocks (``block_bytes``).
The client adds the shares up in block order, in float64, and the solver (the dual QP, the
stopping rule, the history) is the in-memory code: a fit on a dask array follows the iterates of
the in-memory fit on the same data, up to the rounding of the sums.

Under a ``dask.distributed`` client, ``X`` is persisted on the workers once; a worker that is lost
has its blocks recomputed from their source by dask (that round runs as tasks, and the actors are
made again where the blocks are then). Under dask's local schedulers ``X`` is not
persisted: every round reads its blocks from their source (out of core from a zarr store or a
memory-mapped ``.npy``); call ``X.persist()`` first to hold them in memory.

Imported only when dask is used (the ``dask`` extra).
"""

import logging

import dask
import dask.array as da
import numpy as np

from .._queries import check_informative
from ._dask_blocks import (
    aligned_chunks,
    balanced_chunks,
    block_hinge,
    block_queries,
    block_rows,
    default_block_bytes,
    merged_chunks,
    qid_runs,
    query_starts,
)
from ._dask_cluster import ClusterBlocks, DaskProblem, Statistic, distributed_client, place, will_persist
from ._dask_tasks import BlockRounds, block_plane, block_planes, query_counts
from .protocol import Plane, Planes

__all__ = ["DaskStructuredHinge", "check_dask_features", "dask_rows", "joined_chunks"]

logger = logging.getLogger(__name__)


_LOST = (OSError, RuntimeError)  # an actor's worker lost: OSError, or RuntimeError("Worker holding Actor was lost")


def block_actors(client, blocks, fit_intercept):
    """A :class:`~ssvm.problem._dask_tasks.BlockRounds` actor per block, each on a worker that
    holds the block's ``X_b``, or None if one cannot be made (a worker lost meanwhile).

    Parameters
    ----------
    client : distributed.Client
    blocks : list of (Future, Future, (int, int))
        The blocks' ``X_b`` and hinge futures, and their number and first row.
    fit_intercept : bool

    Returns
    -------
    list of distributed.Actor or None
    """
    try:
        where = client.who_has([x for x, _, _ in blocks])
        futures = [client.submit(BlockRounds, x, hinge, fit_intercept, info, actor=True, pure=False,
                                 workers=list(where.get(x.key, ())) or None)
                   for x, hinge, info in blocks]
        return client.gather(futures)
    except _LOST:
        return None


def check_dask_features(X):
    """``X`` as a dense, row-chunked float32 or float64 dask array (lazily; nothing computed).

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)

    Returns
    -------
    dask.array.Array
        float32 and float64 kept, integer and bool as float64; one chunk of columns.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, has unknown chunk sizes, no rows, blocks that are not numpy arrays,
        or a dtype that is not real numbers.
    """
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    if any(np.isnan(c) for c in X.chunks[0] + X.chunks[1]):
        raise ValueError("X has unknown chunk sizes (from boolean indexing or from_delayed?); "
                         "call X.compute_chunk_sizes() first")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must have rows and columns, got shape {X.shape}")
    if not isinstance(X._meta, np.ndarray):
        raise ValueError(f"the blocks of X must be dense numpy arrays, got "
                         f"{type(X._meta).__name__}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must hold real numbers, got dtype {X.dtype}")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return X.rechunk({1: -1}) if len(X.chunks[1]) > 1 else X


def dask_rows(v, name, n, chunks):
    """``y`` or ``qid`` (numpy or dask) as a dask array with the row chunks ``chunks`` (lazily).

    Parameters
    ----------
    v : array-like or dask.array.Array
    name : str
        For the messages.
    n : int
        Rows of ``X``.
    chunks : tuple of int
        Row chunks of ``X``.

    Returns
    -------
    dask.array.Array

    Raises
    ------
    ValueError
        If ``v`` is not 1-D, has unknown chunk sizes or not ``n`` entries.
    """
    if isinstance(v, da.Array):
        if v.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {v.shape}")
        if any(np.isnan(c) for c in v.chunks[0]):
            raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() "
                             "first")
    else:
        v = np.asarray(v)
        if v.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {v.shape}")
    if v.shape[0] != n:
        raise ValueError(f"{name} has {v.shape[0]} entries but X has {n} rows")
    return v.rechunk((chunks,)) if isinstance(v, da.Array) else da.from_array(v, chunks=(chunks,))


def _threads():
    """Worker threads of the ``distributed`` client in use, else this machine's cores."""
    client = distributed_client()
    return sum(client.nthreads().values()) if client is not None else dask.system.CPU_COUNT


def joined_chunks(chunks, row_bytes, block_bytes, persist, runs=None):
    """The blocks a dask problem trains on, from the chunks of ``X`` (and its queries' runs).

    By default, when the blocks are persisted (joined once): as many blocks as worker threads (a
    multiple of that when a block would exceed 1 GiB), of about equal rows, cut where a query
    starts (:func:`~ssvm.problem._dask_blocks.balanced_chunks`) — the fewest tasks a round can
    have with every thread busy for the same time (a task costs the scheduler and the client
    milliseconds whatever its size). Otherwise the chunks aligned to whole queries
    (:func:`~ssvm.problem._dask_blocks.aligned_chunks`) and joined by
    :func:`~ssvm.problem._dask_blocks.merged_chunks` up to
    :func:`~ssvm.problem._dask_blocks.block_rows` rows, keeping a block per worker thread.

    Parameters
    ----------
    chunks : tuple of int
        Row counts of the chunks of ``X``, all positive.
    row_bytes : int
        Bytes of a row of ``X``.
    block_bytes : int, str or None
        As the problems' parameter.
    persist : bool or None
        As the problems' parameter.
    runs : list of (values, starts), optional
        :func:`~ssvm.problem._dask_blocks.qid_runs` of every chunk; default: one query, a block
        may start at any row.

    Returns
    -------
    tuple of int

    Raises
    ------
    ValueError
        As :func:`~ssvm.problem._dask_blocks.aligned_chunks`, for queries that are not
        consecutive or, when the chunks are kept or joined, do not fit in a chunk.
    """
    threads = _threads()
    persisted = will_persist(persist)
    rows = block_rows(block_bytes, row_bytes, persisted)
    if block_bytes is None and persisted and default_block_bytes(persisted) > 0:
        n = sum(chunks)
        starts = None if runs is None else query_starts(runs, chunks)[1]
        return balanced_chunks(n, threads * -(-n // (threads * rows)), starts)
    return merged_chunks(chunks if runs is None else aligned_chunks(runs, chunks), rows, threads)


class DaskStructuredHinge(DaskProblem):
    """The structured hinge ``H(w) = (1/Q) Σ_q H_q(w)`` of queries in a dask array.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        Dense features, chunked by rows (float32 kept; see :func:`check_dask_features`). Must be
        finite: non-finite values are found in the rounds, in the blocks that hold them.
    y : array-like or dask array of shape (n_samples,)
        Relevance; ``y > 0`` is relevant (bool and 0/1 labels as they are).
    qid : array-like or dask array of shape (n_samples,)
        Query id of every row; the rows of each query must be consecutive. A block boundary
        inside a query moves back to the query's first row (``X`` is re-chunked); a query larger
        than a block is an error. Queries without a positive or without a negative are skipped,
        with a warning.
    oracle : Oracle or callable
        Loss-augmented inference (:func:`ssvm.losses.get_oracle`).
    fit_intercept : bool, default=False
        As in :class:`~ssvm.problem.StructuredHinge`.
    persist : bool, optional
        Hold the blocks of ``X`` in the cluster's memory; default: under a ``dask.distributed``
        client only.
    block_bytes : int or str, optional
        Consecutive blocks are joined up to this size of ``X`` per block (a task costs the
        scheduler and the client milliseconds whatever its size), keeping at least one block per
        worker thread. Default, when the blocks are persisted (joined once): one block per worker
        thread (a multiple of that when a block would exceed 1 GiB), of about equal rows, cut
        between queries; when they are read from their source every round (joined every round: a
        copy), up to dask's ``array.chunk-size`` (128 MiB unless configured)
        (:func:`joined_chunks`). 0 keeps the blocks as they are (aligned to whole queries).

    Attributes
    ----------
    X : dask.array.Array
        The features, re-chunked to whole queries (and persisted).
    chunks : tuple of int
        Rows of each block.
    n_blocks : int
        Blocks with at least one query trained on (one task each per round).
    n_features, n_queries, n_samples : int
    n_skipped_queries : int
        Queries without a positive or without a negative row (not trained on).
    matvec_seconds, oracle_seconds : float
        Cumulative time in the products (outside fused rounds) and the oracles (inside fused rounds
        too), summed over the blocks' tasks (with several workers, more than the wall time; inside a
        fused round, over its threads: see :class:`~ssvm.problem.StructuredHinge`).
    fused_seconds : float
        Cumulative time of the blocks' fused rounds (products and oracles together), summed over
        the tasks; its oracles' part is in ``oracle_seconds`` too.
    fused_oracle_seconds : float
        The part of ``oracle_seconds`` spent inside fused rounds (subtract it once from a sum of
        the counters above).
    n_oracle_calls : int
        Cumulative number of per-query oracle calls.
    round_seconds : float
        Cumulative wall time of the rounds, as the client sees them.
    n_rounds, n_passes : int
        Rounds, and passes over the blocks (one a round).
    result_bytes : int
        Cumulative size (pickled) of what the tasks sent back.
    cluster : ClusterBlocks
        The blocks on the cluster, the client and these statistics
        (:class:`~ssvm.problem._dask_cluster.ClusterBlocks`).
    """

    fused_seconds = Statistic()
    fused_oracle_seconds = Statistic()

    def __init__(self, X, y, qid, oracle, *, fit_intercept=False, persist=None, block_bytes=None):
        X = check_dask_features(X)
        n, d = X.shape
        chunks = tuple(int(c) for c in X.chunks[0] if c > 0)
        y, qid = dask_rows(y, "y", n, chunks), dask_rows(qid, "qid", n, chunks)
        row0 = np.concatenate(([0], np.cumsum(chunks)[:-1]))
        runs = list(dask.compute(*[dask.delayed(qid_runs)(q, size, (k, int(r)))
                                   for k, (q, size, r) in enumerate(zip(qid.to_delayed(), chunks, row0))]))
        chunks = joined_chunks(chunks, d * X.dtype.itemsize, block_bytes, persist, runs)
        if chunks != X.chunks[0]:
            logger.info("re-chunked X to whole queries: %d blocks", len(chunks))
            X, y, qid = X.rechunk({0: chunks}), y.rechunk((chunks,)), qid.rechunk((chunks,))
        row0 = np.concatenate(([0], np.cumsum(chunks)[:-1]))
        blocks = [(k, int(r)) for k, r in enumerate(row0)]
        meta = dask.persist(*[dask.delayed(block_queries)(yb, qb, b)
                              for yb, qb, b in zip(y.to_delayed(), qid.to_delayed(), blocks)])
        counts = np.array(dask.compute(*[dask.delayed(query_counts)(m) for m in meta]))
        kept, total, no_pos, no_neg = counts.sum(axis=0)
        check_informative(int(total), int(no_pos), int(no_neg))
        active = np.flatnonzero(counts[:, 0] > 0)
        self.n_queries = int(kept)
        self.n_skipped_queries = int(total - kept)
        hinges = dask.persist(*[dask.delayed(block_hinge)(meta[k], oracle, self.n_queries)
                                for k in active])
        (X,), client = place(persist, X)
        x_blocks = X.to_delayed().ravel()
        # on a cluster, a round of planes calls each block's actor (BlockRounds), other rounds submit
        # one task per block on the blocks' futures; an actor's call skips the scheduler (the client
        # times are measured in docs/scaling.md)
        self.cluster = ClusterBlocks([(x_blocks[k], h, blocks[k]) for k, h in zip(active, hinges)], client,
                                     n_data=2)
        self._actors = None  # made at the first round, remade at the next after a worker is lost
        self._query_offsets = np.concatenate(([0], np.cumsum(counts[active, 0])))
        self.X = X
        self.chunks = chunks
        self.fit_intercept = bool(fit_intercept)
        self.n_samples = n
        self.n_features = d + self.fit_intercept

    def _round(self, task, w, per_block):
        """Run ``task(X_b, hinge_b, block, *args, w, fit_intercept)`` for ``(k, args)`` in
        ``per_block``; the results in that order, with the statistics updated."""
        cluster = self.cluster
        with cluster.round():
            parts = self._actor_round(w) if task is block_plane else None
            if parts is None:
                parts = cluster.run(task, [(*cluster.blocks[k], *args) for k, args in per_block],
                                    (w, self.fit_intercept))
            else:
                cluster.received(parts)
        matvec, oracle, calls, fused, fused_oracle = sum(p[-1] for p in parts)
        cluster.matvec_seconds += matvec
        cluster.oracle_seconds += oracle
        cluster.fused_seconds += fused
        cluster.fused_oracle_seconds += fused_oracle
        cluster.n_oracle_calls += int(calls)
        return [p[:-1] for p in parts]

    def _actor_round(self, w):
        """The blocks' shares of the plane by their actors' calls (on a cluster, every block in the
        round), or None: no cluster, or an actor's worker was lost (the round then runs as
        submitted tasks, which dask recomputes, and the actors are remade at the next round)."""
        client = self.cluster.client
        if client is None:
            return None
        if self._actors is None:
            self._actors = block_actors(client, self.cluster.blocks, self.fit_intercept)
            if self._actors is None:
                return None
        try:
            calls = [actor.plane(w) for actor in self._actors]
            return [call.result() for call in calls]
        except _LOST as error:
            if isinstance(error, RuntimeError) and "Actor" not in str(error):
                raise
            logger.info("a worker holding a block's actor was lost (%s): the round runs as tasks", error)
            self._actors = None
            return None

    def plane(self, w):
        """:meth:`Problem.plane` by one task per block, the shares added in block order (float64).

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        Plane
            As :meth:`Problem.plane`.
        """
        parts = self._round(block_plane, self._check_w(w), [(k, ()) for k in range(self.n_blocks)])
        H, offset, g = 0.0, 0.0, np.zeros(self.n_features)
        for H_b, offset_b, g_b in parts:
            H += H_b
            offset += offset_b
            g += g_b
        return Plane(H, offset, g)

    def planes(self, w, queries=None):
        """:meth:`Problem.planes` by one task per block that holds some of the ``queries``.

        Queries are numbered block after block, in row order (the in-memory order for consecutive
        queries).

        Parameters
        ----------
        w : ndarray of shape (n_features,)
        queries : sequence of int, optional
            Query numbers (default: all, in order).

        Returns
        -------
        Planes
            As :meth:`Problem.planes`.
        """
        w, idx = self._check_w(w), self._query_numbers(queries)
        delta, G = np.zeros(idx.size), np.zeros((idx.size, self.n_features))
        if idx.size == 0:
            return Planes(delta, G)
        block = np.searchsorted(self._query_offsets, idx, side="right") - 1
        involved = np.unique(block)
        where = [np.flatnonzero(block == k) for k in involved]
        parts = self._round(block_planes, w, [
            (k, (idx[pos] - self._query_offsets[k],)) for k, pos in zip(involved, where)])
        for pos, (delta_b, G_b) in zip(where, parts):
            delta[pos], G[pos] = delta_b, G_b
        return Planes(delta, G)
