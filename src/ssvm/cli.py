"""``ssvm train``, ``ssvm predict`` and ``ssvm eval``: the SVM^light family's command line.

Users of SVM^rank, SVM^map, SVM^perf or RankLib train from files::

    ssvm train -c 1 --loss ap train.dat model.json    # svmlight / LETOR file → model file (JSON data)
    ssvm predict test.dat model.json predictions      # one score per line, in the file's row order
    ssvm eval test.dat predictions                    # trec_eval's map, ndcg, ndcg_cut_k, P_k, recip_rank, Rprec

Files are read by :func:`ssvm.datasets.load_letor` (``qid:``, ``#`` comments, sparse, 1- or
0-based indices detected; rows with the same ``qid`` form one query wherever they are). Models
are written and read by :func:`ssvm.save_model` / :func:`ssvm.load_model`; the training file's
index base is kept in the model file so that a test file is read the same way. Bad input gives
one line on stderr and exit status 1 (``-v`` adds the traceback), and so does a fit that stops
before its tolerance or ends at w = 0 (no model file is written unless ``--allow-unconverged``);
warnings are one line each (:mod:`ssvm._cli_messages`). No command writes over one of its inputs,
and every output is written whole or not at all (:mod:`ssvm._atomic`). SVM^rank's flags are in
:mod:`ssvm._svmlight_flags`, ``ssvm eval``'s measures in :func:`ssvm.metrics.evaluate`. The docs:
"Command line".

numpy, scikit-learn and the estimators are imported by the commands when they run, not here:
``ssvm --version`` and ``--help`` parse the command line without them.
"""

import argparse
import logging
import sys
import traceback
import warnings
from pathlib import Path

from ssvm._atomic import atomic_write, refuse_overwriting
from ssvm._cli_messages import cli_spelling, skipped_queries, warning_lines
from ssvm._svmlight_flags import EPILOG, add_svmlight_flags, check_svmlight_flags

__all__ = ["add_file_commands", "run_file_command", "FILE_COMMANDS"]

FILE_COMMANDS = ("train", "predict", "eval")
_TRANSFORMS = ("none", "quantile", "standard")
logger = logging.getLogger(__name__)


def add_file_commands(sub):
    """Add ``train``, ``predict`` and ``eval`` to the ``ssvm`` command's subparsers.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of the ``ssvm`` parser.
    """
    train = sub.add_parser("train", help="train a RankSVM on an svmlight / LETOR file and write a model file",
                           description="ssvm train [options] TRAIN MODEL: RankSVM on an svmlight / LETOR file "
                           "(qid: rows, or one query of all rows); the model file is JSON data.",
                           epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    train.add_argument("train", metavar="TRAIN", help="training file (label [qid:Q] index:value ... [# comment])")
    train.add_argument("model", metavar="MODEL", help="model file to write")
    train.add_argument("-c", dest="C", type=float, default=1.0, help="RankSVM's C (default 1.0)")
    # names are checked by RankSVM itself (one line naming the accepted ones), so that the
    # parser, and ssvm --version, need not import the estimators
    train.add_argument("--loss", default=None,
                       help="task loss: ap (default), ndcg, ndcg_at_k, precision_at_k, recall_at_k, mrr, pairwise "
                            "(SVM^rank's swapped pairs), roc_auc, f1, prbep, zero_one")
    train.add_argument("--c-convention", choices=("ssvm", "svm_rank"), default="ssvm",
                       help="how -c reads: ssvm (default: C / Q times the sum of the hinges over the Q queries "
                            "that count) or svm_rank (svm_rank_learn's -c: c / n over all n queries of the file, "
                            "so C = c * Q / n)")
    train.add_argument("--oracle", default="auto", help="loss-augmented inference (default auto: the fastest)")
    train.add_argument("--solver", default="cutting_plane",
                       help="minimiser of J: cutting_plane (default), pegasos, frank_wolfe")
    train.add_argument("--tol", "-e", type=float, default=1e-3,
                       help="stopping tolerance, a relative duality gap (default 1e-3; -e as in SVM^rank)")
    train.add_argument("--max-iter", "-#", type=int, default=None,
                       help="solver iterations (default: the solver's; -# as in SVM^light)")
    train.add_argument("-k", type=int, default=None,
                       help="cut-off of --loss precision_at_k, recall_at_k and ndcg_at_k (default 10)")
    train.add_argument("--gain", choices=("exponential", "linear", "binary"), default=None,
                       help="gains of --loss ndcg: exponential (2^r - 1, default), linear (r) or binary ([r > 0])")
    train.add_argument("--jobs", type=int, default=None, help="parallel jobs for the oracle calls")
    train.add_argument("--seed", type=int, default=None,
                       help="seed of the stochastic solvers (pegasos, frank_wolfe) and of --transform quantile")
    train.add_argument("--transform", choices=_TRANSFORMS, default="none",
                       help="feature transform before the model: quantile (QuantileTransformer to a normal; use it "
                       "for raw LETOR features whose columns differ by orders of magnitude, see below; its "
                       "quantiles come from every row of TRAIN, so the same file gives the same model), standard "
                       "(StandardScaler) or none (default: features already scaled)")
    train.add_argument("--allow-unconverged", action="store_true",
                       help="write the model even when the solver stops at --max-iter before --tol or the fit "
                       "ends at w = 0 (every row scores the same); without it such a fit is refused with "
                       "exit status 1 and no model file")
    add_svmlight_flags(train)
    predict = sub.add_parser("predict", help="score a file's rows with a model file",
                             description="ssvm predict TEST MODEL PREDICTIONS: one score per line, in the "
                             "file's row order (several per line for a one-vs-rest model).")
    predict.add_argument("test", metavar="TEST", help="file to score")
    predict.add_argument("model", metavar="MODEL", help="model file written by ssvm train or ssvm.save_model")
    predict.add_argument("predictions", metavar="PREDICTIONS", help="file to write the scores to")
    evaluate = sub.add_parser(
        "eval", help="trec_eval's measures of a predictions file: map, ndcg, ndcg_cut_k, P_k, recip_rank, Rprec",
        description="ssvm eval TEST PREDICTIONS: rank each query of TEST by the scores in PREDICTIONS (ties by row "
        "order) and print, in trec_eval's format and names, mean AP (map), NDCG (ndcg), NDCG@k (ndcg_cut_k) and "
        "precision@k divided by k (P_k), the reciprocal rank of the first relevant row (recip_rank; its mean is "
        "MRR) and R-precision (Rprec). trec_eval's own numbers: --gain linear --all-queries.")
    evaluate.add_argument("test", metavar="TEST", help="file with the relevance labels and qid:")
    evaluate.add_argument("predictions", metavar="PREDICTIONS", help="one score per line, in TEST's row order")
    evaluate.add_argument("-k", type=_cutoffs, action="append", default=None, metavar="K[,K...]",
                          help="cut-offs of ndcg_cut and P, comma-separated or repeated (default 1,5,10)")
    evaluate.add_argument("--gain", choices=("exponential", "linear", "binary"), default="exponential",
                          help="gains of ndcg and ndcg_cut: exponential (2^r - 1, the default: what ssvm train "
                          "--loss ndcg optimises, and LETOR's, LightGBM's and XGBoost's NDCG), linear (r, trec_eval's "
                          "ndcg) or binary ([r > 0]); map and P count r > 0 as relevant")
    evaluate.add_argument("--all-queries", action="store_true",
                          help="average over every query of TEST, as trec_eval: a query without a relevant row "
                          "scores 0, one whose rows are all relevant 1 (P_k: its size / k if below k). By default "
                          "such queries, whose every ranking scores the same, are left out of the means, as in "
                          "training")
    evaluate.add_argument("--per-query", action="store_true",
                          help="also print every query's values (trec_eval -q), before the means; nan for a query "
                          "left out of the means")
    for parser in (train, predict):
        parser.add_argument("--zero-based", choices=("auto", "yes", "no"), default="auto",
                            help="feature indices start at 0 (default auto: 0-based if an index 0 occurs, "
                            "and predict reads the test file as the model's training file was read)")
    for parser, what in ((train, "progress (-v or -v 1: solver summary and info logging; -vv or -v 2: every "
                                 "iteration)"), (predict, "info logging"), (evaluate, "which queries are left out")):
        parser.add_argument("-v", "--verbose", action="count", default=0,
                            help=f"{what}; with an error, its traceback. As SVM^rank's -v [0..3], a level 0 to 3 "
                            "right after -v is the level, never a file name")


def _cutoffs(text):
    """``-k 1,5,10``: a list of cut-offs (integers >= 1)."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"cut-offs are integers separated by commas, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"cut-offs must be integers >= 1, got {text!r}")
    return values


def run_file_command(args):
    """Run a parsed ``train`` / ``predict`` / ``eval`` command.

    Parameters
    ----------
    args : argparse.Namespace
        As parsed by the parser :func:`add_file_commands` extended.

    Returns
    -------
    int
        Exit status: 0, or 1 after one line on stderr for bad input (a missing or malformed
        file, a test file with more features than the model, an unreadable model).
    """
    if args.verbose:
        logging.getLogger("ssvm").setLevel(logging.DEBUG if args.verbose >= 2 else logging.INFO)
    command = {"train": _train, "predict": _predict, "eval": _eval}[args.command]
    args.skipped = None  # train: (ids, number of queries) of the queries it skipped
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # every warning, each printed below as one line
        try:
            status = command(args)
        except (OSError, ValueError) as exc:
            if args.verbose:
                traceback.print_exc(file=sys.stderr)
            message = f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) and exc.filename else exc
            sys.stderr.write(f"ssvm {args.command}: error: {cli_spelling(message)}\n")
            status = 1
    for line in warning_lines(args.command, caught, args.skipped, args.verbose):
        sys.stderr.write(line + "\n")
    return status


def _zero_based(option, model_choice=None):
    if option == "auto" and model_choice is not None:
        return model_choice
    return {"auto": "auto", "yes": True, "no": False}[option]


def _read(path, n_features, zero_based):
    """A LETOR file read for a command: ``(X, relevance, qid, zero_based)``; an empty one is refused."""
    from ssvm.datasets.letor import _read_letor

    X, relevance, qid, zero_based = _read_letor(path, None, n_features, zero_based)
    if X.shape[0] == 0:
        raise ValueError(f"{path} has no data rows (it is empty, or holds only comments and blank lines): "
                         "nothing to rank")
    return X, relevance, qid, zero_based


def _check_loss_options(args):
    """``-l``, ``-t``, ``-w``, ``-z``, then ``--loss`` among the registry's names and ``-k`` / ``--gain`` only with a
    loss that takes them (one line each, before any file is read)."""
    from ssvm.losses import LOSS_NAMES, loss_entry

    check_svmlight_flags(args, loss_given=args.loss is not None)
    args.loss = args.loss or "ap"
    if args.loss not in LOSS_NAMES:
        raise ValueError(f"--loss {args.loss}: choose one of {', '.join(LOSS_NAMES)}")
    entry = loss_entry(args.loss)
    if args.k is not None and "k" not in entry.params:
        raise ValueError(f"-k is the cut-off of --loss precision_at_k, recall_at_k and ndcg_at_k; --loss {args.loss} "
                         "has none")
    if args.gain is not None and not entry.gains:
        raise ValueError(f"--gain sets the gains of --loss ndcg and ndcg_at_k; --loss {args.loss} counts r > 0 as "
                         "relevant")
    args.gain = args.gain or "exponential"


def _train(args):
    import numpy as np
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import QuantileTransformer, StandardScaler

    from ssvm._fit_checks import fit_problem, fit_reporting_convergence
    from ssvm.estimators import RankSVM
    from ssvm.losses import loss_entry
    from ssvm.model_files import save_model

    refuse_overwriting(args.model, "MODEL", [("training", args.train)])
    _check_loss_options(args)
    X, relevance, qid, zero_based = _read(args.train, None, _zero_based(args.zero_based))
    C = args.C if args.c_convention == "ssvm" else _svm_rank_C(args.C, relevance, qid)
    model = RankSVM(loss=args.loss, oracle=args.oracle, solver=args.solver, C=C, k=args.k, gain=args.gain,
                    tol=args.tol, max_iter=args.max_iter, n_jobs=args.jobs, random_state=args.seed,
                    verbose=min(args.verbose, 2))
    if args.transform != "none":
        # quantiles of every row (subsample=None): no random subsample, the same transform from the same file
        transform = (QuantileTransformer(output_distribution="normal", n_quantiles=min(1000, X.shape[0]),
                                         subsample=None, random_state=args.seed)
                     if args.transform == "quantile" else StandardScaler())
        model = make_pipeline(transform, model)
        X = X.toarray()  # the transforms want dense features (QuantileTransformer: non-negative sparse only)
    # queries from qid: (relevance > 0 relevant); a file without qid: one query of all rows
    args.skipped = skipped_queries(relevance, qid, graded=bool(loss_entry(args.loss).gains) and args.gain != "binary")
    converged = fit_reporting_convergence(
        model, X, relevance, **({"qid": qid} if args.transform == "none" else {"ranksvm__qid": qid}))
    problem = fit_problem(model[-1] if args.transform != "none" else model, converged, args.tol)
    if problem and not args.allow_unconverged:
        raise ValueError(f"{problem}; no model written (--allow-unconverged writes it anyway)")
    if problem:
        sys.stderr.write(f"ssvm train: warning: {problem}; model written anyway (--allow-unconverged)\n")
    save_model(model, args.model, metadata={"command": "ssvm train", "train_file": Path(args.train).name,
                                            "zero_based": bool(zero_based)})
    logger.info("%s: %d rows, %d queries, %d features → %s", args.train, X.shape[0], np.unique(qid).size,
                X.shape[1], args.model)
    return 0


def _svm_rank_C(c, relevance, qid):
    """ssvm's C for svm_rank_learn's ``-c c`` on this file: c · Q / n, Q the queries with two distinct
    grades (those with a pair), n every query (:func:`ssvm.losses.pairwise.svm_rank_C`)."""
    import numpy as np

    from ssvm.losses.pairwise import svm_rank_C

    _, index = np.unique(qid, return_inverse=True)
    lowest = np.full(index.max() + 1, np.inf)
    highest = np.full(index.max() + 1, -np.inf)
    np.minimum.at(lowest, index, relevance)
    np.maximum.at(highest, index, relevance)
    n_pair_queries = int(np.count_nonzero(lowest < highest))
    if n_pair_queries == 0:
        raise ValueError("no query has two distinct grades: nothing to rank")
    C = svm_rank_C(c, lowest.size, n_pair_queries)
    logger.info("svm_rank's -c %g: C = %g (%d of %d queries have a pair)", c, C, n_pair_queries, lowest.size)
    return C


def _predict(args):
    from ssvm.model_files import load_model

    refuse_overwriting(args.predictions, "PREDICTIONS", [("test", args.test), ("model", args.model)])
    model, metadata = load_model(args.model, with_metadata=True)
    ranker = model[-1] if hasattr(model, "steps") else model
    if type(ranker).__name__ != "RankSVM":
        raise ValueError(f"{args.model} holds a {type(ranker).__name__}; ssvm predict scores rows with a RankSVM "
                         "(use the Python API for the others)")
    zero_based = _zero_based(args.zero_based, metadata.get("zero_based"))
    try:
        X, _, _, _ = _read(args.test, ranker.n_features_in_, zero_based)
    except ValueError as exc:
        if zero_based is True and "is beyond n_features" in str(exc):
            raise ValueError(f"{exc}: the model was trained on a 0-based file; if {args.test} is 1-based (as SVM^rank "
                             "writes), pass --zero-based no") from exc
        raise
    scores = model.decision_function(X.toarray() if hasattr(model, "steps") else X)
    lines = [" ".join(map(repr, row)) for row in scores.tolist()] if scores.ndim == 2 else map(repr, scores.tolist())
    atomic_write(args.predictions, "".join(f"{line}\n" for line in lines))
    logger.info("%s: %d scores → %s", args.test, X.shape[0], args.predictions)
    return 0


def _read_predictions(path, n_rows):
    import numpy as np

    scores = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for lineno, line in enumerate(handle, start=1):
            token = line.strip()
            if not token:
                continue  # blank lines (a trailing one) are not scores
            try:
                value = float(token)
            except ValueError:
                raise ValueError(f"{path}, line {lineno}: score {token!r} is not a number "
                                 "(one score per line)") from None
            if not np.isfinite(value):
                raise ValueError(f"{path}, line {lineno}: score {token!r} is not finite")
            scores.append(value)
    if len(scores) != n_rows:
        raise ValueError(f"{path} has {len(scores)} scores but the test file has {n_rows} rows")
    return np.asarray(scores)


def _eval(args):
    import numpy as np

    from ssvm.metrics import MEASURES, measure_table

    _, relevance, qid, _ = _read(args.test, None, "auto")  # labels and qid: any index base
    scores = _read_predictions(args.predictions, relevance.shape[0])
    cutoffs = sorted({k for group in args.k or [[1, 5, 10]] for k in group})
    ids, columns = measure_table(relevance, scores, qid=qid, k=cutoffs, gain=args.gain,
                                 all_queries=args.all_queries, measures=tuple(MEASURES))
    out = []
    if args.per_query:
        out += [_trec_line(name, query, values[i]) for i, query in enumerate(ids) for name, values in columns.items()]
    out.append(_trec_line("num_q", "all", len(ids)))
    for name, values in columns.items():
        counted = values[~np.isnan(values)]
        out.append(_trec_line(name, "all", float(np.mean(counted)) if counted.size else float("nan")))
    sys.stdout.write("\n".join(out) + "\n")
    if not args.all_queries:
        _say_left_out(columns, len(ids), ids, args.verbose)
    return 0


def _trec_line(name, query, value):
    """One line as trec_eval prints it: the measure, the query (or ``all``), the value."""
    return f"{name:<22}\t{query}\t{value}" if isinstance(value, int) else f"{name:<22}\t{query}\t{value:.4f}"


def _say_left_out(columns, n_queries, ids, verbose):
    """One line on stderr: how many queries the means leave out (and, with -v, which)."""
    import numpy as np

    left = {name: np.isnan(values) for name, values in columns.items()}
    counts = {}
    for name, mask in left.items():
        counts.setdefault(int(mask.sum()), []).append(name)
    if not any(counts.keys() - {0}):
        return
    parts = [f"{count} for {', '.join(names)}" for count, names in sorted(counts.items()) if count]
    which = ""
    if verbose:
        first = next(mask for mask in left.values())
        which = "; queries " + " ".join(str(ids[i]) for i in np.flatnonzero(first))
    sys.stderr.write(f"ssvm eval: queries left out of the means (every ranking of them scores the same: no relevant "
                     f"or no non-relevant row, or for graded gains one grade), of {n_queries}: {'; '.join(parts)}; "
                     f"--all-queries averages over every query, as trec_eval{which}\n")
