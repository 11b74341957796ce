"""The main job (``ssvm demo``) and the evaluation helpers it shares in ``ssvm._experiments``."""

import json
import subprocess
import sys

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from ssvm._experiments.model_selection import evaluate_model
from ssvm._experiments.oracle_timing import RecordingOracle, oracle_time_rows, time_oracles
from ssvm._experiments.plots import history_curve
from ssvm._experiments.tables import format_table


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
    from sklearn.datasets import load_iris

    from ssvm._experiments.model_selection import ModelSpec, select_C

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


# ---------------------------------------------------------------- the job itself
def test_demo_quick_end_to_end(tmp_path, capsys):
    from ssvm.__main__ import main

    out_json = tmp_path / "demo.json"
    assert main(["demo", "--quick", "--no-progress", "--json", str(out_json),
                 "--plot", str(tmp_path / "plots")]) == 0
    text = capsys.readouterr().out
    for name in ("AP-SVM", "NDCG-SVM", "0-1 SVM", "test mean AP", "median ms/call"):
        assert name in text
    result = json.loads(out_json.read_text())
    assert [r["model"] for r in result["quality"]] == ["AP-SVM", "NDCG-SVM", "0-1 SVM"]
    for row in result["quality"]:
        assert 0.5 < row["test mean AP"] <= 1.0  # digits retrieval is easy; chance is ~0.1
        assert 0.5 < row["test mean NDCG"] <= 1.0
    oracles = {(r["loss"], r["oracle"]) for r in result["oracle_times"]}
    assert oracles == {("AP", "qs"), ("AP", "yue"), ("AP", "search"), ("AP", "dp"),
                       ("NDCG", "qs"), ("NDCG", "chakrabarti"), ("0-1", "auto")}
    assert all(r["calls"] > 0 and r["median ms/call"] > 0 for r in result["oracle_times"])
    pngs = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert pngs == ["convergence_ap.png", "convergence_ndcg.png", "precision_recall.png"]
    assert all((tmp_path / "plots" / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)


@pytest.mark.parametrize("flag", ["-v", "-vv"])
def test_demo_log_lines_do_not_land_inside_the_progress_bar(tmp_path, flag):
    from pathlib import Path

    env = {**__import__("os").environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.run([sys.executable, "-m", "ssvm", "demo", "--quick", flag], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "training:" in proc.stderr  # the bar was drawn
    records = [line for line in proc.stderr.split("\n") if " INFO " in line or " DEBUG " in line]
    assert len(records) > 10
    debug = [line for line in records if " DEBUG ssvm.solvers: iteration " in line]
    assert (len(debug) > 10) if flag == "-vv" else not debug  # -vv: every solver iteration
    # what a terminal shows of each line (after the last carriage return) is the record alone
    assert all(line.split("\r")[-1][:4].isdigit() for line in records), records[:3]
    assert "np.int64" not in proc.stderr and "np.float64" not in proc.stderr


def test_python_m_ssvm_help_lists_demo():
    out = subprocess.run([sys.executable, "-m", "ssvm", "--help"], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    assert "demo" in out


def test_cli_rejects_unknown_command():
    from ssvm.__main__ import main

    with pytest.raises(SystemExit):
        main(["nope"])


def test_readme_starts_with_the_two_commands():
    """(Its python blocks run in tests/test_readme.py.)"""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[3].startswith("pip install . && ssvm demo")
    assert lines[4].startswith('pip install ".[dev]" && python -m pytest -q')
    tour = text.split("<!-- tour-start -->", 1)[1].split("<!-- tour-end -->", 1)[0]
    # the per-query recipe: routing on (RankSVM requests qid for fit and score), queries kept whole
    assert "GridSearchCV" in tour and "enable_metadata_routing=True" in tour and "groups=qid" in tour
