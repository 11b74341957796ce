"""The main job (``ssvm demo``): a thin entry point over public API (its helpers' tests, now the
experiment scripts' own, are in tests/test_script_helpers.py)."""

import json
import subprocess
import sys

import pytest


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
    proc = subprocess.run([sys.executable, "-m", "ssvm", "demo", "--quick", flag], cwd=tmp_path,
                          capture_output=True, text=True)
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
                         text=True, check=True).stdout
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
    # the per-query recipe: RankSVMCV with qid (folds keep queries whole, each C scored per query);
    # the routed GridSearchCV recipe, for searching other parameters too, is in docs/queries.md
    assert "RankSVMCV(" in tour and "qid=qid)" in tour
    queries = (Path(__file__).resolve().parents[1] / "docs" / "queries.md").read_text(encoding="utf-8")
    assert "GridSearchCV" in queries and "enable_metadata_routing=True" in queries and "groups=qid" in queries
