"""The plan JSON check (:mod:`planner.documents.verify`) of what a plan saves against its
baselines.

The plan writes one ``savings`` entry per baseline that has figures, in the baselines' order
(:func:`planner.documents.plan_savings.savings_of`): the baseline's energy, cost and carbon less
the plan's ``totals``, and each as a percentage of the baseline's (null where the baseline's is
not above 0). The baselines cannot be re-solved without the predictors, but the savings follow
from them and the totals: a report's ``savings[0].energy_kwh`` edited to 8,023 kWh beside a
baseline of 24,916 kWh and a fleet of 20,904 kWh was reported as written (and ``diff`` found no
difference); it is now one line naming the field, to :data:`.verify_pools.RELATIVE_TOLERANCE`.
Works on the plain JSON mapping, like the rest of the check.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from planner.documents.json_values import is_number
from planner.documents.plan_savings import _saved
from planner.documents.verify_pools import differs
from predictors.core.escape import short_repr

#: The figures saved: (baseline and totals field, savings field of its percentage).
FIGURES = (("energy_kwh", "energy_pct"), ("cost_usd", "cost_pct"), ("carbon_kg", "carbon_pct"))


def _with_figures(data: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(index, record) of each baseline that has figures (a feasible one)."""
    return [
        (j, b)
        for j, b in enumerate(data.get("baselines") or [])
        if isinstance(b, dict) and all(is_number(b.get(key)) for key, _ in FIGURES)
    ]


def _one(
    k: int, saving: dict[str, Any], j: int, b: dict[str, Any], totals: dict[str, Any]
) -> Iterator[str]:
    where = f"savings[{k}]"
    if saving.get("baseline") != b.get("name"):
        yield (
            f"{where}.baseline: {short_repr(saving.get('baseline'))}, but the baseline it saves "
            f"against is baselines[{j}] {short_repr(b.get('name'))}"
        )
        return
    for key, pct in FIGURES:
        theirs, mine = float(b[key]), float(totals[key])
        again, again_pct = _saved(theirs, mine)
        if differs(saving.get(key), again):
            yield (
                f"{where}.{key}: {short_repr(saving.get(key))}, but baselines[{j}].{key} "
                f"{theirs:.6g} less totals.{key} {mine:.6g} is {again:.6g}"
            )
        elif (saving.get(pct) is None) != (again_pct is None) or (
            again_pct is not None and differs(saving.get(pct), again_pct)
        ):
            shown = (
                f"null: baselines[{j}].{key} is {theirs:.6g}, not above 0"
                if again_pct is None
                else f"{again_pct:.6g} %: {again:.6g} of baselines[{j}].{key} {theirs:.6g}"
            )
            stored = "null" if saving.get(pct) is None else short_repr(saving.get(pct))
            yield f"{where}.{pct}: {stored}, but it is {shown}"


def savings_problems(data: dict[str, Any]) -> list[str]:
    """Every ``savings`` figure of the plan JSON *data* that its baselines less its totals do
    not give (module doc), one line per field."""
    savings, totals = data.get("savings"), data.get("totals")
    if not isinstance(savings, list):
        return []
    if not isinstance(totals, dict) or not all(is_number(totals.get(k)) for k, _ in FIGURES):
        if savings:
            return [f"savings: {len(savings)} entries, but the plan has no totals to save with"]
        return []
    baselines = _with_figures(data)
    if len(savings) != len(baselines):
        return [
            f"savings: {len(savings)} entries, but {len(baselines)} baselines have figures (one "
            "saving per such baseline, in their order)"
        ]
    out: list[str] = []
    for k, (saving, (j, b)) in enumerate(zip(savings, baselines, strict=True)):
        if isinstance(saving, dict):
            out.extend(_one(k, saving, j, b, totals))
    return out
