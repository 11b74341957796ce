"""The bundle model shared by the solvers: planes ``H(w) ≥ b_k + a_k·w`` of the mean hinge and the
dual QP over them, whose value is a certified lower bound on ``min J``.

The cutting plane keeps its working set here (and minimises the model); Pegasos keeps the planes of
its checks here for its stopping certificate.
"""

import numpy as np

from .qp import solve_capped_simplex_qp

__all__ = ["WorkingSet", "solve_bundle"]


class WorkingSet:
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


def solve_bundle(ws, C, cvx=None):
    """Solve the dual QP over the working set's planes, warm-started at its current ``alpha``.

    ``max_α Σ α_k b_k − ½‖Σ α_k a_k‖²`` over ``α ≥ 0, Σ α ≤ C``; the new ``α`` is stored in ``ws``.

    Parameters
    ----------
    ws : WorkingSet
    C : float
    cvx : CvxpyDualQP or None, default=None
        Solve through cvxpy instead of the active-set method.

    Returns
    -------
    w : ndarray of shape (n_features,)
        The model's minimiser ``−Σ α_k a_k``.
    dual : float
        The dual value at ``α`` (exact for this feasible ``α``): a lower bound on ``min J``.
    """
    M, b, A = ws.views()
    if cvx is None:
        alpha, _ = solve_capped_simplex_qp(M, b, C, ws.alpha[: ws.size], check_input=False)
    else:
        alpha = cvx.solve(M, b, ws.alpha[: ws.size])
    ws.alpha[: ws.size] = alpha
    w = -(alpha @ A)
    return w, float(alpha @ b) - 0.5 * float(w @ w)
