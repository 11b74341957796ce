"""Training problems: the structured hinge over queries, in two halves (docs/design.md §5).

- :class:`ScoreHinge` (score space): relevance, queries and an oracle; scores in, the mean hinge
  and its coefficients ``∂H/∂s`` out. Shared by the in-memory solver, network losses and dask blocks.
- :class:`StructuredHinge` (weight space): the products ``s = X w`` and ``g = Xᵀ c`` around it.
- :class:`Problem`: the protocol every problem gives a solver.
- ``ssvm.problem.dask_space.DaskStructuredHinge``: the same hinge over a dask array, one task per
  block of rows (imported only when used: it needs the ``dask`` extra).
"""

from .protocol import Problem
from .score_space import ScoreHinge, check_queries, check_relevance
from .weight_space import LinearScores, StructuredHinge, check_features, matvec

__all__ = ["Problem", "ScoreHinge", "StructuredHinge", "LinearScores", "check_features",
           "check_queries", "check_relevance", "matvec"]
