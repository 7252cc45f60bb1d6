"""Per-allocation energy facts of a plan document: idle vs load-dependent GPU energy, the
prefill share of a request's time, and the embodied emissions of the planned GPUs.

* idle energy = replicas × idle power per replica × hours (the plan's candidate record);
  active energy = GPU energy − idle energy (the plan's ``power_w_by_period`` × hours);
* prefill share = TTFT / (TTFT + output tokens × ITL at the served load): a request's time
  split into its prefill and decode phases; its energy (idle included) is split in the same
  proportion (a modelled split: both phases share the GPUs with other requests in flight); a
  disaggregated unit's is its prefill pool's share of its energy (the pools' own power);
* embodied (SCI ``M = TE × TS × RS``): TE = GPUs × catalog ``embodied_kg_co2e``, TS = window
  hours / (lifetime years × 8760 h), RS = the scenario's resource share.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.documents.plan import PlanDocument
from planner.documents.plan_parts import AllocationDocument
from planner.documents.pools import gpus_of
from predictors.catalog.store import Catalog

HOURS_PER_YEAR = 8760.0


@dataclass(frozen=True)
class AllocationEnergy:
    """Energy facts of one allocation over the window."""

    allocation: AllocationDocument
    energy_kwh: float
    idle_energy_kwh: float
    active_energy_kwh: float
    prefill_share: float | None
    """Share of a request's time spent in prefill (None: no TTFT recorded)."""
    embodied_per_gpu_kg_co2e: float | None
    """Mean over the allocation's GPUs (one type, or a disaggregated unit's pools' types)."""
    embodied_source: str | None
    embodied_by_gpu: tuple[tuple[str, int, float | None], ...] = ()
    """(GPU type, GPUs, catalog embodied kg CO2e per GPU) of every type the allocation holds."""


def _embodied(catalog: Catalog, gpu: str) -> tuple[float | None, str | None]:
    gid = catalog.try_resolve_gpu(gpu)
    if gid is None:
        return None, None
    row = catalog.gpu(gid)
    kg = row.get("embodied_kg_co2e")
    return (float(kg), str(row.get("embodied_source") or "")) if kg is not None else (None, None)


def allocation_energy(doc: PlanDocument, catalog: Catalog) -> list[AllocationEnergy]:
    """The energy facts of every allocation of *doc*, in plan order."""
    hours = doc.assumptions.period_hours
    out = []
    for a in doc.allocations:
        c = doc.candidate(a.key)
        powers = a.power_w_by_period or [a.power_w_per_gpu * a.gpus] * len(hours)
        energy = sum(p * h for p, h in zip(powers, hours, strict=True)) / 1000.0
        idle = a.replicas * c.idle_power_w_per_replica * sum(hours) / 1000.0
        idle = min(idle, energy)
        out_tokens = doc.model(a.name).output_tokens
        itl = a.itl_s_at_served_load if a.itl_s_at_served_load is not None else a.itl_s
        share = None
        if a.pools:  # a disaggregated unit: its prefill pool's share of the energy
            pool_w = a.pools[0].power_w_by_period or [0.0] * len(hours)
            pre = sum(p * h for p, h in zip(pool_w, hours, strict=True)) / 1000.0
            share = pre / energy if energy > 0 else None
        elif c.ttft_s is not None and itl is not None and c.ttft_s + out_tokens * itl > 0:
            share = c.ttft_s / (c.ttft_s + out_tokens * itl)
        by_gpu = [
            (g, n, *_embodied(catalog, g))
            for g, n in gpus_of(a.gpu, a.gpus, a.replicas, a.pools).items()
        ]
        kg = (
            None
            if any(k is None for _, _, k, _ in by_gpu)
            else (
                sum(n * (k or 0.0) for _, n, k, _ in by_gpu)
                / max(1, sum(n for _, n, _, _ in by_gpu))
            )
        )
        source = "; ".join(dict.fromkeys(s for *_, s in by_gpu if s)) or by_gpu[0][3]
        out.append(
            AllocationEnergy(
                allocation=a,
                energy_kwh=energy,
                idle_energy_kwh=idle,
                active_energy_kwh=energy - idle,
                prefill_share=share,
                embodied_per_gpu_kg_co2e=kg,
                embodied_source=source,
                embodied_by_gpu=tuple((g, n, k) for g, n, k, _ in by_gpu),
            )
        )
    return out


def embodied_kg_co2e(
    e: AllocationEnergy, window_hours: float, lifetime_years: float, resource_share: float
) -> float | None:
    """SCI ``M = TE × TS × RS`` of one allocation over the window (kg CO2e)."""
    if e.embodied_per_gpu_kg_co2e is None:
        return None
    te = e.allocation.gpus * e.embodied_per_gpu_kg_co2e
    ts = window_hours / (lifetime_years * HOURS_PER_YEAR)
    return te * ts * resource_share


#: How an aggregated replica's energy is split into prefill and decode (a request's time).
SPLIT_BY_TIME = "GPU energy split by TTFT / (TTFT + output tokens × ITL)"
#: How a disaggregated unit's is (its pools' own power).
SPLIT_BY_POOL = "a disaggregated unit's prefill pool's energy"


def prefill_split_source(energies: list[AllocationEnergy]) -> str:
    """The source text of a prefill / decode energy split over *energies*: the method each
    allocation's share was computed by (:func:`allocation_energy`), per output token."""
    units = [e.allocation.pools is not None and len(e.allocation.pools) > 0 for e in energies]
    if all(units):
        how = f"prefill = {SPLIT_BY_POOL}"
    elif any(units):
        how = (
            f"aggregated replicas: {SPLIT_BY_TIME}; "
            "disaggregated units: prefill = their prefill pool's energy"
        )
    else:
        how = SPLIT_BY_TIME
    return f"{how}, per output token"
