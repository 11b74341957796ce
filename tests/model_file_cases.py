"""Small fitted models of every kind a model file holds, and how to compare two models' answers.

Used by the model-file fuzzer (``test_model_files_fuzz.py``) and the relation tests
(``test_model_files_relations.py``). Each case is fitted once per test module (seconds in all): the
tests vary the file, never the fit.
"""

import warnings

import numpy as np
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, QuantileTransformer, StandardScaler

from ssvm import LabelRankSVM, LatentRankSVM, RankSVM, RankSVMCV


def _features(seed, n=36, d=3, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)).astype(dtype), rng


def _eval_rows(X):
    """The training rows and rows outside their range (a scaler's clip and a quantile's tails show)."""
    return np.vstack([X, 3 * X[:6] + 1, -4 * X[6:12] - 2]).astype(X.dtype)


def _binary(seed, labels=(0, 1), dtype=np.float64):
    X, rng = _features(seed, dtype=dtype)
    y = np.asarray(labels)[(X[:, 0] + 0.7 * rng.normal(size=len(X)) > 0).astype(int)]
    return X, y


def _classes(seed, labels):
    X, rng = _features(seed)
    y = np.asarray(labels)[np.argmax(X + 0.5 * rng.normal(size=X.shape), axis=1)]
    return X, y


def _queries(seed):
    X, rng = _features(seed, n=40)
    y = np.clip(np.round(X[:, 0] + X[:, 1] + 0.5 * rng.normal(size=40)), 0, 2).astype(np.int32)
    return X, y, np.arange(40) % 5


def _multilabel(seed, n_labels=5):
    X, rng = _features(seed, n=40)
    Y = (X @ rng.normal(size=(X.shape[1], n_labels)) + 0.5 * rng.normal(size=(40, n_labels)) > 0).astype(int)
    return X, Y


def _bags(seed, labels=(0, 1)):
    rng = np.random.default_rng(seed)
    bags = [rng.normal(size=(int(rng.integers(2, 5)), 3)) for _ in range(14)]
    y = np.asarray(labels)[np.arange(14) % 2]
    for bag, positive in zip(bags, np.arange(14) % 2):
        bag[0, 0] += 2.0 * positive
    return bags, y


def _rank_binary():
    X, y = _binary(0)
    return RankSVM(loss="ap", C=2.0, max_iter=15).fit(X, y), _eval_rows(X)


def _rank_zero_one_bool():
    X, y = _binary(1, labels=(False, True))
    return RankSVM(loss="zero_one", max_iter=15).fit(X, y), _eval_rows(X)


def _rank_ovr_strings_with_names():
    X, y = _classes(2, ["cat", "dog", "eel"])
    model = RankSVM(max_iter=10, solver_params={"ocas": False}).fit(X, y)
    model.feature_names_in_ = np.array(["width", "height", "depth"], dtype=object)  # as fitted on a DataFrame
    return model, _eval_rows(X)


def _rank_ovr_floats():
    X, y = _classes(3, [-1.0, 0.0, 2.0])
    return RankSVM(loss="ndcg", max_iter=10, random_state=3).fit(X, y), _eval_rows(X)


def _rank_graded_ndcg():
    X, y, qid = _queries(4)
    return RankSVM(loss="ndcg", gain="linear", max_iter=15).fit(X, y, qid=qid), _eval_rows(X)


def _rank_precision_at_k():
    X, y, qid = _queries(5)
    return RankSVM(loss="precision_at_k", k=3, max_iter=15, tol=1e-4).fit(X, y > 0, qid=qid), _eval_rows(X)


def _rank_svm_cv():
    X, y, qid = _queries(6)
    return RankSVMCV(Cs=[0.1, 1.0], cv=2, max_iter=10).fit(X, y, qid=qid), _eval_rows(X)


def _latent_ap():
    bags, y = _bags(7)
    return LatentRankSVM(max_cccp_iter=2, max_iter=10, checkpoint=None).fit(bags, y), bags


def _latent_zero_one_strings():
    bags, y = _bags(8, labels=("negative", "positive"))
    return LatentRankSVM(loss="zero_one", max_cccp_iter=2, max_iter=10, chunk_rows=7).fit(bags, y), bags


def _label_relevant_independent():
    X, Y = _multilabel(9)
    return LabelRankSVM(k="relevant", n_core=0, max_iter=10).fit(X, Y), _eval_rows(X)


def _label_top2_core2():
    X, Y = _multilabel(10)
    return LabelRankSVM(k=2, n_core=2, max_iter=10, max_cccp_iter=2).fit(X, Y), _eval_rows(X)


def _pipe(seed, *steps, labels=None, dtype=np.float64, **pipeline_params):
    X, y = _binary(seed, dtype=dtype) if labels is None else _multilabel(seed)
    model = make_pipeline(*steps, **pipeline_params) if pipeline_params else make_pipeline(*steps)
    return model.fit(X, y), _eval_rows(X)


CASES = {
    "rank_binary": _rank_binary,
    "rank_zero_one_bool": _rank_zero_one_bool,
    "rank_ovr_strings_with_names": _rank_ovr_strings_with_names,
    "rank_ovr_floats": _rank_ovr_floats,
    "rank_graded_ndcg": _rank_graded_ndcg,
    "rank_precision_at_k": _rank_precision_at_k,
    "rank_svm_cv": _rank_svm_cv,
    "latent_ap": _latent_ap,
    "latent_zero_one_strings": _latent_zero_one_strings,
    "label_relevant_independent": _label_relevant_independent,
    "label_top2_core2": _label_top2_core2,
    "pipe_standard": lambda: _pipe(11, StandardScaler(), RankSVM(max_iter=10)),
    "pipe_standard_no_mean": lambda: _pipe(12, StandardScaler(with_mean=False), RankSVM(max_iter=10)),
    "pipe_standard_no_std": lambda: _pipe(13, StandardScaler(with_std=False), RankSVM(max_iter=10)),
    "pipe_standard_off": lambda: _pipe(14, StandardScaler(with_mean=False, with_std=False), RankSVM(max_iter=10)),
    "pipe_quantile_normal": lambda: _pipe(15, QuantileTransformer(n_quantiles=12, output_distribution="normal"),
                                          RankSVM(max_iter=10)),
    "pipe_maxabs_float32": lambda: _pipe(16, MaxAbsScaler(), RankSVM(loss="zero_one", max_iter=10),
                                         dtype=np.float32),
    "pipe_minmax_clip_quantile_label": lambda: _pipe(
        17, MinMaxScaler(feature_range=(-1, 2), clip=True), QuantileTransformer(n_quantiles=9),
        LabelRankSVM(n_core=1, max_iter=10), labels="multi", verbose=False),
}


def fit_case(name):
    """``(model, inputs)``: the fitted model of case ``name`` and what it predicts on."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence and degenerate-query notes of tiny fits
        return CASES[name]()


def answers(model, inputs):
    """``(decision_function, predict)`` of ``model`` on ``inputs`` (no feature-name warnings)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        return model.decision_function(inputs), model.predict(inputs)


def assert_same_answers(got, expected):
    """Scores equal bit for bit (dtype, shape, bytes); predictions equal in value, shape and dtype kind.

    A label array's integer width is not compared: int32 labels are a model's own when it was fitted on
    int32 labels, so a file cannot tell them from int64 ones, and both predict the same labels.
    """
    (scores, labels), (expected_scores, expected_labels) = got, expected
    assert scores.dtype == expected_scores.dtype and scores.shape == expected_scores.shape
    assert scores.tobytes() == expected_scores.tobytes(), "decision_function differs"
    assert labels.shape == expected_labels.shape and labels.dtype.kind == expected_labels.dtype.kind
    assert labels.tolist() == expected_labels.tolist(), "predict differs"
