"""Model files (ssvm.save_model / ssvm.load_model): round trips, and a one-line refusal of everything else."""

import json
import pickle
import re

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, QuantileTransformer, StandardScaler

import ssvm
from ssvm import LabelRankSVM, LatentRankSVM, RankSVM, load_model, save_model


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True)
    return X[::3] / X.max(axis=0), y[::3]


@pytest.fixture(scope="module")
def ranker(data):
    X, y = data
    qid = np.arange(X.shape[0]) % 7
    return RankSVM(loss="ndcg", C=3.0, max_iter=30).fit(X, y, qid=qid)


def _round_trip(model, tmp_path, **kwargs):
    path = tmp_path / "model.json"
    save_model(model, path, **kwargs)
    return load_model(path), path


@pytest.mark.parametrize("transform", [None, StandardScaler(), StandardScaler(with_mean=False, with_std=False),
                                       QuantileTransformer(n_quantiles=30, output_distribution="normal"),
                                       MinMaxScaler(feature_range=(-1, 2)), MaxAbsScaler()])
def test_rank_svm_and_pipelines_predict_exactly_as_saved(data, tmp_path, transform):
    X, y = data
    model = RankSVM(C=2.0, max_iter=20) if transform is None else make_pipeline(transform, RankSVM(max_iter=20))
    model.fit(X, y)
    loaded, _ = _round_trip(model, tmp_path)
    assert type(loaded) is type(model)
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.get_params(deep=True).keys() == model.get_params(deep=True).keys()


def test_ranking_model_keeps_its_queries_flag_classes_and_parameters(ranker, data, tmp_path):
    X, y = data
    loaded, path = _round_trip(ranker, tmp_path, metadata={"note": "x", "zero_based": False})
    assert loaded.get_params() == ranker.get_params()
    np.testing.assert_array_equal(loaded.classes_, ranker.classes_)
    assert loaded._fitted_on_queries and loaded.n_queries_ == ranker.n_queries_
    assert loaded.score(X, y, qid=np.arange(X.shape[0]) % 7) == ranker.score(X, y, qid=np.arange(X.shape[0]) % 7)
    assert load_model(path, with_metadata=True)[1] == {"note": "x", "zero_based": False}
    document = json.loads(path.read_text())
    assert document["format"] == "ssvm-model" and document["version"] == 1


def test_one_vs_rest_with_string_classes(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.array(["cat", "dog", "eel"])[rng.integers(0, 3, 60)]
    model = RankSVM(max_iter=10).fit(X, y)
    loaded, _ = _round_trip(model, tmp_path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))


@pytest.mark.parametrize("k", ["relevant", 2])
def test_label_rank_svm_round_trip(tmp_path, k):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4))
    Y = (X @ rng.normal(size=(4, 5)) + rng.normal(size=(50, 5)) > 0).astype(int)
    model = LabelRankSVM(n_core=2, k=k, max_iter=15).fit(X, Y)
    loaded, _ = _round_trip(model, tmp_path)
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_a_scalar_weight_must_be_finite(tmp_path):
    rng = np.random.default_rng(3)
    bags = [rng.normal(size=(3, 2)) for _ in range(6)]
    model = LatentRankSVM(max_cccp_iter=1, max_iter=10).fit(bags, np.arange(6) % 2)
    path = tmp_path / "latent.json"
    save_model(model, path)
    text = re.sub(r'"intercept_":[^,]*,', '"intercept_":1e999,', path.read_text())
    path.write_text(text)
    with pytest.raises(ValueError, match=r"intercept_ must be a finite float, got inf"):
        load_model(path)


def test_latent_rank_svm_round_trip(tmp_path):
    rng = np.random.default_rng(2)
    bags = [rng.normal(size=(rng.integers(2, 5), 3)) for _ in range(12)]
    y = np.array([0, 1] * 6)
    for bag, label in zip(bags, y):
        bag[0, 0] += 3 * label
    model = LatentRankSVM(C=1.0, max_cccp_iter=2, max_iter=20, checkpoint=tmp_path / "cccp.npz").fit(bags, y)
    loaded, _ = _round_trip(model, tmp_path)
    np.testing.assert_array_equal(loaded.decision_function(bags), model.decision_function(bags))
    np.testing.assert_array_equal(loaded.predict(bags), model.predict(bags))
    assert loaded.checkpoint == str(tmp_path / "cccp.npz")


def test_rank_svm_cv_is_saved_as_its_refitted_rank_svm(data, tmp_path):
    from ssvm import RankSVMCV

    X, y = data
    qid = np.arange(X.shape[0]) % 6
    search = RankSVMCV(Cs=[0.1, 1.0], cv=2, max_iter=20).fit(X, y, qid=qid)
    loaded, _ = _round_trip(search, tmp_path)
    assert type(loaded) is RankSVM and loaded.C == search.C_
    np.testing.assert_array_equal(loaded.decision_function(X), search.decision_function(X))
    with pytest.raises(ValueError, match="refit=True first"):
        save_model(RankSVMCV(Cs=[1.0], cv=2, refit=False, max_iter=5).fit(X, y, qid=qid), tmp_path / "m.json")


def test_saving_refuses_what_is_not_data(data, tmp_path):
    X, y = data
    with pytest.raises(ValueError, match="needs a fitted RankSVM"):
        save_model(RankSVM(), tmp_path / "m.json")
    with pytest.raises(ValueError, match=r"saves RankSVM.*got sklearn.svm._classes.LinearSVC"):
        from sklearn.svm import LinearSVC
        save_model(LinearSVC().fit(X, y), tmp_path / "m.json")
    model = RankSVM(random_state=np.random.RandomState(0), max_iter=5).fit(X, y)
    with pytest.raises(ValueError, match="parameter random_state of RankSVM is a RandomState"):
        save_model(model, tmp_path / "m.json")
    with pytest.raises(ValueError, match="metadata must map strings"):
        save_model(RankSVM(max_iter=5).fit(X, y), tmp_path / "m.json", metadata={"x": object()})


class _Payload:
    """Unpickling this creates a file: the proof that a loader ran the payload."""

    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (open, (str(self.target), "w"))


def test_a_pickle_payload_is_refused_and_never_runs(ranker, tmp_path):
    target = tmp_path / "payload_ran"
    for name, blob in [("model.pkl", pickle.dumps(_Payload(target))),
                       ("model.json", pickle.dumps({"model": _Payload(target)}, protocol=0))]:
        path = tmp_path / name
        path.write_bytes(blob)
        with pytest.raises(ValueError, match=rf"{name}: not a valid ssvm model file: ") as info:
            load_model(path)
        assert "\n" not in str(info.value)
        assert not target.exists()
    pickle.loads(pickle.dumps(_Payload(target))).close()  # sanity: unpickling it does create the file
    assert target.exists()


def _corrupt(ranker, tmp_path, edit):
    path = tmp_path / "model.json"
    save_model(ranker, path)
    document = json.loads(path.read_text())
    edit(document)
    path.write_text(json.dumps(document))
    return path


def _set(*keys, value):
    def edit(document):
        node = document
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value
    return edit


@pytest.mark.parametrize("edit, message", [
    (_set("format", value="other"), "'format' is 'other'"),
    (_set("version", value=2), "format version 2 is newer than this ssvm reads"),
    (_set("version", value="1"), "'version' is '1', not a positive integer"),
    (_set("extra", value=1), r"unknown top-level fields \['extra'\]"),
    (_set("model", "class", value="os.system"), "class 'os.system' is not one of"),
    (_set("model", "params", "C", value=-1), "The 'C' parameter of RankSVM must be"),
    (_set("model", "params", "loss", value="hinge"), "The 'loss' parameter of RankSVM must be"),
    (_set("model", "params", "evil", value=1), r"has no parameter\(s\) \['evil'\]"),
    (_set("model", "attributes", "coef_", "shape", value=[1, 5]), r"data does not hold 5 values"),
    (_set("model", "attributes", "n_features_in_", value=31), "30 features where the other fields have 31"),
    (_set("model", "attributes", "coef_", "dtype", value="object"), "dtype 'object' is not one of"),
    (_set("model", "attributes", "coef_", "data", value=["1"] * 30), "values are not all of dtype float64"),
    (_set("model", "attributes", "coef_", value=[1.0, 2.0]), r"coef_ must be an array \{dtype, shape, data\}"),
    (_set("model", "attributes", "intercept_", "data", value=[float("inf")]), "holds Infinity"),
    (_set("model", "attributes", "classes_", "data", value=[0, 0]), "classes_ holds repeated values"),
    (_set("model", "attributes", "classes_", "shape", value=[3]), "data does not hold 3 values"),
    (_set("model", "attributes", "n_iter_", value=True), "n_iter_ must be a non-negative int"),
    (_set("model", "attributes", "_fitted_on_queries", value=1), "_fitted_on_queries must be a bool"),
    (lambda d: d["model"]["attributes"].pop("coef_"), r"attributes missing \['coef_'\]"),
    (_set("model", "attributes", "__class__", value=None), r"unexpected \['__class__'\]"),
])
def test_every_field_is_checked(ranker, tmp_path, edit, message):
    path = _corrupt(ranker, tmp_path, edit)
    with pytest.raises(ValueError, match=message) as info:
        load_model(path)
    assert str(info.value).startswith(f"{path}: not a valid ssvm model file: ") and "\n" not in str(info.value)


@pytest.mark.parametrize("text, message", [
    ('{"format": "ssvm-model", "coef": NaN}', "holds NaN; model values must be finite"),
    ("\x00\x01garbage", "not JSON"),
    ("[1, 2]", "not a JSON object"),
])
def test_nan_tokens_and_garbage_are_refused(tmp_path, text, message):
    path = tmp_path / "m.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_model(path)


@pytest.mark.parametrize("token, message", [("NaN", "holds NaN; model values must be finite"),
                                            ("-Infinity", "holds -Infinity"),
                                            ("1e999", r"coef_ holds NaN or infinite values")])
def test_nan_and_infinite_weights_are_refused(ranker, tmp_path, token, message):
    path = tmp_path / "model.json"
    save_model(ranker, path)
    text, n = re.subn(r'("coef_":\{"dtype":"float64","shape":\[1,\d+\],"data":\[)[^,]*', rf"\g<1>{token}",
                      path.read_text())
    assert n == 1
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_model(path)


def test_pipeline_and_label_ranking_relations_are_checked(data, tmp_path):
    X, y = data
    model = make_pipeline(QuantileTransformer(n_quantiles=20), RankSVM(max_iter=5)).fit(X, y)
    path = tmp_path / "p.json"
    save_model(model, path)
    document = json.loads(path.read_text())
    quantiles = document["model"]["steps"][0][1]["attributes"]["quantiles_"]
    first, quantiles["data"][0] = quantiles["data"][0], 10.0  # no longer non-decreasing down column 0
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match="quantiles_ must be non-decreasing"):
        load_model(path)
    quantiles["data"][0] = first
    document["model"]["steps"].reverse()
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match="transformers ending in an ssvm estimator"):
        load_model(path)


def test_public_names_and_missing_file(tmp_path):
    assert ssvm.save_model is save_model and ssvm.load_model is load_model
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "none.json")


def _refused(model, tmp_path, edit, message):
    """Save ``model``, apply ``edit`` to its JSON document, and expect a one-line refusal."""
    path = _corrupt(model, tmp_path, edit)
    with pytest.raises(ValueError, match=message) as info:
        load_model(path)
    assert str(info.value).startswith(f"{path}: not a valid ssvm model file: ") and "\n" not in str(info.value)


def _array(dtype, data, shape=None):
    return {"dtype": dtype, "shape": [len(data)] if shape is None else shape, "data": data}


@pytest.mark.parametrize("n_classes, saved", [(2, [0, 1, 2]), (3, [0, 1, 2, 3]), (3, [0, 1])])
def test_the_number_of_classes_must_match_the_rows_of_coef(tmp_path, n_classes, saved):
    # a binary model has one row for its two classes, one-vs-rest one per class; more labels than
    # rows would let predict draw labels the model never scores, fewer would drop some
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    model = RankSVM(max_iter=10).fit(X, np.arange(60) % n_classes)
    _refused(model, tmp_path, _set("model", "attributes", "classes_", value=_array("int64", saved)),
             rf"classes_ has {len(saved)} entries but coef_ has {1 if n_classes == 2 else 3} row\(s\)")


@pytest.mark.parametrize("index", [5, 7, -1])
def test_label_rank_svm_core_labels_must_exist(tmp_path, index):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4))
    Y = (X @ rng.normal(size=(4, 5)) + rng.normal(size=(50, 5)) > 0).astype(int)
    model = LabelRankSVM(n_core=2, max_iter=15).fit(X, Y)
    core = [int(model.core_[0]), index]  # a valid label, then one outside 0..4
    _refused(model, tmp_path, _set("model", "attributes", "core_", value=_array("int64", core)),
             r"core_ holds a label index outside 0\.\.4")


@pytest.mark.parametrize("dtype, values", [("str", ["1"] * 29 + ["x"]), ("bool", [True, False] * 15),
                                           ("int64", [1] * 30)])
def test_an_array_of_another_kind_is_refused(ranker, tmp_path, dtype, values):
    # coef_ holds floats: strings, booleans or integers written in its place are not a model
    _refused(ranker, tmp_path, _set("model", "attributes", "coef_", value=_array(dtype, values, [1, 30])),
             rf"coef_: dtype {dtype} is not a float array")


def test_a_pipelines_steps_must_share_their_number_of_features(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    model = make_pipeline(StandardScaler(), RankSVM(max_iter=10)).fit(X, np.arange(40) % 2)

    def widen_the_scaler(document):
        attributes = document["model"]["steps"][0][1]["attributes"]
        attributes["n_features_in_"] = 4
        for name in ("mean_", "var_", "scale_"):
            attributes[name] = _array("float64", [*attributes[name]["data"], 1.0])

    _refused(model, tmp_path, widen_the_scaler, r"the steps were fitted on different numbers of features")


def test_quantile_references_must_strictly_increase(data, tmp_path):
    X, y = data
    model = make_pipeline(QuantileTransformer(n_quantiles=20), RankSVM(max_iter=5)).fit(X, y)

    def repeat_a_reference(document):
        references = document["model"]["steps"][0][1]["attributes"]["references_"]["data"]
        references[5] = references[4]

    _refused(model, tmp_path, repeat_a_reference, r"references_ must increase within \[0, 1\]")


def _label_ranker():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4))
    Y = (X @ rng.normal(size=(4, 5)) + rng.normal(size=(50, 5)) > 0).astype(int)
    return LabelRankSVM(n_core=2, max_iter=15).fit(X, Y), X


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_label_rank_svm_core_may_hold_the_first_and_last_labels_once(tmp_path):
    model, X = _label_ranker()

    def edges(document):  # core_ = [0, 4], pairwise_ zero on the pairs that touch neither
        attributes = document["model"]["attributes"]
        attributes["core_"] = _array("int64", [0, 4])
        pairwise = np.asarray(attributes["pairwise_"]["data"], dtype=float).reshape(5, 5)
        touches = np.isin(np.arange(5), [0, 4])
        pairwise[~(touches[:, None] | touches[None, :])] = 0.0
        attributes["pairwise_"]["data"] = np.asarray(pairwise).reshape(-1).tolist() \
            if np.ndim(attributes["pairwise_"]["data"]) == 1 else pairwise.tolist()

    path = _corrupt(model, tmp_path, edges)
    loaded = load_model(path)  # the edges of 0..4 are labels
    np.testing.assert_array_equal(loaded.core_, [0, 4])
    assert loaded.decision_function(X).shape == (50, 5)
    _refused(model, tmp_path, _set("model", "attributes", "core_", value=_array("int64", [3, 3])),
             "core_ holds repeated values")


def test_a_rank_svm_without_rows_is_refused(ranker, tmp_path):
    def empty(document):
        attributes = document["model"]["attributes"]
        attributes["coef_"] = _array("float64", [], [0, 30])
        attributes["intercept_"] = _array("float64", [])
        attributes["classes_"] = _array("int64", [])

    _refused(ranker, tmp_path, empty, "coef_ has no rows")


def _pipeline_step(transform, data):
    X, y = data
    return make_pipeline(transform, RankSVM(max_iter=5)).fit(X, y)


def _edit_step(name, edit):
    def apply(document):
        edit(document["model"]["steps"][0][1]["attributes"][name]["data"])
    return apply


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("with_mean, with_std", [(True, False), (False, True), (True, True), (False, False)])
def test_standard_scaler_statistics_follow_its_flags(data, tmp_path, with_mean, with_std):
    model = _pipeline_step(StandardScaler(with_mean=with_mean, with_std=with_std), data)
    loaded, _ = _round_trip(model, tmp_path)
    np.testing.assert_array_equal(loaded.decision_function(data[0]), model.decision_function(data[0]))
    for name, saved in (("mean_", with_mean or with_std), ("scale_", with_std), ("var_", with_std)):
        # the other way round: a statistic dropped, or one the flags do not keep
        value = None if saved else _array("float64", [1.0] * 30)
        _refused(model, tmp_path, lambda d, name=name, value=value: d["model"]["steps"][0][1]["attributes"].update(
            {name: value}), rf"{name} must be {'saved' if saved else 'null'} with with_mean={with_mean}")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("transform", [StandardScaler(), MaxAbsScaler()])
@pytest.mark.parametrize("value", [0.0, -0.5, -3.0])
def test_a_scale_that_is_not_positive_is_refused(data, tmp_path, transform, value):
    model = _pipeline_step(transform, data)
    _refused(model, tmp_path, _edit_step("scale_", lambda values: values.__setitem__(3, value)),
             "scale_ must be positive")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_quantiles_must_not_decrease_even_slightly(data, tmp_path):
    model = _pipeline_step(QuantileTransformer(n_quantiles=20), data)

    def swap(values):  # column 0 holds rows 0..19 at positions 0, 30, 60, ...: swap rows 10 and 11
        values[300], values[330] = values[330], values[300]

    assert 0 < model[0].quantiles_[11, 0] - model[0].quantiles_[10, 0] < 0.5
    _refused(model, tmp_path, _edit_step("quantiles_", swap), "quantiles_ must be non-decreasing down each column")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("where, value", [(0, -0.5), (0, -1e-9), (-1, 1.5), (-1, 1 + 1e-9)])
def test_quantile_references_must_lie_in_the_unit_interval(data, tmp_path, where, value):
    model = _pipeline_step(QuantileTransformer(n_quantiles=20), data)
    _refused(model, tmp_path, _edit_step("references_", lambda values: values.__setitem__(where, value)),
             r"references_ must increase within \[0, 1\]")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("names", [["same", "same"], ["", "ranksvm"], ["scale__x", "ranksvm"]])
def test_pipeline_step_names_must_be_distinct_non_empty_and_free_of_double_underscores(data, tmp_path, names):
    model = _pipeline_step(StandardScaler(), data)

    def rename(document):
        for step, name in zip(document["model"]["steps"], names):
            step[0] = name

    _refused(model, tmp_path, rename, "step names must be distinct, non-empty and free of '__'")


def test_an_array_with_an_extra_key_is_refused(ranker, tmp_path):
    def extra(document):
        document["model"]["attributes"]["coef_"]["note"] = "x"

    _refused(ranker, tmp_path, extra, r"coef_ must be an array \{dtype, shape, data\}")


def test_boolean_and_integer_scalars_keep_their_types(ranker, tmp_path):
    rng = np.random.default_rng(3)
    latent = LatentRankSVM(max_cccp_iter=1, max_iter=10).fit([rng.normal(size=(3, 2)) for _ in range(6)],
                                                             np.arange(6) % 2)
    for model, flag in ((ranker, "_fitted_on_queries"), (latent, "converged_")):
        loaded, _ = _round_trip(model, tmp_path)
        assert type(getattr(loaded, flag)) is bool and getattr(loaded, flag) == getattr(model, flag)
        assert type(loaded.n_iter_) is int and loaded.n_iter_ == model.n_iter_


def test_a_subclass_from_elsewhere_is_not_saved(data, tmp_path):
    X, y = data

    class RankSVM(ssvm.RankSVM):  # same name, another module: not one of ssvm's classes
        pass

    with pytest.raises(ValueError, match=r"save_model saves RankSVM, .*got test_persistence\.RankSVM"):
        save_model(RankSVM(max_iter=5).fit(X, y), tmp_path / "m.json")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_label_rank_svm_without_core_labels_round_trips(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 4))
    Y = (X @ rng.normal(size=(4, 4)) + rng.normal(size=(40, 4)) > 0).astype(int)
    model = LabelRankSVM(n_core=0, max_iter=10).fit(X, Y)
    assert model.core_.size == 0
    loaded, _ = _round_trip(model, tmp_path)
    assert loaded.core_.dtype.kind in "iu" and loaded.core_.size == 0
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@pytest.mark.parametrize("blob", [b"PK\x03\x04 a zip, as np.savez writes", b"\x93NUMPY\x01\x00 an .npy file",
                                  b"\x80\x04\x95 a pickle"])
def test_zip_npy_and_pickle_files_are_named_as_such(tmp_path, blob):
    (tmp_path / "m.json").write_bytes(blob)
    with pytest.raises(ValueError, match="it looks like a pickle or numpy file; ssvm model files are JSON"):
        load_model(tmp_path / "m.json")


def test_a_byte_order_mark_is_not_taken_for_a_pickle(ranker, tmp_path):
    path = tmp_path / "m.json"
    save_model(ranker, path)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    with pytest.raises(ValueError, match=r"not a valid ssvm model file: not JSON \(Unexpected UTF-8 BOM"):
        load_model(path)


@pytest.mark.parametrize("key", ["ssvm_version", "sklearn_version"])
@pytest.mark.parametrize("value", [None, 1.2])
def test_the_writers_versions_must_be_strings(ranker, tmp_path, key, value):
    edit = (lambda d: d.pop(key)) if value is None else _set(key, value=value)
    _refused(ranker, tmp_path, edit, f"'{key}' is missing or not a string")


@pytest.mark.parametrize("field", ["params", "attributes"])
def test_a_model_without_params_or_attributes_is_refused(ranker, tmp_path, field):
    _refused(ranker, tmp_path, lambda d: d["model"].pop(field),
             "model must have exactly the fields class, params, attributes")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_pipeline_of_two_estimators_is_refused(data, tmp_path):
    model = _pipeline_step(StandardScaler(), data)

    def two_estimators(document):
        document["model"]["steps"][0][1] = document["model"]["steps"][1][1]

    _refused(model, tmp_path, two_estimators, "a Pipeline must be transformers ending in an ssvm estimator")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("value", [5, "ab"])
def test_a_tuple_parameter_that_is_not_a_list_is_refused(data, tmp_path, value):
    model = _pipeline_step(MinMaxScaler(), data)
    _refused(model, tmp_path, lambda d: d["model"]["steps"][0][1]["params"].update(feature_range=value),
             "The 'feature_range' parameter of MinMaxScaler must be")


@pytest.mark.parametrize("dtype, big", [("int64", 2**70), ("int32", 2**40)])
def test_integers_too_large_for_their_dtype_are_refused(ranker, tmp_path, dtype, big):
    _refused(ranker, tmp_path, _set("model", "attributes", "classes_", value=_array(dtype, [0, big])),
             f"classes_: values do not fit dtype {dtype}")


def test_metadata_is_passed_by_name_only(ranker, tmp_path):
    """``save_model(model, path, *, metadata=None)``: a dict in third place is a mistake, refused."""
    with pytest.raises(TypeError):
        save_model(ranker, tmp_path / "m.json", {"note": "x"})
    assert not (tmp_path / "m.json").exists()
