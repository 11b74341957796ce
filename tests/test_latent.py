"""Tests of ssvm.latent: the latent AP-SVM trained by CCCP over bags of windows."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssvm.latent import LatentRankSVM
from ssvm.latent.bags import as_bags
from ssvm.latent.convex import ConvexBound
from ssvm.losses import get_oracle


# ------------------------------------------------------------------ slow, obviously-right twins
def slow_nms(boxes, scores, threshold):
    def iou(a, b):
        iw = min(a[2], b[2]) - max(a[0], b[0]) + 1
        ih = min(a[3], b[3]) - max(a[1], b[1]) + 1
        inter = max(iw, 0) * max(ih, 0)
        area = lambda r: (r[2] - r[0] + 1) * (r[3] - r[1] + 1)  # noqa: E731
        return inter / (area(a) + area(b) - inter)

    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    keep = []
    for i in order:
        if all(iou(boxes[i], boxes[k]) <= threshold for k in keep):
            keep.append(i)
    return keep


def hinge(scores, y, loss):
    """Structured hinge of one query via an oracle other than the one the model trains with."""
    oracle = get_oracle(loss, "yue" if loss == "ap" else "auto")
    c, delta = oracle(np.asarray(scores, dtype=np.float64), np.asarray(y, dtype=bool))
    return delta + np.asarray(scores) @ c


def latent_objective(model, bags, y, C):
    """J(w) = ½‖w‖² + C·s·H computed from scratch: image score = best window (or all negative windows);
    s is the model's hinge_scale_ (checked against its definition apart)."""
    w, b = model.coef_, model.intercept_
    window_scores = [bag @ w + b for bag in bags]
    pos = [s.max() for s, label in zip(window_scores, y) if label]
    if model.negatives == "best":
        neg = [s.max() for s, label in zip(window_scores, y) if not label]
    else:
        neg = [v for s, label in zip(window_scores, y) if not label for v in s]
    scores = np.array(pos + neg)
    labels = np.array([True] * len(pos) + [False] * len(neg))
    # the ranking hinges are invariant to a shift of all scores, so intercept_ (their decision
    # threshold) only enters J where it is learnt and regularised: zero_one
    learnt = b if model.loss == "zero_one" else 0.0
    return 0.5 * (w @ w + learnt * learnt) + C * model.hinge_scale_ * hinge(scores, labels, model.loss)


def make_bags(seed, n_images=16, d=6, max_windows=7):
    """Positive images hide one window shifted along a direction among noise windows."""
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=d)
    bags, y = [], []
    for i in range(n_images):
        m = int(rng.integers(1, max_windows + 1))
        bag = rng.normal(size=(m, d))
        label = i % 2 == 0
        if label:
            bag[rng.integers(m)] += 1.5 * direction
        bags.append(bag)
        y.append(label)
    return bags, np.array(y)


# ------------------------------------------------------------------ bags and the convex bound
@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 9))
def test_chunked_window_means_and_scores_match_the_plain_ones(seed, chunk_rows):
    bags, _ = make_bags(seed, n_images=6)
    data = as_bags(bags, None, chunk_rows)
    np.testing.assert_allclose(data.means(), [bag.mean(axis=0) for bag in bags], rtol=1e-12, atol=1e-12)
    w = np.random.default_rng(seed).normal(size=data.n_features)
    np.testing.assert_allclose(data.scores(w, 0.5), np.concatenate([bag @ w + 0.5 for bag in bags]), rtol=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_imputation_picks_each_positive_best_window(seed):
    bags, y = make_bags(seed, n_images=8)
    data = as_bags(bags, None, 5)  # tiny chunks: exercise the chunked reads
    setup = ConvexBound(data, y, get_oracle("ap", "auto"), "best", False, None)
    w = np.random.default_rng(seed).normal(size=data.n_features)
    imputed = setup.impute(w)
    expected = [data.offsets[i] + int(np.argmax(bags[i] @ w)) for i in np.flatnonzero(y)]
    np.testing.assert_array_equal(imputed, expected)
    problem = setup.problem(imputed)  # the positives' rows are their imputed windows
    best_rows = [bags[i][np.argmax(bags[i] @ w)] for i in np.flatnonzero(y)]
    np.testing.assert_array_equal(problem.X[setup.n_neg_rows:], np.vstack(best_rows))


# ------------------------------------------------------------------ CCCP
@pytest.mark.parametrize("loss, negatives", [("ap", "best"), ("ap", "all"), ("zero_one", "best"), ("zero_one", "all"),
                                            ("ndcg", "best")])
def test_cccp_objective_never_increases_and_is_the_latent_objective(loss, negatives):
    bags, y = make_bags(0, n_images=30, max_windows=12)
    C, tol = 10.0, 1e-6
    model = LatentRankSVM(loss=loss, negatives=negatives, C=C, tol=tol, max_cccp_iter=8, cccp_tol=0.0,
                          init="mean").fit(bags, y)
    history = np.array(model.history_)
    assert len(history) == model.n_iter_ + 1 >= 3, "CCCP must take several steps for the test to mean anything"
    assert np.all(np.diff(history) <= tol * history[:-1] + 1e-9), history
    assert history[-1] == pytest.approx(latent_objective(model, bags, y, C), rel=1e-9, abs=1e-12)
    # every training image's latent window is its arg-max window under the final model
    expected = [int(np.argmax(s)) for s in model.window_scores(bags)]
    np.testing.assert_array_equal(model.latent_windows_, expected)
    assert model.lai_seconds_ > 0
    # one call for J(w0), then per step the solver's calls plus one for J(w_t)
    assert model.lai_calls_ >= 1 + 2 * model.n_iter_


def test_a_user_loss_object_trains_as_its_builtin(tmp_path):
    """A QSLoss object (here AP's loss, served by the generic per-query path) trains, scores and
    checkpoints like the built-in "ap" it equals."""
    from ssvm.losses import APLoss

    bags, y = make_bags(2, n_images=20, max_windows=6)
    params = dict(C=10.0, tol=1e-6, max_cccp_iter=3, cccp_tol=0.0)
    reference = LatentRankSVM(loss="ap", **params).fit(bags, y)
    model = LatentRankSVM(loss=type("SubAP", (APLoss,), {})(), checkpoint=tmp_path / "ck.pkl",
                          **params).fit(bags, y)
    np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-7, atol=1e-9)
    assert model.intercept_ == pytest.approx(reference.intercept_, abs=1e-9)
    assert model.score(bags, y) == reference.score(bags, y)


@pytest.mark.parametrize("solver", ["frank_wolfe"])  # pegasos works too but takes ~10 s here
def test_other_solvers_give_a_descent_to_about_the_same_objective(solver):
    bags, y = make_bags(0, n_images=30, max_windows=12)
    params = dict(C=10.0, tol=1e-4, max_cccp_iter=8, cccp_tol=0.0, random_state=0, init="mean")
    reference = LatentRankSVM(**params).fit(bags, y)
    model = LatentRankSVM(solver=solver, **params).fit(bags, y)
    history = np.array(model.history_)
    assert np.all(np.diff(history) <= 1e-3 * history[:-1]), history
    assert history[-1] == pytest.approx(latent_objective(model, bags, y, 10.0), rel=1e-9)
    assert history[-1] == pytest.approx(reference.history_[-1], rel=1e-2)


def test_a_zero_start_is_refused_and_a_vector_start_is_used():
    bags, y = make_bags(0, n_images=20, max_windows=12)
    # at w = 0 every window ties; on these bags CCCP would stop at once with w = 0 (it did)
    for init in ("zeros", np.zeros(6)):
        with pytest.raises(ValueError, match="cannot start from w = 0.*init='auto'"):
            LatentRankSVM(init=init, C=10.0).fit(bags, y)
    with pytest.raises(ValueError, match="cannot start from w = 0"):
        LatentRankSVM(loss="zero_one", init=np.r_[np.zeros(6), 1.0]).fit(bags, y)
    mean = LatentRankSVM(C=10.0, max_cccp_iter=10).fit(bags, y)
    assert np.any(mean.coef_ != 0)
    start = LatentRankSVM(init=mean.coef_, C=10.0, max_cccp_iter=10).fit(bags, y)
    assert start.history_[0] == pytest.approx(mean.history_[-1])
    with pytest.raises(ValueError, match="init"):
        LatentRankSVM(init=np.ones(3)).fit(bags, y)


def test_warm_start_continues_from_the_previous_fit():
    bags, y = make_bags(1, n_images=20, max_windows=12)
    for loss in ("ap", "zero_one"):
        model = LatentRankSVM(loss=loss, C=10.0, max_cccp_iter=10, warm_start=True).fit(bags, y)
        first = model.history_[-1]
        model.fit(bags, y)
        assert model.history_[0] == pytest.approx(first, rel=1e-12), loss


def test_latent_model_beats_its_mean_feature_start_and_separates_images():
    bags, y = make_bags(2, n_images=24)
    model = LatentRankSVM(C=10.0, tol=1e-6, max_cccp_iter=10).fit(bags, y)
    assert model.history_[-1] < model.history_[0]
    scores = model.decision_function(bags)
    from sklearn.metrics import average_precision_score
    assert average_precision_score(y, scores) > 0.9


def test_intercept_makes_predict_sensible_and_score_is_image_ap():
    from sklearn.metrics import average_precision_score

    bags, y = make_bags(0, n_images=30, max_windows=12)
    model = LatentRankSVM(C=10.0, max_cccp_iter=10).fit(bags, y)
    scores = model.decision_function(bags)
    # the intercept is the training images' best accuracy cut (as RankSVM's), not 0: at 0 the
    # AP model called most images positive (accuracy 0.53 here)
    rules = [scores >= v for v in np.unique(scores)] + [np.zeros(len(y), dtype=bool)]
    best = max(np.mean(rule == y) for rule in rules)
    accuracy = np.mean(model.predict(bags) == y)
    assert accuracy == pytest.approx(best) and accuracy > 0.85
    assert model.score(bags, y) == pytest.approx(average_precision_score(y, scores), abs=1e-12)
    labels = np.where(y, "cat", "background")  # any two labels: the larger is the positive class
    named = LatentRankSVM(C=10.0, max_cccp_iter=10).fit(bags, labels)
    assert named.score(bags, labels) == pytest.approx(model.score(bags, y), abs=1e-12)
    assert set(named.predict(bags)) <= {"cat", "background"}
    zero_one = LatentRankSVM(loss="zero_one", C=10.0, max_cccp_iter=10).fit(bags, y)
    assert zero_one.score(bags, y) == np.mean(zero_one.predict(bags) == y)
    with pytest.raises(ValueError, match="one label per image"):
        model.score(bags, y[:-1])


@pytest.mark.parametrize("method", ["predict", "decision_function", "window_scores", "score",
                                    "detect"])
def test_not_fitted_error_before_fit(method):
    from sklearn.exceptions import NotFittedError

    bags, y = make_bags(0, n_images=4)
    args = {"score": (bags, y), "detect": (bags, [np.zeros((len(b), 4)) for b in bags])}
    with pytest.raises(NotFittedError):
        getattr(LatentRankSVM(), method)(*args.get(method, (bags,)))


def test_random_state_takes_none_int_or_random_state():
    bags, y = make_bags(0, n_images=20, max_windows=12)
    params = dict(solver="pegasos", C=10.0, max_cccp_iter=2, max_iter=200, cccp_tol=0.0)
    a = LatentRankSVM(random_state=0, **params).fit(bags, y)
    b = LatentRankSVM(random_state=np.random.RandomState(0), **params).fit(bags, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert np.all(np.isfinite(LatentRankSVM(random_state=None, **params).fit(bags, y).coef_))


def test_solver_params_reach_the_solver_and_unknown_keys_are_named():
    bags, y = make_bags(0, n_images=20, max_windows=12)
    params = dict(C=10.0, tol=1e-6, max_cccp_iter=3)
    plain = LatentRankSVM(**params).fit(bags, y)
    joachims = LatentRankSVM(solver_params={"ocas": False}, **params).fit(bags, y)
    assert joachims.history_[-1] == pytest.approx(plain.history_[-1], rel=1e-4)
    assert [s["solver_iter"] for s in joachims.steps_] != [s["solver_iter"] for s in plain.steps_]
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['batch_size'\].*accepts"):
        LatentRankSVM(solver_params={"batch_size": 2}).fit(bags, y)
    with pytest.raises(ValueError, match=r"must not set \['max_iter'\]"):
        LatentRankSVM(solver_params={"max_iter": 2}).fit(bags, y)


def test_verbose_prints_each_cccp_step_to_stdout(capsys):
    bags, y = make_bags(0, n_images=20, max_windows=12)
    LatentRankSVM(C=10.0, max_cccp_iter=3).fit(bags, y)
    assert capsys.readouterr().out == ""
    model = LatentRankSVM(C=10.0, max_cccp_iter=3, verbose=1).fit(bags, y)
    lines = capsys.readouterr().out.splitlines()
    runs = [r for r in model.starts_ if r["n_iter"] is not None]
    assert len(runs) >= 2, "the test needs CCCP runs from several starts"
    assert len(lines) == sum(r["n_iter"] for r in runs) and all("CCCP step" in line for line in lines)
    for r in runs:  # one line per step of every start's run, named by its start
        assert sum(f"start {r['start']}," in line for line in lines) == r["n_iter"]
    assert "np." not in "".join(lines)
    model = LatentRankSVM(C=10.0, max_cccp_iter=3, verbose=2).fit(bags, y)
    out = capsys.readouterr().out
    assert "LatentRankSVM step 0: iteration 1" in out  # the mean-feature start's solve
    assert out.count("CCCP step") == sum(r["n_iter"] or 0 for r in model.starts_)


def test_docstring_example_runs():
    import doctest

    import ssvm.latent.estimator

    result = doctest.testmod(ssvm.latent.estimator)
    assert result.attempted > 0 and result.failed == 0


def test_decision_function_is_best_window_and_offsets_input_matches_list(tmp_path):
    bags, y = make_bags(3)
    model = LatentRankSVM(C=1.0, max_cccp_iter=3).fit(bags, y)
    stacked = np.vstack(bags)
    offsets = np.concatenate(([0], np.cumsum([len(b) for b in bags])))
    memmap = np.lib.format.open_memmap(tmp_path / "windows.npy", mode="w+", dtype=np.float32, shape=stacked.shape)
    memmap[:] = stacked
    memmap.flush()
    expected = np.array([max(b @ model.coef_ + model.intercept_) for b in bags])
    np.testing.assert_allclose(model.decision_function(bags), expected)
    np.testing.assert_allclose(model.decision_function(stacked, offsets=offsets), expected)
    model_mm = LatentRankSVM(C=1.0, max_cccp_iter=3, chunk_rows=7).fit(
        np.vstack([b.astype(np.float32) for b in bags]), y, offsets=offsets)
    model_f32 = LatentRankSVM(C=1.0, max_cccp_iter=3).fit([b.astype(np.float32) for b in bags], y)
    np.testing.assert_allclose(model_mm.coef_, model_f32.coef_)
    model_disk = LatentRankSVM(C=1.0, max_cccp_iter=3, chunk_rows=5).fit(memmap, y, offsets=offsets)
    np.testing.assert_allclose(model_disk.coef_, model_f32.coef_)
    assert set(model.predict(bags)) <= {False, True}


class _ScriptedBound:
    """A CCCP bound whose latent objective after step t is ``objectives[t]`` (w is the step count)."""

    def __init__(self, objectives):
        self.objectives = objectives

    def impute(self, w):
        return np.array([int(w[0])])  # a new window every step: never "no change"

    def problem(self, imputed):
        from types import SimpleNamespace

        value = self.objectives[int(imputed[0])]
        return SimpleNamespace(objective=lambda w, C: value, oracle_seconds=0.0, n_oracle_calls=0)


def _scripted_step(problem, w0, step):
    from ssvm.solvers import SolverResult

    return SolverResult(w=np.array([float(step)]), n_iter=1, objective=0.0, converged=True)


@pytest.mark.parametrize("tol, n_steps", [(0.01, 2), (0.001, 3), (0.0, 5)])
def test_cccp_stops_on_the_relative_decrease(tol, n_steps):
    from ssvm.latent.cccp import CCCPState, cccp
    from ssvm.latent.convex import OracleMeter

    # decreases 10, 0.5, 0.05, 0.01, 0.001: relative to J they are 0.1, 0.0056, 0.00056, ...
    objectives = [100.0, 90.0, 89.5, 89.45, 89.44, 89.439]
    state = cccp(_ScriptedBound(objectives), CCCPState(np.array([0.0])), solve=_scripted_step,
                 C=1.0, max_iter=5, tol=tol, meter=OracleMeter())
    assert len(state.steps) == n_steps and state.history == objectives[:n_steps + 1]
    assert state.converged == (tol > 0)


def test_estimator_cccp_tol_is_relative():
    """cccp_tol > 0 on real bags: the last step's decrease is small relative to J, not absolutely."""
    bags, y = make_bags(0, n_images=30, max_windows=12)
    cccp_tol = 0.05
    model = LatentRankSVM(C=100.0, tol=1e-6, max_cccp_iter=20, cccp_tol=cccp_tol, init="mean",
                          hinge_scale=1.0).fit(bags, y)
    history, steps = model.history_, model.steps_
    assert model.converged_ and model.n_iter_ >= 2
    for t, record in enumerate(steps, start=1):
        assert record["decrease"] == pytest.approx(history[t - 1] - history[t], abs=1e-12)
        relative_stop = record["decrease"] <= cccp_tol * abs(history[t - 1])
        assert relative_stop == (t == len(steps)), (t, history)
    last = steps[-1]
    # the absolute rule (decrease <= cccp_tol) would have gone on: windows still changed
    assert last["n_changed"] > 0 and last["decrease"] > cccp_tol, (history, steps)


def test_convergence_warning_when_cccp_is_capped():
    from sklearn.exceptions import ConvergenceWarning

    bags, y = make_bags(0, n_images=20, max_windows=12)
    with pytest.warns(ConvergenceWarning, match="max_cccp_iter=1"):
        model = LatentRankSVM(C=10.0, tol=1e-6, max_cccp_iter=1, cccp_tol=0.0, init="mean").fit(bags, y)
    assert model.n_iter_ == 1 and not model.converged_


# ------------------------------------------------------------------ checkpoints
class _Interrupt:
    def __init__(self, at_step):
        self.at_step = at_step

    def __call__(self, record):
        if record["step"] == self.at_step:
            raise KeyboardInterrupt


def test_resumed_run_ends_with_the_same_model_as_an_uninterrupted_one(tmp_path):
    bags, y = make_bags(0, n_images=20, max_windows=12)
    params = dict(C=10.0, tol=1e-6, max_cccp_iter=6, cccp_tol=0.0, init="mean", hinge_scale=1.0)
    full = LatentRankSVM(checkpoint=tmp_path / "full.npz", **params).fit(bags, y)
    assert full.n_iter_ >= 3, "the run must take more than one step for the test to mean anything"

    path = tmp_path / "interrupted.npz"
    with pytest.raises(KeyboardInterrupt):
        LatentRankSVM(checkpoint=path, callback=_Interrupt(1), **params).fit(bags, y)
    assert path.exists() and not list(tmp_path.glob(".*.tmp"))
    resumed = LatentRankSVM(checkpoint=path, **params).fit(bags, y, resume=True)
    assert resumed.n_iter_ == full.n_iter_
    np.testing.assert_array_equal(resumed.coef_, full.coef_)
    np.testing.assert_array_equal(resumed.history_, full.history_)
    assert resumed.lai_calls_ == full.lai_calls_  # the checkpointed count plus the resumed steps
    # resuming a finished run does no more steps
    again = LatentRankSVM(checkpoint=path, resume=True, **params).fit(bags, y)
    np.testing.assert_array_equal(again.coef_, full.coef_)


def test_checkpoint_of_other_data_or_parameters_is_refused(tmp_path):
    bags, y = make_bags(5)
    path = tmp_path / "ckpt.npz"
    LatentRankSVM(checkpoint=path, max_cccp_iter=2).fit(bags, y)
    with pytest.raises(ValueError, match="other data or parameters"):
        LatentRankSVM(checkpoint=path, max_cccp_iter=2, C=2.0).fit(bags, y, resume=True)
    with pytest.raises(ValueError, match="other data or parameters"):
        LatentRankSVM(checkpoint=path, max_cccp_iter=2).fit(bags, ~y, resume=True)
    with pytest.raises(ValueError, match="checkpoint path"):
        LatentRankSVM(max_cccp_iter=2).fit(bags, y, resume=True)


# ------------------------------------------------------------------ detection
def test_detect_returns_nms_boxes_by_decreasing_score():
    rng = np.random.default_rng(6)
    bags, y = make_bags(6, n_images=10, max_windows=12)
    model = LatentRankSVM(C=1.0, max_cccp_iter=20).fit(bags, y)
    boxes = []
    for bag in bags:
        xy = rng.integers(0, 40, size=(len(bag), 2))
        wh = rng.integers(5, 30, size=(len(bag), 2))
        boxes.append(np.hstack((xy, xy + wh)).astype(float))
    detections = model.detect(bags, boxes, iou_threshold=0.3)
    assert len(detections) == len(bags)
    for bag, image_boxes, (kept_boxes, kept_scores) in zip(bags, boxes, detections):
        scores = bag @ model.coef_ + model.intercept_
        keep = slow_nms(image_boxes, scores, 0.3)
        np.testing.assert_array_equal(kept_boxes, image_boxes[keep])
        np.testing.assert_allclose(kept_scores, scores[keep])
        assert kept_scores[0] == scores.max()
    top1 = model.detect(bags, boxes, max_per_image=1)
    assert all(len(s) == 1 for _, s in top1)


def _fake_features(image, boxes):
    """Deterministic window features (mean colour and box geometry), module-level so it pickles."""
    boxes = np.asarray(boxes)
    crop_means = [image[int(b[1]) - 1:int(b[3]), int(b[0]) - 1:int(b[2])].mean(axis=(0, 1)) for b in boxes]
    return np.hstack((np.array(crop_means) / 255.0, boxes / 64.0)).astype(np.float32)


def test_fit_and_detect_straight_from_a_window_store(tmp_path):
    from ssvm.detection import WindowStore

    rng = np.random.default_rng(8)
    images, windows, y = [], [], []
    for i in range(12):
        image = rng.integers(0, 80, size=(64, 64, 3)).astype(np.uint8)
        if i % 2 == 0:  # a bright square in positive images
            image[10:40, 20:50] = 230
        xy = rng.integers(1, 30, size=(6, 2))
        boxes = np.vstack(([1, 1, 64, 64], np.hstack((xy, xy + rng.integers(10, 34, size=(6, 2)))))).astype(float)
        images.append(image)
        windows.append(np.vstack((boxes, [[21, 11, 50, 40]])))
        y.append(i % 2 == 0)
    store = WindowStore.build(tmp_path / "store", images, windows, _fake_features)
    y = np.array(y)
    model = LatentRankSVM(C=10.0, max_cccp_iter=10).fit(store, y)
    bags = [np.asarray(store.image_features(i), dtype=np.float64) for i in range(store.n_images)]
    reference = LatentRankSVM(C=10.0, max_cccp_iter=10).fit(bags, y)
    np.testing.assert_allclose(model.coef_, reference.coef_)
    np.testing.assert_allclose(model.decision_function(store), reference.decision_function(bags))
    from_store = model.detect(store)
    from_lists = model.detect(bags, [store.image_boxes(i) for i in range(store.n_images)])
    for (b1, s1), (b2, s2) in zip(from_store, from_lists):
        np.testing.assert_array_equal(b1, b2)
        np.testing.assert_allclose(s1, s2)
    with pytest.raises(ValueError, match="boxes are required"):
        model.detect(bags)


# ------------------------------------------------------------------ bad input
def test_bad_input_raises_value_error():
    bags, y = make_bags(7)
    with pytest.raises(ValueError, match="one label per image"):
        LatentRankSVM().fit(bags, y[:-1])
    with pytest.raises(ValueError, match="two classes"):
        LatentRankSVM().fit(bags, np.ones(len(bags), bool))
    with pytest.raises(ValueError, match="same number of features"):
        LatentRankSVM().fit(bags[:-1] + [np.ones((2, 3))], y)
    with pytest.raises(ValueError, match="at least one window"):
        LatentRankSVM().fit(bags[:-1] + [np.ones((0, 6))], y)
    with pytest.raises(ValueError, match="rows"):
        LatentRankSVM().fit(np.vstack(bags), y, offsets=np.arange(len(bags) + 1))
    with pytest.raises(ValueError, match="NaN"):
        LatentRankSVM().fit(bags[:-1] + [np.full((2, 6), np.nan)], y)
    with pytest.raises(ValueError):
        LatentRankSVM(loss="precision_at_k").fit(bags, y)
    with pytest.raises(ValueError):
        LatentRankSVM(negatives="some").fit(bags, y)
    model = LatentRankSVM(max_cccp_iter=2).fit(bags, y)
    with pytest.raises(ValueError, match="columns"):
        model.decision_function([np.ones((2, 3))])
    with pytest.raises(ValueError, match="boxes"):
        model.detect(bags, [np.zeros((1, 4))] * len(bags))
