"""The report as Markdown: the parts of :func:`planner.report.sections.report_sections` laid out
as headings, paragraphs, bullet lists and tables (cards and charts are HTML only)."""

from __future__ import annotations

from planner.documents.report import ReportDocument
from planner.report.blocks import Block, Bullets, Para, Part, Table
from planner.report.sections import report_sections
from predictors.core.escape import md_text


def _cell(text: str) -> str:
    """One table cell: ``|``, newlines, control sequences and HTML escaped (user strings)."""
    return md_text(text)


def _table(t: Table) -> list[str]:
    align = "|" + "".join("---:|" if k in t.numeric else "---|" for k in range(len(t.header)))
    out = ["| " + " | ".join(_cell(h) for h in t.header) + " |", align]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in t.rows]
    return out


def _block(block: Block) -> list[str]:
    if isinstance(block, Para):
        text = md_text(block.text)
        return [f"> {text}" if block.style == "note" else text]
    if isinstance(block, Bullets):
        return [f"* {md_text(item)}" for item in block.items]
    if isinstance(block, Table):
        return _table(block)
    return []  # cards and figures: HTML only


def parts_to_markdown(parts: list[Part]) -> str:
    """*parts* as GitHub-flavoured Markdown."""
    lines: list[str] = []
    for part in parts:
        lines += [f"{'#' * part.level} {md_text(part.title)}", ""]
        for block in part.blocks:
            text = _block(block)
            if text:
                lines += [*text, ""]
    return "\n".join(lines).rstrip() + "\n"


def render_markdown(report: ReportDocument) -> str:
    """The report as Markdown (same parts as the HTML and text forms)."""
    return parts_to_markdown(report_sections(report))
