"""Smoke test of scripts/exp_latent_diagnosis.py (issue 23's latent AP-SVM vs latent 0-1 SVM) and its
variant syntax."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
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
    variants = "ap:all:init=zero_one,zero_one:all,ap:best:C=10/100,ap:all:init=centre,ap:all:windows=2"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--data", "scenes", "--features", "hog",
                           "--variants", variants, "--C-zero-one", "100", "--json", str(out),
                           "--figure", str(tmp_path / "imputed.png")],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
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


@pytest.mark.parametrize("text", ["ap", "svm:all", "ap:some", "ap:all:x=1", "ap:all:init=corner",
                                  "ap:all:windows=0", "zero_one:all:windows=2", "ap:best:windows=2"])
def test_bad_variant_is_a_usage_error(module, text):
    with pytest.raises(SystemExit, match="bad variant"):
        module.parse_variant(text, _Args())


def test_variant_grids_and_defaults(module):
    spec = module.parse_variant("ap:best:C=10/100:area=0/0.1:init=zero_one", _Args())
    assert (spec["loss"], spec["negatives"], spec["init"]) == ("ap", "best", "zero_one")
    assert spec["C"] == [10.0, 100.0] and spec["area"] == [0.0, 0.1]
    default = module.parse_variant("zero_one:all", _Args())
    assert default["C"] == [5.0] and default["area"] == [0.2] and default["steps"] == 4


def test_centre_rows_pick_the_window_nearest_the_middle_half(module):
    from types import SimpleNamespace

    # two images 100 x 100 (row 0: the whole image): the middle half is [25, 25, 75, 75]
    boxes = np.array([[0, 0, 100, 100], [0, 0, 50, 50], [20, 20, 80, 80], [25, 25, 60, 60],
                      [0, 0, 100, 100], [30, 30, 70, 70], [50, 50, 100, 100]], dtype=float)
    split = SimpleNamespace(store=SimpleNamespace(boxes=boxes))
    rows = np.array([6, 5, 4, 0, 1, 2, 3])  # store rows in any order; bags of 3 and 4
    offsets = np.array([0, 3, 7])
    boxes[[4, 5, 6]] = boxes[[6, 5, 4]]  # rows 4..6 hold image 0's windows, whole image at row 6
    assert module.centre_rows(split, rows, offsets).tolist() == [1, 5]


class _Args:
    C, C_zero_one, min_window_area, max_cccp_iter = 1000.0, 5.0, 0.2, 4
