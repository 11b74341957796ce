"""Shared helpers of the experiment scripts: command line, tables, JSON, plots, data, timing.

Every script takes ``--quick`` (the smoke-test size, seconds), ``--json PATH`` (results as JSON),
``--plot DIR`` (PNG figures; matplotlib imported only then, and checked before any work) and
``--seed``, prints its tables to stdout and logs to stderr. Table rendering (:func:`format_table`) and pyplot come from
the helper modules beside it (``_tables``, ``_plots``; the models and their selection in ``_models``,
oracle timing in ``_oracle_timing``): the experiments' own code, out of the package.
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import sys
from pathlib import Path

import numpy as np
from _plots import matplotlib_missing, pyplot
from _tables import format_table

__all__ = [
    "emit",
    "format_table",
    "grouped_bars",
    "machine_info",
    "make_parser",
    "pyplot",
    "setup",
    "synthetic_ranking",
    "sample_song",
    "flip_labels",
]

logger = logging.getLogger("scripts")


def make_parser(doc):
    """Argument parser with the options every script shares.

    Parameters
    ----------
    doc : str
        The script's docstring (its first line becomes the description).

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes for the smoke test")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON to PATH")
    parser.add_argument("--plot", metavar="DIR", help="save PNG figures into DIR")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("-v", "--verbose", action="store_true", help="info logging from ssvm too")
    return parser


def setup(parser, argv=None):
    """Parse arguments, check that ``--plot`` can work, and configure logging.

    With ``--plot`` and no importable matplotlib the script stops here, before any work, with a
    usage error that says what to install. Logging goes to stderr, the script's own steps at info.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    argv : list of str, optional

    Returns
    -------
    argparse.Namespace
    """
    args = parser.parse_args(argv)
    if args.plot and (problem := matplotlib_missing()):
        parser.error(problem)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logger.setLevel(logging.INFO)
    for name in ("_models", "_oracle_timing"):
        logging.getLogger(name).setLevel(logging.INFO)
    if args.verbose:
        logging.getLogger("ssvm").setLevel(logging.INFO)
    if args.plot:
        Path(args.plot).mkdir(parents=True, exist_ok=True)
    return args


def machine_info():
    """A short description of the machine (CPU count, platform, Python, numpy)."""
    import os

    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def emit(args, tables, payload):
    """Print the tables to stdout and, with ``--json``, write the payload (plus machine info).

    Parameters
    ----------
    args : argparse.Namespace
    tables : list of str
        Rendered tables (:func:`format_table`).
    payload : dict
        JSON-able results (numpy scalars and arrays are converted; non-finite floats become null).
    """
    print("\n\n".join(tables), flush=True)
    if args.json:
        doc = {"machine": machine_info(), "quick": bool(args.quick), "seed": args.seed, **payload}
        Path(args.json).write_text(json.dumps(_jsonable(doc), indent=2), encoding="utf-8")
        logger.info("wrote %s", args.json)


def grouped_bars(ax, labels, series):
    """Draw one group of bars per label on ``ax``, one bar per series, and name the groups.

    Parameters
    ----------
    ax : matplotlib Axes
    labels : list of str
        The groups, left to right.
    series : dict
        Legend name -> values, one per label.
    """
    width = 0.8 / len(series)
    for k, (name, values) in enumerate(series.items()):
        ax.bar(np.arange(len(labels)) + (k - (len(series) - 1) / 2) * width, values, width, label=name)
    ax.set_xticks(np.arange(len(labels)), labels, rotation=20, fontsize=8)


def synthetic_ranking(n_samples, n_features, n_positives, rng, separation=1.0):
    """Gaussian binary ranking data: negatives ~ N(0, I), positives ~ N(mu, I), overlapping.

    ``mu`` is a random direction of length ``separation``, so the classes overlap (no w ranks
    them perfectly) and the structured hinge stays active, as on real data.

    Parameters
    ----------
    n_samples : int
    n_features : int
    n_positives : int
        Between 1 and ``n_samples - 1``.
    rng : numpy.random.Generator
    separation : float, default=1.0

    Returns
    -------
    X : ndarray of float64, shape (n_samples, n_features)
    y : ndarray of bool, shape (n_samples,)
        Positives at random positions.

    Raises
    ------
    ValueError
        If ``n_positives`` leaves no positive or no negative.
    """
    if not 1 <= n_positives < n_samples:
        raise ValueError(f"need 1 <= n_positives < n_samples, got {n_positives} of {n_samples}")
    direction = rng.standard_normal(n_features)
    direction *= separation / np.linalg.norm(direction)
    y = np.zeros(n_samples, dtype=bool)
    y[rng.choice(n_samples, size=n_positives, replace=False)] = True
    X = rng.standard_normal((n_samples, n_features))
    X[y] += direction
    return X, y


def sample_song(n, rng, *, dim=10, sigma=10.0, pos_above=1200.0, neg_below=1000.0):
    """Draw points until ``n`` are kept; label them by their squared norm.

    Parameters
    ----------
    n : int
        Number of points kept.
    rng : numpy.random.Generator
    dim : int, default=10
    sigma : float, default=10.0
        Standard deviation of every coordinate.
    pos_above, neg_below : float
        Squared-norm thresholds; points in between are dropped.

    Returns
    -------
    X : ndarray, shape (n, dim)
    y : ndarray of int, 1 positive / 0 negative
    """
    if n < 1 or neg_below > pos_above:
        raise ValueError(f"need n >= 1 and neg_below <= pos_above, got {n}, {neg_below}, {pos_above}")
    kept = []
    count = 0
    while count < n:
        batch = sigma * rng.standard_normal((2 * n, dim))
        sq = np.einsum("ij,ij->i", batch, batch)
        batch = batch[(sq > pos_above) | (sq < neg_below)]
        kept.append(batch)
        count += len(batch)
    X = np.concatenate(kept)[:n]
    y = (np.einsum("ij,ij->i", X, X) > pos_above).astype(int)
    return X, y


def flip_labels(y, rate, rng):
    """Flip exactly ``round(rate * len(y))`` labels chosen at random (0/1 labels).

    Parameters
    ----------
    y : ndarray of int (0/1)
    rate : float in [0, 1]
    rng : numpy.random.Generator

    Returns
    -------
    ndarray
        A copy with the flips applied.
    """
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"noise rate must be in [0, 1], got {rate}")
    y = np.array(y, copy=True)
    flip = rng.choice(len(y), size=int(round(rate * len(y))), replace=False)
    y[flip] = 1 - y[flip]
    return y
