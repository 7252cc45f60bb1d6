"""PNG charts of a sweep (matplotlib, Agg, as :mod:`planner.report.charts` does): the fan of
facility energy over the horizon, the tornado of what moves the cost, the GPU-mix frequency."""

from __future__ import annotations

from typing import Any

from planner.documents.sweep import FanDocument, SweepDocument
from planner.report.charts import Chart, _figure, _png

MAX_MIXES = 10
#: Tornado bar colour per source (draw factor, grid axis).
SOURCE_COLOURS = {"draws": "#4c78a8", "grid": "#f58518"}
#: The hatch of a tornado bar whose cost falls as its factor rises.
FALLS_HATCH = "//"


def fan_chart(doc: SweepDocument) -> bytes | None:
    """P10-P90 band and P50 of facility energy per period, base plan and re-optimised; one
    period (a band and a line of one point draw nothing) as P10-P90 error bars with the P50
    marked."""
    if doc.summary is None:
        return None
    fan = doc.summary.fan
    x = list(range(1, len(fan.period_hours) + 1))
    fig = _figure(8, 3.6)
    ax = fig.add_subplot()
    if len(x) == 1:
        _one_period(ax, fan)
    else:
        ax.fill_between(x, fan.base_p10, fan.base_p90, alpha=0.25, label="base plan P10–P90")
        ax.plot(x, fan.base_p50, label="base plan P50")
        ax.fill_between(
            x, fan.optimal_p10, fan.optimal_p90, alpha=0.2, label="re-optimised P10–P90"
        )
        ax.plot(x, fan.optimal_p50, linestyle="--", label="re-optimised P50")
    ax.set_xlabel("period")
    ax.set_ylabel("facility energy (kWh)")
    ax.legend(fontsize=8)
    return _png(fig)


def _one_period(ax: Any, fan: FanDocument) -> None:
    """The fan of a single period: one error bar per side, P10 to P90, a marker at the P50."""
    for offset, name, p10, p50, p90, marker in (
        (-0.1, "base plan", fan.base_p10[0], fan.base_p50[0], fan.base_p90[0], "o"),
        (0.1, "re-optimised", fan.optimal_p10[0], fan.optimal_p50[0], fan.optimal_p90[0], "s"),
    ):
        ax.errorbar(
            [1 + offset],
            [p50],
            yerr=[[p50 - p10], [p90 - p50]],
            fmt=marker,
            capsize=8,
            label=f"{name} P50 (bar: P10–P90)",
        )
    ax.set_xlim(0.5, 1.5)
    ax.set_xticks([1], ["1"])


def tornado_chart(doc: SweepDocument) -> bytes | None:
    """Horizontal bars from the factor-low to the factor-high mean re-optimised cost of each
    factor, the largest |swing| on top: a bar whose cost falls as the factor rises is hatched
    and its arrow head at the factor-high end points left."""
    from matplotlib.patches import Patch

    if doc.summary is None or not doc.summary.tornado:
        return None
    bars = list(reversed(doc.summary.tornado))
    fig = _figure(8, 0.4 * len(bars) + 1.6)
    ax = fig.add_subplot()
    for i, b in enumerate(bars):
        low, high = b.low_cost_usd, b.high_cost_usd
        falls = high < low
        ax.barh(
            i,
            high - low,
            left=low,
            color=SOURCE_COLOURS[b.source],
            hatch=FALLS_HATCH if falls else None,
            edgecolor="#333333" if falls else SOURCE_COLOURS[b.source],
        )
        ax.plot([high], [i], marker="<" if falls else ">", color="#333333", markersize=5)
    ax.set_yticks(range(len(bars)), [b.factor for b in bars], fontsize=7)
    ax.set_xlabel("mean re-optimised cost ($): each bar from the factor's low end to its high end")
    sources = sorted({b.source for b in bars})
    handles = [Patch(color=SOURCE_COLOURS[s], label=f"{s} factor") for s in sources]
    handles += [
        Patch(facecolor="white", edgecolor="#333333", label="cost rises as the factor rises (▶)"),
        Patch(
            facecolor="white",
            edgecolor="#333333",
            hatch=FALLS_HATCH,
            label="cost falls as the factor rises (◀)",
        ),
    ]
    ax.legend(handles=handles, fontsize=7, loc="best")
    return _png(fig)


def gpu_mix_chart(doc: SweepDocument) -> bytes | None:
    """Share of draws whose re-optimised fleet has each GPU mix."""
    if doc.summary is None or not doc.summary.stability.gpu_mix_frequency:
        return None
    mixes = doc.summary.stability.gpu_mix_frequency[:MAX_MIXES]
    labels = [", ".join(f"{g}×{n}" for g, n in m.gpus.items()) for m in mixes]
    fig = _figure(8, 0.4 * len(mixes) + 1.2)
    ax = fig.add_subplot()
    ax.barh(range(len(mixes)), [100 * m.share for m in reversed(mixes)])
    ax.set_yticks(range(len(mixes)), list(reversed(labels)), fontsize=7)
    ax.set_xlabel("share of draws (%)")
    return _png(fig)


def sweep_charts(doc: SweepDocument) -> list[Chart]:
    """The three sweep charts (png None with a note when there is nothing to draw)."""
    out = []
    for key, title, fn in (
        ("sweep-fan", "Facility energy per period over the draws (fan)", fan_chart),
        ("sweep-tornado", "What moves the cost most (tornado)", tornado_chart),
        ("sweep-gpu-mix", "GPU mix of the re-optimised plans", gpu_mix_chart),
    ):
        png = fn(doc)
        out.append(Chart(key, title, png, "" if png else "no draws to chart"))
    return out
