"""Exact top-k inference for label ranking with c-star pairwise terms (Mensink et al. 2011, §4).

A sample's L labels get unary scores ``a_i`` and pairwise weights ``P_ij`` (symmetric, zero unless
``i`` or ``j`` is one of the C *core* labels: a c-star). The score of a label set ``t ∈ {0,1}^L`` is

    f(t) = Σ_i t_i a_i + Σ_{i<j} t_i t_j P_ij.

For a fixed in/out state of the core, the other labels do not interact: each non-core label ``j``
contributes ``a_j + Σ_{c in} P_cj`` if selected, so the best set of size k takes the best
``k − #core in`` of them (a selection, O(L)). Looping over the 2^C core states in Gray-code order
(one core label flips per step, so the adjusted scores are updated in O(L)) gives the exact
maximiser in O(2^C (L + C)). Loss-augmented inference for precision@k is the same problem with
``a_i = s_i + (1 − y_i)/k`` (the paper's observation), and the threshold problem "any size, each
selected label pays τ" is the same problem with ``a_i = s_i − τ`` and the size left free.

Labels can be *fixed* in or out (interactive labelling, imputation under constraints), and the
kernel can also return, for every label, the best score with the label in and with it out (its
max-marginals); their difference is the model's confidence in the label.

Ties are broken deterministically: among equally good non-core labels the lower index is selected,
and among equally good core states the first one in Gray-code order wins. The enumeration is
compiled (:mod:`._inference`); this module validates the input.
"""

import numpy as np

from ._inference import infer_batch

__all__ = ["MAX_CORE", "star_inference"]

#: Largest core: inference enumerates 2**n_core core states.
MAX_CORE = 20


def _check_inputs(A, core, Fc, k, fixed):
    """Validated arrays for `star_inference` (ValueError naming what is wrong)."""
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[1] == 0:
        raise ValueError(f"scores must have shape (n_samples, n_labels) with at least one label, "
                         f"got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError("scores contain NaN or infinity")
    n, L = A.shape
    core = np.asarray(core)
    if core.ndim != 1 or not (core.size == 0 or np.issubdtype(core.dtype, np.integer)):
        raise ValueError("core must be a 1-D array of label indices")
    core = core.astype(np.int64)
    if core.size > MAX_CORE:
        raise ValueError(f"a core of {core.size} labels is too large: inference enumerates "
                         f"2**n_core core states; use at most {MAX_CORE}")
    if core.size and (core.min() < 0 or core.max() >= L or np.unique(core).size != core.size):
        raise ValueError(f"core must hold distinct label indices in [0, {L})")
    Fc = np.asarray(Fc, dtype=np.float64)
    if Fc.shape != (core.size, L) or not np.all(np.isfinite(Fc)):
        raise ValueError(f"Fc must be a finite array of shape ({core.size}, {L})")
    block = Fc[:, core]
    if np.any(np.diag(block) != 0) or not np.array_equal(block, block.T):
        raise ValueError("the core-core block Fc[:, core] must be symmetric with a zero diagonal")
    ks = np.broadcast_to(np.asarray(k), (n,))
    if not np.issubdtype(ks.dtype, np.integer):
        raise ValueError(f"k must be an integer or an integer array, got {k!r}")
    if np.any(ks > L):
        raise ValueError(f"k={int(ks.max())} exceeds the number of labels ({L})")
    if fixed is None:
        fixed = np.zeros((n, L), dtype=np.int8)
    fixed = np.asarray(fixed)
    if fixed.shape != (n, L) or not np.all(np.isin(fixed, (-1, 0, 1))):
        raise ValueError(f"fixed must be an array of shape ({n}, {L}) holding -1, 0 or 1")
    return (np.ascontiguousarray(A), core,
            np.ascontiguousarray(Fc), ks.astype(np.int64), np.ascontiguousarray(fixed, np.int8))


def star_inference(A, core, Fc, k, *, fixed=None, marginals=False):
    """Best label set of each row of ``A`` under c-star pairwise terms.

    Parameters
    ----------
    A : ndarray of float64, shape (n, L)
        Unary scores per row (with any loss augmentation or threshold offset added).
    core : ndarray of int, shape (C,)
        Core labels (distinct, in ``[0, L)``, at most :data:`MAX_CORE`).
    Fc : ndarray of float64, shape (C, L)
        Rows ``core`` of the symmetric pairwise matrix ``P`` (so ``Fc[:, core]`` is symmetric
        with a zero diagonal). A set's score is ``Σ t_i A_i + Σ_{i<j} t_i t_j P_ij``.
    k : int or ndarray of int, shape (n,)
        Size of the set per row (at most L); a negative value means "any size" (labels with a
        positive context-adjusted score are taken).
    fixed : ndarray of int8, shape (n, L), optional
        0 free, 1 fixed in, -1 fixed out (default all free).
    marginals : bool, default=False
        Also return the best score with each label in and with it out.

    Returns
    -------
    T : ndarray of bool, shape (n, L)
        The best set of each row (all False where the constraints are infeasible).
    values : ndarray of float64, shape (n,)
        Its score (-inf where the constraints are infeasible).
    vin, vout : ndarray of float64, shape (n, L)
        Only with ``marginals``: best score with each label in / out (-inf if impossible).

    Raises
    ------
    ValueError
        For non-finite scores, no labels, ``k > L``, a core that is too large, out of range or
        repeated, a malformed ``Fc`` or ``fixed``.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[1.0, 0.5, 0.4]])
    >>> Fc = np.array([[0.0, 0.0, 1.0]])  # label 0 (the core) and label 2 go together
    >>> T, value = star_inference(A, [0], Fc, 2)
    >>> T.astype(int).tolist(), value.tolist()
    ([[1, 0, 1]], [2.4])
    """
    A, core, Fc, ks, states = _check_inputs(A, core, Fc, k, fixed)
    n, L = A.shape
    T = np.zeros((n, L), dtype=np.uint8)
    values = np.empty(n)
    shape = (n, L) if marginals else (n, 0)  # untouched without marginals
    VIN, VOUT = np.empty(shape), np.empty(shape)
    infer_batch(A, core, Fc, ks, states, T, values, VIN, VOUT, bool(marginals))
    if marginals:
        return T.astype(bool), values, VIN, VOUT
    return T.astype(bool), values
