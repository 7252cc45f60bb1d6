"""The fixed values and upper bounds of the scenario schema.

Every numeric field of :mod:`planner.scenario.model` and :mod:`planner.scenario.sections` has a
finite upper bound here (the ``MAX_*`` constants) so that no product overflows downstream; the
hours of a daily profile and the tensor-parallel degrees are fixed here too.
"""

from __future__ import annotations

#: Hours in a day: a ``daily_profile`` has this many values.
HOURS_PER_DAY = 24
#: Tensor-parallel degrees a GPU offer allows when the scenario does not say.
DEFAULT_TP_DEGREES = (1, 2, 4, 8)
#: Largest degree or GPU count of a stated layout (two NVL72 racks; the predictors' bound).
MAX_LAYOUT_DEGREE = 144
#: Most ``layouts`` per GPU offer.
MAX_LAYOUTS = 32

#: Upper bounds of the numeric fields: far above any real fleet, low enough that every product
#: the capacity model and the solver form stays finite and well scaled.
MAX_REQUESTS_PER_S = 1e6
MAX_CONTEXT_TOKENS = 10_000_000
MAX_PROFILE_MULTIPLIER = 1e3
MAX_PERIODS = 8784
MAX_LATENCY_MS = 3.6e6
#: Most ``min_replicas`` per entry: the exact per-model replica search grows with it (3 entries at
#: 8000 req/s over every catalog GPU: 30 s at 16, over 200 s at 32, on 2 cores).
MAX_REPLICAS = 16
#: Most lost replicas or nodes a ``failover`` entry may plan for (the replica search grows with
#: it like with ``min_replicas``).
MAX_FAILOVER = 16
MAX_GPUS = 1_000_000
MAX_USD_PER_GPU_HOUR = 1e4
MAX_HORIZON_HOURS = 1e6
#: Shortest horizon (3.6 s): below it the totals are so small that the solver's absolute
#: tolerances decide the plan (1e-9 h came out 'feasible' at a 47 % gap).
MIN_HORIZON_HOURS = 0.001
MAX_USD_PER_KWH = 100.0
MAX_PUE = 10.0
MAX_GRID_G_CO2_PER_KWH = 5_000.0
MAX_CARBON_USD_PER_TONNE = 1e5
MAX_POWER_CAP_KW = 1e8
MAX_BUDGET_USD = 1e15
MAX_TIME_LIMIT_S = 86_400.0
MAX_WEIGHT = 1e6
MAX_MODELS = 10_000
#: Most points of an energy-cost Pareto front: each is a full solve (``--points`` and
#: ``--pareto-points`` stop above it; 50 plans already resolve every corner a report shows).
MAX_PARETO_POINTS = 50
