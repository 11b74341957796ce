"""The experiment scripts' shared helpers (scripts/_tables.py, _models.py, _oracle_timing.py,
_plots.py, _baseline.py): tables, the compared models and C by cross-validation, oracle timing,
figures, the old-vs-new runs."""

import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from _baseline import _child_argv, comparison_table, run_baseline  # noqa: E402
from _models import evaluate_model  # noqa: E402
from _oracle_timing import RecordingOracle, oracle_time_rows, time_oracles  # noqa: E402
from _plots import history_curve  # noqa: E402
from _tables import format_table  # noqa: E402

from ssvm.metrics import mean_average_precision, one_vs_rest_score, query_scores  # noqa: E402


# ---------------------------------------------------------------- format_table
def test_format_table_aligns_and_formats():
    rows = [{"model": "AP-SVM", "AP": 0.91234, "n": 3}, {"model": "0-1", "AP": None, "n": 12}]
    lines = format_table(rows, title="T", floatfmt=".2f").splitlines()
    assert lines[0] == "T"
    assert lines[1].split() == ["model", "AP", "n"]
    assert lines[3].split() == ["AP-SVM", "0.91", "3"]
    assert lines[4].split() == ["0-1", "-", "12"]
    # every line has the same width up to trailing blanks of the left-aligned last column
    assert len({len(line) for line in lines[1:]}) == 1
    # numbers are right-aligned: the "n" column ends at the same place
    assert lines[3].endswith(" 3") and lines[4].endswith("12")


def test_format_table_per_column_formats_and_missing_keys():
    text = format_table([{"a": 1.23456}, {"b": 2.5}], floatfmt={"a": ".1f", "b": ".3f"})
    body = text.splitlines()[2:]
    assert body[0].split() == ["1.2", "-"]
    assert body[1].split() == ["-", "2.500"]


def test_format_table_rejects_empty():
    with pytest.raises(ValueError, match="at least one row"):
        format_table([])


# ---------------------------------------------------------------- evaluate_model
def test_evaluate_model_one_vs_rest_is_mean_over_classes():
    class Fixed:
        classes_ = np.array(["a", "b", "c"])

        def decision_function(self, X):
            return X

    rng = np.random.default_rng(0)
    S = rng.standard_normal((30, 3))
    y = np.array(["a", "b", "c"] * 10)
    m = evaluate_model(Fixed(), S, y)
    expected = np.mean([average_precision_score(y == c, S[:, k]) for k, c in enumerate("abc")])
    assert m["AP"] == pytest.approx(expected)
    assert m["queries"] == 3


def test_select_C_picks_the_best_validation_score_and_counts_fits():
    from _models import ModelSpec, select_C
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)

    class Counter:
        n = 0

        def update(self, k):
            self.n += k

    counter = Counter()
    spec = ModelSpec("LinearSVC", None)
    best, scores = select_C(spec, X, y, [1e-4, 1.0], n_folds=3, progress=counter)
    assert counter.n == 6 and set(scores) == {1e-4, 1.0}
    assert best == max(scores, key=scores.get)
    assert all(0.0 < v <= 1.0 for v in scores.values())
    with pytest.raises(ValueError, match="C grid"):
        select_C(spec, X, y, [])
    with pytest.raises(ValueError, match="C grid"):
        select_C(spec, X, y, [0.0, 1.0])


# ---------------------------------------------------------------- oracle timing helpers
def _zero_one_like(scores, y):
    c = np.where(y, -1.0, 1.0) / len(y)
    return c, 0.5


def test_recording_oracle_copies_inputs():
    rec = RecordingOracle(_zero_one_like)
    s = np.array([1.0, 2.0])
    y = np.array([True, False])
    rec(s, y)
    s[0] = 99.0
    assert len(rec.calls) == 1 and rec.calls[0][0][0] == 1.0


def test_time_oracles_times_every_call_and_detects_disagreement():
    calls = [(np.arange(4.0), np.array([True, False, True, False]))] * 3
    times = time_oracles(calls, {"a": _zero_one_like, "b": _zero_one_like})
    assert set(times) == {"a", "b"} and all(t.shape == (3,) and (t >= 0).all() for t in times.values())

    def other(scores, y):
        return np.zeros_like(scores), 0.25

    with pytest.raises(ValueError, match="disagree"):
        time_oracles(calls, {"a": _zero_one_like, "b": other})
    with pytest.raises(ValueError, match="no oracle calls"):
        time_oracles([], {"a": _zero_one_like})


def test_oracle_time_rows_relative_to_qs():
    rows = oracle_time_rows("AP", [None] * 3, {"qs": np.array([1e-3, 2e-3, 3e-3]),
                                              "yue": np.array([4e-3, 4e-3, 5e-3])})
    assert [r["oracle"] for r in rows] == ["qs", "yue"]
    assert rows[0]["median ms/call"] == pytest.approx(2.0)
    assert rows[0]["total s"] == pytest.approx(6e-3)
    assert rows[1]["x QS"] == pytest.approx(2.0) and rows[0]["x QS"] == pytest.approx(1.0)
    assert oracle_time_rows("0-1", [None], {"auto": np.array([1e-4])})[0]["x QS"] is None


def test_history_curve_uses_gap_when_dual_missing():
    t, p, d = history_curve([{"seconds": 0.1, "primal": 2.0, "dual": None, "gap": 0.5},
                             {"seconds": 0.2, "primal": 1.5, "dual": 1.4}])
    np.testing.assert_allclose(t, [0.1, 0.2])
    np.testing.assert_allclose(d, [1.5, 1.4])


def test_one_vs_rest_score_and_evaluate_model_use_the_same_convention():
    rng = np.random.default_rng(0)
    S = rng.standard_normal((30, 3))
    y = np.array(["a", "b"] * 15)  # class "c" absent: it does not count
    classes = np.array(["a", "b", "c"])
    expected = np.mean([average_precision_score(y == c, S[:, k]) for k, c in enumerate("ab")])
    assert one_vs_rest_score(y, S, classes, loss="ap") == pytest.approx(expected, abs=1e-12)

    class Fixed:
        classes_ = classes

        def decision_function(self, X):
            return X

    assert evaluate_model(Fixed(), S, y) == {
        "AP": pytest.approx(expected, abs=1e-12),
        "NDCG": pytest.approx(one_vs_rest_score(y, S, classes, loss="ndcg"), abs=1e-12),
        "queries": 2,
    }
    grades, qid = rng.integers(0, 3, size=30), np.repeat(np.arange(6), 5)
    grades[qid == 0] = 1  # all relevant: does not count anywhere
    m = evaluate_model(Fixed(), S[:, 0], grades, qid)
    assert m["AP"] == pytest.approx(mean_average_precision(grades, S[:, 0], qid=qid), abs=1e-15)
    assert m["queries"] == query_scores(grades, S[:, 0], qid=qid).size <= 5


def test_baseline_comparison_table_pairs_cells_by_their_keys():
    new = [{"loss": "ap", "N": 10, "ms": 2.0, "loop_ms": None}, {"loss": "ndcg", "N": 10, "ms": 3.0},
           {"loss": "ap", "N": 20, "ms": 1.0}]
    old = [{"loss": "ndcg", "N": 10, "ms": 6.0}, {"loss": "ap", "N": 10, "ms": 1.0, "loop_ms": 4.0}]
    rows = comparison_table(new, old, ["loss", "N"], ["ms", "loop_ms"])
    assert rows == [{"loss": "ap", "N": 10, "ms new": 2.0, "ms old": 1.0, "ms new/old": 2.0},
                    {"loss": "ndcg", "N": 10, "ms new": 3.0, "ms old": 6.0, "ms new/old": 0.5}]


def test_baseline_child_gets_the_options_less_its_own():
    argv = ["--quick", "--baseline-python", "/old/python", "--json", "a.json", "--plot=dir", "--seed", "3"]
    assert _child_argv(argv, "b.json") == ["--quick", "--seed", "3", "--json", "b.json"]


def test_baseline_run_reads_the_childs_json(tmp_path):
    """The child runs the script with the other interpreter and the parent's options; a failing
    child is an error that says so."""
    script = tmp_path / "child.py"
    script.write_text("import json, sys\nargs = sys.argv[1:]\n"
                      "out = {'argv': args, 'exe': sys.executable}\n"
                      "open(args[args.index('--json') + 1], 'w').write(json.dumps(out))\n"
                      "sys.exit(3 if '--fail' in args else 0)\n")
    out = run_baseline(sys.executable, script, ["--quick", "--baseline-python", "x", "--json", "y"])
    assert out["argv"][:1] == ["--quick"] and out["exe"] == sys.executable
    with pytest.raises(RuntimeError, match="failed with status 3"):
        run_baseline(sys.executable, script, ["--fail"])
