"""Latent AP-SVM: weakly supervised ranking over bags of candidate windows (DESIGN.md §4).

Each training *image* is a bag of candidate windows with features φ(x, h); only image-level labels
are known.  An image's score is the score of its best window, s_i(w) = max_h w·φ(x_i, h), and the
*latent objective* minimised here is

    J(w) = ½‖w‖² + C · H(s(w))

where H is the structured hinge of the chosen loss (AP by default, DESIGN.md §1) evaluated on the
ranking of the images (``negatives="best"``), or on the ranking of the positive images against every
window of every negative image (``negatives="all"``, the QS paper's detection set-up, where the
number of negatives is huge and an O(N log P) oracle matters).

Why CCCP applies.  For every ranking R the hinge term Δ(R*, R) + w·Ψ(R) − w·Ψ(R*) has coefficient
(1/PN)·Σ_n (R_pn − 1) ≤ 0 on a positive's score and (1/PN)·Σ_p (1 − R_pn) ≥ 0 on a negative's score
(for the 0-1 hinge likewise).  Hence

* the max over a *negative's* windows may be taken inside the hinge: the hinge stays convex in w;
* a *positive's* max over windows makes J a difference of convex functions.  Fixing every positive to
  the window that is best under the current w_t gives a convex upper bound of J that touches J at
  w_t (a smaller positive score can only increase the hinge).  Minimising that bound from w_t can
  therefore never increase J beyond the convex solver's tolerance — each CCCP step is a descent step.

Each CCCP step (1) imputes h_p = argmax_h w_t·φ(x_p, h) for every positive image and (2) solves the
convex bound with RankSVM's machinery (:class:`ssvm.problem.StructuredHinge`, a solver from
:data:`ssvm.solvers.SOLVERS`, an oracle from :func:`ssvm.losses.get_oracle`), warm-started from
w_t.  With ``negatives="best"`` the max over a negative's windows is evaluated *inside* the
loss-augmented inference: the oracle receives the scores of all windows of the negative images,
pools each negative image to its best window, runs the ranking oracle on the pooled scores and puts
each negative image's coefficient on its arg-max window, so that ``X.T @ c`` is a subgradient of the
exact convex bound (nothing about the negatives is fixed between steps).

Initialisation (``init="mean"``): w₀ is the convex solution of the same loss on one sample per image,
the mean feature of its windows (a cheap image-level classifier); ``init="zeros"`` or an explicit
weight vector are accepted as well.

Long runs write a checkpoint after every CCCP step (atomically: a temporary file in the same folder
and :func:`os.replace`) and ``fit(..., resume=True)`` continues from it; with a deterministic solver
(or an integer ``random_state``) the resumed run ends with the same model as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
import warnings
from numbers import Integral, Real
from pathlib import Path

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ssvm.detection.store import chunked_scores
from ssvm.losses import ORACLE_NAMES, get_oracle
from ssvm.problem import StructuredHinge
from ssvm.solvers import SOLVERS

__all__ = ["LatentRankSVM"]

logger = logging.getLogger(__name__)

#: Losses whose hinge is non-increasing in a positive's score and non-decreasing in a negative's,
#: which is what makes the CCCP bound valid (precision@k's joint feature does not have this property).
LATENT_LOSSES = ("ap", "ndcg", "zero_one")

_CHECKPOINT_VERSION = 2


# --------------------------------------------------------------------------------------------
# small kernels
# --------------------------------------------------------------------------------------------
@njit(cache=True)
def _segment_argmax(values, offsets):
    """Global index of the first maximum of ``values[offsets[i]:offsets[i+1]]`` for every segment i."""
    n_seg = offsets.shape[0] - 1
    out = np.empty(n_seg, dtype=np.int64)
    for i in range(n_seg):
        best = offsets[i]
        best_value = values[best]
        for j in range(offsets[i] + 1, offsets[i + 1]):
            if values[j] > best_value:
                best = j
                best_value = values[j]
        out[i] = best
    return out


def _max_pooled_oracle(scores, y, *, base, neg_offsets):
    """Oracle for ``negatives="best"``: pool each negative image to its best window, then rank.

    Rows ``[0, neg_offsets[-1])`` are the windows of the negative images, image k owning rows
    ``neg_offsets[k]:neg_offsets[k+1]``; every later row is a sample of its own.  The pooled scores
    (one per negative image, then the remaining rows) go to ``base``; each negative image's
    coefficient is placed on its arg-max window, so ``delta + scores @ c`` is the hinge of the pooled
    ranking and ``X.T @ c`` a subgradient of it (the hinge is non-decreasing in a negative's score).

    Module-level and used through :func:`functools.partial`, so it pickles for joblib.
    """
    n_neg_rows = neg_offsets[-1]
    best = _segment_argmax(scores, neg_offsets)
    pooled_scores = np.concatenate((scores[best], scores[n_neg_rows:]))
    pooled_y = np.concatenate((np.zeros(best.shape[0], dtype=bool), y[n_neg_rows:]))
    pooled_c, delta = base(pooled_scores, pooled_y)
    pooled_c = np.asarray(pooled_c, dtype=np.float64)
    c = np.zeros(scores.shape[0], dtype=np.float64)
    c[best] = pooled_c[: best.shape[0]]
    c[n_neg_rows:] = pooled_c[best.shape[0]:]
    return c, delta


# --------------------------------------------------------------------------------------------
# bags of windows
# --------------------------------------------------------------------------------------------
class _Bags:
    """Windows of many images stacked in one 2-D array; image i owns rows ``offsets[i]:offsets[i+1]``.

    ``features`` may be an in-memory array, a :class:`numpy.memmap` or any object with ``shape`` and
    row slicing (for example :class:`ssvm.detection.WindowStore`'s feature array); it is only ever
    read in chunks of ``chunk_rows`` rows.
    """

    def __init__(self, features, offsets, chunk_rows):
        self.features = features
        self.offsets = offsets
        self.chunk_rows = chunk_rows

    @property
    def n_images(self):
        return self.offsets.shape[0] - 1

    @property
    def n_windows(self):
        return int(self.offsets[-1])

    @property
    def n_features(self):
        return int(self.features.shape[1])

    def rows(self, index):
        """Rows ``index`` (sorted or not) as a float64 array."""
        index = np.asarray(index, dtype=np.int64)
        if index.size == 0:
            return np.empty((0, self.n_features))
        order = np.argsort(index, kind="stable")
        out = np.empty((index.size, self.n_features))
        for start in range(0, index.size, self.chunk_rows):
            part = order[start:start + self.chunk_rows]
            out[part] = np.asarray(self.features[index[part]], dtype=np.float64)
        return out

    def row_scores(self, index, coef, intercept):
        """Scores of the rows ``index`` (ascending), read ``chunk_rows`` at a time."""
        out = np.empty(index.size)
        for start in range(0, index.size, self.chunk_rows):
            part = index[start:start + self.chunk_rows]
            out[start:start + part.size] = np.asarray(self.features[part], dtype=np.float64) @ coef
        out += intercept
        if not np.all(np.isfinite(out)):
            raise ValueError("window features contain NaN or infinite values (non-finite scores)")
        return out

    def scores(self, coef, intercept):
        """Score of every window, computed in chunks of rows."""
        out = chunked_scores(self.features, coef, intercept, chunk_rows=self.chunk_rows)
        if not np.all(np.isfinite(out)):
            raise ValueError("window features contain NaN or infinite values (non-finite scores)")
        return out

    def means(self):
        """Mean window feature of every image."""
        sums = np.zeros((self.n_images, self.n_features))
        owner = np.repeat(np.arange(self.n_images), np.diff(self.offsets))
        for start in range(0, self.n_windows, self.chunk_rows):
            stop = min(start + self.chunk_rows, self.n_windows)
            block = np.asarray(self.features[start:stop], dtype=np.float64)
            owners = owner[start:stop]
            first = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])  # an image's first row in the chunk
            sums[owners[first]] += np.add.reduceat(block, first, axis=0)
        return sums / np.diff(self.offsets)[:, None]

    def fingerprint(self):
        """Cheap content hash (offsets and a strided sample of rows) to match checkpoints to data."""
        digest = hashlib.sha1()
        digest.update(np.ascontiguousarray(self.offsets, dtype=np.int64).tobytes())
        digest.update(str(self.n_features).encode())
        sample = np.unique(np.linspace(0, self.n_windows - 1, num=min(64, self.n_windows)).astype(np.int64))
        digest.update(np.ascontiguousarray(self.rows(sample)).tobytes())
        return digest.hexdigest()


def _as_bags(bags, offsets, chunk_rows, n_features=None):
    """Validate ``bags`` (a list of (m_i, d) arrays, or a 2-D window array plus ``offsets``)."""
    if offsets is None and hasattr(bags, "offsets") and hasattr(bags, "features"):
        offsets, bags = bags.offsets, bags.features  # a WindowStore-like container
    if offsets is not None:
        offsets = np.asarray(offsets)
        if offsets.ndim != 1 or offsets.size < 2 or not np.issubdtype(offsets.dtype, np.integer):
            raise ValueError("offsets must be a 1-D integer array of length n_images + 1")
        offsets = offsets.astype(np.int64)
        if offsets[0] != 0 or np.any(np.diff(offsets) < 1):
            raise ValueError("offsets must start at 0 and increase strictly (every image needs >= 1 window)")
        shape = getattr(bags, "shape", None)
        if shape is None or len(shape) != 2:
            raise ValueError("with offsets, bags must be a 2-D array of window features (n_windows, d)")
        if shape[0] != offsets[-1]:
            raise ValueError(f"offsets[-1] = {offsets[-1]} but the window array has {shape[0]} rows")
        features = bags
    else:
        if isinstance(bags, np.ndarray) or not hasattr(bags, "__len__") or len(bags) == 0:
            raise ValueError("bags must be a non-empty list of (m_i, d) window-feature arrays "
                             "(or a 2-D window array together with offsets)")
        arrays = []
        for i, bag in enumerate(bags):
            bag = np.asarray(bag, dtype=np.float64)
            if bag.ndim != 2 or bag.shape[0] < 1:
                raise ValueError(f"bag {i} must be a 2-D array with at least one window, got shape {bag.shape}")
            if not np.all(np.isfinite(bag)):
                raise ValueError(f"bag {i} contains NaN or infinite window features")
            arrays.append(bag)
        widths = {bag.shape[1] for bag in arrays}
        if len(widths) != 1:
            raise ValueError(f"all bags must have the same number of features, got {sorted(widths)}")
        offsets = np.concatenate(([0], np.cumsum([bag.shape[0] for bag in arrays]))).astype(np.int64)
        features = np.concatenate(arrays, axis=0)
    if n_features is not None and features.shape[1] != n_features:
        raise ValueError(f"window features have {features.shape[1]} columns, the model was fitted with {n_features}")
    return _Bags(features, offsets, chunk_rows)


def _image_labels(y, n_images):
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_images:
        raise ValueError(f"y must hold one label per image ({n_images}), got shape {y.shape}")
    values = np.unique(y)
    if values.size != 2:
        raise ValueError(f"y must contain exactly two classes (positive and negative images), got {values.tolist()}")
    if y.dtype == bool:
        return y.copy(), np.array([False, True])
    # the larger label is the positive class (1 vs 0, 1 vs -1, or sorted class labels)
    return y == values[1], values


# --------------------------------------------------------------------------------------------
# the estimator
# --------------------------------------------------------------------------------------------
class LatentRankSVM(BaseEstimator):
    """Latent AP-SVM (Behl et al., CVPR 2014) trained by CCCP over bags of candidate windows.

    Parameters
    ----------
    loss : {"ap", "ndcg", "zero_one"}, default="ap"
        Ranking loss of the structured hinge (``"zero_one"`` gives the latent binary SVM baseline).
    oracle : str, default="auto"
        Loss-augmented inference oracle (see :data:`ssvm.losses.ORACLE_NAMES`), e.g. ``"qs"`` or
        ``"yue"`` to compare their cost on the same problem.
    solver : str, default="cutting_plane"
        Convex solver from :data:`ssvm.solvers.SOLVERS` used for every CCCP step.
    C : float, default=1.0
        Regularisation trade-off in J(w) = ½‖w‖² + C·H(w).
    tol : float, default=1e-3
        Tolerance passed to the convex solver.
    max_iter : int or None, default=None
        Iteration cap of every convex solve (``None``: the solver's default).
    max_cccp_iter : int, default=10
        Maximum number of CCCP steps (impute + convex solve).
    cccp_tol : float, default=1e-3
        CCCP stops when the latent objective decreases by less than ``cccp_tol`` times its value, or
        when the imputed windows no longer change.
    negatives : {"best", "all"}, default="best"
        ``"best"``: a negative image enters the ranking as its best window (max over windows inside
        the loss-augmented inference).  ``"all"``: every window of a negative image is a negative.
    init : {"mean", "zeros"} or array of shape (n_features,) or (n_features + 1,), default="mean"
        Starting point w₀: ``"mean"`` trains the same convex model on each image's mean window feature.
    fit_intercept : bool or "auto", default="auto"
        Append a constant feature (regularised, liblinear style).  ``"auto"``: only for ``"zero_one"``
        (the ranking losses are invariant to an intercept).
    checkpoint : str or path-like or None, default=None
        File written (atomically) after every CCCP step.
    resume : bool, default=False
        Continue from ``checkpoint`` if it exists (``fit(..., resume=...)`` overrides this).
    callback : callable or None, default=None
        Called after every CCCP step (and after its checkpoint is written) with a dict record
        (``step``, ``objective``, ``seconds``, ``lai_seconds``, ``lai_calls``, ``solver_iter``,
        ``n_changed``);
        returning True stops training.
    n_jobs : int or None, default=None
        Passed to :class:`ssvm.problem.StructuredHinge`.
    random_state : int or None, default=None
        Seed for stochastic solvers; step t uses ``random_state + t`` so resumed runs are reproducible.
    solver_options : dict or None, default=None
        Extra keyword arguments for the solver.
    chunk_rows : int, default=65536
        Rows of window features read at a time when scoring (memory-mapped stores).
    verbose : int, default=0
        Log one line per CCCP step at INFO level when > 0.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    history_ : list of float
        Latent objective J(w) at w₀ and after every CCCP step (non-increasing up to solver tolerance).
    steps_ : list of dict
        One record per CCCP step (the records passed to ``callback``).
    n_iter_ : int
        Number of CCCP steps done (including those of a resumed run).
    converged_ : bool
    lai_seconds_ : float
        Total seconds spent in loss-augmented inference during training (initialisation, convex
        solves and objective evaluations; a resumed run adds to the checkpointed total).
    lai_calls_ : int
        Number of loss-augmented inference calls counted in ``lai_seconds_``.
    latent_windows_ : ndarray of shape (n_images,)
        Index (within its bag) of every training image's best window under the final w.
    classes_ : ndarray of shape (2,)
        Negative and positive image label.
    n_features_in_ : int

    Notes
    -----
    Window features are only read in chunks (a memory-mapped store works), but the convex problem
    of a CCCP step holds, in memory as float64, every window of every negative image plus one row
    per positive image: (n_negative_windows + n_positive_images) × (n_features + intercept).  With
    ``negatives="best"`` the rows are the same (the max over a negative's windows is taken inside
    the oracle), so the memory is the same; only the oracle input shrinks to one score per image.
    """

    _parameter_constraints = {
        "loss": [StrOptions(set(LATENT_LOSSES))],
        "oracle": [StrOptions(set(ORACLE_NAMES))],
        "solver": [StrOptions(set(SOLVERS))],
        "C": [Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "max_cccp_iter": [Interval(Integral, 1, None, closed="left")],
        "cccp_tol": [Interval(Real, 0, None, closed="left")],
        "negatives": [StrOptions({"best", "all"})],
        "init": [StrOptions({"mean", "zeros"}), "array-like"],
        "fit_intercept": ["boolean", StrOptions({"auto"})],
        "checkpoint": [str, os.PathLike, None],
        "resume": ["boolean"],
        "callback": [callable, None],
        "n_jobs": [Integral, None],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
        "solver_options": [dict, None],
        "chunk_rows": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
    }

    def __init__(self, loss="ap", oracle="auto", solver="cutting_plane", C=1.0, tol=1e-3, max_iter=None,
                 max_cccp_iter=10, cccp_tol=1e-3, negatives="best", init="mean", fit_intercept="auto",
                 checkpoint=None, resume=False, callback=None, n_jobs=None, random_state=None,
                 solver_options=None, chunk_rows=65536, verbose=0):
        self.loss = loss
        self.oracle = oracle
        self.solver = solver
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.max_cccp_iter = max_cccp_iter
        self.cccp_tol = cccp_tol
        self.negatives = negatives
        self.init = init
        self.fit_intercept = fit_intercept
        self.checkpoint = checkpoint
        self.resume = resume
        self.callback = callback
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.solver_options = solver_options
        self.chunk_rows = chunk_rows
        self.verbose = verbose

    # ---------------------------------------------------------------------------------- fit
    def fit(self, bags, y, offsets=None, resume=None):
        """Train by CCCP.

        Parameters
        ----------
        bags : list of ndarray of shape (m_i, n_features), or ndarray of shape (n_windows, n_features)
            Window features of every image; with a 2-D array (in memory or memory-mapped) pass
            ``offsets``.  An object with ``features`` and ``offsets`` attributes is accepted too.
        y : array-like of shape (n_images,)
            Image-level labels with two classes (the larger one, or True, is the positive class).
        offsets : array-like of shape (n_images + 1,), optional
            Image i owns window rows ``offsets[i]:offsets[i+1]``.
        resume : bool or None, default=None
            Continue from ``self.checkpoint`` if it exists; ``None`` uses the ``resume`` parameter.

        Returns
        -------
        self : LatentRankSVM
        """
        self._validate_params()
        data = _as_bags(bags, offsets, self.chunk_rows)
        positive, classes = _image_labels(y, data.n_images)
        if positive.all() or not positive.any():
            raise ValueError("y needs at least one positive and one negative image")
        resume = self.resume if resume is None else bool(resume)
        if resume and self.checkpoint is None:
            raise ValueError("resume=True needs a checkpoint path")

        loss_oracle = get_oracle(self.loss, self.oracle)
        intercept = self.loss == "zero_one" if self.fit_intercept == "auto" else bool(self.fit_intercept)
        setup = _ConvexSetup(data, positive, loss_oracle, self.negatives, intercept, self.n_jobs)
        fingerprint = self._fingerprint(data, positive, intercept)

        state = self._load_checkpoint(fingerprint) if resume else None
        meter = _OracleMeter()
        if state is None:
            w = self._initial_w(data, positive, loss_oracle, intercept, meter)
            history, steps, converged = [], [], False
        else:
            w, history, steps, converged = state["w"], state["history"], state["steps"], state["converged"]
            meter.seconds, meter.calls = state["lai_seconds"], state["lai_calls"]
            logger.info("resuming from %s after %d CCCP steps", self.checkpoint, len(steps))

        imputed = setup.impute(w)
        problem = setup.problem(imputed)
        if not history:
            history.append(float(problem.objective(w, self.C)))
            meter.charge(problem)
        while not converged and len(steps) < self.max_cccp_iter:
            tic = time.perf_counter()
            result = self._solve(problem, w, seed_offset=len(steps) + 1)
            meter.charge(problem)
            w = np.asarray(result.w, dtype=np.float64).copy()
            new_imputed = setup.impute(w)
            problem = setup.problem(new_imputed)
            objective = float(problem.objective(w, self.C))
            meter.charge(problem)
            n_changed = int(np.count_nonzero(new_imputed != imputed))
            decrease = history[-1] - objective
            converged = n_changed == 0 or decrease <= self.cccp_tol * abs(history[-1])
            history.append(objective)
            imputed = new_imputed
            record = {"step": len(steps) + 1, "objective": objective, "seconds": time.perf_counter() - tic,
                      "lai_seconds": meter.seconds, "lai_calls": meter.calls,
                      "solver_iter": int(result.n_iter), "n_changed": n_changed}
            steps.append(record)
            if self.verbose:
                logger.info("CCCP step %d: J = %.6g (decrease %.3g), %d positives changed window, "
                            "%d solver iterations, %.2fs", record["step"], objective, decrease, n_changed,
                            result.n_iter, record["seconds"])
            if self.checkpoint is not None:
                self._save_checkpoint(fingerprint, w, history, steps, converged, meter)
            if self.callback is not None and self.callback(dict(record)):
                break
        if not converged and len(steps) >= self.max_cccp_iter:
            warnings.warn(f"CCCP stopped after max_cccp_iter={self.max_cccp_iter} steps without "
                          "converging", ConvergenceWarning, stacklevel=2)

        d = data.n_features
        self.coef_ = w[:d].copy()
        self.intercept_ = float(w[d]) if intercept else 0.0
        self.history_ = list(history)
        self.steps_ = list(steps)
        self.n_iter_ = len(steps)
        self.converged_ = bool(converged)
        self.lai_seconds_ = float(meter.seconds)
        self.lai_calls_ = int(meter.calls)
        best = _segment_argmax(data.scores(self.coef_, self.intercept_), data.offsets)
        self.latent_windows_ = best - data.offsets[:-1]
        self.classes_ = classes
        self.n_features_in_ = d
        return self

    def _solve(self, problem, w0, seed_offset):
        """One convex solve; step t of a seeded run uses ``random_state + t`` (reproducible resumes)."""
        seed = None if self.random_state is None else self.random_state + seed_offset
        options = dict(self.solver_options or {})
        if self.max_iter is not None:
            options["max_iter"] = self.max_iter
        return SOLVERS[self.solver](problem, self.C, tol=self.tol, w0=w0, random_state=seed, **options)

    def _initial_w(self, data, positive, loss_oracle, intercept, meter):
        d = data.n_features + int(intercept)
        if isinstance(self.init, str) and self.init == "zeros":
            return np.zeros(d)
        if isinstance(self.init, str):  # "mean": the same convex model on each image's mean window
            X = data.means()
            if intercept:
                X = np.hstack((X, np.ones((X.shape[0], 1))))
            problem = StructuredHinge(X, positive, [np.arange(X.shape[0])], loss_oracle,
                                      fit_intercept=False, n_jobs=self.n_jobs)
            result = self._solve(problem, None, seed_offset=0)
            meter.charge(problem)
            return np.asarray(result.w, dtype=np.float64).copy()
        w0 = np.asarray(self.init, dtype=np.float64).ravel()
        if w0.shape[0] == data.n_features and intercept:
            w0 = np.append(w0, 0.0)
        if w0.shape[0] != d or not np.all(np.isfinite(w0)):
            raise ValueError(f"init must be 'mean', 'zeros' or a finite vector of length {d}, got shape {w0.shape}")
        return w0

    # ---------------------------------------------------------------------------- checkpoints
    def _fingerprint(self, data, positive, intercept):
        init = self.init if isinstance(self.init, str) else hashlib.sha1(
            np.ascontiguousarray(self.init, dtype=np.float64).tobytes()).hexdigest()
        params = {"loss": self.loss, "oracle": self.oracle, "solver": self.solver, "C": float(self.C),
                  "tol": float(self.tol), "max_iter": self.max_iter, "negatives": self.negatives,
                  "init": init, "fit_intercept": bool(intercept), "random_state": self.random_state,
                  "solver_options": repr(sorted((self.solver_options or {}).items())),
                  "data": data.fingerprint(), "labels": hashlib.sha1(positive.tobytes()).hexdigest()}
        return json.dumps(params, sort_keys=True)

    def _save_checkpoint(self, fingerprint, w, history, steps, converged, meter):
        path = Path(self.checkpoint)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        meta = {"version": _CHECKPOINT_VERSION, "fingerprint": fingerprint, "history": history,
                "steps": steps, "converged": bool(converged), "lai_seconds": float(meter.seconds),
                "lai_calls": int(meter.calls)}
        with open(tmp, "wb") as handle:
            np.savez(handle, w=w, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)

    def _load_checkpoint(self, fingerprint):
        path = Path(self.checkpoint)
        if not path.exists():
            logger.info("no checkpoint at %s: starting from scratch", path)
            return None
        with np.load(path, allow_pickle=False) as archive:
            w = archive["w"].astype(np.float64)
            meta = json.loads(archive["meta"].tobytes().decode())
        if meta.get("version") != _CHECKPOINT_VERSION:
            raise ValueError(f"checkpoint {path} has an unknown format version {meta.get('version')}")
        if meta["fingerprint"] != fingerprint:
            raise ValueError(f"checkpoint {path} was written for other data or parameters; "
                             "delete it or fit with resume=False")
        return {"w": w, "history": [float(v) for v in meta["history"]], "steps": meta["steps"],
                "converged": meta["converged"], "lai_seconds": float(meta["lai_seconds"]),
                "lai_calls": int(meta["lai_calls"])}

    # ---------------------------------------------------------------------------- prediction
    def window_scores(self, bags, offsets=None):
        """Score of every window.

        Parameters
        ----------
        bags, offsets : as in :meth:`fit`.

        Returns
        -------
        scores : list of ndarray
            One array of window scores per image.
        """
        check_is_fitted(self)
        data = _as_bags(bags, offsets, self.chunk_rows, self.n_features_in_)
        scores = data.scores(self.coef_, self.intercept_)
        return np.split(scores, data.offsets[1:-1])

    def decision_function(self, bags, offsets=None):
        """Image scores: the score of each image's best window.

        Parameters
        ----------
        bags, offsets : as in :meth:`fit`.

        Returns
        -------
        scores : ndarray of shape (n_images,)
        """
        check_is_fitted(self)
        data = _as_bags(bags, offsets, self.chunk_rows, self.n_features_in_)
        scores = data.scores(self.coef_, self.intercept_)
        return scores[_segment_argmax(scores, data.offsets)]

    def predict(self, bags, offsets=None):
        """Image labels: positive class where the best window scores above 0.

        Parameters
        ----------
        bags, offsets : as in :meth:`fit`.

        Returns
        -------
        labels : ndarray of shape (n_images,)
        """
        return self.classes_[(self.decision_function(bags, offsets) > 0).astype(int)]

    def detect(self, bags, boxes=None, iou_threshold=0.3, offsets=None, max_per_image=None):
        """Scored boxes of every image after non-maximum suppression.

        Parameters
        ----------
        bags, offsets : as in :meth:`fit`.
        boxes : list of ndarray of shape (m_i, 4), or ndarray of shape (n_windows, 4), optional
            The window boxes (x1, y1, x2, y2) aligned with the window features; may be omitted
            when ``bags`` is a :class:`ssvm.detection.WindowStore` (its ``boxes`` are used).
        iou_threshold : float, default=0.3
            A window is suppressed when its IoU with a higher-scoring kept window exceeds this.
        max_per_image : int or None, default=None
            Keep at most this many detections per image.

        Returns
        -------
        detections : list of (ndarray of shape (k_i, 4), ndarray of shape (k_i,))
            Per image, the kept boxes and their scores, by decreasing score.
        """
        from ssvm.detection import nms

        check_is_fitted(self)
        if not 0.0 <= iou_threshold <= 1.0:
            raise ValueError(f"iou_threshold must lie in [0, 1], got {iou_threshold}")
        if max_per_image is not None and max_per_image < 1:
            raise ValueError(f"max_per_image must be >= 1 or None, got {max_per_image}")
        if boxes is None:
            if offsets is not None or not hasattr(bags, "boxes"):
                raise ValueError("boxes are required unless bags is a WindowStore (which holds them)")
            boxes = bags.boxes
        data = _as_bags(bags, offsets, self.chunk_rows, self.n_features_in_)
        if isinstance(boxes, np.ndarray) and boxes.ndim == 2:
            all_boxes = boxes
        else:
            if len(boxes) != data.n_images:
                raise ValueError(f"boxes holds {len(boxes)} images, bags {data.n_images}")
            all_boxes = np.concatenate([np.asarray(b, dtype=np.float64).reshape(-1, 4) for b in boxes])
        all_boxes = np.asarray(all_boxes, dtype=np.float64)
        if all_boxes.shape != (data.n_windows, 4):
            raise ValueError(f"boxes must have shape ({data.n_windows}, 4) to match the windows, got {all_boxes.shape}")
        scores = data.scores(self.coef_, self.intercept_)
        detections = []
        for i in range(data.n_images):
            lo, hi = data.offsets[i], data.offsets[i + 1]
            keep = np.asarray(nms(all_boxes[lo:hi], scores[lo:hi], iou_threshold), dtype=np.int64)
            keep = keep[np.argsort(-scores[lo:hi][keep], kind="stable")]
            if max_per_image is not None:
                keep = keep[:max_per_image]
            detections.append((all_boxes[lo:hi][keep], scores[lo:hi][keep]))
        return detections

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.solver != "cutting_plane" and self.random_state is None
        return tags


class _OracleMeter:
    """Loss-augmented inference seconds and calls summed over the problems of a fit."""

    def __init__(self):
        self.seconds = 0.0
        self.calls = 0
        self._problem = None
        self._seen = (0.0, 0)

    def charge(self, problem):
        """Add what ``problem``'s oracle spent since it was last charged."""
        if problem is not self._problem:
            self._problem, self._seen = problem, (0.0, 0)
        self.seconds += problem.oracle_seconds - self._seen[0]
        self.calls += problem.n_oracle_calls - self._seen[1]
        self._seen = (problem.oracle_seconds, problem.n_oracle_calls)


class _ConvexSetup:
    """The convex bound of one CCCP step, rebuilt cheaply for every imputation.

    The design matrix holds the windows of the negative images (``negatives="all"``/``"best"``: all
    of them; ``"best"`` pools them inside the oracle) followed by one row per positive image, its
    imputed window; only those last rows change between steps.  The intercept, if any, is a
    constant column (regularised like the weights).
    """

    def __init__(self, data, positive, loss_oracle, negatives, intercept, n_jobs):
        from functools import partial

        self.data = data
        self.positive_images = np.flatnonzero(positive)
        negative_images = np.flatnonzero(~positive)
        starts, stops = data.offsets[negative_images], data.offsets[negative_images + 1]
        neg_rows = np.concatenate([np.arange(a, b) for a, b in zip(starts, stops)])
        self.n_neg_rows = neg_rows.size
        n_pos = self.positive_images.size
        d = data.n_features
        self.X = np.empty((self.n_neg_rows + n_pos, d + int(intercept)))
        self.X[:self.n_neg_rows, :d] = data.rows(neg_rows)
        if intercept:
            self.X[:, d] = 1.0
        self.y = np.concatenate((np.zeros(self.n_neg_rows, dtype=bool), np.ones(n_pos, dtype=bool)))
        if negatives == "best":
            neg_offsets = np.concatenate(([0], np.cumsum(stops - starts))).astype(np.int64)
            self.oracle = partial(_max_pooled_oracle, base=loss_oracle, neg_offsets=neg_offsets)
        else:
            self.oracle = loss_oracle
        self.intercept = intercept
        self.n_jobs = n_jobs
        self.pos_offsets = np.stack((data.offsets[self.positive_images], data.offsets[self.positive_images + 1]), 1)

    def impute(self, w):
        """Global window index of every positive image's best window under w."""
        d = self.data.n_features
        coef, bias = w[:d], (w[d] if self.intercept else 0.0)
        index = np.concatenate([np.arange(lo, hi) for lo, hi in self.pos_offsets])
        scores = self.data.row_scores(index, coef, bias)
        local = np.concatenate(([0], np.cumsum(self.pos_offsets[:, 1] - self.pos_offsets[:, 0]))).astype(np.int64)
        return index[_segment_argmax(scores, local)]

    def problem(self, imputed):
        """StructuredHinge of the convex bound with positives fixed to ``imputed`` windows."""
        d = self.data.n_features
        self.X[self.n_neg_rows:, :d] = self.data.rows(imputed)
        return StructuredHinge(self.X, self.y, [np.arange(self.X.shape[0])], self.oracle,
                               fit_intercept=False, n_jobs=self.n_jobs)
