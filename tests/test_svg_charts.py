"""The HTML report's inline-SVG charts draw what the report document says.

The primitives (:mod:`planner.report.svg`): ticks lie in their range at a 1-2-2.5-5 step and
their labels read back as their values; scales map the domain onto the pixels monotonically.
The charts (:mod:`planner.report.svg_charts`) of the enterprise-fleet golden plan: bar lengths
are proportional to each model's facility energy and cost and to the GPUs of each type, the
power chart has one curve per feasible candidate (chosen ones thick), and the accuracy chart one
dot per evaluated row (at most 4,000 per split).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from planner.documents.plan import PlanDocument
from planner.documents.report import ReportDocument
from planner.report.build import make_report
from planner.report.svg import Scale, log_ticks, nice_ticks, tick_text
from planner.report.svg_charts import (
    ACCURACY_MAX_POINTS,
    accuracy_chart,
    energy_cost_by_model,
    gpu_mix,
    power_vs_load,
)
from predictors.estimators.card import load_card

REPO = Path(__file__).resolve().parent.parent
finite = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False)


@given(lo=finite, width=st.floats(min_value=1e-6, max_value=1e9))
def test_nice_ticks_cover_the_range_at_a_nice_step(lo: float, width: float) -> None:
    assume(width >= 1e-4 * max(1.0, abs(lo)))  # a chart's range, not round-off
    hi = lo + width
    ticks = nice_ticks(lo, hi)
    assert 2 <= len(ticks) <= 7
    step = ticks[1] - ticks[0]
    tol = 1e-6 * step
    assert lo - tol <= ticks[0] and ticks[-1] <= hi + tol
    assert all(
        math.isclose(b - a, step, rel_tol=1e-6) for a, b in zip(ticks, ticks[1:], strict=False)
    )
    mantissa = step / 10 ** math.floor(math.log10(step) + 1e-12)
    assert any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1.0, 2.0, 2.5, 5.0, 10.0))
    labels = [tick_text(v, ticks) for v in ticks]
    assert len(set(labels)) == len(labels)
    for v, text in zip(ticks, labels, strict=True):
        assert math.isclose(float(text.replace(",", "")), v, abs_tol=step * 1e-3)


@given(lo=st.floats(min_value=1e-6, max_value=1e6), ratio=st.floats(min_value=1.5, max_value=1e8))
def test_log_ticks_lie_in_the_range(lo: float, ratio: float) -> None:
    hi = lo * ratio
    ticks = log_ticks(lo, hi)
    assert ticks == sorted(ticks)
    assert all(lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9) for t in ticks)
    if ratio >= 10:
        assert ticks  # a decade holds a power of ten


@given(lo=st.floats(1e-3, 1e3), ratio=st.floats(1.01, 1e4), log=st.booleans())
def test_scale_maps_the_domain_onto_the_pixels(lo: float, ratio: float, log: bool) -> None:
    s = Scale(lo, lo * ratio, 300.0, 50.0, log)  # a y axis: pixels run upwards
    assert s(lo) == pytest.approx(300.0) and s(lo * ratio) == pytest.approx(50.0)
    mid = math.sqrt(lo * lo * ratio) if log else lo * (1 + ratio) / 2
    assert s(lo) > s(mid) > s(lo * ratio)


@pytest.fixture(scope="module")
def golden_report() -> ReportDocument:
    data = json.loads((REPO / "tests" / "golden" / "enterprise-fleet.json").read_text())
    data["solve"]["seconds"] = 0.0  # the golden files leave out the run-dependent time
    report, _ = make_report(PlanDocument.model_validate(data), load_card(None))
    return report


def _rects(svg: str, fill: str) -> list[ElementTree.Element]:
    return [e for e in ElementTree.fromstring(svg).iter("rect") if e.get("fill") == fill]


def test_energy_and_cost_bars_are_proportional(golden_report: ReportDocument) -> None:
    svg = energy_cost_by_model(golden_report)
    assert svg is not None
    models = sorted(
        (m for m in golden_report.models if m.deployments),
        key=lambda m: m.estimated_facility_energy_kwh,
    )
    for fill, values in (
        ("#3b7dd8", [m.estimated_facility_energy_kwh for m in models]),
        ("#d8903b", [m.estimated_cost_usd for m in models]),
    ):
        widths = [float(r.get("width", "0")) for r in _rects(svg, fill)]
        assert len(widths) == len(values)
        ratios = [w / v for w, v in zip(widths, values, strict=True)]
        assert max(ratios) == pytest.approx(min(ratios), rel=0.02)  # 0.1 px rounding


def test_gpu_mix_rows_are_proportional_to_the_gpus(golden_report: ReportDocument) -> None:
    svg = gpu_mix(golden_report)
    assert svg is not None
    by_row: dict[str, float] = {}
    for r in ElementTree.fromstring(svg).iter("rect"):
        if r.get("fill", "none") != "none" and r.get("height") not in (None, "0"):
            by_row[r.get("y", "")] = by_row.get(r.get("y", ""), 0.0) + float(r.get("width", "0"))
    legend = {k: v for k, v in by_row.items() if v < 30}  # the legend's colour boxes
    rows = sorted(v for k, v in by_row.items() if k not in legend)
    counts = sorted(float(n) for n in golden_report.headline.gpus.values())
    assert len(rows) == len(counts)
    ratios = [w / n for w, n in zip(rows, counts, strict=True)]
    assert max(ratios) == pytest.approx(min(ratios), rel=0.02)


def test_power_chart_draws_every_feasible_candidate(golden_report: ReportDocument) -> None:
    svg = power_vs_load(golden_report)
    assert svg is not None
    plan = golden_report.plan
    feasible = [c for c in plan.candidates if c.feasible]
    lines = list(ElementTree.fromstring(svg).iter("polyline"))
    assert len(lines) == len(feasible)
    thick = [e for e in lines if e.get("stroke-width") == "2.6"]
    assert len(thick) == len({a.key for a in plan.allocations})
    knots = sorted(len(e.get("points", "").split()) for e in lines)
    assert knots == sorted(max(2, len(c.load_curve_requests_per_s)) for c in feasible)


def test_accuracy_chart_has_a_dot_per_row(tmp_path: Path) -> None:
    csv = tmp_path / "accuracy.predictions.csv"
    rows = ["target,split,method,measured,predicted"]
    rows += [f"power,logo,ours,{100 + i},{110 + i}" for i in range(30)]
    rows += [f"power,lolo,ours,{100 + i},{90 + i}" for i in range(20)]
    itl = range(ACCURACY_MAX_POINTS + 5)
    rows += [f"itl,lolo,ours,{0.01 + i / 1000},{0.012 + i / 1000}" for i in itl]
    rows += ["power,logo,paper,100,300", "power,logo,ours,0,5"]  # another method; not > 0
    csv.write_text("\n".join(rows) + "\n")
    svg, note = accuracy_chart(csv)
    assert svg is not None and note == ""
    groups = [g for g in ElementTree.fromstring(svg).iter("g") if g.get("fill-opacity")]
    dots = sorted(len(list(g.iter("circle"))) for g in groups)
    assert dots == [20, 30, ACCURACY_MAX_POINTS]  # itl: one split, sampled down to the cap
    assert re.search(r">predicted ITL \(s\)<", svg) and re.search(r">measured power", svg)
