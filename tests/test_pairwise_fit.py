"""loss="pairwise" / "roc_auc" end to end: RankSVM reaches SVM^rank's objective, RankSVMCV, the functional
layer, the direct loss, the metrics and the command line (with svm_rank's -c)."""

import numpy as np
import pytest

from ssvm import RankSVM, RankSVMCV
from ssvm.losses import direct_loss_gradient, rank_hinge
from ssvm.metrics import ranking_score


def graded_data(seed=0, n_queries=12, size=15, n_features=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_queries * size, n_features))
    w = rng.normal(size=n_features)
    y = np.clip(np.round(X @ w + rng.normal(scale=1.0, size=X.shape[0])), 0, 3).astype(int)
    qid = np.repeat(np.arange(n_queries), size)
    y[qid == 3] = 1  # one query whose grades are all equal: no pair, skipped
    return X, y, qid


def svm_rank_objective(w, X, y, qid, C, normalise=False):
    """½‖w‖² + C/Q Σ_q Σ_{y_i > y_j} max(0, 1 − (s_i − s_j)) (/ pairs), over the Q queries with a pair."""
    s = X @ w
    total, n_q = 0.0, 0
    for q in np.unique(qid):
        sq, yq = s[qid == q], y[qid == q]
        more = yq[:, None] > yq[None, :]
        if not more.any():
            continue
        h = np.maximum(0.0, 1.0 - (sq[:, None] - sq[None, :]))[more].sum()
        total += h / more.sum() if normalise else h
        n_q += 1
    return 0.5 * w @ w + C * total / n_q


@pytest.mark.parametrize("loss", ["pairwise", "roc_auc"])
def test_fit_reaches_the_objective_and_beats_nearby_points(loss):
    X, y, qid = graded_data()
    model = RankSVM(loss=loss, C=0.5, tol=1e-6, max_iter=2000).fit(X, y, qid=qid)
    assert model.n_queries_ == 11 and model.n_skipped_queries_ == 1
    J = svm_rank_objective(model.coef_[0], X, y, qid, 0.5, normalise=loss == "roc_auc")
    assert model.objective_ == pytest.approx(J, rel=1e-9)
    rng = np.random.default_rng(1)
    for _ in range(20):  # a minimum (within the solver's tolerance)
        w = model.coef_[0] + rng.normal(scale=0.05, size=X.shape[1])
        assert svm_rank_objective(w, X, y, qid, 0.5, normalise=loss == "roc_auc") >= J - 1e-5
    score = model.score(X, y, qid=qid)
    assert score == pytest.approx(ranking_score(y, model.decision_function(X), qid=qid, loss="roc_auc"))
    assert 0.5 < score <= 1.0


def test_binary_targets_and_cv():
    X, y, qid = graded_data(seed=2)
    binary = RankSVM(loss="pairwise", C=0.5, tol=1e-6).fit(X, y > 1, qid=qid)
    J = svm_rank_objective(binary.coef_[0], X, (y > 1).astype(int), qid, 0.5)
    assert binary.objective_ == pytest.approx(J, rel=1e-9)
    cv = RankSVMCV(loss="pairwise", Cs=[0.1, 1.0], cv=3, tol=1e-4).fit(X, y, qid=qid)
    assert cv.C_ in (0.1, 1.0) and cv.scores_.shape == (3, 2)
    assert cv.best_estimator_.n_queries_ == 11


def test_functional_and_direct_loss():
    X, y, qid = graded_data(seed=3)
    s = X[:, 0]
    value, grad = rank_hinge(s, y, qid=qid, loss="pairwise")
    w0 = np.array([1.0, 0, 0, 0])
    expected = svm_rank_objective(w0, X, y, qid, 1.0) - 0.5
    assert value == pytest.approx(expected, rel=1e-12)
    eps = 1e-7  # the hinge is piecewise linear: its gradient is a directional derivative away from the kinks
    d = np.random.default_rng(0).normal(size=s.size)
    plus, _ = rank_hinge(s + eps * d, y, qid=qid, loss="pairwise")
    assert (plus - value) / eps == pytest.approx(grad @ d, rel=1e-4, abs=1e-6)
    task, g = direct_loss_gradient(s, y, qid=qid, loss="roc_auc", direction="perceptron")
    assert task == pytest.approx(1.0 - ranking_score(y, s, qid=qid, loss="roc_auc"))
    assert g.shape == s.shape
    with pytest.raises(ValueError, match="no 'negative' direction"):
        direct_loss_gradient(s, y, qid=qid, loss="pairwise", direction="negative")


def test_torch_layer():
    torch = pytest.importorskip("torch")
    from ssvm.nn import RankHingeLoss

    X, y, qid = graded_data(seed=4)
    s = torch.tensor(X[:, 0], requires_grad=True)
    loss = RankHingeLoss("pairwise")(s, torch.tensor(y), torch.tensor(qid))
    loss.backward()
    value, grad = rank_hinge(X[:, 0], y, qid=qid, loss="pairwise")
    assert loss.item() == pytest.approx(value)
    np.testing.assert_allclose(s.grad.numpy(), grad)


def test_cli_svm_rank_c(tmp_path, capsys):
    from ssvm.__main__ import main
    from ssvm.model_files import load_model

    X, y, qid = graded_data(seed=5)
    lines = [f"{y[i]} qid:{qid[i]} " + " ".join(f"{j + 1}:{X[i, j]:.17g}" for j in range(X.shape[1]))
             for i in range(X.shape[0])]
    (tmp_path / "train.dat").write_text("\n".join(lines) + "\n")
    args = ["train", "-c", "3", "--loss", "pairwise", "--c-convention", "svm_rank", "--tol", "1e-6",
            str(tmp_path / "train.dat"), str(tmp_path / "model.json")]
    assert main(args) == 0
    model = load_model(tmp_path / "model.json")
    assert model.C == pytest.approx(3 * 11 / 12)  # svm_rank: c / n over all 12 queries; ssvm: C / Q over 11
    assert main(["predict", str(tmp_path / "train.dat"), str(tmp_path / "model.json"), str(tmp_path / "p")]) == 0
    scores = np.loadtxt(tmp_path / "p")
    np.testing.assert_allclose(scores, model.decision_function(X), rtol=1e-12, atol=1e-12)
    assert ranking_score(y, scores, qid=qid, loss="pairwise") == model.score(X, y, qid=qid)
