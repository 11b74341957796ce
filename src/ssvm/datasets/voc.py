"""Reader for PASCAL VOC-layout detection folders (``JPEGImages/``, ``Annotations/``, ``ImageSets/Main``)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["VOCDataset", "find_voc_root", "load_voc"]

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@dataclass
class VOCDataset:
    """Images and box annotations of one split of a VOC-layout folder.

    Attributes
    ----------
    root : Path
        The year folder holding ``Annotations/``, ``JPEGImages/`` and ``ImageSets/``.
    split : str
        The split name (``ImageSets/Main/<split>.txt``).
    image_ids : list of str
        Image ids in the order of the split file.
    image_paths : list of Path
        ``JPEGImages/<filename>`` per image (``filename`` from the XML, else ``<id>.jpg``).
    boxes : list of ndarray of float64, shape (m_i, 4)
        Per-image boxes ``(x1, y1, x2, y2)`` exactly as in the XML: VOC 1-based, inclusive pixel
        coordinates (a box covering the whole W×H image is ``(1, 1, W, H)``).
    box_classes : list of list of str
        Class name of every box.
    difficult : list of ndarray of bool, shape (m_i,)
        The VOC ``difficult`` flag of every box (absent tag → False).
    image_sizes : ndarray of int64, shape (n_images, 2)
        ``(width, height)`` from the XML ``<size>`` element (0 when absent).
    classes : list of str
        Sorted names of all classes that occur in the split.
    """

    root: Path
    split: str
    image_ids: list
    image_paths: list
    boxes: list
    box_classes: list
    difficult: list
    image_sizes: np.ndarray
    classes: list = field(default_factory=list)

    def __len__(self):
        return len(self.image_ids)

    def _check_class(self, class_name):
        if class_name not in self.classes:
            raise ValueError(f"unknown class {class_name!r}; classes are {self.classes}")

    def image_labels(self, class_name, *, include_difficult=False):
        """Image-level labels for one class: does the image contain an instance of it?

        Parameters
        ----------
        class_name : str
        include_difficult : bool, default=False
            By default only non-difficult boxes count, so an image whose only instances of the
            class are ``difficult`` is labelled False. This matches what VOC's evaluation trusts
            (difficult objects are neither required nor penalised); set True to count them.

        Returns
        -------
        labels : ndarray of bool, shape (n_images,)
        """
        self._check_class(class_name)
        labels = np.zeros(len(self.image_ids), dtype=bool)
        for i, (names, difficult) in enumerate(zip(self.box_classes, self.difficult)):
            for name, hard in zip(names, difficult):
                if name == class_name and (include_difficult or not hard):
                    labels[i] = True
                    break
        return labels

    def class_boxes(self, class_name):
        """Ground truth of one class in the form ``evaluate_detections`` takes.

        Parameters
        ----------
        class_name : str

        Returns
        -------
        boxes : list of ndarray of float64, shape (k_i, 4)
            The boxes of that class in every image (possibly empty).
        difficult : list of ndarray of bool, shape (k_i,)
        """
        self._check_class(class_name)
        boxes, difficult = [], []
        for image_boxes, names, hard in zip(self.boxes, self.box_classes, self.difficult):
            mask = np.array([name == class_name for name in names], dtype=bool)
            boxes.append(image_boxes[mask] if mask.size else np.zeros((0, 4)))
            difficult.append(hard[mask] if mask.size else np.zeros(0, dtype=bool))
        return boxes, difficult


def find_voc_root(root, year=None):
    """Locate the year folder (the one holding ``Annotations/``) under a VOC-style root.

    Accepts the year folder itself, a ``VOCdevkit`` folder holding ``VOC<year>``, or a folder holding
    ``VOCdevkit``.

    Parameters
    ----------
    root : str or path-like
    year : str or int, optional
        Picks ``VOC<year>`` when several years are present.

    Returns
    -------
    Path

    Raises
    ------
    ValueError
        If no VOC layout is found, or several years are present and ``year`` is not given.
    """
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"{root}: not a directory")
    if (root / "Annotations").is_dir():
        return root
    for base in (root, root / "VOCdevkit"):
        if not base.is_dir():
            continue
        if year is not None:
            candidate = base / f"VOC{year}"
            if (candidate / "Annotations").is_dir():
                return candidate
            continue
        years = sorted(p for p in base.glob("VOC*") if (p / "Annotations").is_dir())
        if len(years) == 1:
            return years[0]
        if len(years) > 1:
            raise ValueError(
                f"{base}: several VOC years {[p.name for p in years]}; pass year=..."
            )
    wanted = f"VOC{year}/" if year is not None else ""
    raise ValueError(
        f"{root}: no VOC layout found (expected {wanted}Annotations/, JPEGImages/, ImageSets/Main/)"
    )


def _read_split(path):
    if not path.is_file():
        raise ValueError(f"{path}: split file not found")
    ids, seen = [], {}
    with open(path, encoding="utf-8-sig") as handle:
        for lineno, line in enumerate(handle, start=1):
            tokens = line.split()
            if not tokens:
                continue
            if len(tokens) != 1:
                raise ValueError(f"{path}, line {lineno}: expected one image id, got {line.strip()!r}")
            image_id = tokens[0]
            if image_id in seen:
                raise ValueError(
                    f"{path}, line {lineno}: image id {image_id!r} repeats line {seen[image_id]}"
                )
            seen[image_id] = lineno
            ids.append(image_id)
    return ids


def _number(element, tag, path, what):
    node = element.find(tag)
    if node is None or node.text is None or not node.text.strip():
        raise ValueError(f"{path}: {what} has no <{tag}>")
    text = node.text.strip()
    if not _DECIMAL.fullmatch(text):  # float() would also take '1_0', 'nan', 'inf', '١'
        raise ValueError(f"{path}: {what} <{tag}> is not a number: {text!r}")
    return float(text)


def _read_annotation(path):
    """Parse one VOC XML file → (filename or None, (width, height), boxes, names, difficult)."""
    try:
        tree = ET.parse(path)
    except ET.ParseError as exc:
        raise ValueError(f"{path}: malformed XML ({exc})") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read annotation ({exc})") from None
    annotation = tree.getroot()
    filename_node = annotation.find("filename")
    filename = filename_node.text.strip() if filename_node is not None and filename_node.text else None
    size_node = annotation.find("size")
    size = (0, 0)
    if size_node is not None:
        size = (int(_number(size_node, "width", path, "<size>")),
                int(_number(size_node, "height", path, "<size>")))
    boxes, names, difficult = [], [], []
    for k, obj in enumerate(annotation.findall("object"), start=1):
        what = f"object {k}"
        name_node = obj.find("name")
        if name_node is None or not (name_node.text or "").strip():
            raise ValueError(f"{path}: {what} has no <name>")
        bndbox = obj.find("bndbox")
        if bndbox is None:
            raise ValueError(f"{path}: {what} has no <bndbox>")
        box = [_number(bndbox, tag, path, f"{what} <bndbox>") for tag in ("xmin", "ymin", "xmax", "ymax")]
        if box[2] < box[0] or box[3] < box[1]:
            raise ValueError(f"{path}: {what} has an empty box {box} (xmax < xmin or ymax < ymin)")
        hard_node = obj.find("difficult")
        hard = False
        if hard_node is not None and (hard_node.text or "").strip():
            text = hard_node.text.strip()
            if text not in ("0", "1"):
                raise ValueError(f"{path}: {what} <difficult> must be 0 or 1, got {text!r}")
            hard = text == "1"
        boxes.append(box)
        names.append(name_node.text.strip())
        difficult.append(hard)
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    return filename, size, boxes, names, np.asarray(difficult, dtype=bool)


def load_voc(root, split, *, year=None, check_images=True):
    """Load one split of a PASCAL VOC-layout folder.

    Parameters
    ----------
    root : str or path-like
        The year folder (``.../VOC2007``), a ``VOCdevkit`` folder, or the folder holding ``VOCdevkit``
        (see :func:`find_voc_root`); the bundled :func:`detection_mini_path` is a year folder.
    split : str
        Name of ``ImageSets/Main/<split>.txt`` (e.g. ``"train"``, ``"test"``, ``"trainval"``).
    year : str or int, optional
        Which ``VOC<year>`` to use when a devkit holds several.
    check_images : bool, default=True
        Raise if an image file is missing (set False to work from annotations alone).

    Returns
    -------
    VOCDataset

    Raises
    ------
    ValueError
        Naming the file: missing split file or annotation, malformed XML, a box without
        coordinates or with non-numeric ones, an empty box, a bad ``difficult`` flag, a repeated
        image id, or a missing image.
    """
    year_root = find_voc_root(root, year)
    ids = _read_split(year_root / "ImageSets" / "Main" / f"{split}.txt")
    image_paths, boxes, box_classes, difficult, sizes = [], [], [], [], []
    for image_id in ids:
        xml_path = year_root / "Annotations" / f"{image_id}.xml"
        if not xml_path.is_file():
            raise ValueError(f"{xml_path}: annotation not found for image id {image_id!r}")
        filename, size, image_boxes, names, hard = _read_annotation(xml_path)
        image_path = year_root / "JPEGImages" / (filename or f"{image_id}.jpg")
        if check_images and not image_path.is_file():
            raise ValueError(f"{image_path}: image not found (listed by {xml_path})")
        image_paths.append(image_path)
        boxes.append(image_boxes)
        box_classes.append(names)
        difficult.append(hard)
        sizes.append(size)
    classes = sorted({name for names in box_classes for name in names})
    return VOCDataset(
        root=year_root, split=split, image_ids=ids, image_paths=image_paths, boxes=boxes,
        box_classes=box_classes, difficult=difficult,
        image_sizes=np.asarray(sizes, dtype=np.int64).reshape(-1, 2), classes=classes,
    )
