"""What every solver shares: the result type, argument checks and the history recorder."""

import logging
import numbers
import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["SolverResult"]

logger = logging.getLogger("ssvm.solvers")


@dataclass
class SolverResult:
    """Outcome of a solver run.

    Attributes
    ----------
    w : ndarray of shape (n_features,)
        The best iterate found (lowest ``J`` among those evaluated).
    n_iter : int
        Iterations performed (the unit is solver-specific: cutting-plane rounds, Pegasos steps,
        Frank–Wolfe passes).
    objective : float
        ``J(w)`` of the returned ``w``.
    converged : bool
        Whether the stopping rule (not ``max_iter`` or the callback) ended the run.
    history : list of dict
        One record per evaluation of the full objective, with keys ``iteration``, ``primal``
        (best ``J`` so far), ``dual`` (best certified lower bound on ``min J``, or None), ``gap``
        (``primal - dual`` or None), ``seconds`` (wall time since the start), ``oracle_seconds``,
        ``matvec_seconds``, ``fused_seconds`` (fused rounds: products and oracles together) and
        ``fused_oracle_seconds`` (the oracles' part of the fused rounds, which is in
        ``oracle_seconds`` too: subtract it once when adding the parts up), all cumulative since
        the start (see the problem's attributes of the same names), plus solver-specific keys.
    planes : Bundle or None
        The cutting plane's final working set (planes ``H(w) ≥ b_k + a_k·w``) and its best point,
        for a warm start at another ``C`` (:mod:`ssvm.solvers._warm`); None for the other
        solvers.
    """

    w: np.ndarray
    n_iter: int
    objective: float
    converged: bool
    history: list = field(default_factory=list)
    planes: object = None


def check_args(problem, C, tol, max_iter, w0):
    """Validate the arguments common to all solvers.

    Returns
    -------
    C : float
    tol : float
    max_iter : int
    w : ndarray
        Copy of ``w0``, or zeros.
    """
    if not isinstance(C, numbers.Real) or not np.isfinite(C) or C <= 0:
        raise ValueError(f"C must be a positive finite number, got {C!r}")
    if not isinstance(tol, numbers.Real) or not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a non-negative finite number, got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    d = problem.n_features
    if w0 is None:
        w = np.zeros(d)
    else:
        w = np.array(w0, dtype=np.float64)
        if w.shape != (d,):
            raise ValueError(f"w0 must have shape ({d},), got {w.shape}")
        if not np.all(np.isfinite(w)):
            raise ValueError("w0 contains NaN or infinity")
    return float(C), float(tol), int(max_iter), w


def gap_small(primal, dual, tol):
    """The stopping rule shared by the solvers: ``primal - dual <= tol * primal`` (relative)."""
    return primal - dual <= tol * max(primal, 0.0)


class Recorder:
    """Collects history records, tracks timers relative to the start and runs the callback.

    Every record is also logged at DEBUG level on the ``ssvm.solvers`` logger (``ssvm demo -vv``).
    """

    def __init__(self, problem, callback):
        if callback is not None and not callable(callback):
            raise ValueError("callback must be callable or None")
        self.problem = problem
        self.callback = callback
        self.history = []
        self._t0 = time.perf_counter()
        self._oracle0 = problem.oracle_seconds
        self._matvec0 = problem.matvec_seconds
        self._fused0 = getattr(problem, "fused_seconds", 0.0)
        self._fused_oracle0 = getattr(problem, "fused_oracle_seconds", 0.0)

    def record(self, iteration, primal, dual, **extra):
        """Append a record and return True if the callback asks to stop."""
        rec = {
            "iteration": int(iteration),
            "primal": float(primal),
            "dual": None if dual is None else float(dual),
            "gap": None if dual is None else float(primal - dual),
            "seconds": time.perf_counter() - self._t0,
            "oracle_seconds": self.problem.oracle_seconds - self._oracle0,
            "matvec_seconds": self.problem.matvec_seconds - self._matvec0,
            "fused_seconds": getattr(self.problem, "fused_seconds", 0.0) - self._fused0,
            "fused_oracle_seconds": getattr(self.problem, "fused_oracle_seconds", 0.0) - self._fused_oracle0,
        }
        rec.update(extra)
        self.history.append(rec)
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("iteration %d: J=%.6g%s, %.3fs (oracle %.3fs)", rec["iteration"], rec["primal"],
                         "" if dual is None else f", gap={rec['gap']:.3g}", rec["seconds"],
                         rec["oracle_seconds"])
        return bool(self.callback(rec)) if self.callback is not None else False
