"""The sweep as a Markdown section (``wattgpu sweep --format md`` and ``wattgpu report --sweep``).

One function of the typed :class:`~planner.documents.sweep.SweepDocument`: P10/P50/P90 of the
re-optimised and the base plan, the base plan's SLA probability per model, regret, plan
stability, the tornado, the grid and the robust choice. HTML embeds the charts of
:mod:`planner.report.sweep_charts` beside it.
"""

from __future__ import annotations

from planner.documents.sweep import (
    FiguresDocument,
    OutcomeDocument,
    QuantilesDocument,
    SweepDocument,
)
from planner.report.flag_view import shared_no_plan
from predictors.core.escape import md_text

FIGURE_LABELS: tuple[tuple[str, str], ...] = (
    ("energy_kwh", "GPU energy (kWh)"),
    ("facility_energy_kwh", "facility energy (kWh)"),
    ("cost_usd", "cost ($)"),
    ("carbon_kg", "carbon (kg CO2e)"),
)


GRID_BAR_NOTE = (
    "A grid bar compares the axis's first and last value over the grid points matched at both "
    "ends (the same values on every other axis, both with a plan); points without such a pair "
    "are left out."
)


def _left_out(count: int | None) -> str:
    """What a grid bar says of the grid points it left out ('' when none)."""
    if not count:
        return ""
    return f" ({count} grid point{'s' if count > 1 else ''} at the ends left out: no matched plan)"


def _n(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def _q(q: QuantilesDocument, digits: int = 0) -> str:
    return f"{_n(q.p10, digits)} / {_n(q.p50, digits)} / {_n(q.p90, digits)}"


def _cell(text: str) -> str:
    """User text (scenario, entry, GPU and factor names, messages) as the rest of the Markdown
    report writes it (:func:`~predictors.core.escape.md_text`: ``|``, newlines, control
    sequences, HTML and link syntax escaped; fuzz round 28: ``<script>`` was written raw)."""
    return md_text(text)


def _figures(opt: FiguresDocument, base: FiguresDocument) -> list[str]:
    lines = [
        "| quantity | re-optimised P10 / P50 / P90 | base plan P10 / P50 / P90 |",
        "|---|---|---|",
    ]
    for key, label in FIGURE_LABELS:
        lines.append(f"| {label} | {_q(getattr(opt, key))} | {_q(getattr(base, key))} |")
    return lines


def _point_parts(point: dict[str, float | dict[str, float]]) -> list[str]:
    out = []
    for key, value in point.items():
        if isinstance(value, dict):
            out += [f"{key}.{sub}={v:g}" for sub, v in value.items()]
        else:
            out.append(f"{key}={value:g}")
    return out


def _all_met(o: OutcomeDocument) -> bool:
    return all(o.sla_met.values()) and o.power_cap_met and o.budget_met and o.inventory_met


def sweep_markdown(doc: SweepDocument, *, heading: str = "##") -> str:
    """The sweep section in Markdown."""
    out = [f"{heading} Sweep: {_cell(doc.scenario)}", ""]
    out.append(
        f"{doc.draws} uncertainty draws ({doc.sampler}, seed {doc.seed}) and {len(doc.grid)} "
        f"grid points. Base plan: {_cell(doc.base.fleet)}."
    )
    out += ["", f"Method: {_cell(doc.method)}", ""]
    s = doc.summary
    if s is not None:
        out.append(
            f"Draws with a plan: {s.draws_with_plan} of {s.draws} ({s.draws_infeasible} "
            f"infeasible, {s.draws_time_limit} without a plan at the time limit, "
            f"{s.draws_failed} failed)."
        )
        out += ["", *_figures(s.optimal, s.base), ""]
        out += ["| model entry | P(base plan meets its SLA) |", "|---|---|"]
        out += [f"| {_cell(m)} | {_pct(p)} |" for m, p in s.sla_probability.items()]
        out += [
            "",
            f"Power cap holds in {_pct(s.power_cap_probability)} of draws, the budget in "
            f"{_pct(s.budget_probability)}; everything at once in {_pct(s.all_met_probability)}.",
            f"Regret of the base plan (base − re-optimised objective, draws where the base plan "
            f"meets everything) P10 / P50 / P90: {_q(s.regret_objective)} "
            f"({_q(s.regret_relative, 4)} relative).",
            f"Plan stability: the re-optimised fleet equals the base fleet in "
            f"{_pct(s.stability.same_fleet_share)} of draws, its GPU mix in "
            f"{_pct(s.stability.same_gpu_mix_share)}.",
            "",
            "| most frequent re-optimised GPU mixes | share |",
            "|---|---|",
        ]
        out += [
            f"| {_cell(', '.join(f'{g}×{n}' for g, n in a.gpus.items()))} | {_pct(a.share)} |"
            for a in s.stability.gpu_mix_frequency[:8]
        ]
        if s.tornado:
            out += [
                "",
                "| what moves the cost (tornado) | low $ | high $ | swing $ |",
                "|---|---|---|---|",
            ]
            out += [
                f"| {_cell(b.factor + _left_out(b.points_left_out))} | {_n(b.low_cost_usd)} | "
                f"{_n(b.high_cost_usd)} | {_n(b.swing_usd)} |"
                for b in s.tornado
            ]
            if any(b.source == "grid" for b in s.tornado):
                out += ["", GRID_BAR_NOTE]
    if doc.grid:
        out += ["", f"Grid ({_cell(', '.join(doc.grid_axes))}):", ""]
        out += [
            "| point | status | re-optimised cost $ | base cost $ | base meets all |",
            "|---|---|---|---|---|",
        ]
        for r in doc.grid:
            point = ", ".join(_point_parts(r.point or {}))
            base_ok = "yes" if r.base is not None and _all_met(r.base) else "no"
            cost = _n(r.optimal.cost_usd) if r.optimal else "—"
            base_cost = _n(r.base.cost_usd if r.base else None)
            out.append(f"| {_cell(point)} | {_cell(r.status)} | {cost} | {base_cost} | {base_ok} |")
    if doc.robust is not None:
        rb = doc.robust
        out += ["", f"Robust choice (SLA probability {rb.sla_probability:g}): {_cell(rb.reason)}."]
        if rb.chosen is not None:
            cost = _n(rb.chosen.expected_cost_usd)
            out.append(f"Chosen: {_cell(rb.chosen.fleet)} (expected cost ${cost}).")
    if doc.flags:
        out += [
            "",
            "| flagged allocation | why | robust: true deploys instead | P(SLA met) |",
            "|---|---|---|---|",
        ]
        shared = shared_no_plan(doc.flags)
        out += [
            f"| {_cell(f.name)} on {_cell(f.gpu)}{'' if f.is_unit else f' tp{f.layout}'} "
            f"x{f.replicas} | {_cell('; '.join(f.reasons))} "
            f"| {'no plan (below)' if shared else _cell(f.robust_instead)} "
            f"| {_pct(f.sla_probability)} |"
            for f in doc.flags
        ]
        if shared:
            out += ["", f"Robust: true instead, for every flagged allocation: {_cell(shared)}."]
    failed = [r for r in doc.records if r.status == "failed"]
    if failed:
        out += ["", f"Failed draws ({len(failed)}):", ""]
        out += [f"- draw {r.index}: {_cell(r.error or '')}" for r in failed[:20]]
    stopped = [r for r in doc.records if r.status == "time_limit" and r.optimal is None]
    if stopped:
        out += ["", f"Draws without a plan at the time limit ({len(stopped)}):", ""]
        out += [f"- draw {r.index}: {_cell((r.messages or [''])[0])}" for r in stopped[:20]]
    return "\n".join(out) + "\n"
