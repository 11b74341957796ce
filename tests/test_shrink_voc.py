"""tools/shrink_voc.py, which made the bundled detection_mini: images shrunk, boxes rescaled to match."""

import sys
from pathlib import Path

import numpy as np
import pytest

from ssvm.datasets import load_voc

TOOLS = Path(__file__).resolve().parents[1] / "tools"
Image = pytest.importorskip("PIL.Image")


@pytest.fixture(scope="module")
def shrink():
    sys.path.insert(0, str(TOOLS))
    try:
        import shrink_voc
    finally:
        sys.path.remove(str(TOOLS))
    return shrink_voc


def make_voc(root, images):
    """A VOC folder; images maps id -> ((width, height), [boxes])."""
    for sub in ("Annotations", "JPEGImages", "ImageSets/Main"):
        (root / sub).mkdir(parents=True)
    for image_id, ((width, height), boxes) in images.items():
        Image.new("RGB", (width, height), (90, 120, 30)).save(root / "JPEGImages" / f"{image_id}.jpg")
        objects = "".join(
            f"<object><name>thing</name><pose>Left</pose><difficult>0</difficult><bndbox><xmin>{b[0]}</xmin>"
            f"<ymin>{b[1]}</ymin><xmax>{b[2]}</xmax><ymax>{b[3]}</ymax></bndbox></object>" for b in boxes)
        (root / "Annotations" / f"{image_id}.xml").write_text(
            f"<annotation><filename>{image_id}.jpg</filename><size><width>{width}</width>"
            f"<height>{height}</height><depth>3</depth></size>{objects}</annotation>")
    (root / "ImageSets" / "Main" / "train.txt").write_text("".join(f"{i}\n" for i in images))
    (root / "LICENSE").write_text("licence text")


def test_scale_interval_by_hand(shrink):
    assert shrink.scale_interval(1, 1000, 1000, 512) == (1, 512)  # the whole axis stays whole
    assert shrink.scale_interval(501, 1000, 1000, 100) == (51, 100)  # the right half stays the right half
    assert shrink.scale_interval(10, 10, 1000, 100) == (2, 2)  # a one-pixel box is not emptied
    assert shrink.scale_interval(0, 5, 100, 100) == (1, 5)  # out-of-image coordinates are clipped


def test_shrinks_images_and_rescales_boxes(shrink, tmp_path):
    images = {"big": ((2000, 1000), [(1, 1, 2000, 1000), (1001, 501, 1500, 700)]),
              "small": ((300, 200), [(10, 20, 30, 40)])}
    make_voc(tmp_path / "in", images)
    n_images, n_bytes = shrink.shrink_voc(tmp_path / "in", tmp_path / "out", max_side=500)
    assert n_images == 2 and n_bytes > 0
    data = load_voc(tmp_path / "out", "train")
    np.testing.assert_array_equal(data.image_sizes, [[500, 250], [300, 200]])
    np.testing.assert_array_equal(data.boxes[0], [[1, 1, 500, 250], [251, 126, 375, 175]])
    np.testing.assert_array_equal(data.boxes[1], [[10, 20, 30, 40]])  # not resized: boxes unchanged
    with Image.open(tmp_path / "out" / "JPEGImages" / "big.jpg") as image:
        assert image.size == (500, 250)
    assert (tmp_path / "out" / "LICENSE").read_text() == "licence text"
    assert "<pose>Left</pose>" in (tmp_path / "out" / "Annotations" / "big.xml").read_text()
    with pytest.raises(ValueError, match="exists"):
        shrink.shrink_voc(tmp_path / "in", tmp_path / "out")
