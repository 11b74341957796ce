"""Weakly supervised detection tools: candidate windows, window features, NMS and VOC AP.

selective_search, selective_search_many, relative_areas
    candidate windows by OpenCV contrib's selective search (cached per image; row 0 = whole image).
HogColorFeatures, CropFeatures, WithGeometry, extract_features, crop_windows, window_geometry
    window features: the default HOG + HSV histogram, the plug-in for any crop-batch function, and
    window geometry (relative area, aspect, position) appended to any extractor.
CnnFeatures, roi_align, efficientnet_lite0, load_efficientnet_lite0
    CNN window features (the ``ssvm[cnn]`` extra): one forward pass of a pretrained network per
    image, each window RoIAligned from the feature map; torch is imported on first use.
WindowStore
    window features of many images in a memory-mapped array on disk, scored in chunks.
iou, nms, nms_per_image, voc_ap, evaluate_detections
    box overlap, greedy non-maximum suppression (of one image's boxes, or per image of many
    images' scored windows), VOC detection average precision.

OpenCV (the ``ssvm[detection]`` extra) is imported only by the functions that need it (selective
search, image reading, crops); box geometry, NMS, AP, HOG and the store work without it.
Torch (the ``ssvm[cnn]`` extra) is imported only when a CNN name is first used.
Boxes everywhere are ``(x1, y1, x2, y2)`` in VOC pixel coordinates (1-based, inclusive).
"""

from .boxes import box_areas, iou, nms
from .detections import nms_per_image
from .evaluation import DetectionEvaluation, evaluate_detections, voc_ap
from .features import (
    CropFeatures,
    HogColorFeatures,
    WithGeometry,
    crop_windows,
    extract_features,
    window_geometry,
)
from .images import read_image
from .store import WindowStore
from .windows import relative_areas, selective_search, selective_search_many, whole_image_box

_TORCH_NAMES = {
    "CnnFeatures": "cnn",
    "efficientnet_lite0": "backbones",
    "load_efficientnet_lite0": "backbones",
    "roi_align": "roi",
}


def __getattr__(name):
    """Import the torch-based names on first use (torch is an optional dependency)."""
    if name not in _TORCH_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    try:
        module = importlib.import_module(f".{_TORCH_NAMES[name]}", __name__)
    except ImportError as exc:
        raise ImportError(f"ssvm.detection.{name} needs torch ({exc}); "
                          'pip install "ssvm[cnn]"') from exc
    return getattr(module, name)


__all__ = [
    "CnnFeatures",
    "CropFeatures",
    "DetectionEvaluation",
    "HogColorFeatures",
    "WindowStore",
    "WithGeometry",
    "box_areas",
    "crop_windows",
    "efficientnet_lite0",
    "evaluate_detections",
    "extract_features",
    "iou",
    "load_efficientnet_lite0",
    "nms",
    "nms_per_image",
    "read_image",
    "relative_areas",
    "roi_align",
    "selective_search",
    "selective_search_many",
    "voc_ap",
    "whole_image_box",
    "window_geometry",
]
