"""1-slack cutting-plane training (Joachims, Finley & Yu, 2009).

The objective ``J(w) = ½‖w‖² + C·H(w)`` is approximated from below by
``½‖w‖² + C·max(0, max_k (b_k + a_k·w))`` over a working set of planes, each the tight supporting
plane of ``H`` at an iterate (and ``H ≥ 0``). Its dual is the small QP ``max_α b@α − ½αᵀMα`` over
``{α ≥ 0, Σα ≤ C}`` with ``M`` the Gram matrix of the ``a_k``; the next iterate is
``w = −Σ α_k a_k``.
"""

import logging
import time

import numpy as np

from ._common import Recorder, SolverResult, check_args, gap_small
from .qp import CvxpyDualQP, solve_capped_simplex_qp

logger = logging.getLogger(__name__)

__all__ = ["cutting_plane"]


class _WorkingSet:
    """Planes ``(b_k, a_k)`` with their Gram matrix, kept compact in preallocated arrays."""

    def __init__(self, capacity, n_features, zero):
        self.capacity = capacity
        self.zero = zero  # dual weights at or below this count as unused
        self.A = np.zeros((capacity, n_features))
        self.b = np.zeros(capacity)
        self.M = np.zeros((capacity, capacity))
        self.alpha = np.zeros(capacity)
        self.idle = np.zeros(capacity, dtype=np.int64)  # consecutive rounds with alpha == 0
        self.size = 0

    def add(self, b, a):
        k = self.size
        self.A[k] = a
        self.b[k] = b
        row = self.A[: k + 1] @ a
        self.M[k, : k + 1] = row
        self.M[: k + 1, k] = row
        self.alpha[k] = 0.0
        self.idle[k] = 0
        self.size = k + 1

    def keep(self, mask):
        """Keep the planes where ``mask`` is True (length ``size``)."""
        idx = np.flatnonzero(mask)
        m = idx.size
        self.A[:m] = self.A[idx]
        self.b[:m] = self.b[idx]
        self.M[:m, :m] = self.M[np.ix_(idx, idx)]
        self.alpha[:m] = self.alpha[idx]
        self.idle[:m] = self.idle[idx]
        self.size = m

    def merge(self, mask):
        """Replace the planes in ``mask`` by their α-weighted average carrying their total α.

        The average of valid planes is a valid plane, and the current dual value is unchanged.
        """
        idx = np.flatnonzero(mask)
        weights = self.alpha[idx]
        total = weights.sum()
        if total <= 0:
            self.keep(~mask)
            return
        a = (weights / total) @ self.A[idx]
        b = float((weights / total) @ self.b[idx])
        self.keep(~mask)
        self.add(b, a)
        self.alpha[self.size - 1] = total

    def make_room(self):
        """Free at least one slot: drop unused planes, else merge the two least used ones."""
        k = self.size
        unused = self.alpha[:k] <= self.zero
        if unused.any():
            self.keep(~unused)
            return
        mask = np.zeros(k, dtype=bool)
        mask[np.argsort(self.alpha[:k])[:2]] = True
        self.merge(mask)

    def views(self):
        k = self.size
        return self.M[:k, :k], self.b[:k], self.A[:k]


def cutting_plane(problem, C, tol=1e-3, max_iter=1000, w0=None, callback=None, *, qp="auto",
                  capacity=100, prune_after=10, random_state=None):
    """Minimise ``J(w) = ½‖w‖² + C·H(w)`` with the 1-slack cutting-plane method.

    Each round calls every query's oracle once at the current ``w`` (one full pass), adds the
    resulting supporting plane of ``H`` to the working set, and solves the dual QP over the working
    set for the next ``w``. Planes whose dual weight stays zero for ``prune_after`` rounds are
    dropped; when ``capacity`` planes are in use, the unused ones are dropped or, if all are in use,
    the two least used are merged into their α-weighted average (which keeps the dual value).

    Parameters
    ----------
    problem : StructuredHinge
        The training problem.
    C : float
        Positive trade-off of ``J``.
    tol : float, default=1e-3
        Stop when the certified gap ``primal − dual ≤ tol · primal`` (a *relative* gap), where
        ``primal`` is the lowest ``J`` evaluated so far and ``dual`` the best dual QP value; every
        feasible dual value is a lower bound on ``min J``, so ``primal ≤ (1 + tol) · min J`` at
        exit.
    max_iter : int, default=1000
        Maximum rounds (oracle passes).
    w0 : ndarray of shape (n_features,), optional
        Warm start: the first plane is taken at ``w0`` (default zeros).
    callback : callable, optional
        Called with each history record; returning True stops training.
    qp : {"auto", "active_set", "cvxpy"}, default="auto"
        Dual QP solver: "auto" and "active_set" use
        :func:`~ssvm.solvers.qp.solve_capped_simplex_qp`; "cvxpy" a
        :class:`~ssvm.solvers.qp.CvxpyDualQP` built once per call and re-solved warm.
    capacity : int, default=100
        Largest working set.
    prune_after : int, default=10
        Rounds of zero dual weight after which a plane is dropped.
    random_state : None
        Unused (the method is deterministic); accepted for a uniform solver signature.

    Returns
    -------
    SolverResult
        ``w`` is the iterate with the lowest ``J``. History records (one per round) carry, besides
        the common keys, ``qp_seconds`` (cumulative) and ``n_planes``.
    """
    C, tol, max_iter, w = check_args(problem, C, tol, max_iter, w0)
    if qp not in ("auto", "active_set", "cvxpy"):
        raise ValueError(f"qp must be 'auto', 'active_set' or 'cvxpy', got {qp!r}")
    if int(capacity) < 2:
        raise ValueError(f"capacity must be at least 2, got {capacity!r}")
    if int(prune_after) < 1:
        raise ValueError(f"prune_after must be a positive integer, got {prune_after!r}")
    capacity, prune_after = int(capacity), int(prune_after)
    cvx = CvxpyDualQP(capacity, C) if qp == "cvxpy" else None

    ws = _WorkingSet(capacity, problem.n_features, zero=1e-8 * C)
    rec = Recorder(problem, callback)
    best_J, best_w, best_dual = np.inf, w, 0.0  # alpha = 0 gives the dual value 0 <= min J
    qp_seconds = 0.0
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        H, g = problem.hinge(w)
        J = 0.5 * float(w @ w) + C * H
        if J < best_J:
            best_J, best_w = J, w
        if ws.size == capacity:
            ws.make_room()
        ws.add(H - float(g @ w), g)

        t0 = time.perf_counter()
        M, b, A = ws.views()
        if cvx is None:
            alpha, _ = solve_capped_simplex_qp(M, b, C, ws.alpha[: ws.size])
        else:
            alpha = cvx.solve(M, b, ws.alpha[: ws.size])
        qp_seconds += time.perf_counter() - t0
        ws.alpha[: ws.size] = alpha
        w = -(alpha @ A)
        dual = float(alpha @ b) - 0.5 * float(w @ w)  # exact for this feasible alpha
        best_dual = max(best_dual, dual)

        stop = rec.record(it, best_J, best_dual, qp_seconds=qp_seconds, n_planes=ws.size)
        if gap_small(best_J, best_dual, tol):
            converged = True
            break
        if stop:
            break
        k = ws.size
        ws.idle[:k] = np.where(alpha > ws.zero, 0, ws.idle[:k] + 1)
        stale = ws.idle[:k] >= prune_after
        if stale.any():
            ws.keep(~stale)
    logger.info("cutting plane: %d rounds, J=%.6g, gap=%.3g, converged=%s",
                it, best_J, best_J - best_dual, converged)
    return SolverResult(w=best_w, n_iter=it, objective=best_J, converged=converged,
                        history=rec.history)
