"""CCCP (the concave-convex procedure) for the latent objective, as one function.

Each step (1) imputes every positive image's best window under the current ``w``, (2) minimises
the convex bound with those windows fixed, warm-started from ``w``, and (3) evaluates the latent
objective at the new ``w`` (the bound re-imputed there). It stops when the objective decreases by
no more than ``tol`` times its previous value (a *relative* rule), when no imputed window changes,
after ``max_iter`` steps, or when ``on_step`` asks to.
"""

import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["CCCPState", "StartRun", "cccp"]


@dataclass
class CCCPState:
    """Where CCCP stands: what a checkpoint holds and what a resumed run continues from.

    Attributes
    ----------
    w : ndarray
        The current weights (with the intercept last, if any).
    history : list of float
        Latent objective at w₀ and after every step.
    steps : list of dict
        One record per step: ``step``, ``objective``, ``decrease``, ``seconds``,
        ``lai_seconds``, ``lai_calls``, ``solver_iter``, ``n_changed``.
    converged : bool
        Whether the stopping rule (not ``max_iter`` or ``on_step``) ended the run.
    """

    w: np.ndarray
    history: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    converged: bool = False


@dataclass
class StartRun:
    """One CCCP run of a fit that tries several starts (:mod:`ssvm.latent.starts`).

    Attributes
    ----------
    label : str
        The start (``"mean"``, ``"zero_one C*0.1"``, ``"vector 0"``, ...).
    key : str
        Digest of the start's first imputation (a start imputing the same windows is skipped).
    state : CCCPState
    done : bool
        Whether the run has ended (a checkpointed run that has not is resumed).
    """

    label: str
    key: str
    state: CCCPState
    done: bool = False


def cccp(bound, state, *, solve, C, max_iter, tol, meter, on_step=None):
    """Run CCCP steps from ``state`` until it converges or ``max_iter`` steps are done in all.

    Parameters
    ----------
    bound : ConvexBound
        ``impute(w) -> windows`` and ``problem(windows) -> Problem``.
    state : CCCPState
        Start (``history`` empty: J(w₀) is evaluated first) or a checkpointed state.
    solve : callable
        ``solve(problem, w0, step) -> SolverResult``: the convex solve of step ``step`` (1, 2, ...).
    C : float
        Regularisation trade-off of the objective.
    max_iter : int
        Maximum number of steps, counting those already in ``state``.
    tol : float
        Relative decrease below which CCCP stops: ``J_{t-1} - J_t <= tol * |J_{t-1}|``.
    meter : OracleMeter
        Charged with the loss-augmented inference of every problem.
    on_step : callable, optional
        ``on_step(state, record) -> bool`` after every step; True stops.

    Returns
    -------
    CCCPState
        ``state``, updated in place.
    """
    imputed = bound.impute(state.w)
    problem = bound.problem(imputed)
    if not state.history:
        state.history.append(float(problem.objective(state.w, C)))
        meter.charge(problem)
    while not state.converged and len(state.steps) < max_iter:
        tic = time.perf_counter()
        result = solve(problem, state.w, len(state.steps) + 1)
        meter.charge(problem)
        w = np.asarray(result.w, dtype=np.float64).copy()
        new_imputed = bound.impute(w)
        problem = bound.problem(new_imputed)
        objective = float(problem.objective(w, C))
        meter.charge(problem)
        n_changed = int(np.count_nonzero(new_imputed != imputed))
        decrease = state.history[-1] - objective
        state.converged = n_changed == 0 or decrease <= tol * abs(state.history[-1])
        state.w, imputed = w, new_imputed
        state.history.append(objective)
        record = {"step": len(state.steps) + 1, "objective": objective, "decrease": decrease,
                  "seconds": time.perf_counter() - tic, "lai_seconds": meter.seconds,
                  "lai_calls": meter.calls, "solver_iter": int(result.n_iter),
                  "n_changed": n_changed}
        state.steps.append(record)
        if on_step is not None and on_step(state, dict(record)):
            break
    return state
