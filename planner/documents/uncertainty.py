"""The uncertainty bands JSON (``report.uncertainty``) as a typed document."""

from __future__ import annotations

from planner.documents.base import Document


class BandDocument(Document):
    """low <= median <= high."""

    low: float
    median: float
    high: float


class FigureBandsDocument(Document):
    """Bands of the quantities reported."""

    energy_kwh: BandDocument
    facility_energy_kwh: BandDocument
    cost_usd: BandDocument
    carbon_kg: BandDocument


class AllocationBandDocument(Document):
    """One allocation's power interval and the energy it implies."""

    name: str
    gpu: str
    tp: int
    batch_size: int
    power_w_per_gpu: BandDocument
    """Clipped to [idle, TDP]."""
    power_w_per_gpu_unclipped: BandDocument
    idle_power_w_per_gpu: float
    tdp_w: float | None
    energy_j_per_request: BandDocument
    energy_kwh: BandDocument


class BandsDocument(Document):
    """Uncertainty of a plan: method, interval level, total, per model entry, per allocation."""

    method: str
    interval_level: float | None
    total: FigureBandsDocument
    models: dict[str, FigureBandsDocument]
    allocations: list[AllocationBandDocument]
