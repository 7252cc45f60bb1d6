"""Regions (sites) of a fleet: where a deployment runs and what its energy costs there.

A :class:`Region` carries what the planner prices by site: the PUE, the electricity price, the
grid's carbon intensity (flat, and per period when an hourly profile is given), a facility power
cap and the GPU inventory. Inputs without regions have one implicit site, made of the top-level
fields of :class:`~planner.inputs.PlanningInputs` (its name is ``""``), so every formula is the
same with and without regions.

With regions, a candidate is a (model entry, GPU type, layout, region) deployment
(:attr:`~planner.inputs.Candidate.region`); its GPUs count against the inventory of its GPU type
*in its region*, keyed by :func:`stock_key` (``"H100-SXM5-80GB@eu"``). The planner places every
model entry in one of its allowed regions (all its replicas there); an entry that should be
served from several regions is listed once per region (docs/method.md, "Regions").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from planner.inputs.candidate import STOCK_SEPARATOR, Candidate
from planner.inputs.grid import grid_by_period
from planner.inputs.validation import fail, non_negative


def stock_key(c: Candidate, gpu: str | None = None) -> str:
    """The inventory key *c*'s GPUs (of type *gpu*, default its own: a unit's pools may differ)
    count against: the GPU type, ``gpu@region`` in a region."""
    gpu = c.gpu if gpu is None else gpu
    return f"{gpu}{STOCK_SEPARATOR}{c.region}" if c.region else gpu


@dataclass(frozen=True)
class Region:
    """One site: PUE, electricity price, grid intensity, power cap and inventory."""

    name: str
    """Region name (``""``: the one site of inputs without regions)."""
    pue: float
    electricity_usd_per_kwh: float
    grid_g_co2_per_kwh: float
    grid_g_co2_per_kwh_by_period: tuple[float, ...] | None = None
    """Grid intensity per period (None: the flat ``grid_g_co2_per_kwh`` in every period)."""
    power_cap_kw: float | None = None
    """Facility power cap of the site in every period (kW; None: none)."""
    inventory: Mapping[str, int | None] = field(default_factory=dict, hash=False)
    """GPU type -> GPUs available in the site (None: unlimited); types not listed: none."""
    grid_region: str | None = None
    """Catalog grid region of the carbon factor (None: an explicit figure)."""

    def __post_init__(self) -> None:
        where = f"region {self.name!r}"
        if self.pue < 1.0 or self.pue != self.pue:
            raise fail(f"{where} pue", f"must be >= 1, got {self.pue!r}")
        non_negative(
            where,
            electricity_usd_per_kwh=self.electricity_usd_per_kwh,
            grid_g_co2_per_kwh=self.grid_g_co2_per_kwh,
            power_cap_kw=self.power_cap_kw,
        )
        for gpu, count in self.inventory.items():
            if count is not None and count < 0:
                raise fail(f"{where} inventory {gpu!r}", f"available must be >= 0, got {count}")

    def grid_by_period(self, periods: int) -> tuple[float, ...]:
        """The site's grid intensity in every period (profile, or the flat factor)."""
        return grid_by_period(self.grid_g_co2_per_kwh, self.grid_g_co2_per_kwh_by_period, periods)


def regional_stock(regions: Sequence[Region]) -> dict[str, int | None]:
    """``gpu@region`` -> GPUs available, over every region's inventory."""
    return {
        f"{gpu}{STOCK_SEPARATOR}{r.name}": count
        for r in regions
        for gpu, count in r.inventory.items()
    }


def fleet_inventory(regions: Sequence[Region]) -> dict[str, int | None]:
    """GPU type -> GPUs available over all regions (None when some region has no limit)."""
    out: dict[str, int | None] = {}
    for r in regions:
        for gpu, count in r.inventory.items():
            if gpu in out and out[gpu] is None:
                continue
            out[gpu] = None if count is None else (out.get(gpu) or 0) + count
    return dict(sorted(out.items()))


def check_regions(regions: Sequence[Region], candidates: Sequence[Candidate], periods: int) -> None:
    """Every candidate in a known region whose inventory lists its GPU type; names unique;
    profiles one value per period. Without regions, no candidate may name one."""
    names = [r.name for r in regions]
    if len(set(names)) != len(names) or any(not n for n in names):
        raise fail("regions", f"region names must be unique and non-empty, got {names}")
    by_name = {r.name: r for r in regions}
    for r in regions:
        profile = r.grid_g_co2_per_kwh_by_period
        if profile is not None and len(profile) != periods:
            raise fail(
                f"region {r.name!r} grid profile",
                f"{len(profile)} values for {periods} periods; give one per period",
            )
    for c in candidates:
        if not regions and c.region:
            raise fail(f"candidate {c.label}", f"region {c.region!r} but the inputs have none")
        if regions and c.region not in by_name:
            raise fail(f"candidate {c.label}", f"unknown region {c.region!r} (regions: {names})")
        missing = [g for g, _ in c.gpu_use if regions and g not in by_name[c.region].inventory]
        if missing:
            raise fail(f"candidate {c.label}", f"GPU {missing[0]!r} is not offered in {c.region!r}")
