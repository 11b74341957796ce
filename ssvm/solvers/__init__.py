"""Solvers of ``J(w) = ½‖w‖² + C·(1/Q) Σ_q H_q(w)`` (DESIGN.md §1), one function each.

Every solver has the signature ``solver(problem, C, tol, max_iter, w0=None, callback=None, *, ...)``,
takes a :class:`ssvm.problem.StructuredHinge` and returns a :class:`SolverResult`.

SOLVERS
    Registry name -> solver function.
"""

from ._common import SolverResult
from .cutting_plane import cutting_plane

SOLVERS = {"cutting_plane": cutting_plane}

__all__ = ["SOLVERS", "SolverResult", "cutting_plane"]
