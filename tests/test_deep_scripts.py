"""Smoke tests of the deep-network scripts (``--quick`` in a subprocess)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def run_script(name, tmp_path, *extra):
    out_json = tmp_path / f"{name}.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / f"{name}.py"), "--quick", "--json", str(out_json),
         "--plot", str(tmp_path / "plots"), *extra],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, json.loads(out_json.read_text()), sorted(p.name for p in (tmp_path / "plots").iterdir())


def test_exp_deep_rank_losses_quick(tmp_path):
    out, result, pngs = run_script("exp_deep_rank_losses", tmp_path)
    assert "Fig. 3a" in out and "Fig. 3b" in out and "digits" in out
    song = {r["method"]: r for r in result["song"]["rows"]}
    assert set(song) == {"x-ent", "hinge-AP", "pos-AP", "neg-AP", "hinge-01", "pos-01", "neg-01", "per-AP", "per-01"}
    assert all(0.0 <= r["train AP"] <= 1.0 for r in song.values())
    assert {r["flipped"] for r in result["noise"]["rows"]} == {"0%", "30%"}
    digits = {r["model"]: r for r in result["digits"]["rows"]}
    assert set(digits) == {"x-ent", "hinge-AP", "hinge-NDCG", "pos-AP", "hinge-01"}
    assert all(0.0 <= r["test mean AP"] <= 1.0 for r in digits.values())
    models = [r["model"] for r in result["letor"]["rows"]]
    assert models[:5] == ["x-ent", "hinge-AP", "hinge-NDCG", "pos-AP", "hinge-01"]
    assert models[5].startswith("LGBMRanker")
    graded = result["graded"]["per_seed"]
    assert {"hinge-NDCG graded (exp gains)", "hinge-NDCG binary", "x-ent", "lambdaLoss NDCG-Loss2++"} <= set(graded)
    assert all(len(runs) == 2 and 0.0 <= runs[0]["NDCG"] <= 100.0 for runs in graded.values())
    timing = [r for r in result["timing"]["rows"] if r["ms/step"] is not None]
    assert {r["oracle"] for r in timing} == {"qs", "yue", "search", "dp", "chakrabarti"}
    assert all(0.0 < r["loss %"] < 100.0 for r in timing)
    assert pngs == ["noisy_ball.png", "song_synthetic.png"]


def test_exp_deep_rank_losses_rejects_unknown_parts(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPTS / "exp_deep_rank_losses.py"), "--quick", "--parts", "cifar"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode != 0 and "unknown part" in proc.stderr


def test_bench_deep_losses_quick(tmp_path):
    out, result, pngs = run_script("bench_deep_losses", tmp_path)
    assert "torch.sort" in out and "Targets" in out
    cells = {(r["n"], r["layout"], r["loss"]) for r in result["rows"]}
    assert (10_000, "one query", "hinge-AP") in cells and (10_000, "queries of 100", "pos-AP") in cells
    assert all(r["ms"] > 0 and r["torch.sort ms"] > 0 for r in result["rows"])
    assert {t["target"].split(" <=")[0] for t in result["targets"]} == {"hinge-AP", "pos-AP", "hinge-NDCG",
                                                                         "graded hinge-NDCG"}
    assert {(r["n"], r["layout"]) for r in result["graded"]} == {(1000, "one query"), (1000, "queries of 100"),
                                                                 (10_000, "one query"), (10_000, "queries of 100")}
    assert all(r["graded ms"] > 0 and r["binary ms"] > 0 for r in result["graded"])
    assert {r["MLP"] for r in result["mlp_step"]} == {"136-256-256-1", "10-32-32-32-1"}
    assert all(0 < r["loss % of step"] < 100 for r in result["mlp_step"])
    assert pngs == ["deep_losses_speed.png"]
