"""VOC detection AP: a hand-computed example and a slow twin of the devkit's voc_eval."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssvm.detection import evaluate_detections, voc_ap


def box(x1, y1, x2, y2):
    return np.array([[x1, y1, x2, y2]], dtype=float)


def hand_example():
    """Three images; image A has a normal box g1 and a difficult box g2, B one box g3, C none.

    Detections by score:
      d1 A (1,1,10,10)   0.9  IoU 1 with g1              -> TP
      d2 C (1,1,10,10)   0.8  image without ground truth -> FP
      d3 A (1,1,10,10)   0.7  g1 already claimed         -> FP (duplicate)
      d4 A (21,21,30,30) 0.6  matches difficult g2       -> ignored
      d5 B (1,1,10,11)   0.5  IoU 100/110 with g3        -> TP
      d6 B (50,50,60,60) 0.4  no overlap                 -> FP
    Counted: TP FP FP TP FP with 2 positives:
      recall    = 0.5, 0.5, 0.5, 1.0, 1.0
      precision = 1,   1/2, 1/3, 1/2, 2/5
    Area AP: precision envelope is 1 on recall (0, 0.5] and 1/2 on (0.5, 1]:
      0.5 * 1 + 0.5 * 0.5 = 0.75.
    11-point AP: t = 0, 0.1, ..., 0.5 (6 points) reach max precision 1; t = 0.6 ... 1.0 (5 points)
      only the recall-1 points, max precision 1/2: (6 * 1 + 5 * 0.5) / 11 = 8.5 / 11.
    """
    gt_boxes = [np.vstack([box(1, 1, 10, 10), box(21, 21, 30, 30)]), box(1, 1, 10, 10),
                np.zeros((0, 4))]
    gt_difficult = [np.array([False, True]), np.array([False]), np.zeros(0, bool)]
    detections = [
        (np.vstack([box(1, 1, 10, 10), box(1, 1, 10, 10), box(21, 21, 30, 30)]), [0.9, 0.7, 0.6]),
        (np.vstack([box(1, 1, 10, 11), box(50, 50, 60, 60)]), [0.5, 0.4]),
        (box(1, 1, 10, 10), [0.8]),
    ]
    return detections, gt_boxes, gt_difficult


def test_hand_computed_example():
    detections, gt_boxes, gt_difficult = hand_example()
    result = evaluate_detections(detections, gt_boxes, gt_difficult)
    assert result.ap == pytest.approx(0.75)
    assert result.n_positives == 2
    np.testing.assert_array_equal(result.true_positive, [True, False, False, True, False])
    np.testing.assert_allclose(result.recall, [0.5, 0.5, 0.5, 1, 1])
    np.testing.assert_allclose(result.precision, [1, 1 / 2, 1 / 3, 1 / 2, 2 / 5])
    ap07 = evaluate_detections(detections, gt_boxes, gt_difficult, use_07_metric=True).ap
    assert ap07 == pytest.approx(8.5 / 11)


def test_threshold_and_difficult_rules():
    gt = [box(1, 1, 10, 10)]
    hard = [np.array([False])]
    # IoU exactly 0.5 counts (VOC: overlap >= 0.5)
    assert evaluate_detections([(box(1, 1, 10, 20), [1.0])], gt, hard).ap == 1.0
    # IoU 100/210 < 0.5 does not
    assert evaluate_detections([(box(1, 1, 10, 21), [1.0])], gt, hard).ap == 0.0
    # no detections at all: AP 0
    assert evaluate_detections([(np.zeros((0, 4)), [])], gt, hard).ap == 0.0
    with pytest.raises(ValueError, match="no non-difficult ground-truth box"):
        evaluate_detections([(box(1, 1, 10, 10), [1.0])], gt, [np.array([True])])
    with pytest.raises(ValueError, match="one entry per image"):
        evaluate_detections([], gt, hard)
    with pytest.raises(ValueError, match=r"detections\[0\]: 1 boxes but 2 scores"):
        evaluate_detections([(box(1, 1, 2, 2), [1, 2])], gt, hard)
    with pytest.raises(ValueError, match=r"gt_difficult\[0\] has 2 flags for 1 boxes"):
        evaluate_detections([(box(1, 1, 2, 2), [1])], gt, [np.array([False, True])])


def test_voc_ap_direct():
    assert voc_ap([0.5, 1.0], [1.0, 1.0]) == 1.0
    assert voc_ap([0.5, 1.0], [1.0, 1.0], use_07_metric=True) == pytest.approx(1.0)
    # recall 0.25 at precision 1, then recall 0.5 at 0.5: area 0.25 * 1 + 0.25 * 0.5
    assert voc_ap([0.25, 0.5], [1.0, 0.5]) == pytest.approx(0.375)
    # 11-point: t=0,0.1,0.2 -> 1; t=0.3,0.4,0.5 -> 0.5; t>0.5 -> 0  => 4.5 / 11
    assert voc_ap([0.25, 0.5], [1.0, 0.5], use_07_metric=True) == pytest.approx(4.5 / 11)
    assert voc_ap([], []) == 0.0
    with pytest.raises(ValueError, match="non-decreasing"):
        voc_ap([0.5, 0.2], [1, 1])
    with pytest.raises(ValueError, match=r"precision values must lie in \[0, 1\]"):
        voc_ap([0.5], [1.5])
    with pytest.raises(ValueError, match="equal length"):
        voc_ap([0.5], [1, 1])


def slow_voc_eval(detections, gt_boxes, gt_difficult, threshold, use_07):
    """The devkit's voc_eval, written with plain loops (difficult detections keep a row)."""
    flat = []
    for i, (boxes, scores) in enumerate(detections):
        for k in range(len(scores)):
            flat.append((-scores[k], i, k, list(boxes[k])))
    flat.sort(key=lambda t: t[:3])
    npos = sum(int(not h) for hs in gt_difficult for h in hs)
    claimed = [[False] * len(g) for g in gt_boxes]
    tp, fp = [], []
    for _, i, _, b in flat:
        best, jmax = -math.inf, -1
        for j, g in enumerate(gt_boxes[i]):
            ix = min(b[2], g[2]) - max(b[0], g[0]) + 1
            iy = min(b[3], g[3]) - max(b[1], g[1]) + 1
            inter = max(ix, 0) * max(iy, 0)
            union = (b[2] - b[0] + 1) * (b[3] - b[1] + 1) + (g[2] - g[0] + 1) * (g[3] - g[1] + 1) - inter
            if inter / union > best:
                best, jmax = inter / union, j
        if best >= threshold:
            if gt_difficult[i][jmax]:
                tp.append(0), fp.append(0)
            elif not claimed[i][jmax]:
                claimed[i][jmax] = True
                tp.append(1), fp.append(0)
            else:
                tp.append(0), fp.append(1)
        else:
            tp.append(0), fp.append(1)
    rec, prec, ctp, cfp = [], [], 0, 0
    for a, b in zip(tp, fp):
        ctp, cfp = ctp + a, cfp + b
        rec.append(ctp / npos)
        prec.append(ctp / max(ctp + cfp, np.finfo(float).eps))
    if use_07:
        ap = 0.0
        for t in np.arange(0.0, 1.1, 0.1):
            p = max([p for r, p in zip(rec, prec) if r >= t], default=0.0)
            ap += p / 11
        return ap
    mrec, mpre = [0.0] + rec + [1.0], [0.0] + prec + [0.0]
    for i in range(len(mpre) - 2, -1, -1):
        mpre[i] = max(mpre[i], mpre[i + 1])
    return sum((mrec[i + 1] - mrec[i]) * mpre[i + 1] for i in range(len(mrec) - 1)
               if mrec[i + 1] != mrec[i])


@settings(max_examples=60, deadline=None)
@given(n_images=st.integers(1, 5), seed=st.integers(0, 2**31 - 1), use_07=st.booleans(),
       threshold=st.sampled_from([0.3, 0.5, 0.7]), tied_scores=st.booleans())
def test_matches_slow_devkit_twin(n_images, seed, use_07, threshold, tied_scores):
    rng = np.random.default_rng(seed)

    def boxes(n):
        xy = rng.integers(1, 8, size=(n, 2))
        return np.hstack([xy, xy + rng.integers(1, 6, size=(n, 2))]).astype(float)

    gt_boxes = [boxes(rng.integers(0, 4)) for _ in range(n_images)]
    gt_difficult = [rng.random(len(g)) < 0.3 for g in gt_boxes]
    if sum((~h).sum() for h in gt_difficult) == 0:
        gt_boxes[0] = np.vstack([gt_boxes[0], boxes(1)])
        gt_difficult[0] = np.r_[gt_difficult[0], False]
    detections = []
    for _ in range(n_images):
        k = rng.integers(0, 7)
        scores = rng.integers(0, 3, k).astype(float) if tied_scores else rng.normal(size=k)
        detections.append((boxes(k), scores))
    got = evaluate_detections(detections, gt_boxes, gt_difficult, threshold, use_07)
    expected = slow_voc_eval(detections, gt_boxes, gt_difficult, threshold, use_07)
    assert got.ap == pytest.approx(expected, abs=1e-12)
