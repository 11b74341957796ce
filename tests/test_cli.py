"""The SVM^light-style command line: ssvm train / predict / eval / --version on generated LETOR files."""

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
    assert sorted(values) == ["P_1", "P_10", "P_5", "map", "ndcg", "ndcg_cut_1", "ndcg_cut_10", "ndcg_cut_5", "num_q"]


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
    assert _one_error_line(capsys).endswith("--loss hinge: choose one of ap, ndcg, zero_one, precision_at_k")
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
