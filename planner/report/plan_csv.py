"""The CSV form of a plan (``wattgpu plan --format csv``): one row per allocation, the JSON
contract's allocation keys first (:data:`CSV_COLUMNS`), then its other keys, then the weight
``precision`` its model entry was predicted at (``models[].precision`` of the JSON)."""

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
    """One row per allocation: the contract's allocation columns, then any extra ones, then
    its entry's precision."""
    data = plan_json(plan)
    rows = data["allocations"]
    extra = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in CSV_COLUMNS]
    precision = {m["name"]: m.get("precision") for m in data["models"]}
    rows = [{**r, "precision": precision.get(r["name"])} for r in rows]
    return rows_to_csv(rows, [*CSV_COLUMNS, *extra, "precision"])
