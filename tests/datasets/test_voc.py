"""Tests of the VOC-layout reader on detection_mini and on small synthetic devkits."""

import numpy as np
import pytest

from ssvm.datasets import detection_mini_path, find_voc_root, load_voc

OBJECT = """<object><name>{name}</name><difficult>{difficult}</difficult>
<bndbox><xmin>{x1}</xmin><ymin>{y1}</ymin><xmax>{x2}</xmax><ymax>{y2}</ymax></bndbox></object>"""


def make_devkit(base, annotations, splits, year="2007", images=True):
    """Write a tiny VOC devkit: annotations maps id -> list of (name, difficult, box)."""
    root = base / "VOCdevkit" / f"VOC{year}"
    for sub in ("Annotations", "JPEGImages", "ImageSets/Main"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for image_id, objects in annotations.items():
        body = "".join(
            OBJECT.format(name=name, difficult=int(hard), x1=b[0], y1=b[1], x2=b[2], y2=b[3])
            for name, hard, b in objects
        )
        (root / "Annotations" / f"{image_id}.xml").write_text(
            f"<annotation><filename>{image_id}.jpg</filename>"
            f"<size><width>50</width><height>40</height><depth>3</depth></size>{body}</annotation>"
        )
        if images:
            (root / "JPEGImages" / f"{image_id}.jpg").write_bytes(b"")
    for split, ids in splits.items():
        (root / "ImageSets" / "Main" / f"{split}.txt").write_text("".join(f"{i}\n" for i in ids))
    return root


ANNOTATIONS = {
    "000001": [("dog", False, (1, 2, 30, 40)), ("cat", True, (5, 5, 9.5, 9))],
    "000002": [],
    "000003": [("cat", False, (2, 2, 3, 3)), ("cat", True, (4, 4, 8, 8))],
    "000004": [("cat", True, (1, 1, 50, 40))],
}


def test_detection_mini_splits():
    train, test = load_voc(detection_mini_path(), "train"), load_voc(detection_mini_path(), "test")
    assert (len(train), len(test)) == (262, 87)
    assert train.classes == ["Arduino_Nano", "ESP8266", "Heltec_ESP32_Lora", "Raspberry_Pi_3",
                             "raccoon"]
    assert sum(len(b) for b in train.boxes) + sum(len(b) for b in test.boxes) == 217 + 177
    assert not set(train.image_ids) & set(test.image_ids)
    assert all(p.is_file() for p in train.image_paths)
    raccoon = train.image_labels("raccoon")
    assert raccoon.sum() == sum(i.startswith("raccoon") for i in train.image_ids)
    for boxes, sizes in zip(train.boxes, train.image_sizes):
        assert (boxes[:, 0] >= 0).all() and (boxes[:, 2] <= sizes[0] + 1).all()


@pytest.mark.parametrize("level", ["year", "devkit", "parent"])
def test_devkit_layouts_and_labels(tmp_path, level):
    year_root = make_devkit(tmp_path, ANNOTATIONS, {"trainval": list(ANNOTATIONS)})
    root = {"year": year_root, "devkit": year_root.parent, "parent": tmp_path}[level]
    data = load_voc(root, "trainval")
    assert data.root == year_root and data.classes == ["cat", "dog"]
    assert data.image_ids == list(ANNOTATIONS)
    np.testing.assert_array_equal(data.boxes[0], [[1, 2, 30, 40], [5, 5, 9.5, 9]])
    assert data.boxes[1].shape == (0, 4) and data.difficult[1].shape == (0,)
    assert data.box_classes[0] == ["dog", "cat"]
    np.testing.assert_array_equal(data.difficult[0], [False, True])
    np.testing.assert_array_equal(data.image_labels("cat"), [False, False, True, False])
    np.testing.assert_array_equal(data.image_labels("cat", include_difficult=True),
                                  [True, False, True, True])
    np.testing.assert_array_equal(data.image_labels("dog"), [True, False, False, False])
    boxes, difficult = data.class_boxes("cat")
    np.testing.assert_array_equal(boxes[2], [[2, 2, 3, 3], [4, 4, 8, 8]])
    np.testing.assert_array_equal(difficult[2], [False, True])
    assert boxes[1].shape == (0, 4)
    np.testing.assert_array_equal(data.image_sizes, [[50, 40]] * 4)
    with pytest.raises(ValueError, match="unknown class 'bird'"):
        data.image_labels("bird")


def test_several_years_need_year(tmp_path):
    make_devkit(tmp_path, ANNOTATIONS, {"train": ["000001"]}, year="2007")
    make_devkit(tmp_path, ANNOTATIONS, {"train": ["000002"]}, year="2012")
    with pytest.raises(ValueError, match="several VOC years"):
        load_voc(tmp_path, "train")
    assert load_voc(tmp_path, "train", year=2012).image_ids == ["000002"]
    with pytest.raises(ValueError, match="no VOC layout"):
        find_voc_root(tmp_path, year=2010)


@pytest.mark.parametrize(
    "xml, message",
    [
        ("<annotation><object>", "malformed XML"),
        ("<annotation><object><name>a</name></object></annotation>", "object 1 has no <bndbox>"),
        ("<annotation><object><bndbox><xmin>1</xmin></bndbox></object></annotation>",
         "object 1 has no <name>"),
        ("<annotation><object><name>a</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>2</xmax>"
         "</bndbox></object></annotation>", r"object 1 <bndbox> has no <ymax>"),
        ("<annotation><object><name>a</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>b</xmax>"
         "<ymax>2</ymax></bndbox></object></annotation>", r"<xmax> is not a number: 'b'"),
        ("<annotation><object><name>a</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>nan</xmax>"
         "<ymax>2</ymax></bndbox></object></annotation>", r"<xmax> is not a number: 'nan'"),
        ("<annotation><size><width>1_0</width><height>5</height></size></annotation>",
         r"<size> <width> is not a number: '1_0'"),
        ("<annotation><object><name>a</name><bndbox><xmin>5</xmin><ymin>1</ymin><xmax>2</xmax>"
         "<ymax>2</ymax></bndbox></object></annotation>", "empty box"),
        ("<annotation><object><name>a</name><difficult>yes</difficult><bndbox><xmin>1</xmin>"
         "<ymin>1</ymin><xmax>2</xmax><ymax>2</ymax></bndbox></object></annotation>",
         "<difficult> must be 0 or 1"),
    ],
)
def test_malformed_annotation_names_file(tmp_path, xml, message):
    root = make_devkit(tmp_path, ANNOTATIONS, {"train": ["000001", "000003"]})
    (root / "Annotations" / "000003.xml").write_text(xml)
    with pytest.raises(ValueError, match=rf"000003\.xml: .*{message}"):
        load_voc(root, "train")


def test_missing_files_and_bad_split(tmp_path):
    root = make_devkit(tmp_path, ANNOTATIONS, {"a": ["000001", "nope"], "b": ["000001", "000001"],
                                               "c": ["000001 1"]})
    with pytest.raises(ValueError, match=r"nope\.xml: annotation not found"):
        load_voc(root, "a")
    with pytest.raises(ValueError, match=r"b\.txt, line 2: image id '000001' repeats line 1"):
        load_voc(root, "b")
    with pytest.raises(ValueError, match=r"c\.txt, line 1: expected one image id"):
        load_voc(root, "c")
    with pytest.raises(ValueError, match=r"missing\.txt: split file not found"):
        load_voc(root, "missing")
    (root / "JPEGImages" / "000001.jpg").unlink()
    (root / "ImageSets" / "Main" / "d.txt").write_text("000001\n")
    with pytest.raises(ValueError, match=r"000001\.jpg: image not found"):
        load_voc(root, "d")
    assert len(load_voc(root, "d", check_images=False)) == 1


def test_real_voc_person_parts_are_not_objects(tmp_path):
    """VOC 2007 person objects hold <part> elements with their own <bndbox>: not separate boxes."""
    root = make_devkit(tmp_path, {"000005": []}, {"test": ["000005"]})
    (root / "Annotations" / "000005.xml").write_text(
        "<annotation><filename>000005.jpg</filename><size><width>500</width><height>375</height>"
        "<depth>3</depth></size><object><name>person</name><pose>Left</pose><truncated>1</truncated>"
        "<difficult>0</difficult><bndbox><xmin>8</xmin><ymin>12</ymin><xmax>352</xmax>"
        "<ymax>498</ymax></bndbox><part><name>head</name><bndbox><xmin>100</xmin><ymin>20</ymin>"
        "<xmax>150</xmax><ymax>80</ymax></bndbox></part></object></annotation>"
    )
    data = load_voc(root, "test")
    np.testing.assert_array_equal(data.boxes[0], [[8, 12, 352, 498]])
    assert data.box_classes == [["person"]] and data.classes == ["person"]
