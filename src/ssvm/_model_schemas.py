"""What a model file may hold, class by class: the fitted attributes and how each is checked.

A schema maps each saved attribute to ``(kind, shape)``: ``kind`` is one of :data:`KINDS`, ``shape``
is ``None`` for a scalar or a tuple of sizes, each an int or a name ("features", "tasks", ...).
A name is bound by the first attribute that uses it (an ``"int"`` scalar binds its own value) and
every later use must agree, so ``coef_`` of shape (1, 5) and ``n_features_in_ = 6`` are refused.
Relations a shape cannot state (classes against tasks, monotone quantiles, ...) are the
``RELATIONS`` below. The file format around these is in :mod:`ssvm.model_files`.
"""

import numpy as np

__all__ = ["ESTIMATORS", "KINDS", "OPTIONAL", "RELATIONS", "SCHEMAS", "TRANSFORMERS", "module_of"]

# kind → accepted numpy dtype kinds
KINDS = {"float": "f", "int": "iu", "bool": "b", "labels": "iufbU", "names": "U", "index": "iu"}

SCHEMAS = {
    "RankSVM": {
        "n_features_in_": ("int", "features"),
        "coef_": ("float", ("tasks", "features")),
        "intercept_": ("float", ("tasks",)),
        "classes_": ("labels", ("classes",)),
        "n_iter_": ("int", None),
        "n_queries_": ("int", None),
        "n_skipped_queries_": ("int", None),
        "_fitted_on_queries": ("bool", None),
    },
    "LatentRankSVM": {
        "n_features_in_": ("int", "features"),
        "coef_": ("float", ("features",)),
        "intercept_": ("float", None),
        "classes_": ("labels", (2,)),
        "n_iter_": ("int", None),
        "converged_": ("bool", None),
    },
    "LabelRankSVM": {
        "n_features_in_": ("int", "features"),
        "coef_": ("float", ("labels", "features")),
        "intercept_": ("float", ("labels",)),
        "pairwise_": ("float", ("labels", "labels")),
        "core_": ("index", ("core",)),
        "threshold_": ("float", None),
        "n_iter_": ("int", None),
        "n_cccp_iter_": ("int", None),
        "n_samples_fit_": ("int", None),
        "n_skipped_queries_": ("int", None),
    },
    "StandardScaler": {
        "n_features_in_": ("int", "features"),
        "mean_": ("float", ("features",)),
        "var_": ("float", ("features",)),
        "scale_": ("float", ("features",)),
    },
    "QuantileTransformer": {
        "n_features_in_": ("int", "features"),
        "n_quantiles_": ("int", "quantiles"),
        "quantiles_": ("float", ("quantiles", "features")),
        "references_": ("float", ("quantiles",)),
    },
    "MinMaxScaler": {
        "n_features_in_": ("int", "features"),
        "min_": ("float", ("features",)),
        "scale_": ("float", ("features",)),
        "data_min_": ("float", ("features",)),
        "data_max_": ("float", ("features",)),
        "data_range_": ("float", ("features",)),
    },
    "MaxAbsScaler": {
        "n_features_in_": ("int", "features"),
        "max_abs_": ("float", ("features",)),
        "scale_": ("float", ("features",)),
    },
}
# attributes a fitted model may lack (None is then saved): names only with string column names,
# StandardScaler's statistics with with_mean / with_std off, the threshold only with k="relevant"
OPTIONAL = {"feature_names_in_": ("names", ("features",)), "mean_": None, "var_": None,
            "scale_": None, "threshold_": None}

ESTIMATORS = ("RankSVM", "LatentRankSVM", "LabelRankSVM")
TRANSFORMERS = ("StandardScaler", "QuantileTransformer", "MinMaxScaler", "MaxAbsScaler")


def module_of(name):
    """The module that defines the class ``name`` (one of :data:`SCHEMAS`)."""
    return "ssvm" if name in ESTIMATORS else "sklearn.preprocessing"


def _rank_svm(attrs, params, sizes):
    if sizes["tasks"] == 0:
        return "coef_ has no rows (a fitted RankSVM has one, or one per class)"
    expected = 2 if sizes["tasks"] == 1 else sizes["tasks"]
    if sizes["classes"] != expected:
        return f"classes_ has {sizes['classes']} entries but coef_ has {sizes['tasks']} row(s)"
    return _unique(attrs["classes_"], "classes_")


def _latent(attrs, params, sizes):
    return _unique(attrs["classes_"], "classes_")


def _label_rank(attrs, params, sizes):
    core = attrs["core_"]
    if core.size and (core.min() < 0 or core.max() >= sizes["labels"]):
        return f"core_ holds a label index outside 0..{sizes['labels'] - 1}"
    if (problem := _unique(core, "core_")) is not None:
        return problem
    if (attrs["threshold_"] is None) != (params["k"] != "relevant"):
        return "threshold_ must be saved exactly when k='relevant'"
    return None


def _standard_scaler(attrs, params, sizes):
    with_std = bool(params["with_std"])
    # scikit-learn keeps mean_ unless both flags are off, var_ and scale_ with with_std only
    for name, needed in (("mean_", with_std or bool(params["with_mean"])), ("scale_", with_std), ("var_", with_std)):
        if (attrs[name] is None) == needed:
            return (f"{name} must be {'saved' if needed else 'null'} with with_mean={params['with_mean']}, "
                    f"with_std={with_std}")
    if attrs["scale_"] is not None and not np.all(attrs["scale_"] > 0):
        return "scale_ must be positive"
    return None


def _quantiles(attrs, params, sizes):
    if np.any(np.diff(attrs["quantiles_"], axis=0) < 0):
        return "quantiles_ must be non-decreasing down each column"
    references = attrs["references_"]
    if np.any(np.diff(references) <= 0) or references[0] < 0 or references[-1] > 1:
        return "references_ must increase within [0, 1]"
    return None


def _positive_scale(attrs, params, sizes):
    return None if np.all(attrs["scale_"] > 0) else "scale_ must be positive"


def _unique(values, name):
    return None if np.unique(values).size == values.size else f"{name} holds repeated values"


RELATIONS = {"RankSVM": _rank_svm, "LatentRankSVM": _latent, "LabelRankSVM": _label_rank,
             "StandardScaler": _standard_scaler, "QuantileTransformer": _quantiles,
             "MinMaxScaler": lambda attrs, params, sizes: None, "MaxAbsScaler": _positive_scale}
