"""The sweep section of an HTML or text report (``wattgpu report PLAN --sweep SWEEP``): the
Markdown section's paragraphs and tables as HTML, with the fan, tornado and GPU-mix charts
embedded, or as plain text laid out like the rest of the text report (underlined title, aligned
tables, no Markdown syntax)."""

from __future__ import annotations

import re
from html import escape

from planner.documents.sweep import SweepDocument
from planner.report.blocks import Block, Bullets, Para, Part, Table
from planner.report.html import _figure
from planner.report.render import parts_to_text
from planner.report.sweep_charts import sweep_charts
from planner.report.sweep_view import sweep_markdown
from predictors.core.escape import md_text

# what md_text writes for each character it escapes, and back: the HTML shows the text itself
# (fuzz round 28: a heading or paragraph showed "\|", a name "&amp;lt;" once md_text escaped it)
_MD_UNDO = {md_text(c): c for c in "&<>|*[]"}
_MD_ESCAPED = re.compile("|".join(re.escape(k) for k in _MD_UNDO))


def unescaped(text: str) -> str:
    """*text* of the Markdown section without :func:`md_text`'s escapes (one pass, exact)."""
    return _MD_ESCAPED.sub(lambda m: _MD_UNDO[m.group()], text)


def _cells(line: str) -> list[str]:
    inner = line.strip().strip("|")
    return [unescaped(c.strip()) for c in inner.split(" | ")]


def _table(lines: list[str]) -> str:
    head, body = _cells(lines[0]), [_cells(line) for line in lines[2:]]
    th = "".join(f"<th>{escape(c)}</th>" for c in head)
    rows = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in body)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{rows}</tbody></table>"


#: a table cell that is a figure (numbers, percentages, P10 / P50 / P90, '—'): right-aligned
_FIGURE = re.compile(r"^[—\d.,/ %$+-]+$")


def _text_table(lines: list[str]) -> Table:
    head, body = _cells(lines[0]), [_cells(line) for line in lines[2:]]
    numeric = {
        k for k in range(len(head)) if body and all(_FIGURE.match(r[k]) for r in body if k < len(r))
    }
    return Table(tuple(head), tuple(tuple(r) for r in body), frozenset(numeric))


def sweep_text(doc: SweepDocument) -> str:
    """The sweep section as plain text: the Markdown section's heading as an underlined title,
    its paragraphs, bullets and tables as the text report lays out its own
    (:func:`planner.report.render.parts_to_text`), names without Markdown's escapes."""
    title = "Sweep"
    blocks: list[Block] = []
    table: list[str] = []
    bullets: list[str] = []
    for line in [*sweep_markdown(doc).splitlines(), ""]:
        if table and not line.startswith("|"):
            blocks.append(_text_table(table))
            table = []
        if bullets and not line.startswith("- "):
            blocks.append(Bullets(tuple(bullets)))
            bullets = []
        if line.startswith("|"):
            table.append(line)
        elif line.startswith("## "):
            title = unescaped(line[3:])
        elif line.startswith("- "):
            bullets.append(unescaped(line[2:]))
        elif line.strip():
            blocks.append(Para(unescaped(line)))
    return parts_to_text([Part(title, tuple(blocks))])


def sweep_html(doc: SweepDocument) -> str:
    """The sweep as an HTML ``<section>`` (headings, paragraphs, tables, charts)."""
    out: list[str] = ['<section id="sweep">']
    table: list[str] = []
    for line in [*sweep_markdown(doc).splitlines(), ""]:
        if line.startswith("|"):
            table.append(line)
            continue
        if table:
            out.append(_table(table))
            table = []
        if line.startswith("## "):
            out.append(f"<h2>{escape(unescaped(line[3:]))}</h2>")
        elif line.startswith("- "):
            out.append(f"<p>• {escape(unescaped(line[2:]))}</p>")
        elif line.strip():
            out.append(f"<p>{escape(unescaped(line))}</p>")
    out += [_figure(chart) for chart in sweep_charts(doc)]
    out.append("</section>")
    return "".join(out)


def add_sweep_html(page: str, doc: SweepDocument) -> str:
    """*page* (a whole report) with the sweep section before the end of its ``<main>``."""
    head, sep, tail = page.rpartition("</main>")
    return f"{head}{sweep_html(doc)}{sep}{tail}" if sep else page + sweep_html(doc)
