"""The direct-loss oracle (Song et al. 2016, eqs. 2–3): an :class:`~ssvm.losses.Oracle` whose
per-query answer is the direct-loss gradient ± (1/ε) [Ψ-coefficients(R_dir) − Ψ-coefficients(R_w)]
with Δ(R*, R_w) in place of ``delta``; :func:`ssvm.losses.direct_loss_gradient` runs it over queries.

* ``"positive"``: R_dir = argmax F + εΔ, the loss-augmented problem at scores s/ε, solved by the
  registry's oracle (QS for AP and NDCG, the 0-1 oracle);
* ``"negative"``: R_dir = argmax F − εΔ, Song et al.'s dynamic program for AP
  (:func:`~ssvm.losses.ap_direct_loss_inference`), a per-row rule for 0-1;
* ``"perceptron"``: R* in place of R_dir and no 1/ε (Song et al.'s "per-AP" / "per-01").

R_w is the output by score (ranking by (−score, index); for 0-1, positive iff score > 0). Which
loss has which direction, and the functions computing R_w and R_dir, come from the loss table.
"""

import numpy as np

from .oracle import Oracle
from .registry import DIRECTIONS, LOSS_NAMES, get_oracle, loss_entry

__all__ = ["direct_loss_oracle", "DIRECTIONS", "DIRECT_LOSSES"]

#: loss name -> directions direct_loss_gradient serves for it (from the loss table)
DIRECT_LOSSES = {name: loss_entry(name).directions for name in LOSS_NAMES if loss_entry(name).directions}


def direct_loss_oracle(loss="ap", epsilon=0.1, direction="positive", **loss_params):
    """The :class:`~ssvm.losses.Oracle` whose answer per query is the direct-loss gradient.

    Parameters
    ----------
    loss, epsilon, direction, **loss_params
        As in :func:`ssvm.losses.direct_loss_gradient`.

    Returns
    -------
    Oracle
        ``(c, delta)`` per query: ``c`` = ± (1/ε) (Ψ-coefficients(R_dir) − Ψ-coefficients(R_w))
        (Ψ(R_w) − Ψ(R*) for the perceptron), ``delta`` = Δ(R*, R_w); picklable.

    Raises
    ------
    ValueError
        On an unknown loss or direction, a loss without that direction, or ε that is not a finite
        number > 0.
    """
    entry = loss_entry(loss)
    if not entry.directions:
        raise ValueError(f"direct loss minimisation supports loss in {sorted(DIRECT_LOSSES)} or a QSLoss "
                         f"instance, got {loss!r}")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    if direction not in entry.directions:
        raise ValueError(f"loss {entry.name!r} has no {direction!r} direction (its loss-diminished inference is "
                         f"not implemented); use one of {entry.directions}")
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, (int, float, np.integer, np.floating)):
        raise ValueError(f"epsilon must be a number > 0, got {epsilon!r}")
    eps = float(epsilon)
    if not (np.isfinite(eps) and eps > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    augmented = get_oracle(loss, **loss_params)  # checks the parameters; graded NDCG for a graded gain
    inner = augmented if direction == "positive" else None
    params = {"by_score": entry.by_score, "arguments": entry.arguments(loss_params), "epsilon": eps,
              "direction": direction, "inner": inner, "diminished": entry.diminished}
    binary = None  # the direct loss of the binary oracle, for 0/1 grades (fit_targets)
    if augmented.binary is not None:
        binary = direct_loss_oracle(loss, epsilon, direction, **{**loss_params, "gain": "binary"})
    return Oracle(_direct_single, _direct_batch, params, name=f"direct-{direction}", gain=augmented.gain,
                  binary=binary)


def _direct_batch(scores, y, starts, ends, by_score, arguments, epsilon, direction, inner, diminished):
    """The direct-loss :class:`Oracle`'s batch form (see :func:`direct_loss_oracle`)."""
    c_w, delta_w = by_score(scores, y, starts, ends, **arguments)
    if direction == "perceptron":
        return c_w, delta_w
    if direction == "positive":
        with np.errstate(over="ignore"):
            scaled = scores / epsilon
        if not np.all(np.isfinite(scaled)):
            raise ValueError(f"scores / epsilon overflows (max |score| {np.max(np.abs(scores)):.3g}, "
                             f"epsilon {epsilon:.3g}); rescale the scores or raise epsilon")
        c_dir, _ = inner.batch(scaled, y, starts, ends)
        return (c_dir - c_w) / epsilon, delta_w
    c_dir, _ = diminished(scores, y, starts, ends, epsilon)
    return (c_w - c_dir) / epsilon, delta_w


def _direct_single(scores, y, **params):
    """The direct-loss :class:`Oracle` on one query."""
    c, delta = _direct_batch(scores, y, np.array([0]), np.array([scores.size]), **params)
    return c, float(delta[0])
