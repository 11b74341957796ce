"""
Weakly supervised detection with the latent AP-SVM
==================================================

Train a raccoon detector from image-level labels only — "this photo shows a raccoon" or not, no
boxes — on ``detection_mini``, the small VOC-layout set bundled with ssvm (raccoon photos, and
photos of micro-controller boards as negatives).

Each image is a bag of candidate windows (selective search). ``LatentRankSVM`` scores an image by
its best window and trains by CCCP: it picks each positive image's best window under the current
model, then solves the convex AP-SVM that ranks those windows above every window of every
negative image, and repeats. The boxes of the test images are used only to evaluate the
detections.

The baseline sees only the whole image. Many raccoons fill most of their photo, so it is a strong
baseline on this class — with this few test images the two detection APs are within noise of each
other — and the latent model, too, learns to prefer large windows, often the whole photo. On small
objects (the boards, in the full experiment on the results pages) the whole image cannot localise
at all, and the latent model's windows are what detection AP it gets.

To run in seconds the example uses a quarter of the training images and a third of the test
images, few window proposals (30 per image on a 128-pixel copy) and the default HOG + colour
features with the windows' geometry; ``scripts/train_latent_detection.py`` runs the full set-up on
every class.
"""

# %%
# Candidate windows and their features. Row 0 of every bag is the whole image.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import average_precision_score

from ssvm import LatentRankSVM
from ssvm.datasets import detection_mini_path, load_voc
from ssvm.detection import (
    HogColorFeatures,
    WithGeometry,
    evaluate_detections,
    extract_features,
    read_image,
    selective_search_many,
)

root = detection_mini_path()
train, test = load_voc(root, "train"), load_voc(root, "test")
train_idx, test_idx = np.arange(0, len(train), 4), np.arange(0, len(test), 3)
extractor = WithGeometry(HogColorFeatures())


def bags(dataset, index):
    paths = [dataset.image_paths[i] for i in index]
    windows = selective_search_many(paths, working_size=128, max_windows=30, min_area=0.05)
    return windows, extract_features(paths, windows, extractor)


train_windows, train_features = bags(train, train_idx)
test_windows, test_features = bags(test, test_idx)
y_train = train.image_labels("raccoon")[train_idx]  # image-level labels: all that training sees
print(f"{len(train_idx)} training images ({y_train.sum()} with a raccoon), "
      f"{sum(len(w) for w in train_windows)} windows, {train_features[0].shape[1]} features")

# %%
# The latent AP-SVM, and the whole-image baseline (one window per image, so nothing is latent).
latent = LatentRankSVM(loss="ap", C=10.0, negatives="all").fit(train_features, y_train)
whole = LatentRankSVM(loss="ap", C=10.0).fit([f[:1] for f in train_features], y_train)

gt_boxes, gt_difficult = test.class_boxes("raccoon")
gt_boxes, gt_difficult = [gt_boxes[i] for i in test_idx], [gt_difficult[i] for i in test_idx]
y_test = test.image_labels("raccoon")[test_idx]
detections = {
    "latent AP-SVM": latent.detect(test_features, test_windows),
    "whole image": whole.detect([f[:1] for f in test_features], [w[:1] for w in test_windows]),
}
for name, dets in detections.items():
    box_ap = evaluate_detections(dets, gt_boxes, gt_difficult, iou_threshold=0.5).ap
    image_ap = average_precision_score(y_test, [scores.max() for _, scores in dets])
    print(f"{name:>13}: test detection AP {box_ap:.3f}, image-level AP {image_ap:.3f}")

# %%
# The latent model's best window in the first test photos with a raccoon (red) and the annotated
# box (green, never seen in training).
shown = [k for k in range(len(test_idx)) if y_test[k]][:4]
fig, axes = plt.subplots(1, len(shown), figsize=(3.2 * len(shown), 3))
for ax, k in zip(np.atleast_1d(axes), shown):
    ax.imshow(read_image(test.image_paths[test_idx[k]]))
    for (x1, y1, x2, y2), color in [(detections["latent AP-SVM"][k][0][0], "red"),
                                    *[(box, "limegreen") for box in gt_boxes[k]]]:
        ax.add_patch(plt.Rectangle((x1 - 1, y1 - 1), x2 - x1 + 1, y2 - y1 + 1, fill=False,
                                   edgecolor=color, linewidth=2))
    ax.axis("off")
fig.tight_layout()
plt.show()
