"""Graded relevance with an MLP on the LETOR sample (``exp_deep_rank_losses.py --parts graded``): the
graded NDCG hinge against the binary one, cross-entropy and a LambdaLoss NDCG-Loss2++ network, and
diagnostic variants that test why the hinge family trails LambdaLoss.

Protocol: rank.train and rank.test pooled (251 queries, grades 0-4), five query folds; seed k holds
out fold k as the test set, splits the other queries 80/20 into fit / validation parts (by query)
and initialises the network with seed k. QuantileTransformer (docs/design.md §8) fitted on the fit part; an
MLP d-128-64-1 trained with Adam on batches of 16 queries (one epoch = one pass over the fit
queries; ``full batch`` variants take the same number of steps on all the fit queries); Adam's
learning rate (and ε of the direct loss) and the epoch are chosen by the validation
exponential-gain NDCG, the same for every method, and the chosen epoch's test metrics reported.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from _deep import mlp
from _graded import METRICS, graded_metrics, padded, paired_rows, pairwise_loss
from _graded_linear import pooled_letor, query_folds

from ssvm.metrics import mean_ndcg
from ssvm.nn import DirectRankLoss, RankHingeLoss

REFERENCE = "hinge-NDCG graded (exp gains)"
MAIN = (REFERENCE, "hinge-NDCG graded (linear gains)", "hinge-NDCG binary", "x-ent", "lambdaLoss NDCG-Loss2++")
#: method -> (loss kind, options); "scale" multiplies the scores the loss sees, "batch" None = full batch
METHODS = {
    REFERENCE: ("graded", {"gain": "exponential"}),
    "hinge-NDCG graded (linear gains)": ("graded", {"gain": "linear"}),
    "hinge-NDCG binary": ("binary", {}),
    "x-ent": ("x-ent", {}),
    "lambdaLoss NDCG-Loss2++": ("pairs", {"weights": "ndcg2++", "surrogate": "logistic"}),
    "RankNet (lambdaLoss, uniform pair weights)": ("pairs", {"weights": "uniform", "surrogate": "logistic"}),
    "pairwise hinge, NDCG-Loss2++ weights": ("pairs", {"weights": "ndcg2++", "surrogate": "hinge"}),
    "hinge-NDCG graded, scores x 10": ("graded", {"gain": "exponential", "scale": 10.0}),
    "hinge-NDCG graded, scores x 0.1": ("graded", {"gain": "exponential", "scale": 0.1}),
    "pos-NDCG graded (direct loss)": ("direct", {"gain": "exponential"}),
    "hinge-NDCG graded, full batch": ("graded", {"gain": "exponential", "batch": None}),
    "lambdaLoss NDCG-Loss2++, full batch": ("pairs", {"weights": "ndcg2++", "surrogate": "logistic",
                                                      "batch": None}),
}
EPSILONS = (0.1, 1.0)
#: (question, method, against): the paired contrasts that isolate one candidate cause of the gap
CONTRASTS = (
    ("ΔNDCG pair weights, logistic loss", "lambdaLoss NDCG-Loss2++", "RankNet (lambdaLoss, uniform pair weights)"),
    ("logistic vs hinge, same pair weights", "lambdaLoss NDCG-Loss2++", "pairwise hinge, NDCG-Loss2++ weights"),
    ("weighted pairs vs the structured hinge's 1/(P_t N_t)", "pairwise hinge, NDCG-Loss2++ weights", REFERENCE),
    ("grades: graded vs binary hinge", REFERENCE, "hinge-NDCG binary"),
    ("margin 10x larger than the scores' scale", "hinge-NDCG graded, scores x 0.1", REFERENCE),
    ("margin 10x smaller than the scores' scale", "hinge-NDCG graded, scores x 10", REFERENCE),
    ("direct loss vs hinge, graded", "pos-NDCG graded (direct loss)", REFERENCE),
    ("full batch vs 16 queries, hinge", "hinge-NDCG graded, full batch", REFERENCE),
    ("full batch vs 16 queries, lambdaLoss", "lambdaLoss NDCG-Loss2++, full batch", "lambdaLoss NDCG-Loss2++"),
    ("the target: graded hinge vs lambdaLoss", REFERENCE, "lambdaLoss NDCG-Loss2++"),
)


def make_objective(method, epsilon=None):
    """``f(scores, grades, qid) -> loss`` of a method (grades a float tensor, qid a numpy array)."""
    kind, options = METHODS[method]
    scale = options.get("scale", 1.0)
    if kind in ("graded", "binary"):
        loss = RankHingeLoss("ndcg", gain=options.get("gain", "binary"))
        return lambda s, r, q: loss(scale * s, r, q)
    if kind == "direct":
        loss = DirectRankLoss("ndcg", epsilon=epsilon, direction="positive", gain=options["gain"])
        return lambda s, r, q: loss(s, r, q)
    if kind == "x-ent":
        return lambda s, r, q: torch.nn.functional.binary_cross_entropy_with_logits(s, (r > 0).to(s.dtype))

    def pairs(s, r, q):
        index, mask = padded(q)
        return pairwise_loss(s, r, index, mask, weights=options["weights"], surrogate=options["surrogate"])

    return pairs


def fold_data(X, grades, qid, train, test, seed):
    """Fit / validation / test parts ``(X tensor, grades tensor, qid array)``, quantile-normalised."""
    from sklearn.preprocessing import QuantileTransformer

    queries = np.unique(qid[train])
    val_queries = np.random.default_rng(seed).choice(queries, size=max(2, queries.size // 5), replace=False)
    val = train[np.isin(qid[train], val_queries)]
    fit = train[~np.isin(qid[train], val_queries)]
    scaler = QuantileTransformer(output_distribution="normal", n_quantiles=200).fit(X[fit])

    def part(rows):
        return (torch.as_tensor(scaler.transform(X[rows]), dtype=torch.float32),
                torch.as_tensor(grades[rows], dtype=torch.float32), qid[rows])

    return part(fit), part(val), part(test)


def train_run(method, fit, val, seed, *, lr, epsilon, epochs, batch_queries):
    """Adam on ``method``'s loss; returns (best validation NDCG, its epoch, test-set network or None).

    The network's state at the best validation epoch is kept (``net`` reloaded with it)."""
    torch.manual_seed(seed)
    X, r, q = fit
    net = mlp([X.shape[1], 128, 64, 1])
    optimiser = torch.optim.Adam(net.parameters(), lr=lr)
    objective = make_objective(method, epsilon)
    queries = [np.flatnonzero(q == k) for k in np.unique(q)]
    rng = np.random.default_rng(seed)
    size = METHODS[method][1].get("batch", batch_queries)
    n_batches = int(np.ceil(len(queries) / batch_queries))
    best = (-np.inf, 0, None)
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(queries))
        for b in range(n_batches):
            picked = order if size is None else order[b * size:(b + 1) * size]
            rows = torch.as_tensor(np.concatenate([queries[k] for k in picked]))
            optimiser.zero_grad(set_to_none=True)
            try:
                loss = objective(net(X[rows])[:, 0], r[rows], q[rows.numpy()])
            except ValueError:  # a batch without an informative query, or NaN scores
                continue
            loss.backward()
            optimiser.step()
        with torch.no_grad():
            scores = net(val[0])[:, 0].numpy()
        if not np.all(np.isfinite(scores)):
            break
        value = mean_ndcg(val[1].numpy(), scores, qid=val[2], gain="exponential")
        if value > best[0]:
            best = (value, epoch, {k: v.clone() for k, v in net.state_dict().items()})
    if best[2] is not None:
        net.load_state_dict(best[2])
    return best[0], best[1], net


def graded_part(args, sizes, logger):
    """(table, payload) of the graded MLP comparison; ``sizes`` keys ``graded_*`` and ``lrs``."""
    from _common import format_table

    X, grades, qid = pooled_letor(args.quick)
    folds = query_folds(qid, 5, args.seed)[: sizes["graded_seeds"]]
    methods = sizes.get("graded_methods") or tuple(METHODS)
    results = {m: [] for m in methods}
    for k, (train, test) in enumerate(folds):
        seed = args.seed + k
        fit, val, test_part = fold_data(X, grades, qid, train, test, seed)
        for method in methods:
            start = time.perf_counter()
            best = None
            for lr in sizes["graded_lrs"]:
                for eps in EPSILONS if METHODS[method][0] == "direct" else (None,):
                    value, epoch, net = train_run(method, fit, val, seed, lr=lr, epsilon=eps,
                                                  epochs=sizes["graded_epochs"], batch_queries=16)
                    if best is None or value > best[0]:
                        best = (value, epoch, net, lr, eps)
            value, epoch, net, lr, eps = best
            with torch.no_grad():
                metrics = graded_metrics(test_part[1].numpy(), net(test_part[0])[:, 0].numpy(), test_part[2])
            chosen = f"lr={lr:g}" + ("" if eps is None else f", eps={eps:g}")
            results[method].append({**metrics, "chosen": chosen, "epoch": epoch,
                                    "s/method": time.perf_counter() - start})
            logger.info("graded seed %d %s (%s): %s", seed, method, chosen, {m: round(metrics[m], 2) for m in METRICS})
    rows = paired_rows(results, REFERENCE, extra=("chosen", "epoch", "s/method"))
    title = (f"Graded relevance, MLP {X.shape[1]}-128-64-1 on the pooled LETOR sample: test exponential-gain "
             f"NDCG, NDCG@10 and AP (%), mean ± s.e. over {len(folds)} seeds (each its own test fold), and the "
             f"paired difference to the graded hinge; lr in {list(sizes['graded_lrs'])} and the epoch "
             f"(of {sizes['graded_epochs']}, batches of 16 queries) by validation NDCG")
    contrasts = contrast_rows(results)
    tables = format_table(rows, title=title)
    if contrasts:
        tables += "\n\n" + format_table(contrasts, title=(
            "Paired contrasts (mean ± s.e. over the seeds of method − against, exponential-gain NDCG / NDCG@10, "
            "points; 'wins' = seeds where the method is ahead in NDCG)"))
    return tables, {"rows": rows, "per_seed": results, "contrasts": contrasts}


def contrast_rows(results):
    """One row per :data:`CONTRASTS` entry whose two methods ran."""
    rows = []
    for question, method, against in CONTRASTS:
        if method not in results or against not in results:
            continue
        row = {"question": question, "method": method, "against": against}
        for m in ("NDCG", "NDCG@10"):
            d = np.array([a[m] - b[m] for a, b in zip(results[method], results[against])])
            row[f"Δ{m}"] = f"{d.mean():+.2f} ± {d.std(ddof=1) / np.sqrt(d.size):.2f}"
            if m == "NDCG":
                row["wins"] = f"{int(np.sum(d > 0))}/{d.size}"
        rows.append(row)
    return rows
