"""The check of a saved sweep JSON's summary against its records (``wattgpu report --sweep``).

The sweep document's types check each value alone and the summary's counts against the records
(:class:`planner.documents.sweep.SweepDocument`); the figures it summarises were taken as
written, so an edited ``summary.optimal.energy_kwh`` (P10/P50/P90 of 1, 2, 3 kWh over records of
527–1261 kWh) or a flag's ``sla_probability`` of 0.99 over draws half of which break the SLA made
a report that contradicts itself. :func:`sweep_problems` recomputes, from ``records[]``, what the
sweep writer (:func:`planner.sweep.aggregate.summary`) computes from them: the P10/P50/P90 and
mean of each figure of the re-optimised and of the base plan, the probabilities (each model
entry's SLA, the power cap, the budget, all together), the regret, and each flag's
``sla_probability`` (its entry's); the tornado and the robust choice are checked against the rest
of the file by :mod:`.verify_sweep_parts`. The fan's per-period energy and the stability are not
in the records and are not recomputed. It works on the plain JSON mapping, like the plan checks
(:mod:`.verify`). Records carry their outcomes to 10 significant digits, the summary was
computed before that rounding: figures agree to 1e-6 relative (a regret, a difference, to 1e-6
of the objectives it is the difference of).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from planner.documents.verify_sweep_parts import part_problems

#: The figures the summary gives quantiles of (``summary.optimal``, ``summary.base``).
FIGURES = ("energy_kwh", "facility_energy_kwh", "cost_usd", "carbon_kg", "objective")
#: The quantiles of a figure, in the summary's order.
QUANTILES = ("p10", "p50", "p90", "mean")
#: Relative tolerance of a recomputed figure (the records are rounded to 10 digits).
TOLERANCE = 1e-6


def rounded(value: float) -> float:
    """*value* to 10 significant digits (the sweep JSON's precision)."""
    return float(f"{value:.10g}")


def quantiles(values: Sequence[float]) -> dict[str, float | None]:
    """P10, P50, P90 (numpy's linear interpolation) and mean of *values*, to 10 digits; all
    None for no values: what the sweep writer computes (:mod:`planner.sweep.aggregate` uses
    these) and what a saved sweep is checked against."""
    if not values:
        return dict.fromkeys(QUANTILES)
    arr = np.asarray(values, dtype=np.float64)
    p10, p50, p90 = (rounded(float(q)) for q in np.percentile(arr, [10, 50, 90]))
    return {"p10": p10, "p50": p50, "p90": p90, "mean": rounded(float(arr.mean()))}


def share(flags: Sequence[bool]) -> float | None:
    """The share of True in *flags*, to 10 digits (None for none): a probability of the draws."""
    return rounded(sum(flags) / len(flags)) if flags else None


def all_met(outcome: dict[str, Any]) -> bool:
    """Every SLA, the power cap, the budget and the inventory hold (an outcome record)."""
    return bool(
        all((outcome.get("sla_met") or {}).values())
        and outcome.get("power_cap_met")
        and outcome.get("budget_met")
        and outcome.get("inventory_met", True)
    )


def _off(stored: Any, again: float | None, scale: float = 0.0) -> bool:
    """True when *stored* is not *again* (None: none) within the tolerance, relative to the
    larger of the two and *scale*."""
    if again is None or stored is None:
        return (again is None) != (stored is None)
    if isinstance(stored, bool) or not isinstance(stored, int | float):
        return True
    return abs(stored - again) > TOLERANCE * max(abs(stored), abs(again), scale) + 1e-12


def _shown(values: dict[str, Any]) -> str:
    return ", ".join(f"{k} {'null' if v is None else format(v, '.6g')}" for k, v in values.items())


def _quantile_lines(
    where: str, stored: Any, values: list[float], scale: float = 0.0
) -> Iterator[str]:
    if not isinstance(stored, dict):
        return
    again = quantiles(values)
    if any(_off(stored.get(q), again[q], scale) for q in QUANTILES):
        said = {q: stored.get(q) for q in QUANTILES}
        yield f"{where}: {_shown(said)}, but its {len(values)} records give {_shown(again)}"


def _share_line(where: str, stored: Any, flags: list[bool], what: str) -> Iterator[str]:
    again = share(flags)
    if _off(stored, again):
        shown = "null" if again is None else f"{again:.6g}"
        yield (
            f"{where}: {stored!r}, but the records give {shown} (the share of the "
            f"{len(flags)} draws in which {what})"
        )


def _outcomes(records: list[Any], which: str) -> list[tuple[int, dict[str, Any]]]:
    return [
        (i, r[which])
        for i, r in enumerate(records)
        if isinstance(r, dict) and isinstance(r.get(which), dict)
    ]


def _probabilities(summary: dict[str, Any], records: list[Any]) -> Iterator[str]:
    """Each model entry's SLA, the power cap, the budget and all together, over the draws that
    evaluated the base plan."""
    base = _outcomes(records, "base")
    sla = summary.get("sla_probability")
    for name, stored in (sla if isinstance(sla, dict) else {}).items():
        where = f"summary.sla_probability.{name}"
        missing = next((i for i, o in base if name not in (o.get("sla_met") or {})), None)
        if missing is not None:
            yield f"{where}: records[{missing}].base.sla_met has no {name!r}"
            continue
        met = [bool(o["sla_met"][name]) for _, o in base]
        yield from _share_line(where, stored, met, f"the base plan meets the SLA of {name!r}")
    for key, field, what in (
        ("power_cap_probability", "power_cap_met", "the base plan is within the power cap"),
        ("budget_probability", "budget_met", "the base plan is within the budget"),
    ):
        met = [bool(o.get(field)) for _, o in base]
        yield from _share_line(f"summary.{key}", summary.get(key), met, what)
    met = [all_met(o) for _, o in base]
    what = "the base plan meets every SLA, the cap and the budget"
    yield from _share_line(
        "summary.all_met_probability", summary.get("all_met_probability"), met, what
    )


def _regret(summary: dict[str, Any], records: list[Any]) -> Iterator[str]:
    """Base objective − re-optimised objective over the draws with a plan in which the base plan
    meets everything, and that over the re-optimised objective (when above 0)."""
    valid = [
        (r["base"]["objective"], r["optimal"]["objective"])
        for r in records
        if isinstance(r, dict)
        and isinstance(r.get("base"), dict)
        and isinstance(r.get("optimal"), dict)
        and all_met(r["base"])
    ]
    scale = max((max(abs(b), abs(o)) for b, o in valid), default=0.0)
    regret = [b - o for b, o in valid]
    relative = [(b - o) / o for b, o in valid if o > 0]
    stored = summary.get("regret_objective")
    yield from _quantile_lines("summary.regret_objective", stored, regret, scale)
    stored = summary.get("regret_relative")
    yield from _quantile_lines("summary.regret_relative", stored, relative, 1.0)


def _flags(data: dict[str, Any], again: dict[str, float | None]) -> Iterator[str]:
    """Each flag's ``sla_probability``: its model entry's, from the records (None without
    draws)."""
    for i, flag in enumerate(data.get("flags") or []):
        if not isinstance(flag, dict):
            continue
        want = again.get(str(flag.get("name")))
        if _off(flag.get("sla_probability"), want):
            shown = "null" if want is None else f"{want:.6g}"
            yield (
                f"flags[{i}].sla_probability: {flag.get('sla_probability')!r}, but the records "
                f"give {shown} (the share of the draws in which the base plan meets the SLA of "
                f"{flag.get('name')!r})"
            )


def sweep_problems(data: dict[str, Any]) -> list[str]:
    """Every figure of the sweep JSON *data*'s summary and flags that its records do not give,
    and of its tornado and robust choice that the rest of the file contradicts (module doc), one
    line per field; empty when it checks."""
    records = data.get("records")
    records = records if isinstance(records, list) else []
    summary = data.get("summary")
    out: list[str] = []
    again: dict[str, float | None] = {}
    if isinstance(summary, dict):
        for which in ("optimal", "base"):
            figures = summary.get(which)
            outcomes = [o for _, o in _outcomes(records, which)]
            for f in FIGURES:
                stored = figures.get(f) if isinstance(figures, dict) else None
                values = [float(o[f]) for o in outcomes]
                out.extend(_quantile_lines(f"summary.{which}.{f}", stored, values))
        out.extend(_probabilities(summary, records))
        out.extend(_regret(summary, records))
        base = [o for _, o in _outcomes(records, "base")]
        sla = summary.get("sla_probability")
        for name in sla if isinstance(sla, dict) else {}:
            met = [bool((o.get("sla_met") or {}).get(name)) for o in base]
            again[name] = share(met)
    out.extend(_flags(data, again))
    out.extend(part_problems(data))
    return out
