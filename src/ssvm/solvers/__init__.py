"""Solvers of ``J(w) = ½‖w‖² + C·(1/Q) Σ_q H_q(w)`` (docs/design.md §1), one function each.

Every solver has the signature
``solver(problem, C, tol, max_iter, w0=None, callback=None, *, ...)``, takes a
:class:`ssvm.problem.StructuredHinge` and returns a :class:`SolverResult`. All stop on a relative
certified duality gap ``J_best − dual ≤ tol · J_best`` (or ``max_iter``, or the callback).

SOLVERS
    Registry name -> solver function.
"""

from ._common import SolverResult
from .cutting_plane import cutting_plane
from .frank_wolfe import frank_wolfe
from .pegasos import pegasos

SOLVERS = {"cutting_plane": cutting_plane, "pegasos": pegasos, "frank_wolfe": frank_wolfe}

__all__ = ["SOLVERS", "SolverResult", "cutting_plane", "frank_wolfe", "pegasos"]
