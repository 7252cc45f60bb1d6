"""The disclosure fields of the report (``report.disclosure``) as a typed document.

Every figure is a :class:`FieldDocument`: value, unit, label (``measured | calibrated |
modelled | user-supplied``), source, a P10–P90 range (or why there is none), or an explicit
``not_applicable`` reason instead of a value. :mod:`planner.disclosure` computes it from the
plan document; :mod:`planner.report.disclosure_part` renders it.
"""

from __future__ import annotations

from typing import Literal

from planner.documents.base import Document

Label = Literal["measured", "calibrated", "modelled", "user-supplied"]
Treatment = Literal["included", "excluded", "approximated"]


class FieldDocument(Document):
    """One disclosed figure."""

    value: float | str | None
    """The figure (None when ``not_applicable``)."""
    unit: str
    label: Label | None
    """How the figure was obtained (None when ``not_applicable``)."""
    source: str
    """Where the figure comes from, or how it was computed."""
    p10: float | None = None
    """10th percentile (None: no range, see ``range_source``)."""
    p90: float | None = None
    """90th percentile."""
    range_source: str | None = None
    """How the range was obtained, or why there is none."""
    not_applicable: str | None = None
    """Why the field has no value (None when it has one)."""


class BoundaryItemDocument(Document):
    """One component of the system boundary."""

    component: str
    treatment: Treatment
    factor: float | None = None
    """The approximation factor (``approximated`` only)."""
    note: str = ""


class IdleActiveDocument(Document):
    """Idle and load-dependent GPU energy of one allocation (kWh over the window)."""

    name: str
    model: str
    gpu: str
    tp: int
    replicas: int
    idle_energy_kwh: float
    active_energy_kwh: float
    layout: str | None = None
    """One replica's layout (``8``, ``4×PP3``, ``1×DP8 EP8``), or a disaggregated unit's pools
    (``1× H200 TP4 → 2× H200 TP4``)."""


class HardwareDocument(Document):
    """The hardware and software of one allocation."""

    name: str
    model: str
    gpu: str
    gpus: int
    tp: int
    replicas: int
    layout: str
    engine: str | None
    precision: str


class ModelDisclosureDocument(Document):
    """The fields of one model entry (identity, energy, FLOPs, emissions)."""

    name: str
    fields: dict[str, FieldDocument]


class HourlyDocument(Document):
    """Emissions of one planning period on the grid profile."""

    period: int
    hours: float
    g_co2_per_kwh: float
    facility_energy_kwh: float
    emissions_kg_co2e: float


class DisclosureDocument(Document):
    """Disclosure fields asked by the EU AI Act (Annex XI, Model Documentation Form), ISO/IEC
    21031 (SCI), the GHG Protocol / ESRS E1 and the AI Energy Score."""

    frameworks: list[str]
    recipients: list[str]
    phase: Literal["inference"]
    persona: str
    fields: dict[str, FieldDocument]
    models: list[ModelDisclosureDocument]
    boundary: list[BoundaryItemDocument]
    idle_active: list[IdleActiveDocument]
    hardware: list[HardwareDocument]
    hourly: list[HourlyDocument]
    """Per period on the grid profile (empty without one)."""
    flops_methodology: str
    range_method: str
    labels: str
    """What each label means."""
    price_basis: dict[str, str] = {}
    """GPU type -> the basis of its hourly price (rental, TCO or the scenario's own)."""
