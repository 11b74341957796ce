"""Graded relevance with linear models on the LETOR sample: graded vs binary NDCG-SVM vs AP-SVM vs
LightGBM lambdarank vs XGBoost ``rank:ndcg`` (``exp_ranking_quality.py --datasets letor-graded``).

Protocol: the sample's rank.train and rank.test pooled (251 queries, grades 0-4) and split into
``n_folds`` folds by query (``GroupKFold`` on a seeded shuffle of the query ids); per fold, the
QuantileTransformer of docs/design.md §8 is fitted on the training part, every model's hyper-parameters are
chosen on a validation quarter of the training part's queries (per-query exponential-gain NDCG,
the measure every model is judged by; the test fold is never seen), the chosen model is refitted on
the whole training part and scored on the held-out fold: exponential-gain NDCG (full list), NDCG@10 and
mean AP (grade > 0 relevant), each the mean over the fold's queries. The table gives each model's
mean ± standard error over the folds and the paired difference to the graded NDCG-SVM.
"""

from __future__ import annotations

import time

import numpy as np
from _graded import METRICS, graded_metrics, paired_rows

from ssvm import RankSVM
from ssvm.datasets import load_letor_sample

REFERENCE = "NDCG-SVM graded (exp gains)"
C_GRID = (0.1, 1.0, 10.0, 100.0)


def _svm(factory):
    return {"grid": [{"C": C} for C in C_GRID], "make": factory}


def model_specs(quick, seed):
    """name -> {"grid": list of hyper-parameter dicts, "make": params -> unfitted model}."""
    specs = {
        REFERENCE: _svm(lambda p: RankSVM(loss="ndcg", gain="exponential", C=p["C"], random_state=seed)),
        "NDCG-SVM graded (linear gains)": _svm(lambda p: RankSVM(loss="ndcg", gain="linear", C=p["C"],
                                                                random_state=seed)),
        "NDCG-SVM binary": _svm(lambda p: RankSVM(loss="ndcg", gain="binary", C=p["C"], random_state=seed)),
        "AP-SVM": _svm(lambda p: RankSVM(loss="ap", C=p["C"], random_state=seed)),
    }
    trees = (10,) if quick else (100, 300)
    specs["LGBMRanker lambdarank"] = {
        "grid": [{"n_estimators": n, "num_leaves": leaves} for n in trees for leaves in (7, 31)],
        "make": _lightgbm(seed)}
    specs["XGBRanker rank:ndcg"] = {
        "grid": [{"n_estimators": n, "max_depth": depth} for n in trees for depth in (3, 6)],
        "make": _xgboost(seed)}
    return specs


class _GroupedBooster:
    """A LightGBM / XGBoost ranker fitted on rows grouped by query (sorted by qid first)."""

    def __init__(self, model, xgboost):
        self.model, self.xgboost = model, xgboost

    def fit(self, X, grades, qid):
        order = np.argsort(qid, kind="stable")
        if self.xgboost:
            self.model.fit(X[order], grades[order], qid=qid[order])
        else:
            self.model.fit(X[order], grades[order], group=np.unique(qid, return_counts=True)[1])
        return self

    def decision_function(self, X):
        return self.model.predict(X)


def _lightgbm(seed):
    def make(p):
        from lightgbm import LGBMRanker

        return _GroupedBooster(LGBMRanker(objective="lambdarank", learning_rate=0.05, min_child_samples=5,
                                          lambdarank_truncation_level=10_000, random_state=seed, n_jobs=1,
                                          verbose=-1, **p), xgboost=False)
    return make


def _xgboost(seed):
    def make(p):
        from xgboost import XGBRanker

        return _GroupedBooster(XGBRanker(objective="rank:ndcg", learning_rate=0.1, tree_method="hist",
                                         random_state=seed, n_jobs=1, **p), xgboost=True)
    return make


def _fit(model, X, grades, qid):
    if isinstance(model, RankSVM):
        return model.fit(X, grades, qid=qid)  # grades: the NDCG-SVMs use them with their gain
    return model.fit(X, grades, qid)


def pooled_letor(quick):
    """Features (dense), grades and query ids of rank.train and rank.test pooled (``quick``: 32
    queries)."""
    parts = [load_letor_sample(split) for split in ("train", "test")]
    X = np.vstack([p[0].toarray() for p in parts])
    grades = np.concatenate([p[1] for p in parts]).astype(np.int64)
    qid = np.concatenate([p[2] + 10_000 * i for i, p in enumerate(parts)])
    if quick:
        keep = np.isin(qid, np.unique(qid)[::4][:32])
        X, grades, qid = X[keep], grades[keep], qid[keep]
    return X, grades, qid


def query_folds(qid, n_folds, seed):
    """``GroupKFold`` splits of the rows by query, on a seeded relabelling of the query ids."""
    from sklearn.model_selection import GroupKFold

    uniq, inverse = np.unique(qid, return_inverse=True)
    shuffled = np.random.default_rng(seed).permutation(uniq.size)[inverse]
    return list(GroupKFold(n_splits=n_folds).split(qid, groups=shuffled))


def select(spec, X, grades, qid, seed):
    """The hyper-parameters of ``spec`` with the best mean NDCG on a quarter of the queries held out."""
    if len(spec["grid"]) == 1:  # nothing to choose (--quick)
        return spec["grid"][0]
    fit, val = query_folds(qid, 4, seed + 1)[0]
    best = None
    for params in spec["grid"]:
        model = _fit(spec["make"](params), X[fit], grades[fit], qid[fit])
        value = graded_metrics(grades[val], model.decision_function(X[val]), qid[val])["NDCG"]
        if best is None or value > best[0]:
            best = (value, params)
    return best[1]


def graded_comparison(quick, seed, n_folds, logger):
    """(rows, payload) of the comparison (see the module docstring)."""
    import warnings

    from ssvm.exceptions import DegenerateQueriesWarning

    warnings.filterwarnings("ignore", category=DegenerateQueriesWarning)  # all-relevant queries (binary)
    from sklearn.preprocessing import QuantileTransformer

    X, grades, qid = pooled_letor(quick)
    specs = model_specs(quick, seed)
    if quick:
        specs = {name: {**spec, "grid": spec["grid"][1:2]} for name, spec in specs.items()}
    results = {name: [] for name in specs}
    for k, (train, test) in enumerate(query_folds(qid, n_folds, seed)):
        scaler = QuantileTransformer(output_distribution="normal", n_quantiles=200).fit(X[train])
        Xtr, Xte = scaler.transform(X[train]), scaler.transform(X[test])
        for name, spec in specs.items():
            params = select(spec, Xtr, grades[train], qid[train], seed)
            start = time.perf_counter()
            model = _fit(spec["make"](params), Xtr, grades[train], qid[train])
            seconds = time.perf_counter() - start
            metrics = graded_metrics(grades[test], model.decision_function(Xte), qid[test])
            results[name].append({**metrics, "chosen": ", ".join(f"{a}={b:g}" for a, b in params.items()),
                                  "fit s": seconds})
            logger.info("fold %d %s (%s, final fit %.1f s): %s", k, name, results[name][-1]["chosen"], seconds,
                        {m: round(metrics[m], 2) for m in METRICS})
    rows = paired_rows(results, REFERENCE, extra=("chosen", "fit s"))
    payload = {"rows": rows, "per_fold": results, "n_folds": n_folds, "n_queries": int(np.unique(qid).size),
               "n_documents": int(qid.size)}
    return rows, payload
