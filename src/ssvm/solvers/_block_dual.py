"""The structured SVM dual as one block per query, shared by Frank–Wolfe and Pegasos' certificate.

With ``Q`` queries, block ``q`` is a convex combination of its oracle answers scaled as
``w_s = −(C/Q)·G_q`` and ``ℓ_s = delta_q / Q``; ``w = Σ_q w_q`` and ``D = C·Σ_q ℓ_q − ½‖w‖²`` is
the dual value (in units of ``J``), a lower bound on ``min J`` (Lacoste-Julien et al. 2013, with
``λ = 1/C``).
"""

import numpy as np

__all__ = ["BlockDual", "fw_line_search"]


def fw_line_search(w_old, w_new, l_old, l_new, w, C):
    """Exact Frank–Wolfe line search on the structured SVM dual ``C·ℓ − ½‖w‖²``.

    Parameters
    ----------
    w_old, w_new : ndarray
        A block's (or all blocks') current point and the Frank–Wolfe vertex, in ``w`` space.
    l_old, l_new : float
        The same for the loss part ``ℓ``.
    w : ndarray
        Current sum of all blocks.
    C : float

    Returns
    -------
    gamma : float
        The maximiser in ``[0, 1]`` of the dual along the move.
    gap : float
        The Frank–Wolfe gap of the move (the dual's directional derivative at ``γ = 0``).
    """
    diff = w_old - w_new
    gap = float(diff @ w) - C * (l_old - l_new)
    denom = float(diff @ diff)
    if denom <= 0.0:
        return (1.0 if gap > 0 else 0.0), gap
    return min(max(gap / denom, 0.0), 1.0), gap


class BlockDual:
    """Per-query dual blocks ``(w_q, ℓ_q)`` with their sum ``w``, updated by Frank–Wolfe steps.

    Any oracle answer of query ``q`` (wherever it was computed) is a vertex of block ``q``, so the
    steps keep the state feasible, and with the exact line search ``D`` never decreases.

    Parameters
    ----------
    n_queries, n_features : int
    C : float
    """

    def __init__(self, n_queries, n_features, C):
        self.W = np.zeros((n_queries, n_features))
        self.ell = np.zeros(n_queries)
        self.w = np.zeros(n_features)
        self.C = C
        self.scale = C / n_queries
        self.n_queries = n_queries

    def block_step(self, q, delta_q, G_q):
        """Frank–Wolfe step of block ``q`` toward the vertex ``(delta_q, G_q)``; returns ``γ``."""
        ws, ls = -self.scale * G_q, delta_q / self.n_queries
        gamma, _ = fw_line_search(self.W[q], ws, self.ell[q], ls, self.w, self.C)
        if gamma > 0.0:
            step = gamma * (ws - self.W[q])
            self.W[q] += step
            self.w += step
            self.ell[q] += gamma * (ls - self.ell[q])
        return gamma

    def batch_step(self, delta, G):
        """One step of all blocks at once toward the vertices ``(delta[q], G[q])``; returns γ."""
        Ws, ls = -self.scale * G, delta / self.n_queries
        gamma, _ = fw_line_search(self.w, Ws.sum(axis=0), self.ell.sum(), ls.sum(), self.w,
                                  self.C)
        self.W += gamma * (Ws - self.W)
        self.ell += gamma * (ls - self.ell)
        self.w = self.W.sum(axis=0)  # re-summed against drift of the incremental updates
        return gamma

    def value(self):
        """The dual value ``C·Σℓ_q − ½‖w‖²``."""
        return self.C * float(self.ell.sum()) - 0.5 * float(self.w @ self.w)
