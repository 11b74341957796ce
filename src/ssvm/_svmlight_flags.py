"""The SVM^light family's flags on ``ssvm train``: taken where ssvm has the same thing, refused in one line otherwise.

SVM^rank, SVM^perf and SVM^light users type ``-e``, ``-#``, ``-l``, ``-t``, ``-w`` and ``-z``. ``-e`` is
``--tol`` and ``-#`` is ``--max-iter`` (aliases on the parser); ``-l`` takes the loss numbers ssvm has
(SVM^rank's 1 and 2 — ``ssvm train`` mirrors ``svm_rank_learn`` — and SVM^perf's 3, 4, 5 and 10);
the rest name what ssvm does instead (:func:`check_svmlight_flags`).
"""

__all__ = ["EPILOG", "add_svmlight_flags", "check_svmlight_flags"]

_LOSSES = ("--loss ap (the default), ndcg, ndcg_at_k, precision_at_k, recall_at_k, mrr, pairwise, roc_auc, f1, "
           "prbep or zero_one")

# -l N: (ssvm loss or None, what the number means in SVM^perf / SVM^rank)
_LOSS_NUMBERS = {
    0: (None, "SVM^perf's zero/one loss of the whole prediction vector"),
    1: ("pairwise", "SVM^rank's number of swapped pairs (SVM^perf's -l 1, F1, is --loss f1)"),
    2: ("roc_auc", "SVM^rank's fraction of swapped pairs (SVM^perf's -l 2, error rate, is --loss zero_one)"),
    3: ("prbep", "SVM^perf's precision/recall break-even point"),
    4: ("precision_at_k", "SVM^perf's precision at k"),
    5: ("recall_at_k", "SVM^perf's recall at k"),
    10: ("roc_auc", "SVM^perf's ROC area (a fraction of swapped pairs)"),
}

EPILOG = """SVM^rank / SVM^light flags:
  -c C       RankSVM's C; SVM^rank's C x Q/n (Q queries with a pair to order of the file's n) weighs each
             query as SVM^rank does (the hinges differ: see the command-line page)
  -e EPS     = --tol (ssvm's is a relative duality gap, SVM^rank's a slack tolerance; both 0.001)
  -# N       = --max-iter
  -v N       verbosity 0 to 3
  -l N       SVM^rank's 1 (swapped pairs) = --loss pairwise and 2 (their fraction) = --loss roc_auc;
             SVM^perf's 3 = prbep, 4 = precision_at_k, 5 = recall_at_k (with -k: a count of rows, where
             SVM^perf's --p is a fraction of the positives), 10 = roc_auc (SVM^perf's 1, F1, is --loss f1
             and its 2, error rate, --loss zero_one); 0 is refused
  -t 0       linear (ssvm's only model); kernels -t 1..4 are refused
  -w, -z r/c refused: the solver is --solver, and ssvm always learns a ranking (-z p)

--transform quantile: use it for raw LETOR / web-search features (counts, BM25, lengths, PageRank),
whose columns differ by orders of magnitude; without it a fit at -c 1 or above can stop at --max-iter
or at w = 0 (then ssvm train says so and writes no model). Features already scaled: leave it out."""


def add_svmlight_flags(train):
    """Add ``-l``, ``-t``, ``-w`` and ``-z`` to the ``train`` parser (``-e`` and ``-#`` are aliases added with
    ``--tol`` and ``--max-iter``).

    Parameters
    ----------
    train : argparse.ArgumentParser
    """
    train.add_argument("-l", dest="svmlight_loss", type=int, default=None, metavar="N",
                       help="SVM^rank's loss number 1 or 2, SVM^perf's 3, 4, 5 or 10 (see below)")
    train.add_argument("-t", dest="svmlight_kernel", type=int, default=None, metavar="N",
                       help="SVM^light's kernel: 0 (linear) only")
    train.add_argument("-w", dest="svmlight_algorithm", default=None, metavar="N",
                       help="SVM^rank's structural algorithm: refused (--solver)")
    train.add_argument("-z", dest="svmlight_task", default=None, metavar="{c,r,p}",
                       help="SVM^light's task: p (ranking) only")


def check_svmlight_flags(args, loss_given):
    """Apply ``-l`` to ``args.loss`` or refuse ``-l``, ``-t``, ``-w``, ``-z`` in one line.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``train`` command; ``args.loss`` is set from ``-l``.
    loss_given : bool
        Whether ``--loss`` was on the command line (``-l`` and ``--loss`` together are refused
        unless they agree).

    Raises
    ------
    ValueError
        One line naming the flag, what it means in SVM^light's family and what ssvm does instead.
    """
    if args.svmlight_kernel not in (None, 0):
        raise ValueError(f"-t {args.svmlight_kernel}: ssvm trains linear models only (-t 0); for a kernel, map the "
                         "features first (e.g. sklearn.kernel_approximation.Nystroem in Python) and train on them")
    if args.svmlight_algorithm is not None:
        raise ValueError(f"-w {args.svmlight_algorithm}: ssvm has no SVM^struct algorithm numbers; it solves the "
                         "1-slack problem with --solver cutting_plane (the default, as SVM^rank's -w 3), pegasos or "
                         "frank_wolfe")
    if args.svmlight_task not in (None, "p"):
        raise ValueError(f"-z {args.svmlight_task}: ssvm train always learns a ranking (SVM^light's -z p); for "
                         "classification on a file without qid: train --loss zero_one; regression is not offered")
    if args.svmlight_loss is None:
        return
    loss, meaning = _LOSS_NUMBERS.get(args.svmlight_loss, (None, "not a loss number of SVM^rank or SVM^perf"))
    if loss is None:
        raise ValueError(f"-l {args.svmlight_loss} is {meaning}; ssvm has no such loss: pass {_LOSSES}")
    if loss_given and args.loss != loss:
        raise ValueError(f"-l {args.svmlight_loss} ({meaning}) is --loss {loss}, not --loss {args.loss}: give one")
    args.loss = loss
