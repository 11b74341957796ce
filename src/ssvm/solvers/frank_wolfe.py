"""Block-coordinate Frank–Wolfe on the structured SVM dual.

Lacoste-Julien, Jaggi, Schmidt & Pletscher (2013). With ``λ = 1/C`` and ``n = Q`` queries,
``J(w)/C = λ/2‖w‖² + (1/n) Σ_q H_q(w)`` is the paper's objective. The dual state is one pair
``(w_q, ℓ_q)`` per query (:class:`~ssvm.solvers._block_dual.BlockDual`), a convex combination of
the query's oracle answers scaled as ``w_s = −(C/Q)·G_q`` and ``ℓ_s = delta_q / Q``;
``w = Σ_q w_q`` and the dual value (in units of ``J``) is ``D = C·Σ_q ℓ_q − ½‖w‖²``, a lower
bound on ``min J``.
"""

import logging

import numpy as np
from sklearn.utils import check_random_state

from ._block_dual import BlockDual
from ._common import Recorder, SolverResult, check_args, gap_small

logger = logging.getLogger(__name__)

__all__ = ["frank_wolfe"]


class _Atoms:
    """Convex combination of dual points ``(u_v, ℓ_v)`` with weights ``β_v`` (single-query case).

    Atoms are oracle vertices, except that when ``capacity`` is reached the two lightest are merged
    into their weighted average (a point of the same polytope, so every step stays feasible).
    """

    def __init__(self, capacity, n_features):
        self.U = np.zeros((capacity, n_features))
        self.ell = np.zeros(capacity)
        self.beta = np.zeros(capacity)
        self.size = 0

    def add(self, u, ell, beta=0.0):
        """Index of the atom ``(u, ell)``, appended unless already present."""
        k = self.size
        same = np.flatnonzero(self.ell[:k] == ell)
        for j in same:
            if np.array_equal(self.U[j], u):
                return int(j)
        if k == self.U.shape[0]:
            self._merge_lightest()
            k = self.size
        self.U[k], self.ell[k], self.beta[k] = u, ell, beta
        self.size = k + 1
        return k

    def remove(self, j):
        last = self.size - 1
        self.U[j], self.ell[j], self.beta[j] = self.U[last], self.ell[last], self.beta[last]
        self.size = last

    def _merge_lightest(self):
        i, j = np.argsort(self.beta[: self.size])[:2]
        total = self.beta[i] + self.beta[j]
        if total > 0:
            self.U[i] = (self.beta[i] * self.U[i] + self.beta[j] * self.U[j]) / total
            self.ell[i] = (self.beta[i] * self.ell[i] + self.beta[j] * self.ell[j]) / total
        self.beta[i] = total
        self.remove(j)


def _best_step(du, dl, w, C, cap):
    """Exact line search along ``(du, dl)`` for ``γ ∈ [0, cap]``: returns ``(γ, dual increase)``."""
    slope = C * dl - float(du @ w)
    if slope <= 0.0:
        return 0.0, 0.0
    denom = float(du @ du)
    gamma = cap if denom <= 0.0 else min(slope / denom, cap)
    return gamma, gamma * slope - 0.5 * gamma * gamma * denom


def _single_query_step(atoms, u_s, l_s, w, ell, C):
    """The better (in dual increase) of a Frank–Wolfe step toward the new vertex and a pairwise
    step moving weight from the worst active atom to it (Lacoste-Julien & Jaggi, 2015).

    Returns the new ``(w, ell)``.
    """
    s = atoms.add(u_s, l_s)
    k = atoms.size
    value = C * atoms.ell[:k] - atoms.U[:k] @ w  # dual gradient per atom
    active = np.flatnonzero(atoms.beta[:k] > 0)
    a = int(active[np.argmin(value[active])])
    g_fw, inc_fw = _best_step(atoms.U[s] - w, atoms.ell[s] - ell, w, C, 1.0)
    g_pw, inc_pw = (0.0, 0.0) if a == s else _best_step(
        atoms.U[s] - atoms.U[a], atoms.ell[s] - atoms.ell[a], w, C, atoms.beta[a])
    if max(inc_fw, inc_pw) <= 0.0:
        return w, ell
    if inc_pw > inc_fw:
        atoms.beta[s] += g_pw
        atoms.beta[a] -= g_pw
        if atoms.beta[a] <= 0.0:
            atoms.remove(a)
    else:
        atoms.beta[:k] *= 1.0 - g_fw
        atoms.beta[s] += g_fw
    k = atoms.size  # the point itself, recomputed from the atoms (no drift)
    return atoms.beta[:k] @ atoms.U[:k], float(atoms.beta[:k] @ atoms.ell[:k])


def frank_wolfe(problem, C, tol=1e-3, max_iter=1000, w0=None, callback=None, *,
                check_every=1, atoms=200, random_state=None):
    """Minimise ``J(w) = ½‖w‖² + C·(1/Q) Σ_q H_q(w)`` by block-coordinate Frank–Wolfe.

    One iteration is a pass over the queries in random order, each block step taking the query's
    oracle answer at the current ``w`` as the Frank–Wolfe vertex with the exact line search. Every
    ``check_every`` passes, all queries' planes at ``w`` are computed in one full pass; they give
    ``J(w)`` and the exact duality gap ``J(w) − D``, and are then used for one batch Frank–Wolfe
    step (exact line search over all blocks at once). With a single query, every iteration is one
    batch step: the better (in dual increase, both with exact line search) of the plain
    Frank–Wolfe step and the *pairwise* step of Lacoste-Julien & Jaggi (2015), which moves weight
    from the worst active vertex to the new one and so avoids plain Frank–Wolfe's zig-zag near the
    optimum; one oracle call per iteration.

    Parameters
    ----------
    problem : StructuredHinge
        The training problem.
    C : float
        Positive trade-off of ``J``.
    tol : float, default=1e-3
        Stop when ``J_best − D_best ≤ tol · J_best`` (relative certified gap; ``D`` is the dual
        value, a lower bound on ``min J``).
    max_iter : int, default=1000
        Maximum passes.
    w0 : ndarray of shape (n_features,), optional
        Warm start: the first vertices are the oracle answers at ``w0``, combined with ``w = 0`` by
        an exact line search (the dual point must be a combination of vertices, so ``w0`` itself is
        not representable).
    callback : callable, optional
        Called with each history record (one per check); returning True stops training.
    check_every : int, default=1
        Passes between full-pass gap checks.
    atoms : int, default=200
        Largest active set of the single-query pairwise steps (the two lightest atoms are merged
        beyond it).
    random_state : int, RandomState instance or None
        Order of the blocks within a pass.

    Returns
    -------
    SolverResult
        ``w`` is the checked iterate with the lowest ``J``.

    Notes
    -----
    Memory: one ``n_features`` vector per query for the blocks ``w_q``; with a single query, up to
    ``atoms`` vertices (default 200) of the active set.
    """
    C, tol, max_iter, w_start = check_args(problem, C, tol, max_iter, w0)
    if isinstance(check_every, bool) or int(check_every) != check_every or check_every < 1:
        raise ValueError(f"check_every must be a positive integer, got {check_every!r}")
    check_every = int(check_every)
    rng = check_random_state(random_state)
    Q, d = problem.n_queries, problem.n_features

    dual = BlockDual(Q, d, C)
    rec = Recorder(problem, callback)
    best_J, best_w, best_dual = np.inf, np.zeros(d), 0.0
    converged = False

    if Q == 1:
        if isinstance(atoms, bool) or int(atoms) != atoms or atoms < 2:
            raise ValueError(f"atoms must be an integer of at least 2, got {atoms!r}")
        active_set = _Atoms(int(atoms), d)
        active_set.add(np.zeros(d), 0.0, 1.0)  # w = 0 is the vertex of the true ranking

    def batch_step(delta, G):
        if Q > 1:
            dual.batch_step(delta, G)
            return
        w, ell = _single_query_step(active_set, -C * G[0], delta[0], dual.w, dual.ell[0], C)
        dual.W[0], dual.w, dual.ell[0] = w, w.copy(), ell

    if w0 is not None:
        batch_step(*problem.planes(w_start))

    it = 0
    for it in range(1, max_iter + 1):
        if Q > 1:
            for q in rng.permutation(Q):
                delta, G = problem.planes(dual.w, [q])
                dual.block_step(q, delta[0], G[0])
        if it % check_every and it != max_iter and Q > 1:
            continue
        w = dual.w
        delta, G = problem.planes(w)
        J = 0.5 * float(w @ w) + C * float(np.mean(delta + G @ w))
        if J < best_J:
            best_J, best_w = J, w.copy()
        best_dual = max(best_dual, dual.value())
        stop = rec.record(it, best_J, best_dual)
        if gap_small(best_J, best_dual, tol):
            converged = True
            break
        if stop:
            break
        batch_step(delta, G)
    logger.info("frank-wolfe: %d passes, J=%.6g, gap=%.3g, converged=%s",
                it, best_J, best_J - best_dual, converged)
    return SolverResult(w=best_w, n_iter=it, objective=best_J, converged=converged,
                        history=rec.history)
