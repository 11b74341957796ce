"""Where a dask problem's blocks live and how a pass over them runs: the plumbing that the three dask
problems (:class:`~ssvm.problem.dask_space.DaskStructuredHinge`,
:class:`~ssvm.problem.dask_giant.DaskGiantHinge`, :class:`~ssvm.problem.dask_gathered.DaskGatheredHinge`)
share.

* :func:`place`: the one way their arrays are persisted — ``X`` held in the cluster's memory once
  (by default under a ``dask.distributed`` client), per-row arrays beside it (labels) sent once,
  and on a cluster the blocks spread over the workers, row block ``k`` of each on one worker.
* :class:`ClusterBlocks`: a problem's blocks (futures of the persisted blocks on a cluster), the
  client, the passes — one task per block, :func:`block_pass` — and the round statistics.
* :class:`DaskProblem`: the problems' base; its statistics (``n_rounds``, ``result_bytes``, ...)
  are its :class:`ClusterBlocks`' counters.

Imported only when dask is used (the ``dask`` extra).
"""

import pickle
import time
from contextlib import contextmanager

import dask
import dask.array as da

from ._dask_blocks import block_homes
from .protocol import Problem

__all__ = ["ClusterBlocks", "DaskProblem", "Statistic", "block_futures", "block_pass", "distributed_client", "place",
           "shareable", "spread_blocks", "will_persist"]

_INLINE_BYTES = 1 << 16  # a larger argument shared by a round's tasks is scattered once, not sent per task


def _payload_bytes(value):
    """The bytes of an argument's arrays (a tuple's summed)."""
    if isinstance(value, tuple):
        return sum(_payload_bytes(v) for v in value)
    return getattr(value, "nbytes", 0)


def shareable(client, value):
    """``value`` to pass to every task of a submitted round: itself when small, else a future of
    it on every worker (scattered once).

    Parameters
    ----------
    client : distributed.Client
    value : object

    Returns
    -------
    object or distributed.Future
    """
    if _payload_bytes(value) <= _INLINE_BYTES:
        return value
    return client.scatter([value], broadcast=True, hash=False)[0]


def block_pass(client, task, per_block, shared=(), keep=False):
    """One task per block, ``task(*args, *shared)`` for each ``args`` in ``per_block``: submitted on
    a cluster (``client``; each shared argument inline or scattered once, :func:`shareable`), else
    by ``dask.compute`` (each shared argument one key, moved to a worker once).

    Parameters
    ----------
    client : distributed.Client or None
    task : callable
    per_block : list of tuple
    shared : tuple, default=()
    keep : bool, default=False
        Leave the results where they are (futures, or persisted delayed values) for the passes
        that follow, instead of bringing them to the client.

    Returns
    -------
    list or tuple
        The results in the order of ``per_block`` (or, with ``keep``, where they are).
    """
    if client is not None:
        shared = [shareable(client, a) for a in shared]
        futures = [client.submit(task, *args, *shared, pure=False) for args in per_block]
        return futures if keep else client.gather(futures)
    shared = [dask.delayed(a) for a in shared]
    tasks = [dask.delayed(task, pure=False)(*args, *shared) for args in per_block]
    return dask.persist(*tasks) if keep else dask.compute(*tasks)


def block_futures(client, blocks, n_data=2):
    """``blocks`` — tuples whose first ``n_data`` items are delayed values of persisted blocks —
    with those items as futures, so that a round can submit its tasks on them.

    Parameters
    ----------
    client : distributed.Client
    blocks : list of tuple
    n_data : int, default=2

    Returns
    -------
    list of tuple
    """
    columns = [client.compute([b[i] for b in blocks]) for i in range(n_data)]
    return [(*data, *b[n_data:]) for data, b in zip(zip(*columns), blocks)]


def distributed_client():
    """The ``dask.distributed`` client that ``dask.compute`` uses now, or None.

    Returns
    -------
    distributed.Client or None
    """
    try:
        from distributed import default_client

        client = default_client()
    except (ImportError, ValueError):
        return None
    return client if getattr(dask.base.get_scheduler(), "__self__", None) is client else None


def will_persist(persist):
    """Whether :func:`place` persists ``X``: ``persist``, or if it is None whether a
    ``dask.distributed`` client is up."""
    return distributed_client() is not None if persist is None else bool(persist)


def _same(x):
    return x


def spread_blocks(client, *arrays):
    """Persisted dask ``arrays`` with the same row blocks, block ``k`` of each moved to the worker
    that :func:`~ssvm.problem._dask_blocks.block_homes` gives block ``k`` of the first, so that
    every worker thread holds its share of the rows (waits until they are there).

    The blocks of an array with any block to move are tasks on the old blocks (which are then
    released): a worker lost later has its blocks recomputed from the source, as any persisted
    block's.

    Parameters
    ----------
    client : distributed.Client
    *arrays : dask.array.Array
        Persisted on ``client``'s workers, chunked along rows only.

    Returns
    -------
    list of dask.array.Array
        Each array itself when none of its blocks moved, else an array of the moved blocks.
    """
    from dask.core import flatten
    from distributed import futures_of, wait

    blocks = []
    for a in arrays:
        by_key = {f.key: f for f in futures_of(a)}
        blocks.append([by_key[k] for k in flatten(a.__dask_keys__())])
    every = [f for fs in blocks for f in fs]
    wait(every)
    where = client.who_has(every)
    homes = block_homes([next(iter(where.get(f.key, ())), None) for f in blocks[0]], client.nthreads())
    out = []
    for a, fs in zip(arrays, blocks):
        if all(home in where.get(f.key, ()) for f, home in zip(fs, homes)):
            out.append(a)
            continue
        # every block under a new name (the ones in place stay: a task on their worker), so that
        # the array's keys are its blocks' keys, as a persisted array's are
        name = "spread-" + a.name
        keys = [(name, *key[1:]) for key in flatten(a.__dask_keys__())]
        moved = [client.submit(_same, f, key=key, workers=[home], allow_other_workers=True)
                 for f, key, home in zip(fs, keys, homes)]
        wait(moved)
        out.append(da.Array(dict(zip(keys, moved)), name, a.chunks, dtype=a.dtype, meta=a._meta))
    return out


def place(persist, X, *beside):
    """A dask problem's arrays where its passes read them, and the client that runs those passes.

    ``X`` is persisted once if ``persist`` is True, or if it is None and a ``dask.distributed``
    client is up (else every pass reads its blocks from their source: out of core). Under a
    ``dask.distributed`` client the per-row arrays ``beside`` (the labels) are sent to the cluster
    once, not with every pass; when ``X`` is persisted there, block ``k`` of every array is moved
    to one worker (:func:`spread_blocks`). Returns when they are in the workers' memory.

    Parameters
    ----------
    persist : bool or None
    X : dask.array.Array
    *beside : dask.array.Array
        With the row chunks of ``X``.

    Returns
    -------
    arrays : list of dask.array.Array
        ``X``, then ``beside``, where they now are.
    client : distributed.Client or None
        The client whose workers hold the persisted blocks of ``X`` (the passes submit their tasks
        there), or None (the passes run by ``dask.compute``).
    """
    client, persisted = distributed_client(), will_persist(persist)
    if persisted:
        X = X.persist()
    if client is not None:
        beside = [a.persist() for a in beside]
    if client is not None and persisted:
        return spread_blocks(client, X, *beside), client
    if client is not None and beside:
        from distributed import futures_of, wait

        wait(futures_of(list(beside)))
    return [X, *beside], None


class ClusterBlocks:
    """A dask problem's blocks where they live, the client, and the passes over them with their
    statistics.

    Parameters
    ----------
    blocks : list of tuple
        One tuple per block, its first ``n_data`` items the block's data as delayed values (of
        persisted blocks, or read from their source by every pass), then what else its tasks take
        (its number and first row, ...).
    client : distributed.Client or None
        The client whose workers hold the persisted blocks (:func:`place`): every pass submits one
        task per block on the blocks' futures, made here (no graph is built, optimised and shipped
        a pass, as a ``dask.compute`` of delayed calls does); None: every pass is a
        ``dask.compute`` under the scheduler in use.
    n_data : int, default=1

    Attributes
    ----------
    blocks : list of tuple
        As given, the data as futures on a cluster (in the workers' memory on return).
    client : distributed.Client or None
    n_rounds : int
        Rounds (a plane, or the planes of some queries).
    n_passes : int
        Passes over the blocks (one task or actor call per block each).
    result_bytes : int
        Cumulative size (pickled) of what the passes brought back to the client.
    round_seconds, matvec_seconds, oracle_seconds, fused_seconds, fused_oracle_seconds : float
        Cumulative times, as the problem that owns the blocks defines them.
    n_oracle_calls : int
    """

    def __init__(self, blocks, client, n_data=1):
        self.client = client
        self.blocks = list(blocks)
        if client is not None and self.blocks:
            from distributed import wait

            self.blocks = block_futures(client, self.blocks, n_data)
            wait([f for b in self.blocks for f in b[:n_data]])  # set-up ends before round one
        self.n_rounds = self.n_passes = self.result_bytes = self.n_oracle_calls = 0
        self.round_seconds = self.matvec_seconds = self.oracle_seconds = 0.0
        self.fused_seconds = self.fused_oracle_seconds = 0.0

    def run(self, task, per_block, shared=(), keep=False):
        """One pass, ``task(*args, *shared)`` for each block's ``args`` in ``per_block``
        (:func:`block_pass` on the client): the results, their bytes counted, or with ``keep`` the
        results left where they are (on the workers) for the passes that follow.

        Parameters
        ----------
        task : callable
        per_block : list of tuple
        shared : tuple, default=()
        keep : bool, default=False

        Returns
        -------
        list or tuple
        """
        parts = block_pass(self.client, task, per_block, shared, keep)
        if keep:
            self.n_passes += 1
            return parts
        return self.received(parts)

    def received(self, parts):
        """Count a pass whose results ``parts`` came to the client (by :meth:`run`, or by the
        blocks' actors); returns ``parts``."""
        self.n_passes += 1
        self.result_bytes += len(pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL))
        return parts

    @contextmanager
    def round(self):
        """Time a round (its wall time on the client) and count it, if it ends without an error."""
        t0 = time.perf_counter()
        yield
        self.round_seconds += time.perf_counter() - t0
        self.n_rounds += 1


class Statistic:
    """A dask problem's statistic: its :class:`ClusterBlocks`' counter of the same name."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, problem, owner=None):
        return self if problem is None else getattr(problem.cluster, self.name)

    def __set__(self, problem, value):
        setattr(problem.cluster, self.name, value)


class DaskProblem(Problem):
    """A problem over the blocks of a dask array: its ``cluster`` (:class:`ClusterBlocks`) holds the
    blocks, the client and the statistics, which read as the problem's own attributes."""

    cluster = None  # ClusterBlocks, set by the problem's set-up
    n_rounds = Statistic()
    n_passes = Statistic()
    result_bytes = Statistic()
    round_seconds = Statistic()
    matvec_seconds = Statistic()
    oracle_seconds = Statistic()
    n_oracle_calls = Statistic()

    @property
    def n_blocks(self):
        """Blocks the passes run on (one task or actor call each)."""
        return len(self.cluster.blocks)
