"""The bundled "emotions" multi-label data set."""

import numpy as np

from ssvm.datasets import load_emotions


def test_load_emotions():
    data = load_emotions()
    assert data.X.shape == (593, 72) and data.Y.shape == (593, 6)
    assert np.all(np.isfinite(data.X)) and set(np.unique(data.Y)) == {0, 1}
    assert data.Y.sum(axis=1).mean() == np.float64(1108 / 593)  # 1.87 labels per song
    assert data.Y.sum(axis=0).tolist() == [173, 166, 264, 148, 168, 189]
    assert len(data.feature_names) == 72 and data.label_names[-1] == "angry-aggresive"
