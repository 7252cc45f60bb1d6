"""What the plan chose against its options: the objective it minimised, the best feasible
alternatives per model entry and the candidates it excluded (sections of
:func:`planner.report.plan_view.plan_sections`)."""

from __future__ import annotations

from planner.analysis.alternatives import Alternative, alternatives
from planner.inputs import UNIT_NOTE, Candidate, pools_gpu_cell, pools_layout_cell
from planner.layouts import multi_node_notes
from planner.report.region_view import with_regions
from planner.result import Plan
from planner.text import Section, num, pct

#: Marker of allocations whose candidate lies outside the predictors' training domain.
OUT_OF_DOMAIN_MARK = "†"


def objective_text(plan: Plan) -> str:
    """What was minimised (with weights) and the objective value reached."""
    obj = plan.inputs.objective
    what: str = obj.minimize
    if what == "weighted":
        what += " (" + ", ".join(f"{k} × {v:g}" for k, v in obj.weights.items() if v) + ")"
    unit = {"energy": "facility kWh", "carbon": "kg CO2e", "cost": "$"}.get(obj.minimize, "")
    value = plan.solve.objective
    return f"minimise {what}" + ("" if value is None else f" = {num(value, unit)}")


def candidate_section(plan: Plan) -> Section:
    """Every excluded candidate and why (memory, SLA, TTFT, scenario rule, price)."""
    excluded = [c for c in plan.inputs.candidates if not c.feasible]
    rows = tuple((c.name, _gpu_cell(c), _layout_cell(c), c.reason) for c in excluded)
    if not rows:
        return Section(
            "excluded candidates", notes=("none: every candidate considered is feasible",)
        )
    notes = tuple(multi_node_notes(plan.inputs.candidates))
    section = Section(
        "excluded candidates", ("model entry", "GPU", "TP", "reason"), rows, frozenset({2}), notes
    )
    return with_regions(plan, section, [c.region for c in excluded])


def _signed(value: float) -> str:
    text = num(value)
    return f"+{text}" if text not in ("0", "—") and not text.startswith("-") else text


def _gpu_cell(c: Candidate) -> str:
    return pools_gpu_cell(c.pools) if c.pools else c.gpu


def _layout_cell(c: Candidate) -> str:
    return pools_layout_cell(c.pools) if c.pools else c.layout


def _best_by_deployment(options: list[Alternative]) -> dict[str, Alternative]:
    """With options of both deployments: the best (least objective) of each, else none."""
    best: dict[str, Alternative] = {}
    for o in sorted(options, key=lambda o: o.delta):
        best.setdefault(o.candidate.deployment, o)
    return best if len(best) > 1 else {}


def alternatives_section(plan: Plan) -> Section:
    """Per model entry: its plan deployment and the best feasible alternatives, each as the
    model's only deployment, with the objective delta (:mod:`planner.analysis.alternatives`)."""
    total = plan.solve.objective
    rows = []
    places: list[str] = []
    for name, options in alternatives(plan).items():
        best = _best_by_deployment(options)
        if not any(o.chosen for o in options):  # the plan mixes deployments: show the mix first
            mine = [a for a in plan.allocations if a.candidate.name == name]
            gpus = " + ".join(_gpu_cell(a.candidate) for a in mine)
            tps = " + ".join(_layout_cell(a.candidate) for a in mine)
            replicas = " + ".join(str(a.replicas) for a in mine)
            rows.append((name, gpus, tps, replicas, "", "0", pct(0.0), "planned"))
            places.append(mine[0].candidate.region if mine else "")
            name = ""
        for k, o in enumerate(options):
            c = o.candidate
            share = None if not total else 100.0 * o.delta / abs(total)
            note = "planned" if o.chosen else ""
            if o.breaks:
                note = "exceeds " + ", ".join(o.breaks)
            if best.get(c.deployment) is o:
                note = ", ".join(filter(None, (f"best {c.deployment}", note)))
            places.append(c.region)
            rows.append(
                (
                    name if k == 0 else "",
                    _gpu_cell(c) + ("" if c.in_domain else f" {OUT_OF_DOMAIN_MARK}"),
                    _layout_cell(c),
                    str(o.replicas),
                    f"{num(1000 * c.itl_s_at_capacity)} ms",
                    _signed(o.delta),
                    "—" if share is None else f"{'+' if share > 0 else ''}{pct(share)}",
                    note,
                )
            )
    columns = ("model entry", "GPU", "TP", "replicas", "ITL", "Δ objective", "Δ %", "note")
    notes: tuple[str, ...] = (
        f"Δ objective: change of the objective ({objective_text(plan)}) if the model entry "
        "alone moved to this GPU and TP (fewest replicas for its peak load, the rest as "
        "planned); Δ % of the plan's objective",
        f"{OUT_OF_DOMAIN_MARK} outside the predictors' training domain",
    )
    if any(o.candidate.pools for options in alternatives(plan).values() for o in options):
        notes += ("best aggregated / best disaggregated: the best option of each deployment",)
        notes += (UNIT_NOTE,)
    section = Section(
        "best feasible alternatives", columns, tuple(rows), frozenset(range(2, 7)), notes
    )
    return with_regions(plan, section, places)
