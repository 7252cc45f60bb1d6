"""Which model entries need serving, and the rule that an entry's regions offer a GPU type it may
use.

An entry with no load in any period and no ``min_replicas`` needs nothing (the plan leaves it
out); any other entry must have a GPU type that may serve it. Without regions, the scenario
refuses an entry that forbids every type listed under ``gpus``
(:func:`planner.scenario.model.cross_field_problems`). With regions the entry is placed in one
of the regions it names (every region when it names none), and a region offers the types of its
own ``gpus`` (every type listed under ``gpus`` when it gives none): an entry whose
``allowed_gpus`` / ``forbidden_gpus`` leave none of the types those regions offer is refused the
same way (fuzz round 29: validate said ok and plan found no candidate).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from planner.scenario.regions import RegionSpec
from planner.scenario.sections import ModelEntry

Problem = tuple[str, str]

#: Regions named in one problem at most (then "…").
SHOWN_REGIONS = 4


def needs_serving(entry: ModelEntry) -> bool:
    """True when *entry* must be served: a ``min_replicas`` above 0, or a load above 0 in some
    period."""
    load = entry.load
    rates = list(load.requests_per_s_by_period or [])
    if load.requests_per_s is not None:
        rates.append(load.requests_per_s * max(load.daily_profile or [1.0]))
    return entry.min_replicas > 0 or max(rates, default=0.0) > 0


def _offers(
    regions: dict[str, RegionSpec], entry: ModelEntry, gpus: Collection[str]
) -> dict[str, list[str]] | None:
    """The types listed under *gpus* that each region *entry* may be placed in offers (a
    region it names that does not exist is left out: it is named on its own); None when a
    region offers every type and *gpus* was omitted (the catalog's types, not known here)."""
    out: dict[str, list[str]] = {}
    for name in entry.regions if entry.regions is not None else list(regions):
        spec = regions.get(name)
        if spec is None:
            continue
        if spec.gpus is None and not gpus:
            return None
        out[name] = [g for g in (gpus if spec.gpus is None else spec.gpus) if g in gpus or not gpus]
    return out


def unserved_problems(
    regions: dict[str, RegionSpec] | None,
    entries: Sequence[ModelEntry],
    gpus: Collection[str] | None,
) -> list[Problem]:
    """The entries that need serving whose regions offer no GPU type they may use (module doc),
    under ``allowed_gpus`` when it allows none of the offered types, else under
    ``forbidden_gpus``. Left to the other rules: an entry that forbids every type listed under
    *gpus*, allowed types none of which is listed there, regions that offer nothing (an empty
    ``gpus``, unknown names)."""
    if not regions:
        return []
    listed = set(gpus or ())
    out: list[Problem] = []
    for i, entry in enumerate(entries):
        allowed, forbidden = entry.allowed_gpus, set(entry.forbidden_gpus)
        if not needs_serving(entry) or (listed and listed <= forbidden):
            continue
        if allowed is not None and listed and not listed & set(allowed):
            continue
        offers = _offers(regions, entry, listed)
        offered = {g for types in (offers or {}).values() for g in types}
        usable = [g for g in offered if g not in forbidden and (allowed is None or g in allowed)]
        if not offered or usable:
            continue
        shown = "; ".join(
            f"{name}: {', '.join(types) or 'none'}"
            for name, types in list((offers or {}).items())[:SHOWN_REGIONS]
        ) + ("; …" if len(offers or {}) > SHOWN_REGIONS else "")
        where = f"the regions it may be placed in offer ({shown})"
        if allowed is not None and not offered & set(allowed):
            out.append(
                (
                    f"models[{i}].allowed_gpus",
                    f"allows none of the GPU types {where}, so nothing can "
                    "serve the entry — allow one of them, or list a type it allows under one "
                    "of those regions' gpus",
                )
            )
        else:
            out.append(
                (
                    f"models[{i}].forbidden_gpus",
                    f"forbids every GPU type {where}, so nothing can serve "
                    "the entry — remove one from forbidden_gpus, or list another type under "
                    "one of those regions' gpus",
                )
            )
    return out
