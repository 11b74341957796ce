"""Reader for SVMlight / LETOR ranking files (``label [qid:Q] index:value ... # comment``).

A strict parser rather than a call to ``sklearn.datasets.load_svmlight_file``, so that every
malformed line is reported with its file name and line number, and nothing is silently skipped or
reinterpreted. The file is read once, in chunks, by a compiled parser
(:mod:`ssvm.datasets._svmlight_reader`) that builds the CSR arrays directly; the lines it does not
accept as plainly well formed are parsed, or refused with their message, by the Python parser of
one line (:mod:`ssvm.datasets._letor_lines`). This module assembles the matrix and the query
structure (``qid:`` tokens or a ``.query`` file).
"""

from __future__ import annotations

import gzip
import logging
import os
from functools import partial
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ._letor_lines import line_error as _error
from ._letor_lines import parse_line
from ._svmlight_reader import SvmlightParser

__all__ = ["load_letor", "read_query_sizes"]

logger = logging.getLogger(__name__)

_CHUNK_BYTES = 1 << 20  # read at a time; the tests pass tiny chunks to cut lines anywhere
_INT32_MAX = np.iinfo(np.int32).max


def _open_binary(path):
    """Open a data file for reading bytes, decompressing it on the fly when its name ends in ``.gz``."""
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return open(path, "rb")


def _default_query_path(path):
    """``<path>.query``, or for ``<name>.gz`` also ``<name>.query``; None when neither exists."""
    candidates = [Path(os.fspath(path) + ".query")]
    if path.suffix == ".gz":
        candidates.append(path.with_suffix(".query"))
    return next((candidate for candidate in candidates if candidate.exists()), None)


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


def _qid_from_rows(qid, run_lines, path, query_path):
    """The sizes of the runs of equal ids in ``qid`` (``run_lines``: the line opening each run).

    A query whose rows are scattered is one query (logged), as ``RankSVM.fit`` groups rows by
    ``qid``; next to a ``.query`` file, whose sizes describe consecutive blocks, that is an error.
    """
    if qid.size == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    run_qids = qid[starts]
    if np.unique(run_qids).size != run_qids.size:
        seen = {}
        for run, value in enumerate(run_qids.tolist()):
            if value in seen:
                where = (f"qid:{value} reappears after other queries (first block starts at line "
                         f"{run_lines[seen[value]]})")
                if query_path is not None:
                    raise _error(path, run_lines[run], f"{where}; with a .query file ({query_path}) "
                                 "rows of a query must be contiguous")
                logger.info("%s, line %d: %s; its rows form one query, as RankSVM groups rows by qid",
                            path, run_lines[run], where)
                break
            seen[value] = run
    return np.diff(np.r_[starts, qid.size])


def load_letor(path, query_path=None, *, n_features=None, zero_based="auto"):
    """Load an SVMlight / LETOR ranking file with its query structure.

    Each data line is ``label [qid:Q] index:value index:value ... [# comment]``. Blank and
    comment-only lines are not data rows. The query structure comes either from ``qid:`` tokens
    in the rows or from a LightGBM-style ``.query`` file of consecutive query sizes
    (``<path>.query`` is used automatically when it exists).

    Parameters
    ----------
    path : str or path-like
        The data file; a name ending in ``.gz`` is read through gzip.
    query_path : str or path-like, optional
        A ``.query`` file (one query size per line). Defaults to ``<path>.query`` if present
        (for ``<name>.gz``, also ``<name>.query``).
        When the rows also carry ``qid:``, the two must describe the same query boundaries.
    n_features : int, optional
        Number of columns of X. Use the training file's value to load a test file with the same
        width; a feature index beyond it is an error. Defaults to the largest index + 1.
    zero_based : bool or "auto", default="auto"
        Whether feature indices start at 0. SVMlight and LETOR files start at 1 (index 1 becomes
        column 0; with ``False`` index 0 is an error naming the line); scikit-learn's
        ``dump_svmlight_file`` writes 0-based files by default. ``"auto"`` (scikit-learn's
        convention) reads the file as 0-based if any index is 0 and as 1-based otherwise; a
        0-based file that never uses feature 0 is then read 1-based, so load a test file with the
        training file's base (the ``ssvm`` command line keeps it in the model file).

    Returns
    -------
    X : scipy.sparse.csr_matrix of float64, shape (n_samples, n_features)
    relevance : ndarray of float64, shape (n_samples,)
        The labels (graded relevance; ``relevance > 0`` counts as relevant).
    qid : ndarray of int64, shape (n_samples,)
        Query id per row. From ``qid:`` tokens as written (rows with the same id form one query
        wherever they are in the file, the rule of ``RankSVM.fit``: queries in order of first
        appearance, rows in file order); from a ``.query`` file, 0, 1, 2, …
        per consecutive query. With neither, every row belongs to query 0 (logged).

    Raises
    ------
    ValueError
        Naming the file and line for: a non-numeric or non-finite label or value, a bad
        ``index:value`` token, a bad or misplaced ``qid:``, a repeated feature index, an index out of
        range, a mix of rows with and without ``qid:``, rows of one query that are not contiguous
        when a ``.query`` file is used, and query sizes that do not sum to the number of rows or
        disagree with the ``qid:`` tokens.

    Examples
    --------
    >>> X, relevance, qid = load_letor("rank.train")            # doctest: +SKIP
    >>> X_test, rel_test, qid_test = load_letor("rank.test", n_features=X.shape[1])  # doctest: +SKIP
    """
    return _read_letor(path, query_path, n_features, zero_based)[:3]


def _read_letor(path, query_path, n_features, zero_based, *, chunk_bytes=_CHUNK_BYTES):
    """:func:`load_letor`, and whether the file was read as 0-based (what ``"auto"`` found)."""
    path = Path(path)
    if zero_based not in (True, False, "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    if n_features is not None:
        if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)):
            raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
        if n_features <= 0:
            raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
    parser = SvmlightParser(zero_based is False,
                            partial(parse_line, path=path, zero_based=zero_based is not False))
    with _open_binary(path) as handle:
        parser.read(handle, chunk_bytes)

    n_rows = parser.n_rows
    max_index, max_index_line = parser.max_index
    shift = zero_based == "auto" and not parser.saw_zero  # read as 0-based above; no index 0: 1-based
    if shift:
        logger.info("%s: no feature index 0, read as 1-based (zero_based='auto')", path)
        max_index = max(max_index - 1, -1)  # -1: no feature at all
    base = 1 if shift or zero_based is False else 0  # of the indices as written
    if n_features is None:
        n_features = max(max_index + 1, 0)
    elif max_index >= n_features:
        raise _error(
            path, max_index_line,
            f"feature index {max_index + base} is beyond n_features={n_features}",
        )
    # scipy's index type for this matrix: int32 when the shape and the entries allow it
    int32 = max(n_rows, n_features, parser.nnz) <= _INT32_MAX
    data, indices, indptr, relevance, row_qids, run_lines = parser.arrays(1 if shift else 0, int32)
    X = sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_features))

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

    if parser.has_qid:
        qid = row_qids
        run_sizes = _qid_from_rows(qid, run_lines, path, query_path)
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
