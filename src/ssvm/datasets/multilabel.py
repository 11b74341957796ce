"""Multi-label data that ships with the package (no download): the "emotions" music set."""

from __future__ import annotations

import gzip
from importlib import resources

import numpy as np
from sklearn.utils import Bunch

__all__ = ["load_emotions"]


def load_emotions():
    """Load the "emotions" multi-label data set (593 songs, 72 audio features, 6 emotion labels).

    Trohidis et al. (ISMIR 2008), bundled from the Orange3 3.3.4 distribution (provenance and
    licence in ``ssvm/datasets/data/emotions/``). The features are on very different scales:
    standardise them before a linear model.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (ndarray of float64, (593, 72)), ``Y`` (ndarray of int64 0/1, (593, 6)),
        ``feature_names`` and ``label_names`` (lists of str), ``description``.

    Examples
    --------
    >>> data = load_emotions()
    >>> data.X.shape, data.Y.shape, data.label_names[0]
    ((593, 72), (593, 6), 'amazed-suprised')
    """
    source = resources.files("ssvm.datasets").joinpath("data", "emotions", "emotions.tab.gz")
    with source.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as f:
        names = f.readline().rstrip("\n").split("\t")
        f.readline()  # types
        flags = f.readline().rstrip("\n").split("\t")
        table = np.loadtxt(f, delimiter="\t", dtype=np.float64)
    is_label = np.array([flag == "class" for flag in flags])
    return Bunch(
        X=table[:, ~is_label],
        Y=table[:, is_label].astype(np.int64),
        feature_names=[n for n, lab in zip(names, is_label) if not lab],
        label_names=[n for n, lab in zip(names, is_label) if lab],
        description="Music emotions (Trohidis et al. 2008): 593 songs, 72 audio features "
                    "(standardise them), 6 emotion labels, 1.87 labels per song.",
    )
