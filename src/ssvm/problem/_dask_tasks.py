"""The tasks of a round of :class:`~ssvm.problem.dask_space.DaskStructuredHinge`, run on the
workers: a block's in-memory problem, its share of the plane or its per-query planes, and the
error that names a block's non-finite rows (shared by the other dask problems)."""

import asyncio
import time
from functools import partial

import numpy as np

from ._dask_blocks import fused_round, task_threads
from .weight_space import StructuredHinge

__all__ = ["BlockRounds", "block_plane", "block_planes", "non_finite_error", "query_counts"]


def query_counts(queries):
    """The query counts of a block's :func:`~ssvm.problem._dask_blocks.block_queries`."""
    return queries.counts()


def _block_problem(X_b, hinge, fit_intercept, block):
    """The in-memory problem of one block (its rows and its kept hinge)."""
    k, row0 = block
    if X_b.shape[0] != hinge.n_samples:
        raise ValueError(f"block {k} of X (from row {row0}) holds {X_b.shape[0]} rows but its "
                         f"chunk says {hinge.n_samples}: the chunk sizes of X do not match its data")
    return StructuredHinge.from_score_hinge(X_b, hinge, fit_intercept=fit_intercept)


def _counters(problem, fused_seconds=0.0, fused_oracle_seconds=0.0):
    """``(matvec seconds, oracle seconds, oracle calls, fused seconds, fused oracle seconds)`` so
    far. The block's hinge lives on between rounds and keeps counting: a task reports the
    difference its own calls made (the fused round's own times are passed in as such)."""
    return np.array([problem.matvec_seconds, problem.oracle_seconds, problem.n_oracle_calls,
                     fused_seconds, fused_oracle_seconds])


def non_finite_error(X_rows, first_row, block, n_rows):
    """The ValueError for non-finite scores of the rows ``X_rows`` of a block.

    Parameters
    ----------
    X_rows : ndarray
        The rows whose scores were not finite (all of a block's or some); ``first_row`` is the
        (global) number of the first.
    first_row : int
    block : (int, int)
        The block's number and first row.
    n_rows : int
        The block's number of rows.

    Returns
    -------
    ValueError
        Naming the block, its rows and the first row with NaN or infinity, or saying the scores
        overflow if ``X_rows`` is finite.
    """
    k, row0 = block
    where = f"block {k} (rows {row0}:{row0 + n_rows})"
    bad = np.flatnonzero(~np.all(np.isfinite(X_rows), axis=1))
    if bad.size:
        return ValueError(f"X holds NaN or infinity in {where}, first at row {first_row + bad[0]}")
    return ValueError(f"the scores X @ w overflow in {where}: scale the features down")


def _checked_scores(problem, w, block):
    """The block's stacked scores, or a ValueError naming the block and the first bad row."""
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite scores are reported below
        s = problem.stacked_scores(w)
    if not np.all(np.isfinite(s)):
        rows = problem.score_hinge.rows  # a slice: the queries of a block are ranges of rows
        raise non_finite_error(problem.X[rows], block[1] + rows.start, block, problem.n_samples)
    return s


def block_plane(X_b, hinge, block, w, fit_intercept):
    """One block's share of the plane at ``w``: the task of a round.

    The fused round (:func:`~ssvm.problem._dask_blocks.fused_round`, one pass over ``X_b``, on
    :func:`~ssvm.problem._dask_blocks.task_threads`) when the oracle has a compiled form, else (or
    on non-finite scores, to name the bad row) the two-pass path.

    Returns
    -------
    tuple
        ``(H_b, offset_b, g_b, counters)``, the counters as :func:`_counters` differences.
    """
    problem = _block_problem(X_b, hinge, fit_intercept, block)
    before = _counters(problem)
    fused = fused_round(X_b, hinge, fit_intercept)
    spent = (0.0, 0.0)  # the fused round's wall time and its oracles' (charged to the hinge too)
    if fused is not None:
        t0, oracle0 = time.perf_counter(), fused.oracle_seconds
        with task_threads():  # one OpenMP thread per dask worker thread
            H, offset, g = fused.plane(w)
        spent = (time.perf_counter() - t0, fused.oracle_seconds - oracle0)
        if np.isfinite(H) and np.all(np.isfinite(g)):
            return H, offset, g, _counters(problem, *spent) - before
    H, c, offset = problem.hinge_at_scores(_checked_scores(problem, w, block))
    g = problem.coefficients_to_subgradient(c)
    return H, offset, g, _counters(problem, *spent) - before


def block_planes(X_b, hinge, block, queries, w, fit_intercept):
    """Per-query planes ``(delta, G)`` of some of a block's queries (local numbers)."""
    problem = _block_problem(X_b, hinge, fit_intercept, block)
    before = _counters(problem)
    _checked_scores(problem, w, block)
    delta, G = problem.planes(w, queries)
    return delta, G, _counters(problem) - before


class BlockRounds:
    """A block's rounds on its worker, called by the client directly: a dask actor.

    A submitted task's round trip goes client → scheduler → worker → scheduler → client, and the
    result is then fetched: milliseconds a round on a loaded machine, whatever the block's size.
    An actor's method call goes to its worker and back. The actor keeps the block's ``X_b`` and
    hinge (the worker's own objects: it is created where ``X_b`` lies) and runs
    :func:`block_plane` in the worker's thread pool, as a task would run (an actor's plain methods
    share one thread per worker). An actor is not recomputed when its worker is lost: the caller
    falls back to submitted tasks then (:class:`~ssvm.problem.dask_space.DaskStructuredHinge`).

    Parameters
    ----------
    X_b : ndarray
    hinge : ScoreHinge
    fit_intercept : bool
    block : (int, int)
        The block's number and first row.
    """

    def __init__(self, X_b, hinge, fit_intercept, block):
        self._args = (X_b, hinge, fit_intercept, block)

    async def plane(self, w):
        """:func:`block_plane` at ``w``, in the worker's thread pool."""
        from distributed import get_worker

        X_b, hinge, fit_intercept, block = self._args
        return await asyncio.get_running_loop().run_in_executor(
            get_worker().executors["default"], partial(block_plane, X_b, hinge, block, w, fit_intercept))
