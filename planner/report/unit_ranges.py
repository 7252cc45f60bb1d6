"""The disclosure's P10–P90 ranges in plans with disaggregated units that record no power
interval.

The ranges derived from the uncertainty bands (:func:`planner.disclosure.ranges.ranges_from_bands`)
count such a unit at its point estimate (:data:`planner.analysis.uncertainty.UNIT_NOTE`): a
zero-width band that is no range at all. :func:`honest_ranges` says so in the disclosure: a model
entry whose allocations are all such units has no P10/P90 and a ``no range:`` reason; an entry
with some, and the fleet's ranges, name what they leave out.
"""

from __future__ import annotations

from planner.disclosure.build import build_disclosure
from planner.disclosure.ranges import EnergyRanges, ranges_from_bands
from planner.documents.disclosure import DisclosureDocument, FieldDocument
from planner.documents.forecast import ForecastDocument
from planner.documents.plan import PlanDocument
from planner.documents.plan_parts import CandidateDocument
from planner.documents.uncertainty import BandsDocument
from predictors.catalog.store import Catalog

NO_RANGE_UNITS = "no range: disaggregated units record no power interval"


def _no_interval(c: CandidateDocument) -> bool:
    """A disaggregated unit without a recorded power interval (as the bands read it)."""
    return c.deployment == "disaggregated" and c.power_w_per_gpu_predicted is None


def entries_without_interval(doc: PlanDocument) -> tuple[list[str], list[str]]:
    """The model entries whose allocations are all units without a power interval, and those
    with some (in plan order)."""
    every: dict[str, list[bool]] = {}
    for a in doc.allocations:
        every.setdefault(a.name, []).append(_no_interval(doc.candidate(a.key)))
    return (
        [name for name, marks in every.items() if all(marks)],
        [name for name, marks in every.items() if any(marks) and not all(marks)],
    )


def units_note(doc: PlanDocument) -> str | None:
    """What the fleet's ranges leave out (the entries without a power interval), or None."""
    whole, part = entries_without_interval(doc)
    if not whole and not part:
        return None
    named = [*whole, *(f"the units of {name}" for name in part)]
    return (
        f"leaves out {', '.join(named)}: disaggregated units record no power interval (their "
        "energy is counted at its point estimate, with no range)"
    )


def _reworded(f: FieldDocument, method: str, text: str, drop: bool) -> FieldDocument:
    if f.range_source != method:
        return f
    if drop:
        return f.model_copy(update={"p10": None, "p90": None, "range_source": text})
    return f.model_copy(update={"range_source": text})


def _fields(
    fields: dict[str, FieldDocument], method: str, text: str, drop: bool = False
) -> dict[str, FieldDocument]:
    return {k: _reworded(f, method, text, drop) for k, f in fields.items()}


def honest_ranges(d: DisclosureDocument, doc: PlanDocument) -> DisclosureDocument:
    """*d* with the ranges taken from the bands (``range_source`` = ``d.range_method``) reworded
    where the plan's disaggregated units record no power interval: no range for an entry made of
    them only, and the entries left out named in the fleet's and a mixed entry's ranges."""
    note = units_note(doc)
    if note is None:
        return d
    whole, part = entries_without_interval(doc)
    method = d.range_method
    fleet = f"{method}; {note}"
    mixed = f"{method}; leaves out this entry's disaggregated units (no power interval)"
    models = [
        m.model_copy(update={"fields": _fields(m.fields, method, NO_RANGE_UNITS, drop=True)})
        if m.name in whole
        else m.model_copy(update={"fields": _fields(m.fields, method, mixed)})
        if m.name in part
        else m
        for m in d.models
    ]
    return d.model_copy(
        update={"fields": _fields(d.fields, method, fleet), "models": models, "range_method": fleet}
    )


def disclosure_of(
    doc: PlanDocument,
    fc: ForecastDocument,
    ranges: EnergyRanges | None,
    bands: BandsDocument | None,
    catalog: Catalog,
) -> DisclosureDocument:
    """The disclosure of *doc* with *ranges* (a sweep's), or with the ranges of its *bands*
    (reworded by :func:`honest_ranges`)."""
    if ranges is not None:
        return build_disclosure(doc, fc, ranges, catalog)
    return honest_ranges(build_disclosure(doc, fc, ranges_from_bands(bands), catalog), doc)
