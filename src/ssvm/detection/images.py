"""Image loading and the lazy imports of the optional ``ssvm[detection]`` dependencies."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

__all__ = ["import_cv2", "limit_cv2_threads", "read_image", "as_rgb_image", "image_id_of"]

_INSTALL_HINT = 'install the detection extra: pip install "ssvm[detection]"'


def limit_cv2_threads():
    """Keep OpenCV to one thread inside a joblib worker (the workers already use every core).

    Does nothing when OpenCV is not installed: a job whose extractor needs no OpenCV (features
    of in-memory images, say) must not require the detection extra just for this.
    """
    try:
        import cv2
    except ImportError:
        return
    cv2.setNumThreads(1)


def import_cv2():
    """Import OpenCV with the contrib modules (``cv2.ximgproc``) or explain how to install it.

    Returns
    -------
    module

    Raises
    ------
    ImportError
        If OpenCV or its contrib module ``ximgproc`` is missing.
    """
    try:
        import cv2
    except ImportError as exc:
        raise ImportError(f"ssvm.detection needs OpenCV ({exc}); {_INSTALL_HINT}") from exc
    if not hasattr(cv2, "ximgproc"):
        raise ImportError(
            "ssvm.detection needs OpenCV's contrib modules (cv2.ximgproc); "
            f"the installed OpenCV {cv2.__version__} lacks them; {_INSTALL_HINT}"
        )
    return cv2


def as_rgb_image(image):
    """Validate an in-memory image → C-contiguous uint8 RGB array of shape (H, W, 3).

    Parameters
    ----------
    image : ndarray, shape (H, W) or (H, W, 3) or (H, W, 4)
        Greyscale is replicated to three channels; an alpha channel is dropped. Float images must
        lie in [0, 1]; integer images in [0, 255].

    Returns
    -------
    ndarray of uint8, shape (H, W, 3)

    Raises
    ------
    ValueError
        On a wrong shape, an empty image or out-of-range values.
    """
    image = np.asarray(image)
    if image.ndim == 2:
        image = np.repeat(image[:, :, None], 3, axis=2)
    if image.ndim != 3 or image.shape[2] not in (3, 4):
        raise ValueError(f"image must have shape (H, W), (H, W, 3) or (H, W, 4), got {image.shape}")
    image = image[:, :, :3]
    if image.shape[0] == 0 or image.shape[1] == 0:
        raise ValueError(f"image is empty: shape {image.shape}")
    if image.dtype == np.uint8:
        return np.ascontiguousarray(image)
    if np.issubdtype(image.dtype, np.floating):
        if not (np.isfinite(image).all() and image.min() >= 0 and image.max() <= 1):
            raise ValueError("a float image must have values in [0, 1]")
        return np.ascontiguousarray(np.round(image * 255).astype(np.uint8))
    if np.issubdtype(image.dtype, np.integer) or image.dtype == bool:
        if image.min() < 0 or image.max() > 255:
            raise ValueError("an integer image must have values in [0, 255]")
        return np.ascontiguousarray(image.astype(np.uint8))
    raise ValueError(f"unsupported image dtype {image.dtype}")


def read_image(image):
    """Read an image file as RGB, or validate an in-memory image.

    The EXIF orientation tag is ignored, so pixel coordinates are those of the stored array, which
    is what VOC-style annotation tools (and ``<size>`` in the XML) refer to.

    Parameters
    ----------
    image : str, path-like or ndarray
        A file path, or an array accepted by :func:`as_rgb_image`.

    Returns
    -------
    ndarray of uint8, shape (H, W, 3), RGB

    Raises
    ------
    ValueError
        If the file cannot be read as an image.
    """
    if isinstance(image, (str, os.PathLike)):
        cv2 = import_cv2()
        path = Path(image)
        bgr = cv2.imread(str(path), cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
        if bgr is None:
            raise ValueError(f"{path}: cannot read image (missing file or unknown format)")
        return np.ascontiguousarray(bgr[:, :, ::-1])
    return as_rgb_image(image)


def image_id_of(image, index):
    """Default id of an image: the file stem for a path, ``image-<index>`` for an array.

    Parameters
    ----------
    image : str, path-like or ndarray
    index : int

    Returns
    -------
    str
    """
    if isinstance(image, (str, os.PathLike)):
        return Path(image).stem
    return f"image-{index}"
