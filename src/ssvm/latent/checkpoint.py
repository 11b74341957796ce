"""Checkpoints of a fit's CCCP runs: written atomically after every step, matched to data and parameters.

A checkpoint is an ``.npz`` file with the weights of every run so far (one per start,
:class:`~ssvm.latent.cccp.StartRun`) and a JSON record (format version, fingerprint of data and
parameters, each run's :class:`~ssvm.latent.cccp.CCCPState` and whether it has ended, the oracle
totals). It is written
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

from .cccp import CCCPState, StartRun

__all__ = ["fingerprint", "save_checkpoint", "load_checkpoint"]

logger = logging.getLogger(__name__)

# 3: solver_params (was solver_options), seeds drawn from random_state, "decrease" in step records
# 4: one record per start (init="auto" and lists of starts), hinge_scale
_VERSION = 4


def fingerprint(model, intercept, starts, data, positive):
    """What a checkpoint must match: the parameters that change the run, the data and the labels.

    Parameters
    ----------
    model : LatentRankSVM
    intercept : bool
        Whether the weights end with an intercept.
    starts : list of (str, str, object)
        The starts of the fit (:func:`ssvm.latent.starts.start_specs`; weight vectors by digest).
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
              "hinge_scale": model.hinge_scale,
              "init": [label if kind != "vector" else digest(value) for label, kind, value in starts],
              "random_state": seed if seed is None or isinstance(seed, Integral) else "RandomState",
              "solver_params": repr(sorted((model.solver_params or {}).items())),
              "data": data.fingerprint(), "labels": digest(positive.astype(bool))}
    return json.dumps(params, sort_keys=True, default=repr)  # a QSLoss object by its repr


def save_checkpoint(path, fingerprint, runs, meter):
    """Write the ``runs`` and the oracle totals of ``meter`` to ``path`` atomically.

    Parameters
    ----------
    path : str or path-like
    fingerprint : str
        What the checkpoint must match to be resumed (see :func:`load_checkpoint`).
    runs : list of StartRun
    meter : OracleMeter
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    records = [{"label": run.label, "key": run.key, "done": bool(run.done), "history": run.state.history,
                "steps": run.state.steps, "converged": bool(run.state.converged)} for run in runs]
    meta = {"version": _VERSION, "fingerprint": fingerprint, "runs": records,
            "lai_seconds": float(meter.seconds), "lai_calls": int(meter.calls)}
    weights = {f"w{i}": run.state.w for i, run in enumerate(runs)}
    with open(tmp, "wb") as handle:
        np.savez(handle, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **weights)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def load_checkpoint(path, fingerprint):
    """The runs and oracle totals saved at ``path``, or None if there is no file.

    Parameters
    ----------
    path : str or path-like
    fingerprint : str
        Must equal the saved one.

    Returns
    -------
    (list of StartRun, float, int) or None
        The runs, the oracle seconds and the oracle calls so far.

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
        meta = json.loads(archive["meta"].tobytes().decode())
        weights = {name: archive[name].astype(np.float64) for name in archive.files if name != "meta"}
    if meta.get("version") != _VERSION:
        raise ValueError(f"checkpoint {path} has format version {meta.get('version')}, this "
                         f"version of ssvm reads {_VERSION}; delete it or fit with resume=False")
    if meta["fingerprint"] != fingerprint:
        raise ValueError(f"checkpoint {path} was written for other data or parameters; "
                         "delete it or fit with resume=False")
    runs = [StartRun(r["label"], r["key"], CCCPState(weights[f"w{i}"], [float(v) for v in r["history"]],
                                                     r["steps"], r["converged"]), r["done"])
            for i, r in enumerate(meta["runs"])]
    return runs, float(meta["lai_seconds"]), int(meta["lai_calls"])
