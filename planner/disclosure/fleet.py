"""The fleet-wide disclosure fields: window, energy (GPU, facility, host, idle/active, per
functional unit), FLOPs, PUE and water, carbon intensities, operational (location, marginal,
market, hourly) and embodied emissions, SCI, the AI Energy Score figure and training energy."""

from __future__ import annotations

from planner.disclosure.emissions import (
    emission_fields,
    grid_fields,
    location_average_g_co2_per_kwh,
)
from planner.disclosure.energy import HOURS_PER_YEAR, AllocationEnergy, prefill_split_source
from planner.disclosure.fields import (
    NO_RANGE_FIXED,
    NO_RANGE_INPUT,
    NO_RANGE_PUBLISHED,
    not_applicable,
    value,
)
from planner.disclosure.model_fields import J_PER_KWH, PREDICTED
from planner.disclosure.ranges import EnergyRanges
from planner.documents.disclosure import FieldDocument, ModelDisclosureDocument
from planner.documents.forecast import ForecastDocument
from planner.documents.plan import PlanDocument
from planner.scenario.disclosure import Disclosure


def _sum(models: list[ModelDisclosureDocument], key: str) -> float | None:
    values = [m.fields[key].value for m in models if key in m.fields]
    if len(values) != len(models) or any(not isinstance(v, float | int) for v in values):
        return None
    return float(sum(v for v in values if isinstance(v, float | int)))


def effective_pue(doc: PlanDocument, fc: ForecastDocument) -> float:
    """The plan's PUE; with regions, facility over GPU energy of the whole fleet."""
    horizon = fc.total.horizon
    if doc.regions and horizon.energy_kwh > 0:
        return horizon.facility_energy_kwh / horizon.energy_kwh
    return doc.assumptions.pue


def fleet_fields(
    doc: PlanDocument,
    fc: ForecastDocument,
    energies: list[AllocationEnergy],
    embodied: list[float | None],
    models: list[ModelDisclosureDocument],
    ranges: EnergyRanges,
    d: Disclosure,
    window: tuple[str | None, str | None],
) -> dict[str, FieldDocument]:
    """The fleet's fields, in the order the report lists them."""
    a = doc.assumptions
    f, rng = ranges.total, ranges.method
    out: dict[str, FieldDocument] = {}
    no_start = "no reporting_start given (disclosure.reporting_start); the window is the horizon"
    start, end = window
    out["reporting_window_start"] = (
        value(start, "ISO 8601", "user-supplied", "scenario")
        if start
        else not_applicable("", no_start)
    )
    out["reporting_window_end"] = (
        value(end, "ISO 8601", "modelled", "start + horizon_hours")
        if end
        else not_applicable("", no_start)
    )
    out["reporting_window_hours"] = value(
        a.hours, "h", "user-supplied", "scenario horizon_hours", range_source=NO_RANGE_INPUT
    )
    gpu = sum(e.energy_kwh for e in energies)
    out["energy_gpu_kwh"] = value(gpu, "kWh", "modelled", PREDICTED, factors=f, range_source=rng)
    out["energy_gpu_mwh"] = value(
        gpu / 1000.0, "MWh", "modelled", PREDICTED, factors=f, range_source=rng
    )
    pue = effective_pue(doc, fc)
    facility = gpu * a.pue
    src = f"GPU energy × PUE {a.pue:g}"
    if doc.regions:  # each allocation at its region's PUE (the forecast's facility energy)
        facility = fc.total.horizon.facility_energy_kwh
        src = "Σ regions' GPU energy × their PUE"
    ff = ranges.of_facility()
    out["energy_facility_kwh"] = value(
        facility, "kWh", "modelled", src, factors=ff, range_source=rng
    )
    out["energy_facility_mwh"] = value(
        facility / 1000.0, "MWh", "modelled", src, factors=ff, range_source=rng
    )
    if d.host_overhead_factor is None:
        out["energy_host_kwh"] = not_applicable("kWh", "host excluded (no host_overhead_factor)")
    else:
        out["energy_host_kwh"] = value(
            gpu * (d.host_overhead_factor - 1.0),
            "kWh",
            "modelled",
            f"GPU energy × (host_overhead_factor {d.host_overhead_factor:g} − 1), user-supplied",
            factors=f,
            range_source=rng,
        )
    idle = sum(e.idle_energy_kwh for e in energies)
    out["energy_idle_kwh"] = value(
        idle,
        "kWh",
        "modelled",
        "replicas × catalog idle power × hours",
        range_source=NO_RANGE_FIXED,
    )
    out["energy_active_kwh"] = value(  # range: GPU energy's P10/P90 minus the fixed idle part
        gpu - idle,
        "kWh",
        "modelled",
        "GPU energy − idle energy",
        factors=f,
        range_source=rng,
        offset=-idle,
    )
    tokens = sum(m.output_tokens for m in fc.models)
    requests = sum(m.requests for m in fc.models)
    if tokens > 0 and all(e.prefill_share is not None for e in energies):
        prefill = sum(e.energy_kwh * (e.prefill_share or 0.0) for e in energies)
        src = prefill_split_source(list(energies))
        out["energy_prefill_j_per_output_token"] = value(
            prefill * J_PER_KWH / tokens, "J/token", "modelled", src, factors=f, range_source=rng
        )
        out["energy_decode_j_per_output_token"] = value(
            (gpu - prefill) * J_PER_KWH / tokens,
            "J/token",
            "modelled",
            src,
            factors=f,
            range_source=rng,
        )
    else:
        for key in ("energy_prefill_j_per_output_token", "energy_decode_j_per_output_token"):
            out[key] = not_applicable(
                "J/token", "no output tokens, or no TTFT recorded in the plan"
            )
    if tokens > 0:
        out["energy_j_per_output_token"] = value(
            gpu * J_PER_KWH / tokens,
            "J/token",
            "modelled",
            "GPU energy / output tokens",
            factors=f,
            range_source=rng,
        )
        out["energy_wh_per_1000_output_tokens"] = value(
            gpu * 1e6 / tokens,
            "Wh",
            "modelled",
            "GPU energy per 1,000 output tokens",
            factors=f,
            range_source=rng,
        )
    else:
        out["energy_j_per_output_token"] = not_applicable("J/token", "no output tokens")
        out["energy_wh_per_1000_output_tokens"] = not_applicable("Wh", "no output tokens")
    if requests > 0:
        out["energy_wh_per_request"] = value(
            gpu * 1000.0 / requests,
            "Wh",
            "modelled",
            "GPU energy / requests",
            factors=f,
            range_source=rng,
        )
        out["ai_energy_score_wh_per_1000_queries"] = value(
            gpu * 1e6 / requests,
            "Wh per 1,000 queries",
            "modelled",
            "GPU energy per 1,000 requests on the planned fleet at the scenario's load; the AI "
            "Energy Score measures a reference setup (H100, fixed task set): comparable in kind",
            factors=f,
            range_source=rng,
        )
    else:
        out["energy_wh_per_request"] = not_applicable("Wh", "no requests")
        out["ai_energy_score_wh_per_1000_queries"] = not_applicable("Wh", "no requests")
    flops = _sum(models, "inference_flops")
    out["inference_flops"] = (
        value(
            flops,
            "FLOP",
            "modelled",
            "Σ model entries (flops_methodology)",
            range_source=NO_RANGE_FIXED,
        )
        if flops is not None
        else not_applicable("FLOP", "a model entry is not in the catalog")
    )
    out["pue"] = value(
        pue,
        "ratio",
        "modelled" if a.pue_source or doc.regions else "user-supplied",
        "facility / GPU energy over the regions"
        if doc.regions
        else a.pue_source or "set in the scenario file",
        range_source=NO_RANGE_INPUT,
    )
    if d.wue_l_per_kwh is None:
        out["wue_l_per_kwh"] = not_applicable("L/kWh", "not given (disclosure.wue_l_per_kwh)")
        out["water_l"] = not_applicable("L", "no WUE given")
    else:
        out["wue_l_per_kwh"] = value(
            d.wue_l_per_kwh,
            "L/kWh",
            "user-supplied",
            str(d.wue_source),
            range_source=NO_RANGE_INPUT,
        )
        out["water_l"] = value(
            gpu * d.wue_l_per_kwh,
            "L",
            "modelled",
            "GPU (IT) energy × WUE",
            factors=f,
            range_source=rng,
        )
    grid_fields(doc, d, out)
    facility = emission_fields(doc, fc, d, ranges, out)
    _embodied_and_sci(doc, energies, embodied, d, facility, tokens, ranges, out)
    if d.training_energy_kwh is None:
        out["training_energy_kwh"] = not_applicable(
            "kWh",
            "not_in_scope: this disclosure covers inference; give disclosure.training_energy_kwh "
            "with its source to add it",
        )
    else:
        out["training_energy_kwh"] = value(
            d.training_energy_kwh,
            "kWh",
            "user-supplied",
            str(d.training_source),
            range_source=NO_RANGE_INPUT,
        )
    return out


def _embodied_and_sci(
    doc: PlanDocument,
    energies: list[AllocationEnergy],
    embodied: list[float | None],
    d: Disclosure,
    facility: float,
    tokens: float,
    ranges: EnergyRanges,
    out: dict[str, FieldDocument],
) -> None:
    out["embodied_lifetime_years"] = value(
        d.lifetime_years,
        "years",
        "user-supplied" if doc.assumptions.disclosure else "modelled",
        "disclosure.lifetime_years" if doc.assumptions.disclosure else "default 5 years",
        range_source=NO_RANGE_INPUT,
    )
    out["embodied_time_share"] = value(
        doc.assumptions.hours / (d.lifetime_years * HOURS_PER_YEAR),
        "fraction",
        "modelled",
        "SCI TS = window hours / (lifetime years × 8760 h)",
        range_source=NO_RANGE_FIXED,
    )
    out["embodied_resource_share"] = value(
        d.resource_share,
        "fraction",
        "user-supplied" if doc.assumptions.disclosure else "modelled",
        "SCI RS (1 = dedicated GPUs)",
        range_source=NO_RANGE_INPUT,
    )
    if any(kg is None for kg in embodied):
        missing = sorted({g for e in energies for g, _, kg in e.embodied_by_gpu if kg is None})
        reason = f"no embodied_kg_co2e in the catalog for {', '.join(missing) or 'a planned GPU'}"
        out["embodied_total_kg_co2e"] = not_applicable("kg CO2e", reason)
        out["embodied_kg_co2e"] = not_applicable("kg CO2e", reason)
        sci = not_applicable("g CO2e per 1M output tokens", reason)
        out["sci_g_co2e_per_1m_output_tokens"] = sci
        return
    per_gpu: dict[str, tuple[int, float]] = {}
    for e in energies:
        for gpu, count, per in e.embodied_by_gpu:
            n, kg = per_gpu.get(gpu, (0, per or 0.0))
            per_gpu[gpu] = (n + count, kg)
    te = sum(n * kg for n, kg in per_gpu.values())
    listed = ", ".join(f"{n}× {g} at {kg:g} kg" for g, (n, kg) in sorted(per_gpu.items()))
    out["embodied_total_kg_co2e"] = value(
        te,
        "kg CO2e",
        "modelled",
        f"SCI TE = Σ GPUs × catalog embodied_kg_co2e ({listed}; method per GPU in the catalog's "
        "embodied_source: 318 kg CO2e × tdp_w / 400 W unless a product carbon footprint is given)",
        range_source=NO_RANGE_PUBLISHED,
    )
    m = sum(kg or 0.0 for kg in embodied)
    out["embodied_kg_co2e"] = value(
        m, "kg CO2e", "modelled", "SCI M = TE × TS × RS", range_source=NO_RANGE_PUBLISHED
    )
    if tokens <= 0:
        out["sci_g_co2e_per_1m_output_tokens"] = not_applicable("g CO2e", "no output tokens")
        return
    marginal = d.marginal_g_co2_per_kwh
    average = location_average_g_co2_per_kwh(doc)  # with regions: their flat intensities
    intensity = marginal if marginal is not None else average
    which = "marginal" if marginal is not None else "location-based average (no marginal given)"
    o = facility * intensity / 1000.0
    r = tokens / 1e6
    out["sci_g_co2e_per_1m_output_tokens"] = value(
        (o + m) * 1000.0 / r,
        "g CO2e per 1M output tokens",
        "modelled",
        f"SCI = (O + M) / R; O = facility energy × {which} intensity; R = output tokens / 1e6",
        factors=ranges.of_facility(),
        range_source=ranges.method,
        offset=m * 1000.0 / r,
    )
