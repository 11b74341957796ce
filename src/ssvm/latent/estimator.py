"""``LatentRankSVM``: the estimator over bags, CCCP and the convex solvers (see :mod:`ssvm.latent`)."""

import os
import warnings
from functools import partial
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ssvm._fitting import check_solver_params, draw_seeds, run_solver, say
from ssvm.detection.detections import nms_per_image
from ssvm.exceptions import external_stacklevel
from ssvm.losses import LOSS_NAMES, ORACLE_NAMES, QSLoss, get_oracle, loss_entry
from ssvm.losses.pooled import segment_argmax
from ssvm.metrics import accuracy_threshold, ranking_score
from ssvm.solvers import SOLVERS

from .bags import as_bags, image_labels
from .cccp import CCCPState, cccp
from .checkpoint import fingerprint, load_checkpoint, save_checkpoint
from .convex import ConvexBound, OracleMeter, mean_feature_problem

__all__ = ["LatentRankSVM", "LATENT_LOSSES"]

#: Losses whose hinge is non-increasing in a positive's score and non-decreasing in a negative's,
#: which is what makes the CCCP bound valid (precision@k's joint feature does not have this property;
#: every QSLoss object has it): the loss table's ``latent`` column.
LATENT_LOSSES = tuple(name for name in LOSS_NAMES if loss_entry(name).latent)

_ZERO_START = (
    "LatentRankSVM cannot start from w = 0 (init={init}): every window then scores 0, so CCCP "
    "imputes each positive image's first window and w = 0 is often optimal for that bound — the "
    "fit would end at w = 0. Use init='mean' (the default: the same model on each image's mean "
    "window) or a non-zero weight vector."
)


class LatentRankSVM(BaseEstimator):
    """Latent AP-SVM (Behl et al., CVPR 2014) trained by CCCP over bags of candidate windows.

    An image's score is its best window's, ``max_h w·φ(x, h)``; training minimises
    ``J(w) = ½‖w‖² + C·H`` (H: the structured hinge of the image ranking, :mod:`ssvm.latent`).

    Parameters
    ----------
    loss : {"ap", "ndcg", "zero_one"} or QSLoss, default="ap"
        Loss of the structured hinge (binary relevance, as in :class:`ssvm.RankSVM`);
        ``"zero_one"`` gives the latent binary SVM baseline. A user loss object (an
        ``ssvm.losses.QSLoss`` instance) can be passed as well.
    oracle : str, default="auto"
        Loss-augmented inference oracle (:data:`ssvm.losses.ORACLE_NAMES`), e.g. ``"qs"`` or
        ``"yue"`` to compare their cost on the same problem.
    solver : str, default="cutting_plane"
        Convex solver from :data:`ssvm.solvers.SOLVERS` used for every CCCP step.
    C : float, default=1.0
        Regularisation trade-off in J(w) = ½‖w‖² + C·H(w).
    tol : float, default=1e-3
        Tolerance of every convex solve.
    max_iter : int or None, default=None
        Iteration cap of every convex solve (``None``: the solver's default).
    max_cccp_iter : int, default=10
        Maximum number of CCCP steps (impute + convex solve).
    cccp_tol : float, default=1e-3
        CCCP stops when the latent objective decreases by no more than ``cccp_tol`` times its
        previous value (relative), or when the imputed windows no longer change.
    negatives : {"best", "all"}, default="best"
        ``"best"``: a negative image enters the ranking as its best window (max over windows
        inside the loss-augmented inference). ``"all"``: every window of a negative image is a
        negative. The scale of C differs: the AP hinge is a mean over the P·N (positive,
        negative) pairs and vanishes only when every positive leads the negatives by a score
        margin of about N / (2(P + 1)) (one positive below one negative loses about 1/P² of AP
        but costs only 2·margin/(PN)). With ``"best"`` N counts negative *images*; with
        ``"all"`` it counts their windows, so with unit-norm features the hinge stays near its
        maximum unless C grows roughly like (N/P)², and w stays close to a weighted difference
        of the mean positive and the top negative windows.
    init : "mean" or array of shape (n_features,) or (n_features + 1,), default="mean"
        Starting point w₀: ``"mean"`` trains the same convex model on each image's mean window
        feature. w₀ = 0 is refused (see :mod:`ssvm.latent`).
    fit_intercept : bool or "auto", default="auto"
        Append a constant feature (regularised, liblinear style). ``"auto"``: only for
        ``"zero_one"`` (the ranking losses are invariant to an intercept).
    checkpoint : str or path-like or None, default=None
        File written (atomically) after every CCCP step.
    resume : bool, default=False
        Continue from ``checkpoint`` if it exists (``fit(..., resume=...)`` overrides this).
    callback : callable or None, default=None
        Called after every CCCP step (after its checkpoint is written) with a dict record
        (``step``, ``objective``, ``decrease``, ``seconds``, ``lai_seconds``, ``lai_calls``,
        ``solver_iter``, ``n_changed``); returning True stops training.
    n_jobs : int or None, default=None
        Passed to :class:`ssvm.problem.StructuredHinge` (parallel oracle calls over queries;
        the latent problems are one query, so it rarely matters).
    random_state : int, RandomState instance or None, default=None
        Seeds the stochastic solvers: one seed per convex solve is drawn up front, so an integer
        makes resumed runs reproducible.
    verbose : int, default=0
        ``1``: one line per CCCP step on stdout; ``≥ 2``: also one per solver iteration.
    warm_start : bool, default=False
        Start CCCP from the previous fit's weights instead of ``init``.
    solver_params : dict or None, default=None
        Extra keyword arguments of the solver (as in :class:`ssvm.RankSVM`; an unknown key
        raises a ValueError listing the accepted ones).
    chunk_rows : int, default=65536
        Rows of window features read at a time (memory-mapped stores).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
        The learnt intercept for ``"zero_one"``; for the ranking losses (invariant to it) the
        threshold of the training images' scores that maximises training accuracy, as in
        :class:`ssvm.RankSVM`, so that ``predict`` is sensible.
    history_ : list of float
        Latent objective J(w) at w₀ and after every CCCP step (non-increasing up to solver
        tolerance).
    steps_ : list of dict
        One record per CCCP step (the records passed to ``callback``).
    n_iter_ : int
        Number of CCCP steps done (including those of a resumed run).
    converged_ : bool
    lai_seconds_ : float
        Seconds spent in loss-augmented inference during training (a resumed run adds to the
        checkpointed total).
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
    per positive image: (n_negative_windows + n_positive_images) × (n_features + intercept) —
    unless the window features are a dask array (``da.from_zarr(...)``, or
    ``da.from_array(store.features, chunks=(100_000, None))``): the negatives' windows then stay
    out of this process (on a ``dask.distributed`` cluster's workers, or on disk, read block by
    block every round) and only vectors of one number per window are held in memory.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvm import LatentRankSVM
    >>> rng = np.random.default_rng(0)
    >>> bags = [rng.normal(size=(5, 3)) for _ in range(20)]  # 20 images, 5 windows each
    >>> y = np.arange(20) % 2
    >>> for bag, label in zip(bags, y):
    ...     bag[0] += 2.0 * label  # positive images hide one shifted window
    >>> model = LatentRankSVM(C=10.0).fit(bags, y)
    >>> model.score(bags, y)  # image-level mean AP
    1.0
    >>> model.latent_windows_[y == 1].tolist()  # the hidden windows were found
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    """

    _parameter_constraints: dict = {
        "loss": [StrOptions(set(LATENT_LOSSES)), QSLoss],
        "oracle": [StrOptions(set(ORACLE_NAMES))],
        "solver": [StrOptions(set(SOLVERS))],
        "C": [Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "max_cccp_iter": [Interval(Integral, 1, None, closed="left")],
        "cccp_tol": [Interval(Real, 0, None, closed="left")],
        "negatives": [StrOptions({"best", "all"})],
        "init": [StrOptions({"mean", "zeros"}), "array-like"],  # "zeros": refused with a reason
        "fit_intercept": ["boolean", StrOptions({"auto"})],
        "checkpoint": [str, os.PathLike, None],
        "resume": ["boolean"],
        "callback": [callable, None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "solver_params": [dict, None],
        "chunk_rows": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, loss="ap", oracle="auto", solver="cutting_plane", C=1.0, *, tol=1e-3,
                 max_iter=None, max_cccp_iter=10, cccp_tol=1e-3, negatives="best", init="mean",
                 fit_intercept="auto", checkpoint=None, resume=False, callback=None, n_jobs=None,
                 random_state=None, verbose=0, warm_start=False, solver_params=None,
                 chunk_rows=65536):
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
        self.verbose = verbose
        self.warm_start = warm_start
        self.solver_params = solver_params
        self.chunk_rows = chunk_rows

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.solver != "cutting_plane" and self.random_state is None
        return tags

    # ---------------------------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, bags, y, offsets=None, resume=None):
        """Train by CCCP.

        Parameters
        ----------
        bags : list of ndarray of shape (m_i, n_features), or ndarray of shape (n_windows, n_features)
            Window features of every image; with a 2-D array (in memory or memory-mapped) pass
            ``offsets``. An object with ``features`` and ``offsets`` attributes (a
            :class:`ssvm.detection.WindowStore`) is accepted too.
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
        data = as_bags(bags, offsets, self.chunk_rows)
        positive, classes = image_labels(y, data.n_images)
        resume = self.resume if resume is None else bool(resume)
        if resume and self.checkpoint is None:
            raise ValueError("resume=True needs a checkpoint path")
        solver_params = check_solver_params(self.solver, self.solver_params, "LatentRankSVM")
        loss_oracle = get_oracle(self.loss, self.oracle)
        learns_intercept = loss_entry(self.loss).intercept
        intercept = learns_intercept if self.fit_intercept == "auto" else bool(self.fit_intercept)
        w0 = self._given_start(data.n_features, intercept)
        seeds = draw_seeds(self.random_state, self.max_cccp_iter + 1)
        solve = partial(self._solve, seeds=seeds, solver_params=solver_params)
        key = None if self.checkpoint is None else fingerprint(self, intercept, w0, data, positive)
        loaded = load_checkpoint(self.checkpoint, key) if resume else None
        if loaded is None:
            meter = OracleMeter()
            if w0 is None:  # init="mean": the convex model on each image's mean window
                problem = mean_feature_problem(data, positive, loss_oracle, intercept, self.n_jobs)
                w0 = np.asarray(solve(problem, None, 0).w, dtype=np.float64).copy()
                meter.charge(problem)
            state = CCCPState(w0)
        else:
            state, meter = loaded[0], OracleMeter(*loaded[1:])
            if self.verbose:
                say(f"LatentRankSVM: resuming from {self.checkpoint} after {len(state.steps)} steps")
        bound = ConvexBound(data, positive, loss_oracle, self.negatives, intercept, self.n_jobs)
        state = cccp(bound, state, solve=solve, C=self.C, max_iter=self.max_cccp_iter,
                     tol=self.cccp_tol, meter=meter, on_step=partial(self._on_step, key, meter))
        if not state.converged and len(state.steps) >= self.max_cccp_iter:
            warnings.warn(f"CCCP stopped after max_cccp_iter={self.max_cccp_iter} steps without "
                          "converging", ConvergenceWarning, stacklevel=external_stacklevel())
        self._store(state, data, positive, classes, intercept, meter)
        return self

    def _given_start(self, n_features, intercept):
        """w₀ from ``warm_start`` or an ``init`` vector (checked), or None for ``init="mean"``."""
        if self.warm_start and hasattr(self, "coef_"):
            if self.coef_.shape != (n_features,):
                raise ValueError(f"warm_start=True needs the previous fit to have the same number "
                                 f"of features: coef_ has {self.coef_.size}, the data {n_features}")
            bias = self.intercept_ if loss_entry(self.loss).intercept else 0.0  # ranking: threshold only
            return np.append(self.coef_, bias) if intercept else self.coef_.copy()
        if isinstance(self.init, str) and self.init == "zeros":
            raise ValueError(_ZERO_START.format(init="'zeros'"))
        if isinstance(self.init, str):
            return None
        w0 = np.asarray(self.init, dtype=np.float64).ravel()
        if w0.shape[0] == n_features and intercept:
            w0 = np.append(w0, 0.0)
        d = n_features + int(intercept)
        if w0.shape[0] != d or not np.all(np.isfinite(w0)):
            raise ValueError(f"init must be 'mean' or a finite vector of length {d}, got shape "
                             f"{w0.shape}")
        if not np.any(w0[:n_features]):
            raise ValueError(_ZERO_START.format(init="a zero vector"))
        return w0

    def _solve(self, problem, w0, step, *, seeds, solver_params):
        """Convex solve ``step`` (0: the mean-feature start) with its own seed."""
        return run_solver(problem, self.solver, self.C, tol=self.tol, max_iter=self.max_iter,
                          w0=w0, random_state=seeds[step], verbose=self.verbose,
                          name=f"LatentRankSVM step {step}", solver_params=solver_params)

    def _on_step(self, key, meter, state, record):
        if self.verbose:
            say(f"LatentRankSVM: CCCP step {record['step']}, J={record['objective']:.6g} "
                f"(decrease {record['decrease']:.3g}), {record['n_changed']} positives changed "
                f"window, {record['solver_iter']} solver iterations, {record['seconds']:.2f}s")
        if self.checkpoint is not None:
            save_checkpoint(self.checkpoint, key, state, meter)
        return self.callback is not None and bool(self.callback(record))

    def _store(self, state, data, positive, classes, intercept, meter):
        d = data.n_features
        self.coef_ = state.w[:d].copy()
        bias = float(state.w[d]) if intercept else 0.0
        scores = data.scores(self.coef_, bias)
        best = segment_argmax(scores, data.offsets)
        if loss_entry(self.loss).intercept:
            self.intercept_ = bias
        else:  # ranking losses do not fix a threshold: the best cut of the training images
            self.intercept_ = bias - accuracy_threshold(scores[best], positive)
        self.latent_windows_ = best - data.offsets[:-1]
        self.history_ = list(state.history)
        self.steps_ = list(state.steps)
        self.n_iter_ = len(state.steps)
        self.converged_ = bool(state.converged)
        self.lai_seconds_ = float(meter.seconds)
        self.lai_calls_ = int(meter.calls)
        self.classes_ = classes
        self.n_features_in_ = d

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
        data, scores = self._scored(bags, offsets)
        return np.split(scores, data.offsets[1:-1])

    def _scored(self, bags, offsets):
        """The (validated) bags and the score of every window."""
        check_is_fitted(self)
        data = as_bags(bags, offsets, self.chunk_rows, self.n_features_in_)
        return data, data.scores(self.coef_, self.intercept_)

    def decision_function(self, bags, offsets=None):
        """Image scores: the score of each image's best window.

        Parameters
        ----------
        bags, offsets : as in :meth:`fit`.

        Returns
        -------
        scores : ndarray of shape (n_images,)
        """
        data, scores = self._scored(bags, offsets)
        return scores[segment_argmax(scores, data.offsets)]

    def predict(self, bags, offsets=None):
        """Image labels: the positive class where the best window scores above 0.

        Parameters
        ----------
        bags, offsets : as in :meth:`fit`.

        Returns
        -------
        labels : ndarray of shape (n_images,)
        """
        scores = self.decision_function(bags, offsets)
        return self.classes_[(scores > 0).astype(int)]

    def score(self, bags, y, offsets=None):
        """Image-level measure of the loss: mean AP (``"ap"``), NDCG (``"ndcg"``) or accuracy.

        Images are ranked by :meth:`decision_function` (ties by image order, as in
        :mod:`ssvm.metrics`); ``"zero_one"`` scores the accuracy of :meth:`predict`.

        Parameters
        ----------
        bags, offsets : as in :meth:`fit`.
        y : array-like of shape (n_images,)
            True image labels (``classes_[1]`` is the positive class).

        Returns
        -------
        float
            NaN, with a warning, for a ranking loss if ``y`` has a single class.
        """
        scores = self.decision_function(bags, offsets)
        y = np.asarray(y)
        if y.shape != scores.shape:
            raise ValueError(f"y must hold one label per image ({scores.shape[0]}), got shape "
                             f"{y.shape}")
        if loss_entry(self.loss).metric == "accuracy":
            return float(np.mean(self.classes_[(scores > 0).astype(int)] == y))
        return ranking_score(y == self.classes_[1], scores, loss=self.loss)

    def detect(self, bags, boxes=None, iou_threshold=0.3, offsets=None, max_per_image=None):
        """Scored boxes of every image after non-maximum suppression.

        Parameters
        ----------
        bags, offsets : as in :meth:`fit`.
        boxes : list of ndarray of shape (m_i, 4), or ndarray of shape (n_windows, 4), optional
            The window boxes (x1, y1, x2, y2) aligned with the window features; may be omitted
            when ``bags`` is a :class:`ssvm.detection.WindowStore` (its ``boxes`` are used).
        iou_threshold, max_per_image : float and int or None
            As in :func:`ssvm.detection.nms_per_image` (defaults 0.3 and None).

        Returns
        -------
        detections : list of (ndarray of shape (k_i, 4), ndarray of shape (k_i,))
            Per image, the kept boxes and their scores, by decreasing score.
        """
        check_is_fitted(self)
        if boxes is None:
            if offsets is not None or not hasattr(bags, "boxes"):
                raise ValueError("boxes are required unless bags is a WindowStore (which holds them)")
            boxes = bags.boxes
        data, scores = self._scored(bags, offsets)
        return nms_per_image(scores, boxes, data.offsets, iou_threshold=iou_threshold,
                             max_per_image=max_per_image)
