"""A saved plan's records back as the optimiser's: candidates and model entries.

:func:`planner.documents.plan.planning_inputs_of` rebuilds a plan's inputs from them (plans
written before layouts get pure tensor parallelism, plans without regions no region).
"""

from __future__ import annotations

import math

from planner.documents.plan_parts import CandidateDocument, ModelDocument
from planner.documents.pools import LAYOUT_DEGREES, unit_values
from planner.inputs import Candidate, Failover, ModelDemand


def candidate_of(c: CandidateDocument) -> Candidate:
    """The optimiser's candidate of a saved plan's candidate record."""
    values = c.model_dump()
    if values["itl_s_at_capacity"] is None:  # JSON has no Infinity: an excluded candidate
        values["itl_s_at_capacity"] = math.inf
    for key in ("load_curve_requests_per_s", "power_curve_w_per_replica", "itl_curve_s"):
        values[key] = tuple(values[key])
    del values["tensor_parallel"]  # the same as tp
    values["region"] = values.get("region") or ""
    values.update(unit_values(values))
    for key in (*LAYOUT_DEGREES, "nodes"):  # plans written before layouts: pure TP
        values[key] = values[key] or 1
    return Candidate(**values)


def model_of(m: ModelDocument) -> ModelDemand:
    """The optimiser's model entry of a saved plan's model record."""
    values = m.model_dump(exclude={"failover", "failover_capacity_requests_per_s"})
    values["requests_per_s_by_period"] = tuple(m.requests_per_s_by_period)
    if m.failover is not None:
        values["failover"] = Failover(m.failover.unit, m.failover.count)
    return ModelDemand(**values)
