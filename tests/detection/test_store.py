"""WindowStore: memory-mapped features, chunked scoring, best windows and resumable builds."""

import numpy as np
import pytest

from ssvm.detection import WindowStore


class BoxStats:
    """Cheap extractor (no OpenCV): box coordinates and image mean; counts its calls."""

    def __init__(self, fail_on_call=None):
        self.calls = 0
        self.fail_on_call = fail_on_call

    def __repr__(self):  # same description whatever the failure setting, so resume applies
        return "BoxStats()"

    def __call__(self, image, boxes):
        self.calls += 1
        if self.calls == self.fail_on_call:
            raise RuntimeError("interrupted")
        return np.column_stack([boxes / 100.0, np.full(len(boxes), image.mean() / 255.0)])


def make_data(n_images=7, seed=0):
    rng = np.random.default_rng(seed)
    images = [rng.integers(0, 256, size=(20 + i, 30, 3), dtype=np.uint8) for i in range(n_images)]
    windows = []
    for _ in images:
        m = int(rng.integers(1, 6))
        xy = rng.integers(1, 10, size=(m, 2))
        windows.append(np.hstack([xy, xy + rng.integers(0, 10, size=(m, 2))]).astype(float))
    return images, windows


def test_build_open_score_and_best_windows(tmp_path):
    images, windows = make_data()
    extractor = BoxStats()
    store = WindowStore.build(tmp_path / "s", images, windows, extractor)
    assert store.complete and store.n_images == 7 and store.n_features == 5
    assert store.n_windows == sum(len(w) for w in windows)
    assert store.image_ids == [f"image-{i}" for i in range(7)]
    assert isinstance(store.features, np.memmap)
    dense = np.vstack([extractor(im, w) for im, w in zip(images, windows)]).astype(np.float32)
    for i, boxes in enumerate(windows):
        np.testing.assert_array_equal(store.image_boxes(i), boxes)
        np.testing.assert_array_equal(store.image_features(i), dense[store.image_slice(i)])
    reopened = WindowStore.open(tmp_path / "s")
    w = np.random.default_rng(1).normal(size=5)
    for chunk in (1, 3, 10_000):
        np.testing.assert_allclose(reopened.score(w, 0.25, chunk_size=chunk),
                                   dense.astype(np.float64) @ w + 0.25, rtol=1e-12)
    # best window per image against a plain loop, with ties (first index wins)
    scores = np.round(reopened.score(w), 1)
    scores[store.offsets[2]: store.offsets[3]] = 7.0
    best_score, best_index = reopened.best_windows(scores)
    for i in range(store.n_images):
        rows = range(store.offsets[i], store.offsets[i + 1])
        j = max(rows, key=lambda r: (scores[r], -r))
        assert (best_score[i], best_index[i]) == (scores[j], j)
    assert reopened.window_image().tolist() == np.repeat(np.arange(7), np.diff(store.offsets)).tolist()
    np.testing.assert_allclose(reopened.score(w, 0.25, dtype=np.float32),
                               dense.astype(np.float64) @ w + 0.25, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="dtype must be float64 or float32"):
        reopened.score(w, dtype=np.int64)
    with pytest.raises(ValueError, match=r"w must have shape \(5,\)"):
        reopened.score(np.ones(4))
    with pytest.raises(IndexError):
        reopened.image_slice(7)


def test_interrupted_build_resumes(tmp_path):
    images, windows = make_data()
    with pytest.raises(RuntimeError, match="interrupted"):
        WindowStore.build(tmp_path / "s", images, windows, BoxStats(fail_on_call=4), batch_images=2)
    partial = WindowStore.open(tmp_path / "s")
    assert not partial.complete
    # call 1 probes the feature size on image 0 (kept), calls 2-3 fill images 1-2, call 4 fails
    with pytest.raises(ValueError, match="features of 4 images are missing"):
        partial.score(np.ones(5))
    resumed_extractor = BoxStats()
    resumed = WindowStore.build(tmp_path / "s", images, windows, resumed_extractor, batch_images=2)
    assert resumed_extractor.calls == 4  # the three images written before the failure are skipped
    fresh = WindowStore.build(tmp_path / "fresh", images, windows, BoxStats())
    np.testing.assert_array_equal(np.asarray(resumed.features), np.asarray(fresh.features))
    # a finished store is reused as is; changed windows or resume=False rebuild everything
    again = BoxStats()
    WindowStore.build(tmp_path / "s", images, windows, again)
    assert again.calls == 0
    windows[3] = windows[3] + 1
    changed = BoxStats()
    WindowStore.build(tmp_path / "s", images, windows, changed)
    assert changed.calls == 7
    forced = BoxStats()
    WindowStore.build(tmp_path / "s", images, windows, forced, resume=False)
    assert forced.calls == 7


def test_parallel_build_matches_sequential(tmp_path):
    images, windows = make_data(n_images=5, seed=3)
    a = WindowStore.build(tmp_path / "a", images, windows, BoxStats(), n_jobs=2)
    b = WindowStore.build(tmp_path / "b", images, windows, BoxStats(), n_jobs=None)
    np.testing.assert_array_equal(np.asarray(a.features), np.asarray(b.features))


class WrongShape:
    n_features = 3

    def __call__(self, image, boxes):
        return np.zeros((len(boxes) + 1, 3))


def test_bad_input(tmp_path):
    images, windows = make_data(n_images=3)
    with pytest.raises(ValueError, match="3 images but 2 window arrays"):
        WindowStore.build(tmp_path / "s", images, windows[:2], BoxStats())
    with pytest.raises(ValueError, match="image 1 has no windows"):
        WindowStore.build(tmp_path / "s", images, [windows[0], np.zeros((0, 4)), windows[2]],
                          BoxStats())
    with pytest.raises(ValueError, match="image_ids must be unique"):
        WindowStore.build(tmp_path / "s", images, windows, BoxStats(), image_ids=["a", "a", "b"])
    with pytest.raises(ValueError, match=r"image 0: extractor returned shape"):
        WindowStore.build(tmp_path / "s", images, windows, WrongShape())
    with pytest.raises(ValueError, match="not a window store"):
        WindowStore.open(tmp_path / "nothing")


def test_damaged_store_is_rebuilt(tmp_path):
    images, windows = make_data(n_images=3)
    WindowStore.build(tmp_path / "s", images, windows, BoxStats())
    (tmp_path / "s" / "done.npy").write_bytes(b"\x93NUMPY garbage")
    extractor = BoxStats()
    store = WindowStore.build(tmp_path / "s", images, windows, extractor)
    assert extractor.calls == 3 and store.complete
