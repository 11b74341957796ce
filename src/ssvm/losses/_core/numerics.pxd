# Floating-point constants of the QS kernels, in one place.
#
# The fast paths of the QS oracle decide comparisons in rounded arithmetic and fall back to the exact scan
# whenever a value lies within a *margin* of a decision boundary; the margins below are well above the
# rounding error of the quantity they guard (see the function that uses each).  They only choose between a
# fast and an exact way to the same answer: raising one costs time, never exactness; lowering one below the
# rounding error breaks exactness (tests/losses/test_qs_thresholds.py plants that bug by hand: set
# THRESHOLD_MARGIN to 0 here and rebuild).  They are C constants (this verbatim block is compiled into every
# module that cimports them).

cdef extern from *:
    """
    /* machine epsilon of float64 (np.finfo(float).eps) */
    #define SSVM_EPS 2.220446049250313e-16
    /* added to a magnitude so that a margin derived from it is never 0 */
    #define SSVM_TINY 1e-300
    /* one-threshold bins (grid_bins.classify): |s - theta| <= THRESHOLD_MARGIN * EPS * (|sp| + |d / inv|) is near */
    #define SSVM_THRESHOLD_MARGIN 32.0
    /* thresholds from the upper hull of w steps (grid_bins.thresholds): HULL_MARGIN * EPS * (w + 1) * magnitude */
    #define SSVM_HULL_MARGIN 16.0
    /* every step of the certified walk (sort_walk.tolerance): STEP_MARGIN * EPS * (score part + loss bound) */
    #define SSVM_STEP_MARGIN 32.0
    /* rounding of the NDCG certificate's second difference of 1/log2, in units of EPS * 1/log2(k + j - 1) */
    #define SSVM_GROWTH_ROUNDING 8.0
    /* the score grid's bin width is no finer than 2^-GRID_BITS of the scores' magnitude (s * 2^-e stays exact) */
    #define SSVM_GRID_BITS 50
    /* the grid's exponent e is clamped to [-GRID_EXPONENT_LIMIT, GRID_EXPONENT_LIMIT] (2^e stays a normal double) */
    #define SSVM_GRID_EXPONENT_LIMIT 1000
    /* a packed key's score interval is used only when both ends lie in (KEY_NORMAL, KEY_HUGE) in magnitude (no
       -0.0 or subnormal end: slow arithmetic; no huge end: overflow); else the exact score is read */
    #define SSVM_KEY_NORMAL 1e-290
    #define SSVM_KEY_HUGE 1e300
    """
    const double EPS "SSVM_EPS"
    const double TINY "SSVM_TINY"
    const double THRESHOLD_MARGIN "SSVM_THRESHOLD_MARGIN"
    const double HULL_MARGIN "SSVM_HULL_MARGIN"
    const double STEP_MARGIN "SSVM_STEP_MARGIN"
    const double GROWTH_ROUNDING "SSVM_GROWTH_ROUNDING"
    const int GRID_BITS "SSVM_GRID_BITS"
    const int GRID_EXPONENT_LIMIT "SSVM_GRID_EXPONENT_LIMIT"
    const double KEY_NORMAL "SSVM_KEY_NORMAL"
    const double KEY_HUGE "SSVM_KEY_HUGE"
