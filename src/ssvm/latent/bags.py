"""Bags of windows: the windows of many images stacked in one 2-D array, read in chunks."""

import hashlib

import numpy as np

from ssvm._fitting import is_dask_array
from ssvm.detection.store import chunked_scores
from ssvm.problem import matvec

__all__ = ["Bags", "as_bags", "image_labels"]


class Bags:
    """Windows of many images stacked in one 2-D array; image i owns rows ``offsets[i]:offsets[i+1]``.

    ``features`` may be an in-memory array, a :class:`numpy.memmap` or any object with ``shape`` and
    row slicing (for example :class:`ssvm.detection.WindowStore`'s feature array); it is only ever
    read in chunks of ``chunk_rows`` rows.

    Parameters
    ----------
    features : array-like of shape (n_windows, n_features)
    offsets : ndarray of int64, shape (n_images + 1,)
    chunk_rows : int
    """

    def __init__(self, features, offsets, chunk_rows):
        self.features = features
        self.offsets = offsets
        self.chunk_rows = chunk_rows

    @property
    def n_images(self):
        """Number of images (bags)."""
        return self.offsets.shape[0] - 1

    @property
    def n_windows(self):
        """Number of windows of all images."""
        return int(self.offsets[-1])

    @property
    def n_features(self):
        """Window feature length."""
        return int(self.features.shape[1])

    def rows(self, index):
        """Rows ``index`` (sorted or not) as a float64 array, read in chunks."""
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
        """Scores of the rows ``index`` (ascending), read ``chunk_rows`` at a time.

        Raises ValueError on a non-finite score (which a NaN or infinite feature always gives).
        """
        out = np.empty(index.size)
        for start in range(0, index.size, self.chunk_rows):
            part = index[start:start + self.chunk_rows]
            out[start:start + part.size] = np.asarray(self.features[part], dtype=np.float64) @ coef
        out += intercept
        return _finite(out)

    def scores(self, coef, intercept):
        """Score of every window, computed in chunks of rows, or block by block for a dask
        array (ValueError if one is not finite)."""
        if is_dask_array(self.features):
            return _finite(matvec(self.features, coef) + intercept)
        return _finite(chunked_scores(self.features, coef, intercept, chunk_rows=self.chunk_rows))

    def means(self):
        """Mean window feature of every image."""
        sums = np.zeros((self.n_images, self.n_features))
        owner = np.repeat(np.arange(self.n_images), np.diff(self.offsets))
        for start in range(0, self.n_windows, self.chunk_rows):
            stop = min(start + self.chunk_rows, self.n_windows)
            block = np.asarray(self.features[start:stop], dtype=np.float64)
            owners = owner[start:stop]
            first = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])  # an image's first row
            sums[owners[first]] += np.add.reduceat(block, first, axis=0)
        return sums / np.diff(self.offsets)[:, None]

    def fingerprint(self):
        """Cheap content hash (offsets and a strided sample of rows) to match checkpoints to data."""
        digest = hashlib.sha1()
        digest.update(np.ascontiguousarray(self.offsets, dtype=np.int64).tobytes())
        digest.update(str(self.n_features).encode())
        sample = np.unique(np.linspace(0, self.n_windows - 1,
                                       num=min(64, self.n_windows)).astype(np.int64))
        digest.update(np.ascontiguousarray(self.rows(sample)).tobytes())
        return digest.hexdigest()


def _finite(scores):
    if not np.all(np.isfinite(scores)):
        raise ValueError("window features contain NaN or infinite values (non-finite scores)")
    return scores


def as_bags(bags, offsets, chunk_rows, n_features=None):
    """Validate ``bags`` (a list of (m_i, d) arrays, or a 2-D window array plus ``offsets``).

    Parameters
    ----------
    bags : list of array-like, 2-D array-like, or an object with ``features`` and ``offsets``
    offsets : array-like of int or None
    chunk_rows : int
    n_features : int, optional
        Required feature count (a fitted model's).

    Returns
    -------
    Bags

    Raises
    ------
    ValueError
        On malformed offsets, empty or ragged bags, non-finite features in a list of bags, or
        the wrong number of features.
    """
    if offsets is None and hasattr(bags, "offsets") and hasattr(bags, "features"):
        offsets, bags = bags.offsets, bags.features  # a WindowStore-like container
    if offsets is not None:
        features, offsets = bags, _check_offsets(offsets, getattr(bags, "shape", None))
    else:
        features, offsets = _stack(bags)
    if n_features is not None and features.shape[1] != n_features:
        raise ValueError(f"window features have {features.shape[1]} columns, the model was "
                         f"fitted with {n_features}")
    return Bags(features, offsets, chunk_rows)


def _check_offsets(offsets, shape):
    offsets = np.asarray(offsets)
    if offsets.ndim != 1 or offsets.size < 2 or not np.issubdtype(offsets.dtype, np.integer):
        raise ValueError("offsets must be a 1-D integer array of length n_images + 1")
    offsets = offsets.astype(np.int64)
    if offsets[0] != 0 or np.any(np.diff(offsets) < 1):
        raise ValueError("offsets must start at 0 and increase strictly (every image needs >= 1 "
                         "window)")
    if shape is None or len(shape) != 2:
        raise ValueError("with offsets, bags must be a 2-D array of window features "
                         "(n_windows, d)")
    if shape[0] != offsets[-1]:
        raise ValueError(f"offsets[-1] = {offsets[-1]} but the window array has {shape[0]} rows")
    return offsets


def _stack(bags):
    if isinstance(bags, np.ndarray) or not hasattr(bags, "__len__") or len(bags) == 0:
        raise ValueError("bags must be a non-empty list of (m_i, d) window-feature arrays "
                         "(or a 2-D window array together with offsets)")
    arrays = []
    for i, bag in enumerate(bags):
        bag = np.asarray(bag, dtype=np.float64)
        if bag.ndim != 2 or bag.shape[0] < 1:
            raise ValueError(f"bag {i} must be a 2-D array with at least one window, got shape "
                             f"{bag.shape}")
        if not np.all(np.isfinite(bag)):
            raise ValueError(f"bag {i} contains NaN or infinite window features")
        arrays.append(bag)
    widths = {bag.shape[1] for bag in arrays}
    if len(widths) != 1:
        raise ValueError(f"all bags must have the same number of features, got {sorted(widths)}")
    offsets = np.concatenate(([0], np.cumsum([bag.shape[0] for bag in arrays]))).astype(np.int64)
    return np.concatenate(arrays, axis=0), offsets


def image_labels(y, n_images):
    """Boolean positives and the two class labels (negative, positive) of image-level ``y``.

    Parameters
    ----------
    y : array-like of shape (n_images,)
        Two classes; the larger one (or True) is the positive class.
    n_images : int

    Returns
    -------
    positive : ndarray of bool, shape (n_images,)
    classes : ndarray of shape (2,)

    Raises
    ------
    ValueError
        If ``y`` has the wrong shape or not exactly two classes.
    """
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_images:
        raise ValueError(f"y must hold one label per image ({n_images}), got shape {y.shape}")
    values = np.unique(y)
    if values.size != 2:
        raise ValueError("y must contain exactly two classes (positive and negative images), got "
                         f"{values.tolist()}")
    if y.dtype == bool:
        return y.copy(), np.array([False, True])
    # the larger label is the positive class (1 vs 0, 1 vs -1, or sorted class labels)
    return y == values[1], values
