"""Smoke test of scripts/exp_latent_diagnosis.py (issue 23's latent AP-SVM vs latent 0-1 SVM) and its
variant syntax."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "exp_latent_diagnosis.py"

pytest.importorskip("cv2", reason="the detection extra (opencv-contrib) is not installed")
pytest.importorskip("skimage", reason="the detection extra (scikit-image) is not installed")


@pytest.fixture
def module(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    import exp_latent_diagnosis

    return exp_latent_diagnosis


def test_quick_run_on_scenes_writes_the_json_and_the_figure(tmp_path):
    out = tmp_path / "result.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(SCRIPT.parents[1]), os.environ.get("PYTHONPATH")]))}
    variants = "ap:all:init=zero_one,zero_one:all,ap:best:C=10/100"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--data", "scenes", "--features", "hog",
                           "--variants", variants, "--C-zero-one", "100", "--json", str(out),
                           "--figure", str(tmp_path / "imputed.png")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    rows = result["rows"]
    assert {(r["class"], r["variant"]) for r in rows} == {
        (c, v) for c in ("cat", "cup", "face") for v in variants.split(",")}
    for r in rows:
        assert 0.0 <= r["test AP"] <= 1.0 and 0.0 <= r["CorLoc"] <= 1.0 and 0.0 <= r["val AP"] <= 1.0
        assert 1 <= r["steps"] <= 3 and len(r["J path"]) == r["steps"] + 1 and len(r["changed"]) == r["steps"]
        assert r["C"] == (100.0 if r["variant"] == "zero_one:all" else 1000.0 if r["variant"].startswith("ap:all")
                          else r["C"])
    assert {r["C"] for r in rows if r["variant"].startswith("ap:best")} <= {10.0, 100.0}
    # each class trains its own 0-1 SVM (the start of ap:all:init=zero_one is remembered per class)
    assert len({tuple(r["J path"]) for r in rows if r["variant"] == "zero_one:all"}) == 3
    assert [m["variant"] for m in result["means"]] == variants.split(",")
    assert (tmp_path / "imputed.png").stat().st_size > 1000
    assert "Latent detectors on scenes" in proc.stdout


@pytest.mark.parametrize("text", ["ap", "svm:all", "ap:some", "ap:all:x=1", "ap:all:init=centre"])
def test_bad_variant_is_a_usage_error(module, text):
    with pytest.raises(SystemExit, match="bad variant"):
        module.parse_variant(text, _Args())


def test_variant_grids_and_defaults(module):
    spec = module.parse_variant("ap:best:C=10/100:area=0/0.1:init=zero_one", _Args())
    assert (spec["loss"], spec["negatives"], spec["init"]) == ("ap", "best", "zero_one")
    assert spec["C"] == [10.0, 100.0] and spec["area"] == [0.0, 0.1]
    default = module.parse_variant("zero_one:all", _Args())
    assert default["C"] == [5.0] and default["area"] == [0.2] and default["steps"] == 4


class _Args:
    C, C_zero_one, min_window_area, max_cccp_iter = 1000.0, 5.0, 0.2, 4
