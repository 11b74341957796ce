"""Label ranking by break-even precision: LabelRankSVM (independent and c-star) against baselines.

Mensink, Verbeek & Caetano (2011) rank an image's labels with per-label linear scores plus pairwise
terms on a c-star of C core labels, trained for break-even precision (BEP: precision at k = the
sample's number of relevant labels). This script measures, on

* "emotions" (593 songs, 72 audio features, 6 labels; bundled, ``ssvm.datasets.load_emotions``),
* a synthetic set from ``make_multilabel_classification`` (10 labels) plus 10 labels that are the
  AND of one of two "hub" labels with another label (so labels are strongly dependent),

the test BEP (with each model's joint inference for LabelRankSVM, by the ranking of its scores for
the baselines), BEP after 1, 2, 5, 10 questions of the paper's interactive labelling (each question
reveals the label whose best in-set and out-of-set scores differ least; for the baselines, the
same rule on their scores), sklearn's label-ranking average precision (LRAP, of
``decision_function``) and the fit time, for LabelRankSVM with no core (the independent model) and
with C = 1..5 core labels (chosen by greedy joint mutual information), LabelRankSVM on an RBF
Nystroem feature map (the paper's kernel rows) and on cross-fitted one-vs-rest LinearSVC scores (its
"pre-trained SVM scores" rows), OneVsRestClassifier(LinearSVC) and
ClassifierChain(LinearSVC). Features are standardised; every model's regularisation constant is
chosen by 3-fold cross-validation of BEP on the training part of the first fold, and results are
averaged over 5 folds (the paper's protocol). A second table gives, per fold, the BEP of each c-star
model minus its independent counterpart. The paper's Table 1 (ImageCLEF 2010, 93 labels) is
printed beside.
"""

from __future__ import annotations

import re
import sys
import time
import warnings

import _common
import numpy as np
from _common import format_table, logger
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem
from sklearn.metrics import label_ranking_average_precision_score
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.multiclass import OneVsRestClassifier
from sklearn.multioutput import ClassifierChain
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from ssvm import LabelRankSVM
from ssvm.datasets import load_emotions
from ssvm.exceptions import DegenerateQueriesWarning
from ssvm.label_ranking import interactive_bep

QUESTIONS = (0, 1, 2, 5, 10)

#: the paper's Table 1: BEP (%) on ImageCLEF'10 (93 labels), automatic and after Q questions
PAPER_TABLE = [
    {"features": "pre-trained SVM scores", "model": "independent", "Auto": 66.6, "Q1": 68.5,
     "Q5": 75.0, "Q10": 81.1},
    {"features": "pre-trained SVM scores", "model": "c-star C=5", "Auto": 68.0, "Q1": 69.8,
     "Q5": 76.1, "Q10": 81.6},
    {"features": "kernel", "model": "independent", "Auto": 67.8, "Q1": 69.7, "Q5": 76.1,
     "Q10": 82.1},
    {"features": "kernel", "model": "c-star C=5", "Auto": 68.6, "Q1": 70.6, "Q5": 77.2,
     "Q10": 83.3},
]


def correlated_multilabel(n_samples, rng_seed, n_base=10, n_derived=10, noise=0.05):
    """``make_multilabel_classification`` labels plus labels that depend on two hub labels.

    Derived label ``i`` is ``base[hub] AND base[j_i]`` with ``hub`` = 0 for the first half and 1
    for the second, ``j_i`` another base label; then ``noise`` of all label entries are flipped.

    Returns
    -------
    X : ndarray (n_samples, 30)
    Y : ndarray of int (n_samples, n_base + n_derived)
    """
    from sklearn.datasets import make_multilabel_classification

    X, base = make_multilabel_classification(n_samples=n_samples, n_features=30,
                                             n_classes=n_base, n_labels=3, length=40,
                                             allow_unlabeled=False, random_state=rng_seed)
    rng = np.random.default_rng(rng_seed)
    hubs = np.where(np.arange(n_derived) < n_derived // 2, 0, 1)
    partners = rng.integers(2, n_base, n_derived)
    derived = base[:, hubs] & base[:, partners]
    Y = np.hstack([base, derived])
    flip = rng.random(Y.shape) < noise
    return X.astype(np.float64), np.where(flip, 1 - Y, Y)


def bep_of_scores(scores, Y):
    """Mean precision at k = |y| of the ranking by ``scores`` (ties by label index)."""
    keep = Y.any(axis=1)
    scores, Y = scores[keep], Y[keep]
    order = np.argsort(-scores, axis=1, kind="stable")
    k = Y.sum(axis=1)
    hits = np.take_along_axis(Y, order, axis=1).cumsum(axis=1)[np.arange(len(Y)), k - 1]
    return float(np.mean(hits / k))


class SVMScores(TransformerMixin, BaseEstimator):
    """The paper's "pre-trained SVM scores": one-vs-rest LinearSVC decision values as features.

    ``fit_transform`` returns 3-fold cross-fitted scores (so the model on top sees scores of the
    quality it will see at test time); ``transform`` uses the SVMs fitted on all the data.
    """

    def __init__(self, C=0.1):
        self.C = C

    def _svm(self):
        return OneVsRestClassifier(LinearSVC(C=self.C, max_iter=5000))

    def fit(self, X, Y):
        self.svm_ = self._svm().fit(X, Y)
        return self

    def fit_transform(self, X, Y):
        scores = cross_val_predict(self._svm(), X, Y, cv=3, method="decision_function")
        self.fit(X, Y)
        return scores

    def transform(self, X):
        return self.svm_.decision_function(X)


class Spec:
    """A model: how to build it for a regularisation value, and the grid to choose it from."""

    def __init__(self, name, build, grid, ours=True):
        self.name, self.build, self.grid, self.ours = name, build, grid, ours

    def scores(self, model, X):
        """Label scores for ranking (and the interactive protocol of the baselines)."""
        return model.decision_function(X)

    def bep(self, model, X, Y):
        return model.score(X, Y) if self.ours else bep_of_scores(self.scores(model, X), Y)


def make_specs(quick, seed):
    def ours(n_core=0, features=None):
        def build(C):
            steps = [StandardScaler()]
            if features == "kernel":
                steps.append(Nystroem(kernel="rbf", n_components=100 if quick else 300,
                                      random_state=seed))
            elif features == "svm":
                steps.append(SVMScores())
            return make_pipeline(*steps, LabelRankSVM(C=C, n_core=n_core))
        return build

    def linear_svc(C):
        return LinearSVC(C=C, max_iter=5000)

    grid = (1.0,) if quick else (0.1, 1.0, 10.0, 100.0)
    svc_grid = (0.1,) if quick else (0.01, 0.1, 1.0, 10.0)
    cores = (1, 5) if quick else (1, 2, 3, 4, 5)
    specs = [Spec("LabelRankSVM independent", ours(), grid)]
    specs += [Spec(f"LabelRankSVM c-star C={c}", ours(c), grid) for c in cores]
    for features, label in (("svm", "on OvR-SVM scores"), ("kernel", "RBF Nystroem")):
        specs += [Spec(f"LabelRankSVM independent, {label}", ours(0, features), grid),
                  Spec(f"LabelRankSVM c-star C=5, {label}", ours(5, features), grid)]
    specs += [
        Spec("OneVsRest(LinearSVC)",
             lambda C: make_pipeline(StandardScaler(), OneVsRestClassifier(linear_svc(C))),
             svc_grid, ours=False),
        Spec("ClassifierChain(LinearSVC)",
             lambda C: make_pipeline(StandardScaler(),
                                     ClassifierChain(linear_svc(C), order="random",
                                                     random_state=seed)),
             svc_grid, ours=False),
    ]
    return specs


def fit_quiet(model, X, Y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", DegenerateQueriesWarning)
        return model.fit(X, Y)


def select_C(spec, X, Y, seed):
    """The grid value with the best 3-fold cross-validated BEP on (X, Y)."""
    if len(spec.grid) == 1:
        return spec.grid[0]
    folds = list(KFold(3, shuffle=True, random_state=seed).split(X))
    means = [np.mean([spec.bep(fit_quiet(spec.build(C), X[tr], Y[tr]), X[te], Y[te])
                      for tr, te in folds]) for C in spec.grid]
    return spec.grid[int(np.argmax(means))]


def run_fold(spec, C, X, Y, train, test):
    model = spec.build(C)
    t0 = time.perf_counter()
    fit_quiet(model, X[train], Y[train])
    seconds = time.perf_counter() - t0
    Xte, Yte = X[test], Y[test]
    scores = spec.scores(model, Xte)
    if spec.ours:
        questions = model[-1].interactive_bep(model[:-1].transform(Xte), Yte, QUESTIONS)
    else:  # the same protocol on the baseline's scores (an independent model)
        questions = interactive_bep(scores, np.zeros(0, np.int64), np.zeros((0, Y.shape[1])),
                                    Yte == 1, QUESTIONS)
    return {"C": C, "seconds": seconds, "bep": spec.bep(model, Xte, Yte),
            "questions": questions, "lrap": label_ranking_average_precision_score(Yte, scores)}


def run_dataset(name, X, Y, specs, n_folds, seed):
    folds = list(KFold(n_folds, shuffle=True, random_state=seed).split(X))
    rows, payload = [], []
    for spec in specs:
        logger.info("%s: %s", name, spec.name)
        C = select_C(spec, X[folds[0][0]], Y[folds[0][0]], seed)
        results = [run_fold(spec, C, X, Y, tr, te) for tr, te in folds]
        q = np.mean([r["questions"] for r in results], axis=0)
        row = {"model": spec.name, "BEP": 100 * np.mean([r["bep"] for r in results])}
        row.update({f"Q{n}": 100 * v for n, v in zip(QUESTIONS[1:], q[1:])})
        row["LRAP"] = 100 * np.mean([r["lrap"] for r in results])
        row["fit s"] = float(np.median([r["seconds"] for r in results]))
        row["C"] = C
        rows.append(row)
        payload.append({"data": name, "model": spec.name, "folds": results})
    return rows, payload


def paired_rows(name, payload):
    """Per-fold BEP of each c-star model minus its independent counterpart (same features)."""
    bep = {r["model"]: np.array([f["bep"] for f in r["folds"]]) for r in payload
           if r["data"] == name}
    rows = []
    for model, values in bep.items():
        if "c-star" not in model:
            continue
        base = re.sub(r"c-star C=\d+", "independent", model)
        diff = 100 * (values - bep[base])
        rows.append({"data": name.split(" (")[0], "model": model, "vs": base,
                     "mean diff": float(diff.mean()), "min": float(diff.min()),
                     "max": float(diff.max()),
                     "folds ahead": f"{int((diff > 0).sum())}/{diff.size}"})
    return rows


def main(argv=None):
    parser = _common.make_parser(__doc__)
    parser.add_argument("--n-synthetic", type=int, default=2000,
                        help="samples of the synthetic set (default 2000)")
    args = _common.setup(parser, argv)
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            parser.error("--plot needs matplotlib: pip install 'ssvm[plot]'")
    n_folds = 2 if args.quick else 5
    n_synth = 300 if args.quick else args.n_synthetic
    emotions = load_emotions()
    Xs, Ys = correlated_multilabel(n_synth, args.seed)
    datasets = [("emotions (593 x 72, 6 labels)", emotions.X, emotions.Y),
                (f"synthetic correlated ({n_synth} x 30, 20 labels)", Xs, Ys)]
    specs = make_specs(args.quick, args.seed)
    tables, payload, all_rows = [], [], {}
    for name, X, Y in datasets:
        rows, records = run_dataset(name, X, Y, specs, n_folds, args.seed)
        all_rows[name] = rows
        payload += records
        card = Y.sum(axis=1).mean()
        tables.append(format_table(
            rows, floatfmt={"fit s": ".2f", "C": "g", "BEP": ".1f", "LRAP": ".1f",
                            **{f"Q{n}": ".1f" for n in QUESTIONS[1:]}},
            title=f"{name}, {card:.2f} labels per sample: test BEP (%) automatic and after "
                  f"Q questions, LRAP (%), median fit seconds; mean of {n_folds} folds"))
    paired = [row for name, _, _ in datasets for row in paired_rows(name, payload)]
    tables.append(format_table(paired, floatfmt="+.2f", title=(
        "c-star minus independent model (same features): test BEP difference per fold, "
        "percentage points")))
    tables.append(format_table(PAPER_TABLE, floatfmt=".1f", title=(
        "Mensink et al. 2011, Table 1 (ImageCLEF'10, 93 labels, ~12 per image): BEP (%)")))

    if args.plot:
        plt = _common.pyplot()
        fig, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets), 4), sharey=False)
        for ax, (name, _, _) in zip(np.atleast_1d(axes), datasets):
            rows = all_rows[name]
            cols = ["BEP"] + [f"Q{n}" for n in QUESTIONS[1:]]
            colors = plt.cm.tab20(np.linspace(0, 1, len(rows)))
            for row, color in zip(rows, colors):
                ax.plot(range(len(cols)), [row[c] for c in cols], "o-", color=color,
                        label=row["model"])
            ax.set_xticks(range(len(cols)), ["auto"] + cols[1:])
            ax.set_title(name, fontsize=9)
            ax.set_ylabel("test BEP (%)")
        np.atleast_1d(axes)[0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(f"{args.plot}/label_ranking.png", dpi=100)
        plt.close(fig)
    _common.emit(args, tables, {"experiment": "label_ranking", "folds": n_folds,
                                "questions": QUESTIONS, "rows": all_rows, "paired": paired,
                                "results": payload,
                                "paper_table": PAPER_TABLE})
    return 0


if __name__ == "__main__":
    sys.exit(main())
