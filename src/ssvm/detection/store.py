"""On-disk store of window features: a memory-mapped float32 matrix plus a per-image index.

Layout of a store directory::

    meta.json      n_images, n_windows, n_features, image ids, extractor description
    offsets.npy    int64 (n_images + 1,): windows of image i are rows offsets[i]:offsets[i + 1]
    boxes.npy      float64 (n_windows, 4): the windows, VOC pixel coordinates of their image
    features.npy   float32 (n_windows, n_features): memory-mapped (np.lib.format.open_memmap)
    done.npy       bool (n_images,): which images' features are written (for resuming a build)

Thousands of images × thousands of windows × a few hundred dimensions (VOC 2007: 10 million
windows ≈ 16 GB) never need to be in memory: features are written image by image as the parallel
workers return them, and read back in chunks for scoring.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
from joblib import Parallel, effective_n_jobs

from .boxes import as_boxes
from .features import HogColorFeatures, feature_blocks, feature_jobs
from .images import image_id_of
from .windows import save_atomic

__all__ = ["WindowStore", "chunked_scores"]

logger = logging.getLogger(__name__)

_FILES = ("meta.json", "offsets.npy", "boxes.npy", "features.npy", "done.npy")



def chunked_scores(features, w, b=0.0, *, chunk_rows, dtype=np.float64):
    """``features @ w + b`` for a large (memory-mapped) 2-D array, reading ``chunk_rows`` rows at a time.

    Parameters
    ----------
    features : array-like of shape (n_rows, n_features)
        Anything with ``shape`` and row slicing: an array, a :class:`numpy.memmap`, a store's features.
    w : ndarray of shape (n_features,)
    b : float, default=0.0
    chunk_rows : int
        Rows read (and converted) at a time.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Arithmetic precision of each chunk's product.

    Returns
    -------
    ndarray of float64, shape (n_rows,)
    """
    n_rows = features.shape[0]
    w_cast = np.asarray(w).astype(dtype)
    scores = np.empty(n_rows, dtype=np.float64)
    for start in range(0, n_rows, chunk_rows):
        stop = min(start + chunk_rows, n_rows)
        scores[start:stop] = np.asarray(features[start:stop], dtype=dtype) @ w_cast
    scores += b
    return scores

class WindowStore:
    """Window features of many images in a memory-mapped array on disk.

    Create with :meth:`build`, reopen with :meth:`open`.

    Attributes
    ----------
    path : Path
    image_ids : list of str
    offsets : ndarray of int64, shape (n_images + 1,)
    boxes : ndarray of float64, shape (n_windows, 4)
    features : numpy.memmap of float32, shape (n_windows, n_features)
    """

    def __init__(self, path, meta, offsets, boxes, features, done):
        self.path = Path(path)
        self.meta = meta
        self.image_ids = list(meta["image_ids"])
        self.offsets = offsets
        self.boxes = boxes
        self.features = features
        self._done = done

    # ------------------------------------------------------------------ construction
    @classmethod
    def build(cls, path, images, windows, extractor=None, *, image_ids=None, n_jobs=None,
              resume=True, batch_images=None, verbose=0):
        """Compute window features of many images into a store on disk.

        Parameters
        ----------
        path : str or path-like
            Store directory (created).
        images : sequence of str, path-like or ndarray
        windows : sequence of array-like, shape (m_i, 4), m_i >= 1
            Windows of each image (e.g. from ``selective_search_many``).
        extractor : callable, optional
            ``extractor(image_rgb, boxes) -> (m, d)``; default :class:`HogColorFeatures`. With one
            job, one with an ``iter_features`` method (:class:`~ssvm.detection.CnnFeatures`) runs
            through it.
        image_ids : sequence of str, optional
            Default: file stems (``image-<i>`` for arrays).
        n_jobs : int, optional
            joblib workers computing features image by image; the main process writes them.
        resume : bool, default=True
            If the directory holds a store for the same image ids, windows and extractor, images
            already written are skipped (an interrupted build continues). Otherwise — and always
            with ``resume=False`` — the store is rebuilt from scratch. The extractor is identified
            by its ``repr``: give a custom extractor a stable ``__repr__`` (one naming its
            parameters, not a memory address) for resuming to apply.
        batch_images : int, optional
            Images per parallel batch between progress flushes (default ``max(8, 4 * workers)``).
        verbose : int, default=0
            joblib verbosity.

        Returns
        -------
        WindowStore
            Opened read-only.

        Raises
        ------
        ValueError
            On mismatched lengths, an image without windows, repeated ids, or extractor output of
            the wrong shape.
        """
        path = Path(path)
        images, windows = list(images), [as_boxes(w, f"windows[{i}]") for i, w in enumerate(windows)]
        if len(images) != len(windows):
            raise ValueError(f"{len(images)} images but {len(windows)} window arrays")
        if not images:
            raise ValueError("no images")
        empty = [i for i, w in enumerate(windows) if w.shape[0] == 0]
        if empty:
            raise ValueError(f"image {empty[0]} has no windows")
        if image_ids is None:
            image_ids = [image_id_of(image, i) for i, image in enumerate(images)]
        image_ids = [str(i) for i in image_ids]
        if len(image_ids) != len(images) or len(set(image_ids)) != len(images):
            raise ValueError("image_ids must be unique, one per image")
        extractor = HogColorFeatures() if extractor is None else extractor
        offsets = np.zeros(len(images) + 1, dtype=np.int64)
        np.cumsum([w.shape[0] for w in windows], out=offsets[1:])
        boxes = np.concatenate(windows)

        store = cls._reusable(path, image_ids, offsets, boxes, repr(extractor)) if resume else None
        if store is None:
            store = cls._create(path, images[0], windows[0], extractor, image_ids, offsets, boxes)
        todo = np.flatnonzero(~store._done)
        if todo.size < len(images):
            logger.info("%s: resuming, %d of %d images already done", path, len(images) - todo.size,
                        len(images))
        batch = batch_images or max(8, 4 * effective_n_jobs(n_jobs))
        with Parallel(n_jobs=n_jobs, verbose=verbose) as parallel:
            for start in range(0, todo.size, batch):
                part = todo[start : start + batch]
                for k, block in feature_blocks([images[i] for i in part], [windows[i] for i in part],
                                               extractor, parallel, n_jobs):
                    store._write(part[k], block)
                store._flush()
        return cls.open(path)

    @classmethod
    def _reusable(cls, path, image_ids, offsets, boxes, extractor_repr):
        if not all((path / name).exists() for name in _FILES):
            return None
        try:
            store = cls.open(path, mode="r+")
        except (ValueError, OSError, EOFError):  # a damaged store is rebuilt
            return None
        same = (store.image_ids == image_ids and store.meta.get("extractor") == extractor_repr
                and np.array_equal(store.offsets, offsets) and np.array_equal(store.boxes, boxes))
        if not same:
            logger.info("%s: existing store differs (images, windows or extractor); rebuilding", path)
            return None
        return store

    @classmethod
    def _create(cls, path, first_image, first_windows, extractor, image_ids, offsets, boxes):
        path.mkdir(parents=True, exist_ok=True)
        for name in _FILES:
            (path / name).unlink(missing_ok=True)
        n_features = getattr(extractor, "n_features", None)
        first_block = None
        if n_features is None:  # probe the extractor on the first image
            first_block = next(iter(Parallel(n_jobs=1)(
                feature_jobs([first_image], [first_windows], extractor, None))))
            n_features = first_block.shape[1]
        n_windows = int(offsets[-1])
        np.save(path / "offsets.npy", offsets)
        np.save(path / "boxes.npy", boxes)
        features = np.lib.format.open_memmap(path / "features.npy", mode="w+", dtype=np.float32,
                                             shape=(n_windows, int(n_features)))
        done = np.zeros(len(image_ids), dtype=bool)
        meta = {"n_images": len(image_ids), "n_windows": n_windows, "n_features": int(n_features),
                "image_ids": image_ids, "extractor": repr(extractor)}
        store = cls(path, meta, offsets, boxes, features, done)
        if first_block is not None:
            store._write(0, first_block)
        store._flush()
        # meta.json last: its presence marks a complete, consistent layout
        (path / "meta.json").write_text(json.dumps(meta))
        return store

    def _write(self, i, block):
        rows = self.image_slice(i)
        if block.shape != (rows.stop - rows.start, self.n_features):
            raise ValueError(
                f"image {i} ({self.image_ids[i]}): features of shape {block.shape}, expected "
                f"({rows.stop - rows.start}, {self.n_features})"
            )
        self.features[rows] = block
        self._done[i] = True

    def _flush(self):
        self.features.flush()
        save_atomic(self.path / "done.npy", self._done)

    @classmethod
    def open(cls, path, mode="r"):
        """Open an existing store.

        Parameters
        ----------
        path : str or path-like
        mode : {"r", "r+"}, default="r"
            Memory-map mode of the features.

        Returns
        -------
        WindowStore

        Raises
        ------
        ValueError
            If files are missing or inconsistent.
        """
        path = Path(path)
        missing = [name for name in _FILES if not (path / name).exists()]
        if missing:
            raise ValueError(f"{path}: not a window store (missing {', '.join(missing)})")
        meta = json.loads((path / "meta.json").read_text())
        offsets = np.load(path / "offsets.npy")
        boxes = np.load(path / "boxes.npy")
        done = np.load(path / "done.npy")
        features = np.load(path / "features.npy", mmap_mode=mode)
        n_images, n_windows = meta["n_images"], meta["n_windows"]
        if (offsets.shape != (n_images + 1,) or offsets[-1] != n_windows
                or boxes.shape != (n_windows, 4) or done.shape != (n_images,)
                or features.shape != (n_windows, meta["n_features"])):
            raise ValueError(f"{path}: window store files are inconsistent")
        return cls(path, meta, offsets, boxes, features, done)

    # ------------------------------------------------------------------ access
    @property
    def n_images(self):
        """Number of images."""
        return len(self.image_ids)

    @property
    def n_windows(self):
        """Total number of windows."""
        return int(self.offsets[-1])

    @property
    def n_features(self):
        """Feature dimension."""
        return int(self.features.shape[1])

    @property
    def complete(self):
        """Whether every image's features are written."""
        return bool(self._done.all())

    def __len__(self):
        return self.n_images

    def __repr__(self):
        return (f"WindowStore({str(self.path)!r}: {self.n_images} images, {self.n_windows} windows, "
                f"{self.n_features} features)")

    def _check_image(self, i):
        if not -self.n_images <= i < self.n_images:
            raise IndexError(f"image index {i} out of range for {self.n_images} images")
        return i % self.n_images

    def image_slice(self, i):
        """Rows of image ``i`` in ``features`` / ``boxes``, as a slice."""
        i = self._check_image(i)
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    def image_boxes(self, i):
        """Windows of image ``i``, shape (m_i, 4); row 0 is its first window (the whole image)."""
        return self.boxes[self.image_slice(i)]

    def image_features(self, i):
        """Features of image ``i``'s windows, (m_i, n_features) float32 (a view of the memmap)."""
        return self.features[self.image_slice(i)]

    def window_image(self):
        """Image index of every window, shape (n_windows,)."""
        return np.repeat(np.arange(self.n_images), np.diff(self.offsets))

    def score(self, w, b=0.0, *, chunk_size=16384, dtype=np.float64):
        """Linear scores ``features @ w + b`` of all windows, computed chunk by chunk.

        Parameters
        ----------
        w : array-like, shape (n_features,)
        b : float, default=0.0
        chunk_size : int, default=16384
            Rows read from disk at a time (16384 × 400 float32 ≈ 26 MB).
        dtype : {numpy.float64, numpy.float32}, default=numpy.float64
            Arithmetic precision. float64 (each chunk converted, then a BLAS product) is exact up
            to float64 rounding, so equal features give equal scores and argmaxes are stable;
            float32 skips the conversion and is several times faster on very large stores.

        Returns
        -------
        ndarray of float64, shape (n_windows,)

        Raises
        ------
        ValueError
            On a wrong ``w`` shape, a bad chunk size, or a store whose build is incomplete.
        """
        dtype = np.dtype(dtype)
        if dtype not in (np.float64, np.float32):
            raise ValueError(f"dtype must be float64 or float32, got {dtype}")
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError(f"w must have shape ({self.n_features},), got {w.shape}")
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
        if not self.complete:
            raise ValueError(f"{self.path}: features of {int((~self._done).sum())} images are missing; "
                             "finish the build first")
        if not np.isfinite(w).all():
            raise ValueError("w contains non-finite values")
        return chunked_scores(self.features, w, b, chunk_rows=chunk_size, dtype=dtype)

    def best_windows(self, scores):
        """Best window of every image under given window scores.

        Parameters
        ----------
        scores : array-like, shape (n_windows,)
            E.g. from :meth:`score`.

        Returns
        -------
        best_score : ndarray of float64, shape (n_images,)
        best_index : ndarray of int64, shape (n_images,)
            Global row index of each image's best window (the first one among equal scores).
        """
        scores = np.asarray(scores, dtype=np.float64)
        if scores.shape != (self.n_windows,):
            raise ValueError(f"scores must have shape ({self.n_windows},), got {scores.shape}")
        starts = self.offsets[:-1]
        best_score = np.maximum.reduceat(scores, starts)
        is_best = scores == np.repeat(best_score, np.diff(self.offsets))
        rows = np.flatnonzero(is_best)
        image_of_row = self.window_image()[rows]
        first = np.r_[True, image_of_row[1:] != image_of_row[:-1]]
        best_index = rows[first]
        return best_score, best_index.astype(np.int64)
