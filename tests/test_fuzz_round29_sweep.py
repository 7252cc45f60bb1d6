"""Round-29 findings on ``wattgpu sweep`` (/tmp/fuzz29/sweep/REPORT.md, findings 1-3).

Before: ``--choose robust --sla-probability 1e-13`` chose a fleet that met every SLA, the cap
and the budget in 0 of the draws (an absolute 1e-12 tolerance on the share swallowed any P up
to 1e-12; the reason said "(0 or more of them)"); the HTML fan chart of a one-period scenario
drew nothing (a band and a line of one point), and the tornado drew each bar from the lesser to
the greater cost, hiding which end is the factor's high one; ``--sla-probability nan`` said
"give a number from 0 to 1" and ``--help`` showed ``[0.0<=x<=1.0]`` though 0 is refused.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from planner.cli import number_options
from planner.cli.number_options import _range, non_finite_problem
from planner.documents.sweep import FanDocument, TornadoBarDocument
from planner.report import sweep_charts
from planner.sweep import aggregate
from planner.sweep.aggregate import robust_choice
from tests.cli_runner import run_cli

PAPER = "paper-llama8b-low-load"

# 1. The robust choice counts draws: a positive P takes at least one.


class _Fleet:
    def __init__(self, name: str) -> None:
        self.name = name

    def label(self) -> str:
        return self.name

    def gpu_mix(self) -> dict[str, int]:
        return {"L4": 1}


def _outcome(met: bool, objective: float) -> dict[str, Any]:
    return {
        "sla_met": {"chat": met},
        "power_cap_met": True,
        "budget_met": True,
        "objective": objective,
        "cost_usd": objective,
    }


def _choice(p: float, n: int, met: dict[str, int]) -> dict[str, Any]:
    """robust_choice over fleets named in *met* (fleet -> draws in which it meets everything),
    the cheaper fleet listed last."""
    names = list(met)
    records = [
        {"fleets": [_outcome(i < met[f], 100.0 - j) for j, f in enumerate(names)]} for i in range(n)
    ]
    fleets: list[Any] = [_Fleet(f) for f in names]
    return robust_choice(fleets, [1 / len(names)] * len(names), records, p, ["chat"])


@pytest.mark.parametrize("p", [1e-13, 1e-300, 1e-320])
def test_a_tiny_share_still_takes_one_draw(p: float) -> None:
    out = _choice(p, 30, {"sure": 12, "never": 0})
    by_name = {c["fleet"]: c for c in out["considered"]}
    assert not by_name["never"]["qualifies"] and by_name["sure"]["qualifies"]
    assert out["chosen"]["fleet"] == "sure"
    assert "(1 or more of them)" in out["reason"]
    assert aggregate.least_draws(p, 30) == 1


def test_no_fleet_meeting_everything_is_chosen_at_a_tiny_share() -> None:
    out = _choice(1e-13, 20, {"never": 0})
    assert out["chosen"] is None and "(1 or more of them)" in out["reason"]


def _old_least(p: float, n: int) -> int:
    return next(k for k in range(n + 1) if k / n >= p - 1e-12)


@pytest.mark.parametrize("n", [20, 30, 40])
@pytest.mark.parametrize("p", [0.9, 0.95, 0.5, 0.55, 0.951, 1.0, 1 / 3])
def test_the_reason_for_an_ordinary_share_is_unchanged(p: float, n: int) -> None:
    least = _old_least(p, n)
    out = _choice(p, n, {"at": least, "below": least - 1})
    by_name = {c["fleet"]: c for c in out["considered"]}
    assert by_name["at"]["qualifies"] and not by_name["below"]["qualifies"]
    count = "all" if least == n else f"{least} or more"
    assert out["reason"].endswith(f"in at least {100 * p:.10g} % of {n} draws ({count} of them)")


def test_a_share_just_above_a_count_needs_the_next_draw() -> None:
    # 27/30 is 0.9: a P a hair above it (beyond float round-off) needs 28
    assert aggregate.least_draws(0.9, 30) == 27
    assert aggregate.least_draws(0.90001, 30) == 28
    assert aggregate.least_draws(0.7, 10) == 7 and aggregate.least_draws(0.95, 20) == 19
    for p in (0.9, 0.95, 0.5, 0.55, 0.951, 1.0, 1 / 3, 0.123):
        for n in range(1, 101):
            assert aggregate.least_draws(p, n) == _old_least(p, n)


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_the_command_states_one_draw_for_a_tiny_share() -> None:
    args = ("--draws", "4", "--choose", "robust", "--sla-probability", "1e-13", "-f", "json")
    result = run_cli("sweep", PAPER, *args)
    assert result.code == 0, result.err
    import json

    robust = json.loads(result.out)["robust"]
    assert "(1 or more of them)" in robust["reason"]
    for c in robust["considered"]:
        assert c["qualifies"] == (c["all_met_probability"] > 0)


# 2. The charts: one period is drawn; a tornado bar runs from the factor's low to its high end.


def _captured(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    figures: list[Any] = []

    def keep(fig: Any) -> bytes:
        figures.append(fig)
        return b"png"

    monkeypatch.setattr(sweep_charts, "_png", keep)
    return figures


def _doc(fan: FanDocument | None = None, tornado: list[TornadoBarDocument] | None = None) -> Any:
    return SimpleNamespace(summary=SimpleNamespace(fan=fan, tornado=tornado or []))


@pytest.mark.slow
def test_the_fan_of_one_period_shows_its_quantiles(monkeypatch: pytest.MonkeyPatch) -> None:
    figures = _captured(monkeypatch)
    fan = FanDocument(
        period_hours=[8760],
        base_p10=[650],
        base_p50=[850],
        base_p90=[997],
        optimal_p10=[725],
        optimal_p50=[997],
        optimal_p90=[1801],
    )
    assert sweep_charts.fan_chart(_doc(fan)) == b"png"
    ax = figures[0].axes[0]
    bars = ax.containers
    assert len(bars) == 2  # one error bar per side
    spans, middles = [], []
    for bar in bars:
        data_line, _caps, (segments,) = bar.lines
        assert data_line.get_marker() not in (None, "None", "")
        middles.append(float(data_line.get_ydata()[0]))
        ((_, y0), (_, y1)) = segments.get_segments()[0]
        spans.append((min(y0, y1), max(y0, y1)))
    assert spans == [(650, 997), (725, 1801)] and middles == [850, 997]
    low, high = ax.get_xlim()
    assert low < 1 < high


def test_the_fan_of_many_periods_keeps_its_bands(monkeypatch: pytest.MonkeyPatch) -> None:
    figures = _captured(monkeypatch)
    fan = FanDocument(
        period_hours=[1, 1, 1],
        base_p10=[1, 2, 3],
        base_p50=[2, 3, 4],
        base_p90=[3, 4, 5],
        optimal_p10=[1, 1, 1],
        optimal_p50=[2, 2, 2],
        optimal_p90=[3, 3, 3],
    )
    sweep_charts.fan_chart(_doc(fan))
    ax = figures[0].axes[0]
    assert not ax.containers and len(ax.collections) == 2
    assert [list(line.get_ydata()) for line in ax.lines] == [[2, 3, 4], [2, 2, 2]]


def _bar(factor: str, low: float, high: float, source: str = "draws") -> TornadoBarDocument:
    return TornadoBarDocument(
        factor=factor,
        source=source,
        low_cost_usd=low,
        high_cost_usd=high,
        swing_usd=high - low,
        points_left_out=0 if source == "grid" else None,
    )


def test_a_tornado_bar_shows_which_way_its_cost_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    figures = _captured(monkeypatch)
    tornado = [
        _bar("itl error, GPU H100-SXM5-80GB", 7485, 6415),  # falls as the factor rises
        _bar("arrival rate, chat", 6000, 6900),
        _bar("load_growth", 7000, 7500, "grid"),
    ]
    sweep_charts.tornado_chart(_doc(tornado=tornado))
    ax = figures[0].axes[0]
    rects = ax.patches
    # drawn bottom-up: the largest |swing| on top
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [b.factor for b in reversed(tornado)]
    for rect, bar in zip(rects, reversed(tornado), strict=True):
        # the bar starts at the factor's low end and runs to its high end
        assert rect.get_x() == pytest.approx(bar.low_cost_usd)
        assert rect.get_x() + rect.get_width() == pytest.approx(bar.high_cost_usd)
        falls = bar.high_cost_usd < bar.low_cost_usd
        assert bool(rect.get_hatch()) == falls
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("falls" in t for t in legend) and any("rises" in t for t in legend)
    assert {"draws factor", "grid factor"} <= set(legend)


# 3. --sla-probability: its range is "above 0, at most 1" in the help and in every error.


def _err(result: Any) -> str:
    return " ".join(result.err.replace("│", " ").split())


@pytest.mark.parametrize(
    ("value", "code", "needle"),
    [
        ("nan", 1, "--sla-probability nan: not a finite number; give a number above 0, at most 1"),
        ("-inf", 1, "give a number above 0, at most 1"),
        ("0", 2, "0 is no share of draws; give a number above 0, at most 1"),
        ("-0", 2, "no share of draws; give a number above 0, at most 1"),
        ("-1", 2, "-1 is out of range; give a number above 0, at most 1"),
        ("1.0000001", 2, "1.0000001 is out of range; give a number above 0, at most 1"),
    ],
)
def test_the_share_option_states_one_range(value: str, code: int, needle: str) -> None:
    result = run_cli("sweep", PAPER, "--draws", "2", "--sla-probability", value)
    assert result.code == code, result.out + result.err
    assert needle in _err(result), result.err
    assert "from 0 to 1" not in _err(result) and "Traceback" not in result.err


def test_the_help_shows_the_open_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    result = run_cli("sweep", "--help")
    assert result.code == 0
    line = next(x for x in result.out.splitlines() if "--sla-probability" in x)
    assert "[0.0<x<=1.0]" in line and "0.0<=x" not in line


def _param(lo: float | None, hi: float | None, ends: tuple[bool, bool, str] | None) -> Any:
    param = SimpleNamespace(min=lo, max=hi, opts=["--x"])
    if ends is not None:
        param._wattgpu_open_ends = ends
    return param


@pytest.mark.parametrize(
    ("lo", "hi", "ends", "text"),
    [
        (0.0, 1.0, None, " from 0 to 1"),
        (0.0, 1.0, (True, False, ""), " above 0, at most 1"),
        (0.0, 1.0, (False, True, ""), " at least 0, below 1"),
        (0.0, 1.0, (True, True, ""), " above 0, below 1"),
        (0.0, None, (True, False, ""), " above 0"),
        (None, 5.0, (False, True, ""), " below 5"),
        (0.5, None, None, " of at least 0.5"),
    ],
)
def test_a_range_is_worded_with_its_open_ends(
    lo: float | None, hi: float | None, ends: tuple[bool, bool, str] | None, text: str
) -> None:
    param = _param(lo, hi, ends)
    assert _range(param) == text
    assert non_finite_problem("nan", param) == f"--x nan: not a finite number; give a number{text}"


def test_an_open_end_is_refused_and_a_closed_one_left_to_typer() -> None:
    problem = number_options.range_problem
    param = _param(0.0, 1.0, (False, True, ""))
    assert problem("1", param) == "1 is out of range; give a number at least 0, below 1"
    assert problem("0", param) is None and problem("0.5", param) is None
    assert problem("2", _param(0.0, 1.0, None)) is None  # typer's own check
    assert problem("abc", param) is None and problem("nan", param) is None


def test_every_open_ended_option_is_worded_so() -> None:
    """Each command option marked with an open end shows it in the help and the NaN message."""
    import typer

    from planner.cli.app import app
    from planner.cli.outputs import command_params

    command = typer.main.get_command(app)
    opened = [
        p
        for _, p in command_params(getattr(command, "commands", {}))
        if getattr(p, "_wattgpu_open_ends", None)
    ]
    # predict's rate is judged by the row rules since round 33 (one line, as a CSV row)
    assert sorted(max(p.opts, key=len) for p in opened) == ["--sla-probability"]
    for p in opened:
        low_open, high_open, _ = p._wattgpu_open_ends
        shown = p._get_number_range_help_str()
        assert ("<x" in shown) == low_open and ("x<" in shown and "x<=" not in shown) == high_open
        problem = non_finite_problem("nan", p) or ""
        assert ("above" in problem) == low_open and ("below" in problem) == high_open
