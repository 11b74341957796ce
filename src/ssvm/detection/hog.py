"""Histograms of oriented gradients for a batch of equally sized grey images, vectorised in numpy.

Computes what ``skimage.feature.hog(image, orientations, pixels_per_cell, cells_per_block,
block_norm="L2-Hys")`` computes for each image — equal up to scikit-image's single-precision
accumulation of the cell histograms (differences ≈ 1e-7; the tests compare the two) — but for a
whole batch of window crops at once, in float64, faster than calling scikit-image per window and
without needing scikit-image.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["batch_hog", "hog_length"]

_EPS = 1e-5  # scikit-image's block-normalisation epsilon


def hog_length(height, width, orientations=9, pixels_per_cell=8, cells_per_block=2):
    """Length of the HOG vector of a ``height × width`` image (0 if no block fits).

    Parameters
    ----------
    height, width, orientations, pixels_per_cell, cells_per_block : int

    Returns
    -------
    int
    """
    blocks_row = max(0, height // pixels_per_cell - cells_per_block + 1)
    blocks_col = max(0, width // pixels_per_cell - cells_per_block + 1)
    return blocks_row * blocks_col * cells_per_block**2 * orientations


def batch_hog(images, orientations=9, pixels_per_cell=8, cells_per_block=2):
    """HOG descriptors (L2-Hys block normalisation) of a batch of grey images.

    Gradients are central differences (zero on the border rows/columns), orientations unsigned in
    [0°, 180°) with hard assignment to ``orientations`` equal bins, cells of
    ``pixels_per_cell × pixels_per_cell`` pixels (the mean gradient magnitude per bin; pixels beyond
    the last whole cell are ignored), blocks of ``cells_per_block²`` cells with stride one cell,
    each normalised by L2, clipped at 0.2 and normalised again — scikit-image's definition.

    Parameters
    ----------
    images : array-like, shape (m, height, width)
        Grey images (any real dtype; computed in float64).
    orientations : int, default=9
    pixels_per_cell : int, default=8
    cells_per_block : int, default=2

    Returns
    -------
    ndarray of float64, shape (m, hog_length(height, width, ...))
        In scikit-image's order (block row, block column, cell row, cell column, orientation).

    Raises
    ------
    ValueError
        If ``images`` is not 3-D, a parameter is not a positive integer, or no block fits.
    """
    images = np.asarray(images, dtype=np.float64)
    if images.ndim != 3:
        raise ValueError(f"images must have shape (m, height, width), got {images.shape}")
    for name, value in (("orientations", orientations), ("pixels_per_cell", pixels_per_cell),
                        ("cells_per_block", cells_per_block)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    m, height, width = images.shape
    cells_row, cells_col = height // pixels_per_cell, width // pixels_per_cell
    if cells_row < cells_per_block or cells_col < cells_per_block:
        raise ValueError(
            f"images of {height}×{width} hold no block of {cells_per_block}×{cells_per_block} cells "
            f"of {pixels_per_cell} pixels"
        )
    grad_row = np.zeros_like(images)
    grad_col = np.zeros_like(images)
    grad_row[:, 1:-1, :] = images[:, 2:, :] - images[:, :-2, :]
    grad_col[:, :, 1:-1] = images[:, :, 2:] - images[:, :, :-2]
    used = (slice(None), slice(0, cells_row * pixels_per_cell), slice(0, cells_col * pixels_per_cell))
    grad_row, grad_col = grad_row[used], grad_col[used]
    magnitude = np.hypot(grad_col, grad_row)
    orientation = np.rad2deg(np.arctan2(grad_row, grad_col)) % 180
    # bin i holds orientations in [w*i, w*(i+1)), with scikit-image's floating-point edges
    edges = (180.0 / orientations) * np.arange(orientations + 1)
    bins = np.searchsorted(edges, orientation, side="right") - 1
    inside = bins < orientations  # an orientation at or above the last edge falls in no bin
    rows = np.arange(cells_row * pixels_per_cell) // pixels_per_cell
    cols = np.arange(cells_col * pixels_per_cell) // pixels_per_cell
    cell = (rows[:, None] * cells_col + cols[None, :])[None, :, :]
    index = (np.arange(m)[:, None, None] * (cells_row * cells_col) + cell) * orientations + bins
    histogram = np.bincount(index[inside], weights=magnitude[inside],
                            minlength=m * cells_row * cells_col * orientations)
    histogram = histogram.reshape(m, cells_row, cells_col, orientations) / pixels_per_cell**2
    blocks = sliding_window_view(histogram, (cells_per_block, cells_per_block), axis=(1, 2))
    blocks = blocks.transpose(0, 1, 2, 4, 5, 3)  # (m, block row, block col, cell row, cell col, bin)
    axes = (3, 4, 5)
    out = blocks / np.sqrt(np.sum(blocks**2, axis=axes, keepdims=True) + _EPS**2)
    out = np.minimum(out, 0.2)
    out = out / np.sqrt(np.sum(out**2, axis=axes, keepdims=True) + _EPS**2)
    return out.reshape(m, -1)
