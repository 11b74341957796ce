"""LatentRankSVM's starts and hinge scale (issue 38): init="auto", lists of starts, hinge_scale."""

import warnings

import numpy as np
import pytest

from ssvm import LatentRankSVM


def make_bags(seed, n_images=24, d=6, max_windows=10):
    """Positive images hide one window shifted along a direction among noise windows."""
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=d)
    bags, y = [], np.arange(n_images) % 2 == 0
    for label in y:
        bag = rng.normal(size=(int(rng.integers(2, max_windows + 1)), d))
        if label:
            bag[rng.integers(len(bag))] += 1.5 * direction
        bags.append(bag)
    return bags, y


def digit_bags(target, seed, n_pos=12, n_neg=24, windows=30, noise=0.1):
    """Images of ``windows`` scikit-learn digits (standardised pixels plus noise, unit norm); a
    positive image holds one ``target`` digit. Returns the bags, the labels and each bag's mask of
    its target window."""
    from sklearn.datasets import load_digits

    X, digits = load_digits(return_X_y=True)
    X = (X - X.mean(0)) / np.maximum(X.std(0), 1e-12)
    rng = np.random.default_rng(seed)
    targets, others = np.flatnonzero(digits == target), np.flatnonzero(digits != target)
    bags, truth = [], []
    for i in range(n_pos + n_neg):
        rows, mask = rng.choice(others, windows), np.zeros(windows, dtype=bool)
        if i < n_pos:
            j = rng.integers(windows)
            rows[j], mask[j] = rng.choice(targets), True
        bag = X[rows] + noise * rng.normal(size=(windows, X.shape[1]))
        bags.append(bag / np.linalg.norm(bag, axis=1, keepdims=True))
        truth.append(mask)
    return bags, np.arange(n_pos + n_neg) < n_pos, truth


def fit(bags, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LatentRankSVM(**params).fit(bags, y)


# ------------------------------------------------------------------ hinge_scale
@pytest.mark.parametrize("loss, negatives", [("ap", "all"), ("ap", "best"), ("ndcg", "all"), ("zero_one", "all")])
def test_the_margin_scale_is_the_squared_vanishing_margin(loss, negatives):
    bags, y = make_bags(0)
    model = fit(bags, y, loss=loss, negatives=negatives, C=2.0, init="mean", max_cccp_iter=2)
    n_pos = int(y.sum())
    n_neg = sum(len(b) for b, label in zip(bags, y) if not label) if negatives == "all" else int((~y).sum())
    expected = 1.0 if loss == "zero_one" else (n_neg / (2 * (n_pos + 1))) ** 2
    assert model.hinge_scale_ == pytest.approx(expected, rel=1e-15)
    # the factor is C's: a fit with the scale equals one with hinge_scale=1 and C times it, the
    # mean-window start too when it has the same factor (negatives="best": N counts images)
    if negatives == "best" or loss == "zero_one":
        plain = fit(bags, y, loss=loss, negatives=negatives, C=2.0 * expected, hinge_scale=1.0, init="mean",
                    max_cccp_iter=2)
        np.testing.assert_allclose(model.coef_, plain.coef_, rtol=1e-9, atol=1e-12)
        assert model.history_ == pytest.approx(plain.history_, rel=1e-12)
    given = fit(bags, y, loss=loss, negatives=negatives, C=2.0, hinge_scale=3.5, init="mean", max_cccp_iter=2)
    assert given.hinge_scale_ == 3.5


# ------------------------------------------------------------------ starts
def test_auto_runs_every_start_and_keeps_the_lowest_objective():
    bags, y, _ = digit_bags(3, 0, n_pos=8, n_neg=16, windows=20)
    model = fit(bags, y, negatives="all", C=1.0, max_cccp_iter=6, tol=1e-6)
    assert [r["start"] for r in model.starts_] == ["mean", "zero_one C*1", "zero_one C*0.1", "zero_one C*0.01"]
    ran = [r for r in model.starts_ if r["skipped"] is None]
    assert len(ran) >= 2, "the test needs runs from several starts"
    assert all(r["objective"] is not None and r["n_iter"] >= 1 for r in ran)
    assert all(r["objective"] is None and r["n_iter"] is None for r in model.starts_ if r["skipped"])
    kept = min(ran, key=lambda r: r["objective"])
    assert model.start_ == kept["start"] and model.history_[-1] == kept["objective"]
    assert model.n_iter_ == kept["n_iter"] == len(model.steps_)
    assert {s["start"] for s in model.steps_} == {model.start_}
    # each start's run is the single-start fit from it
    for record in ran:
        if record["start"] == "mean":
            alone = fit(bags, y, negatives="all", C=1.0, max_cccp_iter=6, tol=1e-6, init="mean")
        else:
            factor = float(record["start"].split("*")[1])
            zero_one = fit(bags, y, loss="zero_one", negatives="all", C=factor, max_cccp_iter=6, tol=1e-6)
            alone = fit(bags, y, negatives="all", C=1.0, max_cccp_iter=6, tol=1e-6, init=zero_one.coef_)
        assert alone.history_[-1] == pytest.approx(record["objective"], rel=1e-9)
    # the 0-1 loss starts from the mean window only: its baseline is unchanged
    zero_one = fit(bags, y, loss="zero_one", negatives="all", C=1.0)
    assert [r["start"] for r in zero_one.starts_] == ["mean"]


def test_a_list_of_starts_and_skipped_starts():
    bags, y = make_bags(4)
    w = np.random.default_rng(0).normal(size=6)
    model = fit(bags, y, C=1.0, init=["mean", w, "zero_one", w * 2.0])
    assert [r["start"] for r in model.starts_] == ["mean", "vector 0", "zero_one C*1", "vector 1"]
    # w and 2w score every window in the same order: the second imputes the windows of the first
    assert model.starts_[3]["skipped"] == "it imputes the windows of 'vector 0'"
    # a 0-1 SVM at a tiny C ends at w = 0 (it only learns its intercept): no start
    tiny = fit(bags, y, C=1e-6, init=["mean", "zero_one"])
    assert tiny.starts_[1]["skipped"] == "its 0-1 SVM ended at w = 0"
    assert tiny.start_ == "mean"


def test_bad_starts_raise_value_errors():
    bags, y = make_bags(5)
    with pytest.raises(ValueError, match="unknown start 'median'"):
        LatentRankSVM(init=["mean", "median"]).fit(bags, y)
    with pytest.raises(ValueError, match="non-empty list"):
        LatentRankSVM(init=[]).fit(bags, y)
    with pytest.raises(ValueError, match="the 0-1 loss itself starts"):
        LatentRankSVM(loss="zero_one", init="zero_one").fit(bags, y)
    with pytest.raises(ValueError, match="cannot start from w = 0"):
        LatentRankSVM(init=["mean", np.zeros(6)]).fit(bags, y)
    with pytest.raises(ValueError, match="length 6, got shape"):
        LatentRankSVM(init=["mean", np.ones(4)]).fit(bags, y)
    with pytest.raises(ValueError, match="each start must be"):
        LatentRankSVM(init=["mean", {"w": 1}]).fit(bags, y)
    with pytest.raises(ValueError):
        LatentRankSVM(hinge_scale=0.0).fit(bags, y)
    with pytest.raises(ValueError):
        LatentRankSVM(hinge_scale="pairs").fit(bags, y)


class _Interrupt:
    def __init__(self, start, step):
        self.start, self.step = start, step

    def __call__(self, record):
        if (record["start"], record["step"]) == (self.start, self.step):
            raise KeyboardInterrupt


def test_a_fit_interrupted_in_a_later_start_resumes_to_the_same_model(tmp_path):
    bags, y, _ = digit_bags(3, 0, n_pos=8, n_neg=16, windows=20)
    params = dict(negatives="all", C=1.0, max_cccp_iter=6, tol=1e-6, cccp_tol=0.0)
    full = fit(bags, y, checkpoint=tmp_path / "full.npz", **params)
    ran = [r["start"] for r in full.starts_ if r["skipped"] is None]
    assert len(ran) >= 2, "the test needs runs from two starts"
    path = tmp_path / "interrupted.npz"
    with pytest.raises(KeyboardInterrupt):
        fit(bags, y, checkpoint=path, callback=_Interrupt(ran[1], 1), **params)
    resumed = fit(bags, y, checkpoint=path, resume=True, **params)
    assert resumed.starts_ == full.starts_ and resumed.start_ == full.start_
    np.testing.assert_array_equal(resumed.coef_, full.coef_)
    np.testing.assert_array_equal(resumed.history_, full.history_)
    assert resumed.lai_calls_ == full.lai_calls_
    with pytest.raises(ValueError, match="other data or parameters"):  # the starts are part of the key
        fit(bags, y, checkpoint=path, resume=True, **{**params, "init": "mean"})


def test_a_callback_that_stops_ends_the_later_starts_too():
    bags, y, _ = digit_bags(3, 0, n_pos=8, n_neg=16, windows=20)
    seen = []
    model = fit(bags, y, negatives="all", C=1.0, callback=lambda r: seen.append(r["start"]) or True)
    assert seen == ["mean"] and model.start_ == "mean" and model.n_iter_ == 1
    assert [r["n_iter"] for r in model.starts_] == [1, None, None, None]


# ------------------------------------------------------------------ the guard of issue 38
@pytest.mark.parametrize("target, seed", [(3, 0), (5, 1)])
def test_the_defaults_find_the_digit_where_the_old_settings_collapse(target, seed):
    """Bags of 30 digits, one target digit per positive image, every window of the negative images
    a negative (N/P = 60): the latent AP-SVM with its defaults imputes the target digits and ends
    at an objective no higher than CCCP started from the true windows; with hinge_scale=1 and the
    mean-window start (the settings before issue 38) it imputes none of them. Removing either half
    of the remedy fails a case (CorLoc of the defaults 0.92 / 1.00; with hinge_scale=1 0.00 / 1.00,
    with init="mean" 0.00 / 0.00)."""
    bags, y, truth = digit_bags(target, seed)
    params = dict(loss="ap", negatives="all", C=1.0, random_state=0)

    def corloc(model):
        return np.mean([truth[i][model.latent_windows_[i]] for i in np.flatnonzero(y)])

    model = fit(bags, y, **params)
    true_bags = [bag[mask] if label else bag for bag, mask, label in zip(bags, truth, y)]
    on_truth = fit(true_bags, y, init="mean", max_cccp_iter=1, **params)  # the AP-SVM of the true windows
    from_truth = fit(bags, y, init=on_truth.coef_, **params)
    assert corloc(model) >= 0.9
    assert model.history_[-1] <= from_truth.history_[-1] * (1 + 1e-3)
    old = fit(bags, y, hinge_scale=1.0, init="mean", **params)
    assert corloc(old) <= 0.1
