"""Ready-made ranking tasks built from data that ships inside scikit-learn (no download).

Each task is a multi-class data set used for one-vs-rest retrieval: for every class c, rank all
samples so that those of class c come first (``RankSVM`` does this when given class labels
without ``qid``). Mean AP / NDCG over classes is the score.
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import GroupShuffleSplit, train_test_split
from sklearn.utils import Bunch

__all__ = ["RANKING_TASKS", "load_ranking_task", "split_by_query", "split_ranking_task"]

# name -> (sklearn loader name, one-line description)
RANKING_TASKS = {
    "digits": (
        "load_digits",
        "8x8 handwritten digits (1,797 images, 64 pixel features in 0..16, 10 classes): "
        "one-vs-rest retrieval of each digit.",
    ),
    "breast_cancer": (
        "load_breast_cancer",
        "Wisconsin breast cancer (569 samples, 30 features on very different scales, 2 classes: "
        "malignant/benign): rank the benign cases first; standardise the features.",
    ),
    "wine": (
        "load_wine",
        "Wine recognition (178 samples, 13 chemical features on different scales, 3 cultivars): "
        "one-vs-rest retrieval of each cultivar; standardise the features.",
    ),
    "iris": (
        "load_iris",
        "Iris flowers (150 samples, 4 features, 3 species): one-vs-rest retrieval of each species.",
    ),
}


def load_ranking_task(name):
    """Load a ready-made ranking task from data bundled with scikit-learn.

    Parameters
    ----------
    name : {"digits", "breast_cancer", "wine", "iris"}

    Returns
    -------
    task : sklearn.utils.Bunch
        ``X`` (ndarray of float64, (n_samples, n_features)), ``y`` (ndarray of int, class labels),
        ``target_names``, ``name`` and ``description`` (what is ranked, and whether the features
        need standardising).

    Raises
    ------
    ValueError
        For an unknown name.

    Examples
    --------
    >>> task = load_ranking_task("digits")
    >>> task.X.shape, sorted(set(task.y)) == list(range(10))
    ((1797, 64), True)
    """
    if name not in RANKING_TASKS:
        raise ValueError(f"unknown ranking task {name!r}; choose from {sorted(RANKING_TASKS)}")
    import sklearn.datasets

    loader_name, description = RANKING_TASKS[name]
    data = getattr(sklearn.datasets, loader_name)()
    return Bunch(
        X=np.asarray(data.data, dtype=np.float64),
        y=np.asarray(data.target),
        target_names=np.asarray(data.target_names),
        name=name,
        description=description,
    )


def split_ranking_task(task, *, test_size=0.3, random_state=0):
    """Stratified train/test split of a task from :func:`load_ranking_task`, with a fixed seed.

    Parameters
    ----------
    task : Bunch
        With ``X`` and ``y``.
    test_size : float, default=0.3
    random_state : int, default=0

    Returns
    -------
    X_train, X_test, y_train, y_test : ndarrays
    """
    return train_test_split(
        task.X, task.y, test_size=test_size, random_state=random_state, stratify=task.y
    )


def split_by_query(qid, *, test_size=0.3, random_state=0):
    """Split rows into train/test keeping every query whole (for LETOR-style data).

    Parameters
    ----------
    qid : array-like of int, shape (n_samples,)
    test_size : float, default=0.3
        Fraction of the queries put into the test part.
    random_state : int, default=0

    Returns
    -------
    train_index, test_index : ndarray of int
        Row indices, each sorted (so consecutive-query order is kept).

    Raises
    ------
    ValueError
        If there are fewer than two queries.
    """
    qid = np.asarray(qid)
    if qid.ndim != 1:
        raise ValueError(f"qid must be 1-D, got shape {qid.shape}")
    if np.unique(qid).size < 2:
        raise ValueError("split_by_query needs at least two distinct queries")
    splitter = GroupShuffleSplit(n_splits=1, test_size=test_size, random_state=random_state)
    train_index, test_index = next(splitter.split(np.zeros((qid.size, 1)), groups=qid))
    return np.sort(train_index), np.sort(test_index)
