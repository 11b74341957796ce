"""What the command line says (issue 36 item 4): warnings as one line of text, index-base errors naming
--zero-based, a model file of another ssvm version, one rule for fractional grades, eval's own options."""

import json
import warnings

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

import ssvm
from ssvm import RankSVM, load_model
from ssvm.__main__ import main
from ssvm.exceptions import ModelVersionWarning
from ssvm.metrics import mean_average_precision, mean_ndcg


def run(*args):
    return main([str(a) for a in args])


def err_lines(capsys):
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and ".py:" not in captured.err, captured.err
    return captured.err.strip().splitlines()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """skips.dat: 12 queries, 4 without a relevant row and 1 all relevant (of two grades); zero.dat / one.dat:
    the same rows 0- and 1-based; half.dat: one grade of 0.5."""
    folder = tmp_path_factory.mktemp("messages")
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(240, 3)), 4)
    relevance = np.clip(np.round(X[:, 0] + 0.5 * rng.normal(size=240)), 0, 2)
    qid = np.repeat(np.arange(12), 20)
    relevance[qid < 4] = 0
    relevance[qid == 11] = 1 + np.arange(20) % 2  # all relevant, grades 1 and 2
    X[0, 0] = 1.0
    dump_svmlight_file(X, relevance, str(folder / "skips.dat"), zero_based=False, query_id=qid)
    dump_svmlight_file(X, relevance, str(folder / "zero.dat"), zero_based=True, query_id=qid)
    dump_svmlight_file(X, relevance, str(folder / "one.dat"), zero_based=False, query_id=qid)
    half = relevance.copy()
    half[100] = 0.5
    dump_svmlight_file(X, half, str(folder / "half.dat"), zero_based=False, query_id=qid)
    return folder


def test_skipped_queries_are_one_line_of_text_and_v_says_which(folder, tmp_path, capsys):
    assert run("train", folder / "skips.dat", tmp_path / "m.json") == 0
    assert err_lines(capsys) == ["ssvm train: skipped 5 of 12 queries (no relevant or no non-relevant document); "
                                 "-v for which"]
    assert run("train", "-v", 1, folder / "skips.dat", tmp_path / "m.json") == 0
    lines = [line for line in err_lines(capsys) if line.startswith("ssvm train:")]
    assert lines == ["ssvm train: skipped 5 of 12 queries (no relevant or no non-relevant document): 0 1 2 3 11"]


def test_a_model_file_of_another_ssvm_version_loads_with_one_warning(folder, tmp_path, capsys):
    assert run("train", folder / "one.dat", tmp_path / "m.json") == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_model(tmp_path / "m.json")  # this version: no warning
    document = json.loads((tmp_path / "m.json").read_text())
    document["ssvm_version"] = "9.9.0"
    (tmp_path / "old.json").write_text(json.dumps(document))
    with pytest.warns(ModelVersionWarning, match=f"written by ssvm 9.9.0 and is read by ssvm {ssvm.__version__}"):
        model = load_model(tmp_path / "old.json")
    np.testing.assert_array_equal(model.coef_, load_model(tmp_path / "m.json").coef_)
    capsys.readouterr()
    assert run("predict", folder / "one.dat", tmp_path / "old.json", tmp_path / "p") == 0
    lines = err_lines(capsys)
    assert len(lines) == 1 and lines[0].startswith(f"ssvm predict: warning: {tmp_path / 'old.json'} was written by "
                                                   "ssvm 9.9.0"), lines


def test_index_base_errors_name_the_zero_based_option(folder, tmp_path, capsys):
    assert run("train", folder / "zero.dat", tmp_path / "zero.json") == 0  # a 0-based model
    assert run("train", folder / "one.dat", tmp_path / "one.json") == 0  # a 1-based one
    capsys.readouterr()
    assert run("predict", folder / "one.dat", tmp_path / "zero.json", tmp_path / "p") == 1
    assert err_lines(capsys)[-1].endswith(f"is beyond n_features=3: the model was trained on a 0-based file; if "
                                          f"{folder / 'one.dat'} is 1-based (as SVM^rank writes), pass --zero-based no")
    assert run("predict", "--zero-based", "no", folder / "one.dat", tmp_path / "zero.json", tmp_path / "p") == 0
    assert run("predict", folder / "zero.dat", tmp_path / "one.json", tmp_path / "p") == 1
    assert err_lines(capsys)[-1].endswith("is out of range (indices start at 1; pass --zero-based yes for a 0-based "
                                          "file)")


def test_fractional_grades_one_rule_for_training_and_evaluation(folder, tmp_path, capsys):
    graded = ("the labels have 1 of 240 rows with non-integer relevance grades; graded NDCG and the pairwise losses "
              "need non-negative")
    assert run("train", "--loss", "ndcg", folder / "half.dat", tmp_path / "m.json") == 1
    line = err_lines(capsys)[-1]
    assert line.startswith(f"ssvm train: error: {graded}") and line.endswith("or --gain binary to count y > 0 as "
                                                                             "relevant"), line
    assert run("train", folder / "half.dat", tmp_path / "m.json") == 0  # AP: 0.5 is relevant (y > 0)
    assert run("predict", folder / "half.dat", tmp_path / "m.json", tmp_path / "p") == 0
    capsys.readouterr()
    assert run("eval", folder / "half.dat", tmp_path / "p") == 1  # graded NDCG by default
    assert err_lines(capsys)[-1].startswith(f"ssvm eval: error: {graded}")
    assert run("eval", "--gain", "binary", folder / "half.dat", tmp_path / "p") == 0
    # the Python API: the same two rules
    from ssvm.datasets import load_letor

    X, y, qid = load_letor(folder / "half.dat")
    with pytest.raises(ValueError, match="non-integer relevance grades"):
        RankSVM(loss="ndcg").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="non-integer relevance grades"):
        mean_ndcg(y, np.zeros(y.size), qid=qid)
    assert mean_average_precision(y, X[:, 0].toarray().ravel(), qid=qid) == mean_average_precision(
        y > 0, X[:, 0].toarray().ravel(), qid=qid)


def test_eval_says_which_queries_it_leaves_out_and_all_queries_keeps_them(folder, tmp_path, capsys):
    (tmp_path / "p").write_text("".join(f"{v}\n" for v in np.random.default_rng(1).normal(size=240)))
    assert run("eval", "-k", 5, folder / "skips.dat", tmp_path / "p") == 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == ["ssvm eval: queries left out of the means (every ranking of them scores the same: no relevant or "
                     "no non-relevant row, or for graded gains one grade), of 12: 4 for ndcg, ndcg_cut_5; 5 for map, "
                     "P_5, recip_rank, Rprec; --all-queries averages over every query, as trec_eval"]
    assert run("eval", "-v", "-k", 5, folder / "skips.dat", tmp_path / "p") == 0
    assert capsys.readouterr().err.strip().endswith("as trec_eval; queries 0 1 2 3 11")
    assert run("eval", "--all-queries", "--per-query", "-k", 5, folder / "skips.dat", tmp_path / "p") == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "nan" not in captured.out
    assert run("eval", "--per-query", "-k", 5, folder / "skips.dat", tmp_path / "p") == 0
    assert "map                   \t0\tnan" in capsys.readouterr().out


@pytest.mark.parametrize("value", ["0", "a", "5,-1", ","])
def test_eval_refuses_a_bad_cutoff_list(folder, tmp_path, capsys, value):
    with pytest.raises(SystemExit) as exit_:
        run("eval", "-k", value, folder / "skips.dat", tmp_path / "p")
    assert exit_.value.code == 2
    assert "argument -k: cut-offs" in capsys.readouterr().err


def test_eval_help_describes_its_own_v(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "-h"])
    out = " ".join(capsys.readouterr().out.split())
    assert "which queries are left out" in out and "solver summary" not in out
