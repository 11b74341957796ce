"""Warnings raised by ssvm (import them to filter them or to turn them into errors).

The two warnings below say the same thing at every fit or score call, so ssvm shows each **once
per session** (:func:`warn_once`): within a grid search the folds' fits say it once, not once per
fold (once per worker process when the search runs in parallel). A filter with action
``"always"`` or ``"error"`` restores the usual behaviour, e.g.
``warnings.simplefilter("always", DegenerateQueriesWarning)`` to see it at every fit; every other
filter (``"ignore"``, ...) applies as usual.

Every warning ssvm raises points at the user's line (:func:`external_stacklevel`): the first
frame outside ssvm, scikit-learn and joblib, so a fit called through a ``Pipeline`` or
``GridSearchCV`` names the line that called them, not ``sklearn/base.py``.
"""

import os
import sys
import warnings

__all__ = ["DegenerateQueriesWarning", "MissingQidWarning", "ModelVersionWarning", "external_stacklevel", "warn_once"]

_SSVM_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class DegenerateQueriesWarning(UserWarning):
    """Training skipped queries that cannot be ranked (no relevant or no non-relevant row).

    Every ranking of such a query has the same loss, so it adds nothing to the objective. The
    fitted estimator's ``n_skipped_queries_`` gives the number skipped by that fit.
    """


class MissingQidWarning(UserWarning):
    """A model trained on queries (``qid`` / ``group``) was scored without ``qid``.

    ``score`` then ranks all rows as one query, which is not what the model was trained for
    (and, within ``GridSearchCV``, picks ``C`` on the wrong measure).
    """


class ModelVersionWarning(UserWarning):
    """A model file written by another version of ssvm was loaded (:func:`ssvm.load_model`).

    Every field passed this version's checks, so the model loads; but estimators can change
    between versions, so re-save it with this version (or retrain it) before relying on it.
    Shown at every load.
    """


_shown = set()


def external_stacklevel():
    """``stacklevel`` for :func:`warnings.warn` in the caller: the first frame outside ssvm, sklearn, joblib.

    Returns
    -------
    int
        1 if the function calling this is itself outside both packages.
    """
    internal = [_SSVM_DIR]
    for name in ("sklearn", "joblib"):  # not imported: none of their frames can be on the stack
        if getattr(sys.modules.get(name), "__file__", None):
            internal.append(os.path.dirname(os.path.abspath(sys.modules[name].__file__)) + os.sep)
    internal = tuple(internal)
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(internal):
        frame, level = frame.f_back, level + 1
    return level if frame is not None else 1


def warn_once(message, category):
    """:func:`warnings.warn`, but once per session unless a filter says ``"always"``/``"error"``.

    Python's own ``"once"`` does not do this: its record of what was shown is cleared by every
    ``warnings.catch_warnings`` block, and scikit-learn runs each fit of a search inside one.
    The warning points at the user's line (:func:`external_stacklevel`).

    Parameters
    ----------
    message : str
    category : type of Warning
    """
    key = (category, message)
    action = _action(category, message)
    if key in _shown and action not in ("always", "error"):
        return
    if action != "ignore":
        _shown.add(key)
    warnings.warn(message, category, stacklevel=external_stacklevel())


def _action(category, message):
    """Action of the first filter that matches any location (module- or line-specific ones are skipped)."""
    for action, text, filter_category, module, lineno in warnings.filters:
        if (module is None and lineno == 0 and issubclass(category, filter_category)
                and (text is None or text.match(message))):
            return action
    return warnings.defaultaction
