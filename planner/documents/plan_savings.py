"""What a plan saves against its baselines (the plan JSON's ``savings``,
:class:`~planner.documents.plan_parts.SavingDocument`): energy, cost and carbon, absolute and as
a percentage of the baseline's."""

from __future__ import annotations

from planner.documents.plan_parts import SavingDocument
from planner.result import Plan


def _saved(theirs: float, mine: float) -> tuple[float, float | None]:
    """What is saved against *theirs* (absolute, then % of theirs; None when theirs <= 0)."""
    return theirs - mine, 100.0 * (theirs - mine) / theirs if theirs > 0 else None


def savings_of(plan: Plan) -> list[SavingDocument]:
    """Savings of *plan* against every feasible baseline (absolute and % of the baseline)."""
    mine = plan.totals
    if mine is None:
        return []
    out = []
    for b in plan.baselines:
        if b.totals is None:
            continue
        energy, energy_pct = _saved(b.totals.energy_kwh, mine.energy_kwh)
        cost, cost_pct = _saved(b.totals.cost_usd, mine.cost_usd)
        carbon, carbon_pct = _saved(b.totals.carbon_kg, mine.carbon_kg)
        out.append(
            SavingDocument(
                baseline=b.name,
                energy_kwh=energy,
                energy_pct=energy_pct,
                cost_usd=cost,
                cost_pct=cost_pct,
                carbon_kg=carbon,
                carbon_pct=carbon_pct,
            )
        )
    return out
