"""What the estimators do around a solver: check ``solver_params``, run it (one RankSVM task:
:func:`fit_task`), report progress.

Progress follows scikit-learn's convention: with ``verbose > 0`` an estimator writes plain lines
to stdout (no :mod:`logging` set-up needed); ``verbose >= 2`` adds one line per solver iteration.
Lines go through :func:`tqdm.tqdm.write`, so they never land in the middle of a progress bar.
"""

import inspect
import sys

import numpy as np
from sklearn.utils import check_random_state

from ssvm._arrays import is_dask_array  # noqa: F401 (the estimators ask here, with the rest)
from ssvm.problem import StructuredHinge
from ssvm.solvers import SOLVERS

__all__ = ["RESERVED_SOLVER_PARAMS", "check_solver_params", "draw_seeds", "fit_task",
           "is_dask_array", "run_solver", "say"]

_MAX_SEED = np.iinfo(np.int32).max

#: solver arguments that the estimators set from their own parameters
# planes: the warm-start bundle that RankSVMCV's path carries from C to C (set by the path only)
RESERVED_SOLVER_PARAMS = frozenset({"problem", "C", "tol", "max_iter", "w0", "callback",
                                    "random_state", "planes"})


def say(message):
    """Write one progress line to stdout, clear of any active tqdm bar."""
    from tqdm import tqdm

    tqdm.write(message, file=sys.stdout)


def check_solver_params(solver, solver_params, owner):
    """``solver_params`` as a dict of keyword arguments the solver accepts.

    Parameters
    ----------
    solver : str
        Key of :data:`ssvm.solvers.SOLVERS`.
    solver_params : dict or None
    owner : str
        The estimator's name, for messages.

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        For a key the estimator sets itself or one the solver does not take (the message lists
        the accepted keys).
    """
    params = dict(solver_params or {})
    reserved = RESERVED_SOLVER_PARAMS.intersection(params)
    if reserved:
        raise ValueError(
            f"solver_params must not set {sorted(reserved)}: {owner} passes them itself "
            "(use the estimator's parameters of the same name; the cutting plane's warm-start "
            "planes are carried by RankSVMCV's path over C)."
        )
    accepted = [name for name, p in inspect.signature(SOLVERS[solver]).parameters.items()
                if name not in RESERVED_SOLVER_PARAMS and p.kind is not p.VAR_KEYWORD]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(
            f"solver_params has unknown key(s) {unknown} for solver={solver!r}; it accepts "
            f"{accepted} (see the docstring of ssvm.solvers.{SOLVERS[solver].__name__})."
        )
    return params


def draw_seeds(random_state, n):
    """``n`` integer seeds drawn up front from ``random_state`` (None, int or RandomState)."""
    return [int(seed) for seed in check_random_state(random_state).randint(_MAX_SEED, size=n)]


class IterationPrinter:
    """Solver callback printing each iteration's record (picklable; never stops the solver)."""

    def __init__(self, name):
        self.name = name

    def __call__(self, record):
        gap = record.get("gap")
        say(f"{self.name}: iteration {record['iteration']}, J={record['primal']:.6g}"
            + ("" if gap is None else f", gap={gap:.3g}") + f", {record['seconds']:.2f}s")
        return False


def run_solver(problem, solver, C, *, tol, max_iter, w0, random_state, verbose, name,
               solver_params):
    """Minimise ``J`` of ``problem`` with ``SOLVERS[solver]`` (checked ``solver_params``).

    ``max_iter=None`` keeps the solver's own default; ``verbose >= 2`` prints every iteration
    under ``name``.
    """
    params = dict(solver_params)
    if max_iter is not None:
        params["max_iter"] = max_iter
    return SOLVERS[solver](problem, C, tol=tol, w0=w0, random_state=random_state,
                           callback=IterationPrinter(name) if verbose >= 2 else None, **params)


def fit_task(X, target, queries, oracle, *, fit_intercept, n_jobs, solver, C, tol, max_iter,
             w0, random_state, verbose, name, solver_params, problem=None):
    """Minimise one binary task of ``RankSVM.fit`` (a joblib worker).

    In memory the task builds its :class:`~ssvm.problem.StructuredHinge` here, from input that
    ``fit`` validated (so without checking it again); a dask fit passes its ``problem`` built.
    """
    if problem is None:
        problem = StructuredHinge(X, target, queries, oracle, fit_intercept=fit_intercept,
                                  n_jobs=n_jobs, check_input=False)
    result = run_solver(problem, solver, C, tol=tol, max_iter=max_iter, w0=w0,
                        random_state=random_state, verbose=verbose, name=name,
                        solver_params=solver_params)
    if verbose:
        say(f"{name}: J={result.objective:.6g} after {result.n_iter} iterations "
            f"(converged={result.converged}, oracle {problem.oracle_seconds:.3f}s)")
    return result
