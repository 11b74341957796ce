"""What a model file may hold, class by class: the fitted attributes and how each is checked.

A schema maps each saved attribute to ``(kind, shape)``: ``kind`` is one of :data:`KINDS`, ``shape``
is ``None`` for a scalar or a tuple of sizes, each an int or a name ("features", "tasks", ...).
A name is bound by the first attribute that uses it (an ``"int"`` scalar binds its own value) and
every later use must agree, so ``coef_`` of shape (1, 5) and ``n_features_in_ = 6`` are refused.
Every class also saves ``feature_names_in_``, and :func:`nullable` says which attributes a file may
hold as null. Relations a shape cannot state (classes against tasks, monotone quantiles, the c-star
of ``pairwise_``, ...) are the ``RELATIONS`` below; each returns None or a one-line reason that
names the fields. The file format around these is in :mod:`ssvm.model_files`.
"""

import sys

import numpy as np

__all__ = ["ESTIMATORS", "KINDS", "RELATIONS", "SCHEMAS", "TRANSFORMERS", "finite_number",
           "module_of", "nullable"]

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
for _schema in SCHEMAS.values():  # every class saves its feature names, null unless fitted on named columns
    _schema["feature_names_in_"] = ("names", ("features",))
# the other attributes a fitted model may lack (null is then saved), class by class: StandardScaler's
# statistics with with_mean / with_std off, LabelRankSVM's threshold unless k="relevant"
_NULLABLE = {"StandardScaler": {"mean_", "var_", "scale_"}, "LabelRankSVM": {"threshold_"}}

ESTIMATORS = ("RankSVM", "LatentRankSVM", "LabelRankSVM")
TRANSFORMERS = ("StandardScaler", "QuantileTransformer", "MinMaxScaler", "MaxAbsScaler")


def module_of(name):
    """The module that defines the class ``name`` (one of :data:`SCHEMAS`)."""
    return "ssvm" if name in ESTIMATORS else "sklearn.preprocessing"


def nullable(name, attr):
    """Whether a fitted ``name`` may lack ``attr`` (the file then holds null)."""
    return attr == "feature_names_in_" or attr in _NULLABLE.get(name, ())


def finite_number(value):
    """Whether a JSON value is a finite number that a float holds (not a bool, NaN, ±inf or 10**400)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) <= sys.float_info.max


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
    from ssvm.label_ranking.inference import MAX_CORE

    core, n_labels = attrs["core_"], sizes["labels"]
    if core.size and (core.min() < 0 or core.max() >= n_labels):
        return f"core_ holds a label index outside 0..{n_labels - 1}"
    if (problem := _unique(core, "core_")) is not None:
        return problem
    if core.size != params["n_core"] or core.size > MAX_CORE:
        return f"core_ has {core.size} labels but n_core={params['n_core']} (at most {MAX_CORE})"
    pairwise = attrs["pairwise_"]
    star = np.isin(np.arange(n_labels), core)
    if not (np.array_equal(pairwise, pairwise.T) and not pairwise.diagonal().any()
            and not pairwise[~(star[:, None] | star[None, :])].any()):
        return "pairwise_ must be symmetric, zero on its diagonal and on the pairs that touch no core_ label"
    if (attrs["threshold_"] is None) != (params["k"] != "relevant"):
        return "threshold_ must be saved exactly when k='relevant'"
    if params["k"] != "relevant" and params["k"] >= n_labels:
        return f"k={params['k']} must be smaller than the number of labels ({n_labels})"
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


def _min_max(attrs, params, sizes):
    low_high = params["feature_range"]  # a tuple (model_files turns the file's list into one)
    if not (len(low_high) == 2 and all(map(finite_number, low_high)) and low_high[0] < low_high[1]):
        return f"feature_range must be two finite numbers, the first smaller, got {list(low_high)!r}"
    return _positive_scale(attrs, params, sizes)


def _unique(values, name):
    return None if np.unique(values).size == values.size else f"{name} holds repeated values"


RELATIONS = {"RankSVM": _rank_svm, "LatentRankSVM": _latent, "LabelRankSVM": _label_rank,
             "StandardScaler": _standard_scaler, "QuantileTransformer": _quantiles,
             "MinMaxScaler": _min_max, "MaxAbsScaler": _positive_scale}
