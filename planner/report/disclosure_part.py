"""The report's disclosure part: every disclosure field (value, unit, label, P10–P90, source or
the reason it does not apply), the boundary, idle vs active energy, hardware and software, and
the hourly emissions on the grid profile. Rendered to Markdown, HTML and text like every part
(:mod:`planner.report.sections` appends it)."""

from __future__ import annotations

from planner.documents.disclosure import DisclosureDocument, FieldDocument
from planner.documents.report import ReportDocument
from planner.report.blocks import Block, Para, Part, given, num, table
from planner.report.tables import LOCATION_BASIS

#: Per-model fields shown in the per-model table (every one is in the JSON).
MODEL_COLUMNS: tuple[tuple[str, str], ...] = (
    ("total_params_b", "params B"),
    ("active_params_b", "active B"),
    ("precision", "precision"),
    ("inference_flops_per_request", "FLOP/request"),
    ("energy_wh_per_request", "Wh/request"),
    ("energy_prefill_j_per_output_token", "prefill J/token"),
    ("energy_decode_j_per_output_token", "decode J/token"),
    ("energy_wh_per_1000_output_tokens", "Wh/1k tokens"),
    ("emissions_location_kg_co2e", f"CO2e kg ({LOCATION_BASIS})"),
    ("embodied_kg_co2e", "embodied kg"),
    ("sci_g_co2e_per_1m_output_tokens", "SCI g/1M tok"),
)


def big(v: object) -> str:
    """A number for people; 1e12 and above in scientific notation (FLOPs)."""
    if isinstance(v, float | int) and not isinstance(v, bool) and abs(v) >= 1e12:
        return f"{v:.3e}"
    return num(v)


def field_value(f: FieldDocument) -> str:
    """The value for people ('not applicable: reason' when it has none)."""
    if f.not_applicable is not None:
        return f"not applicable: {f.not_applicable}"
    return given(f.value) if f.label == "user-supplied" else big(f.value)


def field_range(f: FieldDocument) -> str:
    """'P10 – P90' (or '—')."""
    if f.p10 is None or f.p90 is None:
        return "—"
    return f"{num(f.p10)} – {num(f.p90)}"


def _fleet_table(d: DisclosureDocument) -> Block:
    """One row per field; a field that does not apply states why in its source column, so the
    right-aligned value column stays as narrow as the numbers."""
    return table(
        ["field", "value", "unit", "label", "P10 – P90", "source"],
        (
            [key, field_value(f), f.unit, f.label or "—", field_range(f), f.source]
            if f.not_applicable is None
            else [key, "—", f.unit, f.label or "—", field_range(f), field_value(f)]
            for key, f in d.fields.items()
        ),
        {1, 4},
    )


def _model_table(d: DisclosureDocument) -> Block:
    rows = []
    for m in d.models:
        cells = [m.name, str(m.fields["model_id"].value)]
        for key, _ in MODEL_COLUMNS:
            f = m.fields.get(key)
            cells.append("—" if f is None or f.value is None else field_value(f))
        rows.append(cells)
    return table(
        ["model entry", "model id", *(label for _, label in MODEL_COLUMNS)],
        rows,
        {2, 3, *range(5, 3 + len(MODEL_COLUMNS))},
    )


def _checkpoints(d: DisclosureDocument) -> Block:
    """The ``checkpoint`` field of every model entry, with its source (not in the table)."""
    items = []
    for m in d.models:
        f = m.fields.get("checkpoint")
        if f is not None:
            items.append(f"{m.name}: {field_value(f)}" + (f" ({f.source})" if f.source else ""))
    return Para("checkpoint of each model entry: " + "; ".join(items) + ".")


def disclosure_part(report: ReportDocument) -> Part | None:
    """The disclosure part (None when the report has no disclosure)."""
    d = report.disclosure
    if d is None:
        return None
    blocks: list[Block] = [
        Para(
            f"Phase: {d.phase}; persona: {d.persona}; recipients: {', '.join(d.recipients)}. "
            "Frameworks: " + "; ".join(d.frameworks) + "."
        ),
        _fleet_table(d),
        Para("Per model entry (every field with its unit, label and range is in the JSON):"),
        _model_table(d),
        _checkpoints(d),
        Para("System boundary (machine-readable in the JSON):"),
        table(
            ["component", "treatment", "factor", "note"],
            (
                [b.component, b.treatment, "—" if b.factor is None else given(b.factor), b.note]
                for b in d.boundary
            ),
            {2},
        ),
        Para("Idle and active GPU energy per deployment:"),
        table(
            ["model entry", "GPU", "layout", "replicas", "idle kWh", "active kWh"],
            (
                [
                    r.name,
                    r.gpu,
                    r.layout or str(r.tp),
                    str(r.replicas),
                    num(r.idle_energy_kwh),
                    num(r.active_energy_kwh),
                ]
                for r in d.idle_active
            ),
            {3, 4, 5},
        ),
        Para("Hardware and software:"),
        table(
            ["model entry", "model", "GPU", "GPUs", "layout", "engine", "precision"],
            (
                [h.name, h.model, h.gpu, str(h.gpus), h.layout, h.engine or "—", h.precision]
                for h in d.hardware
            ),
            {3},
        ),
    ]
    if d.price_basis:
        used = {h.gpu for h in d.hardware}
        blocks.append(Para("Price basis of each GPU type (cost = GPU-hours at this price):"))
        blocks.append(
            table(
                ["GPU", "planned", "price basis"],
                ([g, "yes" if g in used else "no", b] for g, b in d.price_basis.items()),
            )
        )
    if d.hourly:
        blocks.append(Para("Emissions per period on the scenario's grid profile:"))
        blocks.append(
            table(
                ["period", "hours", "g CO2e/kWh", "facility kWh", "kg CO2e"],
                (
                    [
                        str(h.period),
                        num(h.hours),
                        num(h.g_co2_per_kwh),
                        num(h.facility_energy_kwh),
                        num(h.emissions_kg_co2e),
                    ]
                    for h in d.hourly
                ),
                {0, 1, 2, 3, 4},
            )
        )
    blocks += [
        Para(f"Inference FLOPs: {d.flops_methodology}", "meta"),
        Para(f"Ranges: {d.range_method}.", "meta"),
        Para(f"Labels: {d.labels}", "meta"),
    ]
    return Part("Disclosure fields (EU AI Act, SCI, GHG Protocol, AI Energy Score)", tuple(blocks))
