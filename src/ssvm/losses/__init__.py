"""Loss-augmented inference oracles for rank-based structured SVMs.

Every oracle solves, for one query, ``max_R Δ(R*, R) + w·Ψ(X, R)`` and returns ``(c, delta)``:
the coefficients of Ψ(X, R̂) − Ψ(X, R*) per sample and the loss of the maximiser, so that
``H(w) = delta + scores @ c`` (docs/design.md §1).

Losses: ``"ap"``, ``"ndcg"`` (QS-suitable, served by one generic QS kernel), ``"zero_one"``,
``"precision_at_k"``, or a user :class:`QSLoss` object.  Oracles: ``"qs"`` (Mohapatra et al.,
O(N log P); for AP and NDCG with P ≥ N/50 one packed-key sort and a certified walk instead),
``"yue"`` / ``"chakrabarti"`` (sort everything, O(PN + N log N)), ``"search"``
(Algorithm 3), ``"dp"`` (Song et al., also the loss-diminished direction via
:func:`ap_direct_loss_inference`), ``"brute"`` (exhaustive, tiny inputs) and ``"auto"``; which
oracle serves which loss, and everything else ssvm knows about a loss, is one declarative table
(:mod:`ssvm.losses.registry`, read through :func:`loss_entry`).  The kernels are compiled
when the package is built (Cython, ``meson.build``): nothing is compiled on first use.
"""

from importlib import import_module

from .dp import ap_direct_loss_inference
from .pairwise import svm_rank_C
from .rank_losses import APLoss, NDCGLoss, QSLoss
from .registry import (
    LOSS_NAMES,
    ORACLE_NAMES,
    LossEntry,
    Oracle,
    as_oracle,
    get_oracle,
    loss_augmented_inference,
    loss_entry,
    ranking_loss,
    supported_oracles,
)
from .suitability import QSCheckResult, check_qs_suitable

__all__ = [
    "loss_augmented_inference", "get_oracle", "Oracle", "as_oracle", "ranking_loss", "LOSS_NAMES", "ORACLE_NAMES",
    "supported_oracles", "loss_entry", "LossEntry",
    "check_qs_suitable", "QSCheckResult", "QSLoss", "APLoss", "NDCGLoss",
    "ap_direct_loss_inference", "rank_hinge", "direct_loss_gradient", "svm_rank_C",
]

# The functional layer (:mod:`ssvm.functional`) sits above ssvm.problem, which sits above this
# package: its two public functions are re-exported here, where users import them, resolved on first
# access (as ``ssvm`` resolves its estimators) so that no module of this package imports upward.
_FUNCTIONAL = ("rank_hinge", "direct_loss_gradient")


def __getattr__(name):
    if name in _FUNCTIONAL:
        return getattr(import_module("ssvm.functional"), name)
    raise AttributeError(f"module 'ssvm.losses' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
