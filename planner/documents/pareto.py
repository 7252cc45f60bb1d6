"""The Pareto front JSON (``wattgpu pareto --format json``, ``report.pareto``) as a document."""

from __future__ import annotations

from typing import Literal

from planner.documents.base import Document


class ParetoPointDocument(Document):
    """One solved plan on the front."""

    label: str
    epsilon_usd: float | None
    """The cost cap of this point (None for the two end plans)."""
    status: str
    facility_energy_kwh: float
    energy_kwh: float
    cost_usd: float
    carbon_kg: float
    gpus: dict[str, int]


class MarkerDocument(Document):
    """A plan shown beside the front (the chosen plan, a baseline)."""

    label: str
    facility_energy_kwh: float
    cost_usd: float
    carbon_kg: float


class ParetoDocument(Document):
    """The energy ↔ cost front (cost ascending, facility energy descending) and its markers."""

    scenario: str
    estimated: Literal[True]
    method: str
    points: list[ParetoPointDocument]
    chosen: MarkerDocument | None
    baselines: list[MarkerDocument]
    messages: list[str]
