"""The structured hinge of label ranking by precision@k with c-star pairwise terms.

Each training sample is one "query" whose items are the L labels. With per-label weights ``W``
(L × d), biases ``v`` (L) and pairwise weights ``θ`` on the c-star's pairs, the score of a label
set ``t`` of sample ``x`` is

    f(x, t) = Σ_i t_i (v_i + W_i·x) + Σ_{pairs (i, j)} t_i t_j θ_ij = w·Ψ(x, t),

with ``w = [vec(W), v, θ]`` and the joint feature ``Ψ(x, t) = [vec(t xᵀ), t, (t_i t_j)_pairs]``.
Sample ``q`` has a target set ``t*_q`` (its relevant labels for break-even precision, or an
imputed best minimal-loss set for a fixed k) and the structured hinge

    H_q(w) = max_t [Δ_q(t) − Δ_q(t*_q) + f(x_q, t) − f(x_q, t*_q)],   |t| = k_q,

with ``Δ_q(t) = #(t ∧ ¬y_q) / k_q`` (the precision@k loss). The max is the loss-augmented
inference of :mod:`ssvm.label_ranking.inference`; ``delta_q = Δ_q(t̂) − Δ_q(t*)`` and
``G_q = Ψ(x_q, t̂) − Ψ(x_q, t*)`` give ``H_q(w) = delta_q + w·G_q``. The class exposes the
problem protocol :class:`ssvm.problem.Problem` (as :class:`ssvm.problem.StructuredHinge` does),
so the package's solvers minimise ``J(w) = ½‖w‖² + C·(1/Q) Σ_q H_q(w)`` over it unchanged.
"""

import time

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import safe_sparse_dot

from ssvm.problem import Plane, Planes, ScorePlane, ScoreSpaceProblem

from .inference import star_inference

__all__ = ["LabelRankingHinge", "StarLayout"]


class StarLayout:
    """Where each parameter of a c-star label-ranking model sits in the weight vector ``w``.

    Parameters
    ----------
    n_labels : int
        L.
    n_dims : int
        d, the number of input features.
    core : array-like of int
        The core labels (distinct).

    Attributes
    ----------
    pairs : ndarray of int64, shape (n_pairs, 2)
        The c-star's label pairs ``(core[a], j)``: every label ``j`` that is not ``core[a]`` or an
        earlier core label, for each core position ``a``.
    n_features : int
        Length of ``w``: ``L·d + L + n_pairs``.
    """

    def __init__(self, n_labels, n_dims, core):
        self.n_labels = int(n_labels)
        self.n_dims = int(n_dims)
        self.core = np.asarray(core, dtype=np.int64).reshape(-1)
        pairs = [(int(c), j) for a, c in enumerate(self.core) for j in range(self.n_labels)
                 if j not in self.core[: a + 1]]
        self.pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        self.n_features = self.n_labels * (self.n_dims + 1) + self.pairs.shape[0]

    def split(self, w):
        """``(W (L, d), v (L,), θ (n_pairs,))``, views into ``w``."""
        L, d = self.n_labels, self.n_dims
        return w[: L * d].reshape(L, d), w[L * d : L * (d + 1)], w[L * (d + 1) :]

    def pairwise_matrix(self, theta):
        """Symmetric (L, L) matrix ``P`` with ``P_ij = P_ji = θ_ij`` on the pairs, zero elsewhere,
        so that the pairwise score of a set ``t`` is ``½ tᵀ P t``."""
        P = np.zeros((self.n_labels, self.n_labels))
        P[self.pairs[:, 0], self.pairs[:, 1]] = theta
        P[self.pairs[:, 1], self.pairs[:, 0]] = theta
        return P

    def pair_products(self, T):
        """``t_i t_j`` of every pair for every row of the indicator matrix ``T`` (n, n_pairs)."""
        T = np.asarray(T, dtype=np.float64)
        return T[:, self.pairs[:, 0]] * T[:, self.pairs[:, 1]]


class LabelRankingHinge(ScoreSpaceProblem):
    """The structured hinge ``H(w) = (1/Q) Σ_q H_q(w)`` of label ranking over Q samples.

    A :class:`ssvm.problem.ScoreSpaceProblem`: the package's solvers minimise ``J`` over it, and
    OCAS's line search moves along its stacked scores, the unary scores of every sample and ``θ``.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (Q, d)
        Finite features (validated by the caller).
    Y : ndarray of bool, shape (Q, L)
        Relevant labels.
    T_star : ndarray of bool, shape (Q, L)
        Target set of each sample, of size ``k[q]`` and of minimal loss.
    k : ndarray of int, shape (Q,)
        Cut-off of each sample, ``1 <= k < L``.
    layout : StarLayout
        Parameter layout (core labels and pairs).

    Attributes
    ----------
    n_features, n_queries : int
        Length of ``w`` and number of samples Q.
    oracle_seconds, matvec_seconds : float
        Cumulative time in the inference and in products with ``X``.
    """

    def __init__(self, X, Y, T_star, k, layout):
        self.X = X.tocsr() if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64)
        self.Y = np.asarray(Y, dtype=bool)
        self.T_star = np.asarray(T_star, dtype=bool)
        self.k = np.asarray(k, dtype=np.int64)
        self.layout = layout
        Q, L = self.Y.shape
        if self.X.shape != (Q, layout.n_dims) or self.T_star.shape != (Q, L) or L != \
                layout.n_labels or self.k.shape != (Q,):
            raise ValueError("X, Y, T_star, k and layout do not agree in shape")
        if np.any(self.T_star.sum(axis=1) != self.k):
            raise ValueError("every target set T_star[q] must hold exactly k[q] labels")
        self.n_features = layout.n_features
        self.n_queries = Q
        self._aug = (~self.Y) / self.k[:, None]  # Δ_q(t) = t @ aug_q
        self._loss_star = (self.T_star & ~self.Y).sum(axis=1) / self.k
        self._pairs_star = layout.pair_products(self.T_star)
        self.oracle_seconds = 0.0
        self.matvec_seconds = 0.0

    # ------------------------------------------------------------------ pieces
    def _scores(self, w, rows=None):
        """Unary scores ``S = X Wᵀ + v`` (of ``rows``) and ``θ``."""
        W, v, theta = self.layout.split(w)
        X = self.X if rows is None else self.X[rows]
        t0 = time.perf_counter()
        S = np.asarray(safe_sparse_dot(X, W.T, dense_output=True)) + v
        self.matvec_seconds += time.perf_counter() - t0
        return S, theta

    def _answers(self, S, theta, rows=None):
        """Loss-augmented inference at unary scores ``S``: ``(delta, D, pair_diff)`` with
        ``D = T̂ − T*`` and ``pair_diff`` the pair products' difference, per sample."""
        rows = slice(None) if rows is None else rows
        P = self.layout.pairwise_matrix(theta)
        t0 = time.perf_counter()
        T_hat, _ = star_inference(S + self._aug[rows], self.layout.core, P[self.layout.core],
                                  self.k[rows])
        self.oracle_seconds += time.perf_counter() - t0
        delta = (T_hat & ~self.Y[rows]).sum(axis=1) / self.k[rows] - self._loss_star[rows]
        D = T_hat.astype(np.float64) - self.T_star[rows]
        return delta, D, self.layout.pair_products(T_hat) - self._pairs_star[rows]

    def _weight_gradient(self, D):
        """``Σ_q Ψ-difference`` over the rows of ``D`` as a weight vector (pairs excluded)."""
        t0 = time.perf_counter()
        GW = np.asarray(safe_sparse_dot(D.T, self.X, dense_output=True))
        self.matvec_seconds += time.perf_counter() - t0
        return np.concatenate([GW.ravel(), D.sum(axis=0)])

    # ------------------------------------------------------------------ protocol
    def plane(self, w):
        """The mean hinge at ``w`` and its tight supporting plane there.

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        Plane
            ``H = (1/Q) Σ_q H_q(w)``; ``offset = (1/Q) Σ_q delta_q``, so that
            ``H(w') >= offset + w'·g`` with equality at ``w``; ``g = (1/Q) Σ_q G_q``.
        """
        S, theta = self._scores(self._check_w(w))
        delta, D, pdiff = self._answers(S, theta)
        Q = self.n_queries
        offset = float(delta.sum()) / Q
        H = offset + float((D * S).sum() + pdiff.sum(axis=0) @ theta) / Q
        g = np.concatenate([self._weight_gradient(D), pdiff.sum(axis=0)]) / Q
        return Plane(H, offset, g)

    def planes(self, w, queries=None):
        """Tight supporting planes ``H_q(w') >= delta_q + w'·G_q`` of the sample hinges at ``w``.

        Parameters
        ----------
        w : ndarray of shape (n_features,)
        queries : sequence of int, optional
            Sample numbers (default: all, in order).

        Returns
        -------
        Planes
            ``delta`` of shape (m,), ``G`` of shape (m, n_features).
        """
        w = self._check_w(w)
        rows = None if queries is None else self._query_numbers(queries)
        S, theta = self._scores(w, rows)
        delta, D, pdiff = self._answers(S, theta, rows)
        X = self.X if rows is None else self.X[rows]
        Xd = X.toarray() if sp.issparse(X) else X
        G = np.concatenate([(D[:, :, None] * Xd[:, None, :]).reshape(D.shape[0], -1), D, pdiff],
                           axis=1)
        return Planes(delta, G)

    # ------------------------------------------------------------------ score space
    # The cutting plane's OCAS loop works on "stacked scores": here the unary scores of every
    # sample and θ, s = [S.ravel(), θ], which are linear in w.

    def stacked_scores(self, w):
        """``[S.ravel(), θ]`` at ``w`` (``S = X Wᵀ + v``, shape (Q, L)).

        Parameters
        ----------
        w : ndarray of shape (n_features,)

        Returns
        -------
        ndarray of shape (Q·L + n_pairs,)
        """
        S, theta = self._scores(self._check_w(w))
        return np.concatenate([S.ravel(), theta])

    def hinge_at_scores(self, s):
        """Mean hinge at stacked scores ``s``, with its supporting plane in score space.

        Parameters
        ----------
        s : ndarray of shape (Q·L + n_pairs,)

        Returns
        -------
        ScorePlane
            ``c = [D.ravel(), Σ pair differences] / Q`` and ``offset = (1/Q) Σ_q delta_q``, so
            that ``H = offset + s @ c``.
        """
        QL = self.n_queries * self.layout.n_labels
        s = self._check_stacked(s, QL + self.layout.pairs.shape[0], "s")
        delta, D, pdiff = self._answers(s[:QL].reshape(self.n_queries, -1), s[QL:])
        c = np.concatenate([D.ravel(), pdiff.sum(axis=0)]) / self.n_queries
        offset = float(delta.sum()) / self.n_queries
        return ScorePlane(offset + float(s @ c), c, offset)

    def coefficients_to_subgradient(self, c):
        """The weight-space subgradient of a `hinge_at_scores` plane.

        Parameters
        ----------
        c : ndarray of shape (Q·L + n_pairs,)

        Returns
        -------
        ndarray of shape (n_features,)
        """
        QL = self.n_queries * self.layout.n_labels
        D = np.asarray(c[:QL], dtype=np.float64).reshape(self.n_queries, -1)
        return np.concatenate([self._weight_gradient(D), c[QL:]])


def impute_targets(layout, w, X, Y, k):
    """Target sets for a fixed k: the best minimal-loss set of size k of each sample under ``w``.

    A sample with fewer than k relevant labels keeps them all (fixed in); one with more keeps
    none of its irrelevant ones (fixed out); the inference fills the rest (CCCP's imputation for
    the paper's eq. 8).

    Parameters
    ----------
    layout : StarLayout
    w : ndarray of shape (layout.n_features,) or None
        Current weights (None: zeros, where ties go to the lower label index).
    X : ndarray or sparse matrix of shape (n, d)
    Y : ndarray of bool, shape (n, L)
    k : int

    Returns
    -------
    ndarray of bool, shape (n, L)
    """
    w = np.zeros(layout.n_features) if w is None else w
    W, v, theta = layout.split(w)
    S = np.asarray(X @ W.T, dtype=np.float64) + v
    few = Y.sum(axis=1) < k
    fixed = np.where(few[:, None], np.where(Y, 1, 0), np.where(Y, 0, -1)).astype(np.int8)
    P = layout.pairwise_matrix(theta)
    T, _ = star_inference(S, layout.core, P[layout.core], k, fixed=fixed)
    return T
