"""Every check load_model makes, each broken alone (issue #37): a valid file with one field or one relation
between fields broken, and the one-line refusal that names it.

The checks are those of ``ssvm.model_files`` (the document, the model entries, pipelines, parameters,
attributes, values and arrays) and of ``ssvm._model_schemas`` (the relations a shape cannot state), in
that order. The fuzzer (``test_model_files_fuzz.py``) draws corruptions at random; these name each check.
"""

import copy
import json

import numpy as np
import pytest
from model_file_cases import fit_case
from model_file_corruptions import RAW, dumps

from ssvm import load_model, save_model

CASES = ["rank_binary", "rank_ovr_strings_with_names", "latent_ap", "label_relevant_independent",
         "label_top2_core2", "pipe_standard", "pipe_standard_no_mean", "pipe_standard_off", "pipe_quantile_normal",
         "pipe_maxabs_float32", "pipe_minmax_clip_quantile_label"]
ATTRS = ("model", "attributes")
PARAMS = ("model", "params")


def step(i, *rest):
    """The path of a pipeline step's model (``rest``: into it)."""
    return ("model", "steps", i, 1, *rest)


class _Documents(dict):
    """The saved file of each case, parsed; a case is fitted the first time a test asks for it."""

    def __init__(self, folder):
        super().__init__()
        self.folder = folder

    def __missing__(self, name):
        save_model(fit_case(name)[0], self.folder / f"{name}.json")
        self[name] = json.loads((self.folder / f"{name}.json").read_text())
        return self[name]


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    return _Documents(tmp_path_factory.mktemp("relations"))


def at(document, *path):
    for key in path:
        document = document[key]
    return document


def put(*path, value):
    def edit(document):
        at(document, *path[:-1])[path[-1]] = copy.deepcopy(value)
    return edit


def drop(*path):
    def edit(document):
        del at(document, *path[:-1])[path[-1]]
    return edit


def put_item(*path, index, value):
    """Set one element of an array's data."""
    def edit(document):
        at(document, *path, "data")[index] = value
    return edit


def text(content):
    return lambda document: content


def array(dtype, data, shape=None):
    return {"dtype": dtype, "shape": [len(data)] if shape is None else shape, "data": data}


def _nan_in_coef(document):
    at(document, *ATTRS, "coef_", "data")[1] = float("nan")


def _float32_coef(document):
    at(document, *ATTRS, "coef_")["dtype"] = "float32"


def _references(index, value):
    def edit(document):
        references = at(document, *step(0, "attributes", "references_", "data"))
        references[index] = references[index - 1] if value is None else value
    return edit


def _quantiles_decrease(document):
    at(document, *step(0, "attributes", "quantiles_", "data"))[0] = 1e300  # column 0 falls after row 0


def _fewer_labels_in_pairwise(document):
    pairwise = at(document, *ATTRS, "pairwise_")
    matrix = np.array(pairwise["data"]).reshape(pairwise["shape"])[:4, :4]
    pairwise.update(shape=[4, 4], data=matrix.ravel().tolist())


def _fewer_references(document):
    references = at(document, *step(0, "attributes", "references_"))
    references.update(shape=[references["shape"][0] - 1], data=references["data"][:-1])


def _wider_scaler(document):
    """The scaler of a 3-feature pipeline fitted, consistently, on 4 features."""
    scaler = at(document, *step(0, "attributes"))
    scaler["n_features_in_"] = 4
    for name in ("mean_", "var_", "scale_"):
        scaler[name] = array("float64", [*scaler[name]["data"], 1.0])


def _core(edit_core):
    def edit(document):
        core = at(document, *ATTRS, "core_", "data")
        core[:] = edit_core(core)
    return edit


def _pairwise(change):
    """Edit ``pairwise_`` of the 5-label, 2-core model at entries chosen from its core and other labels."""
    def edit(document):
        pairwise = at(document, *ATTRS, "pairwise_")
        matrix = np.array(pairwise["data"]).reshape(pairwise["shape"])
        core = at(document, *ATTRS, "core_", "data")
        others = [label for label in range(matrix.shape[0]) if label not in core]
        change(matrix, core, others)
        pairwise["data"] = matrix.ravel().tolist()
    return edit


def _one_sided(matrix, core, others):
    matrix[core[0], others[0]] += 0.5


def _on_diagonal(matrix, core, others):
    matrix[core[0], core[0]] = 0.5


def _off_the_star(matrix, core, others):
    matrix[others[0], others[1]] = matrix[others[1], others[0]] = 0.5


def _core_too_large(document):
    """A consistent 22-label model (no pairwise weights) whose core holds 21 labels: past MAX_CORE."""
    attrs, n_labels = at(document, *ATTRS), 22
    attrs["coef_"] = array("float64", [0.5] * (n_labels * 3), [n_labels, 3])
    attrs["intercept_"] = array("float64", [0.0] * n_labels)
    attrs["pairwise_"] = array("float64", [0.0] * n_labels**2, [n_labels, n_labels])
    attrs["core_"] = array("int64", list(range(21)))
    at(document, *PARAMS)["n_core"] = 21


def _steps(change):
    def edit(document):
        steps = at(document, "model", "steps")
        steps[:] = change(steps)
    return edit


# (case, edit, what the refusal says) — ids name the check
CHECKS = [
    # ---- the document (model_files._parse)
    pytest.param("rank_binary", text(b"\x80\x04K\x01."), "looks like a pickle or numpy file", id="pickle"),
    pytest.param("rank_binary", text(b"\x93NUMPY\x01\x00"), "looks like a pickle or numpy file", id="npy"),
    pytest.param("rank_binary", text("{not json"), r"not JSON \(", id="not-json"),
    pytest.param("rank_binary", text(b"\xff\xfe{}"), r"not JSON \(", id="not-utf8"),
    pytest.param("rank_binary", _nan_in_coef,
                 r"holds NaN; model values must be finite \(found at model\.attributes\.coef_\.data\[1\]\)",
                 id="nan-token"),
    pytest.param("rank_binary", text("[1, 2]"), "the document is not a JSON object", id="not-an-object"),
    pytest.param("rank_binary", put("format", value="ssvm-model-2"), "'format' is 'ssvm-model-2'", id="format"),
    pytest.param("rank_binary", put("version", value=0), "'version' is 0, not a positive integer", id="version-0"),
    pytest.param("rank_binary", put("version", value=True), "'version' is True", id="version-bool"),
    pytest.param("rank_binary", put("version", value=2), "format version 2 is newer than this ssvm reads",
                 id="version-newer"),
    pytest.param("rank_binary", put("zz", value=1), r"unknown top-level fields \['zz'\]", id="top-level-extra"),
    pytest.param("rank_binary", put("ssvm_version", value=1), "'ssvm_version' is missing or not a string",
                 id="ssvm-version"),
    pytest.param("rank_binary", drop("sklearn_version"), "'sklearn_version' is missing or not a string",
                 id="sklearn-version"),
    pytest.param("rank_binary", drop("model"), "'model' is missing", id="model-missing"),
    pytest.param("rank_binary", put("metadata", value={"x": [1]}), "metadata must map strings", id="metadata"),
    # ---- a model entry, its class and parameters (model_files._decode_model, _build)
    pytest.param("rank_binary", put("model", value=[1]), "model is not a JSON object", id="entry-not-object"),
    pytest.param("rank_binary", put("model", "class", value="LinearSVC"), "class 'LinearSVC' is not one of",
                 id="class"),
    pytest.param("rank_binary", put("model", "zz", value=1), "must have exactly the fields class, params, attributes",
                 id="entry-fields"),
    pytest.param("rank_binary", put(*PARAMS, value=[]), "params is not a JSON object", id="params-not-object"),
    pytest.param("rank_binary", put(*PARAMS, "zz", value=1), r"RankSVM has no parameter\(s\) \['zz'\]",
                 id="param-unknown"),
    pytest.param("rank_binary", drop(*PARAMS, "tol"), r"RankSVM params missing \['tol'\]", id="param-missing"),
    pytest.param("latent_ap", put(*PARAMS, "chunk_rows", value=True),
                 r"parameter\(s\) \['chunk_rows'\] must be numbers or names, not booleans", id="param-bool"),
    pytest.param("rank_binary", put(*PARAMS, "C", value=-1.0), "The 'C' parameter of RankSVM must be",
                 id="param-refused"),
    # ---- attributes and scalar values (_decode_attributes, _decode_value)
    pytest.param("rank_binary", put(*ATTRS, value=[]), "attributes is not a JSON object", id="attributes-not-object"),
    pytest.param("rank_binary", drop(*ATTRS, "n_iter_"), r"attributes missing \['n_iter_'\]", id="attribute-missing"),
    pytest.param("rank_binary", put(*ATTRS, "zz", value=1), r"unexpected \['zz'\]", id="attribute-extra"),
    pytest.param("rank_binary", put(*ATTRS, "coef_", value=None), "coef_ must not be null", id="null"),
    pytest.param("pipe_minmax_clip_quantile_label", put(*step(0, "attributes", "scale_"), value=None),
                 "MinMaxScaler: scale_ must not be null", id="null-only-where-that-class-may"),
    pytest.param("rank_binary", put(*ATTRS, "n_iter_", value=-1), "n_iter_ must be a non-negative int, got -1",
                 id="int-negative"),
    pytest.param("rank_binary", put(*ATTRS, "n_iter_", value=True), "n_iter_ must be a non-negative int, got True",
                 id="int-bool"),
    pytest.param("rank_binary", put(*ATTRS, "n_queries_", value=1.0), "n_queries_ must be a non-negative int",
                 id="int-float"),
    pytest.param("rank_binary", put(*ATTRS, "_fitted_on_queries", value=0), "_fitted_on_queries must be a bool",
                 id="bool"),
    pytest.param("latent_ap", put(*ATTRS, "intercept_", value=RAW + "1e999"),
                 "intercept_ must be a finite float, got inf", id="float-infinite"),
    pytest.param("latent_ap", put(*ATTRS, "intercept_", value=10**400), "intercept_ must be a finite float",
                 id="float-past-float64"),
    pytest.param("label_relevant_independent", put(*ATTRS, "threshold_", value=True),
                 "threshold_ must be a finite float, got True", id="float-bool"),
    # ---- arrays (_decode_value)
    pytest.param("rank_binary", put(*ATTRS, "coef_", value=[1.0, 2.0, 3.0]),
                 r"coef_ must be an array \{dtype, shape, data\}", id="array-not-object"),
    pytest.param("rank_binary", put(*ATTRS, "coef_", "zz", value=1), r"coef_ must be an array \{dtype, shape, data\}",
                 id="array-keys"),
    pytest.param("rank_binary", put(*ATTRS, "coef_", "dtype", value="float16"), "dtype 'float16' is not one of",
                 id="dtype-unknown"),
    pytest.param("rank_binary", put(*ATTRS, "coef_", "shape", value=[3]), r"shape \[3\] is not 2-D", id="shape-ndim"),
    pytest.param("rank_binary", put(*ATTRS, "coef_", "shape", value=[-1, -3]), r"shape \[-1, -3\] is not 2-D",
                 id="shape-negative"),
    pytest.param("rank_binary", put(*ATTRS, "coef_", "shape", value=[True, 3]), r"shape \[True, 3\] is not 2-D",
                 id="shape-bool"),
    pytest.param("rank_binary", put(*ATTRS, "coef_", "shape", value=[1, 4]), "data does not hold 4 values",
                 id="data-length"),
    pytest.param("rank_binary", put(*ATTRS, "coef_", "data", value=["1", "0", "x"]),
                 "coef_: values are not all of dtype float64", id="values-type"),
    pytest.param("rank_binary", put(*ATTRS, "classes_", "dtype", value="float64"),
                 "classes_: values are not all of dtype float64", id="ints-in-a-float-array"),
    pytest.param("rank_binary", put(*ATTRS, "classes_", "data", value=[False, True]),
                 "classes_: values are not all of dtype int64", id="bools-in-an-int-array"),
    pytest.param("rank_binary", put(*ATTRS, "classes_", value=array("int32", [0, 2**40])),
                 "classes_: values do not fit dtype int32", id="overflow"),
    pytest.param("rank_binary", _float32_coef, "coef_: values do not fit dtype float32 exactly", id="float32-inexact"),
    pytest.param("rank_binary", put(*ATTRS, "coef_", value=array("str", ["1", "0", "x"], [1, 3])),
                 "coef_: dtype str is not a float array", id="kind-str"),
    pytest.param("rank_binary", put(*ATTRS, "coef_", value=array("bool", [True, False, True], [1, 3])),
                 "coef_: dtype bool is not a float array", id="kind-bool"),
    pytest.param("label_top2_core2", put(*ATTRS, "core_", value=array("float64", [0.0, 1.0])),
                 "core_: dtype float64 is not a index array", id="kind-float-index"),
    pytest.param("rank_binary", put_item(*ATTRS, "coef_", index=0, value=RAW + "1e999"),
                 "coef_ holds NaN or infinite values", id="array-infinite"),
    pytest.param("latent_ap", put(*ATTRS, "classes_", value=array("int64", [0, 1, 2])),
                 r"classes_: shape \[3\] where \(2,\) is expected", id="fixed-size"),
    pytest.param("rank_binary", put(*ATTRS, "n_features_in_", value=4),
                 r"coef_: 3 features where the other fields have 4 \(n_features_in_\)", id="bind-features"),
    pytest.param("rank_binary", put(*ATTRS, "intercept_", value=array("float64", [0.0, 1.0])),
                 r"intercept_: 2 tasks where the other fields have 1 \(coef_\)", id="bind-tasks"),
    pytest.param("label_top2_core2", _fewer_labels_in_pairwise,
                 r"pairwise_: 4 labels where the other fields have 5 \(coef_\)", id="bind-labels"),
    pytest.param("pipe_quantile_normal", _fewer_references,
                 r"references_: 11 quantiles where the other fields have 12 \(n_quantiles_\)", id="bind-quantiles"),
    pytest.param("rank_ovr_strings_with_names", put(*ATTRS, "feature_names_in_", value=array("str", ["a", "b"])),
                 r"feature_names_in_: 2 features where the other fields have 3 \(n_features_in_\)",
                 id="bind-feature-names"),
    # ---- relations (ssvm._model_schemas.RELATIONS)
    pytest.param("rank_binary", put(*ATTRS, "classes_", value=array("int64", [0, 1, 2])),
                 r"classes_ has 3 entries but coef_ has 1 row\(s\)", id="binary-too-many-classes"),
    pytest.param("rank_binary", put(*ATTRS, "classes_", value=array("int64", [1])),
                 r"classes_ has 1 entries but coef_ has 1 row\(s\)", id="binary-too-few-classes"),
    pytest.param("rank_ovr_strings_with_names", put(*ATTRS, "classes_", value=array("str", ["cat", "dog"])),
                 r"classes_ has 2 entries but coef_ has 3 row\(s\)", id="ovr-too-few-classes"),
    pytest.param("rank_ovr_strings_with_names", put(*ATTRS, "classes_", value=array("str", ["a", "b", "c", "d"])),
                 r"classes_ has 4 entries but coef_ has 3 row\(s\)", id="ovr-too-many-classes"),
    pytest.param("rank_ovr_strings_with_names", put(*ATTRS, "classes_", value=array("str", ["cat", "cat", "eel"])),
                 "classes_ holds repeated values", id="rank-classes-repeated"),
    pytest.param("latent_ap", put(*ATTRS, "classes_", value=array("int64", [1, 1])),
                 "classes_ holds repeated values", id="latent-classes-repeated"),
    pytest.param("label_top2_core2", _core(lambda core: [core[0], 5]), r"core_ holds a label index outside 0\.\.4",
                 id="core-at-n-labels"),
    pytest.param("label_top2_core2", _core(lambda core: [core[0], -1]), r"core_ holds a label index outside 0\.\.4",
                 id="core-negative"),
    pytest.param("label_top2_core2", _core(lambda core: [core[0], core[0]]), "core_ holds repeated values",
                 id="core-repeated"),
    pytest.param("label_top2_core2", put(*PARAMS, "n_core", value=3), r"core_ has 2 labels but n_core=3",
                 id="core-size-vs-n-core"),
    pytest.param("label_relevant_independent", _core_too_large, r"core_ has 21 labels but n_core=21 \(at most 20\)",
                 id="core-past-max-core"),
    pytest.param("label_top2_core2", _pairwise(_one_sided), "pairwise_ must be symmetric", id="pairwise-asymmetric"),
    pytest.param("label_top2_core2", _pairwise(_on_diagonal), "pairwise_ must be symmetric, zero on its diagonal",
                 id="pairwise-diagonal"),
    pytest.param("label_top2_core2", _pairwise(_off_the_star), "on the pairs that touch no core_ label",
                 id="pairwise-off-the-star"),
    pytest.param("label_relevant_independent", put(*ATTRS, "threshold_", value=None),
                 "threshold_ must be saved exactly when k='relevant'", id="threshold-missing"),
    pytest.param("label_top2_core2", put(*ATTRS, "threshold_", value=0.5),
                 "threshold_ must be saved exactly when k='relevant'", id="threshold-extra"),
    pytest.param("label_top2_core2", put(*PARAMS, "k", value=5), r"k=5 must be smaller than the number of labels \(5\)",
                 id="k-vs-labels"),
    pytest.param("pipe_standard", put(*step(0, "attributes", "mean_"), value=None),
                 "mean_ must be saved with with_mean=True", id="standard-mean-missing"),
    pytest.param("pipe_standard_no_mean", put(*step(0, "attributes", "mean_"), value=None),
                 "mean_ must be saved with with_mean=False, with_std=True", id="standard-mean-kept-with-std"),
    pytest.param("pipe_standard", put(*step(0, "attributes", "scale_"), value=None), "scale_ must be saved",
                 id="standard-scale-missing"),
    pytest.param("pipe_standard", put(*step(0, "attributes", "var_"), value=None), "var_ must be saved",
                 id="standard-var-missing"),
    pytest.param("pipe_standard_off", put(*step(0, "attributes", "mean_"), value=array("float64", [0.0] * 3)),
                 "mean_ must be null", id="standard-mean-extra"),
    pytest.param("pipe_standard_off", put(*step(0, "attributes", "scale_"), value=array("float64", [1.0] * 3)),
                 "scale_ must be null", id="standard-scale-extra"),
    pytest.param("pipe_standard_off", put(*step(0, "attributes", "var_"), value=array("float64", [1.0] * 3)),
                 "var_ must be null", id="standard-var-extra"),
    pytest.param("pipe_standard", put_item(*step(0, "attributes", "scale_"), index=1, value=0.0),
                 "scale_ must be positive", id="standard-scale-positive"),
    pytest.param("pipe_quantile_normal", _quantiles_decrease, "quantiles_ must be non-decreasing down each column",
                 id="quantiles-decreasing"),
    pytest.param("pipe_quantile_normal", _references(5, None), r"references_ must increase within \[0, 1\]",
                 id="references-repeated"),
    pytest.param("pipe_quantile_normal", _references(0, -0.01), r"references_ must increase within \[0, 1\]",
                 id="references-below-0"),
    pytest.param("pipe_quantile_normal", _references(-1, 1.01), r"references_ must increase within \[0, 1\]",
                 id="references-above-1"),
    pytest.param("pipe_maxabs_float32", put_item(*step(0, "attributes", "scale_"), index=0, value=-1.0),
                 "scale_ must be positive", id="maxabs-scale-positive"),
    pytest.param("pipe_minmax_clip_quantile_label", put_item(*step(0, "attributes", "scale_"), index=0, value=-1.0),
                 "scale_ must be positive", id="minmax-scale-positive"),
    pytest.param("pipe_minmax_clip_quantile_label", put(*step(0, "params", "feature_range"), value=[2, -1]),
                 r"feature_range must be two finite numbers, the first smaller, got \[2, -1\]",
                 id="feature-range-reversed"),
    pytest.param("pipe_minmax_clip_quantile_label", put(*step(0, "params", "feature_range"), value=[-1]),
                 "feature_range must be two finite numbers", id="feature-range-one-number"),
    pytest.param("pipe_minmax_clip_quantile_label", put(*step(0, "params", "feature_range"), value=[False, 2]),
                 "feature_range must be two finite numbers", id="feature-range-bool"),
    pytest.param("pipe_minmax_clip_quantile_label", put(*step(0, "params", "feature_range"), value=[-1, 10**400]),
                 "feature_range must be two finite numbers", id="feature-range-past-float64"),
    # ---- pipelines (model_files._decode_pipeline)
    pytest.param("pipe_standard", _wider_scaler,
                 r"the steps were fitted on different numbers of features \(n_features_in_ \[4, 3\]\)",
                 id="pipeline-widths"),
    pytest.param("pipe_standard", _steps(lambda steps: steps[::-1]), "transformers ending in an ssvm estimator",
                 id="pipeline-estimator-first"),
    pytest.param("pipe_standard", _steps(lambda steps: steps[:1]), "transformers ending in an ssvm estimator",
                 id="pipeline-no-estimator"),
    pytest.param("pipe_standard", _steps(lambda steps: [*steps, ["again", steps[1][1]]]),
                 "transformers ending in an ssvm estimator", id="pipeline-estimator-in-the-middle"),
    pytest.param("pipe_standard", _steps(lambda steps: [["inner", {"class": "Pipeline", "params": {},
                                                                   "steps": copy.deepcopy(steps)}], steps[1]]),
                 "transformers ending in an ssvm estimator", id="pipeline-nested"),
    pytest.param("pipe_standard", _steps(lambda steps: []), r"steps must be a non-empty list of \[name, model\] pairs",
                 id="pipeline-no-steps"),
    pytest.param("pipe_standard", _steps(lambda steps: [steps[0][:1], steps[1]]),
                 r"steps must be a non-empty list of \[name, model\] pairs", id="pipeline-step-not-a-pair"),
    pytest.param("pipe_standard", _steps(lambda steps: [steps[0], [steps[0][0], steps[1][1]]]),
                 "step names must be distinct", id="pipeline-names-repeated"),
    pytest.param("pipe_standard", put("model", "steps", 0, 0, value=""), "step names must be distinct, non-empty",
                 id="pipeline-name-empty"),
    pytest.param("pipe_standard", put("model", "steps", 0, 0, value="a__b"), "free of '__'",
                 id="pipeline-name-dunder"),
    pytest.param("pipe_standard", put("model", "zz", value=1), "a Pipeline must have exactly the fields class, params",
                 id="pipeline-fields"),
    pytest.param("pipe_standard", put(*PARAMS, "zz", value=1),
                 "Pipeline params must be among memory, verbose, transform_input", id="pipeline-param-unknown"),
    pytest.param("pipe_standard", put(*PARAMS, "memory", value="cache"), "Pipeline params must be memory=None",
                 id="pipeline-memory"),
    pytest.param("pipe_standard", put(*PARAMS, "transform_input", value=["x"]), "Pipeline params must be memory=None",
                 id="pipeline-transform-input"),
    pytest.param("pipe_standard", put(*PARAMS, "verbose", value=1), "and a boolean verbose", id="pipeline-verbose"),
]


@pytest.mark.parametrize("case, edit, message", CHECKS)
def test_each_check_refuses_a_file_with_only_its_relation_broken(documents, tmp_path, case, edit, message):
    document = copy.deepcopy(documents[case])
    content = edit(document)
    path = tmp_path / "model.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(dumps(document) if content is None else content)
    with pytest.raises(ValueError, match=message) as refusal:
        load_model(path)
    assert str(refusal.value).startswith(f"{path}: not a valid ssvm model file: ") and "\n" not in str(refusal.value)


@pytest.mark.parametrize("case", CASES)
def test_the_unbroken_files_load(documents, tmp_path, case):
    path = tmp_path / "model.json"
    path.write_text(dumps(documents[case]))
    load_model(path)
