"""The building blocks of a rendered report: numbers for people and the block types.

A report is a list of :class:`Part` s, each a title and a few blocks: paragraphs, bullet lists,
tables, and two HTML-only blocks (headline :class:`Cards` and chart :class:`Figure` s).
:mod:`planner.report.sections` fills them from the report document;
:mod:`planner.report.markdown`, :mod:`planner.report.html` and :mod:`planner.report.render`
lay them out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from planner.documents.uncertainty import BandDocument
from planner.text import ZERO_BELOW
from planner.text import given as text_given
from planner.text import num as text_num

if TYPE_CHECKING:
    from planner.documents.plan import PlanDocument

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
    # 999.6 at 3 digits rounds to 1e+03: a value that rounds up to 10**digits is written whole
    if abs(v) >= 10**digits or abs(float(f"{v:.{digits}g}")) >= 10**digits:
        return f"{v:,.0f}"
    return f"{v:,.{digits}g}"


def given(value: Any) -> str:
    """A number the user gave, with every digit given (:func:`planner.text.given`); other
    values as :func:`num`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return num(value)
    return text_given(float(value))


def band_text(band: BandDocument | None, digits: int = 3) -> str:
    """'low – high' of a band (or '—')."""
    if band is None:
        return "—"
    return f"{num(band.low, digits)} – {num(band.high, digits)}"


def gpus_text(gpus: dict[str, int]) -> str:
    """'2× L4, 1× H100' from GPUs by type ('' for none)."""
    return ", ".join(f"{n}× {g}" for g, n in gpus.items())


def rows_text(rows: dict[str, int] | int | None) -> str:
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


def table(
    header: Iterable[str], rows: Iterable[Iterable[str]], numeric: Iterable[int] = ()
) -> Table:
    """A :class:`Table` of *rows* under *header*; columns in *numeric* right-aligned."""
    return Table(tuple(header), tuple(tuple(r) for r in rows), frozenset(numeric))


def profile_text(doc: PlanDocument) -> str:
    """What the plan's grid profile adds to the grid factor's line ('' without one): with
    regions, the regions it is the carbon of (a region with its own grid keeps it)."""
    profile = doc.assumptions.grid_g_co2_per_kwh_by_period
    if profile is None:
        return ""
    used = "used for the plan's carbon"
    if doc.regions:
        on_it = [r.name for r in doc.regions if r.grid_g_co2_per_kwh_by_period == profile]
        used = (
            f"used for the carbon of region{'s' if len(on_it) > 1 else ''} {', '.join(on_it)}"
            if on_it
            else "not used: every region has its own grid"
        )
    return (
        f"; hourly profile {text_num(min(profile))}–{text_num(max(profile))} gCO2e/kWh over "
        f"{len(profile)} periods, {used}"
    )
