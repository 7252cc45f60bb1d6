"""The solve stage: ``PlanningInputs`` -> checked ``Plan`` (:mod:`planner.result`).

:func:`solve` picks the method (:mod:`.optimize`): the exact per-model decomposition
(:mod:`.decompose`), column generation with a Lagrangian bound (:mod:`.colgen`, over the
columns of :mod:`.columns` and the master problems of :mod:`.master`) or the monolithic MILP
(:mod:`.milp`, after the exact presolve of :mod:`.presolve`); both price candidates with
:mod:`.coefficients`. :mod:`.explain` says why a scenario has no plan and :mod:`.baselines`
builds the naive fleets a plan is compared against.
"""

from planner.solve.optimize import solve

__all__ = ["solve"]
