"""Label noise: hinge AP-SVM vs the 0-1 SVM on Song et al.'s (ICML 2016) synthetic task.

Data (Song, Schwing, Zemel & Urtasun, section 5, synthetic experiment): ten-dimensional points
x ~ N(0, 10^2 I); positive when ||x||^2 > 1200, negative when ||x||^2 < 1000, the others dropped,
drawing until n points are kept. A fraction of the *training* labels (0-40%) is flipped; the test
set (an independent draw of the same size) keeps its true labels, so the score measures how well the
true concept is recovered.

The concept is a ball, which no linear function of x separates; both models therefore use the
quadratic feature map phi(x) = [x, x**2] (20 features, standardised on the training set), in which
||x||^2 is linear. C of each model is picked by 3-fold cross-validation of AP on the (noisy)
training set. Reported: test AP (median over seeds) per noise level and model.
"""

from __future__ import annotations

import sys

import _common
import numpy as np
from _common import flip_labels, format_table, logger, sample_song
from _models import ModelSpec, evaluate_model, fit_model, select_C

MODELS = (ModelSpec("hinge AP-SVM", "ap"), ModelSpec("0-1 SVM", "zero_one"))


def quadratic_features(X):
    """The feature map [x, x**2] in which ||x||^2 is linear."""
    return np.hstack([X, X**2])


def run_seed(seed, rates, n, grid, n_folds):
    """Test AP of every model at every noise rate for one seed."""
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(seed)
    X_train, y_train = sample_song(n, rng)
    X_test, y_test = sample_song(n, rng)
    scaler = StandardScaler().fit(quadratic_features(X_train))
    F_train = scaler.transform(quadratic_features(X_train))
    F_test = scaler.transform(quadratic_features(X_test))
    out = {}
    for rate in rates:
        noisy = flip_labels(y_train, rate, rng)
        for spec in MODELS:
            C, _ = select_C(spec, F_train, noisy, grid, n_folds=n_folds, random_state=seed)
            model = fit_model(spec, C, F_train, noisy, random_state=seed)
            out[(rate, spec.name)] = (evaluate_model(model, F_test, y_test)["AP"], C)
    return out


def main(argv=None):
    parser = _common.make_parser(__doc__)
    parser.add_argument("--seeds", type=int, default=10, help="number of seeds (default 10)")
    parser.add_argument("--n", type=int, default=1000, help="points kept per set (default 1000)")
    args = _common.setup(parser, argv)
    rates = (0.0, 0.1, 0.2, 0.3, 0.4)
    grid = (0.1, 1.0, 10.0, 100.0)
    n, n_seeds, n_folds = args.n, args.seeds, 3
    if args.quick:
        rates, grid, n, n_seeds, n_folds = (0.0, 0.3), (10.0,), 300, 1, 2
    seeds = [args.seed + s for s in range(n_seeds)]
    results = {}
    for seed in seeds:
        logger.info("seed %d", seed)
        for key, value in run_seed(seed, rates, n, grid, n_folds).items():
            results.setdefault(key, []).append(value)

    rows, payload_rows = [], []
    for rate in rates:
        row = {"flipped": f"{100 * rate:.0f}%"}
        for spec in MODELS:
            aps = np.array([ap for ap, _ in results[(rate, spec.name)]])
            Cs = [C for _, C in results[(rate, spec.name)]]
            row[f"{spec.name} AP"] = float(np.median(aps))
            payload_rows.append({"rate": rate, "model": spec.name, "test_ap": aps, "C": Cs})
        diff = [a[0] - b[0] for a, b in zip(results[(rate, MODELS[0].name)],
                                            results[(rate, MODELS[1].name)])]
        row["median paired diff"] = float(np.median(diff))
        row["AP-SVM ahead"] = f"{sum(d > 0 for d in diff)}/{len(diff)} seeds"
        rows.append(row)
    title = (f"Song et al. label-noise task: test AP, median of {n_seeds} seed(s); n={n} train / "
             f"{n} clean test points, features [x, x^2], C by {n_folds}-fold CV over {list(grid)}")
    table = format_table(rows, title=title)

    if args.plot:
        plt = _common.pyplot()
        fig, ax = plt.subplots(figsize=(5, 4))
        for spec in MODELS:
            aps = np.array([[ap for ap, _ in results[(r, spec.name)]] for r in rates])
            ax.plot([100 * r for r in rates], np.median(aps, axis=1), "o-", label=spec.name)
            ax.fill_between([100 * r for r in rates], aps.min(axis=1), aps.max(axis=1), alpha=0.2)
        ax.set_xlabel("training labels flipped (%)")
        ax.set_ylabel("test AP")
        ax.set_title("label noise (median, min-max band)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(f"{args.plot}/label_noise.png", dpi=100)
        plt.close(fig)
    _common.emit(args, [table], {"experiment": "label_noise", "n": n, "seeds": seeds,
                                 "grid": grid, "results": payload_rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
