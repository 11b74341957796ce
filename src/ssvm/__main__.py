"""Command line: ``ssvm demo`` (also ``python -m ssvm demo``), ``ssvm train / predict / eval``.

``ssvm demo`` runs the main job (see :mod:`ssvm.demo`): trains AP-SVM, NDCG-SVM and the 0-1 SVM on
one-vs-rest digits retrieval, prints the test-quality and oracle-time tables to stdout, logs to
stderr, and shows a progress bar on stderr while it trains. ``ssvm train``, ``predict`` and
``eval`` work on svmlight / LETOR files as SVM^rank does (see :mod:`ssvm.cli`); ``ssvm --version``.

Parsing the command line imports nothing heavy (no numpy, scipy, scikit-learn): each command
imports what it uses when it runs, so that ``ssvm --version`` and ``--help`` answer at once.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from ssvm import __version__
from ssvm.cli import FILE_COMMANDS, add_file_commands, run_file_command

__all__ = ["main"]

_LEVELS = ("0", "1", "2", "3")


def _verbosity_levels(argv):
    """SVM^rank's ``-v N`` (N from 0 to 3) as N times ``-v``, so that N is never taken for a file.

    ``-v`` and ``-vv`` stay counts; ``-v 2`` and ``-v2`` mean ``-vv``, ``-v 0`` nothing; anything
    after ``--`` is left alone.
    """
    out, i = [], 0
    while i < len(argv):
        token = argv[i]
        if token == "--":
            return out + list(argv[i:])
        if token in ("-v", "--verbose") and i + 1 < len(argv) and argv[i + 1] in _LEVELS:
            out += ["-v"] * int(argv[i + 1])
            i += 2
            continue
        out += ["-v"] * int(token[2:]) if token[:2] == "-v" and token[2:] in _LEVELS else [token]
        i += 1
    return out


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="ssvm", description="Structured SVMs for rank-based losses (AP, NDCG, precision@k)."
    )
    parser.add_argument("--version", action="version", version=f"ssvm {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_file_commands(sub)
    demo = sub.add_parser(
        "demo",
        help="train AP-SVM, NDCG-SVM and the 0-1 SVM on digits retrieval; print quality and "
        "oracle-time tables",
        description="One-vs-rest retrieval on scikit-learn's digits (bundled data): C by "
        "cross-validation, test mean AP / NDCG per model, loss-augmented inference time per call.",
    )
    demo.add_argument("--quick", action="store_true",
                      help="a quarter of the data and a single C (smoke test, seconds)")
    demo.add_argument("--plot", metavar="DIR",
                      help="save precision-recall and convergence plots (PNG) into DIR "
                      "(needs matplotlib: pip install 'ssvm[plot]')")
    demo.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    demo.add_argument("--seed", type=int, default=0, help="seed of split, folds and solvers")
    demo.add_argument("--n-jobs", type=int, default=None,
                      help="fit the one-vs-rest classes in parallel with this many processes")
    demo.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    demo.add_argument("-v", "--verbose", action="count", default=0,
                      help="more logging from all of ssvm (-v or -v 1: info, -vv or -v 2: debug)")
    demo.add_argument("-q", "--quiet", action="store_true", help="warnings and errors only")
    return parser


def _demo(args):
    from ssvm.demo import run_demo

    result = run_demo(quick=args.quick, plot_dir=args.plot, random_state=args.seed,
                      progress=not args.no_progress, n_jobs=args.n_jobs)
    sys.stdout.write("\n\n".join(result["tables"]) + "\n")
    if result["plots"]:
        sys.stdout.write("\nplots: " + ", ".join(result["plots"]) + "\n")
    if args.json:
        from ssvm._atomic import atomic_write

        atomic_write(args.json, json.dumps({k: v for k, v in result.items() if k != "tables"}, indent=2))
    return 0


def main(argv=None):
    """Entry point of the ``ssvm`` console script.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        Exit status (0 on success).
    """
    parser = _build_parser()
    args = parser.parse_args(_verbosity_levels(sys.argv[1:] if argv is None else argv))
    if getattr(args, "plot", None):
        from ssvm.demo import matplotlib_missing

        if problem := matplotlib_missing():
            parser.error(problem)  # before any work, not after the whole run
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not getattr(args, "quiet", False):  # the demo's own steps at info; -v: all of ssvm at info, -vv: debug
        logging.getLogger("ssvm.demo").setLevel(logging.INFO)
        if getattr(args, "verbose", 0):
            logging.getLogger("ssvm").setLevel(logging.DEBUG if args.verbose >= 2 else logging.INFO)
    if args.command in FILE_COMMANDS:
        return run_file_command(args)
    if args.command == "demo":
        return _demo(args)
    raise ValueError(f"unknown command {args.command!r}")  # argparse rejects it first


if __name__ == "__main__":
    sys.exit(main())
