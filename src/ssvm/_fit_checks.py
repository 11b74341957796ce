"""What ``ssvm train`` checks after a fit, before it writes a model: the solver converged and w ≠ 0.

A fit that stops at ``max_iter`` before its tolerance (the estimator's ``ConvergenceWarning``) or
whose weights are all zero (every row gets the same score: raw features of very different scales
at a large C can end there) must not become a model file silently. :func:`fit_reporting_convergence`
runs the fit and says whether it converged; :func:`fit_problem` turns the outcome into the one line
the command prints.
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

__all__ = ["fit_problem", "fit_reporting_convergence"]

# what to try when the solver did not converge or stopped at w = 0
_REMEDIES = "try --transform quantile (features on very different scales), a smaller -c or a larger --max-iter"


def fit_reporting_convergence(model, X, y, **fit_params):
    """Fit ``model`` and say whether it converged.

    Parameters
    ----------
    model : estimator or Pipeline
    X, y : array-like
    **fit_params
        Passed to ``model.fit``.

    Returns
    -------
    bool
        False when the fit warned that it did not converge (a ``ConvergenceWarning``, which is
        not shown: the caller reports it); the other warnings are shown as they would have been.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(X, y, **fit_params)
    converged = True
    for warning in caught:
        if issubclass(warning.category, ConvergenceWarning):
            converged = False
        else:
            warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
    return converged


def _relative_gap(history):
    """The last certified gap of the history, over the objective (None if none was measured)."""
    gaps = [record for record in history if record.get("gap") is not None]
    if not gaps:
        return None
    return gaps[-1]["gap"] / max(abs(gaps[-1]["primal"]), np.finfo(float).tiny)


def fit_problem(ranker, converged, tol):
    """What is wrong with a fitted ``RankSVM`` and what to try, in one line, or None when nothing is.

    Parameters
    ----------
    ranker : RankSVM
        Fitted (one ranking task).
    converged : bool
        From :func:`fit_reporting_convergence`.
    tol : float
        The tolerance it was fitted with.

    Returns
    -------
    str or None
    """
    zero = not np.any(ranker.coef_)
    if converged and not zero:
        return None
    gap = _relative_gap(ranker.history_)
    facts = (f"{ranker.n_iter_} iteration{'s' if ranker.n_iter_ != 1 else ''}, relative duality gap "
             + ("not measured" if gap is None else f"{max(gap, 0.0):.3g}") + f", --tol {tol:g}")
    if zero and converged:
        return (f"the fit converged to w = 0, every row scoring the same ({facts}): the features do not "
                "tell the rows of a query apart")
    if zero:
        return f"the solver stopped before converging, at w = 0: every row scores the same ({facts}); {_REMEDIES}"
    return f"the solver stopped at its iteration limit before converging ({facts}); {_REMEDIES}"
