"""Break-even precision, interactive labelling and the threshold against enumeration twins."""

import numpy as np
import pytest
from label_ranking_twins import brute_inference

from ssvm.label_ranking import break_even_precision, choose_threshold, interactive_bep


def _random_model(rng, n, L, C):
    S = rng.standard_normal((n, L))
    core = rng.permutation(L)[:C]
    P = np.zeros((L, L))
    for c in core:
        for j in range(L):
            if j != c and P[c, j] == 0:
                P[c, j] = P[j, c] = rng.standard_normal()
    Y = rng.random((n, L)) < 0.4
    Y[np.arange(n), rng.integers(0, L, n)] = True
    return S, core, P, Y


def interactive_twin(S, P, Y, questions):
    """The paper's protocol with every score found by enumeration."""
    out = {q: [] for q in questions}
    for s, y in zip(S, Y):
        k = int(y.sum())
        fixed = np.zeros(len(y), dtype=np.int8)
        for asked in range(max(questions) + 1):
            if asked in questions:
                _, t, _, _ = brute_inference(s, P, k, fixed)
                out[asked].append(np.sum(t & y) / k)
            if asked == max(questions) or not np.any(fixed == 0):
                continue
            _, _, vin, vout = brute_inference(s, P, k, fixed)
            gap = [abs(vin[j] - vout[j]) if fixed[j] == 0 else np.inf for j in range(len(y))]
            gap = [min(g, np.finfo(float).max) if fixed[j] == 0 else g for j, g in enumerate(gap)]
            j = int(np.argmin(gap))
            fixed[j] = 1 if y[j] else -1
    return np.array([np.mean(out[q]) for q in questions])


@pytest.mark.parametrize("C", [0, 1, 3])
def test_interactive_matches_twin(C):
    rng = np.random.default_rng(C)
    S, core, P, Y = _random_model(rng, 40, 6, C)
    questions = (0, 1, 2, 5, 8)
    got = interactive_bep(S, core, P[core], Y, questions)
    assert np.allclose(got, interactive_twin(S, P, Y, questions))
    assert got[-1] == 1.0  # past L questions every label is known


def test_bep_matches_enumeration():
    rng = np.random.default_rng(4)
    S, core, P, Y = _random_model(rng, 60, 7, 2)
    bep = break_even_precision(S, core, P[core], Y)
    twin = [np.sum(brute_inference(s, P, int(y.sum()))[1] & y) / y.sum() for s, y in zip(S, Y)]
    assert np.allclose(bep, twin)


def test_threshold_is_the_best_candidate():
    rng = np.random.default_rng(5)
    S, core, P, Y = _random_model(rng, 15, 5, 1)  # 75 scores: every midpoint is a candidate
    tau, f1 = choose_threshold(S, core, P[core], Y)

    def f1_at(t):
        scores = []
        for s, y in zip(S, Y):
            _, pred, _, _ = brute_inference(s - t, P, -1)
            denom = pred.sum() + y.sum()
            scores.append(1.0 if denom == 0 else 2 * np.sum(pred & y) / denom)
        return np.mean(scores)

    assert f1 == pytest.approx(f1_at(tau))
    values = np.unique(S)
    for t in np.concatenate([(values[:-1] + values[1:]) / 2, [values[0] - 1, values[-1] + 1]]):
        assert f1_at(t) <= f1 + 1e-12


def test_interactive_rejects_negative_questions():
    with pytest.raises(ValueError, match="non-negative"):
        interactive_bep(np.zeros((1, 3)), np.zeros(0, int), np.zeros((0, 3)),
                        np.array([[1, 0, 0]], bool), (0, -1))
