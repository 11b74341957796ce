"""Small real data sets shipped inside the package (no download), with their licences.

``load_letor_sample``
    LightGBM's lambdarank example (MIT, Microsoft): 201 training and 50 test queries of web
    documents with graded relevance 0–4 and 300 sparse features, as (X, relevance, qid).
``detection_mini_path``
    ``detection_mini`` (MIT; Dat Tran's raccoons and Gilbert Tanner's micro-controller boards): 349
    photographs in PASCAL VOC layout, shrunk to at most 512 pixels a side, for
    :func:`ssvm.datasets.load_voc` and the latent detection example.

Each folder under ``ssvm/datasets/data/`` holds a README (source, layout, what was changed) and the
licence files of its sources.
"""

from __future__ import annotations

from pathlib import Path

from .letor import load_letor

__all__ = ["DATA_DIR", "detection_mini_path", "load_letor_sample"]

#: the folder of the bundled data sets (``ssvm/datasets/data``)
DATA_DIR = Path(__file__).resolve().parent / "data"

_LETOR_SUBSETS = ("train", "test")
_LETOR_N_FEATURES = 300


def _bundled(name, probe):
    """The bundled folder ``name``, checked for the file ``probe`` (a clear error when it is missing)."""
    folder = DATA_DIR / name
    if not (folder / probe).exists():
        raise FileNotFoundError(
            f"the bundled data set {name!r} is missing from {folder} (expected {probe}); "
            "reinstall ssvm from a wheel or a full source checkout (pip install .)"
        )
    return folder


def load_letor_sample(subset="train"):
    """Load one part of the bundled LETOR sample (LightGBM's lambdarank example).

    Web-search queries with their candidate documents: 3,005 training documents in 201 queries and
    768 test documents in 50 queries; graded relevance 0–4 (``relevance > 0`` counts as relevant
    for the AP and NDCG losses); 300 sparse features (about 95 non-zero per document). Query ids
    are 0, 1, 2, … per consecutive query of each file (train and test ids are separate ranges
    that both start at 0). The licence (MIT, Microsoft) ships beside the data.

    Parameters
    ----------
    subset : {"train", "test"}, default="train"

    Returns
    -------
    X : scipy.sparse.csr_matrix of float64, shape (n_samples, 300)
    relevance : ndarray of float64, shape (n_samples,)
    qid : ndarray of int64, shape (n_samples,)

    Raises
    ------
    ValueError
        If ``subset`` is neither ``"train"`` nor ``"test"``.
    FileNotFoundError
        If the data were left out of the installation.

    See Also
    --------
    ssvm.datasets.load_letor : the reader, for other SVMlight / LETOR files.

    Examples
    --------
    >>> from ssvm.datasets import load_letor_sample
    >>> X, relevance, qid = load_letor_sample("train")
    >>> X.shape, len(set(qid))
    ((3005, 300), 201)
    """
    if subset not in _LETOR_SUBSETS:
        raise ValueError(f"subset must be 'train' or 'test', got {subset!r}")
    folder = _bundled("letor_sample", f"rank.{subset}.gz")
    return load_letor(folder / f"rank.{subset}.gz", n_features=_LETOR_N_FEATURES)


def detection_mini_path():
    """The folder of the bundled ``detection_mini`` detection set, in PASCAL VOC layout.

    349 photographs with hand-drawn boxes of five classes (``raccoon`` in 200 photos;
    ``Arduino_Nano``, ``ESP8266``, ``Heltec_ESP32_Lora``, ``Raspberry_Pi_3`` in 149 photos of
    micro-controller boards), split 262 / 87 into ``train`` / ``test``. Every image shows objects
    of one source only, so for each class the other source's images are true negatives. The
    images were shrunk so that their longer side is at most 512 pixels and the boxes rescaled to
    match (see the README in the folder); the licences (MIT) ship beside the data.

    Returns
    -------
    path : pathlib.Path
        A folder with ``JPEGImages/``, ``Annotations/`` and ``ImageSets/Main/{train,test}.txt``.

    Raises
    ------
    FileNotFoundError
        If the data were left out of the installation.

    See Also
    --------
    ssvm.datasets.load_voc : reads one split of the folder.

    Examples
    --------
    >>> from ssvm.datasets import detection_mini_path, load_voc
    >>> train = load_voc(detection_mini_path(), "train")
    >>> len(train), train.classes[-1]
    (262, 'raccoon')
    """
    return _bundled("detection_mini", "ImageSets/Main/train.txt")
