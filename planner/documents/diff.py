"""The plan diff JSON (``wattgpu diff A B --format json``) as a typed document: its schema is
the contract (``wattgpu schema diff``); :meth:`planner.analysis.diff.PlanDiff.to_json_dict`
writes it."""

from __future__ import annotations

from typing import Any

from planner.documents.base import Document
from planner.documents.plan_parts import AllocationDocument


class ChangeDocument(Document):
    """One value that differs between plan A and plan B."""

    where: str
    """The value's place: ``assumptions.pue``, ``models.chat.itl_sla_s``, ``chat on H100-SXM5-80GB
    TP8: replicas``, ``totals.cost_usd``, ``regions.fr.totals.carbon_kg``."""
    before: Any
    """Its JSON value in plan A (``"absent"`` where A has no such model entry, region or GPU
    type in its inventory)."""
    after: Any
    """Its JSON value in plan B (``"absent"`` likewise)."""
    delta: float | None
    """``after − before`` when both are numbers (null otherwise)."""
    pct: float | None
    """``delta`` in percent of ``|before|`` (null when not numbers or ``before`` is 0)."""


class DiffDocument(Document):
    """What changed between two plan JSON files; every list empty when ``identical``."""

    a: str
    """Plan A's file as given."""
    b: str
    """Plan B's file as given."""
    identical: bool
    """True when no section below lists anything."""
    scenario: list[ChangeDocument]
    """Scenario name, status, description and predictors."""
    assumptions: list[ChangeDocument]
    """Every key of the plans' assumptions, the GPU inventory and each region's settings."""
    models: list[ChangeDocument]
    """Every key of each model entry's load and SLA (entries matched by name)."""
    allocations_added: list[AllocationDocument]
    """Allocations of B with no allocation of the same entry, GPU and layout in A (the plan
    JSON's allocation records)."""
    allocations_removed: list[AllocationDocument]
    """Allocations of A with none of the same entry, GPU and layout in B."""
    allocations_changed: list[ChangeDocument]
    """Replicas, GPUs, load, energy and cost of allocations present in both."""
    totals: list[ChangeDocument]
    """The fleet's totals (and GPUs by type), then each region's present in both."""
