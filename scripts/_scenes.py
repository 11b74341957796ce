"""Embedded default detection data: scenes composed from images that ship inside scikit-image.

Nothing is downloaded: the objects are crops of ``skimage.data`` pictures bundled with the package
(Chelsea the cat, the coffee cup, the astronaut's face) and the backgrounds are its bundled textures
(brick, grass, gravel), tinted and randomly cropped.  Every scene holds one object, pasted at a
random position and scale (with a little brightness jitter); the scenes are written as a PASCAL VOC
layout folder (``JPEGImages/``, ``Annotations/*.xml``, ``ImageSets/Main/{train,test}.txt``) so that
the training script reads them through :func:`ssvm.datasets.load_voc` exactly like real data.
For each class, the scenes of the other classes are the negative images.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

__all__ = ["SCENE_CLASSES", "write_default_scenes"]

#: class name -> (skimage.data loader name, (row0, row1, col0, col1) crop of the object)
SCENE_CLASSES = {
    "cat": ("chelsea", (0, 300, 60, 400)),
    "cup": ("coffee", (15, 390, 75, 480)),
    "face": ("astronaut", (15, 190, 150, 305)),
}
_TEXTURES = ("brick", "grass", "gravel")


def _resize(image, height, width):
    import cv2

    return cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)


def _background(rng, textures, height, width):
    texture = textures[rng.integers(len(textures))]
    size = int(rng.integers(min(texture.shape) // 2, min(texture.shape) + 1))
    r0 = int(rng.integers(0, texture.shape[0] - size + 1))
    c0 = int(rng.integers(0, texture.shape[1] - size + 1))
    patch = _resize(texture[r0:r0 + size, c0:c0 + size], height, width).astype(np.float64) / 255.0
    tint = rng.uniform(0.35, 1.0, size=3)
    return patch[:, :, None] * tint[None, None, :]


def _annotation(image_id, width, height, name, box):
    root = ET.Element("annotation")
    ET.SubElement(root, "filename").text = f"{image_id}.jpg"
    size = ET.SubElement(root, "size")
    for tag, value in (("width", width), ("height", height), ("depth", 3)):
        ET.SubElement(size, tag).text = str(value)
    obj = ET.SubElement(root, "object")
    ET.SubElement(obj, "name").text = name
    ET.SubElement(obj, "difficult").text = "0"
    bndbox = ET.SubElement(obj, "bndbox")
    for tag, value in zip(("xmin", "ymin", "xmax", "ymax"), box):
        ET.SubElement(bndbox, tag).text = str(int(value))
    return ET.ElementTree(root)


def write_default_scenes(folder, *, n_train=36, n_test=18, width=256, height=192, seed=0):
    """Write the embedded default scenes as a VOC-layout folder.

    Parameters
    ----------
    folder : str or path-like
        Destination (created; existing scene files are overwritten).
    n_train, n_test : int, default=36, 18
        Number of scenes of each split; the classes take turns so each is equally frequent.
    width, height : int, default=256, 192
        Scene size in pixels.
    seed : int, default=0
        Seed of the placement, scale, texture and tint draws.

    Returns
    -------
    Path
        ``folder`` (a VOC year folder for :func:`ssvm.datasets.load_voc`).
    """
    import cv2
    from skimage import data as skdata

    if n_train < len(SCENE_CLASSES) or n_test < len(SCENE_CLASSES):
        raise ValueError(f"n_train and n_test must be >= {len(SCENE_CLASSES)} (one scene per class)")
    if width < 64 or height < 64:
        raise ValueError(f"scenes must be at least 64x64 pixels, got {width}x{height}")
    folder = Path(folder)
    for sub in ("JPEGImages", "Annotations", "ImageSets/Main"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    objects = {}
    for name, (loader, (r0, r1, c0, c1)) in SCENE_CLASSES.items():
        objects[name] = getattr(skdata, loader)()[r0:r1, c0:c1].astype(np.float64) / 255.0
    textures = [getattr(skdata, name)() for name in _TEXTURES]
    names = list(SCENE_CLASSES)
    splits = {"train": [], "test": []}
    for split, count in (("train", n_train), ("test", n_test)):
        for k in range(count):
            image_id = f"scene_{split}_{k:04d}"
            name = names[k % len(names)]
            scene = _background(rng, textures, height, width)
            obj = objects[name]
            scale = rng.uniform(0.3, 0.6) * min(width / obj.shape[1], height / obj.shape[0])
            ow, oh = max(8, int(obj.shape[1] * scale)), max(8, int(obj.shape[0] * scale))
            x0 = int(rng.integers(0, width - ow + 1))
            y0 = int(rng.integers(0, height - oh + 1))
            scene[y0:y0 + oh, x0:x0 + ow] = np.clip(_resize(obj, oh, ow) * rng.uniform(0.8, 1.2), 0.0, 1.0)
            pixels = (np.clip(scene, 0.0, 1.0) * 255).astype(np.uint8)
            cv2.imwrite(str(folder / "JPEGImages" / f"{image_id}.jpg"), pixels[:, :, ::-1])
            # VOC boxes are 1-based and inclusive
            box = (x0 + 1, y0 + 1, x0 + ow, y0 + oh)
            _annotation(image_id, width, height, name, box).write(folder / "Annotations" / f"{image_id}.xml")
            splits[split].append(image_id)
    for split, ids in splits.items():
        (folder / "ImageSets" / "Main" / f"{split}.txt").write_text("\n".join(ids) + "\n")
    return folder
