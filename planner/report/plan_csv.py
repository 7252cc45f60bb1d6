"""The CSV form of a plan (``wattgpu plan --format csv``): one row per allocation, the JSON
contract's allocation keys first (:data:`CSV_COLUMNS`), then its other keys."""

from __future__ import annotations

from planner.documents.plan import plan_json
from planner.result import Plan
from planner.text import rows_to_csv

#: Columns of the CSV form: the JSON contract's allocation keys (then its extra keys).
CSV_COLUMNS: tuple[str, ...] = (
    "name",
    "model",
    "gpu",
    "tp",
    "replicas",
    "gpus",
    "requests_per_s_by_period",
    "batch_size",
    "itl_s",
    "power_w_per_gpu",
    "energy_kwh",
    "cost_usd",
    "carbon_kg",
)


def plan_csv(plan: Plan) -> str:
    """One row per allocation: the contract's allocation columns, then any extra ones."""
    rows = plan_json(plan)["allocations"]
    extra = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in CSV_COLUMNS]
    return rows_to_csv(rows, [*CSV_COLUMNS, *extra])
