"""Label ranking by precision@k with c-star label dependencies (Mensink, Verbeek & Caetano 2011).

LabelRankSVM
    the scikit-learn estimator (``fit(X, Y)`` with a label indicator matrix ``Y``).
star_inference
    exact best label set of each sample under c-star pairwise terms, with fixed labels and
    max-marginals, in O(2^C (L + C)).
select_core
    greedy joint-mutual-information choice of the core labels.
StarLayout, LabelRankingHinge, impute_targets
    the parameter layout, the structured hinge (the solvers' problem object) and the targets'
    imputation for a fixed k.
break_even_precision, interactive_bep, choose_threshold
    evaluation: BEP, the paper's interactive labelling, the set-size threshold.
"""

from .core import mutual_information, select_core
from .estimator import LabelRankSVM
from .evaluation import break_even_precision, choose_threshold, interactive_bep
from .inference import MAX_CORE, star_inference
from .problem import LabelRankingHinge, StarLayout, impute_targets

__all__ = [
    "MAX_CORE",
    "LabelRankSVM",
    "LabelRankingHinge",
    "StarLayout",
    "break_even_precision",
    "choose_threshold",
    "impute_targets",
    "interactive_bep",
    "mutual_information",
    "select_core",
    "star_inference",
]
