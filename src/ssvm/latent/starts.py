"""Where CCCP starts and the scale of the rank hinge: the latent AP-SVM's defaults (issue 38).

Two things made the latent AP-SVM collapse on bags with many negative windows (measured in
``docs/results/latent_detection.md``, bags of digits):

* **The hinge's floor.** The rank hinges average over the P·N (positive, negative) pairs, so with every
  window of the negative images a negative (N in the thousands) they vanish only at a score margin of
  about κ = N / (2(P + 1)) (one negative above the lowest positive costs 1/(P(P + 1)) of AP and gains
  2·margin/(PN)). At a C that suits the 0-1 hinge, J/C stays near its maximum, and among imputations
  J prefers the most coherent set of one window per positive image — often windows of a distractor
  that every image holds — over the object: lower J, worse detector. ``hinge_scale="margin"``
  multiplies C by κ² in every convex problem of a rank loss, which is the same as measuring scores in
  units of κ: the hinge then vanishes at a margin of 1, as the 0-1 hinge does, and is off its floor
  at the C values of the 0-1 SVM.
* **The start.** CCCP stops in a local minimum near its start, and the mean-window start of a rank
  loss (the same model on each image's mean window) imputes distractors. ``init="auto"`` runs CCCP
  from the mean start and from the weights of the latent 0-1 SVM at C, C/10 and C/100 (the same
  windows and negatives) and keeps the run of the lowest final J. The 0-1 SVM's imputation is the
  better start where it finds the object, but which of its C does depends on the data; with the
  margin rescaled, the lowest J marks the better detector.

A start is ``"mean"``, ``"zero_one"`` (the latent 0-1 SVM at C) or a weight vector; ``init`` is one of
them, ``"auto"`` or a list of them. A start whose first imputation repeats an earlier start's is
skipped (CCCP's first convex problem, hence its run, would be the same), and so is a 0-1 SVM that
ends at w = 0 (every window ties there).
"""

import hashlib
import logging
import warnings
from numbers import Real

import numpy as np

from ssvm.losses import get_oracle, loss_entry

from .cccp import CCCPState, StartRun
from .convex import mean_feature_problem

__all__ = ["ZERO_ONE_FACTORS", "check_vectors", "margin_factor", "model_starts", "n_ranked_negatives",
           "run_starts", "start_records", "start_specs", "start_weights", "zero_one_weights",
           "zero_start_error"]

logger = logging.getLogger(__name__)

#: The multiples of C at which ``init="auto"`` trains the latent 0-1 SVM whose weights start CCCP.
ZERO_ONE_FACTORS = (1.0, 0.1, 0.01)

_ZERO_START = (
    "LatentRankSVM cannot start from w = 0 (init={init}): every window then scores 0, so CCCP "
    "imputes each positive image's first window and w = 0 is often optimal for that bound — the "
    "fit would end at w = 0. Use init='auto' (the default), 'mean', 'zero_one' or a non-zero weight "
    "vector."
)
_FROM_ZERO_ONE = "zero_one"  # the start word (and kind) of the latent 0-1 SVM's weights, not a loss name
_WORDS = ("auto", "mean", _FROM_ZERO_ONE)


def zero_start_error(init):
    """The ValueError refusing a start at w = 0 (``init`` as the message names it)."""
    return ValueError(_ZERO_START.format(init=init))


def margin_factor(hinge_scale, ranking, n_pos, n_neg):
    """The factor of C in a convex problem with ``n_pos`` positives and ``n_neg`` negatives.

    Parameters
    ----------
    hinge_scale : "margin" or float
        ``"margin"``: κ² with κ = n_neg / (2(n_pos + 1)) for a rank loss (the score margin at which
        the AP hinge vanishes), 1 for the 0-1 loss; a float: that factor, for every loss.
    ranking : bool
        Whether the loss is a rank loss (its hinge averages over pairs).
    n_pos, n_neg : int

    Returns
    -------
    float
    """
    if not isinstance(hinge_scale, str):
        return float(hinge_scale)
    if not ranking:
        return 1.0
    return (n_neg / (2.0 * (n_pos + 1))) ** 2


def _is_vector(value):
    if isinstance(value, str):
        return False
    array = np.asarray(value, dtype=object)
    return array.ndim == 1 and array.size > 0 and all(
        isinstance(v, (Real, np.number)) and not isinstance(v, (bool, np.bool_)) for v in array)


def start_specs(init, ranking):
    """The starts of ``init`` as ``(label, kind, value)``, in order and without repeats.

    Parameters
    ----------
    init : str, array-like, or list of those
        ``"auto"``, ``"mean"``, ``"zero_one"``, a weight vector, or a list of these.
    ranking : bool
        Whether the loss is a rank loss (``"auto"`` and ``"zero_one"`` are then the latent 0-1 SVM's
        weights; for the 0-1 loss itself ``"auto"`` is ``"mean"`` and ``"zero_one"`` is refused).

    Returns
    -------
    list of (str, str, object)
        ``kind`` is ``"mean"`` (value None), ``"zero_one"`` (value: the multiple of C) or
        ``"vector"`` (value: a float64 array, checked by the caller).

    Raises
    ------
    ValueError
        On ``"zeros"``, an unknown word, an empty list, or ``"zero_one"`` with the 0-1 loss.
    """
    items = [init] if isinstance(init, str) or _is_vector(init) else list(init)
    if not items:
        raise ValueError("init must be 'auto', 'mean', 'zero_one', a weight vector or a non-empty "
                         "list of these")
    specs, n_vectors = [], 0
    for item in items:
        if _is_vector(item):
            specs.append((f"vector {n_vectors}", "vector", np.asarray(item, dtype=np.float64)))
            n_vectors += 1
            continue
        if not isinstance(item, str):
            raise ValueError(f"init holds {item!r}: each start must be 'auto', 'mean', 'zero_one' "
                             "or a 1-D weight vector")
        if item == "zeros":
            raise zero_start_error("'zeros'")
        if item not in _WORDS:
            raise ValueError(f"unknown start {item!r} in init: use 'auto', 'mean', 'zero_one' or a "
                             "weight vector")
        if item == _FROM_ZERO_ONE and not ranking:
            raise ValueError("init='zero_one' starts a rank loss from the latent 0-1 SVM; the 0-1 "
                             "loss itself starts from 'mean' or a weight vector")
        if item in ("auto", "mean"):
            specs.append(("mean", "mean", None))
        factors = ZERO_ONE_FACTORS if item == "auto" and ranking else (1.0,) if item == _FROM_ZERO_ONE else ()
        specs += [(f"zero_one C*{f:g}", _FROM_ZERO_ONE, f) for f in factors]
    seen, unique = set(), []
    for spec in specs:
        if spec[0] not in seen:
            seen.add(spec[0])
            unique.append(spec)
    return unique


def check_vectors(starts, n_features, intercept):
    """``starts`` with every weight vector checked (finite, of the right length, not 0) and given
    an intercept entry (0) where the model has an intercept and the vector has none."""
    d = n_features + int(intercept)
    checked = []
    for label, kind, w0 in starts:
        if kind == "vector":
            w0 = np.append(w0, 0.0) if w0.shape[0] == n_features and intercept else w0
            if w0.shape[0] != d or not np.all(np.isfinite(w0)):
                raise ValueError(f"init vectors must be finite and of length {n_features}"
                                 f"{f' or {d}' if intercept else ''}, got shape {w0.shape}")
            if not np.any(w0[:n_features]):
                raise zero_start_error("a zero vector")
        checked.append((label, kind, w0))
    return checked


def model_starts(model, n_features, intercept, ranking):
    """The starts of a fit of ``model``: its previous weights (``warm_start``) or ``init``'s."""
    if model.warm_start and hasattr(model, "coef_"):
        if model.coef_.shape != (n_features,):
            raise ValueError(f"warm_start=True needs the previous fit to have the same number "
                             f"of features: coef_ has {model.coef_.size}, the data {n_features}")
        bias = model.intercept_ if loss_entry(model.loss).intercept else 0.0  # ranking: threshold only
        return [("warm", "vector", np.append(model.coef_, bias) if intercept else model.coef_.copy())]
    return check_vectors(start_specs(model.init, ranking), n_features, intercept)


def start_weights(model, kind, value, *, data, positive, ranking, intercept, meter, solve, seed):
    """w₀ of one start of ``model``: a given vector, the mean-window model, or the latent 0-1 SVM's
    weights at ``value`` times C (None if they are 0); its oracle work is charged to ``meter``.

    ``solve(problem, w0, step, C=...)`` solves the mean-window problem; ``seed`` seeds the 0-1 fit.
    """
    if kind == "vector":
        return value
    if kind == _FROM_ZERO_ONE:
        w0, zero_one = zero_one_weights(model, value, data, positive, intercept, seed)
        meter.seconds, meter.calls = meter.seconds + zero_one.lai_seconds_, meter.calls + zero_one.lai_calls_
        return w0
    # the same convex model on each image's mean window, C scaled by its own margin factor
    problem = mean_feature_problem(data, positive, get_oracle(model.loss, model.oracle), intercept,
                                   model.n_jobs)
    n_pos = int(positive.sum())
    C = model.C * margin_factor(model.hinge_scale, ranking, n_pos, positive.size - n_pos)
    w0 = np.asarray(solve(problem, None, 0, C=C).w, dtype=np.float64).copy()
    meter.charge(problem)
    return w0


def n_ranked_negatives(data, positive, negatives):
    """N of the CCCP problems: the negative images' windows (``"all"``) or the images (``"best"``)."""
    if negatives == "all":
        return data.n_windows - int(np.diff(data.offsets)[positive].sum())
    return int((~positive).sum())


def zero_one_weights(model, factor, data, positive, intercept, seed):
    """The weights of the latent 0-1 SVM at ``factor`` times ``model.C`` with ``model``'s windows,
    negatives and solver (None if they are 0), and the fitted 0-1 SVM (its oracle totals)."""
    from sklearn.base import clone

    zero_one = clone(model).set_params(
        loss="zero_one", oracle="auto", C=model.C * factor, init="mean", fit_intercept="auto",
        checkpoint=None, resume=False, callback=None, verbose=0, warm_start=False, random_state=seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        zero_one.fit(data.features, positive, offsets=data.offsets)
    for warning in caught:
        logger.info("LatentRankSVM: start zero_one C*%g: %s", factor, warning.message)
    if not np.any(zero_one.coef_):
        return None, zero_one
    return (np.append(zero_one.coef_, 0.0) if intercept else zero_one.coef_.copy()), zero_one


def run_starts(starts, runs, *, weights, impute, run):
    """Run CCCP from every start of ``starts`` that ``runs`` (checkpointed) has not finished.

    Parameters
    ----------
    starts : list of (str, str, object)
    runs : list of StartRun
        The runs so far; new runs are appended.
    weights : callable
        ``weights(kind, value) -> w0 or None`` (None: no start, a 0-1 SVM that ended at w = 0).
    impute : callable
        ``impute(w) -> ndarray`` of the imputed windows (a start imputing an earlier run's
        windows is skipped: its CCCP would solve the same convex problems).
    run : callable
        ``run(StartRun) -> bool``: CCCP from the run's state; True when a callback stopped it
        (no later start is then tried).

    Returns
    -------
    dict
        Why each skipped start was skipped, by label.
    """
    skipped = {}
    for label, kind, value in starts:
        current = next((r for r in runs if r.label == label), None)
        if current is None:
            w0 = weights(kind, value)
            key = None if w0 is None else hashlib.sha1(np.ascontiguousarray(impute(w0)).tobytes()).hexdigest()
            twin = next((r.label for r in runs if r.key == key), None)
            if w0 is None or twin is not None:
                skipped[label] = ("its 0-1 SVM ended at w = 0" if w0 is None else
                                  f"it imputes the windows of {twin!r}")
                logger.info("LatentRankSVM: start %s skipped: %s", label, skipped[label])
                continue
            current = StartRun(label, key, CCCPState(w0))
            runs.append(current)
        if not current.done and run(current):
            break
    return skipped


def start_records(starts, runs, skipped):
    """Per start: its label, final objective and CCCP steps (None if skipped) and why skipped."""
    done = {r.label: r for r in runs}
    return [{"start": label,
             "objective": done[label].state.history[-1] if label in done else None,
             "n_iter": len(done[label].state.steps) if label in done else None,
             "skipped": skipped.get(label)} for label, _, _ in starts]
