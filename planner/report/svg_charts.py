"""The charts of the HTML report, as inline SVG (:mod:`planner.report.svg`).

Every chart function takes the typed report document (so the HTML shows exactly what the JSON
says) and returns an ``<svg>`` string, or None when there is nothing to draw: energy and cost by
model, GPU mix, power vs load per candidate (from the candidates' power curves), the Pareto front,
and predicted vs measured from the evaluation's ``docs/accuracy.predictions.csv``. The same
charts as the former matplotlib PNGs (sizes at 100 px per inch of those figures), drawn in
milliseconds instead of seconds (benchmarks/bench_cli.py ``--report``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from planner.documents.pareto import ParetoDocument
from planner.documents.plan_parts import CandidateDocument
from planner.documents.pools import deployment_text
from planner.documents.report import ReportDocument
from planner.report.charts import Chart
from planner.report.svg import (
    LABEL_PX,
    MARKERS,
    TICK_PX,
    Entry,
    Panel,
    Svg,
    colors,
    span,
    text_width_px,
)
from predictors.core.errors import WattgpuError

if TYPE_CHECKING:
    import polars as pl

MAX_POWER_PANELS = 12
"""Model entries shown in the power-vs-load chart (largest energy first)."""
ACCURACY_SPLITS: tuple[str, ...] = ("logo", "lolo")
ACCURACY_MAX_POINTS = 4000
#: Axis wording (with units) of each evaluated target.
ACCURACY_QUANTITIES: dict[str, str] = {
    "power": "power per GPU (W)",
    "itl": "ITL (s)",
    "ttft": "TTFT (s, experimental)",
}
#: Room below a panel for its tick labels and axis label, and above it for its title (px).
BELOW, ABOVE = 2 * TICK_PX + LABEL_PX + 10, 30.0


def power_curve(c: CandidateDocument) -> tuple[list[float], list[float]]:
    """Per-replica rates and power of *c*'s curve (two points for a linear candidate)."""
    if c.load_curve_requests_per_s:
        return list(c.load_curve_requests_per_s), list(c.power_curve_w_per_replica)
    cap = c.max_requests_per_s_per_replica
    idle = c.idle_power_w_per_replica
    return [0.0, cap], [idle, idle + c.energy_j_per_request * cap]


def _left_room(rows: list[str]) -> float:
    """Pixels left of a panel for its y tick labels."""
    return 14 + max((text_width_px(r, TICK_PX) for r in rows), default=0.0)


def energy_cost_by_model(report: ReportDocument) -> str | None:
    """Horizontal bars: facility energy (with the uncertainty band) and total cost per model."""
    models = sorted(
        (m for m in report.models if m.deployments), key=lambda m: m.estimated_facility_energy_kwh
    )
    if not models:
        return None
    names = [m.name for m in models]
    width, height = 1000.0, 80.0 + 35.0 * len(models)
    left, gap = _left_room(names), 30.0
    pw = (width - left - gap - 20) / 2
    box = (ABOVE, height - ABOVE - BELOW)
    energy = [m.estimated_facility_energy_kwh for m in models]
    bands = [m.uncertainty.facility_energy_kwh if m.uncertainty else None for m in models]
    highs = [b.high if b else e for b, e in zip(bands, energy, strict=True)]
    rows = (-0.6, len(models) - 0.4)
    svg = Svg(width, height, "Estimated energy and cost by model")
    ax_e = Panel.of((left, box[0], pw, box[1]), span([*energy, *highs], zero=True), rows)
    for i, (e, b) in enumerate(zip(energy, bands, strict=True)):
        ax_e.hbar(i, 0.0, e, "#3b7dd8")
        if b is not None:
            ax_e.hwhisker(i, b.low, b.high)
    svg.add(
        ax_e,
        ax_e.axes(
            title="Energy (bar: median; whisker: low–high band)",
            xlabel=f"estimated facility energy over {report.headline.hours:,.0f} h (kWh)",
            grid="x",
            rows=names,
        ),
    )
    cost = [m.estimated_cost_usd for m in models]
    ax_c = Panel.of((left + pw + gap, box[0], pw, box[1]), span(cost, zero=True), rows)
    for i, c in enumerate(cost):
        ax_c.hbar(i, 0.0, c, "#d8903b")
    svg.add(
        ax_c,
        ax_c.axes(
            title="Cost (GPU hours + electricity + carbon price)",
            xlabel="estimated total cost ($)",
            grid="x",
            rows=[""] * len(models),
        ),
    )
    return svg.render()


def gpu_mix(report: ReportDocument) -> str | None:
    """Stacked bars: GPUs of each type, split by model entry."""
    gpus = report.headline.gpus
    if not gpus:
        return None
    types = list(reversed(list(gpus)))  # the first type on top, as the table lists them
    palette = colors(len(report.models))
    used = [(i, m) for i, m in enumerate(report.models) if any(m.gpus.get(t) for t in types)]
    entries = [Entry(m.name, palette[i], kind="box") for i, m in used]
    legend = max(text_width_px(e.label, 11) for e in entries) + 56 if entries else 0.0
    width, height = 1000.0, 90.0 + 45.0 * len(types)
    left = _left_room(types)
    total = [float(sum(m.gpus.get(t, 0) for _, m in used)) for t in types]
    ax = Panel.of(
        (left, ABOVE, width - left - legend - 20, height - ABOVE - BELOW),
        span(total, zero=True),
        (-0.6, len(types) - 0.4),
    )
    start = [0.0] * len(types)
    for i, m in used:
        for row, t in enumerate(types):
            count = float(m.gpus.get(t, 0))
            if count:
                ax.hbar(row, start[row], count, palette[i])
                start[row] += count
    svg = Svg(width, height, "GPU mix")
    title = f"GPU mix ({report.headline.gpus_total} GPUs)"
    svg.add(
        ax,
        ax.axes(title=title, xlabel="GPUs in the plan", grid="x", rows=types),
        ax.legend(entries, where="outside"),
    )
    return svg.render()


def power_vs_load(report: ReportDocument) -> str | None:
    """Per model entry: replica power (W) vs request rate for every feasible candidate, from
    its power curve (or linear coefficients: idle + energy per request × req/s, up to
    capacity); the chosen deployments are drawn thick."""
    plan = report.plan
    chosen = {a.key for a in plan.allocations}
    order = [m.name for m in sorted(report.models, key=lambda m: -m.estimated_energy_kwh)]
    names = [n for n in order if any(c.name == n and c.feasible for c in plan.candidates)]
    names = names[:MAX_POWER_PANELS]
    if not names:
        return None
    cols = min(3, len(names))
    rows = (len(names) + cols - 1) // cols
    cell_w, cell_h, top = 400.0, 280.0, 30.0
    svg = Svg(cell_w * cols, cell_h * rows + top, "Estimated power vs load per candidate")
    svg.text(
        cell_w * cols / 2, 20, "Estimated replica power vs load (line ends at planned capacity)"
    )
    for idx, name in enumerate(names):
        cands = [c for c in plan.candidates if c.name == name and c.feasible]
        curves = [power_curve(c) for c in cands]
        xlim = span([x for xs, _ in curves for x in xs])
        ylim = span([p for _, ps in curves for p in ps])
        x0, y0 = cell_w * (idx % cols), top + cell_h * (idx // cols)
        left = 62.0
        ax = Panel.of((x0 + left, y0 + 24, cell_w - left - 12, cell_h - 24 - 44), xlim, ylim)
        entries = []
        for color, c, (xs, ps) in zip(colors(len(cands)), cands, curves, strict=True):
            mine = c.key in chosen
            dash = None if mine else "4 2"
            ax.line(xs, ps, color, width=2.6 if mine else 1.0, dash=dash)
            ax.marker(xs[-1], ps[-1], color, r=3.0 if mine else 1.8)
            label = deployment_text(c.gpu, c.layout, c.pools)  # its region told apart
            label += (f" in {c.region}" if c.region else "") + (" (chosen)" if mine else "")
            entries.append(Entry(label, color, width=2.6 if mine else 1.0, dash=dash))
        axes = ax.axes(
            title=name,
            xlabel="req/s per replica",
            ylabel="W per replica",
            tick_px=9.5,
            label_px=10.5,
            title_px=12.0,
        )
        svg.add(ax, axes, ax.legend(entries, size_px=8.5))
    return svg.render()


def pareto_front_chart(front: ParetoDocument | None) -> str | None:
    """The energy ↔ cost front with the chosen plan and the baselines marked."""
    if front is None or not front.points:
        return None
    pts = front.points
    entries = [Entry("Pareto front (each point a solved plan)", "#3b7dd8", kind="marker")]
    chosen = front.chosen
    if chosen:
        entries.append(Entry(chosen.label, "#d62728", kind="marker", marker="*"))
    shapes = MARKERS[1:5]
    for i, b in enumerate(front.baselines):
        entries.append(Entry(b.label, "#555", kind="hollow", marker=shapes[i % len(shapes)]))
    legend = max(text_width_px(e.label, 11) for e in entries) + 56
    costs = [p.cost_usd for p in pts] + [m.cost_usd for m in (chosen, *front.baselines) if m]
    energy = [p.facility_energy_kwh for p in pts]
    energy += [m.facility_energy_kwh for m in (chosen, *front.baselines) if m]
    width, height = 1000.0, 460.0
    left = 14 + text_width_px(f"{max(energy, default=0.0):,.0f}", TICK_PX) + 24
    ax = Panel.of(
        (left, ABOVE, width - left - legend - 20, height - ABOVE - BELOW), span(costs), span(energy)
    )
    ax.line([p.cost_usd for p in pts], [p.facility_energy_kwh for p in pts], "#3b7dd8")
    for p in pts:
        ax.marker(p.cost_usd, p.facility_energy_kwh, "#3b7dd8", r=4.0)
    if chosen:
        ax.marker(chosen.cost_usd, chosen.facility_energy_kwh, "#d62728", r=9.0, shape="*")
    for i, b in enumerate(front.baselines):
        shape = shapes[i % len(shapes)]
        ax.marker(b.cost_usd, b.facility_energy_kwh, "#555", r=5.0, shape=shape, hollow=True)
    svg = Svg(width, height, "Energy ↔ cost Pareto front")
    axes = ax.axes(
        title="Energy ↔ cost trade-off (ε-constraint)",
        xlabel="estimated total cost ($)",
        ylabel="estimated facility energy (kWh)",
    )
    svg.add(ax, axes, ax.legend(entries, where="outside"))
    return svg.render()


ACCURACY_COLUMNS = ("target", "split", "method", "measured", "predicted")
ACCURACY_FIX = "give the predictions CSV written by `wattgpu evaluate`"


def _header(text: str, path: Path) -> list[str]:
    """The CSV header of *text*: every accuracy column present, none twice."""
    import csv
    import io

    names = next(csv.reader(io.StringIO(text)), [])
    if not any(n.strip() for n in names):
        raise WattgpuError(f"{path}: empty (no CSV header); {ACCURACY_FIX}")
    for name in ACCURACY_COLUMNS:
        if names.count(name) > 1:
            raise WattgpuError(
                f"{path}: column {name!r} appears {names.count(name)} times in the header; "
                f"keep one; {ACCURACY_FIX}"
            )
    missing = [n for n in ACCURACY_COLUMNS if n not in names]
    if missing:
        raise WattgpuError(f"{path}: missing columns {missing}; {ACCURACY_FIX}")
    return names


def read_accuracy(path: Path) -> pl.DataFrame:
    """The rows of method "ours" on :data:`ACCURACY_SPLITS` with positive ``measured`` and
    ``predicted`` of the predictions CSV *path*; one WattgpuError line naming the file (and
    column and line) when it is unreadable, empty, lacks a column or holds a cell that is not a
    finite number, or when no row is left to draw."""
    import polars as pl

    from predictors.core.safe_read import MAX_PREDICT_CSV_BYTES, read_text

    try:
        text = read_text(path, MAX_PREDICT_CSV_BYTES)
    except WattgpuError as exc:
        raise WattgpuError(f"{exc}; {ACCURACY_FIX}") from None
    _header(text, path)
    strings = dict.fromkeys(ACCURACY_COLUMNS, pl.String)
    try:
        frame = pl.read_csv(text.encode(), infer_schema_length=0, schema_overrides=strings)
    except pl.exceptions.PolarsError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise WattgpuError(f"{path}: not a readable CSV ({first}); {ACCURACY_FIX}") from None
    frame = frame.select(ACCURACY_COLUMNS).with_row_index("line", offset=2)
    for col in ("measured", "predicted"):
        number = pl.col(col).str.strip_chars().cast(pl.Float64, strict=False)
        bad = frame.filter(
            (pl.col(col).is_not_null() & number.is_null()) | ~number.is_finite().fill_null(True)
        )
        if not bad.is_empty():
            line, cell = bad["line"][0], bad[col][0]
            raise WattgpuError(
                f"{path}: column {col!r}, line {line}: {cell!r} is not a finite number; "
                f"{ACCURACY_FIX}"
            )
        frame = frame.with_columns(number)
    frame = frame.filter(
        (pl.col("method") == "ours")
        & pl.col("split").is_in(list(ACCURACY_SPLITS))
        & (pl.col("measured") > 0)
        & (pl.col("predicted") > 0)
    )
    if frame.is_empty():
        raise WattgpuError(
            f"{path}: no rows of method 'ours' on {', '.join(ACCURACY_SPLITS)} with positive "
            f"measured and predicted values; {ACCURACY_FIX}"
        )
    return frame


def accuracy_chart(path: Path | None) -> tuple[str | None, str]:
    """Predicted vs measured (method "ours", unseen GPUs and unseen LLMs) from the evaluation's
    predictions CSV; (None, reason) when the file is absent or unusable (:func:`read_accuracy`)."""
    if path is None or not path.is_file():
        where = str(path) if path else "docs/accuracy.predictions.csv"
        return None, f"{where} not found: run `wattgpu evaluate` to produce it"
    import polars as pl

    try:
        frame = read_accuracy(path)
    except WattgpuError as exc:
        return None, str(exc)
    targets = sorted(frame["target"].unique().to_list())
    labels = {"logo": "unseen GPU", "lolo": "unseen LLM"}
    tint = {"logo": "#3b7dd8", "lolo": "#d8903b"}
    cell_w, height = 400.0, 400.0
    svg = Svg(cell_w * len(targets), height, "Predicted vs measured (model evaluation)")
    for k, target in enumerate(targets):
        sub = frame.filter(pl.col("target") == target)
        values = sub["measured"].to_list() + sub["predicted"].to_list()
        lo, hi = float(min(values)), float(max(values))
        lim = span([lo, hi], log=True)
        x0 = cell_w * k + 80
        ax = Panel.of(
            (x0, ABOVE, cell_w - 100, height - ABOVE - BELOW), lim, lim, xlog=True, ylog=True
        )
        for split in ACCURACY_SPLITS:
            part = sub.filter(pl.col("split") == split)
            if part.is_empty():
                continue
            if part.height > ACCURACY_MAX_POINTS:
                part = part.sample(ACCURACY_MAX_POINTS, seed=0)
            ax.scatter(
                part["measured"].to_list(), part["predicted"].to_list(), tint[split], 1.6, 0.4
            )
        ax.line([lo, hi], [lo, hi], "#333", width=1.0)
        quantity = ACCURACY_QUANTITIES.get(target, target)
        entries = [Entry(labels[s], tint[s], kind="marker") for s in ACCURACY_SPLITS]
        axes = ax.axes(
            title=f"{quantity}: held-out predictions",
            xlabel=f"measured {quantity}",
            ylabel=f"predicted {quantity}",
        )
        svg.add(ax, axes, ax.legend(entries, where="upper left"))
    return svg.render(), ""


def all_charts(report: ReportDocument, accuracy_csv: Path | None) -> list[Chart]:
    """Every chart of the HTML report, in display order."""
    simple = (
        ("energy_cost", "Estimated energy and cost by model", energy_cost_by_model),
        ("gpu_mix", "GPU mix", gpu_mix),
        ("power_load", "Estimated power vs load per candidate", power_vs_load),
        ("pareto", "Energy ↔ cost Pareto front", lambda r: pareto_front_chart(r.pareto)),
    )
    empty = {
        "energy_cost": "no allocations to draw (the plan has no solution)",
        "gpu_mix": "no GPUs in the plan",
        "power_load": "no feasible candidates",
        "pareto": "Pareto front not computed (use --pareto-points N > 0)",
    }
    charts: list[Chart] = []
    for key, title, fn in simple:
        svg = fn(report) if report.has_solution or key == "power_load" else None
        charts.append(Chart(key, title, None, "" if svg else empty[key], svg))
    svg, note = accuracy_chart(accuracy_csv)
    charts.append(Chart("accuracy", "Predicted vs measured (model evaluation)", None, note, svg))
    return charts
