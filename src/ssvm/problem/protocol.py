"""What a solver asks of a training problem: the protocol every problem implements, written once.

A solver minimises ``J(w) = ½‖w‖² + C · H(w)``, where ``H`` is a mean of convex per-query hinges,
through supporting planes of ``H``: :meth:`Problem.plane` gives the one at ``w`` for the whole
hinge (the cutting plane, full passes), :meth:`Problem.planes` the ones of single queries
(Pegasos, Frank–Wolfe). In-memory rank problems (:class:`~ssvm.problem.StructuredHinge`), problems
on dask arrays and the label-ranking problem all implement it.

A :class:`ScoreSpaceProblem` also exposes its hinge as a function of *stacked scores* that are
linear in ``w`` (what OCAS's line search needs: along a segment in ``w`` the scores move along a
segment too, so the hinge there needs oracle calls but no product with the features).

What the methods return is named once here: :class:`Plane` (``plane``), :class:`Planes`
(``planes``) and :class:`ScorePlane` (``hinge_at_scores`` and :class:`~ssvm.problem.ScoreHinge`).
The oracles' ``(c, delta)`` is the contract of :mod:`ssvm.losses`.
"""

from typing import NamedTuple

import numpy as np

__all__ = ["Problem", "ScoreSpaceProblem", "Plane", "Planes", "ScorePlane"]


class Plane(NamedTuple):
    """The mean hinge at ``w`` and its tight supporting plane there: ``H(w') >= offset + w' @ g``."""

    H: float
    offset: float
    g: np.ndarray


class Planes(NamedTuple):
    """Tight supporting planes of per-query hinges: ``H_q(w') >= delta[q] + w' @ G[q]``."""

    delta: np.ndarray
    G: np.ndarray


class ScorePlane(NamedTuple):
    """The mean hinge at stacked scores ``s`` and its plane in score space:
    ``H(s') >= offset + s' @ c``, with equality at ``s``."""

    H: float
    c: np.ndarray
    offset: float


class Problem:
    """Base class of training problems (subclasses implement :meth:`plane` and :meth:`planes`).

    Attributes
    ----------
    n_features : int
        Length of ``w``.
    n_queries : int
        Number of per-query hinges ``Q`` averaged in ``H``.
    oracle_seconds : float
        Cumulative time in loss-augmented inference: wall time, except inside a fused round
        (:mod:`ssvm.problem._fused`), where it is the oracles' time summed over the threads
        (CPU-seconds).
    matvec_seconds : float
        Cumulative wall time in products with the features.
    """

    n_features = 0
    n_queries = 0
    oracle_seconds = 0.0
    matvec_seconds = 0.0

    def plane(self, w):
        """The mean hinge at ``w`` and its tight supporting plane there.

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        Plane
            ``H = (1/Q) Σ_q H_q(w)``; ``offset = (1/Q) Σ_q delta_q``, so that
            ``H(w') >= offset + w' @ g`` for every ``w'``, with equality at ``w`` up to rounding;
            ``g`` (shape ``(n_features,)``) a subgradient of ``H`` at ``w``.
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
        Planes
            ``delta`` of shape (m,) and ``G`` of shape (m, n_features):
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


class ScoreSpaceProblem(Problem):
    """A problem whose hinge is a function of stacked scores linear in ``w`` (see the module).

    Subclasses implement :meth:`stacked_scores`, :meth:`hinge_at_scores`,
    :meth:`coefficients_to_subgradient` and :meth:`planes`; :meth:`plane` and :meth:`hinge_value`
    follow from the first three.
    """

    def stacked_scores(self, w):
        """The stacked scores at ``w`` (linear in ``w``), as :meth:`hinge_at_scores` takes them.

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        ndarray of shape (n_stacked,)
        """
        raise NotImplementedError

    def hinge_at_scores(self, s):
        """Mean hinge at stacked scores ``s`` (a :meth:`stacked_scores` result or an affine
        combination of such results), with its tight supporting plane in score space.

        Parameters
        ----------
        s : ndarray of shape (n_stacked,)

        Returns
        -------
        ScorePlane
            ``(offset, coefficients_to_subgradient(c))`` is the plane in weight space.
        """
        raise NotImplementedError

    def coefficients_to_subgradient(self, c):
        """The weight-space subgradient of a :meth:`hinge_at_scores` plane's ``c``.

        Parameters
        ----------
        c : ndarray of shape (n_stacked,)

        Returns
        -------
        ndarray of shape (n_features,)
        """
        raise NotImplementedError

    def plane(self, w):
        """See :meth:`Problem.plane`: the score-space plane at ``stacked_scores(w)``, in weight space."""
        H, c, offset = self.hinge_at_scores(self.stacked_scores(w))
        return Plane(H, offset, self.coefficients_to_subgradient(c))

    def hinge_value(self, w):
        """``H(w)`` without the subgradient (saves the product of :meth:`coefficients_to_subgradient`)."""
        return self.hinge_at_scores(self.stacked_scores(w)).H

    @staticmethod
    def _check_stacked(v, n, name):
        """``v`` as a float64 vector of length ``n`` (ValueError naming ``name`` otherwise)."""
        v = np.asarray(v, dtype=np.float64)
        if v.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},), got {v.shape}")
        return v
