"""Choice of the c-star's core labels by greedy joint mutual information (Mensink et al. 2011, §5).

In a c-star model every pairwise term touches a core label, so the non-core labels depend on each
other only through the core's joint in/out state. The core is therefore chosen to make that state
as informative as possible about the other labels: greedily, the label ``c`` that maximises

    Σ_{j ∉ S ∪ {c}} I(y_j ; y_{S ∪ {c}})

is added to the core ``S``, where ``y_S`` is the joint state of the labels in ``S`` (one of
2^|S| values) and ``I`` the mutual information of the empirical distribution of the training
labels (in nats). Ties go to the lower label index.
"""

import numpy as np

__all__ = ["mutual_information", "select_core"]


def _entropy(counts):
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def mutual_information(a, b):
    """Empirical mutual information (nats) of two discrete variables coded as non-negative ints.

    Parameters
    ----------
    a, b : ndarray of int, shape (n,)

    Returns
    -------
    float
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    _, a = np.unique(a, return_inverse=True)
    _, b = np.unique(b, return_inverse=True)
    n_b = int(b.max()) + 1
    joint = np.bincount(a * n_b + b)
    return _entropy(np.bincount(a)) + _entropy(np.bincount(b)) - _entropy(joint)


def select_core(Y, n_core):
    """Greedy joint-mutual-information choice of ``n_core`` core labels.

    Parameters
    ----------
    Y : ndarray of bool, shape (n_samples, n_labels)
        Training labels.
    n_core : int
        Number of core labels, ``0 <= n_core <= n_labels``.

    Returns
    -------
    core : ndarray of int64, shape (n_core,)
        Label indices in the order they were chosen.

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=bool)
    >>> select_core(Y, 1).tolist()  # label 0 tells everything about label 1
    [0]
    """
    Y = np.asarray(Y, dtype=bool)
    n, L = Y.shape
    if not 0 <= n_core <= L:
        raise ValueError(f"n_core must lie in [0, {L}] for {L} labels, got {n_core}")
    core = []
    code = np.zeros(n, dtype=np.int64)  # joint state of the current core
    for _ in range(n_core):
        scores = np.full(L, -np.inf)
        for c in range(L):
            if c in core:
                continue
            joint = 2 * code + Y[:, c]
            scores[c] = sum(mutual_information(Y[:, j], joint)
                            for j in range(L) if j != c and j not in core)
        c = int(np.flatnonzero(scores >= scores.max() - 1e-12)[0])  # rounding-proof ties
        core.append(c)
        code = 2 * code + Y[:, c]
    return np.array(core, dtype=np.int64)
