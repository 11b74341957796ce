"""Numerical check of the QS-suitability conditions (C2) and (C3) for a loss object.

(C2) Δ = Σ_j δ_j(rank of the j-th negative): δ_j is rebuilt from the loss's discrete derivative
with δ_j(P+1) = 0, and Σ_j δ_j(r_j) is compared with ``loss.value`` over ± patterns (all of them
when there are few, else a random sample), relative to the ground-truth pattern's value.
(C3) d_{j+1}(i) ≥ d_j(i) for all i, j.

Both read the derivative from :func:`derivative_matrix` (compiled, :mod:`._core.derivative`), bit for bit
as the oracles' kernels evaluate it.
"""

from dataclasses import dataclass, field
from math import comb

import numpy as np

from ._core.derivative import derivative_matrix
from .brute import rank_patterns
from .rank_losses import QSLoss

__all__ = ["QSCheckResult", "check_qs_suitable", "derivative_matrix"]


@dataclass
class QSCheckResult:
    """Outcome of :func:`check_qs_suitable`.

    Attributes
    ----------
    suitable : bool
        Both conditions hold (numerically).
    c2 : bool
        Additive decomposability over negatives matches ``loss.value``.
    c3 : bool
        j-monotonicity of the discrete derivative.
    counterexample : dict or None
        For the first failed condition: ``{"condition": "C3", "i": i, "j": j, "d_j(i)": ..,
        "d_j+1(i)": ..}`` or ``{"condition": "C2", "pattern": "+-+...", "sum_delta": ..,
        "value": ..}``.
    n_patterns : int
        Number of ± patterns compared for (C2).
    """

    suitable: bool
    c2: bool
    c3: bool
    counterexample: dict = field(default=None)
    n_patterns: int = 0

    def __bool__(self):
        return self.suitable


def _pattern_string(ranks, n_pos):
    out = []
    t = 0
    for r in range(1, n_pos + 2):
        while t < len(ranks) and ranks[t] == r:
            out.append("-")
            t += 1
        if r <= n_pos:
            out.append("+")
    return "".join(out)


def check_qs_suitable(loss, n_pos, n_neg, max_patterns=5000, tol=1e-9, random_state=0):
    """Check conditions (C2) and (C3) of a QS loss numerically on a query of size (P, N).

    Parameters
    ----------
    loss : QSLoss
        The loss object (``ssvm.losses.APLoss()``, ``NDCGLoss()``, or a user subclass).
    n_pos, n_neg : int
        Number of positives and negatives (≥ 1 each).
    max_patterns : int, default=5000
        All ± patterns are compared when there are at most this many, else a random sample.
    tol : float, default=1e-9
        Absolute tolerance of the comparisons.
    random_state : int or None, default=0
        Seed for sampling patterns.

    Returns
    -------
    QSCheckResult
        Truthy when both conditions hold; else carries a counter-example.

    Raises
    ------
    ValueError
        If ``loss`` is not a :class:`QSLoss` or the sizes are not positive integers.
    """
    if not isinstance(loss, QSLoss):
        raise ValueError(f"loss must be a QSLoss instance, got {type(loss).__name__}")
    if int(n_pos) != n_pos or int(n_neg) != n_neg or n_pos < 1 or n_neg < 1:
        raise ValueError(f"n_pos and n_neg must be integers >= 1, got {n_pos!r}, {n_neg!r}")
    n_pos, n_neg = int(n_pos), int(n_neg)
    kind, table = loss.kernel_spec(n_pos, n_neg)
    d = derivative_matrix(kind, np.asarray(table, dtype=np.float64), n_pos, n_neg)

    counter = None
    c3 = True
    if n_neg > 1:
        bad = d[1:] < d[:-1] - tol
        if bad.any():
            c3 = False
            j0, i0 = np.argwhere(bad)[0]
            counter = {"condition": "C3", "i": int(i0 + 1), "j": int(j0 + 1),
                       "d_j(i)": float(d[j0, i0]), "d_j+1(i)": float(d[j0 + 1, i0])}

    # delta[j-1, r-1] = δ_j(r) with δ_j(P+1) = 0
    delta = np.zeros((n_neg, n_pos + 1))
    delta[:, :n_pos] = -np.cumsum(d[:, ::-1], axis=1)[:, ::-1]
    if comb(n_pos + n_neg, n_pos) <= max_patterns:
        pos_at, neg_at = rank_patterns(n_pos, n_neg)
        ranks = 1 + (pos_at[:, :, None] < neg_at[:, None, :]).sum(axis=1)
    else:
        rng = np.random.default_rng(random_state)
        ranks = np.sort(rng.integers(1, n_pos + 2, size=(max_patterns, n_neg)), axis=1)
    counts = np.zeros((ranks.shape[0], n_pos + 1), dtype=np.int64)
    for r in range(1, n_pos + 2):
        counts[:, r - 1] = (ranks == r).sum(axis=1)
    truth = np.zeros((1, n_pos + 1), dtype=np.int64)
    truth[0, n_pos] = n_neg
    value = np.asarray(loss.value(counts), dtype=np.float64) - float(np.asarray(loss.value(truth)).ravel()[0])
    summed = delta[np.arange(n_neg)[None, :], ranks - 1].sum(axis=1)
    err = np.abs(summed - value)
    c2 = bool(np.all(err <= tol))
    if not c2 and counter is None:
        k = int(np.argmax(err))
        counter = {"condition": "C2", "pattern": _pattern_string(ranks[k], n_pos),
                   "sum_delta": float(summed[k]), "value": float(value[k])}
    return QSCheckResult(suitable=c2 and c3, c2=c2, c3=c3, counterexample=counter,
                         n_patterns=int(ranks.shape[0]))
