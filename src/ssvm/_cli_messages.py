"""What ``ssvm train / predict / eval`` print on stderr: one line per error or warning, in the command line's words.

The library speaks Python (``zero_based=True``, ``gain='binary'``, a ``DegenerateQueriesWarning`` with its
filter recipe); :func:`cli_spelling` names the options instead, :func:`warning_lines` turns the warnings a
command raised into one line each, and :func:`skipped_queries` says which queries training skipped. Like
:mod:`ssvm.cli`, it imports numpy only when a command runs.
"""

__all__ = ["cli_spelling", "skipped_queries", "warning_lines"]

# the library's Python keywords and the command line's options that set them
_SPELLINGS = (
    ("pass zero_based=True or 'auto' for 0-based files", "pass --zero-based yes for a 0-based file"),
    ("zero_based=True", "--zero-based yes"),
    ("zero_based=False", "--zero-based no"),
    ("gain='binary'", "--gain binary"),
    ("gain='linear'", "--gain linear"),
    (" (e.g. np.rint(y).astype(int) after checking)", ""),
)
_LABELS = ("y has ", "y_true has ")  # the labels of the file, named as Python arguments


def cli_spelling(message):
    """``message`` (its first line) with the library's keyword arguments spelt as ``ssvm``'s options."""
    line = str(message).splitlines()[0] if str(message) else ""
    for python, option in _SPELLINGS:
        line = line.replace(python, option)
    for name in _LABELS:
        if line.startswith(name):
            line = "the labels have " + line[len(name):]
    return line


def skipped_queries(relevance, qid, graded):
    """Ids of the queries training skips: no relevant or no non-relevant row (``graded``: one grade only).

    Parameters
    ----------
    relevance, qid : ndarray of shape (n_samples,)
    graded : bool
        Whether the loss uses the grades (NDCG with graded gains) rather than ``relevance > 0``.

    Returns
    -------
    skipped : list
        The ids of the skipped queries, in order of first appearance.
    n_queries : int
    reason : str
    """
    import numpy as np

    from ssvm._queries import queries_from_qid

    labels = relevance if graded else (relevance > 0).astype(np.float64)
    queries = queries_from_qid(qid, relevance.shape[0])
    skipped = [qid[q[0]].item() for q in queries if labels[q].min() == labels[q].max()]
    reason = "all of one grade" if graded else "no relevant or no non-relevant document"
    return skipped, len(queries), reason


def warning_lines(command, caught, skipped=None, verbose=0):
    """One line for each distinct warning a command raised.

    Parameters
    ----------
    command : str
        ``"train"``, ``"predict"`` or ``"eval"``.
    caught : list of warnings.WarningMessage
    skipped : tuple of (list, int, str), optional
        :func:`skipped_queries`, which replaces the text of a ``DegenerateQueriesWarning``.
    verbose : int, default=0
        With ``verbose``, the skipped queries' ids are listed.

    Returns
    -------
    list of str
    """
    from ssvm.exceptions import DegenerateQueriesWarning

    lines = []
    for warning in caught:
        if issubclass(warning.category, DegenerateQueriesWarning) and skipped is not None:
            ids, n_queries, reason = skipped
            which = ": " + " ".join(map(str, ids)) if verbose else "; -v for which"
            line = f"ssvm {command}: skipped {len(ids)} of {n_queries} queries ({reason}){which}"
        else:
            line = f"ssvm {command}: warning: {cli_spelling(warning.message)}"
        if line not in lines:
            lines.append(line)
    return lines
