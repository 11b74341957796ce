"""The detectors of ``train_latent_detection.py``: their settings, the choice of a setting by
cross-validation on the training images, and their training.

Per class: the latent AP-SVM (and its Yue-oracle twin), the latent 0-1 SVM, the whole-image
baseline (:class:`ssvm.LatentRankSVM`, image labels only) and the fully supervised bound
(:class:`ssvm.RankSVM` on the ground-truth boxes). A :class:`Setting` is (C, geometry scale,
minimum window area, and for the latent AP-SVM its CCCP start); :func:`select` picks one by
validation detection AP (or image-level AP).
"""

from __future__ import annotations

import contextlib
import logging
import time
import warnings
from typing import NamedTuple

import numpy as np
from _detection import evaluate_scores, max_iou, view
from _detection_data import bags, window_rows

logger = logging.getLogger("scripts")

LATENT_MODELS = ("latent_ap_svm", "latent_zero_one", "whole_image")
SUPERVISED_MODELS = ("supervised_zero_one", "supervised_ap_svm")
MODELS = LATENT_MODELS + SUPERVISED_MODELS


class Setting(NamedTuple):
    """Hyper-parameters of one detector: C, the geometry scale, the minimum window area and the
    CCCP start (``"mean"``: each image's mean window; ``"zero_one"``: the latent 0-1 SVM's weights)."""

    C: float
    scale: float
    min_area: float
    init: str = "mean"

    def label(self):
        return f"C={self.C:g} g={self.scale:g} a={self.min_area:g} init={self.init}"


def grid(args, min_areas=True, zero_one=False, inits=("mean",)):
    """The hyper-parameter grid (``min_areas=False``: minimum area 0 only; ``zero_one``: the C grid
    of the 0-1 SVMs; ``inits``: the CCCP starts compared)."""
    return [Setting(C, g, a, init) for init in inits for a in (args.min_window_area if min_areas else [0.0])
            for g in args.geometry_scale for C in (args.C_zero_one if zero_one else args.C)]


def _folds(y, args):
    from sklearn.model_selection import StratifiedKFold

    return list(StratifiedKFold(args.cv_folds, shuffle=True, random_state=args.seed).split(np.zeros(y.size), y))


def _best(scores):
    """The setting of the best score (ties: the smaller area, geometry scale, then C, then the
    mean-window start, which needs no 0-1 fit)."""
    return max(scores, key=lambda p: (scores[p], -p.min_area, -p.scale, -p.C, p.init == "mean"))


def select(name, split, images, y, args, points, fit, score_by="detection", fit_path=None):
    """The setting of ``points`` with the best ``--cv-folds``-fold validation score on the training
    images ``images`` (labels ``y``): ``fit(setting, fit_images, y_fit) -> (coef, intercept)``
    trains a model; it is scored on the validation images by detection AP (the validation fold's
    boxes) or by image-level AP (its image labels). With ``fit_path(settings, fit_images, y_fit)
    -> [(coef, intercept), ...]``, the settings that differ only in C are trained together on one
    warm path over C. Returns the setting and the score per setting (empty for a single setting)."""
    from ssvm.metrics import mean_average_precision

    if len(points) == 1:
        return points[0], {}
    if min(int(y.sum()), int((~y).sum())) < args.cv_folds:
        logger.warning("%s: too few positive or negative images for %d-fold CV: %s", name, args.cv_folds,
                       points[0].label())
        return points[0], {}
    values = {setting: [] for setting in points}
    for fit_part, val_part in _folds(y, args):
        for setting, (coef, intercept) in _fold_models(points, fit, fit_path, images[fit_part], y[fit_part]):
            dets = window_detections(coef, intercept, split, setting, images[val_part])
            if score_by == "detection":
                values[setting].append(evaluate_scores(dets, split.dataset, name, images[val_part])[0])
            else:
                values[setting].append(mean_average_precision(y[val_part], np.array([s.max() for _, s in dets])))
    scores = {setting: float(np.mean(v)) for setting, v in values.items()}
    return _best(scores), scores


def _fold_models(points, fit, fit_path, fit_images, y_fit):
    """(setting, (coef, intercept)) of every setting trained on one fold: one by one, or with
    ``fit_path`` one warm path over C per geometry scale, minimum area and start."""
    if fit_path is None:
        return [(setting, fit(setting, fit_images, y_fit)) for setting in points]
    paths = {}
    for setting in points:
        paths.setdefault(setting._replace(C=0.0), []).append(setting)
    return [pair for path in paths.values() for pair in zip(path, fit_path(path, fit_images, y_fit))]


def supervised_set(name, split, images, overlap, setting):
    """Training rows of the fully supervised bound: the non-difficult boxes of class ``name`` in
    ``images`` (positives) and their windows with IoU < 0.3 with every box of the class (negatives)."""
    gt_store, gt_images, gt_geometry = split.gt
    ds = split.dataset
    chosen = set(images.tolist())
    positive = []
    for bag, i in enumerate(gt_images):
        if i in chosen:
            positive += [gt_store.offsets[bag] + k for k, (c, hard) in
                         enumerate(zip(ds.box_classes[i], ds.difficult[i])) if c == name and not hard]
    rows, _ = window_rows(split, images, setting.min_area)
    negative = rows[overlap[rows] < 0.3]
    X = np.vstack([view(gt_store.features, gt_geometry, setting.scale, positive)[:],
                   view(split.store.features, split.geometry, setting.scale, negative)[:]]).astype(np.float64)
    return X, np.r_[np.ones(len(positive), dtype=bool), np.zeros(negative.size, dtype=bool)]


def window_detections(coef, intercept, split, setting, images=None, whole=False):
    """Per image (all, or ``images``) of a split, its windows scored by a linear model, after NMS
    (``whole=True``: each image's whole-image window only)."""
    from ssvm.detection import nms_per_image
    from ssvm.detection.store import chunked_scores

    images = np.arange(split.store.n_images) if images is None else images
    features, offsets = bags(split, setting, images, whole)
    scores = chunked_scores(features, coef, intercept, chunk_rows=65536)
    return nms_per_image(scores, split.store.boxes[features.rows], offsets, iou_threshold=0.3)


def train_supervised(name, split, images, y, args):
    """The fully supervised upper bound: RankSVM(loss="zero_one") and RankSVM(loss="ap") on the
    ground-truth boxes vs windows overlapping no box of the class (IoU < 0.3).

    The setting (minimum area 0) is chosen by validation *detection* AP over the training images
    (boxes are this bound's supervision). Returns per model the fitted (coef, intercept, setting),
    the final fit's seconds, and the chosen setting with its validation scores.
    """
    from ssvm import RankSVM

    overlap = max_iou(split.store, split.dataset, name)
    models, seconds, chosen = {}, {}, {}
    for key, loss in (("supervised_zero_one", "zero_one"), ("supervised_ap_svm", "ap")):
        def fit(setting, fit_images, _, loss=loss):
            with _warnings_as_log():
                model = RankSVM(loss=loss, C=setting.C).fit(*supervised_set(name, split, fit_images, overlap,
                                                                            setting))
            return model.coef_[0], float(model.intercept_[0])

        setting, scores = select(name, split, images, y, args, grid(args, False, loss == "zero_one"), fit)
        tic = time.perf_counter()
        models[key] = (*fit(setting, images, y), setting)
        seconds[key] = time.perf_counter() - tic
        chosen[key] = _chosen(setting, scores, "detection")
        logger.info("%s %s: %s, %.1fs", name, key, setting.label(), seconds[key])
    return models, seconds, chosen


def _chosen(setting, scores, score_by):
    return {**setting._asdict(), "validation": score_by,
            "scores": [{**p._asdict(), "score": v} for p, v in scores.items()]}


# --ap-init: the starts in the AP-SVM's grid; "lowest_j" fits both starts and keeps the lower final J;
# "auto": the estimator's starts (init="auto") and the validated 0-1 SVM's weights, the lowest final J
AP_INITS = {"auto": ("auto",), "select": ("zero_one", "mean"), "lowest_j": ("lowest_j",),
            "zero_one": ("zero_one",), "mean": ("mean",)}
STARTS = ("mean", "zero_one")


def concrete_starts(init):
    """The CCCP starts a setting's ``init`` runs: both of ``STARTS`` for ``lowest_j``, else itself."""
    return STARTS if init == "lowest_j" else (init,)

LATENT_SPECS = {
    "latent_ap_svm": {"loss": "ap", "oracle": "qs"},
    "latent_ap_svm_yue": {"loss": "ap", "oracle": "yue"},
    "latent_zero_one": {"loss": "zero_one"},
    "whole_image": {"loss": "ap", "oracle": "qs"},
}


def train_class(name, y, split, args, work, keep):
    """Fit the latent detectors (with the Yue-oracle twin of the latent AP-SVM unless ``--no-yue-twin``),
    the whole-image baseline and the supervised bound for one class.

    Only the images in the boolean mask ``keep`` are used.  Returns the models as (coef,
    intercept, setting), the latent ones as fitted :class:`ssvm.LatentRankSVM`, the seconds of each
    final fit, the seconds spent choosing hyper-parameters, and the chosen settings with their
    validation scores per model.
    """
    from ssvm import LatentRankSVM

    images = np.flatnonzero(keep)
    y = y[images]

    def latent_model(key, setting, checkpoint=None, init="mean"):  # init: "mean" or start weights
        negatives = {} if key == "whole_image" else {"negatives": args.negatives}
        return LatentRankSVM(C=setting.C, max_cccp_iter=args.max_cccp_iter, random_state=args.seed,
                             checkpoint=checkpoint, init=init, **LATENT_SPECS[key], **negatives)

    starts = {}

    def start(key, setting, fit_images, y_fit, X, offsets):
        """w0 of a fit: with a ``zero_one`` start, the latent 0-1 SVM's weights (at its validated C)
        on the same images and windows, fitted once per setting; with ``auto``, the estimator's
        starts and those weights; else each image's mean window."""
        if setting.init == "mean":
            return "mean"
        if setting.init == "auto":
            weights = start(key, setting._replace(init="zero_one"), fit_images, y_fit, X, offsets)
            return ["auto", weights] if np.any(weights) else "auto"
        C = selection["latent_zero_one"][0].C
        memo = (tuple(fit_images.tolist()), setting.scale, setting.min_area, C)  # the start's key
        if memo not in starts:
            with _warnings_as_log():
                starts[memo] = latent_model("latent_zero_one", setting._replace(C=C)).fit(
                    X, y_fit, offsets=offsets).coef_
        return starts[memo]

    def fit_latent(key, setting, fit_images, y_fit, X, offsets, checkpoint=None):
        """The fitted model of ``setting``; with the ``lowest_j`` start, CCCP from each of
        ``STARTS`` and the fit of the lower final J (a choice on the training images: the
        objective CCCP minimises, at one C and on the same windows). Returns the model and its start."""
        fits = []
        for init in concrete_starts(setting.init):
            at = setting._replace(init=init)
            tag = f"C{at.C:g}-g{at.scale:g}-a{at.min_area:g}-{init}"
            model = latent_model(key, at, checkpoint and checkpoint.with_name(f"{checkpoint.name}-{tag}.npz"),
                                 start(key, at, fit_images, y_fit, X, offsets))
            with _warnings_as_log():
                model.fit(X, y_fit, offsets=offsets, resume=bool(checkpoint) and args.resume)
            fits.append((model, init if init != "auto" else model.start_.replace("vector 0", "zero_one")))
        return min(fits, key=lambda fit: fit[0].history_[-1])

    def fitter(key):
        def fit(setting, fit_images, y_fit):
            X, offsets = bags(split, setting, fit_images, whole=key == "whole_image")
            model, _ = fit_latent(key, setting, fit_images, y_fit, X, offsets)
            return model.coef_, model.intercept_
        return fit

    def path_fitter(key):  # the settings of one geometry and area, on CCCP's warm path over C
        def fit_path(settings, fit_images, y_fit):
            from ssvm.latent import latent_C_path

            X, offsets = bags(split, settings[0], fit_images, whole=key == "whole_image")
            paths = []
            for init in concrete_starts(settings[0].init):
                at = settings[0]._replace(init=init)
                model = latent_model(key, at, init=start(key, at, fit_images, y_fit, X, offsets))
                with _warnings_as_log():
                    paths.append(latent_C_path(model, [s.C for s in settings], X, y_fit, offsets))
            best = [min(fits, key=lambda m: m.history_[-1]) for fits in zip(*paths)]  # per C: the lower J
            return [(model.coef_, model.intercept_) for model in best]
        return None if args.cold_selection else fit_path

    tic = time.perf_counter()
    selection = {}  # the 0-1 SVM first: its validated C trains the latent AP-SVM's start
    for key in ("latent_zero_one", "latent_ap_svm", "whole_image"):
        points = grid(args, key != "whole_image", key == "latent_zero_one",
                      AP_INITS[args.ap_init] if key == "latent_ap_svm" else ("mean",))
        selection[key] = select(name, split, images, y, args, points, fitter(key), args.select, path_fitter(key))
    selection["latent_ap_svm_yue"] = selection["latent_ap_svm"]  # same model, other oracle
    selection_seconds = time.perf_counter() - tic
    logger.info("%s: latent models' selection %.1fs (%s)", name, selection_seconds,
                "a cold fit per C" if args.cold_selection else "a warm path over C")
    models, latent, seconds, started = {}, {}, {}, {}
    for key in [k for k in LATENT_SPECS if not (k == "latent_ap_svm_yue" and args.no_yue_twin)]:
        setting = selection[key][0]
        if key == "latent_ap_svm_yue" and setting.init != "auto":  # the twin: from the QS model's start
            setting = setting._replace(init=started["latent_ap_svm"])
        X, offsets = bags(split, setting, images, whole=key == "whole_image")
        tic = time.perf_counter()
        model, started[key] = fit_latent(key, setting, images, y, X, offsets, work / "checkpoints" / f"{name}-{key}")
        seconds[key] = time.perf_counter() - tic
        latent[key] = model
        models[key] = (model.coef_, model.intercept_, setting)
        logger.info("%s %s: %s (start %s), %d CCCP steps, J %.4g -> %.4g, LAI %.3fs, %.1fs", name, key,
                    setting.label(), started[key], model.n_iter_, model.history_[0], model.history_[-1],
                    model.lai_seconds_, seconds[key])
    if "latent_ap_svm_yue" in latent:
        gap = float(np.max(np.abs(latent["latent_ap_svm"].coef_ - latent["latent_ap_svm_yue"].coef_)))
        logger.info("%s: max |w_qs - w_yue| = %.3g (both oracles are exact)", name, gap)
    chosen = {key: {**_chosen(*selection[key], args.select), "start": started[key]} for key in LATENT_MODELS}
    tic = time.perf_counter()
    supervised, supervised_seconds, supervised_chosen = train_supervised(name, split, images, y, args)
    selection_seconds += time.perf_counter() - tic - sum(supervised_seconds.values())
    models.update(supervised)
    seconds.update(supervised_seconds)
    chosen.update(supervised_chosen)
    return models, latent, seconds, selection_seconds, chosen


@contextlib.contextmanager
def _warnings_as_log():
    """Route the warnings of a fit to the log (CCCP capped by --max-cccp-iter is expected)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for warning in caught:
        logger.info("%s", warning.message)


def class_detections(models, split):
    """Per model, the detections of every image of a split (NMS at IoU 0.3; the whole-image
    baseline: each image's whole-image window)."""
    return {key: window_detections(coef, intercept, split, setting, whole=key == "whole_image")
            for key, (coef, intercept, setting) in models.items()}
