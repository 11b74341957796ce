"""Oracle timing on the score vectors met during training.

Every oracle of a loss is timed on the same recorded inputs, interleaved call by call, in the
spirit of the QS paper's Tables 2-3.
"""

from __future__ import annotations

import time

import numpy as np

__all__ = [
    "RecordingOracle",
    "oracle_time_rows",
    "record_training_scores",
    "time_oracles",
    "timed_oracles",
]


class RecordingOracle:
    """Wraps an oracle and keeps a copy of every (scores, y) it is called with.

    Parameters
    ----------
    oracle : callable
        ``oracle(scores, y) -> (c, delta)``, e.g. from ``ssvm.losses.get_oracle``.

    Attributes
    ----------
    calls : list of (ndarray, ndarray)
        The inputs of every call, in order. (Recording works in-process only: use ``n_jobs=None``.)
    """

    def __init__(self, oracle):
        self.oracle = oracle
        self.calls = []

    def __call__(self, scores, y):
        self.calls.append((np.array(scores, dtype=np.float64), np.array(y, dtype=bool)))
        return self.oracle(scores, y)


def _binary_queries(y, classes):
    """One-vs-rest binary relevance vectors, one per class (a single one for two classes)."""
    if len(classes) == 2:
        return [np.asarray(y) == classes[1]]
    return [np.asarray(y) == c for c in classes]


def record_training_scores(X, y, classes, loss, C, *, solver="cutting_plane", tol=1e-3,
                           max_iter=None, random_state=0, progress=None):
    """Train one query per class with ``solver`` and record the oracle inputs met on the way.

    Builds ``ssvm.problem.StructuredHinge`` with a :class:`RecordingOracle` around the "auto"
    oracle of ``loss`` for every one-vs-rest query and runs the solver to tolerance.

    Parameters
    ----------
    X : ndarray, shape (n_samples, n_features)
    y : ndarray of class labels
    classes : ndarray
    loss : str
    C : float
    solver : str, default="cutting_plane"
    tol : float, default=1e-3
    max_iter : int, optional
        Passed to the solver when given.
    random_state : int, default=0
    progress : tqdm-like, optional
        ``update(1)`` is called after every class's run.

    Returns
    -------
    calls : list of (scores, y_bool)
        Every oracle input of every class's training run.
    results : list
        The solver results (with their histories), one per class.
    """
    from ssvm.losses import get_oracle, loss_entry
    from ssvm.problem import StructuredHinge
    from ssvm.solvers import SOLVERS

    calls, results = [], []
    kwargs = {} if max_iter is None else {"max_iter": max_iter}
    for relevant in _binary_queries(y, classes):
        oracle = RecordingOracle(get_oracle(loss, "auto"))
        problem = StructuredHinge(X, relevant, [np.arange(X.shape[0])], oracle,
                                  fit_intercept=loss_entry(loss).intercept)
        results.append(SOLVERS[solver](problem, C, tol=tol, random_state=random_state, **kwargs))
        calls.extend(oracle.calls)
        if progress is not None:
            progress.update(1)
    return calls, results


def timed_oracles(loss, names=None):
    """The oracles to time for ``loss``: every supported one except "auto" and "brute".

    A loss with a single oracle (the 0-1 loss) is timed through "auto".

    Parameters
    ----------
    loss : str
    names : sequence of str, optional
        Restrict to these oracle names.

    Returns
    -------
    dict
        oracle name -> callable ``(scores, y_bool) -> (c, delta)``.
    """
    from ssvm.losses import get_oracle, supported_oracles

    available = [o for o in supported_oracles(loss) if o not in ("auto", "brute")] or ["auto"]
    if names is not None:
        unknown = set(names) - set(available)
        if unknown:
            raise ValueError(f"oracles {sorted(unknown)} do not support loss {loss!r}")
        available = [o for o in available if o in names]
    return {name: get_oracle(loss, name) for name in available}


def time_oracles(calls, oracles, *, check=True):
    """Time every oracle on every recorded call (oracles interleaved call by call).

    Each oracle is first called once untimed (the first call's imports and work arrays). With ``check``, the oracles'
    hinge values ``delta + scores @ c`` are compared on every call: exact oracles must agree.

    Parameters
    ----------
    calls : list of (scores, y_bool)
    oracles : dict
        name -> callable.
    check : bool, default=True

    Returns
    -------
    dict
        name -> ndarray of seconds per call.

    Raises
    ------
    ValueError
        If ``calls`` is empty, or with ``check`` when two oracles disagree on a call.
    """
    if not calls:
        raise ValueError("no oracle calls to time")
    for oracle in oracles.values():
        oracle(*calls[0])
    times = {name: np.empty(len(calls)) for name in oracles}
    for i, (scores, y) in enumerate(calls):
        hinges = {}
        for name, oracle in oracles.items():
            start = time.perf_counter()
            c, delta = oracle(scores, y)
            times[name][i] = time.perf_counter() - start
            hinges[name] = delta + float(scores @ c)
        if check and hinges:
            values = np.array(list(hinges.values()))
            scale = 1.0 + np.abs(values).max()
            if values.max() - values.min() > 1e-8 * scale:
                raise ValueError(f"oracles disagree on call {i}: {hinges}")
    return times


def oracle_time_rows(loss_label, calls, times):
    """Table rows for :func:`time_oracles` output.

    Parameters
    ----------
    loss_label : str
    calls : list
        The recorded calls (their number is reported).
    times : dict
        oracle name -> seconds per call.

    Returns
    -------
    list of dict
        Per oracle: median ms per call, total seconds over the run, and the median time relative to
        the "qs" oracle of the same loss (None when the loss has no QS oracle).
    """
    qs = float(np.median(times["qs"])) if "qs" in times else None
    rows = []
    for name, t in times.items():
        median = float(np.median(t))
        rows.append({
            "loss": loss_label,
            "oracle": name,
            "calls": len(calls),
            "median ms/call": 1e3 * median,
            "total s": float(np.sum(t)),
            "x QS": None if qs is None else median / qs,
        })
    return rows
