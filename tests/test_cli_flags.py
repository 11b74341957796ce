"""SVM^light-family flags on ssvm train (issue 36 item 3): -e, -# and -l 4 taken, the others refused in one line."""

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from ssvm import load_model
from ssvm.__main__ import main


def run(*args):
    return main([str(a) for a in args])


def one_line(capsys):
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err and "usage" not in captured.err, captured.err
    return lines[0]


@pytest.fixture(scope="module")
def train_file(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(400, 4)), 4)
    relevance = np.clip(np.round(X[:, 0] + 0.5 * rng.normal(size=400)), 0, 2)
    path = tmp_path_factory.mktemp("flags") / "train.dat"
    dump_svmlight_file(X, relevance, str(path), zero_based=False, query_id=np.repeat(np.arange(10), 40))
    return path


@pytest.mark.parametrize("flags, params", [
    (["-e", "0.01"], {"tol": 0.01}),
    (["-#", "500"], {"max_iter": 500}),
    (["-l", "4", "-k", "5"], {"loss": "precision_at_k", "k": 5}),
    (["-l", "4", "--loss", "precision_at_k"], {"loss": "precision_at_k"}),
    (["-t", "0", "-z", "p"], {"loss": "ap"}),
    (["-l", "1"], {"loss": "pairwise"}),
    (["-l", "2"], {"loss": "roc_auc"}),
    (["-l", "3"], {"loss": "prbep"}),
    (["-l", "10"], {"loss": "roc_auc"}),
    (["-l", "5", "-k", "3"], {"loss": "recall_at_k", "k": 3}),
])
def test_svmlight_flags_that_ssvm_has_set_the_models_parameters(train_file, tmp_path, flags, params):
    assert run("train", *flags, train_file, tmp_path / "m.json") == 0
    model_params = load_model(tmp_path / "m.json").get_params()
    assert {name: model_params[name] for name in params} == params


@pytest.mark.parametrize("flags, message", [
    (["-l", "0"], "-l 0 is SVM^perf's zero/one loss of the whole prediction vector; ssvm has no such loss: "
                  "pass --loss"),
    (["-l", "1", "--loss", "f1"], "-l 1 (SVM^rank's number of swapped pairs (SVM^perf's -l 1, F1, is --loss f1)) is "
                                  "--loss pairwise, not --loss f1"),
    (["-l", "7"], "-l 7 is not a loss number of SVM^rank or SVM^perf; ssvm has no such loss"),
    (["-l", "4", "--loss", "ap"], "-l 4 (SVM^perf's precision at k) is --loss precision_at_k, not --loss ap"),
    (["-t", "2"], "-t 2: ssvm trains linear models only (-t 0)"),
    (["-w", "3"], "-w 3: ssvm has no SVM^struct algorithm numbers; it solves the 1-slack problem with --solver"),
    (["-z", "r"], "-z r: ssvm train always learns a ranking (SVM^light's -z p)"),
    (["--loss", "ap", "--gain", "linear"],
     "--gain sets the gains of --loss ndcg and ndcg_at_k; --loss ap counts r > 0 as relevant"),
    (["--loss", "ap", "-k", "5"],
     "-k is the cut-off of --loss precision_at_k, recall_at_k and ndcg_at_k; --loss ap has none"),
    (["--loss", "hinge"], "--loss hinge: choose one of ap, ndcg, zero_one, precision_at_k"),
])
def test_each_flag_ssvm_lacks_is_refused_alone_in_one_line(train_file, tmp_path, capsys, flags, message):
    assert run("train", *flags, train_file, tmp_path / "m.json") == 1
    line = one_line(capsys)
    assert line.startswith(f"ssvm train: error: {message}"), line
    assert not (tmp_path / "m.json").exists()


def test_train_help_lists_the_svmrank_equivalents_and_when_to_transform(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    for text in ("SVM^rank / SVM^light flags:", "-e EPS     = --tol", "-# N       = --max-iter",
                 "-l N       SVM^rank's 1 (swapped pairs) = --loss pairwise", "-t 0",
                 "--transform quantile: use it"):
        assert text in out, text
