"""
Loss-augmented inference: QS against the classical oracles
==========================================================

Training a rank SVM calls a *loss-augmented inference* oracle once per query and iteration: find
the ranking that maximises loss + score. Every oracle in ``ssvm.losses`` is exact and returns the
same ``(c, delta)``; they differ in cost. The QS oracle of Mohapatra et al. (CVPR 2018) sorts only
the P positives and places the N negatives by divide and conquer, O(N log P); Yue et al.'s AP
oracle, the dynamic program of Song et al. and Chakrabarti et al.'s NDCG oracle are O(PN).

Here each oracle is timed on one query with P = 100 positives and N = 1,000 … 30,000 negatives
(scores: positives ~ N(1, 1), negatives ~ N(0, 1), as early in training), next to ``np.sort`` of
the negative scores, the bar QS has to meet. The benchmark behind the results pages,
``scripts/bench_oracles.py``, goes to N = 10⁶.
"""

# %%
# The timings: the median of a few calls, after one warm-up call (which also loads the compiled
# kernels).
import time

import matplotlib.pyplot as plt
import numpy as np

from ssvm.losses import get_oracle

ORACLES = [("ap", "qs"), ("ap", "search"), ("ap", "yue"), ("ap", "dp"), ("ndcg", "qs"),
           ("ndcg", "chakrabarti")]
n_pos, sizes, repeat = 100, [1_000, 3_000, 10_000, 30_000], 5
rng = np.random.default_rng(0)


def median_ms(function, *args):
    function(*args)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


results = {name: [] for name in [("np.sort", "negatives"), *ORACLES]}
for n_neg in sizes:
    y = np.r_[np.ones(n_pos, dtype=bool), np.zeros(n_neg, dtype=bool)]
    scores = rng.normal(size=y.size) + y
    results[("np.sort", "negatives")].append(median_ms(np.sort, scores[~y]))
    reference = get_oracle("ap", "yue")(scores, y)
    for loss, oracle in ORACLES:
        results[(loss, oracle)].append(median_ms(get_oracle(loss, oracle), scores, y))
    c, delta = get_oracle("ap", "qs")(scores, y)  # exact: the same answer as Yue's oracle
    assert np.allclose(c, reference[0]) and np.isclose(delta, reference[1])

print(f"ms per call, P = {n_pos}: " + "  ".join(f"N={n:,}" for n in sizes))
for (loss, oracle), ms in results.items():
    print(f"  {loss:>7} / {oracle:<12}" + "".join(f"{t:10.3f}" for t in ms))

# %%
# Per-call time against N on log-log axes: at fixed P the O(PN) oracles grow linearly in N (or
# faster, once their work no longer fits in the cache), QS stays within a small factor of sorting
# the negatives, and the gap widens with N.
fig, ax = plt.subplots(figsize=(6.5, 4.2))
for (loss, oracle), ms in results.items():
    style = "k--" if loss == "np.sort" else ("o-" if oracle == "qs" else "s:")
    ax.loglog(sizes, ms, style, label=f"{loss} / {oracle}")
ax.set_xlabel("N (negatives), P = 100")
ax.set_ylabel("ms per call (median)")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
