"""The report's content as one list of parts, rendered to Markdown, HTML and text.

:func:`report_sections` turns the report document (its JSON values) into an ordered list of
:class:`Part` s, each a title and a few blocks: paragraphs, bullet lists, tables, and two
HTML-only blocks (headline :class:`Cards` and chart :class:`Figure` s, which repeat numbers the
tables already give). Every statement of the report (method, system boundary, provenance,
assumptions, uncertainty, warnings) is written here once; :mod:`planner.report.markdown`,
:mod:`planner.report.html` and :mod:`planner.report.render` only lay the blocks out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.text import ZERO_BELOW

NOT_EVALUATED = "not evaluated"


# --- numbers -----------------------------------------------------------------------------------


def num(value: Any, digits: int = 3) -> str:
    """A number for people: thousands separators, *digits* significant digits, '—' for None,
    0 for magnitudes below :data:`~planner.text.ZERO_BELOW` (solver round-off)."""
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    v = float(value)
    if abs(v) < ZERO_BELOW:
        return "0"
    if abs(v) >= 10**digits:
        return f"{v:,.0f}"
    return f"{v:,.{digits}g}"


def band_text(band: dict[str, float] | None, digits: int = 3) -> str:
    """'low – high' of a band dict (or '—')."""
    if not band:
        return "—"
    return f"{num(band['low'], digits)} – {num(band['high'], digits)}"


def rows_text(rows: Any) -> str:
    """'power 904 rows, itl 6,506 rows' from the card's ``training_data.rows``."""
    if isinstance(rows, dict):
        return ", ".join(f"{k} {num(v)} rows" for k, v in sorted(rows.items()))
    return f"{num(rows)} rows"


# --- blocks --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Para:
    """A paragraph; ``style`` is ``note`` (call-out), ``meta`` (small print) or ''."""

    text: str
    style: str = ""


@dataclass(frozen=True)
class Bullets:
    """A bullet list; ``style`` ``warn`` marks warnings."""

    items: tuple[str, ...]
    style: str = ""


@dataclass(frozen=True)
class Table:
    """A table of formatted cells; ``numeric`` columns are right-aligned."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Card:
    """One headline figure (HTML card with an element id)."""

    ident: str
    label: str
    value: str
    band: str


@dataclass(frozen=True)
class Cards:
    """Headline cards (HTML only: the totals table says the same)."""

    cards: tuple[Card, ...]


@dataclass(frozen=True)
class Figure:
    """The chart with this key (HTML only)."""

    key: str


Block = Para | Bullets | Table | Cards | Figure


@dataclass(frozen=True)
class Part:
    """A titled part of the report (level 1: the document title)."""

    title: str
    blocks: tuple[Block, ...]
    level: int = 2


# --- tables --------------------------------------------------------------------------------------


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


def _table(header: list[str], rows: list[list[str]], numeric: set[int] | None = None) -> Table:
    return Table(tuple(header), tuple(tuple(r) for r in rows), frozenset(numeric or ()))


def totals_table(report: dict[str, Any]) -> Table:
    """Fleet totals over the horizon, their bands and per year."""
    h = report["headline"]
    tot = (report.get("uncertainty") or {}).get("total") or {}
    per_year = report["forecast"]["total"]["per_year"]
    rows = [
        [
            "GPU energy (kWh)",
            num(h["estimated_energy_kwh"]),
            band_text(tot.get("energy_kwh")),
            num(per_year["energy_kwh"]),
        ],
        [
            "facility energy incl. PUE (kWh)",
            num(h["estimated_facility_energy_kwh"]),
            band_text(tot.get("facility_energy_kwh")),
            num(h["estimated_facility_energy_kwh_per_year"]),
        ],
        [
            "CO2e (kg)",
            num(h["estimated_co2e_kg"]),
            band_text(tot.get("carbon_kg")),
            num(h["estimated_co2e_kg_per_year"]),
        ],
        [
            "total cost ($)",
            num(h["estimated_cost_usd"]),
            band_text(tot.get("cost_usd")),
            num(h["estimated_cost_usd_per_year"]),
        ],
        ["average power of all GPUs together (W)", num(h["estimated_average_power_w"]), "—", "—"],
        [
            "GPU energy per 1,000 output tokens (Wh)",
            num(h["estimated_wh_per_1000_output_tokens"]),
            "—",
            "—",
        ],
        [
            "facility energy per 1,000 output tokens (Wh)",
            num(h["estimated_facility_wh_per_1000_output_tokens"]),
            "—",
            "—",
        ],
    ]
    header = ["quantity", f"over {num(h['hours'])} h", "band (low – high)", "per year"]
    return _table(header, rows, {1, 3})


def model_table(report: dict[str, Any]) -> Table:
    """Per model deployment."""
    header = [
        "entry",
        "model",
        "deployment",
        "GPUs",
        "GPU kWh",
        "facility kWh",
        "Wh / 1k output tokens",
        "Wh / request",
        "avg W",
        "CO2e kg",
        "CO2e band kg",
        "cost $",
        "in domain",
        "ITL ms at served load / at capacity (SLA)",
    ]
    rows = [
        [
            m["name"],
            m["model"],
            ", ".join(f"{d['replicas']}× {d['gpu']} TP{d['tp']}" for d in m["deployments"]),
            str(m["gpus_used"]),
            num(m["estimated_energy_kwh"]),
            num(m["estimated_facility_energy_kwh"]),
            num(m["estimated_wh_per_1000_output_tokens"]),
            num(m["estimated_wh_per_request"]),
            num(m["estimated_average_power_w"]),
            num(m["estimated_co2e_kg"]),
            band_text((m.get("uncertainty") or {}).get("carbon_kg")),
            num(m["estimated_cost_usd"]),
            "yes" if m["in_domain"] else "NO",
            _itl_text(m),
        ]
        for m in report["models"]
    ]
    return _table(header, rows, {3, 4, 5, 6, 7, 8, 9, 11})


def _itl_text(m: dict[str, Any]) -> str:
    """'9.4 / 42.5 (50)' per deployment: mean ITL at the load served in the busiest period /
    ITL at capacity, SLA in brackets ('—' where a saved plan predates the served-load ITL)."""

    def ms(value: float | None) -> str:
        return num(None if value is None else 1000 * value)

    parts = [f"{ms(d.get('itl_s_at_served_load'))} / {ms(d['itl_s'])}" for d in m["deployments"]]
    return "; ".join(parts) + f" ({num(1000 * m['itl_sla_s'])})"


def baseline_table(report: dict[str, Any]) -> Table:
    """The naive fleets planned by the same machinery."""
    rows = [
        [
            b["name"],
            "yes" if b["feasible"] else "no",
            num(b["estimated_energy_kwh"]),
            num(b["estimated_cost_usd"]),
            num(b["estimated_co2e_kg"]),
        ]
        for b in report["baselines"]
    ]
    return _table(["baseline", "feasible", "GPU kWh", "cost $", "CO2e kg"], rows, {2, 3, 4})


def pareto_table(report: dict[str, Any]) -> Table:
    """The points of the energy ↔ cost front."""
    rows = [
        [
            q["label"],
            num(q["facility_energy_kwh"]),
            num(q["cost_usd"]),
            num(q["carbon_kg"]),
            ", ".join(f"{n}× {g}" for g, n in q["gpus"].items()),
        ]
        for q in report["pareto"]["points"]
    ]
    return _table(["point", "facility kWh", "cost $", "CO2e kg", "GPUs"], rows, {1, 2, 3})


def load_table(report: dict[str, Any]) -> Table:
    """The assumed load and SLA of every model entry."""
    header = [
        "entry",
        "precision",
        "mean req/s",
        "peak req/s",
        "input tokens",
        "output tokens",
        "ITL SLA ms",
    ]
    rows = [
        [
            x["name"],
            str(x["precision"]),
            num(x["mean_requests_per_s"]),
            num(x["peak_requests_per_s"]),
            num(x["input_tokens"]),
            num(x["output_tokens"]),
            num(x["itl_sla_ms"]),
        ]
        for x in report["assumptions"]["loads"]
    ]
    return _table(header, rows, {2, 3, 4, 5, 6})


# --- parts ---------------------------------------------------------------------------------------


def _title(report: dict[str, Any]) -> Part:
    s = report["scenario"]
    meta = (
        f"Generated {report['generated_at']} by wattgpu {report['wattgpu_version']}"
        + (f" from {s['file']}" if s.get("file") else "")
        + f". Plan status: {report['status']}."
    )
    blocks: list[Block] = [Para(report["note"], "note"), Para(meta, "meta")]
    if s.get("description"):
        blocks.append(Para(s["description"]))
    return Part(f"{report['title']} — {s['name']}", tuple(blocks), level=1)


def _cards(report: dict[str, Any]) -> Cards:
    h = report["headline"]
    tot = (report.get("uncertainty") or {}).get("total") or {}

    def band(key: str) -> str:
        return f"band {band_text(tot.get(key))}" if tot.get(key) else "no band"

    return Cards(
        (
            Card(
                "headline-energy",
                f"Estimated GPU energy, {num(h['hours'])} h (kWh)",
                num(h["estimated_energy_kwh"]),
                band("energy_kwh"),
            ),
            Card(
                "headline-facility-energy",
                "Estimated facility energy incl. PUE (kWh)",
                num(h["estimated_facility_energy_kwh"]),
                band("facility_energy_kwh"),
            ),
            Card(
                "headline-co2e",
                "Estimated CO2e (kg)",
                num(h["estimated_co2e_kg"]),
                band("carbon_kg"),
            ),
            Card(
                "headline-cost",
                "Estimated total cost ($)",
                num(h["estimated_cost_usd"]),
                band("cost_usd"),
            ),
        )
    )


def _totals(report: dict[str, Any]) -> Part:
    h = report["headline"]
    gpus = ", ".join(f"{n}× {g}" for g, n in h["gpus"].items()) or "none"
    return Part(
        "Fleet totals (estimated)",
        (
            _cards(report),
            totals_table(report),
            Para(f"GPUs: {gpus} ({h['gpus_total']} in total)."),
            Figure("energy_cost"),
            Figure("gpu_mix"),
        ),
    )


def _method(report: dict[str, Any]) -> Part:
    m = report["method"]
    recipes = ", ".join(f"{k} = {v}" for k, v in m["chosen_recipes"].items())
    return Part(
        "Method",
        (
            Para(m["description"]),
            Para(
                f"Predictors: {m['predictors']} {m['predictors_version']} (recipes: {recipes}; "
                f"reference source {m['reference_source']}; intervals: {m['intervals']})."
            ),
            Para("Accuracy recorded in the model card (held-out data):"),
            _table(
                ["split", "target", "MdAPE", "Pearson r", "90 % coverage"],
                metric_rows(m["metrics"]),
                {2, 3, 4},
            ),
            Figure("accuracy"),
        ),
    )


def _boundary(report: dict[str, Any]) -> Part:
    b = report["system_boundary"]
    return Part(
        "System boundary",
        (
            Bullets(
                (
                    f"Energy: {b['energy']}.",
                    f"Facility: {b['facility']}.",
                    f"Carbon: {b['carbon']}.",
                    "Excluded: " + "; ".join(b["excluded"]) + ".",
                )
            ),
        ),
    )


def _provenance(report: dict[str, Any]) -> Part:
    prov = report["data_provenance"]
    return Part(
        "Data provenance",
        (
            Para(
                "The predictors were trained only on these public measurements "
                f"({rows_text(prov['rows'])}):"
            ),
            Bullets(
                tuple(
                    f"{s['id']} — {s['description']} ({num(s['rows'])} rows)"
                    for s in prov["sources"]
                )
            ),
            Para(f"Training-data hash: {prov['sha256']}. {prov['note'].capitalize()}.", "meta"),
        ),
    )


def _assumptions(report: dict[str, Any]) -> Part:
    a = report["assumptions"]
    carbon_price = (
        "none" if a["carbon_usd_per_tonne"] is None else f"{a['carbon_usd_per_tonne']:g} $/t"
    )
    headroom = a.get("capacity_headroom")
    planned_at = (
        "replica capacity = the largest Poisson arrival rate meeting the SLA (serving model, "
        "docs/method.md §3), power from the load each replica serves"
        if headroom == 1.0
        else "replicas planned at "
        + (f"{headroom:.0%}" if headroom is not None else "an unstated share")
        + " of saturated throughput"
    )
    return Part(
        "Assumptions",
        (
            Bullets(
                (
                    f"Horizon {num(a['horizon_hours'])} h in {a['periods']} period(s); month = "
                    "730 h, year = 8760 h (the planned profile repeats).",
                    f"PUE {a['pue']:g} ({a['pue_source']}).",
                    f"Grid factor {a['grid_text']}.",
                    f"Electricity {a['electricity_usd_per_kwh']:g} $/kWh; carbon price "
                    f"{carbon_price}.",
                    f"Plan objective: minimise {a['objective_text']}.",
                    f"Engine {a['engine']}; {planned_at}; "
                    + ("robust (upper ITL bound)" if a["robust"] else "point ITL")
                    + ".",
                )
            ),
            load_table(report),
        ),
    )


def _uncertainty(report: dict[str, Any]) -> Part:
    unc = report.get("uncertainty")
    text = unc["method"] if unc else "No bands (the plan has no allocations)."
    return Part("Uncertainty", (Para(text),))


def _warnings(report: dict[str, Any]) -> Part:
    w = report["warnings"]
    blocks: list[Block] = [Bullets(tuple(w["messages"]) or ("none",), "warn")]
    if w["out_of_domain_allocations"]:
        blocks.append(Para("Out-of-domain planned deployments:"))
        blocks.append(Bullets(tuple(w["out_of_domain_allocations"])))
    return Part("Warnings", tuple(blocks))


def report_sections(report: dict[str, Any]) -> list[Part]:
    """The whole report, in reading order (the report document's JSON values)."""
    parts = [
        _title(report),
        _totals(report),
        Part("Per model deployment (estimated)", (model_table(report), Figure("power_load"))),
    ]
    if report["baselines"]:
        parts.append(Part("Against naive fleets (same machinery)", (baseline_table(report),)))
    if report.get("pareto"):
        p = report["pareto"]
        parts.append(
            Part(
                "Energy ↔ cost trade-off (estimated Pareto front)",
                (Para(p["method"]), pareto_table(report), Figure("pareto")),
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
    return parts
