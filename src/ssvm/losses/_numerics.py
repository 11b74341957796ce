"""Floating-point constants of the rank-loss kernels, in one place.

The fast paths of the QS oracle decide comparisons in rounded arithmetic and fall back to the exact
scan whenever a value lies within a *margin* of a decision boundary; the margins below are well above
the rounding error of the quantity they guard (see the function that uses each).  They only choose
between a fast and an exact way to the same answer: raising one costs time, never exactness;
lowering one below the rounding error breaks exactness (a test plants that bug).

numba freezes module-level floats as compile-time constants, so the kernels see the same literals
as before these names existed (bit for bit the same results).
"""

__all__ = ["EPS", "TINY", "THRESHOLD_MARGIN", "HULL_MARGIN", "STEP_MARGIN", "GROWTH_ROUNDING", "GRID_BITS",
           "GRID_EXPONENT_LIMIT", "KEY_NORMAL", "KEY_HUGE"]

#: machine epsilon of float64 (``np.finfo(float).eps``)
EPS = 2.220446049250313e-16
#: added to a magnitude so that a margin derived from it is never 0
TINY = 1e-300
#: one-threshold bins (``_qs_bins.classify``): |s − θ| ≤ THRESHOLD_MARGIN · EPS · (|sp| + |d / inv|) is "near"
THRESHOLD_MARGIN = 32.0
#: thresholds from the upper hull of w steps (``_qs_bins.thresholds``): HULL_MARGIN · EPS · (w + 1) · magnitude
HULL_MARGIN = 16.0
#: every step of the certified walk (``_qs_walk.tolerance``): STEP_MARGIN · EPS · (score part + loss bound)
STEP_MARGIN = 32.0
#: rounding of the NDCG certificate's second difference of 1/log2, in units of EPS · 1/log2(k + j − 1)
GROWTH_ROUNDING = 8.0
#: the score grid's bin width is no finer than 2^−GRID_BITS of the scores' magnitude (s · 2^−e stays exact)
GRID_BITS = 50
#: the grid's exponent e is clamped to [−GRID_EXPONENT_LIMIT, GRID_EXPONENT_LIMIT] (2^e stays a normal double)
GRID_EXPONENT_LIMIT = 1000
#: a packed key's score interval is used only when both ends lie in (KEY_NORMAL, KEY_HUGE) in magnitude
#: (no −0.0 or subnormal end: slow arithmetic; no huge end: overflow); else the exact score is read
KEY_NORMAL = 1e-290
KEY_HUGE = 1e300
