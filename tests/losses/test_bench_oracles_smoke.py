"""Smoke test: ``scripts/bench_oracles.py --quick`` runs and writes its JSON and its figure."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_oracles.py"


def test_bench_oracles_quick(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--json", str(out), "--plot",
                           str(tmp_path / "plots")], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "ap / qs" in proc.stdout and "Paper Table-2" in proc.stdout
    data = json.loads(out.read_text())
    cells = [r for r in data["records"] if r["loss"] == "ap" and r["oracle"] == "qs"]
    assert cells and all(r["ms"] > 0 for r in cells)
    assert {r["oracle"] for r in data["paper_table2"]} == {"qs", "yue", "chakrabarti"}
    assert "Large P" in proc.stdout
    big = [r for r in data["large_p"] if r["oracle"] == "qs"]
    assert len(big) == 4 and all(r["ms"] > 0 and r["P"] > 500 for r in big)
    assert "Batched" in proc.stdout
    assert {(r["loss"], r["oracle"]) for r in data["batched"]} == {("ap", "qs"), ("ndcg", "qs"), ("ndcg graded", "qs"),
                                                                      ("zero_one", "auto")}
    assert all(r["ms"] > 0 and r["loop_ms"] > 0 for r in data["batched"])
    assert "Public entry" in proc.stdout and "np.sort:" in proc.stdout  # names numpy's sort on this CPU
    assert [r["regime"] for r in data["public_entry"]] == ["interleaved", "trained"]
    assert all(r["QS AP ms"] > 0 and r["Chakrabarti / QS"] > 0 for r in data["public_entry"])
    for r in data["public_entry"]:  # the target's bar: the faster of numpy's sorts (AVX-512 off where it is on)
        bar = min(t for t in (r["np.sort(neg) ms"], r["np.sort, AVX-512 off ms"]) if t)
        assert r["AP / faster sort"] == pytest.approx(r["QS AP ms"] / bar)
    assert "QS sorts a large query's keys by: " in proc.stdout
    assert [p.name for p in (tmp_path / "plots").iterdir()] == ["oracle_times.png"]
