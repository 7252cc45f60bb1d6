"""The report as one self-contained HTML file (inline CSS, charts as inline SVG; the sweep
section's PNG charts embedded as base64).

No scripts, fonts or images are fetched at view time: the file opens offline in any browser.
The parts are those of :func:`planner.report.sections.report_sections` (the same as the
Markdown and text forms) plus the headline cards and the charts; the headline totals carry
element ids (``headline-energy``, ``headline-facility-energy``, ``headline-co2e``,
``headline-cost``) so tests and tools can find them.
"""

from __future__ import annotations

import base64
from html import escape

from planner.documents.report import ReportDocument
from planner.report.blocks import Block, Bullets, Cards, Figure, Para, Part, Table
from planner.report.charts import Chart
from planner.report.sections import report_sections

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
figure svg{display:block;max-width:100%;height:auto;border:1px solid #e3e6ea;background:#fff}
figcaption{color:#5b6473;font-size:.85em}.skip{color:#5b6473;font-style:italic}
"""


def _table(t: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in t.header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{escape(c)}</td>' if i in t.numeric else f"<td>{escape(c)}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in t.rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cards(block: Cards) -> str:
    return (
        '<div class="cards">'
        + "".join(
            f'<div class="card"><div class="l">{escape(c.label)}</div>'
            f'<div class="v" id="{escape(c.ident)}">{escape(c.value)}</div>'
            f'<div class="b">{escape(c.band)}</div></div>'
            for c in block.cards
        )
        + "</div>"
    )


def _figure(chart: Chart) -> str:
    caption = f"<figcaption>{escape(chart.title)}</figcaption>"
    if chart.svg is not None:
        return f'<figure id="chart-{escape(chart.key)}">{chart.svg}{caption}</figure>'
    if chart.png is None:
        return f'<figure>{caption}<p class="skip">Chart skipped: {escape(chart.note)}</p></figure>'
    data = base64.b64encode(chart.png).decode("ascii")
    return (
        f'<figure id="chart-{escape(chart.key)}"><img alt="{escape(chart.title)}" '
        f'src="data:image/png;base64,{data}">{caption}</figure>'
    )


def _block(block: Block, charts: dict[str, Chart]) -> str:
    if isinstance(block, Para):
        css = f' class="{block.style}"' if block.style else ""
        return f"<p{css}>{escape(block.text)}</p>"
    if isinstance(block, Bullets):
        css = f' class="{block.style}"' if block.style else ""
        return "<ul>" + "".join(f"<li{css}>{escape(i)}</li>" for i in block.items) + "</ul>"
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Cards):
        return _cards(block)
    if isinstance(block, Figure) and block.key in charts:
        return _figure(charts[block.key])
    return ""


def parts_to_html(parts: list[Part], charts: list[Chart]) -> str:
    """The body of the document: every part with its blocks and charts."""
    by_key = {c.key: c for c in charts}
    out = []
    for part in parts:
        out.append(f"<h{part.level}>{escape(part.title)}</h{part.level}>")
        out += [html for block in part.blocks if (html := _block(block, by_key))]
    return "\n".join(out)


def render_html(report: ReportDocument, charts: list[Chart]) -> str:
    """One HTML document with every part and chart of the report."""
    title = f"{report.title} — {report.scenario.name}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>"
        + parts_to_html(report_sections(report), charts)
        + "</main></body></html>\n"
    )
