"""One line of an SVMlight / LETOR file parsed in Python: the reader's slow path and its messages.

The compiled reader (:mod:`ssvm.datasets._svmlight_reader`) parses the plainly well-formed lines
itself and hands every other line here, whole: :func:`parse_line` either raises the ``ValueError``
that names the file, the line and what is wrong, or returns the row (for the forms the compiled
parser leaves alone, such as ``1e-400``, ``+3:1`` or an index of 19 digits). A line is read as
Python reads text: UTF-8 (an invalid byte becomes U+FFFD), ``#`` starts a comment, tokens are
split at whitespace, and numbers are what ``float()`` / ``int()`` accept.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["line_error", "parse_line"]

_INT64_MAX = np.iinfo(np.int64).max


def line_error(path, lineno, message):
    """The ``ValueError`` ``"<path>, line <lineno>: <message>"``."""
    return ValueError(f"{path}, line {lineno}: {message}")


def _parse_label(token, path, lineno):
    try:
        label = float(token)
    except ValueError:
        raise line_error(path, lineno, f"label {token!r} is not a number") from None
    if not math.isfinite(label):
        raise line_error(path, lineno, f"label {token!r} is not finite")
    return label


def _parse_qid(token, path, lineno):
    text = token[4:]
    try:
        qid = int(text)
    except ValueError:
        raise line_error(path, lineno, f"query id {token!r} is not an integer") from None
    if qid < 0:
        raise line_error(path, lineno, f"query id {token!r} is negative")
    if qid > _INT64_MAX:
        raise line_error(path, lineno, f"query id {token!r} does not fit in 64 bits")
    return qid


def _locate_bad_feature(tokens, path, lineno, zero_based):
    """Slow path: find and report the first malformed ``index:value`` token."""
    for token in tokens:
        index_text, sep, value_text = token.partition(":")
        if not sep or ":" in value_text:
            raise line_error(path, lineno, f"bad token {token!r} (expected index:value)")
        if token.startswith("qid:"):
            raise line_error(path, lineno, f"'qid:' token {token!r} must come right after the label")
        try:
            index = int(index_text)
        except ValueError:
            raise line_error(path, lineno, f"bad feature index in token {token!r}") from None
        if index < (0 if zero_based else 1):
            raise line_error(
                path, lineno,
                f"feature index {index} in token {token!r} is out of range "
                f"(indices start at {0 if zero_based else 1}; pass zero_based=True or 'auto' for 0-based "
                "files)" if not zero_based else f"feature index {index} in token {token!r} is negative",
            )
        try:
            value = float(value_text)
        except ValueError:
            raise line_error(path, lineno, f"bad feature value in token {token!r}") from None
        if not math.isfinite(value):
            raise line_error(path, lineno, f"feature value in token {token!r} is not finite")
    for token in tokens:  # every token is well formed: an index too large for int64
        index = int(token.partition(":")[0])
        if index > _INT64_MAX:
            raise line_error(path, lineno, f"feature index {index} in token {token!r} does not fit in 64 bits")
    raise AssertionError("no malformed token found")  # pragma: no cover


def _parse_features(tokens, path, lineno, zero_based):
    """Parse ``index:value`` tokens of one line → (0-based column indices, values)."""
    pairs = [token.split(":") for token in tokens]
    try:
        if any(len(pair) != 2 for pair in pairs):
            raise ValueError
        indices = np.array([pair[0] for pair in pairs], dtype=np.int64)
        values = np.array([pair[1] for pair in pairs], dtype=np.float64)
    except (ValueError, OverflowError):
        _locate_bad_feature(tokens, path, lineno, zero_based)
    if not zero_based:
        indices -= 1
    if indices.size and (indices.min() < 0 or not np.isfinite(values).all()):
        _locate_bad_feature(tokens, path, lineno, zero_based)
    if indices.size > 1 and not (np.diff(indices) > 0).all():
        order = np.argsort(indices, kind="stable")
        indices, values = indices[order], values[order]
        duplicated = np.flatnonzero(np.diff(indices) == 0)
        if duplicated.size:
            index = indices[duplicated[0]] + (0 if zero_based else 1)
            raise line_error(path, lineno, f"feature index {index} appears more than once")
    return indices, values


def parse_line(raw, lineno, first_row_has_qid, *, path, zero_based):
    """Parse one line of a data file.

    Parameters
    ----------
    raw : bytes
        The line without its terminator.
    lineno : int
        Its number (from 1), for messages.
    first_row_has_qid : bool or None
        Whether the file's first data row has ``qid:`` (None: this is the first one); every
        row must agree with it.
    path : path-like
        The file, for messages.
    zero_based : bool
        False: index 1 is column 0 and index 0 is an error; True: indices are columns.

    Returns
    -------
    None or tuple
        None for a blank or comment-only line, else ``(label, qid, indices, values)``: ``qid``
        an int or None, ``indices`` int64 sorted and distinct, ``values`` float64.

    Raises
    ------
    ValueError
        Naming the file and line: a non-numeric or non-finite label or value, a bad
        ``index:value`` token, a bad or misplaced ``qid:``, a repeated index, an index out of
        range, an underscore or a non-ASCII character outside a comment, or a row whose
        ``qid:`` disagrees with the first row's.
    """
    body = raw.decode("utf-8", errors="replace").partition("#")[0]
    tokens = body.split()
    if not tokens:
        return None
    if "_" in body or not body.isascii():  # Python/numpy would read '1_0' or '١' as numbers
        token = next((t for t in tokens if "_" in t or not t.isascii()), None)
        if token is None:  # a non-ASCII space between the tokens
            character = next(c for c in body if not c.isascii())
            raise line_error(path, lineno, f"bad separator {character!r} (non-ASCII whitespace)")
        raise line_error(path, lineno, f"bad token {token!r} (underscore or non-ASCII character)")
    label = _parse_label(tokens[0], path, lineno)
    has_qid = len(tokens) > 1 and tokens[1].startswith("qid:")
    if first_row_has_qid is not None and has_qid != first_row_has_qid:
        raise line_error(
            path, lineno,
            "row has no 'qid:' but earlier rows do" if first_row_has_qid
            else "row has 'qid:' but earlier rows do not",
        )
    qid = _parse_qid(tokens[1], path, lineno) if has_qid else None
    indices, values = _parse_features(tokens[2:] if has_qid else tokens[1:], path, lineno, zero_based)
    return label, qid, indices, values
