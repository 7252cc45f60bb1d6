"""PNG charts of a report (matplotlib, Agg backend, imported lazily).

Every chart function takes the typed report document (so the HTML shows exactly what the
JSON says) and returns PNG bytes, or None with a note when there is
nothing to draw: energy and cost by model, GPU mix, power vs load per candidate (from the
candidates' linear coefficients), the Pareto front, and predicted vs measured from the
evaluation's ``docs/accuracy.predictions.csv``.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.documents.pareto import ParetoDocument
from planner.documents.plan_parts import CandidateDocument
from planner.documents.report import ReportDocument

MAX_POWER_PANELS = 12
"""Model entries shown in the power-vs-load chart (largest energy first)."""
ACCURACY_SPLITS: tuple[str, ...] = ("logo", "lolo")
ACCURACY_MAX_POINTS = 4000


@dataclass(frozen=True)
class Chart:
    """One rendered chart (png None when skipped, with the reason in ``note``)."""

    key: str
    title: str
    png: bytes | None
    note: str = ""


def _figure(width: float, height: float) -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _png(fig: Any) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def energy_cost_by_model(report: ReportDocument) -> bytes | None:
    """Horizontal bars: facility energy (with the uncertainty band) and total cost per model."""
    models = [m for m in report.models if m.deployments]
    if not models:
        return None
    models = sorted(models, key=lambda m: m.estimated_facility_energy_kwh)
    names = [m.name for m in models]
    fig = _figure(10, 0.8 + 0.35 * len(models))
    ax_e, ax_c = fig.subplots(1, 2, sharey=True)
    energy = [m.estimated_facility_energy_kwh for m in models]
    lo, hi = [], []
    for m, e in zip(models, energy, strict=True):
        band = m.uncertainty.facility_energy_kwh if m.uncertainty else None
        lo.append(e - band.low if band else 0.0)
        hi.append(band.high - e if band else 0.0)
    ax_e.barh(names, energy, xerr=[lo, hi], color="#3b7dd8", ecolor="#333", capsize=3)
    ax_e.set_xlabel(f"estimated facility energy over {report.headline.hours:,.0f} h (kWh)")
    ax_e.set_title("Energy (bar: median; whisker: low–high band)")
    ax_c.barh(names, [m.estimated_cost_usd for m in models], color="#d8903b")
    ax_c.set_xlabel("estimated total cost ($)")
    ax_c.set_title("Cost (GPU hours + electricity + carbon price)")
    for ax in (ax_e, ax_c):
        ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def gpu_mix(report: ReportDocument) -> bytes | None:
    """Stacked bars: GPUs of each type, split by model entry."""
    gpus = report.headline.gpus
    if not gpus:
        return None
    types = list(gpus)
    fig = _figure(10, 0.9 + 0.45 * len(types))
    ax = fig.subplots()
    left = [0.0] * len(types)
    cmap = _colors(len(report.models))
    for i, m in enumerate(report.models):
        counts = [float(m.gpus.get(t, 0)) for t in types]
        if not any(counts):
            continue
        ax.barh(types, counts, left=left, label=m.name, color=cmap[i])
        left = [a + b for a, b in zip(left, counts, strict=True)]
    ax.set_xlabel("GPUs in the plan")
    ax.set_title(f"GPU mix ({report.headline.gpus_total} GPUs)")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def _colors(n: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab20"]
    return [cmap(i % 20) for i in range(max(1, n))]


def _power_curve(c: CandidateDocument) -> tuple[list[float], list[float]]:
    """Per-replica rates and power of *c*'s curve (two points for a linear candidate)."""
    if c.load_curve_requests_per_s:
        return list(c.load_curve_requests_per_s), list(c.power_curve_w_per_replica)
    cap = c.max_requests_per_s_per_replica
    idle = c.idle_power_w_per_replica
    return [0.0, cap], [idle, idle + c.energy_j_per_request * cap]


def power_vs_load(report: ReportDocument) -> bytes | None:
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
    fig = _figure(4.0 * cols, 2.8 * rows)
    axes = fig.subplots(rows, cols, squeeze=False)
    for idx, name in enumerate(names):
        ax = axes[idx // cols][idx % cols]
        cands = [c for c in plan.candidates if c.name == name and c.feasible]
        colors = _colors(len(cands))
        for color, c in zip(colors, cands, strict=True):
            xs, ps = _power_curve(c)
            cap, top = xs[-1], ps[-1]
            mine = c.key in chosen
            ax.plot(
                xs,
                ps,
                color=color,
                lw=2.6 if mine else 1.0,
                ls="-" if mine else "--",
                label=f"{c.gpu} TP{c.tp}" + (" (chosen)" if mine else ""),
            )
            ax.plot([cap], [top], "o", color=color, ms=4 if mine else 2)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("req/s per replica", fontsize=8)
        ax.set_ylabel("W per replica", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, frameon=False)
    for idx in range(len(names), rows * cols):
        axes[idx // cols][idx % cols].set_visible(False)
    fig.suptitle("Estimated replica power vs load (line ends at planned capacity)", fontsize=10)
    return _png(fig)


def pareto_chart(front: ParetoDocument | None) -> bytes | None:
    """The energy ↔ cost front with the chosen plan and the baselines marked."""
    if front is None or not front.points:
        return None
    pts = front.points
    fig = _figure(10, 4.6)
    ax = fig.subplots()
    ax.plot(
        [p.cost_usd for p in pts],
        [p.facility_energy_kwh for p in pts],
        "o-",
        color="#3b7dd8",
        label="Pareto front (each point a solved plan)",
    )
    chosen = front.chosen
    if chosen:
        ax.plot(
            [chosen.cost_usd],
            [chosen.facility_energy_kwh],
            "*",
            ms=16,
            color="#d62728",
            label=chosen.label,
        )
    markers = ["s", "^", "D", "v", "P"]
    for i, b in enumerate(front.baselines):
        ax.plot(
            [b.cost_usd],
            [b.facility_energy_kwh],
            markers[i % len(markers)],
            ms=8,
            color="#555",
            fillstyle="none",
            label=b.label,
        )
    ax.set_xlabel("estimated total cost ($)")
    ax.set_ylabel("estimated facility energy (kWh)")
    ax.set_title("Energy ↔ cost trade-off (ε-constraint)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return _png(fig)


#: Axis wording (with units) of each evaluated target.
ACCURACY_QUANTITIES: dict[str, str] = {
    "power": "power per GPU (W)",
    "itl": "ITL (s)",
    "ttft": "TTFT (s, experimental)",
}


def accuracy_chart(path: Path | None) -> tuple[bytes | None, str]:
    """Predicted vs measured (method "ours", unseen GPUs and unseen LLMs) from the evaluation's
    predictions CSV; (None, reason) when the file is absent or has no such rows."""
    if path is None or not path.is_file():
        where = str(path) if path else "docs/accuracy.predictions.csv"
        return None, f"{where} not found: run `wattgpu evaluate` to produce it"
    import polars as pl

    try:
        frame = pl.read_csv(path, infer_schema_length=10000)
    except (pl.exceptions.PolarsError, OSError) as exc:
        return None, f"{path}: cannot read ({exc})"
    need = {"target", "split", "method", "measured", "predicted"}
    if not need <= set(frame.columns):
        return None, f"{path}: missing columns {sorted(need - set(frame.columns))}"
    frame = frame.filter(
        (pl.col("method") == "ours")
        & pl.col("split").is_in(list(ACCURACY_SPLITS))
        & (pl.col("measured") > 0)
        & (pl.col("predicted") > 0)
    )
    if frame.is_empty():
        return None, f"{path}: no rows of method 'ours' on {', '.join(ACCURACY_SPLITS)}"
    targets = sorted(frame["target"].unique().to_list())
    fig = _figure(5.0 * len(targets), 4.4)
    axes = fig.subplots(1, len(targets), squeeze=False)[0]
    labels = {"logo": "unseen GPU", "lolo": "unseen LLM"}
    colors = {"logo": "#3b7dd8", "lolo": "#d8903b"}
    for ax, target in zip(axes, targets, strict=True):
        sub = frame.filter(pl.col("target") == target)
        values = sub["measured"].to_list() + sub["predicted"].to_list()
        lo, hi = float(min(values)), float(max(values))
        for split in ACCURACY_SPLITS:
            part = sub.filter(pl.col("split") == split)
            if part.height > ACCURACY_MAX_POINTS:
                part = part.sample(ACCURACY_MAX_POINTS, seed=0)
            ax.scatter(
                part["measured"].to_list(),
                part["predicted"].to_list(),
                s=5,
                alpha=0.4,
                color=colors[split],
                label=labels[split],
            )
        ax.plot([lo, hi], [lo, hi], color="#333", lw=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        quantity = ACCURACY_QUANTITIES.get(target, target)
        ax.set_xlabel(f"measured {quantity}")
        ax.set_ylabel(f"predicted {quantity}")
        ax.set_title(f"{quantity}: held-out predictions")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return _png(fig), ""


def _pareto_of(report: ReportDocument) -> bytes | None:
    return pareto_chart(report.pareto)


def all_charts(report: ReportDocument, accuracy_csv: Path | None) -> list[Chart]:
    """Every chart of the HTML report, in display order."""
    charts: list[Chart] = []
    simple = (
        ("energy_cost", "Estimated energy and cost by model", energy_cost_by_model),
        ("gpu_mix", "GPU mix", gpu_mix),
        ("power_load", "Estimated power vs load per candidate", power_vs_load),
        ("pareto", "Energy ↔ cost Pareto front", _pareto_of),
    )
    empty = {
        "energy_cost": "no allocations to draw (the plan has no solution)",
        "gpu_mix": "no GPUs in the plan",
        "power_load": "no feasible candidates",
        "pareto": "Pareto front not computed (use --pareto-points N > 0)",
    }
    for key, title, fn in simple:
        png = fn(report) if report.has_solution or key == "power_load" else None
        charts.append(Chart(key, title, png, "" if png else empty[key]))
    png, note = accuracy_chart(accuracy_csv)
    charts.append(Chart("accuracy", "Predicted vs measured (model evaluation)", png, note))
    return charts
