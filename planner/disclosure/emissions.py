"""Carbon of the fleet: the grid intensities (location-based average and marginal,
market-based, renewable share) and operational emissions (location, marginal, market, hourly
on the grid profile)."""

from __future__ import annotations

from planner.disclosure.fields import NO_RANGE_INPUT, NO_RANGE_PUBLISHED, not_applicable, value
from planner.disclosure.ranges import EnergyRanges
from planner.documents.disclosure import FieldDocument, HourlyDocument
from planner.documents.forecast import ForecastDocument
from planner.documents.plan import PlanDocument
from planner.scenario.disclosure import Disclosure

KG_PER_T = 1000.0


def _regional_rows(doc: PlanDocument) -> list[HourlyDocument]:
    """With regions: per period, every region's facility energy on its own grid (its hourly
    profile where it has one, else its flat intensity), so the rows add up to the plan's
    carbon_kg; empty when no region has a profile. A period's intensity is its emissions over
    its energy (the regions' mean where nothing runs)."""
    regions = {r.name: r for r in doc.regions or []}
    if not any(r.grid_g_co2_per_kwh_by_period for r in regions.values()):
        return []
    hours = doc.assumptions.period_hours

    def grid(name: str, t: int) -> float:
        r = regions[name]
        by_period = r.grid_g_co2_per_kwh_by_period
        return by_period[t] if by_period else r.grid_g_co2_per_kwh

    kwh, kg = [0.0] * len(hours), [0.0] * len(hours)
    for a in doc.allocations:
        if a.region not in regions or a.power_w_by_period is None:
            continue
        for t, (w, h) in enumerate(zip(a.power_w_by_period, hours, strict=True)):
            energy = w * h / 1000.0 * regions[a.region].pue
            kwh[t] += energy
            kg[t] += energy * grid(a.region, t) / 1000.0
    return [
        HourlyDocument(
            period=t,
            hours=h,
            g_co2_per_kwh=(
                kg[t] * 1000.0 / kwh[t]
                if kwh[t] > 0
                else sum(grid(n, t) for n in regions) / len(regions)
            ),
            facility_energy_kwh=kwh[t],
            emissions_kg_co2e=kg[t],
        )
        for t, h in enumerate(hours)
    ]


def hourly_rows(doc: PlanDocument, fc: ForecastDocument) -> list[HourlyDocument]:
    """Emissions per period on the scenario's grid profile (empty without one); with regions,
    on every region's own grid (:func:`_regional_rows`)."""
    if doc.regions:
        return _regional_rows(doc)
    profile = doc.assumptions.grid_g_co2_per_kwh_by_period
    if profile is None:
        return []
    return [
        HourlyDocument(
            period=i,
            hours=h,
            g_co2_per_kwh=g,
            facility_energy_kwh=p.facility_energy_kwh,
            emissions_kg_co2e=p.facility_energy_kwh * g / 1000.0,
        )
        for i, (g, h, p) in enumerate(
            zip(profile, doc.assumptions.period_hours, fc.total.by_period, strict=True)
        )
    ]


def location_average_g_co2_per_kwh(doc: PlanDocument) -> float:
    """The fleet's location-based average intensity: the scenario's, or with regions their flat
    (average) intensities weighted by the facility energy planned in each (their plain mean
    when nothing is planned)."""
    regions = doc.regions or []
    if not regions:
        return doc.assumptions.grid_g_co2_per_kwh
    kwh = sum(r.totals.facility_energy_kwh for r in regions)
    if kwh <= 0:
        return sum(r.grid_g_co2_per_kwh for r in regions) / len(regions)
    return sum(r.totals.facility_energy_kwh * r.grid_g_co2_per_kwh for r in regions) / kwh


def grid_fields(doc: PlanDocument, d: Disclosure, out: dict[str, FieldDocument]) -> None:
    """The carbon-intensity fields (with source and year) into *out*."""
    a = doc.assumptions
    where = f"region {a.grid_region}" if a.grid_region else "explicit figure"
    year = f"year {a.grid_year}" if a.grid_year else "year not stated"
    source = f"{where}, {year}; {a.grid_source or 'source not stated'}"
    if doc.regions:
        listed = ", ".join(f"{r.name} {r.grid_g_co2_per_kwh:g}" for r in doc.regions)
        source = f"the regions' average intensities ({listed}) weighted by their facility energy"
    out["grid_location_average_g_co2_per_kwh"] = value(
        location_average_g_co2_per_kwh(doc),
        "g CO2e/kWh",
        "modelled" if a.grid_region or doc.regions else "user-supplied",
        source,
        range_source=NO_RANGE_PUBLISHED,
    )
    if d.marginal_g_co2_per_kwh is None:
        out["grid_location_marginal_g_co2_per_kwh"] = not_applicable(
            "g CO2e/kWh", "no marginal intensity given (disclosure.marginal_g_co2_per_kwh)"
        )
    else:
        out["grid_location_marginal_g_co2_per_kwh"] = value(
            d.marginal_g_co2_per_kwh,
            "g CO2e/kWh",
            "user-supplied",
            f"{d.marginal_source}; year {d.marginal_year or 'not stated'}",
            range_source=NO_RANGE_INPUT,
        )
    if d.market_g_co2_per_kwh is None:
        out["grid_market_g_co2_per_kwh"] = not_applicable(
            "g CO2e/kWh",
            "no contractual instruments or residual mix given (disclosure.market_g_co2_per_kwh); "
            "wattgpu ships no residual-mix table",
        )
    else:
        out["grid_market_g_co2_per_kwh"] = value(
            d.market_g_co2_per_kwh,
            "g CO2e/kWh",
            "user-supplied",
            f"{d.market_basis.replace('_', ' ')}: {d.market_source}; year "
            f"{d.market_year or 'not stated'}",
            range_source=NO_RANGE_INPUT,
        )
    out["renewable_share"] = (
        value(
            d.renewable_share, "fraction", "user-supplied", "scenario", range_source=NO_RANGE_INPUT
        )
        if d.renewable_share is not None
        else not_applicable("fraction", "not given (disclosure.renewable_share)")
    )


def emission_fields(
    doc: PlanDocument,
    fc: ForecastDocument,
    d: Disclosure,
    ranges: EnergyRanges,
    out: dict[str, FieldDocument],
) -> float:
    """Operational emission fields; returns the facility energy (kWh)."""
    f, rng = ranges.of_facility(), ranges.method
    facility = fc.total.horizon.facility_energy_kwh
    loc = facility * doc.assumptions.grid_g_co2_per_kwh / 1000.0
    src = "facility energy × location-based average intensity"
    fl = f
    if doc.regions:  # every region's facility energy on its own flat (average) intensity
        loc = sum(r.totals.facility_energy_kwh * r.grid_g_co2_per_kwh for r in doc.regions) / 1e3
        src = "Σ regions' facility energy × their location-based average intensity"
        parts = []  # each entry in its one region: its facility energy × that region's grid
        for mf in fc.models:
            parts.append((mf.name, mf.horizon.facility_energy_kwh * doc.entry_site(mf.name)[1]))
        fl = ranges.of_sum(parts) or f
    out["emissions_location_kg_co2e"] = value(
        loc, "kg CO2e", "modelled", src, factors=fl, range_source=rng
    )
    out["emissions_location_t_co2e"] = value(
        loc / KG_PER_T, "t CO2e", "modelled", src, factors=fl, range_source=rng
    )
    for key, intensity, what in (
        ("marginal", d.marginal_g_co2_per_kwh, "marginal"),
        ("market", d.market_g_co2_per_kwh, "market-based"),
    ):
        if intensity is None:
            reason = f"no {what} intensity given"
            out[f"emissions_{key}_kg_co2e"] = not_applicable("kg CO2e", reason)
            out[f"emissions_{key}_t_co2e"] = not_applicable("t CO2e", reason)
            continue
        kg = facility * intensity / 1000.0
        src = f"facility energy × {what} intensity"
        out[f"emissions_{key}_kg_co2e"] = value(
            kg, "kg CO2e", "modelled", src, factors=f, range_source=rng
        )
        out[f"emissions_{key}_t_co2e"] = value(
            kg / KG_PER_T, "t CO2e", "modelled", src, factors=f, range_source=rng
        )
    rows = hourly_rows(doc, fc)
    if rows:
        out["emissions_hourly_kg_co2e"] = value(
            sum(r.emissions_kg_co2e for r in rows),
            "kg CO2e",
            "modelled",
            (
                "Σ period facility energy of every region × its grid profile (its flat "
                "intensity where it has none)"
                if doc.regions
                else "Σ period facility energy × grid profile ("
                + (d.grid_profile_source or "source not stated")
                + ")"
            )
            + ", the plan's carbon_kg (the carbon of its objective)",
            factors=ranges.of_carbon(),
            range_source=rng,
        )
    else:
        out["emissions_hourly_kg_co2e"] = not_applicable(
            "kg CO2e",
            "no grid profile in the scenario (disclosure.grid_profile_g_co2_per_kwh, or a "
            "region's grid_profile_g_co2_per_kwh)",
        )
    return facility
