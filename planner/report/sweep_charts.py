"""PNG charts of a sweep (matplotlib, Agg, as :mod:`planner.report.charts` does): the fan of
facility energy over the horizon, the tornado of what moves the cost, the GPU-mix frequency."""

from __future__ import annotations

from planner.documents.sweep import SweepDocument
from planner.report.charts import Chart, _figure, _png

MAX_MIXES = 10


def fan_chart(doc: SweepDocument) -> bytes | None:
    """P10-P90 band and P50 of facility energy per period, base plan and re-optimised."""
    if doc.summary is None:
        return None
    fan = doc.summary.fan
    x = list(range(1, len(fan.period_hours) + 1))
    fig = _figure(8, 3.6)
    ax = fig.add_subplot()
    ax.fill_between(x, fan.base_p10, fan.base_p90, alpha=0.25, label="base plan P10–P90")
    ax.plot(x, fan.base_p50, label="base plan P50")
    ax.fill_between(x, fan.optimal_p10, fan.optimal_p90, alpha=0.2, label="re-optimised P10–P90")
    ax.plot(x, fan.optimal_p50, linestyle="--", label="re-optimised P50")
    ax.set_xlabel("period")
    ax.set_ylabel("facility energy (kWh)")
    ax.legend(fontsize=8)
    return _png(fig)


def tornado_chart(doc: SweepDocument) -> bytes | None:
    """Horizontal bars from the low to the high mean re-optimised cost of each factor."""
    if doc.summary is None or not doc.summary.tornado:
        return None
    bars = list(reversed(doc.summary.tornado))
    fig = _figure(8, 0.4 * len(bars) + 1.2)
    ax = fig.add_subplot()
    for i, b in enumerate(bars):
        lo, hi = sorted((b.low_cost_usd, b.high_cost_usd))
        ax.barh(i, hi - lo, left=lo, color="#4c78a8" if b.source == "draws" else "#f58518")
    ax.set_yticks(range(len(bars)), [b.factor for b in bars], fontsize=7)
    ax.set_xlabel("mean re-optimised cost ($), factor low ↔ high")
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
