"""``ssvm train`` (issue 39): a deterministic --transform, no silent model after an unconverged or zero fit,
SVM^rank's ``-v N``, and a ``--version`` that imports nothing heavy."""

import filecmp
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from ssvm import load_model
from ssvm.__main__ import _verbosity_levels, main


def run(*args):
    return main([str(a) for a in args])


def one_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    lines = [line for line in err if line.startswith("ssvm train:")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """good.dat (learnable), scaled.dat (the same with features 10^-3 to 10^6 apart), flat.dat (rows of a
    query alike), big.dat (10,500 rows: QuantileTransformer subsamples above 10,000 by default)."""
    folder = tmp_path_factory.mktemp("train")
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(600, 5)), 4)
    relevance = np.clip(np.round(X[:, 0] + 0.5 * rng.normal(size=600)), 0, 3)
    qid = np.repeat(np.arange(30), 20)
    dump_svmlight_file(X, relevance, str(folder / "good.dat"), zero_based=False, query_id=qid)
    dump_svmlight_file(X * [1e6, 1, 1e-3, 1e4, 1], relevance, str(folder / "scaled.dat"), zero_based=False,
                       query_id=qid)
    dump_svmlight_file(np.repeat(X[::20], 20, axis=0), relevance, str(folder / "flat.dat"), zero_based=False,
                       query_id=qid)
    X = np.round(rng.lognormal(size=(10_500, 4)), 4)
    relevance = np.clip(np.round(np.log(X[:, 0]) + 0.5 * rng.normal(size=10_500)), 0, 3)
    dump_svmlight_file(X, relevance, str(folder / "big.dat"), zero_based=False,
                       query_id=np.repeat(np.arange(100), 105))
    return folder


def test_quantile_transform_gives_the_same_model_file_twice(files, tmp_path):
    for name in ("a.json", "b.json"):
        assert run("train", "--transform", "quantile", "--tol", 0.01, files / "big.dat", tmp_path / name) == 0
    assert filecmp.cmp(tmp_path / "a.json", tmp_path / "b.json", shallow=False)
    transform = load_model(tmp_path / "a.json")[0]
    assert transform.subsample is None and transform.n_quantiles_ == 1000  # quantiles of all 10,500 rows


def test_a_converged_fit_writes_its_model_without_a_word(files, tmp_path, capsys):
    assert run("train", files / "good.dat", tmp_path / "m.json") == 0
    assert "ssvm train" not in capsys.readouterr().err
    assert np.any(load_model(tmp_path / "m.json").coef_)


def test_an_unconverged_fit_is_refused_with_one_line(files, tmp_path, capsys):
    assert run("train", "--max-iter", 3, files / "good.dat", tmp_path / "m.json") == 1
    line = one_line(capsys)
    assert line.startswith("ssvm train: error: the solver stopped at its iteration limit before converging "
                           "(3 iterations, relative duality gap ")
    assert line.endswith("--tol 0.001); try --transform quantile (features on very different scales), a smaller "
                         "-c or a larger --max-iter; no model written (--allow-unconverged writes it anyway)")
    assert not (tmp_path / "m.json").exists()


def test_a_fit_stopped_at_w_zero_is_refused(files, tmp_path, capsys):
    # the case: raw features of very different scales at a large C end at w = 0, unconverged
    assert run("train", "-c", 100, "--max-iter", 20, files / "scaled.dat", tmp_path / "m.json") == 1
    line = one_line(capsys)
    assert "the solver stopped before converging, at w = 0: every row scores the same (20 iterations" in line
    assert "try --transform quantile" in line and "no model written" in line
    assert not (tmp_path / "m.json").exists()
    assert run("train", "-c", 100, "--transform", "quantile", files / "scaled.dat",
               tmp_path / "m.json") == 0  # what the line says to try
    assert np.any(load_model(tmp_path / "m.json")[-1].coef_)


def test_a_fit_converged_to_w_zero_is_refused(files, tmp_path, capsys):
    assert run("train", files / "flat.dat", tmp_path / "m.json") == 1
    line = one_line(capsys)
    assert "error: the fit converged to w = 0, every row scoring the same" in line
    assert "the features do not tell the rows of a query apart; no model written" in line
    assert not (tmp_path / "m.json").exists()


def test_allow_unconverged_writes_the_model_and_says_so(files, tmp_path, capsys):
    assert run("train", "--max-iter", 3, "--allow-unconverged", files / "good.dat", tmp_path / "m.json") == 0
    line = one_line(capsys)
    assert line.startswith("ssvm train: warning: the solver stopped at its iteration limit before converging")
    assert line.endswith("model written anyway (--allow-unconverged)")
    assert load_model(tmp_path / "m.json").n_iter_ == 3


def test_svmrank_verbosity_levels_are_never_file_names(files, tmp_path, capsys):
    assert _verbosity_levels(["train", "-v", "1", "a", "b"]) == ["train", "-v", "a", "b"]
    assert _verbosity_levels(["-v", "2", "a"]) == _verbosity_levels(["-v2", "a"]) == ["-v", "-v", "a"]
    assert _verbosity_levels(["--verbose", "0", "-vv", "-v", "a"]) == ["-vv", "-v", "a"]
    assert _verbosity_levels(["-v", "-v", "3", "a", "--", "-v", "1"]) == ["-v"] * 4 + ["a", "--", "-v", "1"]
    train = files / "good.dat"
    before = train.read_bytes()
    assert run("train", "-v", 1, train, tmp_path / "m.json") == 0  # SVM^rank's way: -v 1 is the level
    assert train.read_bytes() == before and (tmp_path / "m.json").exists()
    assert "RankSVM: J=" in capsys.readouterr().out  # level 1: the solver's summary
    assert run("train", "-v", 2, "--max-iter", 2, "--allow-unconverged", train, tmp_path / "m2.json") == 0
    assert "RankSVM: iteration 2" in capsys.readouterr().out  # level 2: every iteration, as -vv
    assert run("train", "-v", train, tmp_path / "m3.json") == 0  # a bare -v still counts
    assert (tmp_path / "m3.json").exists()


def test_version_imports_nothing_heavy():
    code = ("import sys\nfrom ssvm.__main__ import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'scipy', 'sklearn', 'cvxpy', 'numba', "
            "'joblib'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["ssvm 0.1.0", "[]"]
