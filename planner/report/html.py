"""The report as one self-contained HTML file (inline CSS, PNG charts embedded as base64).

No scripts, fonts or images are fetched at view time: the file opens offline in any browser.
Sections mirror :func:`planner.report.markdown.render_markdown`; the headline totals carry
element ids (``headline-energy``, ``headline-facility-energy``, ``headline-co2e``,
``headline-cost``) so tests and tools can find them.
"""

from __future__ import annotations

import base64
from html import escape
from typing import Any

from planner.report.charts import Chart
from planner.report.markdown import (
    band_text,
    baseline_table,
    load_table,
    metric_rows,
    model_table,
    num,
    pareto_table,
    rows_text,
)

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;margin:0;
color:#1d2430;background:#f6f7f9;line-height:1.45}
main{max-width:1100px;margin:0 auto;padding:24px 32px;background:#fff}
h1{font-size:1.6em;margin:0 0 4px}
h2{font-size:1.2em;margin-top:32px;border-bottom:2px solid #e3e6ea;padding-bottom:4px}
.note{background:#fff8e1;border-left:4px solid #e0a800;padding:8px 12px;margin:12px 0}
.meta{color:#5b6473;font-size:.9em}
.cards{display:grid;grid-template-columns:repeat(4,1fr);gap:12px;margin:16px 0}
.card{border:1px solid #e3e6ea;border-radius:8px;padding:12px}
.card .v{font-size:1.5em;font-weight:600}.card .l{color:#5b6473;font-size:.85em}
.card .b{color:#5b6473;font-size:.8em}
table{border-collapse:collapse;width:100%;font-size:.85em;margin:8px 0}
th,td{border-bottom:1px solid #e3e6ea;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f0f2f5}td.n{text-align:right;font-variant-numeric:tabular-nums}
.warn{color:#a33}figure{margin:16px 0}figure img{max-width:100%;border:1px solid #e3e6ea}
figcaption{color:#5b6473;font-size:.85em}.skip{color:#5b6473;font-style:italic}
"""


def _table(header: list[str], rows: list[list[str]], numeric: set[int] | None = None) -> str:
    numeric = numeric or set()
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{escape(c)}</td>' if i in numeric else f"<td>{escape(c)}</td>"
            for i, c in enumerate(r)
        )
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _card(ident: str, label: str, value: str, band: str) -> str:
    return (
        f'<div class="card"><div class="l">{escape(label)}</div>'
        f'<div class="v" id="{ident}">{escape(value)}</div>'
        f'<div class="b">{escape(band)}</div></div>'
    )


def _figure(chart: Chart) -> str:
    if chart.png is None:
        return (
            f"<figure><figcaption>{escape(chart.title)}</figcaption>"
            f'<p class="skip">Chart skipped: {escape(chart.note)}</p></figure>'
        )
    data = base64.b64encode(chart.png).decode("ascii")
    return (
        f'<figure id="chart-{escape(chart.key)}"><img alt="{escape(chart.title)}" '
        f'src="data:image/png;base64,{data}"><figcaption>{escape(chart.title)}</figcaption>'
        "</figure>"
    )


def _headline(report: dict[str, Any]) -> str:
    h = report["headline"]
    tot = (report.get("uncertainty") or {}).get("total") or {}

    def band(key: str) -> str:
        return f"band {band_text(tot.get(key))}" if tot.get(key) else "no band"

    hours = num(h["hours"])
    return (
        '<div class="cards">'
        + "".join(
            [
                _card(
                    "headline-energy",
                    f"Estimated GPU energy, {hours} h (kWh)",
                    num(h["estimated_energy_kwh"]),
                    band("energy_kwh"),
                ),
                _card(
                    "headline-facility-energy",
                    "Estimated facility energy incl. PUE (kWh)",
                    num(h["estimated_facility_energy_kwh"]),
                    band("facility_energy_kwh"),
                ),
                _card(
                    "headline-co2e",
                    "Estimated CO2e (kg)",
                    num(h["estimated_co2e_kg"]),
                    band("carbon_kg"),
                ),
                _card(
                    "headline-cost",
                    "Estimated total cost ($)",
                    num(h["estimated_cost_usd"]),
                    band("cost_usd"),
                ),
            ]
        )
        + "</div>"
    )


def _models(report: dict[str, Any]) -> str:
    return _table(*model_table(report, "NO"), numeric={3, 4, 5, 6, 7, 8, 9, 11})


def _statements(report: dict[str, Any]) -> str:
    m, b, a, w = (
        report["method"],
        report["system_boundary"],
        report["assumptions"],
        report["warnings"],
    )
    prov = report["data_provenance"]
    unc = report.get("uncertainty")
    recipes = ", ".join(f"{k} = {v}" for k, v in m["chosen_recipes"].items())
    parts = [
        "<h2>Method</h2>",
        f"<p>{escape(m['description'])}</p>",
        f"<p>Predictors: {escape(str(m['predictors']))} {escape(str(m['predictors_version']))} "
        f"(recipes: {escape(recipes)}; reference source {escape(str(m['reference_source']))}; "
        f"intervals: {escape(str(m['intervals']))}).</p>",
        "<p>Accuracy recorded in the model card (held-out data):</p>",
        _table(
            ["split", "target", "MdAPE", "Pearson r", "90 % coverage"], metric_rows(m["metrics"])
        ),
        "<h2>System boundary</h2><ul>",
        f"<li>Energy: {escape(b['energy'])}.</li>",
        f"<li>Facility: {escape(b['facility'])}.</li>",
        f"<li>Carbon: {escape(b['carbon'])}.</li>",
        "<li>Excluded: " + escape("; ".join(b["excluded"])) + ".</li></ul>",
        "<h2>Data provenance</h2>",
        "<p>The predictors were trained only on these public measurements "
        f"({escape(rows_text(prov['rows']))}):</p><ul>",
        *[
            f"<li><code>{escape(s['id'])}</code> — {escape(s['description'])} "
            f"({escape(num(s['rows']))} rows)</li>"
            for s in prov["sources"]
        ],
        f'</ul><p class="meta">Training-data hash {escape(str(prov["sha256"]))}. '
        f"{escape(prov['note'].capitalize())}.</p>",
        "<h2>Assumptions</h2><ul>",
        f"<li>Horizon {escape(num(a['horizon_hours']))} h in {a['periods']} period(s); month = "
        "730 h, year = 8760 h (the planned profile repeats).</li>",
        f"<li>PUE {a['pue']:g} ({escape(str(a['pue_source']))}).</li>",
        f"<li>Grid factor {escape(a['grid_text'])}.</li>",
        f"<li>Electricity {a['electricity_usd_per_kwh']:g} $/kWh; carbon price "
        + (
            f"{a['carbon_usd_per_tonne']:g} $/t"
            if a["carbon_usd_per_tonne"] is not None
            else "none"
        )
        + ".</li>",
        f"<li>Plan objective: minimise {escape(a['objective_text'])}.</li>",
        f"<li>Engine {escape(a['engine'])}; replica capacity = the largest Poisson arrival rate "
        "meeting the SLA (serving model, docs/method.md §3), power from the load each replica "
        "serves; " + ("robust (upper ITL bound)" if a["robust"] else "point ITL") + ".</li></ul>",
        _table(*load_table(report), numeric={2, 3, 4, 5, 6}),
        "<h2>Uncertainty</h2>",
        f"<p>{escape(unc['method'] if unc else 'No bands (the plan has no allocations).')}</p>",
        "<h2>Warnings</h2><ul>",
        *[f'<li class="warn">{escape(line)}</li>' for line in w["messages"]],
        *([] if w["messages"] else ["<li>none</li>"]),
        "</ul>",
    ]
    if w["out_of_domain_allocations"]:
        parts.append("<p>Out-of-domain planned deployments:</p><ul>")
        parts += [f"<li>{escape(x)}</li>" for x in w["out_of_domain_allocations"]]
        parts.append("</ul>")
    return "".join(parts)


def render_html(report: dict[str, Any], charts: list[Chart]) -> str:
    """One HTML document with every section and chart of the report."""
    s = report["scenario"]
    by_key = {c.key: c for c in charts}
    h = report["headline"]
    gpus = ", ".join(f"{n}× {g}" for g, n in h["gpus"].items()) or "none"
    body = [
        f"<h1>{escape(report['title'])}</h1>",
        f'<p class="meta">Scenario <b>{escape(s["name"])}</b>'
        + (f" ({escape(s['file'])})" if s.get("file") else "")
        + f" · plan status <b>{escape(report['status'])}</b> · generated "
        f"{escape(report['generated_at'])} by wattgpu {escape(report['wattgpu_version'])}</p>",
        f'<p class="note">{escape(report["note"])}</p>',
        f"<p>{escape(s.get('description') or '')}</p>",
        "<h2>Fleet totals (estimated)</h2>",
        _headline(report),
        f"<p>GPUs: {escape(gpus)} ({h['gpus_total']} in total). "
        "Estimated average power of all GPUs together "
        f"{escape(num(h['estimated_average_power_w']))} W; estimated GPU energy per 1,000 "
        f"output tokens {escape(num(h['estimated_wh_per_1000_output_tokens']))} Wh "
        f"(facility {escape(num(h['estimated_facility_wh_per_1000_output_tokens']))} Wh). Per "
        f"year: {escape(num(h['estimated_facility_energy_kwh_per_year']))} kWh facility energy, "
        f"{escape(num(h['estimated_co2e_kg_per_year']))} kg CO2e, "
        f"{escape(num(h['estimated_cost_usd_per_year']))} $.</p>",
    ]
    for key in ("energy_cost", "gpu_mix"):
        if key in by_key:
            body.append(_figure(by_key[key]))
    body += ["<h2>Per model deployment (estimated)</h2>", _models(report)]
    if "power_load" in by_key:
        body.append(_figure(by_key["power_load"]))
    if report["baselines"]:
        body += [
            "<h2>Against naive fleets (same machinery)</h2>",
            _table(*baseline_table(report), numeric={2, 3, 4}),
        ]
    body.append("<h2>Energy ↔ cost trade-off (estimated)</h2>")
    if report.get("pareto"):
        p = report["pareto"]
        body += [
            f"<p>{escape(p['method'])}</p>",
            _table(*pareto_table(report), numeric={1, 2, 3}),
        ]
    if "pareto" in by_key:
        body.append(_figure(by_key["pareto"]))
    body.append(_statements(report))
    body.append("<h2>Predictor accuracy</h2>")
    if "accuracy" in by_key:
        body.append(_figure(by_key["accuracy"]))
    title = f"{report['title']} — {s['name']}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>"
        + "\n".join(body)
        + "</main></body></html>\n"
    )
