"""Window features: a default HOG + colour-histogram extractor and the plug-in interface.

A *window feature extractor* is any picklable callable ``f(image, boxes) -> (m, d) array`` where
``image`` is an RGB uint8 array (H, W, 3) and ``boxes`` an (m, 4) array of ``(x1, y1, x2, y2)`` VOC
pixel coordinates. A function of a batch of equally sized crops (a CNN, say) plugs in through
:class:`CropFeatures`. Extraction over many images runs in parallel with joblib.
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs

from .boxes import as_boxes
from .hog import batch_hog, hog_length
from .images import import_cv2, limit_cv2_threads, read_image

__all__ = ["HogColorFeatures", "CropFeatures", "WithGeometry", "crop_windows", "extract_features",
           "window_geometry"]


def _shrink(image, boxes, max_side):
    """Downscale an image so its longer side is at most ``max_side``; scale boxes with it."""
    height, width = image.shape[:2]
    scale = min(1.0, max_side / max(height, width))
    if scale >= 1.0:
        return image, boxes
    cv2 = import_cv2()
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    sx, sy = size[0] / width, size[1] / height
    # continuous extent [x1 - 1, x2] scales linearly; back to 1-based inclusive
    scaled = np.column_stack([
        (boxes[:, 0] - 1) * sx + 1, (boxes[:, 1] - 1) * sy + 1, boxes[:, 2] * sx, boxes[:, 3] * sy,
    ])
    return small, scaled


def crop_windows(image, boxes, size):
    """Crop windows out of an image and resize each to ``size``.

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
    boxes : array-like, shape (m, 4)
        VOC pixel coordinates; pixels ``round(x1)..round(x2)`` (1-based, inclusive) are cropped,
        clipped to the image and at least one pixel wide.
    size : (int, int)
        ``(height, width)`` of every crop.

    Returns
    -------
    crops : ndarray of uint8, shape (m, height, width, 3)
    """
    cv2 = import_cv2()
    boxes = as_boxes(boxes)
    height, width = image.shape[:2]
    out = np.empty((boxes.shape[0], size[0], size[1], image.shape[2]), dtype=image.dtype)
    corners = np.rint(boxes).astype(np.int64)
    x1 = np.clip(corners[:, 0] - 1, 0, width - 1)
    y1 = np.clip(corners[:, 1] - 1, 0, height - 1)
    x2 = np.clip(corners[:, 2], x1 + 1, width)
    y2 = np.clip(corners[:, 3], y1 + 1, height)
    for k in range(boxes.shape[0]):
        crop = image[y1[k] : y2[k], x1[k] : x2[k]]
        out[k] = cv2.resize(crop, (size[1], size[0]), interpolation=cv2.INTER_AREA)
    return out


def _unit_rows(features):
    norms = np.linalg.norm(features, axis=1, keepdims=True)
    return features / np.maximum(norms, 1e-12)


class HogColorFeatures:
    """Default window features: HOG of the grey window plus an HSV colour histogram.

    Each window is cropped and resized to ``window_size × window_size``; the feature is the
    concatenation of (a) a HOG descriptor of the grey crop (:func:`ssvm.detection.hog.batch_hog`:
    scikit-image's HOG with L2-Hys block normalisation, vectorised over all crops) and (b) a joint
    HSV histogram of the crop, each part L2-normalised and scaled by 1/√2 so the whole vector has
    unit norm (a flat window, with no gradient, has a zero HOG part).

    Why this default: it needs no download and no GPU, is a few hundred dimensions (324 + 72 with
    the defaults), and costs about 0.2 ms per window, so thousands of windows per second per core.
    HOG captures shape and is the classic linear-detector feature (Dalal & Triggs; the DPM
    detectors on VOC); the colour histogram adds what HOG ignores (a raccoon's grey fur, a green
    circuit board). Unit norm keeps window scores on one scale across images, which matters when
    the best window per image is chosen by a linear score. For real accuracy plug in CNN features
    through :class:`CropFeatures`.

    Parameters
    ----------
    window_size : int, default=32
        Side of the resized crop; must be a multiple of ``pixels_per_cell``.
    orientations : int, default=9
    pixels_per_cell : int, default=8
    cells_per_block : int, default=2
    hsv_bins : (int, int, int), default=(8, 3, 3)
        Bins of hue, saturation and value in the joint histogram.
    max_image_side : int, default=512
        The image is first shrunk so its longer side is at most this (cheaper crops of large photos).
    """

    def __init__(self, window_size=32, orientations=9, pixels_per_cell=8, cells_per_block=2,
                 hsv_bins=(8, 3, 3), max_image_side=512):
        self.window_size = window_size
        self.orientations = orientations
        self.pixels_per_cell = pixels_per_cell
        self.cells_per_block = cells_per_block
        self.hsv_bins = tuple(hsv_bins)
        self.max_image_side = max_image_side
        if window_size % pixels_per_cell or window_size // pixels_per_cell < cells_per_block:
            raise ValueError(
                f"window_size={window_size} must be a multiple of pixels_per_cell={pixels_per_cell} "
                f"holding at least cells_per_block={cells_per_block} cells"
            )
        if len(self.hsv_bins) != 3 or min(self.hsv_bins) < 1:
            raise ValueError(f"hsv_bins must be three positive integers, got {hsv_bins!r}")

    @property
    def n_hog(self):
        """Length of the HOG part."""
        return hog_length(self.window_size, self.window_size, self.orientations,
                          self.pixels_per_cell, self.cells_per_block)

    @property
    def n_features(self):
        """Length of the feature vector."""
        return self.n_hog + int(np.prod(self.hsv_bins))

    def __repr__(self):
        return (f"HogColorFeatures(window_size={self.window_size}, orientations={self.orientations}, "
                f"pixels_per_cell={self.pixels_per_cell}, cells_per_block={self.cells_per_block}, "
                f"hsv_bins={self.hsv_bins}, max_image_side={self.max_image_side})")

    def hsv_histograms(self, crops):
        """Joint HSV histograms of uint8 RGB crops (m, h, w, 3) → (m, prod(hsv_bins)) counts."""
        cv2 = import_cv2()
        m, h, w, _ = crops.shape
        hsv = cv2.cvtColor(crops.reshape(m * h, w, 3), cv2.COLOR_RGB2HSV).reshape(m, h * w, 3)
        hb, sb, vb = self.hsv_bins
        # OpenCV uint8 hue lies in [0, 180); saturation and value in [0, 256)
        hue = np.minimum(hsv[..., 0].astype(np.int64) * hb // 180, hb - 1)
        sat = hsv[..., 1].astype(np.int64) * sb // 256
        val = hsv[..., 2].astype(np.int64) * vb // 256
        code = (hue * sb + sat) * vb + val + np.arange(m)[:, None] * (hb * sb * vb)
        return np.bincount(code.ravel(), minlength=m * hb * sb * vb).reshape(m, -1).astype(np.float64)

    def __call__(self, image, boxes):
        """Features of windows of one image.

        Parameters
        ----------
        image : ndarray of uint8, shape (H, W, 3), RGB
        boxes : array-like, shape (m, 4), VOC pixel coordinates of ``image``

        Returns
        -------
        ndarray of float32, shape (m, n_features)
            Rows of unit norm, except 1/√2 for a flat window (no gradient, so a zero HOG part).
        """
        cv2 = import_cv2()
        image = read_image(image)
        boxes = as_boxes(boxes)
        small, scaled = _shrink(image, boxes, self.max_image_side)
        crops = crop_windows(small, scaled, (self.window_size, self.window_size))
        m = crops.shape[0]
        if m == 0:
            return np.zeros((0, self.n_features), dtype=np.float32)
        grey = cv2.cvtColor(crops.reshape(m * self.window_size, self.window_size, 3),
                            cv2.COLOR_RGB2GRAY).reshape(m, self.window_size, self.window_size)
        hogs = batch_hog(grey, self.orientations, self.pixels_per_cell, self.cells_per_block)
        colour = self.hsv_histograms(crops)
        features = np.hstack([_unit_rows(hogs), _unit_rows(colour)]) / np.sqrt(2.0)
        return features.astype(np.float32)


class CropFeatures:
    """Adapter: a function of a batch of resized window crops → a window feature extractor.

    Parameters
    ----------
    function : callable
        ``function(crops) -> (m, d)`` with ``crops`` uint8 RGB of shape (m, height, width, 3)
        (e.g. a CNN's preprocessing + forward pass). Must be picklable for parallel extraction.
    size : (int, int), default=(224, 224)
        ``(height, width)`` each window is resized to.
    batch_size : int, default=64
        Crops passed to ``function`` at a time.
    """

    def __init__(self, function, size=(224, 224), batch_size=64):
        if not callable(function):
            raise ValueError("function must be callable")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.function = function
        self.size = tuple(size)
        self.batch_size = batch_size

    def __repr__(self):
        return f"CropFeatures({self.function!r}, size={self.size}, batch_size={self.batch_size})"

    def __call__(self, image, boxes):
        """Features of windows of one image, shape (m, d)."""
        image = read_image(image)
        boxes = as_boxes(boxes)
        parts = []
        for start in range(0, boxes.shape[0], self.batch_size):
            crops = crop_windows(image, boxes[start : start + self.batch_size], self.size)
            parts.append(np.asarray(self.function(crops)))
        if not parts:
            raise ValueError("no windows: cannot infer the feature dimension")
        return np.concatenate(parts)


#: Names of the columns of :func:`window_geometry`.
GEOMETRY_COLUMNS = ("sqrt_area", "area", "log_aspect", "centre_x", "centre_y")


def window_geometry(boxes, height, width):
    """Geometry of windows relative to their image, 5 columns in about [-1, 1].

    Columns (:data:`GEOMETRY_COLUMNS`): √a and a, where a is the window's share of the image area
    (VOC inclusive pixels); log(width / height) of the window clipped to [-2, 2] and halved; the
    window centre's x and y as fractions of the image side, minus ½ (up to half a pixel: VOC
    inclusive coordinates). The whole image is about ``(1, 1, log(W/H)/2, 0, 0)``.

    Parameters
    ----------
    boxes : array-like, shape (m, 4)
        ``(x1, y1, x2, y2)`` in VOC pixel coordinates of a ``height × width`` image.
    height, width : int

    Returns
    -------
    ndarray of float64, shape (m, 5)
    """
    boxes = as_boxes(boxes)
    if height < 1 or width < 1:
        raise ValueError(f"image height and width must be >= 1, got {height} x {width}")
    bw = boxes[:, 2] - boxes[:, 0] + 1.0
    bh = boxes[:, 3] - boxes[:, 1] + 1.0
    area = bw * bh / (float(height) * float(width))
    return np.column_stack([
        np.sqrt(area), area, np.clip(np.log(bw / bh), -2.0, 2.0) / 2.0,
        (boxes[:, 0] + boxes[:, 2]) / (2.0 * width) - 0.5, (boxes[:, 1] + boxes[:, 3]) / (2.0 * height) - 0.5,
    ])


class WithGeometry:
    """A window feature extractor with the windows' relative geometry appended.

    φ(x, h) = [extractor(x, h), scale · window_geometry(h)]: lets a linear window scorer learn a
    preference for window size, shape and position (with appearance-only features, latent
    training in weak supervision tends to pick small discriminative patches).

    Parameters
    ----------
    extractor : callable
        ``extractor(image_rgb, boxes) -> (m, d)``, e.g. :class:`HogColorFeatures`.
    scale : float, default=3.0
        Weight of the geometry columns relative to the appearance features (the default
        extractor's rows have unit norm).
    """

    def __init__(self, extractor, scale=3.0):
        if not callable(extractor):
            raise ValueError("extractor must be callable")
        if isinstance(scale, bool) or not isinstance(scale, (int, float, np.integer, np.floating)) \
                or not np.isfinite(scale) or scale <= 0:
            raise ValueError(f"scale must be a positive finite number, got {scale!r}")
        self.extractor = extractor
        self.scale = float(scale)

    @property
    def n_features(self):
        """Length of the feature vector (None if the wrapped extractor does not say)."""
        inner = getattr(self.extractor, "n_features", None)
        return None if inner is None else inner + len(GEOMETRY_COLUMNS)

    def __repr__(self):
        return f"WithGeometry({self.extractor!r}, scale={self.scale!r})"

    def __call__(self, image, boxes):
        """Features of windows of one image, shape (m, d + 5), float32."""
        image = read_image(image)
        boxes = as_boxes(boxes)
        inner = np.asarray(self.extractor(image, boxes), dtype=np.float64)
        geometry = self.scale * window_geometry(boxes, image.shape[0], image.shape[1])
        return np.hstack([inner.reshape(boxes.shape[0], -1), geometry]).astype(np.float32)


def check_feature_block(features, n_windows, where):
    """Validate an extractor's output → float32 (n_windows, d); ValueError naming ``where``."""
    features = np.asarray(features)
    if features.ndim != 2 or features.shape[0] != n_windows:
        raise ValueError(f"{where}: extractor returned shape {features.shape} for {n_windows} windows")
    if not np.isfinite(features).all():
        raise ValueError(f"{where}: extractor returned non-finite features")
    return features.astype(np.float32, copy=False)


def _features_job(image, boxes, extractor, where, single_thread):
    if single_thread:
        limit_cv2_threads()
    return check_feature_block(extractor(read_image(image), boxes), len(boxes), where)


def feature_jobs(images, windows, extractor, n_jobs):
    """joblib jobs computing features image by image (shared by :func:`extract_features` and the store)."""
    single_thread = n_jobs not in (None, 1)
    return (
        delayed(_features_job)(image, as_boxes(boxes, f"windows[{i}]"), extractor,
                               f"image {i}", single_thread)
        for i, (image, boxes) in enumerate(zip(images, windows))
    )


def feature_blocks(images, windows, extractor, parallel, n_jobs):
    """``(index, features)`` of every image, image by image in ``parallel`` (a :class:`joblib.Parallel`).

    With one job, an extractor with an ``iter_features(images, windows)`` method yielding
    ``(index, features)`` (:class:`~ssvm.detection.CnnFeatures`: batched forward passes, a
    progress bar) is used through it instead.
    """
    iterate = getattr(extractor, "iter_features", None) if effective_n_jobs(n_jobs) == 1 else None
    if iterate is None:
        yield from enumerate(parallel(feature_jobs(images, windows, extractor, n_jobs)))
        return
    for i, block in iterate(images, windows):
        yield i, check_feature_block(block, len(as_boxes(windows[i])), f"image {i}")


def extract_features(images, windows, extractor=None, *, n_jobs=None, verbose=0):
    """Window features of many images, in parallel over images (in memory; see ``WindowStore``).

    Parameters
    ----------
    images : sequence of str, path-like or ndarray
    windows : sequence of array-like, shape (m_i, 4)
        Windows of each image, in its VOC pixel coordinates.
    extractor : callable, optional
        ``extractor(image_rgb, boxes) -> (m, d)``; default :class:`HogColorFeatures`. With one
        job, one with an ``iter_features`` method (:class:`~ssvm.detection.CnnFeatures`) runs
        through it.
    n_jobs : int, optional
        joblib worker count.
    verbose : int, default=0

    Returns
    -------
    list of ndarray of float32, shape (m_i, d)

    Raises
    ------
    ValueError
        If ``images`` and ``windows`` differ in length, or the extractor returns a wrong shape or
        non-finite values.
    """
    images, windows = list(images), list(windows)
    if len(images) != len(windows):
        raise ValueError(f"{len(images)} images but {len(windows)} window arrays")
    extractor = HogColorFeatures() if extractor is None else extractor
    result = [None] * len(images)
    with Parallel(n_jobs=n_jobs, verbose=verbose) as parallel:
        for i, block in feature_blocks(images, windows, extractor, parallel, n_jobs):
            result[i] = block
    return result
