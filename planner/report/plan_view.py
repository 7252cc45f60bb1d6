"""Renderings of a :class:`~planner.result.Plan`: rich table, Markdown, CSV and JSON.

Table and Markdown are built from the same :class:`~planner.text.Section` list
(:func:`plan_sections`): a header, one row per allocation with totals (a row per entry
without load), the savings against every baseline and, on request, the best alternatives per
model and the excluded candidates with their reasons. The table is compact by default (the
columns that fit 100 characters; ``wide``: every column, as Markdown always). CSV
(:mod:`planner.report.plan_csv`) has the JSON contract's allocation columns; JSON is
:func:`~planner.documents.plan.plan_json` with non-finite numbers written as null.
"""

from __future__ import annotations

from collections.abc import Sequence

from planner.analysis.failover import (
    FAILOVER_COLUMNS,
    FAILOVER_NOTE,
    failover_cells,
    plan_failover_rows,
)
from planner.documents.flags import UncertaintyFlagsDocument
from planner.documents.kept import CandidateSelection
from planner.documents.plan import plan_json, savings_of
from planner.documents.plan_parts import SavingDocument
from planner.inputs import UNIT_NOTE, PlanningInputs, pools_gpu_cell, pools_layout_cell
from planner.layouts import multi_node_notes
from planner.report.flag_view import flags_section
from planner.report.plan_choices import (
    OUT_OF_DOMAIN_MARK,
    alternatives_section,
    candidate_section,
    objective_text,
)
from planner.report.plan_csv import plan_csv
from planner.report.region_view import region_economics, region_lines, regions_section, with_regions
from planner.result import Allocation, Plan, PlanStatus
from planner.text import (
    COMPACT_WIDTH,
    FILE_WIDTH,
    Section,
    given,
    num,
    pct,
    records_json,
    sections_to_markdown,
    uncut_text,
)

#: Rendering formats of ``wattgpu plan``.
PLAN_FORMATS: tuple[str, ...] = ("table", "json", "md", "csv")


# --- plan -> sections -------------------------------------------------------------------------


def header_section(plan: Plan) -> Section:
    """Scenario, status, solve time, gap, objective and the assumptions behind the numbers."""
    i, s = plan.inputs, plan.solve
    gap = "—" if s.gap is None else f"{100 * s.gap:.2f} %"
    periods = f"{i.periods} period{'s' if i.periods > 1 else ''} of {given(i.period_hours[0])} h"
    carbon_price = None if i.carbon_usd_per_kg is None else i.carbon_usd_per_kg * 1000
    grid = f"{num(i.grid_g_co2_per_kwh)} gCO2e/kWh"
    profile = i.grid_g_co2_per_kwh_by_period
    if profile is not None:
        low, high = num(min(profile)), num(max(profile))
        grid += f" (hourly profile {low}–{high} gCO2e/kWh, used for carbon)"
    site = f"PUE {i.pue:g}, electricity {i.electricity_usd_per_kwh:g} $/kWh, grid {grid}"
    lines: tuple[tuple[str, str], ...] = (
        ("scenario", i.scenario),
        ("status", plan.status.value),
        ("solve", f"{s.seconds:.2f} s with {s.solver}, gap {gap}"),
        ("objective", objective_text(plan)),
        ("horizon", f"{given(i.hours)} h in {periods}"),
        ("economics", f"{region_economics(plan) or site}, carbon price {num(carbon_price, '$/t')}"),
        ("limits", f"power cap {given(i.power_cap_kw, 'kW')}, budget {given(i.budget_usd, '$')}"),
        ("weights", weights_text(i)),
    )
    lines += region_lines(i)
    style = "green" if plan.has_solution else "red"
    return Section("wattgpu plan", lines=lines, style=style)


def weights_text(i: PlanningInputs) -> str:
    """The weight precision each model entry was predicted at (the checkpoint's by default)
    and the engine: ``bf16 on every model entry, engine vllm`` or, when they differ, the
    precisions with their entries (the three first named)."""
    by: dict[str, list[str]] = {}
    for m in i.models:
        by.setdefault(m.precision or "not recorded", []).append(m.name)
    engine = f", engine {i.provenance.engine}" if i.provenance.engine else ""
    if len(by) == 1:
        return f"{next(iter(by))} on every model entry{engine}"
    parts = []
    for precision, names in sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        more = f" +{len(names) - 3}" if len(names) > 3 else ""
        parts.append(f"{precision} ({', '.join(names[:3])}{more})")
    return "; ".join(parts) + engine


def _load_text(a: Allocation, hours: Sequence[float]) -> str:
    x = a.requests_per_s_by_period
    mean = sum(v * h for v, h in zip(x, hours, strict=True)) / sum(hours)
    return f"{num(max(x, default=0.0))}/{num(mean)}"


ALLOCATION_COLUMNS: tuple[str, ...] = (
    "model entry",
    "GPU",
    "TP",
    "replicas",
    "GPUs",
    "req/s peak/mean",
    "ITL ms served/cap (SLA)",
    "mean W/GPU",
    "energy kWh",
    "cost $",
    "CO2e kg",
)


_PEAK = "req/s peak"
#: The columns of the compact (default) table (those of :data:`ALLOCATION_COLUMNS` and the peak
#: load alone), with their compact headings.
COMPACT_ALLOCATION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("model entry", "model entry"),
    ("GPU", "GPU"),
    ("TP", "TP"),
    ("replicas", "repl."),
    (_PEAK, "req/s"),
    ("ITL ms served/cap (SLA)", "ITL srv/cap"),
    ("energy kWh", "kWh"),
    ("cost $", "cost $"),
)
_COMPACT_ALLOCATION_NOTE = (
    "req/s = peak requests/s; ITL srv/cap = mean ITL (ms) at the load served in the busiest "
    "period / ITL at capacity, at the SLA's percentile (SLA: --wide); kWh = GPU energy; --wide "
    "for every column"
)

_WIDE_ITL_NOTE = (
    "ITL served/cap: mean ITL at the load each replica serves in the busiest period / "
    "ITL at capacity (at the SLA percentile), the SLA in brackets"
)


def _compact(section: Section, keep: Sequence[tuple[str, str]], note: str = "") -> Section:
    """*section* with only the columns named in *keep* (column, new heading); rows, footer and
    alignment follow; *note* is added first."""
    index = [section.columns.index(c) for c, _ in keep]

    def cell(row: tuple[str, ...], i: int, heading: str) -> str:
        # a heading that drops "(SLA)" drops the bracketed SLA from the cells too
        text = row[i]
        if "(SLA)" in section.columns[i] and "(SLA)" not in heading:
            text = text.split(" (")[0]
        return text

    return Section(
        section.title,
        tuple(heading for _, heading in keep),
        tuple(
            tuple(cell(row, i, h) for i, (_, h) in zip(index, keep, strict=True))
            for row in section.rows
        ),
        numeric=frozenset(k for k, i in enumerate(index) if i in section.numeric),
        notes=((note,) if note else ()) + section.notes,
        footer=None if section.footer is None else tuple(section.footer[i] for i in index),
        style=section.style,
    )


def allocation_section(plan: Plan, *, wide: bool = True) -> Section:
    """One row per allocation, grouped by model entry, with a totals row (compact: the
    columns of :data:`COMPACT_ALLOCATION_COLUMNS`)."""
    inputs = plan.inputs
    rows: list[tuple[str, ...]] = []
    places: list[str] = []
    out_of_domain = False
    for m in inputs.models:
        mine = [a for a in plan.allocations if a.candidate.name == m.name]
        if not mine:
            rows.append((m.name, "—", "", "0", "0", "no load", "", "", "", "", "", "0"))
            places.append("")
            continue
        for k, a in enumerate(mine):
            c = a.candidate
            places.append(c.region)
            mark = "" if c.in_domain else f" {OUT_OF_DOMAIN_MARK}"
            out_of_domain |= not c.in_domain
            itl = (
                f"{num(1000 * a.itl_s_at_served_load)}/{num(1000 * c.itl_s_at_capacity)} "
                f"({num(1000 * m.itl_sla_s)})"
            )
            rows.append(
                (
                    m.name if k == 0 else "",
                    (pools_gpu_cell(c.pools) if c.pools else c.gpu) + mark,
                    pools_layout_cell(c.pools) if c.pools else c.layout,
                    str(a.replicas),
                    str(a.gpus),
                    _load_text(a, inputs.period_hours),
                    itl,
                    num(a.power_w_per_gpu),
                    num(a.energy_kwh),
                    num(a.cost_usd),
                    num(a.carbon_kg),
                    num(max(a.requests_per_s_by_period, default=0.0)),
                )
            )
    footer: tuple[str, ...] | None = None
    notes: list[str] = []
    t = plan.totals
    if t is not None:
        replicas = sum(a.replicas for a in plan.allocations)
        gpus = sum(t.gpus.values())
        footer = ("total", "", "", str(replicas), str(gpus), "", "", "")
        footer += (num(t.energy_kwh), num(t.cost_usd), num(t.carbon_kg), "")
        notes.append(
            f"energy = GPU energy; facility energy {num(t.facility_energy_kwh, 'kWh')} (× PUE); "
            f"mean fleet power {num(t.mean_power_w, 'W')}; "
            f"peak facility power {num(t.peak_facility_power_kw, 'kW')}"
        )
        notes.append(
            f"cost = GPU rent {num(t.gpu_cost_usd, '$')} + electricity "
            f"{num(t.energy_cost_usd, '$')} + carbon price {num(t.carbon_cost_usd, '$')}; "
            "GPUs: " + (", ".join(f"{n} × {g}" for g, n in t.gpus.items()) or "none")
        )
    allocated = {(a.candidate.name, a.candidate.gpu) for a in plan.allocations}
    notes.extend(multi_node_notes(inputs.candidates, allocated))
    if any(a.candidate.pools for a in plan.allocations):
        notes.append(UNIT_NOTE)
    if out_of_domain:
        notes.append(
            f"{OUT_OF_DOMAIN_MARK} outside the predictors' training domain: "
            "treat its numbers with care"
        )
    section = Section(
        "allocations",
        (*ALLOCATION_COLUMNS, _PEAK),
        tuple(rows),
        numeric=frozenset(range(2, 12)),
        notes=tuple(notes),
        footer=footer,
    )
    if wide:  # the ITL note of the wide column (the compact one has its own)
        note = _WIDE_ITL_NOTE if t is not None else ""
        every = _compact(section, [(c, c) for c in ALLOCATION_COLUMNS], note)
        return with_regions(plan, every, places)
    compact = _compact(section, COMPACT_ALLOCATION_COLUMNS, _COMPACT_ALLOCATION_NOTE)
    return with_regions(plan, compact, places)


def _saved(s: SavingDocument | None) -> tuple[str, str, str]:
    """Energy, cost and carbon saved against one baseline, each with its % ('—' without)."""
    if s is None:
        return ("—", "—", "—")
    return (
        f"{num(s.energy_kwh)} ({pct(s.energy_pct)})",
        f"{num(s.cost_usd)} ({pct(s.cost_pct)})",
        f"{num(s.carbon_kg)} ({pct(s.carbon_pct)})",
    )


#: The columns of the compact baseline table (column, heading).
COMPACT_BASELINE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("baseline", "baseline"),
    ("energy kWh", "energy kWh"),
    ("saved kWh", "saved kWh"),
    ("cost $", "cost $"),
    ("saved $", "saved $"),
)


def baseline_section(plan: Plan, *, wide: bool = True) -> Section:
    """Every baseline's totals and what this plan saves against it (negative = costs more;
    compact: energy and cost only, infeasible baselines marked in the energy column)."""
    savings = {s.baseline: s for s in savings_of(plan)}
    rows = []
    notes = []
    for b in plan.baselines:
        if b.totals is None:
            rows.append((b.name, "infeasible", "—", "—", "—", "—", "—", "—"))
            notes.append(f"{b.name}: {b.description} — infeasible: {b.reason or b.status}")
            continue
        energy, cost, carbon = _saved(savings.get(b.name))
        rows.append(
            (
                b.name,
                "ok",
                num(b.totals.energy_kwh),
                energy,
                num(b.totals.cost_usd),
                cost,
                num(b.totals.carbon_kg),
                carbon,
            )
        )
        notes.append(f"{b.name}: {b.description}")
    columns = (
        "baseline",
        "feasible",
        "energy kWh",
        "saved kWh",
        "cost $",
        "saved $",
        "CO2e kg",
        "saved kg",
    )
    section = Section(
        "savings vs baselines", columns, tuple(rows), frozenset(range(2, 8)), tuple(notes)
    )
    if wide:
        return section
    compact = _compact(section, COMPACT_BASELINE_COLUMNS)
    marked = tuple(
        (row[0], "infeasible", *row[2:]) if full[1] == "infeasible" else row
        for row, full in zip(compact.rows, section.rows, strict=True)
    )
    return Section(
        compact.title, compact.columns, marked, compact.numeric, compact.notes, compact.footer
    )


def failover_section(plan: Plan) -> Section | None:
    """Per model entry with failover: the capacity after its worst losses against the peak,
    and whether failover drove its replica count (None when no entry has failover)."""
    if not any(m.failover for m in plan.inputs.models):
        return None
    rows = plan_failover_rows(plan)
    cells = tuple(tuple(failover_cells(r, num)) for r in rows)
    return Section("failover", FAILOVER_COLUMNS, cells, frozenset(range(2, 7)), (FAILOVER_NOTE,))


def plan_sections(
    plan: Plan,
    *,
    candidates: bool = False,
    wide: bool = True,
    flags: UncertaintyFlagsDocument | None = None,
) -> list[Section]:
    """The format-neutral content of the table and Markdown forms (*wide*: every column), with
    the uncertainty *flags* under the allocations when any allocation is flagged."""
    sections = [header_section(plan)]
    if plan.solve.messages:
        title = {
            PlanStatus.INFEASIBLE: "no plan: infeasible",
            PlanStatus.ERROR: "no valid plan: error",
            PlanStatus.TIME_LIMIT: "no plan within the time limit",
        }.get(plan.status, "solver messages")
        sections.append(Section(title, notes=plan.solve.messages, style="red"))
    if plan.allocations:
        sections.append(allocation_section(plan, wide=wide))
        if (regions := regions_section(plan)) is not None:
            sections.append(regions)
        if (failover := failover_section(plan)) is not None:
            sections.append(failover)
    elif plan.has_solution:  # every entry without load: each its "no load" row
        sections.append(allocation_section(plan, wide=wide))
    if (flagged := flags_section(flags)) is not None:
        sections.append(flagged)
    if plan.baselines:
        sections.append(baseline_section(plan, wide=wide))
    if candidates:
        if plan.allocations:
            sections.append(alternatives_section(plan))
        sections.append(candidate_section(plan))
    return sections


WRAPPING = ("TP",)  # the tables' numeric columns that wrap at spaces: ``P 1×4 → D 1×8``


def render_plan(
    plan: Plan,
    fmt: str,
    *,
    candidates: CandidateSelection | None = None,
    wide: bool = False,
    flags: UncertaintyFlagsDocument | None = None,
) -> str:
    """The plan as text in *fmt* (one of :data:`PLAN_FORMATS`; table = plain text, no colour,
    compact within :data:`~planner.text.COMPACT_WIDTH` columns unless *wide*, or wider where its
    ids and numbers need it; Markdown always has every column). *candidates*: JSON carries
    that selection (default ``best``, :mod:`planner.documents.kept`); table and Markdown list
    the alternatives and exclusions when it is given. *flags*
    (:func:`planner.analysis.flags.uncertainty_flags`): the JSON's ``uncertainty_flags`` and
    the table and Markdown's flags section (CSV has none)."""
    listed = candidates is not None
    if fmt == "json":
        return records_json(plan_json(plan, candidates or "best", flags))
    if fmt == "csv":
        return plan_csv(plan)
    if fmt == "md":
        return sections_to_markdown(plan_sections(plan, candidates=listed, flags=flags))
    if fmt == "table":
        sections = plan_sections(plan, candidates=listed, wide=wide, flags=flags)
        return uncut_text(sections, FILE_WIDTH if wide else COMPACT_WIDTH, WRAPPING)
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(PLAN_FORMATS)}")
