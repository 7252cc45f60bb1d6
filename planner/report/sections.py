"""The report's content as one list of parts, rendered to Markdown, HTML and text.

:func:`report_sections` turns the typed report document into an ordered list of
:class:`~planner.report.blocks.Part` s (blocks in :mod:`planner.report.blocks`, tables in
:mod:`planner.report.tables`). Every statement of the report (method, system boundary,
provenance, assumptions, uncertainty, warnings) is written here once;
:mod:`planner.report.markdown`, :mod:`planner.report.html` and :mod:`planner.report.render`
only lay the blocks out.
"""

from __future__ import annotations

from planner.analysis.failover import (
    FAILOVER_COLUMNS,
    FAILOVER_NOTE,
    failover_cells,
    failover_rows,
)
from planner.analysis.forecast import grid_factor
from planner.documents.report import ReportDocument
from planner.documents.uncertainty import BandDocument
from planner.report.blocks import (
    Block,
    Bullets,
    Card,
    Cards,
    Figure,
    Para,
    Part,
    band_text,
    given,
    gpus_text,
    num,
    profile_text,
    rows_text,
    table,
)
from planner.report.card_info import PUBLIC_NOTE
from planner.report.disclosure_part import disclosure_part
from planner.report.flag_view import flag_notes, flag_table
from planner.report.tables import (
    baseline_table,
    load_table,
    metric_rows,
    model_table,
    pareto_table,
    region_table,
    totals_table,
)


def _title(report: ReportDocument) -> Part:
    s = report.scenario
    meta = (
        f"Generated {report.generated_at} by wattgpu {report.wattgpu_version}"
        + (f" from {s.file}" if s.file else "")
        + f". Plan status: {report.status}."
    )
    blocks: list[Block] = [Para(report.note, "note"), Para(meta, "meta")]
    if s.description:
        blocks.append(Para(s.description))
    return Part(f"{report.title} — {s.name}", tuple(blocks), level=1)


def _band(band: BandDocument | None) -> str:
    return f"band {band_text(band)}" if band else "no band"


def _cards(report: ReportDocument) -> Cards:
    h = report.headline
    tot = report.total_bands
    figures = (
        (
            "headline-energy",
            f"Estimated GPU energy, {given(h.hours)} h (kWh)",
            h.estimated_energy_kwh,
            tot.energy_kwh if tot else None,
        ),
        (
            "headline-facility-energy",
            "Estimated facility energy incl. PUE (kWh)",
            h.estimated_facility_energy_kwh,
            tot.facility_energy_kwh if tot else None,
        ),
        (
            "headline-co2e",
            "Estimated CO2e (kg)",
            h.estimated_co2e_kg,
            tot.carbon_kg if tot else None,
        ),
        (
            "headline-cost",
            "Estimated total cost ($)",
            h.estimated_cost_usd,
            tot.cost_usd if tot else None,
        ),
    )
    return Cards(tuple(Card(ident, label, num(v), _band(b)) for ident, label, v, b in figures))


def _totals(report: ReportDocument) -> Part:
    h = report.headline
    gpus = gpus_text(h.gpus) or "none"
    return Part(
        "Fleet totals (estimated)",
        (
            _cards(report),
            totals_table(report),
            Para(f"GPUs: {gpus} ({h.gpus_total} in total)."),
            Figure("energy_cost"),
            Figure("gpu_mix"),
        ),
    )


def _method(report: ReportDocument) -> Part:
    m = report.method
    recipes = ", ".join(f"{k} = {v}" for k, v in m.chosen_recipes.items())
    return Part(
        "Method",
        (
            Para(m.description),
            Para(
                f"Predictors: {m.predictors} {m.predictors_version} (recipes: {recipes}; "
                f"reference source {m.reference_source}; intervals: {m.intervals})."
            ),
            Para("Accuracy recorded in the model card (held-out data):"),
            table(
                ["split", "target", "MdAPE", "Pearson r", "90 % coverage"],
                metric_rows(m.metrics),
                {2, 3, 4},
            ),
            Figure("accuracy"),
        ),
    )


def _boundary(report: ReportDocument) -> Part:
    b = report.system_boundary
    return Part(
        "System boundary",
        (
            Bullets(
                (
                    f"Energy: {b.energy}.",
                    f"Facility: {b.facility}.",
                    f"Carbon: {b.carbon}.",
                    "Excluded: " + "; ".join(b.excluded) + ".",
                )
            ),
        ),
    )


def _provenance(report: ReportDocument) -> Part:
    prov = report.data_provenance
    return Part(
        "Data provenance",
        (
            Para(
                "The predictors were trained only on these "
                + ("public " if prov.note == PUBLIC_NOTE else "")
                + f"measurements ({rows_text(prov.rows)}):"
            ),
            Bullets(tuple(f"{s.id} — {s.description} ({num(s.rows)} rows)" for s in prov.sources)),
            Para(f"Training-data hash: {prov.sha256}. {prov.note.capitalize()}.", "meta"),
        ),
    )


def _planned_at(headroom: float | None) -> str:
    """How replica capacity was planned: at the SLA-bound arrival rate, or at a headroom."""
    if headroom == 1.0:
        return (
            "replica capacity = the largest Poisson arrival rate meeting the SLA (serving model, "
            "docs/method.md §3), power from the load each replica serves"
        )
    return (
        "replicas planned at "
        + (f"{headroom:.0%}" if headroom is not None else "an unstated share")
        + " of saturated throughput"
    )


def _limits(report: ReportDocument) -> str:
    """The plan's limits: the power cap (each region's) and the budget, or that there is none."""
    a = report.assumptions
    if a.regions:
        caps = ", ".join(
            f"{r.name} {num(r.power_cap_kw)} kW" if r.power_cap_kw is not None else f"{r.name} none"
            for r in a.regions
        )
        cap = f"facility power cap per region, in every period: {caps}"
    elif a.power_cap_kw is not None:
        cap = f"facility power cap {num(a.power_cap_kw)} kW in every period"
    else:
        cap = "no facility power cap"
    budget = (
        "no budget"
        if a.budget_usd is None
        else f"budget {num(a.budget_usd)} $ (total cost over the horizon)"
    )
    return f"Limits: {cap}; {budget}."


def _assumptions(report: ReportDocument) -> Part:
    a = report.assumptions
    carbon_price = "none" if a.carbon_usd_per_tonne is None else f"{a.carbon_usd_per_tonne:g} $/t"
    regions = region_table(report)
    if regions is None:
        site: tuple[str, ...] = (
            f"PUE {a.pue:g} ({a.pue_source}).",
            f"Grid factor {a.grid_text}.",
            f"Electricity {a.electricity_usd_per_kwh:g} $/kWh; carbon price {carbon_price}.",
        )
    else:  # each entry at its region's PUE, grid and price: the table after the loads
        fleet = (
            f"; the fleet's effective figures: PUE {a.pue:.3g} (facility over GPU energy), grid "
            f"{a.grid.g_co2_per_kwh:.3g} gCO2e/kWh (carbon over facility energy), electricity "
            f"{a.electricity_usd_per_kwh:.3g} $/kWh (electricity cost over facility energy)"
            if a.effective_site_figures
            else ""
        )
        site = (
            "Regions: each model entry runs in one region, at that region's PUE, grid and "
            f"electricity price (table below){fleet}; carbon price {carbon_price}.",
        )
        plan = report.plan
        if plan.assumptions.grid_g_co2_per_kwh_by_period is not None:  # the regions it is of
            site += (f"Scenario grid factor {grid_factor(plan).describe()}{profile_text(plan)}.",)
    return Part(
        "Assumptions",
        (
            Bullets(
                (
                    f"Horizon {given(a.horizon_hours)} h in {a.periods} period(s); month = "
                    "730 h, year = 8760 h (the planned profile repeats).",
                    *site,
                    _limits(report),
                    f"Plan objective: minimise {a.objective_text}.",
                    f"Engine {a.engine}; {_planned_at(a.capacity_headroom)}; "
                    + ("robust (upper ITL bound)" if a.robust else "point ITL")
                    + ".",
                )
            ),
            load_table(report),
            *((regions,) if regions is not None else ()),
        ),
    )


def _uncertainty(report: ReportDocument) -> Part:
    unc = report.uncertainty
    text = unc.method if unc else "No bands (the plan has no allocations)."
    return Part("Uncertainty", (Para(text),))


def _flags(report: ReportDocument) -> Part | None:
    """The flagged allocations (none: no part)."""
    doc = report.uncertainty_flags
    if doc is None or not doc.flags:
        return None
    header, rows = flag_table(doc)
    intro = (
        f"{len(doc.flags)} planned deployment(s) may miss their SLA or rest on extrapolated "
        "predictions; each with what planning with robust: true (capacity sized on the upper "
        "ITL bound) deploys instead."
    )
    numeric = {2, 3, 6} & set(range(len(header)))
    return Part(
        "Uncertainty flags",
        (Para(intro), table(header, rows, numeric), Bullets(flag_notes(doc), "warn")),
    )


def _warnings(report: ReportDocument) -> Part:
    w = report.warnings
    blocks: list[Block] = [Bullets(tuple(w.messages) or ("none",), "warn")]
    if w.out_of_domain_allocations:
        blocks.append(Para("Out-of-domain planned deployments:"))
        blocks.append(Bullets(tuple(w.out_of_domain_allocations)))
    return Part("Warnings", tuple(blocks))


def _failover(report: ReportDocument) -> Part | None:
    """Capacity after the worst failover losses per model entry (None: no entry has one)."""
    rows = failover_rows(report.plan)
    if not rows:
        return None
    cells = [failover_cells(r, num) for r in rows]
    return Part(
        "Failover capacity", (table(FAILOVER_COLUMNS, cells, range(2, 7)), Para(FAILOVER_NOTE))
    )


#: Plan statuses that carry a fleet (the others: no plan was found).
PLANNED_STATUSES: frozenset[str] = frozenset({"optimal", "feasible"})


def _no_plan(report: ReportDocument) -> Part:
    """In place of the totals and the deployment when no fleet was planned."""
    text = (
        f"No fleet was planned (status {report.status}), so there are no energy, emission or "
        "cost estimates: the warnings below say why, and the assumptions what was asked."
    )
    return Part("Fleet totals (estimated)", (Para(text, "note"),))


def report_sections(report: ReportDocument) -> list[Part]:
    """The whole report, in reading order."""
    parts = [_title(report)]
    if report.status in PLANNED_STATUSES:
        parts += [
            _totals(report),
            Part("Per model deployment (estimated)", (model_table(report), Figure("power_load"))),
        ]
    else:
        parts.append(_no_plan(report))
    if (failover := _failover(report)) is not None:
        parts.append(failover)
    if (flags := _flags(report)) is not None:
        parts.append(flags)
    if report.baselines:
        parts.append(
            Part("Against naive fleets (same machinery)", (baseline_table(report), _why(report)))
        )
    if report.pareto:
        parts.append(
            Part(
                "Energy ↔ cost trade-off (estimated Pareto front)",
                (Para(report.pareto.method), pareto_table(report), Figure("pareto")),
            )
        )
    parts += [
        _method(report),
        _boundary(report),
        _provenance(report),
        _assumptions(report),
        _uncertainty(report),
        _warnings(report),
    ]
    if (disclosure := disclosure_part(report)) is not None:
        parts.append(disclosure)
    return parts


def _why(report: ReportDocument) -> Bullets:
    """What each naive fleet is and, where it has no plan, why (fuzz round 31: the table said
    only "no", where the plan JSON gives the reason)."""
    return Bullets(
        tuple(
            f"{b.name}: {b.description}" + ("" if b.feasible else f" — no plan: {b.reason}")
            for b in report.baselines
        )
    )
