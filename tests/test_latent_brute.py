"""The latent objective and CCCP against a brute-force twin on tiny bags (issue 38).

The twin enumerates every ranking (every permutation of the images' scores, so AP and the joint
feature come from their definitions) and every imputation (every choice of one window per positive
image), and solves each imputation's convex problem as an explicit quadratic programme over those
rankings (scipy's SLSQP on ½‖w‖² + C·ξ, ξ ≥ Δ(R) + w·(Ψ(R) − Ψ(R*)) for every R) — sharing no
code with the oracles, the pooling or the solvers. It checks that CCCP reports the objective the
definition gives, stops at a minimum of its own imputation's problem, never below the global
minimum, and stays at the global minimum when started there: the collapse of issue 38 is a
property of the objective and the start, not a bug of CCCP or of the oracle.
"""

from itertools import permutations, product

import numpy as np
import pytest
from scipy.optimize import minimize

from ssvm import LatentRankSVM


def average_precision(labels_in_order):
    hits, total = 0, 0.0
    for position, label in enumerate(labels_in_order, start=1):
        if label:
            hits += 1
            total += hits / position
    return total / hits


def ranking_rows(n_pos, n_neg):
    """(Δ, A) over every ranking of n_pos positives (items 0..P-1) and n_neg negatives: the AP
    hinge of scores s = (positives, negatives) is max_R Δ_R + A_R · s."""
    rows = {}
    n = n_pos + n_neg
    for order in permutations(range(n)):
        place = np.empty(n, dtype=int)
        place[list(order)] = np.arange(n)
        r = np.where(place[:n_pos, None] < place[None, n_pos:], 1.0, -1.0)  # R_pn = +1: p above n
        a = np.concatenate((r.sum(1) - n_neg, n_pos - r.sum(0))) / (n_pos * n_neg)  # Ψ(R) − Ψ(R*)
        rows[a.tobytes()] = (1.0 - average_precision([i < n_pos for i in order]), a)
    return np.array([d for d, _ in rows.values()]), np.array([a for _, a in rows.values()])


def image_scores(w, bags, y, negatives):
    scores = [b @ w for b in bags]
    pos = np.array([s.max() for s, label in zip(scores, y) if label])
    neg = np.array([v for s, label in zip(scores, y) if not label
                    for v in (s if negatives == "all" else [s.max()])])
    return pos, neg


def brute_objective(w, bags, y, C, negatives):
    """J(w) = ½‖w‖² + C·H, H the AP hinge of the images' scores by enumeration."""
    pos, neg = image_scores(w, bags, y, negatives)
    deltas, A = ranking_rows(pos.size, neg.size)
    return 0.5 * w @ w + C * float(np.max(deltas + A @ np.concatenate((pos, neg))))


def convex_minimum(X_pos, negative_bags, C, negatives):
    """min over w of ½‖w‖² + C·H with the positives fixed to the rows X_pos, as a QP in (w, ξ): one
    constraint per ranking, and per choice of each negative image's window with "best"."""
    d = X_pos.shape[1]
    choices = [np.vstack(negative_bags)] if negatives == "all" else \
        [np.vstack(pick) for pick in product(*[list(b) for b in negative_bags])]
    deltas, A = ranking_rows(len(X_pos), len(choices[0]))
    G = np.vstack([A @ np.vstack((X_pos, X_neg)) for X_neg in choices])
    h = np.tile(deltas, len(choices))
    constraint = {"type": "ineq", "fun": lambda z: z[d] - h - G @ z[:d],
                  "jac": lambda z: np.hstack((-G, np.ones((h.size, 1))))}
    start = np.r_[np.zeros(d), h.max()]
    result = minimize(lambda z: 0.5 * z[:d] @ z[:d] + C * z[d], start, jac=lambda z: np.r_[z[:d], C],
                      constraints=[constraint], method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000})
    assert result.success, result.message
    return float(result.fun), result.x[:d]


def global_minimum(bags, y, C, negatives):
    """(min_w J(w), its minimiser, its imputation): the best convex minimum over every imputation."""
    pos_bags = [b for b, label in zip(bags, y) if label]
    neg_bags = [b for b, label in zip(bags, y) if not label]
    best = None
    for h in product(*[range(len(b)) for b in pos_bags]):
        value, w = convex_minimum(np.vstack([b[j] for b, j in zip(pos_bags, h)]), neg_bags, C, negatives)
        if best is None or value < best[0]:
            best = (value, w, h)
    return best


def tiny_bags(seed, negatives):
    """2 positive images of 3 windows (d = 2); negative images: 2 of 2 windows ("all": 4 negatives
    ranked) or 3 of 2 ("best": 3 ranked). Positives hide one window shifted along a direction."""
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=2)
    n_neg = 2 if negatives == "all" else 3
    bags = [rng.normal(size=(3, 2)) for _ in range(2)] + [rng.normal(size=(2, 2)) for _ in range(n_neg)]
    for bag in bags[:2]:
        bag[rng.integers(3)] += direction
    return bags, np.arange(len(bags)) < 2


CASES = [(seed, negatives) for negatives in ("all", "best") for seed in range(4)]


@pytest.mark.parametrize("seed, negatives", CASES)
def test_cccp_against_the_brute_force_twin(seed, negatives):
    bags, y = tiny_bags(seed, negatives)
    C, params = 2.0, dict(negatives=negatives, tol=1e-9, max_cccp_iter=30, cccp_tol=0.0)
    model = LatentRankSVM(C=C, **params).fit(bags, y)
    C_eff = C * model.hinge_scale_
    n_neg = 4 if negatives == "all" else 3
    assert model.hinge_scale_ == pytest.approx((n_neg / 6) ** 2)  # κ = N / (2(P + 1)), P = 2
    # the objective CCCP reports is J of the definition, at every start's final weights
    assert model.history_[-1] == pytest.approx(brute_objective(model.coef_, bags, y, C_eff, negatives),
                                               rel=1e-9, abs=1e-12)
    # CCCP stopped because no imputed window changed: w minimises its own imputation's problem
    assert model.converged_ and model.steps_[-1]["n_changed"] == 0
    imputed = np.vstack([bags[i][model.latent_windows_[i]] for i in np.flatnonzero(y)])
    own, _ = convex_minimum(imputed, [b for b, label in zip(bags, y) if not label], C_eff, negatives)
    assert model.history_[-1] == pytest.approx(own, rel=1e-6, abs=1e-9)
    # the global minimum over imputations is below every run, and CCCP started there stays
    best, w_best, _ = global_minimum(bags, y, C_eff, negatives)
    assert best <= model.history_[-1] * (1 + 1e-6) + 1e-9
    assert brute_objective(w_best, bags, y, C_eff, negatives) == pytest.approx(best, rel=1e-6, abs=1e-9)
    there = LatentRankSVM(C=C, init=w_best, **params).fit(bags, y)
    assert there.history_[-1] == pytest.approx(best, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_the_objective_is_the_least_over_imputations_at_any_w(seed):
    """The identity CCCP rests on: J(w) = min over imputations h of J_h(w), J_h the objective with
    the positives fixed to h (the hinge does not increase with a positive's score)."""
    bags, y = tiny_bags(seed, "all")
    rng = np.random.default_rng(seed)
    pos_bags = [b for b, label in zip(bags, y) if label]
    negs = np.vstack([b for b, label in zip(bags, y) if not label])
    deltas, A = ranking_rows(2, len(negs))
    for w in rng.normal(size=(5, 2)):
        fixed = [0.5 * w @ w + np.max(deltas + A @ np.r_[[b[j] @ w for b, j in zip(pos_bags, h)], negs @ w])
                 for h in product(range(3), range(3))]
        assert brute_objective(w, bags, y, 1.0, "all") == pytest.approx(min(fixed), rel=1e-12)
