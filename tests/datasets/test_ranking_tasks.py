"""Tests of the bundled ranking tasks and the seeded splits."""

import numpy as np
import pytest

from ssvm.datasets import RANKING_TASKS, load_ranking_task, split_by_query, split_ranking_task


@pytest.mark.parametrize("name", sorted(RANKING_TASKS))
def test_tasks_load(name):
    task = load_ranking_task(name)
    assert task.X.ndim == 2 and task.X.shape[0] == task.y.shape[0]
    assert task.X.dtype == np.float64 and np.isfinite(task.X).all()
    assert np.unique(task.y).size == len(task.target_names) >= 2
    assert task.name == name and task.description


def test_unknown_task():
    with pytest.raises(ValueError, match="unknown ranking task 'mnist'"):
        load_ranking_task("mnist")


def test_split_is_seeded_and_stratified():
    task = load_ranking_task("digits")
    a = split_ranking_task(task, random_state=3)
    b = split_ranking_task(task, random_state=3)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    X_train, X_test, y_train, y_test = a
    assert X_train.shape[0] + X_test.shape[0] == task.X.shape[0]
    np.testing.assert_allclose(np.bincount(y_test) / y_test.size,
                               np.bincount(task.y) / task.y.size, atol=0.01)


def test_split_by_query_keeps_queries_whole():
    qid = np.repeat([5, 1, 9, 2, 7, 3], [3, 1, 4, 2, 2, 5])
    train, test = split_by_query(qid, test_size=0.34, random_state=0)
    assert np.intersect1d(train, test).size == 0 and train.size + test.size == qid.size
    assert not set(qid[train]) & set(qid[test])
    assert (np.diff(train) > 0).all() and (np.diff(test) > 0).all()
    with pytest.raises(ValueError, match="two distinct queries"):
        split_by_query(np.zeros(4))
