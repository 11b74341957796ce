"""
Choosing C per query on the LETOR sample
========================================

Learning-to-rank data come as queries: for each search query, a list of candidate documents with
graded relevance. A ranking model is judged per query — the mean over the queries of each query's
AP — so cross-validation must (1) keep every query whole inside one fold and (2) score each test
fold query by query.

(1) is ``GroupKFold`` with ``groups=qid``. (2) needs scikit-learn's *metadata routing*: with it on,
``set_score_request(qid=True)`` makes ``GridSearchCV`` pass each fold's query ids to
``RankSVM.score``. Without them, ``score`` sees a test fold as one big query and ranks documents of
different queries against each other — a different measure, which can pick a different C.

The data are the LETOR sample bundled with ssvm (LightGBM's lambdarank example: 201 training
queries, 50 test queries, 300 features already scaled to [0, 1]).
"""

# %%
# Both searches run with routing on and differ only in what ``score`` receives. (The search that
# does not route ``qid`` makes ssvm warn that ``score`` got none: that is its point, so the
# warning is silenced here.)
import warnings

import matplotlib.pyplot as plt
import numpy as np
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold

from ssvm import RankSVM
from ssvm.datasets import load_letor_sample
from ssvm.exceptions import DegenerateQueriesWarning, MissingQidWarning
from ssvm.metrics import query_scores

warnings.simplefilter("ignore", DegenerateQueriesWarning)  # the sample has queries without a relevant row

sklearn.set_config(enable_metadata_routing=True)
X, rel, qid = load_letor_sample("train")
X_test, rel_test, qid_test = load_letor_sample("test")
grid = {"C": [0.01, 0.1, 1.0, 10.0, 100.0]}

searches = {
    "scored per query (qid routed to score)":
        RankSVM(loss="ap").set_fit_request(qid=True).set_score_request(qid=True),
    "scored as one big query (qid not routed)":
        RankSVM(loss="ap").set_fit_request(qid=True).set_score_request(qid=False),
}
for name, ranker in searches.items():
    search = GridSearchCV(ranker, grid, cv=GroupKFold(n_splits=3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQidWarning)
        searches[name] = search.fit(X, rel, qid=qid, groups=qid)
    per_query = query_scores(rel_test, search.best_estimator_.decision_function(X_test), qid=qid_test)
    print(f"{name}: C = {search.best_params_['C']:g}, validation score {search.best_score_:.4f}, "
          f"test mean AP per query {per_query.mean():.4f} "
          f"(± {per_query.std(ddof=1) / np.sqrt(per_query.size):.4f} standard error, {per_query.size} queries)")

# %%
# Which search wins on the test queries is not what this example can show, and it does not claim
# it: on this sample the two choices of C score within one standard error of each other on the
# test queries (above, the unrouted choice happens to come out slightly ahead), and the test curve
# below is nearly flat between them. A fair contest would need many more test queries or repeated
# splits, more than a docs example can afford. What it shows is which validation score *measures
# the right thing*: the per-query validation score estimates the test mean AP per query (the
# closer of the two to it), while the one-big-query score ranks documents of different queries
# against each other — another measure, whose choice of C agrees with the per-query one only by luck.

# %%
# The validation curves of both searches, and the test curve: the mean AP per query on the 50 test
# queries of a model refitted on all the training queries at each C. The per-query validation
# score estimates the quantity the test measures; the one-big-query score is a different measure
# and peaks elsewhere. The sample is small (50 test queries), so the test curve itself is noisy
# near its top: read the C chosen per query as an estimate, not as the best C in hindsight.
test_curve = [RankSVM(loss="ap", C=C).set_fit_request(qid=True).fit(X, rel, qid=qid)
              .score(X_test, rel_test, qid=qid_test) for C in grid["C"]]
fig, ax = plt.subplots(figsize=(6.5, 4))
for name, search in searches.items():
    scores = search.cv_results_["mean_test_score"]
    line, = ax.semilogx(grid["C"], scores, "o-", label=f"validation, {name}")
    best = int(np.argmax(scores))
    ax.plot(grid["C"][best], scores[best], "*", markersize=16, color=line.get_color())
ax.semilogx(grid["C"], test_curve, "k--", label="test, mean AP per query")
ax.set_xlabel("C")
ax.set_ylabel("score")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()

sklearn.set_config(enable_metadata_routing=False)  # leave the global setting as it was
