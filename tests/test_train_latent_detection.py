"""Smoke test of scripts/train_latent_detection.py on its embedded default (no downloads, no ../shared)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "train_latent_detection.py"

pytest.importorskip("cv2", reason="the detection extra (opencv-contrib) is not installed")
pytest.importorskip("skimage", reason="the detection extra (scikit-image) is not installed")


def test_quick_run_on_embedded_scenes_writes_the_json(tmp_path):
    out = tmp_path / "result.json"
    paths = [str(SCRIPT.parents[1]), os.environ.get("PYTHONPATH")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--json", str(out), "--out", str(tmp_path / "work")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert set(result["classes"]) == {"cat", "cup", "face"}
    for values in result["classes"].values():
        assert set(values) == {"latent_ap_svm", "latent_zero_one", "whole_image"}
        assert all(0.0 <= ap <= 1.0 for ap in values.values())
    assert set(result["classes_image_ap"]) == set(result["classes"])
    assert set(result["lai_seconds"]) == {"qs", "yue"}
    assert all(t > 0 for t in result["lai_seconds"].values())
    assert set(result["stage_seconds"]) >= {"windows", "features", "training", "evaluation"}
    assert all(result["chosen_C"][name][model]["C"] in (10.0, 100.0)
               for name in result["classes"] for model in result["classes"][name])
    assert "latent_ap_svm" in proc.stdout and "Time per stage" in proc.stdout
    # the cached windows/features and the per-class checkpoints are reused by a resumed run
    assert list((tmp_path / "work" / "checkpoints").glob("cat-latent_ap_svm.npz"))
    again = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--json", str(out), "--out", str(tmp_path / "work"),
                            "--resume"], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(out.read_text())["classes"] == result["classes"]
