"""Training problems: the structured hinge over queries, in two halves (docs/design.md §5).

- :class:`ScoreHinge` (score space): relevance, queries and an oracle; scores in, the mean hinge
  and its coefficients ``∂H/∂s`` out. Shared by the in-memory solver, network losses and dask blocks.
- :class:`StructuredHinge` (weight space): the products ``s = X w`` and ``g = Xᵀ c`` around it.
- :class:`Problem`: the protocol every problem gives a solver (what it returns: :class:`Plane`,
  :class:`Planes`); :class:`ScoreSpaceProblem`, one whose hinge is a function of stacked scores
  (:class:`ScorePlane`), which OCAS's line search needs.
- ``ssvm.problem.dask_space.DaskStructuredHinge``: the same hinge over a dask array, one task per
  block of rows (imported only when used: it needs the ``dask`` extra).
"""

from .protocol import Plane, Planes, Problem, ScorePlane, ScoreSpaceProblem
from .score_space import ScoreHinge, check_queries, check_relevance
from .weight_space import LinearScores, StructuredHinge, check_features, matvec

__all__ = ["Problem", "ScoreSpaceProblem", "Plane", "Planes", "ScorePlane",
           "ScoreHinge", "StructuredHinge", "LinearScores", "check_features",
           "check_queries", "check_relevance", "matvec"]
