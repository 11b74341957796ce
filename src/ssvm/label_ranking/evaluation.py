"""Break-even precision, interactive labelling and the set-size threshold of a c-star model.

All functions take the model's unary scores ``S`` (n, L) and its pairwise terms as ``core`` and
``Fc`` (the rows ``core`` of the symmetric pairwise matrix), and run the exact inference of
:mod:`ssvm.label_ranking.inference`.
"""

import numpy as np

from .inference import star_inference

__all__ = ["break_even_precision", "choose_threshold", "interactive_bep"]


def break_even_precision(S, core, Fc, Y, fixed=None):
    """Per-sample precision at k = the sample's number of relevant labels, of the best joint set.

    Parameters
    ----------
    S : ndarray of float64, shape (n, L)
        Unary scores.
    core : ndarray of int64, shape (C,)
    Fc : ndarray of float64, shape (C, L)
    Y : ndarray of bool, shape (n, L)
        True labels; every row must have a relevant label.
    fixed : ndarray of int8, shape (n, L), optional
        Labels fixed in (1) or out (-1), e.g. revealed by a user.

    Returns
    -------
    ndarray of float64, shape (n,)
    """
    k = Y.sum(axis=1)
    T, _ = star_inference(S, core, Fc, k, fixed=fixed)
    return (T & Y).sum(axis=1) / k


def interactive_bep(S, core, Fc, Y, questions=(0, 1, 5, 10)):
    """Mean break-even precision after a number of questions to a user (Mensink et al., Table 1).

    Before each question, the best score with each unrevealed label forced into the top k and
    forced out of it is computed; the label with the smallest difference (the one the model is
    least sure about; ties to the lower index) is revealed from ``Y`` and fixed, and inference is
    re-run. ``k`` is each sample's number of relevant labels, as in break-even precision.

    Parameters
    ----------
    S : ndarray of float64, shape (n, L)
        Unary scores.
    core : ndarray of int64, shape (C,)
    Fc : ndarray of float64, shape (C, L)
    Y : ndarray of bool, shape (n, L)
        True labels (the user's answers). Rows without a relevant label are skipped.
    questions : sequence of int, default=(0, 1, 5, 10)
        Numbers of questions after which to report; beyond L every label is revealed.

    Returns
    -------
    ndarray of float64, shape (len(questions),)
        Mean break-even precision after each number of questions (revealed labels count as
        ranked correctly, since they are fixed to the truth).
    """
    questions = [int(q) for q in questions]
    if any(q < 0 for q in questions):
        raise ValueError(f"numbers of questions must be non-negative, got {questions}")
    keep = Y.any(axis=1)
    S, Y = S[keep], Y[keep]
    k = Y.sum(axis=1)
    fixed = np.zeros(Y.shape, dtype=np.int8)
    results = {}
    for asked in range(max(questions, default=0) + 1):
        if asked in questions:
            results[asked] = float(break_even_precision(S, core, Fc, Y, fixed).mean())
        if asked == max(questions):
            break
        _, _, vin, vout = star_inference(S, core, Fc, k, fixed=fixed, marginals=True)
        # a label whose other state is infeasible gets the largest finite gap, a revealed one inf
        gap = np.where(fixed != 0, np.inf, np.minimum(np.abs(vin - vout), np.finfo(float).max))
        open_rows = np.flatnonzero(np.any(fixed == 0, axis=1))
        label = np.argmin(gap[open_rows], axis=1)
        fixed[open_rows, label] = np.where(Y[open_rows, label], 1, -1)
    return np.array([results[q] for q in questions])


def _sample_f1(T, Y):
    """Per-sample F1 of predicted sets ``T`` against ``Y`` (1 when both are empty)."""
    inter = (T & Y).sum(axis=1)
    sizes = T.sum(axis=1) + Y.sum(axis=1)
    return np.where(sizes == 0, 1.0, 2.0 * inter / np.maximum(sizes, 1))


def choose_threshold(S, core, Fc, Y, max_candidates=100):
    """Threshold ``τ`` for predicting label sets of any size: the set maximising
    ``f(t) − τ·|t|``, with ``τ`` maximising the mean per-sample F1 on the given (training) data.

    Parameters
    ----------
    S : ndarray of float64, shape (n, L)
        Unary scores.
    core : ndarray of int64, shape (C,)
    Fc : ndarray of float64, shape (C, L)
    Y : ndarray of bool, shape (n, L)
    max_candidates : int, default=100
        Candidates are the midpoints between consecutive sorted scores, or, with more than
        ``max_candidates + 1`` scores, between consecutive quantiles at ``max_candidates + 1``
        equally spaced levels (so the candidates move continuously with the scores), plus one
        below and one above all scores.

    Returns
    -------
    tau : float
    f1 : float
        The mean per-sample F1 it reaches.
    """
    values = np.sort(S, axis=None)
    if values.size > max_candidates + 1:
        values = np.quantile(values, np.linspace(0.0, 1.0, max_candidates + 1))
    spread = max(float(values[-1] - values[0]), 1.0)
    candidates = np.concatenate([[values[0] - spread], (values[:-1] + values[1:]) / 2,
                                 [values[-1] + spread]])
    best_tau, best_f1 = float(candidates[0]), -1.0
    for tau in candidates:
        T, _ = star_inference(S - tau, core, Fc, -1)
        f1 = float(_sample_f1(T, Y).mean())
        if f1 > best_f1:
            best_tau, best_f1 = float(tau), f1
    return best_tau, best_f1
