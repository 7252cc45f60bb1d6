"""Fuzz round 24: aggregated entries with ``regions:``, an inventory too small in every region.

Each test below failed before its fix. An entry that may use either of two regions, each
holding one H100, was (a) at a load no one region serves, but both together would, ended
``time_limit`` after a solve of a few hundredths of a second ("none proven impossible ... loosen a
limit"); (b) at a load neither serves, told "all available GPUs of its usable types serve at most
7.27 req/s" and "the loads need at least 3 GPUs, 2 are available": both regions' GPUs added up,
though an entry is placed in one region. The disaggregated variant was already proven infeasible
per region; the aggregated one is now too, before any solver, naming each region and what the
entry serves there at most (whole replicas), and entries that fit alone but not together are
counted per region.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import plan_text

pytestmark = pytest.mark.usefixtures("cached_predictor")

BOUNDS = "bounds (least power and GPUs; no solver run)"
HEAD = """
name: round24-regions-aggregated
horizon_hours: 8760
region: US
electricity_usd_per_kwh: 0.12
objective: {minimize: energy}
engine: vllm
precision: bf16
gpus:
  H100-SXM5-80GB: {}
regions:
  east:
    grid_g_co2_per_kwh: 300
    gpus:
      H100-SXM5-80GB: {available: 1}
  west:
    grid_g_co2_per_kwh: 100
    gpus:
      H100-SXM5-80GB: {available: 1}
models:
"""


def _entry(name: str, rps: float) -> str:
    return (
        f"  - name: {name}\n"
        "    model: meta-llama/Llama-3.1-8B-Instruct\n"
        f"    load: {{requests_per_s: {rps}, input_tokens: 2000, output_tokens: 400}}\n"
        "    sla: {itl_ms: 20}\n"
    )


def _plan(tmp_path: Path, scenario: str, *args: str) -> dict[str, Any]:
    result, out = plan_text(tmp_path, scenario, *args)
    assert result.code in (0, 1), (result.out, result.err)
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data


def _infeasible(tmp_path: Path, scenario: str, *args: str) -> list[str]:
    """The messages of a plan proven infeasible before any solver."""
    data = _plan(tmp_path, scenario, *args)
    assert data["status"] == "infeasible", data["solve"]
    assert data["solve"]["solver"] == BOUNDS, data["solve"]
    messages: list[str] = data["solve"]["messages"]
    return messages


_PER_REGION = re.compile(
    r"inventory: a needs (?P<need>[\d.]+) req/s at its peak, the available GPUs of its usable "
    r"types serve at most (?P<east>[\d.]+) req/s in region east and (?P<west>[\d.]+) req/s in "
    r"region west, and it is placed in one region"
)


def _most_per_region(messages: list[str]) -> tuple[float, float, float]:
    """(need, most in east, most in west) of the one message of entry ``a``."""
    assert len(messages) == 1, messages
    found = _PER_REGION.fullmatch(messages[0])
    assert found, messages
    return float(found["need"]), float(found["east"]), float(found["west"])


def test_an_entry_no_one_region_serves_is_infeasible_before_any_solver(tmp_path: Path) -> None:
    """7 req/s, one H100 per region: no plan (before: time_limit after 0.06 s, "none proven
    impossible"). Each region is named with what the entry serves there at most, which is what
    east serves when west holds no GPU: never both regions' GPUs added up."""
    need, east, west = _most_per_region(_infeasible(tmp_path, HEAD + _entry("a", 7)))
    assert need == 7 and east == west and 0 < east < 7, (need, east, west)
    alone = _infeasible(
        tmp_path, HEAD + _entry("a", 7), "--set", "regions.west.gpus.H100-SXM5-80GB.available=0"
    )
    assert _most_per_region(alone) == (7, east, 0), alone


def test_the_cheap_counts_are_per_region(tmp_path: Path) -> None:
    """8 req/s: before, "all available GPUs ... serve at most 7.27 req/s" and "the loads need at
    least 3 GPUs, 2 are available" (both regions together)."""
    messages = _infeasible(tmp_path, HEAD + _entry("a", 8))
    need, east, west = _most_per_region(messages)
    assert need == 8 and east == west and east < 4, messages
    text = " ".join(messages)
    assert "all available" not in text and "2 are available" not in text, text


def test_a_load_only_split_regions_would_serve_is_proven_infeasible(tmp_path: Path) -> None:
    """Just above what one region serves with whole replicas (below what its GPUs would serve
    fractionally, and below both regions together): infeasible before any solver, not a
    time_limit; just below it, a plan in one region."""
    _, most, _ = _most_per_region(_infeasible(tmp_path, HEAD + _entry("a", 7)))
    above = round(most * 1.01, 4)
    need, east, west = _most_per_region(_infeasible(tmp_path, HEAD + _entry("a", above)))
    assert need == pytest.approx(above, rel=2e-3) and east == west == most, (need, east, west)
    below = _plan(tmp_path, HEAD + _entry("a", round(most * 0.99, 4)))
    assert below["status"] == "optimal", below["solve"]
    assert {a["region"] for a in below["allocations"]} in ({"east"}, {"west"}), below


def test_entries_that_fit_alone_are_counted_per_region(tmp_path: Path) -> None:
    """Three entries that each fit on one H100: together they need 3 GPUs of east and west,
    which hold 1 each; two of them restricted to east need 2 of its 1. Each region's GPUs are
    named apart."""
    three = HEAD + _entry("a", 2) + _entry("b", 2) + _entry("c", 2)
    assert _infeasible(tmp_path, three) == [
        "inventory: the loads that may use only regions east and west need at least 3 GPUs "
        "there (each entry in one region, its GPUs whole), 1 in region east and 1 in region "
        "west are available"
    ]
    east = ("--set", "models[0].regions=[east]", "--set", "models[1].regions=[east]")
    assert _infeasible(tmp_path, three, *east) == [
        "inventory: the loads that may use only region east need at least 2 GPUs there, 1 is "
        "available"
    ]


def test_without_regions_the_site_s_explanation_is_unchanged(tmp_path: Path) -> None:
    """One site with the two H100s: its inventory's need, as before (the elastic explanation of
    a small scenario, which both GPUs may serve)."""
    scenario = (
        HEAD.split("regions:")[0].replace("H100-SXM5-80GB: {}", "H100-SXM5-80GB: {available: 2}")
        + "models:\n"
        + _entry("a", 8)
    )
    data = _plan(tmp_path, scenario)
    assert data["status"] == "infeasible", data["solve"]
    assert data["solve"]["messages"] == ["inventory: H100-SXM5-80GB needs 3 GPUs, has 2"]


CAPPED_ONLY = """\
name: capped-region-only
horizon_hours: 8760
region: US
electricity_usd_per_kwh: 0.12
engine: vllm
gpus:
  H100-SXM5-80GB: {}
  L40S: {}
regions:
  us: {pue: 1.3}
  fr:
    region: FR
    pue: 1.4
    power_cap_kw: 0.3
    gpus: {H100-SXM5-80GB: {available: 1}, L40S: {available: 4}}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    regions: [fr]
    load: {requests_per_s: 1, input_tokens: 1000, output_tokens: 300}
    sla: {itl_ms: 30}
"""


def test_a_cap_of_the_only_region_an_entry_may_use_is_named_beside_an_uncapped_one(
    tmp_path: Path,
) -> None:
    """Review of round 24: with another region uncapped, the exact least-power proof was skipped
    and the plan said "no limit can be named"; the entries confined to capped regions are now
    proven against their caps, as without regions."""
    result, out = plan_text(tmp_path, CAPPED_ONLY)
    assert result.code == 1, result.err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["status"] == "infeasible"
    (message,) = data["solve"]["messages"]
    assert message.startswith("power cap: in period 0 the entries draw at least"), message
    assert "no limit can be named" not in message
