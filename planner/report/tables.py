"""The report's tables, read from the typed report document: totals, per model deployment,
baselines, Pareto points, loads and the model card's accuracy."""

from __future__ import annotations

from typing import Any

from planner.documents.pools import deployment_text
from planner.documents.report import ModelSection, ReportDocument
from planner.report.blocks import NOT_EVALUATED, Table, band_text, given, gpus_text, num, table
from planner.report.unit_ranges import entries_without_interval


def metric_rows(metrics: dict[str, Any]) -> list[list[str]]:
    """Rows (split, target, MdAPE, r, coverage) of the card metrics for the report tables."""
    rows = []
    for split in ("unseen_gpus", "unseen_llms", "cross_validation"):
        value = metrics.get(split)
        if not isinstance(value, dict):
            rows.append([split.replace("_", " "), "—", NOT_EVALUATED, "—", "—"])
            continue
        for target, m in sorted(value.items()):
            rows.append(
                [
                    split.replace("_", " "),
                    target,
                    f"{num(m.get('mdape_pct'))} %",
                    num(m.get("pearson_r")),
                    f"{num(m.get('coverage_90_pct'))} %",
                ]
            )
    return rows


def totals_table(report: ReportDocument) -> Table:
    """Fleet totals over the horizon, their bands and per year."""
    h = report.headline
    tot = report.total_bands
    rows = [
        [
            "GPU energy (kWh)",
            num(h.estimated_energy_kwh),
            band_text(tot.energy_kwh if tot else None),
            num(report.forecast.total.per_year.energy_kwh),
        ],
        [
            "facility energy incl. PUE (kWh)",
            num(h.estimated_facility_energy_kwh),
            band_text(tot.facility_energy_kwh if tot else None),
            num(h.estimated_facility_energy_kwh_per_year),
        ],
        [
            "CO2e (kg)",
            num(h.estimated_co2e_kg),
            band_text(tot.carbon_kg if tot else None),
            num(h.estimated_co2e_kg_per_year),
        ],
        [
            "total cost ($)",
            num(h.estimated_cost_usd),
            band_text(tot.cost_usd if tot else None),
            num(h.estimated_cost_usd_per_year),
        ],
        ["average power of all GPUs together (W)", num(h.estimated_average_power_w), "—", "—"],
        [
            "GPU energy per 1,000 output tokens (Wh)",
            num(h.estimated_wh_per_1000_output_tokens),
            "—",
            "—",
        ],
        [
            "facility energy per 1,000 output tokens (Wh)",
            num(h.estimated_facility_wh_per_1000_output_tokens),
            "—",
            "—",
        ],
    ]
    header = ["quantity", f"over {given(h.hours)} h", "band (low – high)", "per year"]
    return table(header, rows, {1, 3})


MODEL_HEADER: tuple[str, ...] = (
    "entry",
    "model",
    "deployment",
    "GPUs",
    "GPU kWh",
    "facility kWh",
    "Wh / 1k output tokens",
    "Wh / request",
    "avg W",
    "CO2e kg ({basis})",
    "CO2e band kg",
    "cost $",
    "in domain",
    "ITL ms at served load / at capacity (SLA)",
)


#: The basis of a CO2e figure the plan states (its ``carbon_kg``): each period's grid factor,
#: which is the hourly profile where a site has one, else the site's annual average.
HOURLY_BASIS = "hourly grid"
#: The basis of a CO2e figure on the annual-average intensity of the site (the disclosure's
#: ``emissions_location_kg_co2e``, and the plan's carbon where no site has a profile).
LOCATION_BASIS = "location-based"


def carbon_basis(report: ReportDocument) -> str:
    """The basis of the plan's CO2e figures: :data:`HOURLY_BASIS` when some deployment's carbon
    is counted on an hourly grid profile (its region's, or the plan's without regions: the
    forecast's ``hourly_grid``), else :data:`LOCATION_BASIS` (the site's annual average, as the
    disclosure's location-based figures). Until fuzz round 31 a profile in a region no
    deployment uses labelled the column "hourly grid" while the forecast said it was not."""
    return HOURLY_BASIS if report.forecast.hourly_grid else LOCATION_BASIS


def _model_row(
    m: ModelSection, no_interval: list[str], percentile: float | None = None
) -> list[str]:
    band = (
        "none: no power interval"
        if m.name in no_interval
        else band_text(m.uncertainty.carbon_kg if m.uncertainty else None)
    )
    return [
        m.name,
        m.model,
        ", ".join(
            f"{d.replicas}× {deployment_text(d.gpu, d.layout, d.pools)}"
            + (f" in {d.region}" if d.region else "")
            for d in m.deployments
        ),
        str(m.gpus_used),
        num(m.estimated_energy_kwh),
        num(m.estimated_facility_energy_kwh),
        num(m.estimated_wh_per_1000_output_tokens),
        num(m.estimated_wh_per_request),
        num(m.estimated_average_power_w),
        num(m.estimated_co2e_kg),
        band,
        num(m.estimated_cost_usd),
        "—" if not m.deployments else "yes" if m.in_domain else "NO",  # nothing deployed
        _itl_text(m, percentile),
    ]


def model_table(report: ReportDocument) -> Table:
    """Per model deployment (an entry of disaggregated units without a power interval: no CO2e
    band, :mod:`planner.report.unit_ranges`)."""
    whole = entries_without_interval(report.plan)[0]
    percentiles = {e.name: e.sla_percentile for e in report.plan.models}
    rows = [_model_row(m, whole, percentiles.get(m.name)) for m in report.models]
    header = [h.format(basis=carbon_basis(report)) for h in MODEL_HEADER]
    return table(header, rows, {3, 4, 5, 6, 7, 8, 9, 11})


def _itl_text(m: ModelSection, percentile: float | None = None) -> str:
    """'9.4 / 42.5 (50)' per deployment: mean ITL at the load served in the busiest period /
    ITL at capacity, SLA in brackets ('—' where a saved plan predates the served-load ITL).
    With an SLA *percentile* each figure says which it is, '9.4 mean / 48.1 p99.9 (50)': the
    served-load ITL is the mean, the ITL at capacity (and the SLA) the percentile's."""

    def ms(value: float | None, what: str) -> str:
        text = num(None if value is None else 1000 * value)
        return text if value is None or percentile is None else f"{text} {what}"

    at = "" if percentile is None else f"p{percentile:g}"
    parts = [f"{ms(d.itl_s_at_served_load, 'mean')} / {ms(d.itl_s, at)}" for d in m.deployments]
    return "; ".join(parts) + f" ({num(1000 * m.itl_sla_s)})"


def baseline_table(report: ReportDocument) -> Table:
    """The naive fleets planned by the same machinery."""
    rows = [
        [
            b.name,
            "yes" if b.feasible else "no",
            num(b.estimated_energy_kwh),
            num(b.estimated_cost_usd),
            num(b.estimated_co2e_kg),
        ]
        for b in report.baselines
    ]
    return table(["baseline", "feasible", "GPU kWh", "cost $", "CO2e kg"], rows, {2, 3, 4})


def pareto_table(report: ReportDocument) -> Table:
    """The points of the energy ↔ cost front (none without a front)."""
    rows = [
        [
            q.label,
            num(q.facility_energy_kwh),
            num(q.cost_usd),
            num(q.carbon_kg),
            gpus_text(q.gpus),
        ]
        for q in (report.pareto.points if report.pareto else [])
    ]
    return table(["point", "facility kWh", "cost $", "CO2e kg", "GPUs"], rows, {1, 2, 3})


def load_table(report: ReportDocument) -> Table:
    """The assumed load and SLA of every model entry."""
    header = [
        "entry",
        "precision",
        "mean req/s",
        "peak req/s",
        "input tokens",
        "output tokens",
        "ITL SLA ms",
        "TTFT SLA ms",
        "min replicas",
    ]
    rows = [
        [
            x.name,
            str(x.precision),
            num(x.mean_requests_per_s),
            num(x.peak_requests_per_s),
            num(x.input_tokens),
            num(x.output_tokens),
            num(x.itl_sla_ms),
            num(x.ttft_sla_ms),  # — where the entry has none
            num(x.min_replicas),
        ]
        for x in report.assumptions.loads
    ]
    return table(header, rows, {2, 3, 4, 5, 6, 7, 8})


def region_table(report: ReportDocument) -> Table | None:
    """Per region of a plan with regions: its PUE, electricity price, grid (the range of its
    hourly profile) and power cap, and the plan's facility energy, cost and carbon there (None
    without)."""
    regions = report.plan.regions or []
    if not regions:
        return None
    header = [
        "region",
        "PUE",
        "$/kWh",
        "gCO2e/kWh",
        "cap kW",
        "facility kWh",
        "cost $",
        "CO2e kg",
    ]
    rows = []
    for r in regions:
        grid = num(r.grid_g_co2_per_kwh)
        if r.grid_g_co2_per_kwh_by_period:
            profile = r.grid_g_co2_per_kwh_by_period
            grid = f"{num(min(profile))}–{num(max(profile))} hourly"
        t = r.totals
        rows.append(
            [
                r.name,
                f"{r.pue:g}",
                f"{r.electricity_usd_per_kwh:g}",
                grid,
                "none" if r.power_cap_kw is None else num(r.power_cap_kw),
                num(t.facility_energy_kwh),
                num(t.cost_usd),
                num(t.carbon_kg),
            ]
        )
    return table(header, rows, {1, 2, 4, 5, 6, 7})
