"""Smoke test of scripts/exp_detection_losses.py (Song et al.'s detection set-up) and its batches."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "exp_detection_losses.py"

pytest.importorskip("cv2", reason="the detection extra (opencv-contrib) is not installed")
pytest.importorskip("torch", reason="the torch extra is not installed")


@pytest.fixture
def module(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    import exp_detection_losses

    return exp_detection_losses


def test_quick_run_writes_the_json(tmp_path):
    out = tmp_path / "result.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(SCRIPT.parents[1]), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--data", "scenes", "--features", "hog",
                           "--json", str(out)], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert [(r["noise"], r["loss"]) for r in result["rows"]] == [
        (n, m) for n in ("0%", "20%") for m in ("x-ent", "hinge-AP", "pos-AP")]
    for row in result["rows"]:
        assert 0.0 <= row["mean"] <= 1.0
        assert row["mean"] == pytest.approx(np.mean([row[c] for c in ("cat", "cup", "face")]))
    clean = {r["class"]: r["positives"] for r in result["runs"] if r["noise"] == 0.0}
    assert all(p > 0 for p in clean.values())
    noisy = [r for r in result["runs"] if r["noise"] == 0.2]
    assert all(r["rows"] == next(c["rows"] for c in result["runs"] if c["class"] == r["class"]) for r in noisy)
    assert "Song et al." in proc.stdout


def test_stratified_batches_cover_every_row_once_with_a_positive_each(module):
    rng = np.random.default_rng(0)
    for labels in (np.r_[np.ones(7), np.zeros(993)].astype(int), np.r_[np.ones(300), np.zeros(5)].astype(int),
                   np.r_[1, np.zeros(40)].astype(int)):
        batches = module.batches(labels, 64, rng)
        rows = np.concatenate(batches)
        assert sorted(rows.tolist()) == list(range(labels.size))
        assert all(labels[b].any() and (labels[b] == 0).any() for b in batches)
        # batches of the requested size, unless there are too few positives to give each one
        assert len(batches) == min(int(np.ceil(labels.size / 64)), int(labels.sum()))


@pytest.mark.parametrize("argv", [["--noise", "1"], ["--noise", "x"], ["--lrs", "0"], ["--hidden", "-1"],
                                  ["--batch", "1"], ["--epsilon", "0"]])
def test_bad_options(module, argv):
    with pytest.raises(SystemExit):
        module.parse_args([*argv, "--features", "hog"])
