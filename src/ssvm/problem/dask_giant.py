"""One query spread over the blocks of a dask array, without its scores coming to the client.

The whole training set as one query (classification without ``qid``) fits in no block. For AP and
NDCG (binary, log2 discount) the loss-augmented ranking has a structure that lets each block
compute its own coefficients (Yue et al. 2007; Mohapatra et al., Observation 4): with the
negatives in the oracles' order — ``(−score, row)`` ascending, the j-th at rank ``r_j`` (``1 +``
the positives above it) — the best rank ``r_j = argmax_r f_j(r)`` depends only on the
negative's score ``s_j``, its position ``j`` and the ``P`` positive scores, and it is
non-decreasing in ``j``. So the answer is, for each rank ``r`` in use, the key of the last negative
of that rank: ``≤ P + 1`` thresholds. A round:

1. every block computes its scores (kept on its worker) and sends back its positives' scores and
   rows (``O(P)`` numbers), its number of negatives and its first and last negative key;
2. a distributed selection finds the thresholds: the client knows the rank at some negatives (at
   first the query's first and last); between two known negatives of different ranks it asks every
   block for a few evenly spaced keys inside (*samples*, at most ``budget`` a pass in all), then
   every block for how many of its negatives come at or before each sample (*counts*: the
   sample's global position ``j``); the client evaluates ``r_j`` there, within the ranks of the
   interval's ends (monotonicity), and repeats until no interval of two different ranks holds a
   negative. Each pass moves ``O(budget)`` numbers per block, whatever the block's size;
3. every block gets the thresholds and its positives' coefficients and sends back
   ``X_bᵀ c_b`` and ``s_b · c_b``: ``d + 2`` numbers.

The 0-1 loss is per row: one pass, each block's ``X_bᵀ c_b``, ``s_b · c_b`` and its violations.
Precision at k takes three passes: every block keeps its scores and sends its k first rows in the
oracle's order of choice (``O(k)`` numbers); the client merges them into the query's k first and
sends back the k-th, and every block chooses its rows at or before it and sends ``X_bᵀ c_b`` and
``s_b · c_b``. Which of the three an oracle takes is its giant form (:attr:`Oracle.giant
<ssvm.losses.Oracle.giant>`, from the loss table's ``giant``: ``"ranked"``, ``"per_row"``,
``"top_k"``). Oracles without one (other losses, user oracles, the latent detector's pooled oracle)
use :class:`~ssvm.problem.dask_gathered.DaskGatheredHinge`.
"""

import time

import dask
import numpy as np

from ..losses.classification import topk_weights
from ..losses.oracle import as_oracle
from ._dask_cluster import ClusterBlocks, DaskProblem, place
from ._giant_blocks import (
    block_gradient,
    block_ranking,
    block_relevance,
    block_step,
    block_summary,
    block_top,
    block_top_gradient,
    block_top_keys,
    block_zero_one,
    relevant_count,
)
from ._giant_query import ranks_at
from .dask_space import check_dask_features, dask_rows, joined_chunks
from .protocol import Plane, Planes

__all__ = ["DaskGiantHinge", "giant_form"]

_BUDGET = 4096  # samples per selection pass, over all blocks


def giant_form(oracle):
    """The form in which :class:`DaskGiantHinge` computes ``oracle``'s hinge, or None if it cannot.

    Parameters
    ----------
    oracle : Oracle or callable

    Returns
    -------
    GiantForm or None
        The oracle's :attr:`~ssvm.losses.Oracle.giant` (the loss table's ``giant``: AP and NDCG with
        the log2 discount, the graded NDCG oracle too, the targets being binary; 0-1; precision@k),
        or None (another loss or a user's callable).
    """
    return as_oracle(oracle).giant


def _key_order(ms, rows):
    return np.lexsort((rows, ms))


class DaskGiantHinge(DaskProblem):
    """The structured hinge of one query made of all the rows of a dask array.

    Parameters
    ----------
    X : dask.array.Array of shape (n, n_features)
        Dense features (see :func:`~ssvm.problem.dask_space.check_dask_features`). Must be finite.
    y : array-like or dask array of shape (n,)
        Relevance (bool, or numbers of which ``y > 0`` are relevant), with a positive and a
        negative row: checked and counted on the blocks, never brought to the client.
    oracle : Oracle
        An exact oracle of AP, NDCG (log2 discount), 0-1 or precision@k (one with a giant form, see
        :func:`giant_form`).
    fit_intercept : bool, default=False
        As in :class:`~ssvm.problem.StructuredHinge`.
    persist : bool, optional
        Hold the blocks of ``X`` in the cluster's memory; default: under a ``dask.distributed``
        client only (where the blocks of ``y`` are always held, sent once).
    budget : int, optional
        Samples asked of the blocks per selection pass, in all (when the open intervals outnumber
        it, the blocks take turns to sample them): bounds what a pass sends to the client.
        Default: ``max(4096, 16 P)``, a few times the positives that come anyway, so that a few
        passes decide all the ``P + 1`` ranks.
    block_bytes : int or str, optional
        Consecutive blocks of ``X`` are joined up to this size (any row boundary will do for one
        query): every selection pass is a round trip of one task per block, whatever its size.
        Default and 0 as in :class:`~ssvm.problem.dask_space.DaskStructuredHinge`: persisted,
        one block per worker thread (or a multiple), of about equal rows, at most 1 GiB each; 0
        keeps the blocks as they are.

    Attributes
    ----------
    X : dask.array.Array
    form : GiantForm
        The oracle's giant form: its block-task family and its loss object or ``k``.
    n_features, n_queries, n_blocks : int
    matvec_seconds : float
        Time in the products, summed over the blocks' tasks.
    oracle_seconds : float
        Wall time of the selection (client and passes) and the 0-1 tasks.
    n_oracle_calls, n_rounds : int
    round_seconds : float
    result_bytes : int
        Cumulative size (pickled) of everything the tasks sent back to the client.
    n_passes : int
        Cumulative passes over the blocks (the round's first and last, and the selection's).
    cluster : ClusterBlocks
        The blocks on the cluster, the client and these statistics
        (:class:`~ssvm.problem._dask_cluster.ClusterBlocks`).
    """

    def __init__(self, X, y, oracle, *, fit_intercept=False, persist=None, budget=None, block_bytes=None):
        X = check_dask_features(X)
        n, d = X.shape
        joined = joined_chunks(tuple(int(c) for c in X.chunks[0] if c > 0), d * X.dtype.itemsize, block_bytes,
                               persist)
        if joined != X.chunks[0]:
            X = X.rechunk({0: joined})
        self.form = giant_form(oracle)
        if self.form is None:
            raise ValueError("DaskGiantHinge computes exact AP, NDCG (log2 discount), 0-1 and "
                             "precision@k oracles only; use DaskGatheredHinge for other losses")
        # the labels are checked and counted where they are: a number a block comes to the client
        relevant = dask_rows(y, "y", n, X.chunks[0]).map_blocks(block_relevance, dtype=bool)
        n_pos = sum(dask.compute(*map(dask.delayed(relevant_count), relevant.to_delayed().ravel())))
        if n_pos in (0, n):
            raise ValueError("the query needs a relevant and an irrelevant row")
        if budget is None:
            budget = max(_BUDGET, 16 * n_pos)
        if not isinstance(budget, (int, np.integer)) or budget < 1:
            raise ValueError(f"budget must be a positive integer, got {budget!r}")
        (X, relevant), client = place(persist, X, relevant)
        bounds = np.concatenate(([0], np.cumsum(X.chunks[0])))
        # a block's rows and labels on one worker; each pass submits its tasks on their futures
        self.cluster = ClusterBlocks([(x_b, y_b, (k, int(bounds[k]))) for k, (x_b, y_b) in enumerate(
            zip(X.to_delayed().ravel(), relevant.to_delayed().ravel()))], client, n_data=2)
        self._bounds = bounds
        self._n_pos = n_pos
        self._relevant = relevant  # holds its persisted blocks
        self.X = X
        self.budget = int(budget)
        self.fit_intercept = bool(fit_intercept)
        self.n_samples, self.n_features = n, d + self.fit_intercept
        self.n_queries = 1

    def _compute(self, task, per_block, *shared, keep=False):
        """``task(*args, *shared)`` for each block's ``args`` in ``per_block`` (one pass): the
        results, their bytes counted, or with ``keep`` the results left where they are (persisted
        on the workers) for the passes that follow."""
        return self.cluster.run(task, per_block, shared, keep)

    def plane(self, w):
        """:meth:`Problem.plane` without per-row data on the client.

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        (H, offset, g) : (float, float, ndarray of shape (n_features,))
            As :meth:`Problem.plane`.
        """
        w = self._check_w(w)
        family = {"ranked": self._ranked_plane, "per_row": self._per_row_plane, "top_k": self._top_plane}
        with self.cluster.round():
            offset, g, sc = family[self.form.family](w)
            self.n_oracle_calls += 1
        return Plane(offset + sc, offset, g)

    def _per_row_plane(self, w):
        """``(delta, g, s · c)`` of the 0-1 loss: one pass of per-row terms."""
        parts = self._compute(block_zero_one, self.cluster.blocks, w, self.fit_intercept, self.n_samples)
        sc, violations, g = 0.0, 0, np.zeros(self.n_features)
        for g_b, sc_b, viol_b, seconds in parts:  # in block order, float64
            g, sc, violations = g + g_b, sc + sc_b, violations + viol_b
            self.oracle_seconds += seconds
        return violations / self.n_samples, g, sc

    def _top_plane(self, w):
        """``(delta, g, s · c)`` of precision@k: the query's k first keys from the blocks' k first."""
        k = min(self.form.k, self.n_samples)
        tops = self._compute(block_top, self.cluster.blocks, w, self.fit_intercept, k, keep=True)
        keys = self._compute(block_top_keys, [(top,) for top in tops])
        t0 = time.perf_counter()
        ma, negative, rows = (np.concatenate([p[i] for p in keys]) for i in range(3))
        self.matvec_seconds += sum(p[3] for p in keys)
        first = np.lexsort((rows, negative, ma))[:k]
        last = (float(ma[first[-1]]), bool(negative[first[-1]]), int(rows[first[-1]]))
        delta = np.count_nonzero(negative[first]) / k
        w_pos, w_neg = topk_weights(self._n_pos, self.n_samples - self._n_pos, k)
        self.oracle_seconds += time.perf_counter() - t0
        parts = self._compute(block_top_gradient, [(b[0], top) for b, top in zip(self.cluster.blocks, tops)],
                              last, w_pos, w_neg, k, self.fit_intercept)
        g, sc = np.zeros(self.n_features), 0.0
        for g_b, sc_b, seconds in parts:  # in block order, float64
            g, sc = g + g_b, sc + sc_b
            self.matvec_seconds += seconds
        return delta, g, sc

    def _ranked_plane(self, w):
        """``(delta, g, s · c)`` of a rank loss: the blocks' rankings, kept, then the thresholds."""
        rankings = self._compute(block_ranking, self.cluster.blocks, w, self.fit_intercept, keep=True)
        t0 = time.perf_counter()
        k = max(1, self.budget // self.n_blocks)
        per_block = [(r,) for r in rankings]
        summaries = self._compute(block_summary, per_block, k)
        pos_s = np.concatenate([p[0] for p in summaries])
        pos_rows = np.concatenate([p[1] for p in summaries])
        order = np.lexsort((pos_rows, -pos_s))  # (−score, row), as the oracles sort positives
        sp, pos_rows = np.ascontiguousarray(pos_s[order]), pos_rows[order]
        n_pos, n_neg = sp.shape[0], sum(p[2] for p in summaries)
        self.matvec_seconds += sum(p[5] for p in summaries)
        kind, table = self.form.loss.kernel_spec(n_pos, n_neg)
        inv = 2.0 / (n_pos * n_neg)
        ends = [(p[3], p[4]) for p in summaries if p[2]]
        first = min(e[0] for e in ends)
        last = max(e[1] for e in ends)
        samples = [p[6] for p in summaries]
        ms, rows, j, r = self._select(per_block, first, last, n_neg, (sp, kind, table, inv), samples)
        keep = np.append(r[1:] != r[:-1], True)  # the last negative of each rank
        counts = np.zeros(n_pos + 1, dtype=np.int64)
        counts[r[keep] - 1] = np.diff(j[keep], prepend=0)
        delta = float(self.form.loss.value(counts))
        c_pos = -np.cumsum(counts[:n_pos]) * inv  # Lemma 6, as write_coefficients
        by_row = np.argsort(pos_rows)
        cut = np.searchsorted(pos_rows[by_row], self._bounds)
        c_blocks = [c_pos[by_row[a:b]] for a, b in zip(cut[:-1], cut[1:])]
        self.oracle_seconds += time.perf_counter() - t0
        parts = self._compute(block_gradient, [(b[0], rk, c_b) for b, rk, c_b in zip(
            self.cluster.blocks, rankings, c_blocks)], (ms[keep], rows[keep]), r[keep], n_pos, inv,
            self.fit_intercept)
        g, sc = np.zeros(self.n_features), 0.0
        for g_b, sc_b, seconds in parts:  # in block order, float64
            g, sc = g + g_b, sc + sc_b
            self.matvec_seconds += seconds
        return delta, g, sc

    def _select(self, per_block, first, last, n_neg, objective, samples):
        """The known negatives ``(−score, row, position j, rank)`` in key order, refined until
        every negative's rank follows from them (see the module's docstring); ``samples``: the
        blocks' first samples (of all their negatives)."""
        top = objective[0].shape[0] + 1
        ms, rows = np.array([first[0], last[0]]), np.array([first[1], last[1]], dtype=np.int64)
        j = np.array([1, n_neg])
        r = ranks_at(ms, j, np.ones_like(j), np.full_like(j, top), *objective)
        # the active intervals, by their end points (key, position, rank)
        ends = [(ms[:1], rows[:1], j[:1], r[:1]), (ms[1:], rows[1:], j[1:], r[1:])]
        active = np.flatnonzero((r[1:] > r[:-1]) & (j[1:] - j[:-1] > 1))
        known = [(ms, rows, j, r)]
        while active.size:
            interval, sm, sr = (np.concatenate([p[i] for p in samples]) for i in range(3))
            mine = np.isin(interval, active)
            interval = np.searchsorted(active, interval[mine])  # numbered among the active
            sm, sr = sm[mine], sr[mine]
            ends = [tuple(a[active] for a in e) for e in ends]
            order = np.lexsort((sr, sm))
            interval, sm, sr = interval[order], sm[order], sr[order]
            # the points of each interval in order: its start, its pivots, its end
            tag = np.concatenate((np.zeros(active.size), np.ones(sm.size), np.full(active.size, 2)))
            which = np.concatenate((np.arange(active.size), interval, np.arange(active.size)))
            points = np.lexsort((tag, which))  # stable: the pivots stay in key order
            pm = np.concatenate((ends[0][0], sm, ends[1][0]))[points]
            pr = np.concatenate((ends[0][1], sr, ends[1][1]))[points]
            gap = np.flatnonzero(tag[points][:-1] != 2)  # point t to t + 1, inside an interval
            wanted = gap.size * self.n_blocks  # a sample per gap and block, at least
            k = max(1, self.budget // wanted)
            share = (-(-wanted // self.budget), self.n_passes)  # else the blocks share the gaps
            parts = self._compute(block_step, per_block, (sm, sr), (pm[gap], pr[gap]),
                                  (pm[gap + 1], pr[gap + 1]), k, share)
            sj = sum(p[0] for p in parts)
            s_rank = ranks_at(sm, sj, ends[0][3][interval], ends[1][3][interval], *objective)
            known.append((sm, sr, sj, s_rank))
            pj = np.concatenate((ends[0][2], sj, ends[1][2]))[points]
            p_rank = np.concatenate((ends[0][3], s_rank, ends[1][3]))[points]
            ends = [(pm[gap], pr[gap], pj[gap], p_rank[gap]),
                    (pm[gap + 1], pr[gap + 1], pj[gap + 1], p_rank[gap + 1])]
            active = np.flatnonzero((ends[1][3] > ends[0][3]) & (ends[1][2] - ends[0][2] > 1))
            samples = [p[1] for p in parts]
        ms, rows, j, r = (np.concatenate(a) for a in zip(*known))
        order = np.argsort(j, kind="stable")  # positions are distinct and follow the keys
        keep = np.append(True, j[order][1:] != j[order][:-1])  # the first and last may be one
        return ms[order][keep], rows[order][keep], j[order][keep], r[order][keep]

    def planes(self, w, queries=None):
        """:meth:`Problem.planes` of the one query (its plane).

        Parameters
        ----------
        w : ndarray of shape (n_features,)
        queries : sequence of int, optional

        Returns
        -------
        (delta, G) : (ndarray of shape (m,), ndarray of shape (m, n_features))
            As :meth:`Problem.planes`.
        """
        idx = self._query_numbers(queries)
        if idx.size == 0:
            return Planes(np.zeros(0), np.zeros((0, self.n_features)))
        _, offset, g = self.plane(w)
        return Planes(np.full(idx.size, offset), np.tile(g, (idx.size, 1)))

