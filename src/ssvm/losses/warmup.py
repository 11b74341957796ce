"""Compile the oracles' numba kernels ahead of their first real use, and say so while it happens.

numba compiles a kernel the first time it runs and caches the machine code on disk (``__pycache__``
next to the source, or numba's user cache directory when that is not writable), so only the first
run on a machine pays for it.  :func:`warm_up` runs the kernels of the chosen losses on tiny inputs,
so that the compilation happens in one known place, with a log line, instead of inside the first
training step; ``python -m ssvm warmup`` does the same for every loss, and then for the training
round's kernels (:func:`ssvm.problem.warmup.warm_up_rounds`).
"""

import logging
import pickle
import threading
import time

import numpy as np

from .registry import _REGISTRY, LOSS_NAMES, get_oracle, supported_oracles

__all__ = ["CompileNotice", "cache_is_cold", "warm_up"]

logger = logging.getLogger(__name__)

# what the notice says, by few_positives: the CPU time of the compilation, measured with
# scripts/bench_compile.py (rounded up)
_ESTIMATE = {False: "about 10 s", True: "about 25 s"}


def cache_is_cold(kernel):
    """Whether numba's on-disk cache lacks ``kernel`` (a ``@njit(cache=True)`` function): a peek at
    its index through numba's private cache object; None if that object is not as expected.

    Parameters
    ----------
    kernel : numba dispatcher

    Returns
    -------
    bool or None
    """
    try:
        return not kernel._cache._cache_file._load_index()
    except (AttributeError, TypeError, ValueError, OSError, EOFError, pickle.UnpicklingError):
        return None


def _cache_is_cold():
    """Whether the cache lacks the sorting baselines' scan (the QS family is compiled with the package:
    the oracles' numba kernels left are the others')."""
    from .greedy import _scan_all

    return cache_is_cold(_scan_all)


class CompileNotice:
    """A ``with`` block that may compile: logs "compiling ssvm's kernels, once (``estimate``) ..." at
    once when ``cold``, else when the block runs longer than ``notice_after`` seconds, and then
    how long it took; the seconds are in ``seconds`` after the block.

    Parameters
    ----------
    log : logging.Logger
    cold : bool or None
        Whether the cache is known to be cold.
    estimate : str
        How long compiling takes, for the notice ("about 10 s").
    notice_after : float
    """

    def __init__(self, log, cold, estimate, notice_after):
        self.log, self.cold, self.estimate = log, cold, estimate
        self.told = False
        self.seconds = 0.0
        self._timer = threading.Timer(notice_after, self._tell)
        self._timer.daemon = True

    def _tell(self):
        self.told = True
        self.log.info("compiling ssvm's kernels, once (%s); numba caches them for later runs", self.estimate)

    def __enter__(self):
        self._start = time.perf_counter()
        if self.cold:
            self._tell()
        else:
            self._timer.start()
        return self

    def __exit__(self, *exc):
        self._timer.cancel()
        self.seconds = time.perf_counter() - self._start
        if self.told and exc[0] is None:
            self.log.info("compiled ssvm's kernels in %.1f s", self.seconds)
        return False


def _tiny_queries():
    """Inputs that take every compiled path: a query with many positives (QS's sort-and-walk path)
    and one with few (the score grid, P < N / 50), and both stacked for the batched oracles."""
    rng = np.random.default_rng(0)
    walk_y = np.array([True, False, True, False, False, True])
    grid_y = np.zeros(60, dtype=bool)
    grid_y[7] = True
    walk = (rng.normal(size=walk_y.size), walk_y)
    grid = (rng.normal(size=grid_y.size), grid_y)
    return walk, grid


def warm_up(losses=LOSS_NAMES, *, few_positives=True, log=None, notice_after=3.0):
    """Compile (or load from numba's cache) the kernels of the oracles of ``losses``.

    Every oracle of every loss (except the exhaustive ``"brute"``) runs once on tiny inputs, per
    query and batched.  Nothing is returned but the time: the point is the side effect.

    Parameters
    ----------
    losses : sequence of str, default=LOSS_NAMES
        Loss names (see :data:`ssvm.losses.LOSS_NAMES`).
    few_positives : bool, default=True
        Also compile the QS oracle's score grid, the path of queries with fewer than N / 50
        positives (N negatives); False compiles only the sort-and-walk path of the others.
    log : logging.Logger, optional
        Told, at INFO, "compiling ssvm's kernels, once ..." when numba's cache is cold (at once) or
        when loading takes longer than ``notice_after`` seconds, and then how long it took.
        Defaults to this module's logger.
    notice_after : float, default=3.0
        Seconds after which the compile notice is logged if the cache did not look cold.

    Returns
    -------
    float
        Seconds spent.

    Raises
    ------
    ValueError
        For an unknown loss name.
    """
    log = logger if log is None else log
    for loss in losses:
        supported_oracles(loss)  # a clear error for an unknown name, before any work
    queries = _tiny_queries() if few_positives else _tiny_queries()[:1]
    compiled = any(_REGISTRY[loss].loss_object is not None for loss in losses)  # the rank losses' kernels
    with CompileNotice(log, compiled and _cache_is_cold(), _ESTIMATE[few_positives], notice_after) as notice:
        for loss in losses:
            for name in supported_oracles(loss):
                if name == "brute":
                    continue
                oracle = get_oracle(loss, name)
                for scores, y in queries:
                    oracle(scores, y)
                    oracle.batch(np.concatenate([scores, scores]), np.concatenate([y, y]),
                                 np.array([0, y.size]), np.array([y.size, 2 * y.size]))
    return notice.seconds
