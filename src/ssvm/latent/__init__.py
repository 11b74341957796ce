"""Latent AP-SVM: weakly supervised ranking over bags of candidate windows.

Each training *image* is a bag of candidate windows with features φ(x, h); only image-level labels
are known.  An image's score is the score of its best window, s_i(w) = max_h w·φ(x_i, h), and the
*latent objective* minimised here is

    J(w) = ½‖w‖² + C · k · H(s(w))

(k: the ``hinge_scale_`` factor, below) where H is the structured hinge of the chosen loss (AP by
default) evaluated on the ranking of the images (``negatives="best"``), or on the ranking of the
positive images against every window of every negative image (``negatives="all"``, the QS paper's
detection set-up, where the number of negatives is huge and an O(N log P) oracle matters).

Why CCCP applies.  For every ranking R the hinge term Δ(R*, R) + w·Ψ(R) − w·Ψ(R*) has coefficient
(1/PN)·Σ_n (R_pn − 1) ≤ 0 on a positive's score and (1/PN)·Σ_p (1 − R_pn) ≥ 0 on a negative's score
(for the 0-1 hinge likewise).  Hence

* the max over a *negative's* windows may be taken inside the hinge: the hinge stays convex in w;
* a *positive's* max over windows makes J a difference of convex functions.  Fixing every positive to
  the window that is best under the current w_t gives a convex upper bound of J that touches J at
  w_t (a smaller positive score can only increase the hinge).  Minimising that bound from w_t can
  therefore never increase J beyond the convex solver's tolerance — each CCCP step is a descent step.

Each CCCP step (1) imputes h_p = argmax_h w_t·φ(x_p, h) for every positive image and (2) solves the
convex bound with RankSVM's machinery (:class:`ssvm.problem.StructuredHinge`, a solver from
:data:`ssvm.solvers.SOLVERS`, an oracle from :func:`ssvm.losses.get_oracle`), warm-started from
w_t.  With ``negatives="best"`` the max over a negative's windows is evaluated *inside* the
loss-augmented inference (:mod:`ssvm.losses.pooled`), so that ``X.T @ c`` is a subgradient of the
exact convex bound (nothing about the negatives is fixed between steps).

Initialisation. CCCP ends in a local minimum near its start. ``init="mean"``: w₀ is the convex
solution of the same loss on one sample per image, the mean feature of its windows (a cheap
image-level classifier); ``init="zero_one"``: the weights of the latent 0-1 SVM; a weight vector is
accepted as well. The default, ``init="auto"``, runs CCCP from the mean start and from the latent 0-1
SVM at C, C/10 and C/100 and keeps the run of the lowest final J (:mod:`~ssvm.latent.starts`). w = 0
is refused: there every window scores 0, so the first imputation is arbitrary (each positive's first
window) and w = 0 is often a fixed point of CCCP.

The scale of C. The rank hinges average over the P·N pairs, so with thousands of negative windows
they vanish only at a score margin of about N / (2(P + 1)) and sit near their maximum at every usual
C, where J stops measuring the ranking. ``hinge_scale="margin"`` (the default) multiplies C by the
square of that margin in the convex problems of a rank loss (:mod:`~ssvm.latent.starts`).

Long runs write a checkpoint after every CCCP step and ``fit(..., resume=True)`` continues from it;
with a deterministic solver (or an integer ``random_state``) the resumed run ends with the same model
as an uninterrupted one.

The package is split by job: :mod:`~ssvm.latent.bags` (the windows of many images),
:mod:`~ssvm.latent.convex` (the convex problems of a step), :mod:`~ssvm.latent.cccp` (the CCCP loop),
:mod:`~ssvm.latent.starts` (the starts, the runs from them and the scale of C),
:mod:`~ssvm.latent.checkpoint` (checkpoint files), :mod:`~ssvm.latent.estimator`
(:class:`LatentRankSVM`) and :mod:`~ssvm.latent.path` (:func:`latent_C_path`, a warm path over C);
detection with NMS is :func:`ssvm.detection.nms_per_image`.
"""

from .estimator import LATENT_LOSSES, LatentRankSVM
from .path import latent_C_path

__all__ = ["LatentRankSVM", "LATENT_LOSSES", "latent_C_path"]
