"""Deep networks trained on rank losses: Song et al.'s (ICML 2016) experiments and the QS paper's.

Parts (``--parts``, default all):

* ``song``: Song et al. section 4.1 / Fig. 3a. A 4-layer ReLU teacher (10 -> 32 -> 32 -> 32 -> 1,
  weights and biases N(0, 1)) scores 20,000 10-d Gaussian inputs; the top 20% are positive; a random
  10,000 / 10,000 train / test split. A student of the same shape (PyTorch's initialisation) is trained
  full-batch with each method; hyper-parameters (Adam's learning rate, ε) by the best final *training*
  AP, as in the paper. Test AP against iterations.
* ``noise``: Song et al. Fig. 3b. 1,000 10-d points from N(0, 10² I), positive if ||x||² > 1200,
  negative if < 1000, 0-40% of the training labels flipped, a clean test set of 1,000; the same
  network on x / 10; hinge-AP vs pos-AP vs x-ent; hyper-parameters by AP on a quarter of the (noisy)
  training set held out, the reported model trained on the other three quarters; several seeds.
* ``digits``: the QS paper's network training on data that runs here: a small CNN (conv 8, conv 16,
  max-pool, 64, 10 scores) on scikit-learn's digits, one-vs-rest (every class's scores one query),
  stratified 70/30 split; x-ent is softmax cross-entropy.
* ``letor``: an MLP ranker (300 -> 64 -> 64 -> 1, quantile-normalised features) on the bundled LETOR
  sample (``ssvm.datasets.load_letor_sample``; ``--data DIR`` for other files) with query ids, next to
  LightGBM's ``LGBMRanker`` (lambdarank, truncation covering every query);
  relevance > 0 is relevant for every model.
* ``graded``: the LETOR sample's grades (0-4): an MLP trained with the graded NDCG hinge (docs/design.md §9)
  against the binary hinge, cross-entropy and a LambdaLoss NDCG-Loss2++ network written here (Wang
  et al., CIKM 2018), plus variants that test why the hinge trails LambdaLoss (pair weights, score
  scale, the graded direct loss, batch composition); protocol in ``scripts/_graded_deep.py``.
* ``timing``: the share of a training step spent in the loss with each exact oracle for the hinge
  (QS vs Yue / Chakrabarti / search / the DP), on the three data sets above: the QS paper's
  1.589 h vs 1.974 h point (section 4.2, layer-wise training on CIFAR-10).

``digits`` and ``letor`` pick hyper-parameters on a held-out fifth of the training set (queries kept
whole) by the validation metric of the method's own task loss (NDCG for the NDCG losses, AP
otherwise) and report the chosen run's test mean AP / NDCG. Every network trains full-batch with
Adam. PyTorch and numpy's BLAS run single-threaded (``--threads``): on a shared machine their spinning worker threads
stall when other jobs hold the cores.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import _common
import numpy as np
import torch
from _common import flip_labels, format_table, logger, sample_song
from _deep import METHODS, limit_threads, make_loss, mlp, train, uses_epsilon
from _graded_deep import graded_part

from ssvm.metrics import mean_average_precision, mean_ndcg

PARTS = ("song", "noise", "digits", "letor", "graded", "timing")
SONG_METHODS = ("x-ent", "hinge-AP", "pos-AP", "neg-AP", "hinge-01", "pos-01", "neg-01", "per-AP", "per-01")
NOISE_METHODS = ("x-ent", "hinge-AP", "pos-AP")
QS_METHODS = ("x-ent", "hinge-AP", "hinge-NDCG", "pos-AP", "hinge-01")
#: Song et al. Table 1 (VOC 2012 action classification, mean test AP over 10 classes) per noise level
SONG_TABLE1 = {0.0: (68.0, 69.9, 69.5), 0.1: (59.7, 60.1, 62.5), 0.2: (47.3, 45.7, 57.8),
               0.3: (31.7, 30.0, 45.9), 0.4: (18.2, 16.8, 29.6)}
#: the QS paper, section 4.2 (CIFAR-10, layer-wise training): test metric and total training hours
QS_PAPER = {"AP": {"hinge": 85.28, "0-1": 84.22, "hours": {"qs": 1.589, "yue": 1.974}},
            "NDCG": {"hinge": 96.14, "0-1": 95.31, "hours": {"qs": 1.632, "chakrabarti": 2.217}}}


def ranking_metrics(scores, relevant, qid=None):
    """Mean AP and mean NDCG (binary gains) over the queries with a relevant and an irrelevant row."""
    return {"AP": mean_average_precision(relevant, scores, qid=qid), "NDCG": mean_ndcg(relevant, scores, qid=qid)}


def grid(method, lrs, epsilons):
    """(lr, ε) pairs tried for a method (ε is None where the method has none)."""
    return [(lr, eps) for lr in lrs for eps in (epsilons if uses_epsilon(method) else (None,))]


def selection_metric(method):
    """The validation metric a method is tuned by: its own task loss's."""
    return "NDCG" if "NDCG" in method else "AP"


def warm_up(methods):
    """Call every loss once (imports, work arrays), so that no timed step pays for a first call."""
    scores, target = torch.randn(64), torch.arange(64) % 4 == 0
    for method in methods:
        make_loss(method, 0.1)(scores, target)
    for oracle in ("qs", "yue", "search", "dp"):
        make_loss("hinge-AP", oracle=oracle)(scores, target)
    make_loss("hinge-NDCG", oracle="chakrabarti")(scores, target)


# ------------------------------------------------------------------ Song et al. 4.1 (Fig. 3a)


def song_data(n, width, seed):
    """Teacher-labelled inputs, split in halves: (X_train, y_train, X_test, y_test)."""
    torch.manual_seed(seed)
    teacher = mlp([10, width, width, width, 1], weight_std=1.0)
    X = torch.randn(n, 10)
    with torch.no_grad():
        s = teacher(X)[:, 0]
    y = s >= torch.quantile(s, 0.8)
    perm = torch.randperm(n)
    train_idx, test_idx = perm[: n // 2], perm[n // 2:]
    return X[train_idx], y[train_idx], X[test_idx], y[test_idx]


def song_part(args, sizes):
    n, width, iterations = sizes["song_n"], sizes["width"], sizes["song_iterations"]
    X, y, X_test, y_test = song_data(n, width, args.seed)
    checkpoints = [c for c in (0, 10, 30, 100, 300, 1000, 3000) if c <= iterations]
    rows, payload = [], []
    for method in SONG_METHODS:
        best = None
        for lr, eps in grid(method, sizes["lrs"], sizes["epsilons"]):
            torch.manual_seed(args.seed + 1)  # the same student initialisation for every run
            net = mlp([10, width, width, width, 1])
            loss = make_loss(method, eps or 0.1)
            start = time.perf_counter()
            run = train(net, X, lambda out: loss(out[:, 0], y), iterations=iterations, lr=lr,  # noqa: B023
                        checkpoints=checkpoints,
                        evaluate=lambda m: ranking_metrics(m(X_test)[:, 0].numpy(), y_test.numpy()))
            seconds = time.perf_counter() - start
            with torch.no_grad():
                train_ap = np.nan if run.diverged else ranking_metrics(net(X)[:, 0].numpy(), y.numpy())["AP"]
            payload.append({"method": method, "lr": lr, "epsilon": eps, "train_ap": train_ap,
                            "curve": [(it, m["AP"]) for it, m in run.curve], "seconds": seconds,
                            "loss_share": run.loss_share, "diverged": run.diverged})
            logger.info("song %s lr=%g eps=%s: train AP %.4f (%.1f s)", method, lr, eps, train_ap, seconds)
            if best is None or train_ap > best[0]:
                best = (train_ap, lr, eps, run, seconds)
        train_ap, lr, eps, run, seconds = best
        row = {"method": method, "lr": lr, "eps": "-" if eps is None else eps}
        row.update({f"it {it}": m["AP"] for it, m in run.curve})
        row.update({"train AP": train_ap, "s/run": seconds, "loss %": 100 * run.loss_share})
        rows.append(row)
    title = (f"Song et al. 4.1 (Fig. 3a): test AP against full-batch iterations; {n} examples "
             f"({n // 2} train / {n // 2} test, 20% positive), 4-layer ReLU teacher and student of width "
             f"{width}; lr in {list(sizes['lrs'])}, eps in {list(sizes['epsilons'])} by final training AP")
    return format_table(rows, title=title), {"rows": rows, "runs": payload, "checkpoints": checkpoints}


# ------------------------------------------------------------------ Song et al. Fig. 3b


def noise_part(args, sizes):
    rates, n, width, iterations = sizes["rates"], sizes["noise_n"], sizes["width"], sizes["noise_iterations"]
    seeds = [args.seed + k for k in range(sizes["seeds"])]
    results = {}
    for seed in seeds:
        rng = np.random.default_rng(seed)
        X_np, y_np = sample_song(n, rng)
        X_test_np, y_test_np = sample_song(n, rng)
        X = torch.as_tensor(X_np / 10.0, dtype=torch.float32)
        X_test = torch.as_tensor(X_test_np / 10.0, dtype=torch.float32)
        fit, val = slice(0, 3 * n // 4), slice(3 * n // 4, n)
        for rate in rates:
            noisy = torch.as_tensor(flip_labels(y_np, rate, rng) > 0)
            for method in NOISE_METHODS:
                best = None
                for lr, eps in grid(method, sizes["lrs"], sizes["epsilons"]):
                    torch.manual_seed(seed)
                    net = mlp([10, width, width, width, 1])
                    loss = make_loss(method, eps or 0.1)
                    run = train(net, X[fit], lambda out: loss(out[:, 0], noisy[fit]),  # noqa: B023
                                iterations=iterations, lr=lr)
                    if run.diverged:
                        continue
                    with torch.no_grad():
                        val_ap = ranking_metrics(net(X[val])[:, 0].numpy(), noisy[val].numpy())["AP"]
                        test_ap = ranking_metrics(net(X_test)[:, 0].numpy(), y_test_np > 0)["AP"]
                    if best is None or val_ap > best[0]:
                        best = (val_ap, test_ap, lr, eps)
                results.setdefault((rate, method), []).append(best)
            logger.info("noise seed %d rate %.1f: %s", seed, rate,
                        {m: round(results[(rate, m)][-1][1], 4) for m in NOISE_METHODS})
    rows = []
    for rate in rates:
        row = {"flipped": f"{100 * rate:.0f}%"}
        for method in NOISE_METHODS:
            row[method] = float(np.median([b[1] for b in results[(rate, method)]]))
        diffs = [p[1] - h[1] for p, h in zip(results[(rate, "pos-AP")], results[(rate, "hinge-AP")])]
        row["pos-AP ahead of hinge-AP"] = f"{sum(d > 0 for d in diffs)}/{len(diffs)} seeds"
        if rate in SONG_TABLE1:
            row.update(dict(zip(("paper x-ent", "paper hinge-AP", "paper pos-AP"), SONG_TABLE1[rate])))
        rows.append(row)
    title = (f"Song et al. Fig. 3b (noisy ball): test AP, median of {len(seeds)} seed(s); {n} train "
             f"({3 * n // 4} fit / {n // 4} validation, noisy) / {n} clean test points, {iterations} "
             f"full-batch iterations; 'paper' = Song et al. Table 1 (VOC action, mean AP %) at that noise")
    payload = [{"rate": r, "method": m, "val_ap": b[0], "test_ap": b[1], "lr": b[2], "epsilon": b[3]}
               for (r, m), bests in results.items() for b in bests]
    return format_table(rows, title=title, floatfmt=".4f"), {"rows": rows, "runs": payload, "seeds": seeds}


# ------------------------------------------------------------------ the QS paper's network training


class _DigitsCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2))
        self.head = mlp([16 * 4 * 4, 64, 10])

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def _one_vs_rest(scores, labels):
    """Every class's column as one query: (scores, relevance, qid) flattened class after class."""
    n, k = scores.shape
    relevant = labels[None, :] == torch.arange(k)[:, None]
    return scores.T.reshape(-1), relevant.reshape(-1), torch.arange(k).repeat_interleave(n)


def _digits_metrics(net, X, labels):
    scores = net(X)
    s, rel, qid = _one_vs_rest(scores, labels)
    return ranking_metrics(s.numpy(), rel.numpy(), qid.numpy())


def _digits_objective(method, eps, oracle, labels):
    if method == "x-ent":
        return lambda out: torch.nn.functional.cross_entropy(out, labels)
    loss = make_loss(method, eps or 0.1, oracle=oracle)
    return lambda out: loss(*_one_vs_rest(out, labels))


def digits_data(seed):
    """(X_fit, y_fit, X_val, y_val, X_test, y_test) images of the stratified 70/30 split, a fifth of
    the training part held out."""
    from sklearn.model_selection import train_test_split

    from ssvm.datasets import load_ranking_task, split_ranking_task

    task = load_ranking_task("digits")
    X_train, X_test, y_train, y_test = split_ranking_task(task, test_size=0.3, random_state=seed)
    X_fit, X_val, y_fit, y_val = train_test_split(X_train, y_train, test_size=0.2, random_state=seed,
                                                  stratify=y_train)

    def images(X):
        return torch.as_tensor(X / 16.0, dtype=torch.float32).reshape(-1, 1, 8, 8)

    return (images(X_fit), torch.as_tensor(y_fit), images(X_val), torch.as_tensor(y_val),
            images(X_test), torch.as_tensor(y_test))


def letor_split(split, root=None):
    """``(X, relevance, qid)`` of the bundled LETOR sample, or of ``root/rank.<split>`` (with its
    ``.query`` file) when a directory is given."""
    from ssvm.datasets import load_letor, load_letor_sample

    if root is None:
        return load_letor_sample(split)
    return load_letor(Path(root) / f"rank.{split}", n_features=300)


def letor_data(root, seed):
    """Quantile-normalised dense LETOR features with query ids: fit / validation / test parts."""
    from sklearn.preprocessing import QuantileTransformer

    from ssvm.datasets import split_by_query

    X, rel, qid = letor_split("train", root)
    X_test, rel_test, qid_test = letor_split("test", root)
    fit, val = split_by_query(qid, test_size=0.2, random_state=seed)
    scaler = QuantileTransformer(output_distribution="normal", n_quantiles=1000, random_state=seed)
    scaler.fit(X[fit].toarray())

    def part(X, rel, qid):
        return (torch.as_tensor(scaler.transform(X.toarray()), dtype=torch.float32),
                torch.as_tensor(rel > 0), torch.as_tensor(qid))

    return part(X[fit], rel[fit], qid[fit]), part(X[val], rel[val], qid[val]), part(X_test, rel_test, qid_test)


def _ranking_objective(method, eps, oracle, target, qid=None):
    """The loss of a one-score network's output on ``target`` (queries ``qid``; None: one query)."""
    loss = make_loss(method, eps or 0.1, oracle=oracle)
    return lambda out: loss(out[:, 0], target, qid)


def _letor_metrics(net, X, target, qid):
    return ranking_metrics(net(X)[:, 0].numpy(), target.numpy(), qid.numpy())


def _tuned(methods, make_net, fit, val, test, objective, metrics, sizes, iterations, label):
    """Per method: the run with the best validation metric, and its test metrics."""
    rows = []
    for method in methods:
        best = None
        for lr, eps in grid(method, sizes["lrs"], sizes["epsilons"]):
            torch.manual_seed(sizes["seed"])
            net = make_net()
            start = time.perf_counter()
            run = train(net, fit[0], objective(method, eps, "auto", *fit[1:]), iterations=iterations, lr=lr)
            seconds = time.perf_counter() - start
            if run.diverged:
                continue
            with torch.no_grad():
                score = metrics(net, *val)[selection_metric(method)]
                test_metrics = metrics(net, *test)
            logger.info("%s %s lr=%g eps=%s: validation %.4f", label, method, lr, eps, score)
            if best is None or score > best[0]:
                best = (score, lr, eps, test_metrics, seconds, run.loss_share)
        score, lr, eps, test_metrics, seconds, share = best
        rows.append({"model": method, "lr": lr, "eps": "-" if eps is None else eps,
                     "validation": score, "test mean AP": test_metrics["AP"],
                     "test mean NDCG": test_metrics["NDCG"], "fit s": seconds, "loss %": 100 * share})
    return rows


def digits_part(args, sizes):
    X_fit, y_fit, X_val, y_val, X_test, y_test = digits_data(args.seed)
    rows = _tuned(QS_METHODS, _DigitsCNN, (X_fit, y_fit), (X_val, y_val), (X_test, y_test),
                  _digits_objective, _digits_metrics, {**sizes, "seed": args.seed},
                  sizes["digits_iterations"], "digits")
    paper = {"hinge-AP": ("AP", "hinge"), "hinge-NDCG": ("NDCG", "hinge"), "hinge-01": ("AP", "0-1")}
    for row in rows:
        metric, which = paper.get(row["model"], (None, None))
        row["paper (CIFAR-10)"] = f"{metric} {QS_PAPER[metric][which]}" if metric else "-"
        if row["model"] == "hinge-01":
            row["paper (CIFAR-10)"] += f" / NDCG {QS_PAPER['NDCG']['0-1']}"
    title = (f"QS paper 4.2 on digits: CNN, one-vs-rest (10 queries per batch), {sizes['digits_iterations']} "
             f"full-batch iterations on {len(y_fit)} images ({len(y_val)} validation, {len(y_test)} test); "
             "'paper' = the QS paper's CIFAR-10 test metrics (%) with that loss")
    return format_table(rows, title=title), {"rows": rows}


def letor_part(args, sizes):
    fit, val, test = letor_data(args.data, args.seed)
    rows = _tuned(QS_METHODS, lambda: mlp([fit[0].shape[1], 64, 64, 1]), fit, val, test, _ranking_objective,
                  _letor_metrics, {**sizes, "seed": args.seed}, sizes["letor_iterations"], "letor")
    rows.append(lightgbm_row(fit, val, test, sizes, args.seed))
    title = (f"QS paper's network training on the LETOR sample: MLP ranker ({sizes['letor_iterations']} "
             f"full-batch iterations, {int(np.unique(fit[2]).size)} training queries, "
             f"{int(np.unique(val[2]).size)} validation, {int(np.unique(test[2]).size)} test; test metrics "
             "over the test queries with a relevant and an irrelevant document) and LightGBM's LGBMRanker")
    return format_table(rows, title=title), {"rows": rows}


def lightgbm_row(fit, val, test, sizes, seed):
    """LGBMRanker (lambdarank over whole queries) tuned on the validation queries like the networks."""
    try:
        from lightgbm import LGBMRanker
    except ImportError:
        logger.warning("lightgbm is not installed (pip install 'ssvm[bench]'): no LGBMRanker row")
        return {"model": "LGBMRanker (not installed)"}

    def groups(qid):
        _, first, counts = np.unique(qid.numpy(), return_index=True, return_counts=True)
        return counts[np.argsort(first)]

    best = None
    for n_estimators in sizes["lgbm_trees"]:
        for num_leaves in (7, 31):
            start = time.perf_counter()
            model = LGBMRanker(objective="lambdarank", n_estimators=n_estimators, num_leaves=num_leaves,
                               learning_rate=0.05, lambdarank_truncation_level=int(groups(fit[2]).max()),
                               min_child_samples=5, random_state=seed, verbose=-1, n_jobs=1)
            model.fit(fit[0].numpy(), fit[1].numpy().astype(int), group=groups(fit[2]))
            seconds = time.perf_counter() - start
            score = ranking_metrics(model.predict(val[0].numpy()), val[1].numpy(), val[2].numpy())["AP"]
            if best is None or score > best[0]:
                best = (score, model, seconds, f"{n_estimators} trees, {num_leaves} leaves")
    score, model, seconds, config = best
    test_metrics = ranking_metrics(model.predict(test[0].numpy()), test[1].numpy(), test[2].numpy())
    return {"model": f"LGBMRanker ({config})", "lr": 0.05, "eps": "-", "validation": score,
            "test mean AP": test_metrics["AP"], "test mean NDCG": test_metrics["NDCG"], "fit s": seconds,
            "loss %": None}


# ------------------------------------------------------------------ loss share per oracle


def timing_part(args, sizes):
    iterations = sizes["timing_iterations"]
    X, y, _, _ = song_data(sizes["song_n"], sizes["width"], args.seed)
    X_fit, y_fit, *_ = digits_data(args.seed)
    fit, _, _ = letor_data(args.data, args.seed)
    tasks = {
        f"Song synthetic (1 query of {len(y)}, P={int(y.sum())})": (
            lambda: mlp([10, sizes["width"], sizes["width"], sizes["width"], 1]), X,
            lambda method, oracle: _ranking_objective(method, None, oracle, y)),
        f"digits CNN (10 queries of {len(y_fit)})": (
            _DigitsCNN, X_fit, lambda method, oracle: _digits_objective(method, None, oracle, y_fit)),
        f"LETOR MLP ({int(np.unique(fit[2]).size)} queries, {len(fit[1])} documents)": (
            lambda: mlp([fit[0].shape[1], 64, 64, 1]), fit[0],
            lambda method, oracle: _ranking_objective(method, None, oracle, fit[1], fit[2])),
    }
    cases = ([("hinge-AP", o) for o in ("qs", "yue", "search", "dp")]
             + [("hinge-NDCG", o) for o in ("qs", "chakrabarti")])
    rows = []
    for task, (make_net, inputs, objective) in tasks.items():
        runs = []
        for method, oracle in cases:
            torch.manual_seed(args.seed)
            run = train(make_net(), inputs, objective(method, oracle), iterations=iterations, lr=1e-3)
            runs.append((method, oracle, 1e3 * run.step_seconds / run.steps, 1e3 * run.loss_seconds / run.steps))
        # the network's part of a step is the same work whatever the oracle: its median over the runs
        network = float(np.median([step - loss for _, _, step, loss in runs]))
        qs_loss = {method: loss for method, oracle, _, loss in runs if oracle == "qs"}
        for method, oracle, step, loss in runs:
            rows.append({"task": task, "loss": method, "oracle": oracle, "ms/step": step, "loss ms/step": loss,
                         "loss %": 100 * loss / step, "loss vs QS": loss / qs_loss[method],
                         "step vs QS": (network + loss) / (network + qs_loss[method])})
    for metric, method in (("AP", "hinge-AP"), ("NDCG", "hinge-NDCG")):
        hours = QS_PAPER[metric]["hours"]
        for oracle, h in hours.items():
            rows.append({"task": "QS paper: CIFAR-10 LW-SVM (total hours)", "loss": method, "oracle": oracle,
                         "ms/step": None, "loss ms/step": None, "loss %": None, "loss vs QS": None,
                         "step vs QS": h / hours["qs"]})
    title = (f"Training step time with each exact oracle of the hinge: means over {iterations} full-batch steps "
             "from the same start ('loss' = the loss's forward, where the oracle runs); 'step vs QS' = "
             "(network + loss) / (network + QS's loss), the network's ms/step being the median over the task's "
             "runs (the same work in each; a shared machine's noise is larger than the loss's share)")
    return format_table(rows, title=title), {"rows": rows}


# ------------------------------------------------------------------ plots and main


def plot(args, results):
    plt = _common.pyplot()
    if "song" in results:
        fig, ax = plt.subplots(figsize=(6, 4))
        best = {r["method"]: (r["lr"], r["eps"]) for r in results["song"]["rows"]}
        for run in results["song"]["runs"]:
            eps = "-" if run["epsilon"] is None else run["epsilon"]
            if best[run["method"]] == (run["lr"], eps) and run["curve"]:
                its, aps = zip(*run["curve"])
                ax.plot([max(i, 1) for i in its], aps, "o-", label=run["method"], ms=3)
        ax.set_xscale("log")
        ax.set_xlabel("iteration (0 plotted at 1)")
        ax.set_ylabel("test AP")
        ax.set_title("Song et al. 4.1 synthetic (Fig. 3a)")
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(Path(args.plot) / "song_synthetic.png", dpi=100)
        plt.close(fig)
    if "noise" in results:
        fig, ax = plt.subplots(figsize=(5, 4))
        rows = results["noise"]["rows"]
        for method in NOISE_METHODS:
            ax.plot([int(r["flipped"][:-1]) for r in rows], [r[method] for r in rows], "o-", label=method)
        ax.set_xlabel("training labels flipped (%)")
        ax.set_ylabel("test AP (median over seeds)")
        ax.set_title("noisy ball (Fig. 3b)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(Path(args.plot) / "noisy_ball.png", dpi=100)
        plt.close(fig)


def main(argv=None):
    parser = _common.make_parser(__doc__)
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated subset of {PARTS}")
    parser.add_argument("--data", default=None,
                        help="a directory with rank.train / rank.test (+ .query files) to use instead of "
                             "the bundled LETOR sample (ssvm.datasets.load_letor_sample)")
    parser.add_argument("--threads", type=int, default=1, help="threads of PyTorch and of numpy's BLAS (default 1)")
    args = _common.setup(parser, argv)
    parts = [p for p in args.parts.split(",") if p]
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown part(s) {sorted(unknown)}; choose from {PARTS}")
    limit_threads(args.threads)
    sizes = {"song_n": 20_000, "width": 32, "song_iterations": 300, "noise_n": 1000, "noise_iterations": 300,
             "rates": (0.0, 0.1, 0.2, 0.3, 0.4), "seeds": 5, "digits_iterations": 200, "letor_iterations": 200,
             "timing_iterations": 30, "lrs": (1e-3, 1e-2), "epsilons": (0.1, 1.0), "lgbm_trees": (100, 300),
             "graded_seeds": 5, "graded_epochs": 30, "graded_lrs": (3e-4, 1e-3, 3e-3)}
    if args.quick:
        sizes.update(song_n=2000, width=8, song_iterations=10, noise_n=300, noise_iterations=10, rates=(0.0, 0.3),
                     seeds=1, digits_iterations=3, letor_iterations=3, timing_iterations=2, lrs=(1e-2,),
                     epsilons=(0.1,), lgbm_trees=(20,), graded_seeds=2, graded_epochs=2, graded_lrs=(1e-3,))
    warm_up(METHODS)
    functions = {"song": song_part, "noise": noise_part, "digits": digits_part, "letor": letor_part,
                 "graded": lambda args, sizes: graded_part(args, sizes, logger), "timing": timing_part}
    tables, results, wall = [], {}, {}
    for part in parts:
        start = time.perf_counter()
        table, results[part] = functions[part](args, sizes)
        wall[part] = time.perf_counter() - start
        tables.append(f"{table}\n({part}: {wall[part]:.0f} s wall)")
        logger.info("%s done in %.0f s", part, wall[part])
    if args.plot:
        plot(args, results)
    _common.emit(args, tables, {"experiment": "deep_rank_losses", "sizes": sizes, "wall_seconds": wall,
                                "threads": args.threads, **results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
