"""Pegasos: projected stochastic subgradient descent (Shalev-Shwartz, Singer, Srebro & Cotter 2011).

``J(w)/C = λ/2‖w‖² + H(w)`` with ``λ = 1/C`` is Pegasos' objective. Step ``t`` samples a mini-batch
of queries, takes ``w ← (1 − 1/t)·w − (C/t)·ĝ`` (``ĝ`` the batch mean of the queries'
subgradients ``G_q``, step ``1/(λt)``), then projects onto the ball ``‖w‖ ≤ sqrt(2·C·H(0))``
that contains the optimum (``½‖w*‖² ≤ J(w*) ≤ J(0) = C·H(0)``). ``w`` is stored as ``a·v`` so the
shrinking costs O(1).
"""

import logging
import math

import numpy as np
from sklearn.utils import check_random_state

from ._block_dual import BlockDual
from ._bundle import WorkingSet, solve_bundle
from ._common import Recorder, SolverResult, check_args, gap_small

logger = logging.getLogger(__name__)

__all__ = ["pegasos"]

# Largest Q * n_features for which per-query averaged planes (the dual bound) are kept.
_MAX_PLANE_STORE = 50_000_000
# Full planes kept from the checks for the dual bound (those the dual QP uses, newest first).
_MAX_CHECK_PLANES = 50


def pegasos(problem, C, tol=1e-3, max_iter=10000, w0=None, callback=None, *, batch_size=None,
            check_every=5, random_state=None):
    """Minimise ``J(w) = ½‖w‖² + C·(1/Q) Σ_q H_q(w)`` by Pegasos with iterate averaging.

    The returned iterate is the weighted average ``w̄_t = Σ_s s·w_s / Σ_s s`` (weights growing with
    the step, as in Lacoste-Julien, Schmidt & Bach 2012), which converges at rate O(1/t).

    Stopping rule: every ``check_every`` epochs (an epoch is ``ceil(Q / batch_size)`` steps), one
    full pass at ``w̄`` gives ``J(w̄)`` and every query's supporting plane there. A certified lower
    bound on ``min J`` is the dual QP (as in the cutting plane) over the full planes of the checks
    and, when memory allows (``Q · n_features ≤ 5e7``), the plane averaged by a block Frank–Wolfe
    dual state that is fed with every per-query plane Pegasos computes (exact line search, so it
    only improves; no extra oracle calls) plus a batch step with the check's planes. Training
    stops when ``J_best − dual ≤ tol · J_best`` (relative), or after ``max_iter`` steps.

    Parameters
    ----------
    problem : StructuredHinge
        The training problem.
    C : float
        Positive trade-off of ``J``.
    tol : float, default=1e-3
        Relative certified gap at which to stop.
    max_iter : int, default=10000
        Maximum steps (mini-batches).
    w0 : ndarray of shape (n_features,), optional
        Warm start (projected onto the ball). Pegasos' iterate is the running mean of ``−C·ĝ``
        over past steps, so ``w0`` is taken as the result of one epoch of earlier steps: the step
        counter starts after one epoch instead of at zero (with ``w0 = None`` it starts at zero and
        the first step ignores the starting point).
    callback : callable, optional
        Called with each history record (one per check); returning True stops training.
    batch_size : int, optional
        Queries per step; default ``ceil(Q / 10)`` (the full batch when ``Q = 1``).
    check_every : int, default=5
        Epochs between checks.
    random_state : int, RandomState instance or None
        Sampling of the mini-batches (without replacement within a step).

    Returns
    -------
    SolverResult
        ``w`` is the checked averaged iterate with the lowest ``J``.
    """
    C, tol, max_iter, w = check_args(problem, C, tol, max_iter, w0)
    Q, d = problem.n_queries, problem.n_features
    if batch_size is None:
        batch_size = math.ceil(Q / 10)
    if isinstance(batch_size, bool) or int(batch_size) != batch_size or not 1 <= batch_size:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if isinstance(check_every, bool) or int(check_every) != check_every or check_every < 1:
        raise ValueError(f"check_every must be a positive integer, got {check_every!r}")
    batch_size = min(int(batch_size), Q)
    rng = check_random_state(random_state)
    steps_per_check = int(check_every) * math.ceil(Q / batch_size)

    rec = Recorder(problem, callback)
    # planes at 0: H(0) for the radius; also the first valid plane of every query
    delta0, G0 = problem.planes(np.zeros(d))
    radius = math.sqrt(2.0 * C * max(float(delta0.mean()), 0.0))
    shadow = BlockDual(Q, d, C) if Q * d <= _MAX_PLANE_STORE else None
    if shadow is not None:
        shadow.batch_step(delta0, G0)
    # the checks' planes (and one from the block dual state) for the certified lower bound
    bundle = WorkingSet(_MAX_CHECK_PLANES + 2, d, zero=0.0)
    bundle.add(float(delta0.mean()), G0.mean(axis=0))

    norm = float(np.linalg.norm(w))
    v = w * (radius / norm) if norm > radius else w.copy()
    a = 1.0
    w_avg = v.copy()
    offset = 0 if w0 is None else math.ceil(Q / batch_size)
    avg_weight = 0.0 if w0 is None else 0.5 * offset * (offset + 1)
    best_J, best_w, best_dual = np.inf, w_avg.copy(), 0.0
    converged = False
    t = 0
    for step in range(1, max_iter + 1):
        t = step + offset
        batch = np.arange(Q) if batch_size == Q else rng.choice(Q, batch_size, replace=False)
        delta, G = problem.planes(a * v, batch)
        g = G.mean(axis=0)
        if shadow is not None:  # Pegasos' planes are dual vertices too: free certificate
            for q, dq, Gq in zip(batch, delta, G):
                shadow.block_step(q, dq, Gq)
        if t == 1:  # (1 - 1/t) = 0: w = -C·g
            a, v = 1.0, -C * g
        else:
            a *= 1.0 - 1.0 / t
            v -= (C / t / a) * g
        norm = a * float(np.linalg.norm(v))
        if norm > radius:
            a *= radius / norm
        if a < 1e-8:  # fold the scale back in before it underflows
            v *= a
            a = 1.0
        avg_weight += t
        w_avg += (t / avg_weight) * (a * v - w_avg)
        if step % steps_per_check and step != max_iter:
            continue

        J, dual = _check(problem, w_avg, C, bundle, shadow)
        if J < best_J:
            best_J, best_w = J, w_avg.copy()
        best_dual = max(best_dual, dual)
        stop = rec.record(step, best_J, best_dual)
        if gap_small(best_J, best_dual, tol):
            converged = True
            break
        if stop:
            break
    logger.info("pegasos: %d steps, J=%.6g, gap=%.3g, converged=%s",
                step, best_J, best_J - best_dual, converged)
    return SolverResult(w=best_w, n_iter=step, objective=best_J, converged=converged,
                        history=rec.history)


def _check(problem, w, C, bundle, shadow):
    """``J(w)`` by one full pass, and the certified lower bound on ``min J`` of the bundle after
    adding the pass's plane (and the block dual state's averaged plane, if kept).

    The bundle keeps the check planes the dual uses (and the newest), at most ``_MAX_CHECK_PLANES``.
    """
    delta_all, G_all = problem.planes(w)
    H, g = float(np.mean(delta_all + G_all @ w)), G_all.mean(axis=0)
    bundle.add(H - float(g @ w), g)
    n_checks = bundle.size
    if shadow is not None:
        # the block state averages valid per-query planes into one valid plane of H
        shadow.batch_step(delta_all, G_all)
        bundle.add(float(shadow.ell.sum()), -shadow.w / C)
    bundle.alpha[: bundle.size] = 0.0  # a cold start, as every check's QP is a new one
    _, dual = solve_bundle(bundle, C)
    used = np.zeros(bundle.size, dtype=bool)
    used[:n_checks] = bundle.alpha[:n_checks] > 0
    used[n_checks - 1] = True
    keep = np.zeros(bundle.size, dtype=bool)
    keep[np.flatnonzero(used)[-_MAX_CHECK_PLANES:]] = True
    bundle.keep(keep)
    return 0.5 * float(w @ w) + C * H, dual
