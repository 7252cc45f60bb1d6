"""The uncertainty flags as a table: the plan's table and Markdown, and the report.

One row per flagged allocation (:mod:`planner.documents.flags`): model entry, GPU, TP, replicas,
why (the ITL bound against the SLA, out of domain), what ``robust: true`` deploys instead and,
when a sweep was run, the sweep's probability that the plan meets the entry's SLA. The notes
state the rule, how the robust alternative was found and where the SLA probability comes from.
A plan with no flagged allocation has no flags table.
"""

from __future__ import annotations

from collections.abc import Sequence

from planner.documents.flags import NOT_COMPUTED, FlagDocument, UncertaintyFlagsDocument
from planner.inputs import ms_text
from planner.text import Section

TITLE = "uncertainty flags"
COLUMNS: tuple[str, ...] = ("model entry", "GPU", "TP", "repl.", "why", "robust: true instead")
SLA_COLUMN = "P(SLA met)"


def why_text(f: FlagDocument) -> str:
    """The reasons in a few words: ``ITL up to 186 ms (SLA 100); out of domain`` (the ITL
    bound is the one at capacity)."""
    parts = []
    if f.itl_s_hi_at_capacity is not None and f.itl_s_hi_at_capacity > f.itl_sla_s:
        parts.append(f"ITL up to {ms_text(f.itl_s_hi_at_capacity)} ms (SLA {ms_text(f.itl_sla_s)})")
    if not f.in_domain:
        parts.append("out of domain")
    return "; ".join(parts)


def _share(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def shared_no_plan(flags: Sequence[FlagDocument]) -> str | None:
    """The one ``no plan (…)`` text every flag carries when the whole scenario re-solved with
    ``robust: true`` has no plan (stated once in the notes, not in every row); else None."""
    texts = {f.robust_instead for f in flags}
    if len(flags) < 2 or len(texts) != 1:
        return None
    text = texts.pop()
    return text if text.startswith("no plan") else None


def flag_table(doc: UncertaintyFlagsDocument) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """(header, rows) of the flags; the SLA column only when a sweep gave probabilities."""
    swept = doc.sla_probability_draws is not None
    header = (*COLUMNS, SLA_COLUMN) if swept else COLUMNS
    rows: list[tuple[str, ...]] = []
    shared = shared_no_plan(doc.flags)
    for f in doc.flags:
        instead = (
            "not computed (see below)"
            if f.robust_instead == NOT_COMPUTED
            else "no plan (see below)"
            if shared
            else f.robust_instead
        )
        layout = "—" if f.is_unit else f.layout  # a unit's GPU cell names its pools' layouts
        row: tuple[str, ...] = (f.name, f.gpu, layout, str(f.replicas), why_text(f), instead)
        rows.append((*row, _share(f.sla_probability)) if swept else row)
    return header, rows


def flag_notes(doc: UncertaintyFlagsDocument) -> tuple[str, ...]:
    """The rule, how the robust alternative was found, where the SLA probability comes from."""
    notes = [f"flagged: {doc.rule}", f"robust: true instead: {doc.robust_note}"]
    shared = shared_no_plan(doc.flags)
    if shared:
        notes.append(f"robust: true instead, for every flagged allocation: {shared}")
    if doc.sla_probability_draws is None:
        notes.append(
            "the probability that each SLA holds: run `wattgpu sweep SCENARIO --draws 200 "
            "--format json -o sweep.json`, then `wattgpu report SCENARIO --sweep sweep.json`"
        )
    else:
        notes.append(
            f"P(SLA met): the share of the sweep's {doc.sla_probability_draws} draws in which "
            "the plan meets the entry's SLA"
        )
    return tuple(notes)


def flags_section(doc: UncertaintyFlagsDocument | None) -> Section | None:
    """The flags as a :class:`~planner.text.Section` (None without flags)."""
    if doc is None or not doc.flags:
        return None
    header, rows = flag_table(doc)
    return Section(
        TITLE,
        header,
        tuple(rows),
        numeric=frozenset({2, 3, 6}) & frozenset(range(len(header))),
        notes=flag_notes(doc),
        style="yellow",
    )
