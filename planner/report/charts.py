"""PNG charts (matplotlib, Agg backend, imported lazily) and the :class:`Chart` of a report.

The HTML report draws its charts as inline SVG (:mod:`planner.report.svg_charts`); matplotlib
draws what is written as a file: ``wattgpu pareto --chart`` (:func:`pareto_chart`, PNG or SVG by
the file's suffix) and the sweep section's charts (:mod:`planner.report.sweep_charts`, through
:func:`_figure` and :func:`_png`).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from planner.documents.pareto import ParetoDocument


@dataclass(frozen=True)
class Chart:
    """One rendered chart (png and svg None when skipped, with the reason in ``note``)."""

    key: str
    title: str
    png: bytes | None
    note: str = ""
    svg: str | None = None
    """The chart as an inline ``<svg>`` element (the HTML report's charts), instead of *png*."""


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


def _svg(fig: Any) -> bytes:
    """*fig* as a standalone SVG file, the same bytes on every run (no date, fixed ids)."""
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    FigureCanvasSVG(fig)
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "wattgpu", "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return buf.getvalue()


#: The file formats :func:`pareto_chart` writes, by file name suffix.
CHART_FORMATS: dict[str, str] = {".png": "png", ".svg": "svg"}


def pareto_chart(front: ParetoDocument | None, file_format: str = "png") -> bytes | None:
    """The energy ↔ cost front with the chosen plan and the baselines marked, as *file_format*
    (``png`` or ``svg``) bytes."""
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
    return _svg(fig) if file_format == "svg" else _png(fig)
