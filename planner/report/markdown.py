"""The report dict of :mod:`planner.report.build` as Markdown, and the number formatting it shares
with :mod:`planner.report.html` (thousands separators, significant digits, bands)."""

from __future__ import annotations

from typing import Any

from predictors.escape import md_text

NOT_EVALUATED = "not evaluated"


def num(value: Any, digits: int = 3) -> str:
    """A number for people: thousands separators, *digits* significant digits, '—' for None."""
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    v = float(value)
    if v == 0:
        return "0"
    if abs(v) >= 10**digits:
        return f"{v:,.0f}"
    return f"{v:,.{digits}g}"


def band_text(band: dict[str, float] | None, digits: int = 3) -> str:
    """'low – high' of a band dict (or '—')."""
    if not band:
        return "—"
    return f"{num(band['low'], digits)} – {num(band['high'], digits)}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table; every cell escaped (``|``, newlines and HTML in user strings)."""
    out = ["| " + " | ".join(md_text(h) for h in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(md_text(c) for c in r) + " |" for r in rows]
    return out


def rows_text(rows: Any) -> str:
    """'power 904 rows, itl 6,506 rows' from the card's ``training_data.rows``."""
    if isinstance(rows, dict):
        return ", ".join(f"{k} {num(v)} rows" for k, v in sorted(rows.items()))
    return f"{num(rows)} rows"


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


Table = tuple[list[str], list[list[str]]]
"""(header, rows) of one report table; both renderers (Markdown, HTML) format the same cells."""


def model_table(report: dict[str, Any], no: str = "no") -> Table:
    """Per model deployment; *no* is how an out-of-domain deployment is marked."""
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
            "yes" if m["in_domain"] else no,
        ]
        for m in report["models"]
    ]
    return header, rows


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
    return ["baseline", "feasible", "GPU kWh", "cost $", "CO2e kg"], rows


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
    return ["point", "facility kWh", "cost $", "CO2e kg", "GPUs"], rows


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
    return header, rows


def render_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown (same sections as the HTML form)."""
    h = report["headline"]
    s = report["scenario"]
    lines = [
        f"# {md_text(report['title'])} — {md_text(s['name'])}",
        "",
        f"> {report['note']}",
        "",
        f"Generated {report['generated_at']} by wattgpu {report['wattgpu_version']}"
        + (f" from `{md_text(s['file']).replace('`', '')}`" if s.get("file") else "")
        + f". Plan status: **{report['status']}**.",
        "",
    ]
    if s.get("description"):
        lines += [md_text(s["description"]), ""]
    unc = report.get("uncertainty") or {}
    tot = unc.get("total") or {}
    lines += [
        "## Fleet totals (estimated)",
        "",
        *_table(
            ["quantity", f"over {num(h['hours'])} h", "band (low – high)", "per year"],
            [
                [
                    "GPU energy (kWh)",
                    num(h["estimated_energy_kwh"]),
                    band_text(tot.get("energy_kwh")),
                    num(report["forecast"]["total"]["per_year"]["energy_kwh"]),
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
                [
                    "average power of all GPUs together (W)",
                    num(h["estimated_average_power_w"]),
                    "—",
                    "—",
                ],
                [
                    "GPU energy per 1,000 output tokens (Wh)",
                    num(h["estimated_wh_per_1000_output_tokens"]),
                    "—",
                    "—",
                ],
            ],
        ),
        "",
        "GPUs: "
        + (", ".join(f"{n}× {md_text(g)}" for g, n in h["gpus"].items()) or "none")
        + f" ({h['gpus_total']} in total).",
        "",
        "## Per model deployment (estimated)",
        "",
        *_table(*model_table(report, "**no**")),
        "",
    ]
    if report["baselines"]:
        lines += [
            "## Against naive fleets (same machinery)",
            "",
            *_table(*baseline_table(report)),
            "",
        ]
    if report.get("pareto"):
        p = report["pareto"]
        lines += [
            "## Energy ↔ cost trade-off (estimated Pareto front)",
            "",
            p["method"],
            "",
            *_table(*pareto_table(report)),
            "",
        ]
    lines += _statement_sections(report)
    return "\n".join(lines) + "\n"


def _statement_sections(report: dict[str, Any]) -> list[str]:
    m, b, a, w = (
        report["method"],
        report["system_boundary"],
        report["assumptions"],
        report["warnings"],
    )
    unc = report.get("uncertainty")
    prov = report["data_provenance"]
    lines = [
        "## Method",
        "",
        m["description"],
        "",
        f"Predictors: {m['predictors']} {m['predictors_version']} (recipes: "
        + ", ".join(f"{k} = {v}" for k, v in m["chosen_recipes"].items())
        + f"; reference source {m['reference_source']}; intervals: {m['intervals']}).",
        "",
        "Accuracy recorded in the model card (held-out data):",
        "",
        *_table(
            ["split", "target", "MdAPE", "Pearson r", "90 % coverage"], metric_rows(m["metrics"])
        ),
        "",
        "## System boundary",
        "",
        f"* Energy: {b['energy']}.",
        f"* Facility: {b['facility']}.",
        f"* Carbon: {b['carbon']}.",
        "* Excluded: " + "; ".join(b["excluded"]) + ".",
        "",
        "## Data provenance",
        "",
        "The predictors were trained only on these public measurements "
        f"({rows_text(prov['rows'])}):",
        "",
        *[f"* `{s['id']}` — {s['description']} ({num(s['rows'])} rows)" for s in prov["sources"]],
        "",
        f"Training-data hash: `{prov['sha256']}`. {prov['note'].capitalize()}.",
        "",
        "## Assumptions",
        "",
        f"* Horizon {num(a['horizon_hours'])} h in {a['periods']} period(s); month = 730 h, "
        "year = 8760 h (the planned profile repeats).",
        f"* PUE {a['pue']:g} ({md_text(a['pue_source'])}).",
        f"* Grid factor {md_text(a['grid_text'])}.",
        f"* Electricity {a['electricity_usd_per_kwh']:g} $/kWh; carbon price "
        + (
            f"{a['carbon_usd_per_tonne']:g} $/t"
            if a["carbon_usd_per_tonne"] is not None
            else "none"
        )
        + ".",
        f"* Plan objective: minimise {a['objective_text']}.",
        f"* Engine {a['engine']}; replicas planned at {a['capacity_headroom']:.0%} of saturated "
        "throughput; " + ("robust (upper ITL bound)" if a["robust"] else "point ITL") + ".",
        "",
        *_table(*load_table(report)),
        "",
        "## Uncertainty",
        "",
        (unc["method"] if unc else "No bands (the plan has no allocations)."),
        "",
        "## Warnings",
        "",
        *([f"* {md_text(line)}" for line in w["messages"]] or ["* none"]),
    ]
    if w["out_of_domain_allocations"]:
        lines += ["", "Out-of-domain planned deployments:", ""]
        lines += [f"* {md_text(x)}" for x in w["out_of_domain_allocations"]]
    return lines
