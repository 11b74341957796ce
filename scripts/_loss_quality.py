"""Issue #35's quality comparison on the LETOR sample: the pairwise SVM (SVM^rank's objective) vs AP-SVM vs
graded NDCG-SVM vs NDCG@10-SVM vs LightGBM lambdarank vs XGBoost ``rank:ndcg``
(``exp_ranking_quality.py --datasets letor-losses``).

Protocol: the sample's rank.train and rank.test pooled (251 queries, grades 0-4) and split into
``n_folds`` folds by query (the folds of ``_graded_linear.query_folds``); per fold the QuantileTransformer
of docs/design.md §8 is fitted on the training part, and each model's hyper-parameters are chosen on an
inner query-grouped split (a quarter of the training part's queries held out) by **the measure the model
optimises**: the fraction of correctly ordered pairs for the pairwise SVM, mean AP for AP-SVM,
exponential-gain NDCG for the graded NDCG-SVM, exponential-gain NDCG@10 for the NDCG@10-SVM and for the
boosted rankers; the chosen model is refitted on the whole training part and scored on the held-out fold.
Every model gets the grades: the pairwise, NDCG and NDCG@10 SVMs and the boosters use them, AP-SVM counts
``y > 0`` as relevant. Measures per test query, in %: NDCG@10 and NDCG (gains 2^r - 1), AP and reciprocal
rank (grade > 0 relevant) and the fraction of correctly ordered pairs (a pair: two grades that differ);
the queries that count are those of ``ssvm.metrics.query_scores`` (the same for every model, since they
depend on the grades only). Paired differences are given twice: mean ± standard error over the folds
(5 values) and over the test queries (each query is a test query once).
"""

from __future__ import annotations

import time

import numpy as np
from _graded_linear import _fit, _lightgbm, _xgboost, pooled_letor, query_folds

from ssvm import RankSVM
from ssvm.metrics import query_scores

#: column -> (loss of ssvm.metrics.query_scores, its options)
MEASURES = {"NDCG@10": ("ndcg", {"gain": "exponential", "k": 10}), "NDCG": ("ndcg", {"gain": "exponential"}),
            "MAP": ("ap", {}), "MRR": ("mrr", {}), "pairs": ("pairwise", {})}
REFERENCE = "pairwise SVM"
C_GRID = (0.0001, 0.001, 0.01, 0.1, 1.0, 10.0, 100.0)
#: (model, reference, measure): issue #35's targets, model >= reference on the measure
TARGETS = (("NDCG@10-SVM", "NDCG-SVM graded", "NDCG@10"), ("AP-SVM", REFERENCE, "MAP"),
           ("NDCG-SVM graded", REFERENCE, "NDCG"), ("NDCG@10-SVM", REFERENCE, "NDCG@10"))


def _svm(loss, measure, seed, **options):
    return {"measure": measure, "grid": [{"C": C} for C in C_GRID],
            "make": lambda p: RankSVM(loss=loss, C=p["C"], random_state=seed, **options)}


def model_specs(quick, seed):
    """name -> {"measure": what selects it, "grid": hyper-parameter dicts, "make": params -> model}."""
    specs = {REFERENCE: _svm("pairwise", "pairs", seed),
             "AP-SVM": _svm("ap", "MAP", seed),
             "NDCG-SVM graded": _svm("ndcg", "NDCG", seed, gain="exponential"),
             "NDCG@10-SVM": _svm("ndcg_at_k", "NDCG@10", seed, k=10, gain="exponential")}
    trees = (10,) if quick else (100, 300)
    specs["LGBMRanker lambdarank"] = {
        "measure": "NDCG@10", "make": _lightgbm(seed),
        "grid": [{"n_estimators": n, "num_leaves": leaves} for n in trees for leaves in (7, 31)]}
    specs["XGBRanker rank:ndcg"] = {
        "measure": "NDCG@10", "make": _xgboost(seed),
        "grid": [{"n_estimators": n, "max_depth": depth} for n in trees for depth in (3, 6)]}
    return specs


def per_query(grades, scores, qid):
    """{measure: its value (%) on every test query that counts for it}."""
    return {name: 100 * np.asarray(query_scores(grades, scores, qid=qid, loss=loss, **options), dtype=float)
            for name, (loss, options) in MEASURES.items()}


def select(spec, X, grades, qid, seed):
    """The hyper-parameters of ``spec`` best on its own measure, on a quarter of the queries held out."""
    if len(spec["grid"]) == 1:
        return spec["grid"][0]
    fit, val = query_folds(qid, 4, seed + 1)[0]
    best = None
    for params in spec["grid"]:
        model = _fit(spec["make"](params), X[fit], grades[fit], qid[fit])
        value = per_query(grades[val], model.decision_function(X[val]), qid[val])[spec["measure"]].mean()
        if best is None or value > best[0]:
            best = (value, params)
    return best[1]


def _mean_se(values):
    values = np.asarray(values, dtype=float)
    return values.mean(), values.std(ddof=1) / np.sqrt(values.size)


def _fmt(values, signed=False):
    mean, se = _mean_se(values)
    return f"{mean:{'+' if signed else ''}.2f} ± {se:.2f}"


def paired(results, model, reference, measure):
    """Paired difference ``model - reference`` in ``measure``: over the folds and over the test queries."""
    folds = [a[measure].mean() - b[measure].mean() for a, b in zip(results[model], results[reference])]
    queries = np.concatenate([a[measure] - b[measure] for a, b in zip(results[model], results[reference])])
    return {"folds": folds, "queries": queries}


def table_rows(results, chosen, seconds):
    """One row per model: mean ± s.e. over the folds of each measure, and the paired difference to the
    pairwise SVM over the folds."""
    rows = []
    for model, runs in results.items():
        row = {"model": model}
        for m in MEASURES:
            row[m] = _fmt([r[m].mean() for r in runs])
        for m in MEASURES:
            row[f"Δ{m}"] = "-" if model == REFERENCE else _fmt(paired(results, model, REFERENCE, m)["folds"], True)
        row["chosen"] = "; ".join(f"{c} x{n}" if n > 1 else c for c, n in
                                  sorted(((c, chosen[model].count(c)) for c in dict.fromkeys(chosen[model])),
                                         key=lambda item: -item[1]))
        row["fit s"] = float(np.median(seconds[model]))
        rows.append(row)
    return rows


def target_rows(results):
    """One row per target of issue #35: the paired difference, its s.e. over folds and over queries, and the
    folds the model wins."""
    rows = []
    for model, reference, measure in TARGETS:
        d = paired(results, model, reference, measure)
        rows.append({"target": f"{model} ≥ {reference} in {measure}", "Δ over folds": _fmt(d["folds"], True),
                     "Δ over queries": _fmt(d["queries"], True), "queries": int(d["queries"].size),
                     "folds won": f"{int(np.sum(np.array(d['folds']) >= 0))}/{len(d['folds'])}",
                     "met": bool(np.mean(d["folds"]) >= 0)})
    return rows


def loss_comparison(quick, seed, n_folds, logger):
    """(rows, target rows, payload) of the comparison (see the module docstring)."""
    import warnings

    from sklearn.preprocessing import QuantileTransformer

    from ssvm.exceptions import DegenerateQueriesWarning

    warnings.filterwarnings("ignore", category=DegenerateQueriesWarning)  # all-relevant queries (AP-SVM)
    X, grades, qid = pooled_letor(quick)
    specs = model_specs(quick, seed)
    if quick:
        specs = {name: {**spec, "grid": spec["grid"][1:2]} for name, spec in specs.items()}
    results = {name: [] for name in specs}
    chosen = {name: [] for name in specs}
    seconds = {name: [] for name in specs}
    for fold, (train, test) in enumerate(query_folds(qid, n_folds, seed)):
        scaler = QuantileTransformer(output_distribution="normal", n_quantiles=200).fit(X[train])
        Xtr, Xte = scaler.transform(X[train]), scaler.transform(X[test])
        for name, spec in specs.items():
            params = select(spec, Xtr, grades[train], qid[train], seed)
            start = time.perf_counter()
            model = _fit(spec["make"](params), Xtr, grades[train], qid[train])
            seconds[name].append(time.perf_counter() - start)
            results[name].append(per_query(grades[test], model.decision_function(Xte), qid[test]))
            chosen[name].append(", ".join(f"{a}={b:g}" for a, b in params.items()))
            logger.info("fold %d %s (%s, final fit %.1f s): %s", fold, name, chosen[name][-1], seconds[name][-1],
                        {m: round(float(v.mean()), 2) for m, v in results[name][-1].items()})
    rows, targets = table_rows(results, chosen, seconds), target_rows(results)
    payload = {"rows": rows, "targets": targets, "n_folds": n_folds, "n_queries": int(np.unique(qid).size),
               "per_fold": {name: [{m: float(v.mean()) for m, v in run.items()} for run in runs]
                            for name, runs in results.items()}}
    return rows, targets, payload
