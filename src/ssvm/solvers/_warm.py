"""The cutting plane's warm start at another C: its planes of ``H`` and its best point.

The structured hinge ``H(w)`` does not depend on ``C``: every plane ``H(w) ≥ b_k + a_k·w`` found
while solving for one ``C`` stays valid for all others, and so does ``H`` at the best point. A
solve at a new ``C`` can start from them (:class:`ssvm.RankSVMCV`'s warm path over C).
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["Bundle", "check_bundle"]


@dataclass
class Bundle:
    """Planes of ``H`` and, optionally, a point where ``H`` is known with its tight plane last.

    Attributes
    ----------
    b : ndarray of shape (K,)
    A : ndarray of shape (K, n_features)
        The planes ``H(w) ≥ b_k + A_k·w``.
    w : ndarray of shape (n_features,) or None
        A point where the oracles ran (the best one of the solve).
    H : float or None
        ``H(w)``; the last plane is the tight supporting plane of ``H`` at ``w``.
    """

    b: np.ndarray
    A: np.ndarray
    w: np.ndarray = None
    H: float = None


def check_bundle(planes, n_features, room):
    """``planes`` (a :class:`Bundle` or a pair ``(b, A)``) as a checked :class:`Bundle`, keeping its
    newest ``room`` planes (and its point only if its plane is kept)."""
    if isinstance(planes, Bundle):
        b, A, w, H = planes.b, planes.A, planes.w, planes.H
    else:
        try:
            b, A = planes
        except (TypeError, ValueError):
            raise ValueError("planes must be a Bundle or a pair (b, A) of arrays of shapes (K,) "
                             f"and (K, {n_features})") from None
        w = H = None
    b = np.asarray(b, dtype=np.float64)
    A = np.asarray(A, dtype=np.float64)
    if b.ndim != 1 or A.shape != (b.size, n_features):
        raise ValueError(f"planes (b, A) must have shapes (K,) and (K, {n_features}); got "
                         f"{b.shape} and {A.shape}")
    if not (np.all(np.isfinite(b)) and np.all(np.isfinite(A))):
        raise ValueError("planes contain NaN or infinity")
    if (w is None) != (H is None) or (w is not None and b.size == 0):
        raise ValueError("a Bundle's point needs w, H(w) and its plane (the last one) together")
    return Bundle(b[-room:], A[-room:], w, None if H is None else float(H))
