"""The cutting plane's dual QP over the capped simplex, solved exactly.

    maximise  b @ α − ½ αᵀ M α    subject to  α ≥ 0,  Σ α ≤ C,

with ``M`` the (positive semi-definite, possibly singular) Gram matrix of the working-set planes.
Two interchangeable solvers:

- :func:`solve_capped_simplex_qp`, a primal active-set method specialised to this constraint set
  (the default of the cutting plane);
- :class:`CvxpyDualQP`, a cvxpy problem built once with fixed capacity and DPP parameters, re-solved
  warm.
"""

import logging

import numpy as np
from scipy.linalg import cho_solve

logger = logging.getLogger(__name__)

__all__ = ["solve_capped_simplex_qp", "CvxpyDualQP", "dual_value"]


def dual_value(M, b, alpha):
    """``b @ α − ½ αᵀ M α``.

    Parameters
    ----------
    M : ndarray of shape (K, K)
    b, alpha : ndarray of shape (K,)

    Returns
    -------
    float
    """
    return float(b @ alpha - 0.5 * alpha @ (M @ alpha))


def _check_qp(M, b, C):
    M = np.asarray(M, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    K = b.shape[0] if b.ndim == 1 else -1
    if b.ndim != 1 or M.shape != (K, K):
        raise ValueError(f"M must be (K, K) and b (K,), got {M.shape} and {b.shape}")
    if not (np.all(np.isfinite(M)) and np.all(np.isfinite(b))):
        raise ValueError("M and b must be finite")
    if not np.isfinite(C) or C <= 0:
        raise ValueError(f"C must be positive and finite, got {C!r}")
    return 0.5 * (M + M.T), b


def _feasible_start(alpha0, K, C):
    """A feasible point of the capped simplex close to ``alpha0`` (zeros when None)."""
    if alpha0 is None:
        return np.zeros(K)
    a = np.clip(np.asarray(alpha0, dtype=np.float64), 0.0, None)
    if a.shape != (K,):
        raise ValueError(f"alpha0 must have shape ({K},), got {a.shape}")
    s = a.sum()
    if s > C:
        a *= C / s
    return a


def _null_space_of_ones(m):
    """Orthonormal basis (m, m-1) of {p : Σ p = 0}, from the Householder map of 1/√m to e₁."""
    u = np.full(m, 1.0 / np.sqrt(m))
    u[0] -= 1.0
    H = np.eye(m) - np.outer(u, u) * (2.0 / (u @ u))
    return H[:, 1:]


def _subspace_direction(QF, gF, gtol):
    """Minimiser direction of ½pᵀQFp + gFᵀp over Σp = 0, or a zero-curvature descent direction.

    The reduced Hessian ``ZᵀQFZ`` is factored by Cholesky when it is well conditioned; otherwise
    (singular or nearly so) its eigen-decomposition separates the zero-curvature directions.

    Returns
    -------
    p : ndarray
        The Newton step to the subspace minimiser when the reduced problem is bounded, else a
        direction of (numerically) zero curvature along which the objective decreases linearly.
    """
    Z = _null_space_of_ones(gF.size)
    R = Z.T @ QF @ Z
    R = 0.5 * (R + R.T)
    r = Z.T @ gF
    diag_max = max(np.abs(np.diag(R)).max(), np.finfo(float).tiny)
    try:
        L = np.linalg.cholesky(R)
    except np.linalg.LinAlgError:
        L = None
    if L is not None and np.diag(L).min() ** 2 > 1e-9 * diag_max:
        return Z @ cho_solve((L, True), -r)
    lam, V = np.linalg.eigh(R)
    rt = V.T @ r
    lam_tol = 1e-11 * max(np.abs(lam).max(), np.finfo(float).tiny)
    pos = lam > lam_tol
    null_part = rt[~pos]
    if null_part.size and np.linalg.norm(null_part) > gtol:
        return Z @ (V[:, ~pos] @ -null_part)
    return Z @ (V[:, pos] @ (-rt[pos] / lam[pos]))


def solve_capped_simplex_qp(M, b, C, alpha0=None, *, max_iter=None, check_input=True):
    """Exact solution of ``max b@α − ½αᵀMα`` over ``{α ≥ 0, Σα ≤ C}``.

    A primal active-set method on the lifted simplex ``{(α, s) ≥ 0 : Σα + s = C}``: on the current
    free set it takes the exact Newton step within the face (Cholesky of the reduced Hessian, or
    its eigen-decomposition when that is singular, so zero-curvature descent directions are
    followed to the boundary), with an exact line search; it drops a blocking variable when the
    step leaves the face, and at the face's optimum frees the variable with the most negative
    Lagrange multiplier, until the KKT conditions hold.

    Parameters
    ----------
    M : ndarray of shape (K, K)
        Positive semi-definite (symmetrised internally).
    b : ndarray of shape (K,)
    C : float
        Positive cap on ``Σα``.
    alpha0 : ndarray of shape (K,), optional
        Warm start (clipped to the feasible set).
    max_iter : int, optional
        Active-set changes allowed (default ``20 * (K + 1) + 50``).
    check_input : bool, default=True
        Validate and symmetrise ``M`` and ``b``. The cutting plane passes False: its Gram matrix is
        symmetric and finite by construction.

    Returns
    -------
    alpha : ndarray of shape (K,)
        A maximiser (feasible: ``alpha >= 0`` and ``alpha.sum() <= C`` up to rounding).
    n_iter : int
        Active-set iterations used.
    """
    if check_input:
        M, b = _check_qp(M, b, C)
    K = b.size
    if K == 0:
        return np.zeros(0), 0
    n = K + 1
    Q = np.zeros((n, n))
    Q[:K, :K] = M
    q = np.zeros(n)
    q[:K] = b
    x = np.zeros(n)
    x[:K] = _feasible_start(alpha0, K, C)
    x[K] = max(C - x[:K].sum(), 0.0)
    free = x > 0
    if not free.any():
        x[K], free[K] = C, True
    scale = max(1.0, np.abs(b).max(), C * np.abs(np.diag(M)).max())
    gtol = 1e-14 * scale
    kkt_tol = 1e-12 * scale
    max_iter = 20 * n + 50 if max_iter is None else int(max_iter)

    g = Q @ x - q
    need_step, stalled = True, False
    for it in range(1, max_iter + 1):
        F = np.flatnonzero(free)
        if need_step and F.size > 1:
            QF = Q[np.ix_(F, F)]
            p = _subspace_direction(QF, g[F], gtol)
            curv = p @ QF @ p
            slope = g[F] @ p
            if slope >= 0:  # already optimal on this face (up to rounding)
                need_step, stalled = False, True
                continue
            stalled = False
            t_line = -slope / curv if curv > 0 else np.inf
            neg = p < 0
            ratios = -x[F][neg] / p[neg]
            j = int(np.argmin(ratios)) if ratios.size else -1
            t_block = ratios[j] if ratios.size else np.inf
            if t_block < t_line:
                x[F] = np.maximum(x[F] + t_block * p, 0.0)
                blocked = F[neg][j]
                x[blocked] = 0.0
                free[blocked] = False
            else:
                x[F] = np.maximum(x[F] + t_line * p, 0.0)
                need_step = False
            g = Q @ x - q
            continue
        # on the face optimum: Lagrange multipliers of x_i >= 0 are g_i - mu
        mu = g[F].mean()
        if not stalled and F.size > 1 and np.abs(g[F] - mu).max() > kkt_tol:
            need_step = True  # a line-search step ended inside the face short of its optimum
            continue
        viol = g - mu
        viol[free] = np.inf
        j = int(np.argmin(viol))
        if viol[j] >= -kkt_tol:
            return x[:K].copy(), it
        free[j] = True
        need_step, stalled = True, False
    logger.warning("capped-simplex QP: no convergence in %d active-set iterations", max_iter)
    return x[:K].copy(), max_iter


class CvxpyDualQP:
    """The dual QP as a cvxpy problem built once, with fixed capacity and DPP parameters.

    ``M = LᵀL`` enters through a ``(capacity, capacity)`` factor parameter, ``b`` and the per-plane
    upper bounds (``C`` for used slots, 0 for unused ones) through vector parameters, so every
    re-solve reuses the cached canonicalisation.

    Parameters
    ----------
    capacity : int
        Largest number of planes.
    C : float
        Cap on ``Σα``.
    solver : str, default="OSQP"
    **solver_options
        Passed to ``cvxpy.Problem.solve``. Default for OSQP: tolerances 1e-10 with solution
        polishing (an active-set refinement), which is accurate and warm-startable; Clarabel at such
        tolerances fails now and then.
    """

    def __init__(self, capacity, C, solver="OSQP", **solver_options):
        import cvxpy as cp

        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        if not np.isfinite(C) or C <= 0:
            raise ValueError(f"C must be positive and finite, got {C!r}")
        self.capacity = int(capacity)
        self.C = float(C)
        self.solver = solver
        if solver == "OSQP" and not solver_options:
            solver_options = {"eps_abs": 1e-10, "eps_rel": 1e-10, "polishing": True,
                              "max_iter": 20_000}
        self.solver_options = solver_options
        # scaled variable beta = alpha / s on {beta >= 0, sum(beta) <= C / s}, with s the size of
        # the solution (see `solve`), and the objective scaled to order one
        self._beta = cp.Variable(capacity, nonneg=True)
        self._L = cp.Parameter((capacity, capacity))
        self._b = cp.Parameter(capacity)
        self._ub = cp.Parameter(capacity, nonneg=True)
        self._cap = cp.Parameter(nonneg=True)
        objective = cp.Maximize(self._b @ self._beta - 0.5 * cp.sum_squares(self._L @ self._beta))
        constraints = [cp.sum(self._beta) <= self._cap, self._beta <= self._ub]
        self.problem = cp.Problem(objective, constraints)
        if not self.problem.is_dpp():
            raise RuntimeError("the dual QP must be DPP")

    def solve(self, M, b, alpha0=None):
        """Maximiser of the dual QP for the first ``K`` slots.

        Parameters
        ----------
        M : ndarray of shape (K, K)
        b : ndarray of shape (K,)
        alpha0 : ndarray of shape (K,), optional
            Warm start.

        Returns
        -------
        ndarray of shape (K,)
            Feasible ``α`` (clipped to the constraint set).
        """
        M, b = _check_qp(M, b, self.C)
        K = b.size
        if K > self.capacity:
            raise ValueError(f"{K} planes exceed the capacity {self.capacity}")
        if K == 0:
            return np.zeros(0)
        C = self.C
        bmax = b.max()
        if bmax <= 0:  # b @ alpha <= 0 and the quadratic term <= 0: alpha = 0 is optimal
            return np.zeros(K)
        # size of the solution: a single plane's unconstrained optimum b_k / M_kk, capped at C
        with np.errstate(divide="ignore", invalid="ignore"):
            sizes = np.where(b > 0, b / np.diag(M), 0.0)
        s = min(C, sizes.max())
        f = bmax * s  # order of the optimal value
        lam, V = np.linalg.eigh(M * (s * s / f))
        L = np.zeros((self.capacity, self.capacity))
        L[:K, :K] = (V * np.sqrt(np.clip(lam, 0.0, None))).T
        bb = np.zeros(self.capacity)
        bb[:K] = b * (s / f)
        ub = np.zeros(self.capacity)
        ub[:K] = C / s
        self._L.value, self._b.value, self._ub.value, self._cap.value = L, bb, ub, C / s
        start = np.zeros(self.capacity)
        start[:K] = _feasible_start(alpha0, K, C) / s
        self._beta.value = start
        self.problem.solve(solver=self.solver, warm_start=True, **self.solver_options)
        if self._beta.value is None:
            raise RuntimeError(f"cvxpy failed on the dual QP: status {self.problem.status}")
        if self.problem.status != "optimal":
            logger.warning("cvxpy dual QP: status %s", self.problem.status)
        return _feasible_start(self._beta.value[:K] * s, K, C)
