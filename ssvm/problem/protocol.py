"""What a solver asks of a training problem: the protocol every problem implements.

A solver minimises ``J(w) = ½‖w‖² + C · H(w)``, where ``H`` is a mean of convex per-query hinges,
through supporting planes of ``H``: :meth:`Problem.plane` gives the one at ``w`` for the whole
hinge (the cutting plane, full passes), :meth:`Problem.planes` the ones of single queries
(Pegasos, Frank–Wolfe). In-memory rank problems (:class:`~ssvm.problem.StructuredHinge`), problems
on dask arrays and the label-ranking problem all implement it.
"""

import numpy as np

__all__ = ["Problem"]


class Problem:
    """Base class of training problems (subclasses implement :meth:`plane` and :meth:`planes`).

    Attributes
    ----------
    n_features : int
        Length of ``w``.
    n_queries : int
        Number of per-query hinges ``Q`` averaged in ``H``.
    oracle_seconds : float
        Cumulative wall time in loss-augmented inference.
    matvec_seconds : float
        Cumulative wall time in products with the features.
    supports_line_search : bool
        Whether the score-space access of OCAS's line search is available (``stacked_scores``,
        ``hinge_at_scores``, ``coefficients_to_subgradient``; see :class:`StructuredHinge`).
    """

    n_features = 0
    n_queries = 0
    oracle_seconds = 0.0
    matvec_seconds = 0.0
    supports_line_search = False

    def plane(self, w):
        """The mean hinge at ``w`` and its tight supporting plane there.

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        H : float
            ``(1/Q) Σ_q H_q(w)``.
        offset : float
            ``(1/Q) Σ_q delta_q``: ``H(w') >= offset + w' @ g`` for every ``w'``, with equality
            at ``w`` up to rounding.
        g : ndarray of shape (n_features,)
            A subgradient of ``H`` at ``w``.
        """
        raise NotImplementedError

    def planes(self, w, queries=None):
        """Tight supporting planes of the per-query hinges at ``w``.

        Parameters
        ----------
        w : ndarray of shape (n_features,)
        queries : sequence of int, optional
            Query numbers (default: all, in order).

        Returns
        -------
        delta : ndarray of shape (m,)
        G : ndarray of shape (m, n_features)
            ``H_q(w') >= delta_q + w' @ G_q`` with equality at ``w``.
        """
        raise NotImplementedError

    def _check_w(self, w):
        """``w`` as a float64 vector of length ``n_features`` (ValueError otherwise)."""
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError(f"w must have shape ({self.n_features},), got {w.shape}")
        return w

    def _query_numbers(self, queries):
        """The query numbers a :meth:`planes` call asks for, as int64 (all for None)."""
        if queries is None:
            return np.arange(self.n_queries)
        idx = np.asarray(queries)
        if idx.ndim != 1 or not (idx.size == 0 or np.issubdtype(idx.dtype, np.integer)):
            raise ValueError("queries must be a 1-D sequence of query numbers")
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_queries):
            raise ValueError(f"query numbers must lie in [0, {self.n_queries})")
        return idx.astype(np.int64, copy=False)

    def hinge(self, w):
        """Mean hinge and a subgradient at ``w`` (see :meth:`plane`).

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        H : float
        g : ndarray of shape (n_features,)
        """
        H, _, g = self.plane(w)
        return H, g

    def hinge_value(self, w):
        """The mean hinge ``H(w)``.

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        float
        """
        return self.plane(w)[0]

    def objective(self, w, C):
        """Training objective ``J(w) = ½‖w‖² + C · H(w)``.

        Parameters
        ----------
        w : ndarray of shape (n_features,)
        C : float
            Positive regularisation trade-off.

        Returns
        -------
        float
        """
        return 0.5 * float(w @ w) + float(C) * self.hinge_value(w)
