"""The SVM^light-style command line: ssvm train / predict / eval / --version on generated LETOR files."""

import logging
import pickle
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

import ssvm
from ssvm import RankSVM, load_model
from ssvm.__main__ import main
from ssvm.datasets import load_letor
from ssvm.metrics import precision_at_k, ranking_score


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """0-based files (sklearn's default) and 1-based ones (SVM^rank's): train[1].dat, test[1].dat."""
    folder = tmp_path_factory.mktemp("letor")
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(260, 6)), 4) * (rng.random((260, 6)) < 0.8)
    X[0, 0] = 1.0  # the 0-based file has an index 0
    relevance = np.clip(np.round(X[:, 0] + 0.7 * X[:, 1] + 0.5 * rng.normal(size=260)), 0, 3)
    qid = np.repeat(np.arange(13), 20)
    order = rng.permutation(200)  # training queries scattered over the file
    for zero_based, base in ((True, ""), (False, "1")):
        dump_svmlight_file(X[:200][order], relevance[:200][order], str(folder / f"train{base}.dat"),
                           zero_based=zero_based, query_id=qid[:200][order], comment="generated for the tests")
        dump_svmlight_file(X[200:], relevance[200:], str(folder / f"test{base}.dat"), zero_based=zero_based,
                           query_id=qid[200:])
    return folder


def run(*args):
    return main([str(a) for a in args])


@pytest.mark.parametrize("base", ["", "1"])
def test_train_predict_eval_round_trip_equals_the_python_estimator(files, capsys, base):
    model, predictions = files / f"model{base}.json", files / f"predictions{base}"
    train, test = files / f"train{base}.dat", files / f"test{base}.dat"
    assert run("train", "-c", 2, "--loss", "ap", "--tol", 1e-4, train, model) == 0
    assert run("predict", test, model, predictions) == 0
    X, relevance, qid = load_letor(train)
    assert X.shape == (200, 6)
    reference = RankSVM(loss="ap", C=2.0, tol=1e-4).fit(X, relevance, qid=qid)
    X_test, rel_test, qid_test = load_letor(test, n_features=X.shape[1])
    scores = np.array([float(line) for line in predictions.read_text().splitlines()])
    np.testing.assert_array_equal(scores, reference.decision_function(X_test))  # exact, in row order
    np.testing.assert_array_equal(load_model(model).coef_, reference.coef_)
    capsys.readouterr()
    assert run("eval", "-k", 3, test, predictions) == 0
    out = capsys.readouterr().out
    values = {line.split("\t")[0].strip(): float(line.split("\t")[2]) for line in out.splitlines()}
    assert values["num_q"] == 3
    assert values["map"] == pytest.approx(ranking_score(rel_test, scores, qid=qid_test, loss="ap"), abs=5e-5)
    assert values["ndcg_cut_3"] == pytest.approx(  # graded, gains 2^r - 1 by default
        ranking_score(rel_test, scores, qid=qid_test, loss="ndcg", gain="exponential", k=3), abs=5e-5)
    assert values["P_3"] == pytest.approx(precision_at_k(rel_test, scores, qid=qid_test, k=3), abs=5e-5)
    assert values["ndcg"] == pytest.approx(
        ranking_score(rel_test, scores, qid=qid_test, loss="ndcg", gain="exponential"), abs=5e-5)
    assert run("eval", "--gain", "binary", "--all-queries", test, predictions) == 0
    values = {line.split("\t")[0].strip(): float(line.split("\t")[2]) for line in capsys.readouterr().out.splitlines()}
    assert values["ndcg"] == pytest.approx(
        ranking_score(rel_test, scores, qid=qid_test, loss="ndcg", gain="binary", all_queries=True), abs=5e-5)
    assert sorted(values) == ["P_1", "P_10", "P_5", "Rprec", "map", "ndcg", "ndcg_cut_1", "ndcg_cut_10", "ndcg_cut_5",
                              "num_q", "recip_rank"]


def test_the_training_files_index_base_is_kept_for_the_test_file(files, tmp_path):
    # a 0-based test file that never uses feature 0 would be read 1-based on its own ("auto")
    rng = np.random.default_rng(1)
    X = np.round(np.abs(rng.normal(size=(12, 6))) + 0.1, 4)
    X[:, 0] = 0.0
    dump_svmlight_file(X, (np.arange(12) % 2).astype(float), str(tmp_path / "test0.dat"), zero_based=True,
                       query_id=np.zeros(12, dtype=int))
    model, predictions = tmp_path / "model.json", tmp_path / "p"
    assert run("train", "--max-iter", 50, files / "train.dat", model) == 0
    assert run("predict", tmp_path / "test0.dat", model, predictions) == 0
    scores = np.array([float(v) for v in predictions.read_text().split()])
    X_read = load_letor(tmp_path / "test0.dat", zero_based=True, n_features=6)[0]
    np.testing.assert_array_equal(X_read.toarray(), X)
    np.testing.assert_array_equal(scores, load_model(model).decision_function(X_read))


@pytest.mark.parametrize("gain", ["exponential", "binary"])
def test_graded_ndcg_model_from_the_command_line_equals_the_python_one(files, tmp_path, gain):
    model, predictions = tmp_path / "model.json", tmp_path / "p"
    assert run("train", "--loss", "ndcg", "--gain", gain, "--max-iter", 30, files / "train1.dat", model) == 0
    assert run("predict", files / "test1.dat", model, predictions) == 0
    X, relevance, qid = load_letor(files / "train1.dat")
    reference = RankSVM(loss="ndcg", gain=gain, max_iter=30).fit(X, relevance, qid=qid)
    assert load_model(model).get_params() == reference.get_params()
    scores = np.array([float(v) for v in predictions.read_text().split()])
    np.testing.assert_array_equal(scores, reference.decision_function(load_letor(files / "test1.dat", n_features=6)[0]))


@pytest.mark.parametrize("transform", ["quantile", "standard"])
def test_transform_pipeline_round_trip(files, tmp_path, transform):
    model, predictions = tmp_path / "model.json", tmp_path / "p"
    assert run("train", "--transform", transform, "--loss", "ndcg", files / "train.dat", model) == 0
    assert run("predict", files / "test.dat", model, predictions) == 0
    pipeline = load_model(model)
    assert type(pipeline[0]).__name__ == {"quantile": "QuantileTransformer", "standard": "StandardScaler"}[transform]
    X_test = load_letor(files / "test.dat", n_features=pipeline.n_features_in_)[0].toarray()
    scores = np.array([float(v) for v in predictions.read_text().split()])
    np.testing.assert_array_equal(scores, pipeline.decision_function(X_test))


def _one_error_line(capsys):
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    return lines[0]


def test_bad_input_gives_one_line_and_a_nonzero_exit(files, tmp_path, capsys):
    model = tmp_path / "model.json"
    assert run("train", "--max-iter", 20, files / "train.dat", model) == 0
    capsys.readouterr()
    assert run("train", tmp_path / "missing.dat", model) == 1
    assert "No such file or directory" in _one_error_line(capsys)
    (tmp_path / "bad.dat").write_text("1 qid:1 1:0.5\n0 qid:1 2:x # here\n")
    assert run("train", tmp_path / "bad.dat", tmp_path / "m2.json") == 1
    assert _one_error_line(capsys).endswith("bad.dat, line 2: bad feature value in token '2:x'")
    (tmp_path / "wide.dat").write_text("1 qid:1 1:0.5 40:1\n")
    assert run("predict", tmp_path / "wide.dat", model, tmp_path / "p") == 1
    assert "wide.dat, line 1: feature index 40 is beyond n_features=6" in _one_error_line(capsys)
    assert run("predict", files / "test.dat", files / "train.dat", tmp_path / "p") == 1
    assert "train.dat: not a valid ssvm model file: not JSON" in _one_error_line(capsys)
    assert run("predict", files / "test.dat", tmp_path / "nomodel.json", tmp_path / "p") == 1
    assert "nomodel.json" in _one_error_line(capsys)
    (tmp_path / "short").write_text("0.5\nabc\n")
    assert run("eval", files / "test.dat", tmp_path / "short") == 1
    assert _one_error_line(capsys).endswith("short, line 2: score 'abc' is not a number (one score per line)")
    (tmp_path / "short").write_text("0.5\n\n")
    assert run("eval", files / "test.dat", tmp_path / "short") == 1
    assert "has 1 scores but the test file has 60 rows" in _one_error_line(capsys)
    assert run("train", "--loss", "hinge", files / "train.dat", tmp_path / "m3.json") == 1
    assert _one_error_line(capsys).endswith("--loss hinge: choose one of ap, ndcg, zero_one, precision_at_k, "
                                            "pairwise, roc_auc, mrr, f1, prbep, ndcg_at_k, recall_at_k")
    assert not (tmp_path / "p").exists() and not (tmp_path / "m2.json").exists()


def test_a_pickled_model_is_refused_and_its_payload_never_runs(files, tmp_path, capsys):
    target = tmp_path / "payload_ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(target), "w"))

    (tmp_path / "evil.json").write_bytes(pickle.dumps(Payload()))
    assert run("predict", files / "test.dat", tmp_path / "evil.json", tmp_path / "p") == 1
    assert "evil.json: not a valid ssvm model file: it looks like a pickle" in _one_error_line(capsys)
    assert not target.exists()


def test_verbose_shows_the_traceback(files, tmp_path, capsys):
    assert run("predict", "-v", files / "test.dat", files / "train.dat", tmp_path / "p") == 1
    assert "Traceback" in capsys.readouterr().err


def test_version_and_the_console_entry_point(files, tmp_path):
    done = subprocess.run([sys.executable, "-m", "ssvm", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == f"ssvm {ssvm.__version__}"
    done = subprocess.run([sys.executable, "-m", "ssvm", "predict", str(files / "test.dat"),
                           str(tmp_path / "none.json"), str(tmp_path / "p")], capture_output=True, text=True)
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_k_of_precision_at_k_reaches_the_model(files, tmp_path):
    model = tmp_path / "model.json"
    assert run("train", "--loss", "precision_at_k", "-k", 3, "--max-iter", 30, files / "train.dat", model) == 0
    loaded = load_model(model)
    assert loaded.k == 3
    X, relevance, qid = load_letor(files / "train.dat")
    reference = RankSVM(loss="precision_at_k", k=3, max_iter=30).fit(X, relevance, qid=qid)
    np.testing.assert_array_equal(loaded.coef_, reference.coef_)


@pytest.mark.parametrize("trained_on, option, test_file", [("train1.dat", "yes", "test.dat"),
                                                            ("train.dat", "no", "test1.dat")])
def test_an_explicit_zero_based_overrides_the_models_index_base(files, tmp_path, trained_on, option, test_file):
    # the model keeps its training file's base; --zero-based yes / no says how this file is written
    model, predictions = tmp_path / "model.json", tmp_path / "p"
    assert run("train", "--max-iter", 30, files / trained_on, model) == 0
    assert run("predict", "--zero-based", option, files / test_file, model, predictions) == 0
    X_test = load_letor(files / test_file, zero_based=option == "yes", n_features=6)[0]
    scores = np.array([float(v) for v in predictions.read_text().split()])
    np.testing.assert_array_equal(scores, load_model(model).decision_function(X_test))


def test_a_file_trained_as_one_based_is_predicted_as_one_based(tmp_path):
    # the largest index is 4 and no row uses feature 0: 1-based, 4 features, as the user said
    (tmp_path / "train.dat").write_text("1 qid:1 4:2\n0 qid:1 1:1\n1 qid:2 2:1 4:1\n0 qid:2 3:1\n")
    model, predictions = tmp_path / "model.json", tmp_path / "p"
    assert run("train", "--zero-based", "no", "--max-iter", 20, tmp_path / "train.dat", model) == 0
    loaded, metadata = load_model(model, with_metadata=True)
    assert loaded.n_features_in_ == 4 and metadata["zero_based"] is False
    assert run("predict", tmp_path / "train.dat", model, predictions) == 0
    X = load_letor(tmp_path / "train.dat", zero_based=False)[0]
    scores = np.array([float(v) for v in predictions.read_text().split()])
    np.testing.assert_array_equal(scores, loaded.decision_function(X))


@pytest.fixture
def ssvm_log_level():
    logger = logging.getLogger("ssvm")
    level = logger.level
    yield logger
    logger.setLevel(level)


@pytest.mark.parametrize("flags, level", [(["-v"], logging.INFO), (["-vv"], logging.DEBUG),
                                          (["-v", "-v", "-v"], logging.DEBUG)])
def test_verbose_logs_a_summary_and_twice_every_iteration(files, tmp_path, caplog, ssvm_log_level, flags, level):
    model, predictions = tmp_path / "model.json", tmp_path / "p"
    caplog.set_level(logging.DEBUG, logger="ssvm")
    ssvm_log_level.setLevel(logging.WARNING)
    assert run("train", *flags, "--max-iter", 5, "--allow-unconverged", files / "train.dat", model) == 0
    assert ssvm_log_level.level == level
    assert run("predict", *flags, files / "test.dat", model, predictions) == 0
    messages = [record.getMessage() for record in caplog.records]
    assert any(m.startswith(f"{files / 'train.dat'}: 200 rows, 10 queries, 6 features") for m in messages)
    assert any(m.startswith(f"{files / 'test.dat'}: 60 scores") for m in messages)


@pytest.mark.parametrize("n_rows", [12, 1001])
def test_the_quantile_transform_takes_at_most_1000_quantiles(tmp_path, n_rows):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(n_rows, 3))
    dump_svmlight_file(X, (X[:, 0] > 0).astype(float), str(tmp_path / "train.dat"), query_id=np.arange(n_rows) % 4)
    assert run("train", "--transform", "quantile", "--max-iter", 5, "--allow-unconverged", tmp_path / "train.dat",
               tmp_path / "m.json") == 0
    assert load_model(tmp_path / "m.json")[0].n_quantiles == min(1000, n_rows)


def test_predict_refuses_a_model_that_is_not_a_rank_svm(files, tmp_path, capsys):
    from ssvm import LabelRankSVM, LatentRankSVM, save_model

    rng = np.random.default_rng(3)
    latent = LatentRankSVM(max_cccp_iter=1, max_iter=5).fit([rng.normal(size=(3, 6)) for _ in range(6)],
                                                            np.arange(6) % 2)
    labels = LabelRankSVM(max_iter=5).fit(rng.normal(size=(20, 6)), np.eye(3, dtype=int)[np.arange(20) % 3])
    for model in (latent, labels):
        save_model(model, tmp_path / "other.json")
        capsys.readouterr()
        assert run("predict", files / "test.dat", tmp_path / "other.json", tmp_path / "p") == 1
        assert f"holds a {type(model).__name__}; ssvm predict scores rows with a RankSVM" in _one_error_line(capsys)
        assert not (tmp_path / "p").exists()


def test_a_one_vs_rest_model_writes_a_score_per_class_on_each_line(files, tmp_path):
    from ssvm import save_model

    X, relevance, _ = load_letor(files / "train.dat")
    model = RankSVM(max_iter=10).fit(X, relevance)  # relevance 0..3 as classes, no queries
    assert model.classes_.size > 2
    save_model(model, tmp_path / "ovr.json")
    assert run("predict", files / "test.dat", tmp_path / "ovr.json", tmp_path / "p") == 0
    scores = np.array([[float(v) for v in line.split()] for line in (tmp_path / "p").read_text().splitlines()])
    np.testing.assert_array_equal(scores, model.decision_function(load_letor(files / "test.dat", n_features=6)[0]))


def _eval_table(capsys, *args):
    capsys.readouterr()
    assert run("eval", *args) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]  # trec_eval's: name, query, value
    return {name.strip(): float(value) for name, query, value in rows if query == "all"}


def test_eval_reads_scores_around_blank_lines_and_refuses_too_many(files, tmp_path, capsys):
    scores = np.random.default_rng(4).normal(size=60).tolist()
    (tmp_path / "p").write_text("".join(f"{s!r}\n" for s in scores))
    (tmp_path / "blank").write_text("".join(f"{s!r}\n" + ("\n" if i == 29 else "") for i, s in enumerate(scores)))
    assert _eval_table(capsys, files / "test.dat", tmp_path / "blank") == _eval_table(capsys, files / "test.dat",
                                                                                   tmp_path / "p")
    (tmp_path / "long").write_text("".join(f"{s!r}\n" for s in [*scores, 0.5]))
    assert run("eval", files / "test.dat", tmp_path / "long") == 1
    assert "long has 61 scores but the test file has 60 rows" in _one_error_line(capsys)


def test_eval_reports_cutoffs_1_5_10_by_default_on_graded_and_binary_files(files, tmp_path, capsys):
    scores = np.random.default_rng(5).normal(size=60).tolist()
    (tmp_path / "p").write_text("".join(f"{s!r}\n" for s in scores))
    graded = _eval_table(capsys, files / "test.dat", tmp_path / "p")
    at = {f"{name}_{k}" for name in ("ndcg_cut", "P") for k in (1, 5, 10)}  # the default cut-offs
    assert set(graded) == {"num_q", "map", "ndcg", *at, "recip_rank", "Rprec"}
    X, relevance, qid = load_letor(files / "test.dat")
    dump_svmlight_file(X, (relevance > 0).astype(float), str(tmp_path / "binary.dat"), query_id=qid)
    binary = _eval_table(capsys, tmp_path / "binary.dat", tmp_path / "p")
    assert set(binary) == {"num_q", "map", "ndcg", *at, "recip_rank", "Rprec"}
    assert binary["map"] == graded["map"]  # AP reads y > 0 whatever the grades
