"""The bundled data sets: their loaders, their content, and that an installed wheel carries them."""

import os
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

from ssvm.datasets import detection_mini_path, load_letor_sample, load_voc, samples

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("subset, n_rows, n_queries", [("train", 3005, 201), ("test", 768, 50)])
def test_letor_sample_matches_sklearns_reader(subset, n_rows, n_queries):
    X, relevance, qid = load_letor_sample(subset)
    path = samples.DATA_DIR / "letor_sample" / f"rank.{subset}.gz"
    X_ref, y_ref = load_svmlight_file(str(path), n_features=300, zero_based=False)
    assert X.shape == (n_rows, 300) and (X != X_ref).nnz == 0
    np.testing.assert_array_equal(relevance, y_ref)
    assert set(np.unique(relevance)) <= {0, 1, 2, 3, 4}
    sizes = np.loadtxt(path.with_suffix(".query"), dtype=np.int64)
    np.testing.assert_array_equal(qid, np.repeat(np.arange(n_queries), sizes))


def test_letor_sample_rejects_unknown_subset():
    with pytest.raises(ValueError, match="subset must be 'train' or 'test', got 'valid'"):
        load_letor_sample("valid")


def test_missing_bundled_data_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setattr(samples, "DATA_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match="bundled data set 'letor_sample' is missing.*reinstall"):
        load_letor_sample()
    with pytest.raises(FileNotFoundError, match="bundled data set 'detection_mini' is missing"):
        detection_mini_path()


def test_detection_mini_images_match_their_annotations():
    Image = pytest.importorskip("PIL.Image")
    root = detection_mini_path()
    assert (root / "LICENSE.raccoon").is_file() and (root / "LICENSE.microcontroller").is_file()
    for split in ("train", "test"):
        data = load_voc(root, split)
        for path, size, boxes in zip(data.image_paths, data.image_sizes, data.boxes):
            with Image.open(path) as image:
                assert tuple(image.size) == tuple(size) and max(image.size) <= 512
            assert len(boxes) and (boxes[:, :2] >= 1).all() and (boxes[:, 2:] >= boxes[:, :2]).all()
            assert (boxes[:, 2] <= size[0]).all() and (boxes[:, 3] <= size[1]).all()
    objects = sum(len(ET.parse(p).getroot().findall("object")) for p in (root / "Annotations").glob("*.xml"))
    assert objects == 217 + 177


def test_an_installed_wheel_carries_the_data(tmp_path):
    """Build the wheel from a clean copy, unpack it elsewhere, and load both data sets from it."""
    pytest.importorskip("mesonpy", reason="building the wheel needs meson-python (the dev extra)")
    source = tmp_path / "source"  # a copy, so that no build/ folder or stale file of the checkout counts
    shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    for name in ("pyproject.toml", "README.md", "meson.build"):
        shutil.copy(REPO / name, source / name)
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "dist"), str(source)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("ssvm-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(tmp_path / "site")
    code = textwrap.dedent("""
        import sys  # an editable install's import hook (meson-python's) would win over PYTHONPATH: drop it
        sys.meta_path = [f for f in sys.meta_path if not type(f).__module__.endswith("_editable_loader")]
        import ssvm.datasets as d
        X, rel, qid = d.load_letor_sample("test")
        voc = d.load_voc(d.detection_mini_path(), "train")
        print(d.__file__, X.shape, len(set(qid)), len(voc), all(p.is_file() for p in voc.image_paths))
    """)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    where, rest = run.stdout.split(" ", 1)
    assert Path(where).is_relative_to(tmp_path / "site")
    assert rest.strip() == "(768, 300) 50 262 True"
