"""Weakly supervised detection tools: candidate windows, window features, NMS and VOC AP.

selective_search, selective_search_many
    candidate windows by OpenCV contrib's selective search (cached per image; row 0 = whole image).
HogColorFeatures, CropFeatures, extract_features, crop_windows
    window features: the default HOG + HSV histogram, and the plug-in for any crop-batch function.
WindowStore
    window features of many images in a memory-mapped array on disk, scored in chunks.
iou, nms, voc_ap, evaluate_detections
    box overlap, greedy non-maximum suppression, VOC detection average precision.

OpenCV (the ``ssvm[detection]`` extra) is imported only by the functions that need it (selective
search, image reading, crops); box geometry, NMS, AP, HOG and the store work without it.
Boxes everywhere are ``(x1, y1, x2, y2)`` in VOC pixel coordinates (1-based, inclusive).
"""

from .boxes import box_areas, iou, nms
from .evaluation import DetectionEvaluation, evaluate_detections, voc_ap
from .features import CropFeatures, HogColorFeatures, crop_windows, extract_features
from .images import read_image
from .store import WindowStore
from .windows import selective_search, selective_search_many, whole_image_box

__all__ = [
    "CropFeatures",
    "DetectionEvaluation",
    "HogColorFeatures",
    "WindowStore",
    "box_areas",
    "crop_windows",
    "evaluate_detections",
    "extract_features",
    "iou",
    "nms",
    "read_image",
    "selective_search",
    "selective_search_many",
    "voc_ap",
    "whole_image_box",
]
