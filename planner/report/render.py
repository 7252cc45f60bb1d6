"""The report document in every format of ``wattgpu report``: md, html, json and text.

Markdown, HTML and text lay out the same parts (:func:`planner.report.sections.report_sections`);
JSON is the :class:`~planner.documents.report.ReportDocument` itself (non-finite numbers as
null).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from planner.documents.report import ReportDocument
from planner.report.blocks import Bullets, Para, Part, Table
from planner.report.markdown import render_markdown
from planner.report.sections import report_sections
from planner.text import to_json

REPORT_FORMATS: tuple[str, ...] = ("md", "html", "json", "text", "spdx", "cyclonedx")
#: Line width of paragraphs and bullets in the text form (tables are never wrapped).
TEXT_WIDTH = 100


def _text_table(t: Table) -> list[str]:
    widths = [len(h) for h in t.header]
    for row in t.rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(
            c.rjust(w) if k in t.numeric else c.ljust(w)
            for k, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return [line(t.header), "  ".join("-" * w for w in widths), *(line(r) for r in t.rows)]


def _wrap(text: str, initial_indent: str = "", subsequent_indent: str = "") -> list[str]:
    """*text* wrapped at :data:`TEXT_WIDTH`, a unit never on a line of its own ('37.5 %' stays
    whole: the space before it is held as a no-break space while wrapping)."""
    if "\u00a0" in text:  # a no-break space of the text's own stays as it is
        held = text
    else:
        held = text.replace(" %", "\u00a0%")
    lines = textwrap.wrap(
        held, TEXT_WIDTH, initial_indent=initial_indent, subsequent_indent=subsequent_indent
    )
    return lines if held is text else [line.replace("\u00a0%", " %") for line in lines]


def parts_to_text(parts: list[Part]) -> str:
    """*parts* as plain text: underlined titles, paragraphs, '- ' bullets, aligned tables."""
    lines: list[str] = []
    for part in parts:
        lines += [part.title, ("=" if part.level == 1 else "-") * len(part.title), ""]
        for block in part.blocks:
            if isinstance(block, Para):
                lines += [*_wrap(block.text), ""]
            elif isinstance(block, Bullets):
                for item in block.items:
                    lines += _wrap(item, initial_indent="- ", subsequent_indent="  ")
                lines.append("")
            elif isinstance(block, Table):
                lines += [*_text_table(block), ""]
    return "\n".join(lines).rstrip() + "\n"


def render_report(report: ReportDocument, fmt: str, accuracy_csv: Path | None = None) -> str:
    """*report* as text in *fmt* (one of :data:`REPORT_FORMATS`)."""
    if fmt == "json":
        return to_json(report.to_json_dict())
    if fmt in ("spdx", "cyclonedx"):
        from planner.disclosure.exports import export_document

        return to_json(export_document(report, fmt))
    if fmt == "md":
        return render_markdown(report)
    if fmt == "text":
        return parts_to_text(report_sections(report))
    if fmt == "html":
        from planner.report.html import render_html
        from planner.report.svg_charts import all_charts

        return render_html(report, all_charts(report, accuracy_csv))
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(REPORT_FORMATS)}")
