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
from .cccp import cccp
from .checkpoint import fingerprint, load_checkpoint, save_checkpoint
from .convex import ConvexBound, OracleMeter
from .starts import margin_factor, model_starts, n_ranked_negatives, run_starts, start_records, start_weights

__all__ = ["LatentRankSVM", "LATENT_LOSSES"]

#: Losses whose hinge is non-increasing in a positive's score and non-decreasing in a negative's,
#: which is what makes the CCCP bound valid (precision@k's joint feature does not have this property;
#: every QSLoss object has it): the loss table's ``latent`` column.
LATENT_LOSSES = tuple(name for name in LOSS_NAMES if loss_entry(name).latent)


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
        negative (N counts windows, P positive images).
    hinge_scale : "margin" or float, default="margin"
        Factor of C in every convex problem. ``"margin"``: for a rank loss κ², κ = N / (2(P + 1))
        — the score margin at which the AP hinge, a mean over the P·N pairs, vanishes — so that it
        vanishes at a margin of 1 as the 0-1 hinge does (1 for ``"zero_one"``); without it, with
        ``negatives="all"`` and N in the thousands, the hinge stays on its floor at every usual C
        and J rewards imputing distractors (:mod:`ssvm.latent.starts`). A float: that factor for
        every loss (``1.0``: C as given, the behaviour before this parameter existed).
    init : str, array of shape (n_features,) or (n_features + 1,), or list, default="auto"
        Where CCCP starts (``"auto"``, ``"mean"``, ``"zero_one"``, a vector or a list of these):
        ``"mean"`` trains the same convex model on each image's mean window;
        ``"zero_one"`` takes the weights of the latent 0-1 SVM at C (same windows, negatives and
        solver; rank losses only); a vector is w₀ itself. With several starts (a list, or
        ``"auto"``: ``"mean"`` and the latent 0-1 SVM at C, C/10 and C/100 for a rank loss,
        ``"mean"`` for ``"zero_one"``) CCCP runs from each and the run of the lowest final
        objective is kept (``start_``, ``starts_``). w₀ = 0 is refused (see :mod:`ssvm.latent`).
    fit_intercept : bool or "auto", default="auto"
        Append a constant feature (regularised, liblinear style). ``"auto"``: only for
        ``"zero_one"`` (the ranking losses are invariant to an intercept).
    checkpoint : str or path-like or None, default=None
        File written (atomically) after every CCCP step.
    resume : bool, default=False
        Continue from ``checkpoint`` if it exists (``fit(..., resume=...)`` overrides this).
    callback : callable or None, default=None
        Called after every CCCP step (after its checkpoint is written) with a dict record
        (``start``, ``step``, ``objective``, ``decrease``, ``seconds``, ``lai_seconds``,
        ``lai_calls``, ``solver_iter``, ``n_changed``); returning True stops training (the runs
        of later starts too).
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
        Latent objective J(w) (with C times ``hinge_scale_``) at w₀ and after every CCCP step of
        the kept run (non-increasing up to solver tolerance).
    steps_ : list of dict
        One record per CCCP step of the kept run (the records passed to ``callback``).
    n_iter_ : int
        Number of CCCP steps of the kept run (including those of a resumed run).
    converged_ : bool
    start_ : str
        The start of the kept run (``"mean"``, ``"zero_one C*0.1"``, ``"vector 0"``, ``"warm"``).
    starts_ : list of dict
        Per start tried: ``start``, its final ``objective`` and ``n_iter`` (None if skipped) and
        ``skipped`` (None, or why: its 0-1 SVM ended at w = 0, or it imputes the windows of an
        earlier start).
    hinge_scale_ : float
        The factor of C in the convex problems of CCCP.
    lai_seconds_ : float
        Seconds spent in loss-augmented inference during training, all starts included (a resumed
        run adds to the checkpointed total).
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
        "hinge_scale": [StrOptions({"margin"}), Interval(Real, 0, None, closed="neither")],
        "init": [StrOptions({"auto", "mean", "zero_one", "zeros"}), "array-like"],  # "zeros": refused
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
                 max_iter=None, max_cccp_iter=10, cccp_tol=1e-3, negatives="best",
                 hinge_scale="margin", init="auto", fit_intercept="auto", checkpoint=None,
                 resume=False, callback=None, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False, solver_params=None, chunk_rows=65536):
        self.loss = loss
        self.oracle = oracle
        self.solver = solver
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.max_cccp_iter = max_cccp_iter
        self.cccp_tol = cccp_tol
        self.negatives = negatives
        self.hinge_scale = hinge_scale
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
        ranking = loss_entry(self.loss).metric == "ranking"
        starts = model_starts(self, data.n_features, intercept, ranking)
        seeds = draw_seeds(self.random_state, self.max_cccp_iter + 1)
        solve = partial(self._solve, seeds=seeds, solver_params=solver_params)
        key = None if self.checkpoint is None else fingerprint(self, intercept, starts, data, positive)
        loaded = load_checkpoint(self.checkpoint, key) if resume else None
        runs, meter = ([], OracleMeter()) if loaded is None else (loaded[0], OracleMeter(*loaded[1:]))
        if loaded is not None and self.verbose:
            say(f"LatentRankSVM: resuming from {self.checkpoint} after {len(runs)} run(s)")
        self.hinge_scale_ = margin_factor(self.hinge_scale, ranking, int(positive.sum()),
                                          n_ranked_negatives(data, positive, self.negatives))
        bound = ConvexBound(data, positive, loss_oracle, self.negatives, intercept, self.n_jobs)
        weights = partial(start_weights, self, data=data, positive=positive, ranking=ranking,
                          intercept=intercept, meter=meter, solve=solve, seed=seeds[0])
        run = partial(self._run, bound=bound, solve=solve, meter=meter, key=key, runs=runs)
        skipped = run_starts(starts, runs, weights=weights, impute=bound.impute, run=run)
        best = min(runs, key=lambda r: r.state.history[-1])
        if not best.state.converged and len(best.state.steps) >= self.max_cccp_iter:
            warnings.warn(f"CCCP stopped after max_cccp_iter={self.max_cccp_iter} steps without "
                          "converging", ConvergenceWarning, stacklevel=external_stacklevel())
        self.start_, self.starts_ = best.label, start_records(starts, runs, skipped)
        self._store(best.state, data, positive, classes, intercept, meter)
        return self

    def _run(self, current, *, bound, solve, meter, key, runs):
        """CCCP from ``current``'s state; True if the callback stopped it."""
        stopped = [False]
        current.state = cccp(bound, current.state, solve=solve, C=self.C * self.hinge_scale_,
                             max_iter=self.max_cccp_iter, tol=self.cccp_tol, meter=meter,
                             on_step=partial(self._on_step, key, meter, runs, current, stopped))
        current.done = not stopped[0]
        if self.checkpoint is not None:
            save_checkpoint(self.checkpoint, key, runs, meter)
        return stopped[0]

    def _solve(self, problem, w0, step, C=None, *, seeds, solver_params):
        """Convex solve ``step`` (0: the mean-feature start) with its own seed, at ``C`` (the
        objective's: C times ``hinge_scale_``)."""
        C = self.C * self.hinge_scale_ if C is None else C
        return run_solver(problem, self.solver, C, tol=self.tol, max_iter=self.max_iter,
                          w0=w0, random_state=seeds[step], verbose=self.verbose,
                          name=f"LatentRankSVM step {step}", solver_params=solver_params)

    def _on_step(self, key, meter, runs, run, stopped, state, record):
        record = {"start": run.label, **record}
        state.steps[-1] = dict(record)
        if self.verbose:
            say(f"LatentRankSVM: start {run.label}, CCCP step {record['step']}, "
                f"J={record['objective']:.6g} (decrease {record['decrease']:.3g}), "
                f"{record['n_changed']} positives changed window, {record['solver_iter']} solver "
                f"iterations, {record['seconds']:.2f}s")
        if self.checkpoint is not None:
            save_checkpoint(self.checkpoint, key, runs, meter)
        stopped[0] = self.callback is not None and bool(self.callback(record))
        return stopped[0]

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
