"""Plain, frozen inputs of the fleet optimiser (no YAML, no predictors, no solver).

This package's interface is the names below; import them from ``planner.inputs``. Inside:
:mod:`.objective` (what to minimise), :mod:`.demand` (a model entry's load and SLA),
:mod:`.candidate` (a deployment and its curves), :mod:`.grid` (carbon intensity per period),
:mod:`.failover` (capacity that survives lost replicas or nodes), :mod:`.regions` (the sites
a model may be placed in), :mod:`.problem`
(:class:`PlanningInputs`, GPU facts, provenance) and :mod:`.validation` (the checks they share).

:mod:`planner.scenario.model` and :mod:`planner.capacity` turn a scenario file into a
:class:`PlanningInputs`; solver tests build one by hand. Every number carries its unit in
its name. The power of one replica of a candidate serving ``x`` requests/s is its power curve
(:attr:`Candidate.curve`: the serving model's mean power at the curve's knots, linear between
them, docs/method.md §3); a hand-built candidate without a curve has the linear one

    power_w = idle_power_w_per_replica + energy_j_per_request * x,   0 <= x <= capacity

(J/request × request/s = W).
"""

from planner.inputs.candidate import (
    Candidate,
    CandidateKey,
    Exclusion,
    layout_text,
    ms_over,
    ms_text,
    record_key,
)
from planner.inputs.demand import ModelDemand
from planner.inputs.failover import (
    DEFAULT_GPUS_PER_NODE,
    Failover,
    FailoverUnit,
    replicas_per_unit,
    surviving_capacity,
    unit_replicas,
    unit_text,
    worst_loss,
)
from planner.inputs.grid import (
    drawn_grid_g_co2_per_kwh,
    grid_by_period,
    grid_carbon_kg,
    is_flat_grid,
)
from planner.inputs.objective import (
    DEFAULT_OBJECTIVE,
    OBJECTIVE_KINDS,
    WEIGHT_KEYS,
    Objective,
    ObjectiveKind,
)
from planner.inputs.pools import (
    POOL_ROLES,
    UNIT_NOTE,
    Deployment,
    Pool,
    deployment_text,
    gpu_use,
    pool_from_record,
    pools_gpu_cell,
    pools_layout_cell,
    pools_text,
)
from planner.inputs.problem import (
    MAX_REPLICAS_PER_CANDIDATE,
    GpuInfo,
    PlanningInputs,
    Provenance,
)
from planner.inputs.regions import (
    Region,
    fleet_inventory,
    regional_stock,
    stock_key,
)

__all__ = [
    "DEFAULT_GPUS_PER_NODE",
    "DEFAULT_OBJECTIVE",
    "MAX_REPLICAS_PER_CANDIDATE",
    "OBJECTIVE_KINDS",
    "WEIGHT_KEYS",
    "POOL_ROLES",
    "UNIT_NOTE",
    "Candidate",
    "Deployment",
    "Pool",
    "CandidateKey",
    "Exclusion",
    "Failover",
    "FailoverUnit",
    "GpuInfo",
    "ModelDemand",
    "Objective",
    "ObjectiveKind",
    "PlanningInputs",
    "Provenance",
    "Region",
    "deployment_text",
    "drawn_grid_g_co2_per_kwh",
    "grid_by_period",
    "grid_carbon_kg",
    "is_flat_grid",
    "gpu_use",
    "layout_text",
    "pool_from_record",
    "pools_gpu_cell",
    "pools_layout_cell",
    "pools_text",
    "ms_over",
    "ms_text",
    "replicas_per_unit",
    "unit_replicas",
    "surviving_capacity",
    "unit_text",
    "worst_loss",
    "record_key",
    "fleet_inventory",
    "regional_stock",
    "stock_key",
]
