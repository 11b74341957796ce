"""Weakly supervised detection tools: candidate windows, window features, NMS and VOC AP.

selective_search, selective_search_many, relative_areas
    candidate windows by OpenCV contrib's selective search (cached per image; row 0 = whole image).
HogColorFeatures, CropFeatures, WithGeometry, extract_features, crop_windows, window_geometry
    window features: the default HOG + HSV histogram, the plug-in for any crop-batch function, and
    window geometry (relative area, aspect, position) appended to any extractor.
WindowStore
    window features of many images in a memory-mapped array on disk, scored in chunks.
iou, nms, nms_per_image, voc_ap, evaluate_detections
    box overlap, greedy non-maximum suppression (of one image's boxes, or per image of many
    images' scored windows), VOC detection average precision.

OpenCV (the ``ssvm[detection]`` extra) is imported only by the functions that need it (selective
search, image reading, crops); box geometry, NMS, AP, HOG and the store work without it.
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

__all__ = [
    "CropFeatures",
    "DetectionEvaluation",
    "HogColorFeatures",
    "WindowStore",
    "WithGeometry",
    "box_areas",
    "crop_windows",
    "evaluate_detections",
    "extract_features",
    "iou",
    "nms",
    "nms_per_image",
    "read_image",
    "relative_areas",
    "selective_search",
    "selective_search_many",
    "voc_ap",
    "whole_image_box",
    "window_geometry",
]
