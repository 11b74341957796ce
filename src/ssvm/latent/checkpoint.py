"""Checkpoints of a CCCP run: written atomically after every step, matched to data and parameters.

A checkpoint is an ``.npz`` file with the weights and a JSON record (format version, fingerprint of
data and parameters, the :class:`~ssvm.latent.cccp.CCCPState` and the oracle totals). It is written
to a temporary file in the same folder and moved into place with :func:`os.replace`, so an
interrupted write never leaves a broken checkpoint.
"""

import hashlib
import json
import logging
import os
from numbers import Integral
from pathlib import Path

import numpy as np

from .cccp import CCCPState

__all__ = ["fingerprint", "save_checkpoint", "load_checkpoint"]

logger = logging.getLogger(__name__)

# 3: solver_params (was solver_options), seeds drawn from random_state, "decrease" in step records
_VERSION = 3


def fingerprint(model, intercept, w0, data, positive):
    """What a checkpoint must match: the parameters that change the run, the data and the labels.

    Parameters
    ----------
    model : LatentRankSVM
    intercept : bool
        Whether the weights end with an intercept.
    w0 : ndarray or None
        The starting weights (None: ``init="mean"``, computed in the run).
    data : Bags
    positive : ndarray of bool

    Returns
    -------
    str
    """
    def digest(array):
        return hashlib.sha1(np.ascontiguousarray(array).tobytes()).hexdigest()

    seed = model.random_state
    params = {"loss": model.loss, "oracle": model.oracle, "solver": model.solver,
              "C": float(model.C), "tol": float(model.tol), "max_iter": model.max_iter,
              "negatives": model.negatives, "fit_intercept": bool(intercept),
              "init": model.init if w0 is None else digest(w0),
              "random_state": seed if seed is None or isinstance(seed, Integral) else "RandomState",
              "solver_params": repr(sorted((model.solver_params or {}).items())),
              "data": data.fingerprint(), "labels": digest(positive.astype(bool))}
    return json.dumps(params, sort_keys=True, default=repr)  # a QSLoss object by its repr


def save_checkpoint(path, fingerprint, state, meter):
    """Write ``state`` and the oracle totals of ``meter`` to ``path`` atomically.

    Parameters
    ----------
    path : str or path-like
    fingerprint : str
        What the checkpoint must match to be resumed (see :func:`load_checkpoint`).
    state : CCCPState
    meter : OracleMeter
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    meta = {"version": _VERSION, "fingerprint": fingerprint, "history": state.history,
            "steps": state.steps, "converged": bool(state.converged),
            "lai_seconds": float(meter.seconds), "lai_calls": int(meter.calls)}
    with open(tmp, "wb") as handle:
        np.savez(handle, w=state.w, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def load_checkpoint(path, fingerprint):
    """The state and oracle totals saved at ``path``, or None if there is no file.

    Parameters
    ----------
    path : str or path-like
    fingerprint : str
        Must equal the saved one.

    Returns
    -------
    (CCCPState, float, int) or None
        The state, the oracle seconds and the oracle calls so far.

    Raises
    ------
    ValueError
        If the file has another format version or was written for other data or parameters.
    """
    path = Path(path)
    if not path.exists():
        logger.info("no checkpoint at %s: starting from scratch", path)
        return None
    with np.load(path, allow_pickle=False) as archive:
        w = archive["w"].astype(np.float64)
        meta = json.loads(archive["meta"].tobytes().decode())
    if meta.get("version") != _VERSION:
        raise ValueError(f"checkpoint {path} has format version {meta.get('version')}, this "
                         f"version of ssvm reads {_VERSION}; delete it or fit with resume=False")
    if meta["fingerprint"] != fingerprint:
        raise ValueError(f"checkpoint {path} was written for other data or parameters; "
                         "delete it or fit with resume=False")
    state = CCCPState(w, [float(v) for v in meta["history"]], meta["steps"], meta["converged"])
    return state, float(meta["lai_seconds"]), int(meta["lai_calls"])
