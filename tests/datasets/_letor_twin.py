"""The slow twin of ssvm's LETOR reader: the pure-Python reader as it was before the compiled one.

Copied unchanged from ``ssvm/datasets/letor.py`` at commit f66b4ed (only ``load_letor``'s
docstring wrapper is left out): one line at a time, ``str.split`` and ``float()``, one numpy array
per line. ``tests/datasets/test_letor_twin.py`` reads random files with both and asks for the same
arrays, bit for bit, or the same error message.
"""

from __future__ import annotations

import gzip
import logging
import math
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = ["_read_letor"]

logger = logging.getLogger(__name__)


def _open_text(path):
    """Open a text file for reading, decompressing it on the fly when its name ends in ``.gz``."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig", errors="replace")
    return open(path, encoding="utf-8-sig", errors="replace")


def _default_query_path(path):
    """``<path>.query``, or for ``<name>.gz`` also ``<name>.query``; None when neither exists."""
    candidates = [Path(os.fspath(path) + ".query")]
    if path.suffix == ".gz":
        candidates.append(path.with_suffix(".query"))
    return next((candidate for candidate in candidates if candidate.exists()), None)


def _error(path, lineno, message):
    return ValueError(f"{path}, line {lineno}: {message}")


def _parse_label(token, path, lineno):
    try:
        label = float(token)
    except ValueError:
        raise _error(path, lineno, f"label {token!r} is not a number") from None
    if not math.isfinite(label):
        raise _error(path, lineno, f"label {token!r} is not finite")
    return label


def _parse_qid(token, path, lineno):
    text = token[4:]
    try:
        qid = int(text)
    except ValueError:
        raise _error(path, lineno, f"query id {token!r} is not an integer") from None
    if qid < 0:
        raise _error(path, lineno, f"query id {token!r} is negative")
    return qid


def _locate_bad_feature(tokens, path, lineno, zero_based):
    """Slow path: find and report the first malformed ``index:value`` token."""
    for token in tokens:
        index_text, sep, value_text = token.partition(":")
        if not sep or ":" in value_text:
            raise _error(path, lineno, f"bad token {token!r} (expected index:value)")
        if token.startswith("qid:"):
            raise _error(path, lineno, f"'qid:' token {token!r} must come right after the label")
        try:
            index = int(index_text)
        except ValueError:
            raise _error(path, lineno, f"bad feature index in token {token!r}") from None
        if index < (0 if zero_based else 1):
            raise _error(
                path, lineno,
                f"feature index {index} in token {token!r} is out of range "
                f"(indices start at {0 if zero_based else 1}; pass zero_based=True or 'auto' for 0-based "
                "files)" if not zero_based else f"feature index {index} in token {token!r} is negative",
            )
        try:
            value = float(value_text)
        except ValueError:
            raise _error(path, lineno, f"bad feature value in token {token!r}") from None
        if not math.isfinite(value):
            raise _error(path, lineno, f"feature value in token {token!r} is not finite")
    raise AssertionError("no malformed token found")  # pragma: no cover


def _parse_features(tokens, path, lineno, zero_based):
    """Parse ``index:value`` tokens of one line → (0-based column indices, values)."""
    pairs = [token.split(":") for token in tokens]
    try:
        if any(len(pair) != 2 for pair in pairs):
            raise ValueError
        indices = np.array([pair[0] for pair in pairs], dtype=np.int64)
        values = np.array([pair[1] for pair in pairs], dtype=np.float64)
    except ValueError:
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
            raise _error(path, lineno, f"feature index {index} appears more than once")
    return indices, values


def read_query_sizes(path):
    """Read a LightGBM-style ``.query`` file: one positive integer query size per line.

    Parameters
    ----------
    path : str or path-like
        The file. Blank lines are ignored.

    Returns
    -------
    sizes : ndarray of int64
        Sizes of consecutive queries, in file order.

    Raises
    ------
    ValueError
        Naming the file and line of a token that is not a positive integer.
    """
    path = Path(path)
    sizes = []
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        for lineno, line in enumerate(handle, start=1):
            text = line.strip()
            if not text:
                continue
            if not (text.isascii() and text.isdigit()):
                raise _error(path, lineno, f"query size {text!r} is not a non-negative integer")
            size = int(text)
            if size <= 0:
                raise _error(path, lineno, f"query size {size} is not positive")
            sizes.append(size)
    return np.asarray(sizes, dtype=np.int64)


def _qid_from_rows(row_qids, row_lines, path, query_path):
    """The qid array and the sizes of its runs of equal ids.

    A query whose rows are scattered is one query (logged), as ``RankSVM.fit`` groups rows by
    ``qid``; next to a ``.query`` file, whose sizes describe consecutive blocks, that is an error.
    """
    qid = np.asarray(row_qids, dtype=np.int64)
    if qid.size == 0:
        return qid, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    run_qids = qid[starts]
    if np.unique(run_qids).size != run_qids.size:
        seen = {}
        for start, value in zip(starts, run_qids):
            if value in seen:
                where = (f"qid:{value} reappears after other queries (first block starts at line "
                         f"{row_lines[seen[value]]})")
                if query_path is not None:
                    raise _error(path, row_lines[start], f"{where}; with a .query file ({query_path}) "
                                 "rows of a query must be contiguous")
                logger.info("%s, line %d: %s; its rows form one query, as RankSVM groups rows by qid",
                            path, row_lines[start], where)
                break
            seen[value] = start
    sizes = np.diff(np.r_[starts, qid.size])
    return qid, sizes


def _read_letor(path, query_path, n_features, zero_based):
    """:func:`load_letor`, and whether the file was read as 0-based (what ``"auto"`` found)."""
    path = Path(path)
    if zero_based not in (True, False, "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    if n_features is not None:
        if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)):
            raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
        if n_features <= 0:
            raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
    labels, row_qids, row_lines = [], [], []
    indices_parts, values_parts, row_nnz = [], [], []
    first_row_has_qid = None
    max_index, max_index_line, saw_zero = -1, 0, False
    with _open_text(path) as handle:
        for lineno, line in enumerate(handle, start=1):
            body = line.partition("#")[0]
            tokens = body.split()
            if not tokens:
                continue
            if "_" in body or not body.isascii():  # Python/numpy would read '1_0' or '١' as numbers
                token = next(t for t in tokens if "_" in t or not t.isascii())
                raise _error(path, lineno, f"bad token {token!r} (underscore or non-ASCII character)")
            labels.append(_parse_label(tokens[0], path, lineno))
            has_qid = len(tokens) > 1 and tokens[1].startswith("qid:")
            if first_row_has_qid is None:
                first_row_has_qid = has_qid
            elif has_qid != first_row_has_qid:
                raise _error(
                    path, lineno,
                    "row has no 'qid:' but earlier rows do" if first_row_has_qid
                    else "row has 'qid:' but earlier rows do not",
                )
            if has_qid:
                row_qids.append(_parse_qid(tokens[1], path, lineno))
            features = tokens[2:] if has_qid else tokens[1:]
            indices, values = _parse_features(features, path, lineno, zero_based is not False)
            if indices.size and indices[0] == 0:
                saw_zero = True
            if indices.size and indices[-1] > max_index:
                max_index, max_index_line = int(indices[-1]), lineno
            indices_parts.append(indices)
            values_parts.append(values)
            row_nnz.append(indices.size)
            row_lines.append(lineno)

    n_rows = len(labels)
    shift = zero_based == "auto" and not saw_zero  # read as 0-based above; no index 0: 1-based
    if shift:
        logger.info("%s: no feature index 0, read as 1-based (zero_based='auto')", path)
        max_index -= 1
    base = 1 if shift or zero_based is False else 0  # of the indices as written
    if n_features is None:
        n_features = max_index + 1
    elif max_index >= n_features:
        raise _error(
            path, max_index_line,
            f"feature index {max_index + base} is beyond n_features={n_features}",
        )
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(row_nnz, out=indptr[1:])
    if n_rows:
        indices = np.concatenate(indices_parts) - (1 if shift else 0)
        data = np.concatenate(values_parts)
    else:
        indices = np.zeros(0, dtype=np.int64)
        data = np.zeros(0, dtype=np.float64)
    X = sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_features))
    relevance = np.asarray(labels, dtype=np.float64)

    if query_path is None:
        query_path = _default_query_path(path)
    sizes_from_file = None
    if query_path is not None:
        query_path = Path(query_path)
        sizes_from_file = read_query_sizes(query_path)
        total = int(sizes_from_file.sum())
        if total != n_rows:
            raise ValueError(
                f"{query_path}: query sizes sum to {total} but {path} has {n_rows} data rows"
            )

    if first_row_has_qid:
        qid, run_sizes = _qid_from_rows(row_qids, row_lines, path, query_path)
        if sizes_from_file is not None and not np.array_equal(run_sizes, sizes_from_file):
            raise ValueError(
                f"{query_path}: query sizes disagree with the 'qid:' tokens of {path}"
            )
    elif sizes_from_file is not None:
        qid = np.repeat(np.arange(sizes_from_file.size, dtype=np.int64), sizes_from_file)
    else:
        logger.info("%s has no 'qid:' and no .query file: all %d rows form query 0", path, n_rows)
        qid = np.zeros(n_rows, dtype=np.int64)
    return X, relevance, qid, base == 0
