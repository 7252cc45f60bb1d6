"""Small constructors of disclosure fields: a value with unit, label, source and range, or a
``not_applicable`` reason; the label texts; 2-significant-figure rounding."""

from __future__ import annotations

import math

from planner.disclosure.ranges import RangeFactors
from planner.documents.disclosure import FieldDocument, Label

LABELS = (
    "measured = read on the deployed fleet; calibrated = a model fitted to measurements of this "
    "fleet; modelled = computed by wattgpu from predictive models, the catalog or a published "
    "dataset (wattgpu measured none of them); user-supplied = given in the scenario file. Every "
    "energy figure here is modelled: no figure of this report was measured on the fleet."
)
NO_RANGE_FIXED = "no range: an exact function of the inputs (no predictor uncertainty)"
NO_RANGE_INPUT = "no range: an input taken as given"
NO_RANGE_PUBLISHED = "no range: the source publishes a single figure"


def sig2(x: float) -> float:
    """*x* to 2 significant figures."""
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, 1 - int(math.floor(math.log10(abs(x)))))


def value(
    v: float | str,
    unit: str,
    label: Label,
    source: str,
    *,
    factors: RangeFactors | None = None,
    range_source: str | None = None,
    offset: float = 0.0,
) -> FieldDocument:
    """A field with a value; with *factors* its P10/P90 are ``(v − offset) × factor + offset``
    (the part *offset* of the value carries no predictor uncertainty)."""
    if factors is None or isinstance(v, str):
        return FieldDocument(
            value=v, unit=unit, label=label, source=source, range_source=range_source
        )
    scaled = v - offset
    return FieldDocument(
        value=v,
        unit=unit,
        label=label,
        source=source,
        p10=scaled * factors.p10 + offset,
        p90=scaled * factors.p90 + offset,
        range_source=range_source,
    )


def not_applicable(unit: str, reason: str, source: str = "") -> FieldDocument:
    """A field without a value, and why."""
    return FieldDocument(
        value=None, unit=unit, label=None, source=source or "—", not_applicable=reason
    )
