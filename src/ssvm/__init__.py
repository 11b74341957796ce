"""ssvm: structured SVMs that directly optimise rank-based measures.

Public names
------------
RankSVM
    scikit-learn estimator minimising J(w) = ½‖w‖² + C·mean_q H_q(w) for the AP, NDCG,
    0-1 or precision@k structured hinge (``ssvm.estimators``).
RankSVMCV
    ``RankSVM`` with C chosen by cross-validation on a warm path over C (``ssvm.model_selection``).
LatentRankSVM
    latent AP-SVM for weakly supervised detection (``ssvm.latent``).
LabelRankSVM
    label ranking by precision@k with c-star label dependencies (``ssvm.label_ranking``).
save_model, load_model
    model files that are data (JSON, every field checked on load; ``ssvm.model_files``).
losses
    loss-augmented inference oracles, ``ssvm.losses.loss_augmented_inference``.

The estimators are imported lazily so that ``import ssvm`` (and the oracles) stay cheap.
"""

from importlib import import_module

__version__ = "0.1.0"
__all__ = ["RankSVM", "RankSVMCV", "LatentRankSVM", "LabelRankSVM", "save_model", "load_model", "losses",
           "__version__"]

_LAZY = {
    "RankSVM": "ssvm.estimators",
    "RankSVMCV": "ssvm.model_selection",
    "LatentRankSVM": "ssvm.latent",
    "LabelRankSVM": "ssvm.label_ranking",
    "save_model": "ssvm.model_files",
    "load_model": "ssvm.model_files",
}


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    if name == "losses":
        return import_module("ssvm.losses")
    raise AttributeError(f"module 'ssvm' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
