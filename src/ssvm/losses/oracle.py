"""What an oracle is to the rest of ssvm: :class:`OracleSpec` (one registry cell), :class:`Oracle`
(a per-query function with its batch form, parameters and the forms the problem layer runs),
:class:`FusedForm`, :class:`GiantForm` and :func:`as_oracle`.

The problem layer, the solvers and the score-space losses only ever call an :class:`Oracle`'s
``__call__`` and :meth:`Oracle.batch` and read its forms (``fused``, ``giant``, ``binary``); which
function serves which loss, and which forms it has, is the loss table's business
(:mod:`ssvm.losses.registry`): nothing downstream compares an oracle's function or a loss's class.
"""

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

__all__ = ["OracleSpec", "Oracle", "FusedForm", "GiantForm", "FUSED_MODES", "GIANT_FAMILIES", "as_oracle"]

#: what the fused training round runs per block (:mod:`ssvm.problem._fused`): QS on binary labels, the
#: per-level QS of graded NDCG, the per-row 0-1 oracle, the top-k oracle of precision@k
FUSED_MODES = ("qs", "graded", "per_row", "top_k")
#: the block-task families of one query over dask blocks (:class:`~ssvm.problem.DaskGiantHinge`)
GIANT_FAMILIES = ("ranked", "per_row", "top_k")


@dataclass(frozen=True)
class FusedForm:
    """The fused training round's form of an oracle: what it runs per block, in compiled code.

    Parameters
    ----------
    mode : {"qs", "graded", "per_row", "top_k"}
        One of :data:`FUSED_MODES`.
    kind : int, default=0
        ``"qs"``: the loss's kernel kind (:attr:`QSLoss.kind <ssvm.losses.QSLoss.kind>`);
        ``"graded"``: the gain's code (``ssvm.losses._core.graded.GAIN_CODES``).
    k : int, default=0
        ``"top_k"``: the cut-off.
    """

    mode: str
    kind: int = 0
    k: int = 0


@dataclass(frozen=True)
class GiantForm:
    """The giant-query form of an oracle: which block tasks serve one query spread over dask blocks.

    Parameters
    ----------
    family : {"ranked", "per_row", "top_k"}
        One of :data:`GIANT_FAMILIES`: ``"ranked"``, the thresholds of a QS loss with a closed-form
        derivative (AP, NDCG log2) selected over the blocks; ``"per_row"``, one pass of per-row
        terms (0-1); ``"top_k"``, the merged k first rows (precision@k).
    loss : QSLoss or None, default=None
        ``"ranked"``: the loss object (its ``kernel_spec`` and ``value``).
    k : int, default=0
        ``"top_k"``: the cut-off.
    """

    family: str
    loss: object = None
    k: int = 0

@dataclass(frozen=True)
class OracleSpec:
    """One (loss, oracle) pair of the registry: what solves one query, and many at once.

    Parameters
    ----------
    single : callable
        ``single(scores, y, **params) -> (c, delta)``, a module-level function.
    batched : callable or None, default=None
        ``batched(scores, y, starts, ends, **params) -> (c, delta)`` over stacked queries, exactly
        ``single`` on each; None: :meth:`Oracle.batch` loops over ``single``.  A batch form taking
        a loss object serves only the losses that declare ``compiled_batch``
        (:class:`~ssvm.losses.QSLoss`).
    """

    single: Callable
    batched: Optional[Callable] = None


@dataclass(frozen=True, eq=False)
class Oracle:
    """A loss-augmented inference oracle: its per-query function and, if it has one, its batch form.

    The registry declares, for each (loss, oracle) pair, the function that solves one query and the
    one that solves many stacked queries in one call (compiled or vectorised); the problem layer
    only ever calls :meth:`__call__` and :meth:`batch`, so nothing downstream inspects which
    function it got. Picklable (module-level functions and plain parameters).

    Parameters
    ----------
    single : callable
        ``single(scores, y, **params) -> (c, delta)`` for one query.
    batched : callable or None, default=None
        ``batched(scores, y, starts, ends, **params) -> (c, delta)`` giving exactly what ``single``
        gives on each query ``scores[starts[k]:ends[k]]`` (``c`` in the queries' rows, zero
        elsewhere; ``delta`` per query). None: :meth:`batch` calls ``single`` per query.
    params : dict, default={}
        Keyword arguments of both functions (the loss object, ``k``, ...).
    name : str, default=""
        The oracle's name (``"qs"``, ``"yue"``, ...), for messages and timing tables.
    gain : str or None, default=None
        The gain of a graded oracle (graded NDCG, :mod:`ssvm.losses.graded`), which reads ``y`` as non-negative
        integer grades (int64) instead of boolean relevance: the problem layer then carries the
        grades, and a query counts when its grades are not all equal. None: boolean relevance.
    fused : FusedForm or None, default=None
        What the fused training round runs per block for this oracle; None: no fused round (the
        two-pass path).
    giant : GiantForm or None, default=None
        Which block tasks serve one query over dask blocks; None: the gathered hinge.
    binary : Oracle or None, default=None
        For a graded oracle whose loss has a binary form (graded NDCG: ``gain="binary"``), that
        oracle: the same loss on 0/1 grades, bit for bit, with the binary forms. None: this oracle
        serves binary relevance itself (:func:`ssvm.losses.fit_targets` decides).
    """

    single: Callable
    batched: Optional[Callable] = None
    params: dict = field(default_factory=dict)
    name: str = ""
    gain: Optional[str] = None
    fused: Optional[FusedForm] = None
    giant: Optional[GiantForm] = None
    binary: Optional["Oracle"] = None

    @property
    def graded(self):
        """Whether the oracle reads ``y`` as grades (it has a ``gain``)."""
        return self.gain is not None

    def __call__(self, scores, y):
        """``(c, delta)`` of one query (no validation: see :func:`loss_augmented_inference`)."""
        return self.single(scores, y, **self.params)

    def batch(self, scores, y, starts, ends):
        """``(c, delta)`` of the stacked queries ``scores[starts[k]:ends[k]]``.

        Parameters
        ----------
        scores : ndarray of float64, shape (n,)
            Stacked scores; rows outside the queries are ignored.
        y : ndarray of bool, shape (n,)
        starts, ends : ndarray of int64, shape (Q,)
            Ascending, disjoint ranges, each with a positive and a negative.

        Returns
        -------
        c : ndarray of float64, shape (n,)
            Each query's ``c`` in its rows, zero elsewhere.
        delta : ndarray of float64, shape (Q,)

        Raises
        ------
        ValueError
            For an empty query, and when an oracle fails on a query without a positive or a
            negative (named in the message); the rest of the input is not checked (see
            :func:`loss_augmented_inference` for a checked call).
        """
        empty = np.flatnonzero(np.asarray(ends) <= np.asarray(starts))
        if empty.size:
            k = int(empty[0])
            raise ValueError(f"query {k} is empty (starts[{k}] = {starts[k]}, ends[{k}] = {ends[k]}): every query "
                             f"needs a positive and a negative row; drop it")
        try:
            return self._batch(scores, y, starts, ends)
        except ZeroDivisionError:
            self._name_degenerate_query(y, starts, ends)
            raise

    def _batch(self, scores, y, starts, ends):
        if self.batched is not None:
            return self.batched(scores, y, starts, ends, **self.params)
        c_all = np.zeros(scores.shape[0])
        delta = np.empty(starts.shape[0])
        for k in range(delta.shape[0]):
            a, b = starts[k], ends[k]
            c, delta[k] = self.single(scores[a:b], y[a:b], **self.params)
            c = np.asarray(c, dtype=np.float64)
            if c.shape != (b - a,):
                raise ValueError(f"oracle returned c of shape {c.shape} for a query of {b - a} samples")
            c_all[a:b] = c
        return c_all, delta

    def _name_degenerate_query(self, y, starts, ends):
        """Raise a ValueError naming the first query whose labels are all equal — no positive or no
        negative; for a graded oracle, one grade (the rule of ``_queries.informative_queries``) —
        if there is one."""
        y = np.asarray(y)
        for k, (a, b) in enumerate(zip(starts, ends)):
            lowest, highest = y[a:b].min(), y[a:b].max()
            if lowest < highest:
                continue
            if self.graded:
                raise ValueError(f"query {k} (rows {a}:{b}) has all its grades equal ({highest}): no ranking of "
                                 f"it has a loss; drop it") from None
            which = "negative" if highest > 0 else "positive"
            raise ValueError(f"query {k} (rows {a}:{b}) has no {which} row: every query needs a positive and a "
                             f"negative; drop it") from None


def as_oracle(oracle):
    """An :class:`Oracle` as it is, or a plain callable ``f(scores, y) -> (c, delta)`` wrapped as one.

    Parameters
    ----------
    oracle : Oracle or callable

    Returns
    -------
    Oracle

    Raises
    ------
    ValueError
        If ``oracle`` is not callable.
    """
    if isinstance(oracle, Oracle):
        return oracle
    if not callable(oracle):
        raise ValueError(f"oracle must be callable, got {type(oracle).__name__}")
    return Oracle(single=oracle, name=getattr(oracle, "__name__", type(oracle).__name__))
