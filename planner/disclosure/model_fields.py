"""The disclosure fields of one model entry: identity (id, parameters to 2 significant figures,
precision, checkpoint), inference FLOPs, energy per functional unit, idle/active energy,
emissions and the SCI rate."""

from __future__ import annotations

from planner.disclosure.energy import AllocationEnergy, prefill_split_source
from planner.disclosure.fields import (
    NO_RANGE_FIXED,
    NO_RANGE_INPUT,
    NO_RANGE_PUBLISHED,
    not_applicable,
    sig2,
    value,
)
from planner.disclosure.flops import request_flops
from planner.disclosure.ranges import EnergyRanges
from planner.documents.disclosure import FieldDocument
from planner.documents.forecast import ModelForecastDocument
from planner.documents.plan import PlanDocument
from planner.scenario.disclosure import Disclosure
from predictors.catalog.store import Catalog

J_PER_KWH = 3.6e6
PREDICTED = "wattgpu plan: power predictor × served load × period hours (plan JSON allocations)"


def _identity(
    doc: PlanDocument, name: str, catalog: Catalog, fields: dict[str, FieldDocument]
) -> dict[str, object] | None:
    m = doc.model(name)
    lid = catalog.try_resolve_llm(m.model)
    fields["model_id"] = value(m.model, "", "user-supplied", "scenario model entry")
    fields["checkpoint"] = value(
        m.model, "", "user-supplied", "Hugging Face repository id; revision not recorded"
    )
    if lid is None:
        reason = f"{m.model} is not in the catalog (catalogs/llms.csv or a user overlay)"
        for key in ("total_params_b", "active_params_b"):
            fields[key] = not_applicable("B", reason)
        fields["precision"] = value(m.precision or "checkpoint", "", "user-supplied", "scenario")
        return None
    llm = catalog.llm(lid)
    src = f"catalogs/llms.csv: {llm.get('source')}"
    fields["total_params_b"] = value(
        sig2(float(llm["total_params_b"])), "B", "modelled", src, range_source=NO_RANGE_PUBLISHED
    )
    fields["active_params_b"] = value(
        sig2(float(llm["active_params_b"])), "B", "modelled", src, range_source=NO_RANGE_PUBLISHED
    )
    precision = m.precision or f"checkpoint ({llm.get('default_dtype')})"
    fields["precision"] = value(
        precision,
        "",
        "modelled",
        "the plan's precision: the scenario's, else the checkpoint's (catalog default_dtype)",
    )
    return llm


def model_fields(
    doc: PlanDocument,
    mf: ModelForecastDocument,
    mine: list[tuple[AllocationEnergy, float | None]],
    ranges: EnergyRanges,
    catalog: Catalog,
    d: Disclosure,
) -> dict[str, FieldDocument]:
    """The fields of model entry *mf* from its allocations' energy facts *mine*."""
    fields: dict[str, FieldDocument] = {}
    llm = _identity(doc, mf.name, catalog, fields)
    m = doc.model(mf.name)
    f = ranges.of(mf.name)
    rng = ranges.method
    fields["requests"] = value(
        mf.requests,
        "requests",
        "user-supplied",
        "scenario load × hours",
        range_source=NO_RANGE_INPUT,
    )
    fields["output_tokens"] = value(
        mf.output_tokens,
        "tokens",
        "user-supplied",
        "requests × scenario output_tokens",
        range_source=NO_RANGE_INPUT,
    )
    if llm is None:
        fields["inference_flops_per_request"] = not_applicable("FLOP", "model not in catalog")
        fields["inference_flops"] = not_applicable("FLOP", "model not in catalog")
    else:
        per = request_flops(llm, m.input_tokens, m.output_tokens)
        src = (
            f"2·N_active·tokens {per.linear:.4g} + attention {per.attention:.4g} FLOP at "
            f"{m.input_tokens:g} prompt / {m.output_tokens:g} output tokens (catalog config)"
        )
        fields["inference_flops_per_request"] = value(
            per.total, "FLOP", "modelled", src, range_source=NO_RANGE_FIXED
        )
        fields["inference_flops"] = value(
            per.total * mf.requests,
            "FLOP",
            "modelled",
            "per request × requests",
            range_source=NO_RANGE_FIXED,
        )
    energy = sum(e.energy_kwh for e, _ in mine)
    fields["energy_gpu_kwh"] = value(
        energy, "kWh", "modelled", PREDICTED, factors=f, range_source=rng
    )
    fields["energy_facility_kwh"] = value(
        energy * doc.entry_site(mf.name)[0],
        "kWh",
        "modelled",
        "GPU energy × PUE",
        factors=f,
        range_source=rng,
    )
    idle = sum(e.idle_energy_kwh for e, _ in mine)
    fields["energy_idle_kwh"] = value(
        idle,
        "kWh",
        "modelled",
        "replicas × catalog idle power × hours",
        range_source=NO_RANGE_FIXED,
    )
    fields["energy_active_kwh"] = value(
        energy - idle,
        "kWh",
        "modelled",
        "GPU energy − idle energy",
        factors=f,
        range_source=rng,
        offset=-idle,  # range: GPU energy's P10/P90 minus the fixed idle part
    )
    tokens = mf.output_tokens
    if tokens > 0:
        j_token = energy * J_PER_KWH / tokens
        fields["energy_j_per_output_token"] = value(
            j_token,
            "J/token",
            "modelled",
            "GPU energy / output tokens",
            factors=f,
            range_source=rng,
        )
        if all(e.prefill_share is not None for e, _ in mine):
            prefill = sum(e.energy_kwh * (e.prefill_share or 0.0) for e, _ in mine)
            src = prefill_split_source([e for e, _ in mine])
            fields["energy_prefill_j_per_output_token"] = value(
                prefill * J_PER_KWH / tokens,
                "J/token",
                "modelled",
                src,
                factors=f,
                range_source=rng,
            )
            fields["energy_decode_j_per_output_token"] = value(
                (energy - prefill) * J_PER_KWH / tokens,
                "J/token",
                "modelled",
                src,
                factors=f,
                range_source=rng,
            )
        else:
            for key in ("energy_prefill_j_per_output_token", "energy_decode_j_per_output_token"):
                fields[key] = not_applicable("J/token", "the plan records no TTFT estimate")
        fields["energy_wh_per_1000_output_tokens"] = value(
            energy * 1e6 / tokens,
            "Wh",
            "modelled",
            "GPU energy per 1,000 output tokens",
            factors=f,
            range_source=rng,
        )
    else:
        for key, unit in (
            ("energy_j_per_output_token", "J/token"),
            ("energy_prefill_j_per_output_token", "J/token"),
            ("energy_decode_j_per_output_token", "J/token"),
            ("energy_wh_per_1000_output_tokens", "Wh"),
        ):
            fields[key] = not_applicable(unit, "no output tokens")
    fields["energy_wh_per_request"] = (
        value(
            energy * 1000.0 / mf.requests,
            "Wh",
            "modelled",
            "GPU energy / requests",
            factors=f,
            range_source=rng,
        )
        if mf.requests > 0
        else not_applicable("Wh", "no requests")
    )
    pue, grid = doc.entry_site(mf.name)
    facility = energy * pue
    fields["emissions_location_kg_co2e"] = value(
        facility * grid / 1000.0,
        "kg CO2e",
        "modelled",
        "facility energy × location-based grid",
        factors=f,
        range_source=rng,
    )
    parts = [kg for _, kg in mine]
    if any(kg is None for kg in parts):
        missing = sorted({g for e, _ in mine for g, _, kg in e.embodied_by_gpu if kg is None})
        reason = f"no embodied_kg_co2e in the catalog for {', '.join(missing) or 'a GPU'}"
        fields["embodied_kg_co2e"] = not_applicable("kg CO2e", reason)
        sci = not_applicable("g CO2e per 1M output tokens", reason)
        fields["sci_g_co2e_per_1m_output_tokens"] = sci
        return fields
    embodied = sum(kg or 0.0 for kg in parts)
    fields["embodied_kg_co2e"] = value(
        embodied,
        "kg CO2e",
        "modelled",
        "SCI M = TE × TS × RS (catalog embodied_kg_co2e)",
        range_source=NO_RANGE_PUBLISHED,
    )
    if tokens <= 0:
        fields["sci_g_co2e_per_1m_output_tokens"] = not_applicable("g CO2e", "no output tokens")
    else:
        intensity = d.marginal_g_co2_per_kwh if d.marginal_g_co2_per_kwh is not None else grid
        o = facility * intensity / 1000.0
        fields["sci_g_co2e_per_1m_output_tokens"] = value(
            (o + embodied) * 1000.0 / (tokens / 1e6),
            "g CO2e per 1M output tokens",
            "modelled",
            "SCI = (O + M) / R, R = output tokens / 1e6",
            factors=f,
            range_source=rng,
            offset=embodied * 1000.0 / (tokens / 1e6),
        )
    return fields
