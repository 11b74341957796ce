"""Copy a PASCAL VOC-layout folder with its images shrunk and its boxes rescaled to match.

Used once to make the bundled ``ssvm/datasets/data/detection_mini`` from the full-size original
(24 MB → about 10 MB): every image whose longer side exceeds ``--max-side`` pixels is resized
(Lanczos) so that side is ``--max-side``; every image is re-encoded as JPEG at ``--quality``;
``<size>`` and every ``<bndbox>`` of the annotation are rewritten for the new size; everything
else (image sets, licences, the other XML fields) is copied unchanged.

A box in VOC's 1-based inclusive pixel coordinates covers the continuous interval
``[x1 - 1, x2]``; that interval is scaled and rounded to the nearest pixel edges, so a box that
covers the whole image still covers the whole (smaller) image and no box becomes empty.

Usage: ``python tools/shrink_voc.py SOURCE DEST [--max-side 512] [--quality 80]``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def scaled_size(width, height, max_side):
    """(width, height) after shrinking so the longer side is at most ``max_side`` (never enlarged)."""
    scale = min(1.0, max_side / max(width, height))
    return max(1, round(width * scale)), max(1, round(height * scale))


def scale_interval(lo, hi, old, new):
    """Rescale the 1-based inclusive pixel range ``lo..hi`` of an axis of ``old`` pixels to ``new``."""
    factor = new / old
    first = min(max(round((lo - 1) * factor) + 1, 1), new)
    last = min(max(round(hi * factor), first), new)
    return first, last


def shrink_annotation(source, dest, sizes):
    """Rewrite ``<size>`` and the boxes of one annotation for the image sizes ``sizes`` (old, new)."""
    tree = ET.parse(source)
    root = tree.getroot()
    (old_w, old_h), (new_w, new_h) = sizes
    size = root.find("size")
    size.find("width").text, size.find("height").text = str(new_w), str(new_h)
    for box in root.iter("bndbox"):
        x1, x2 = scale_interval(float(box.find("xmin").text), float(box.find("xmax").text), old_w, new_w)
        y1, y2 = scale_interval(float(box.find("ymin").text), float(box.find("ymax").text), old_h, new_h)
        for tag, value in zip(("xmin", "ymin", "xmax", "ymax"), (x1, y1, x2, y2)):
            box.find(tag).text = str(value)
    Path(dest).write_text(ET.tostring(root, encoding="unicode") + "\n", encoding="utf-8")


def shrink_voc(source, dest, *, max_side=512, quality=80):
    """Write the shrunk copy of the VOC folder ``source`` into ``dest`` (which must not exist).

    Returns
    -------
    n_images, n_bytes : int
        Images written and the bytes of ``dest/JPEGImages``.
    """
    from PIL import Image

    source, dest = Path(source), Path(dest)
    if dest.exists():
        raise ValueError(f"{dest} exists; give a new folder")
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("JPEGImages", "Annotations"))
    (dest / "JPEGImages").mkdir()
    (dest / "Annotations").mkdir()
    n_bytes = 0
    annotations = sorted((source / "Annotations").glob("*.xml"))
    for xml_path in annotations:
        filename = ET.parse(xml_path).getroot().findtext("filename") or f"{xml_path.stem}.jpg"
        with Image.open(source / "JPEGImages" / filename) as image:
            image.load()
            old = image.size
            new = scaled_size(*old, max_side)
            if new != old:
                image = image.resize(new, Image.LANCZOS)
            if image.mode not in ("RGB", "L"):
                image = image.convert("RGB")
            out = dest / "JPEGImages" / filename
            image.save(out, "JPEG", quality=quality, optimize=True)
            n_bytes += out.stat().st_size
        shrink_annotation(xml_path, dest / "Annotations" / xml_path.name, (old, new))
    return len(annotations), n_bytes


def main(argv=None):
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("dest", type=Path)
    parser.add_argument("--max-side", type=int, default=512)
    parser.add_argument("--quality", type=int, default=80)
    args = parser.parse_args(argv)
    n_images, n_bytes = shrink_voc(args.source, args.dest, max_side=args.max_side, quality=args.quality)
    print(f"{n_images} images, {n_bytes / 1e6:.1f} MB of JPEG in {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
