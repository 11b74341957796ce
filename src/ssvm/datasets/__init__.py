"""Data loaders: LETOR/SVMlight ranking files, VOC-layout detection folders, bundled ranking tasks.

load_letor
    SVMlight / LETOR file (``qid:`` in rows or a LightGBM ``.query`` file) → (X, relevance, qid).
load_voc
    PASCAL VOC-layout folder (real VOC 2007 devkit or ``detection_mini``) → :class:`VOCDataset`.
load_ranking_task, split_ranking_task, split_by_query
    ranking tasks from data shipped with scikit-learn (no download), and seeded splits.
load_letor_sample, detection_mini_path
    small real data sets shipped inside ssvm (no download): a LETOR sample and a VOC-layout
    detection folder, with their licences.
load_emotions
    the "emotions" multi-label music data set, bundled with the package (label ranking).
"""

from .bundled import (
    RANKING_TASKS,
    load_ranking_task,
    split_by_query,
    split_ranking_task,
)
from .letor import load_letor, read_query_sizes
from .multilabel import load_emotions
from .samples import detection_mini_path, load_letor_sample
from .voc import VOCDataset, find_voc_root, load_voc

__all__ = [
    "RANKING_TASKS",
    "VOCDataset",
    "detection_mini_path",
    "find_voc_root",
    "load_emotions",
    "load_letor",
    "load_letor_sample",
    "load_ranking_task",
    "load_voc",
    "read_query_sizes",
    "split_by_query",
    "split_ranking_task",
]
