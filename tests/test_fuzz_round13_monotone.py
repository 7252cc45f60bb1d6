"""Round-13 metamorphic findings: a looser SLA or more load never made an optimal plan better or
worse the wrong way once the candidates stop depending on the SLA (docs/method.md, "Layouts in
the planner", "Disaggregated units in the planner", §3 item 7).

Each case failed before the fix: the layout ladder stopped at TP 2 for Llama-3.1-8B on H100 at
ITL 26 ms and never tried TP 4 (3.7 % more energy than at 22 ms); a disaggregated unit's decode
workers lost TP 8 when the ITL SLA went from 4.5 to 5 ms (1.5 % more); the power curve ended at
the capacity point's own power, so the same 13 × TP 4 fleet was priced 1.0 % higher at 26 ms.
The looser SLA was then 0.5 % dearer through the replica bound (at most the fewest replicas that
carry the peak: 13 TP 4 at 26 ms, where 14 draw less on the power curve's convex end) until the
bound followed the curve (:func:`planner.solve.coefficients.replica_limit`, 2026-12-06).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.cli_runner import plan_text

AGG = """\
name: agg-ladder
region: US
electricity_usd_per_kwh: 0.12
gpus:
  H100-SXM5-80GB: {}
models:
  - name: m
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {requests_per_s: 400, input_tokens: 1024, output_tokens: 256}
    sla: {itl_ms: 22}
"""

DISAGG = """\
name: disagg-one
region: US
electricity_usd_per_kwh: 0.12
precision: bf16
deployment: both
gpus:
  H100-SXM5-80GB: {}
  L40S: {}
models:
  - name: rag
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {requests_per_s: 20, input_tokens: 8000, output_tokens: 500}
    sla: {itl_ms: 4.5, ttft_ms: 400}
"""

#: Optimal plans are compared within the solver's default relative gap.
GAP = 1e-4


def _plan(tmp_path: Path, name: str, scenario: str, *sets: str) -> dict[str, Any]:
    folder = tmp_path / name
    folder.mkdir()
    args = [a for s in sets for a in ("--set", s)]
    result, out = plan_text(folder, scenario, "--candidates", "all", *args)
    assert result.code == 0, result.out + result.err
    data: dict[str, Any] = json.loads(out.read_text())
    assert data["status"] == "optimal", data["solve"]["messages"]
    return data


def _objective(data: dict[str, Any]) -> float:
    return float(data["solve"]["objective"])


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_a_looser_itl_sla_never_costs_more_energy(tmp_path: Path) -> None:
    tight = _plan(tmp_path, "tight", AGG)
    loose = _plan(tmp_path, "loose", AGG, "models[0].sla.itl_ms=26")
    only_tp4 = _plan(
        tmp_path, "tp4", AGG, "models[0].sla.itl_ms=26", "gpus.H100-SXM5-80GB.tp_degrees=[4]"
    )
    assert _objective(loose) <= _objective(tight) * (1 + GAP)
    # every tp_degrees group is evaluated and kept (fuzz round 15): fewer options never beat
    # the default ladder; TP 2, no better than TP 1 at the peak, and TP 4 past it are there
    assert _objective(loose) <= _objective(only_tp4) * (1 + GAP)
    assert {c["tp"] for c in loose["candidates"]} == {1, 2, 4, 8}


@pytest.mark.slow  # several plans of a few seconds each
def test_more_load_never_needs_less_energy(tmp_path: Path) -> None:
    objectives = [
        _objective(
            _plan(
                tmp_path,
                f"r{rate}",
                AGG,
                "models[0].sla.itl_ms=26",
                f"models[0].load.requests_per_s={rate}",
            )
        )
        for rate in (200, 204, 218, 220)
    ]
    pairs = zip(objectives[:-1], objectives[1:], strict=True)
    assert all(b >= a * (1 - GAP) for a, b in pairs), objectives


def test_the_same_fleet_is_priced_the_same_at_any_sla(tmp_path: Path) -> None:
    """The TP 4 candidate's power curve, read at one rate below both capacities, is the same
    function at ITL 22 and 26 ms (it was the chord to each SLA's own capacity point)."""
    curves = []
    for itl_ms in (22, 26):
        data = _plan(tmp_path, f"itl{itl_ms}", AGG, f"models[0].sla.itl_ms={itl_ms}")
        tp4 = next(c for c in data["candidates"] if c["tp"] == 4 and c["feasible"])
        curves.append((tp4["load_curve_requests_per_s"], tp4["power_curve_w_per_replica"]))
    top = min(max(x) for x, _ in curves)
    rates = np.linspace(0.0, top, 97)
    tight, loose = (np.interp(rates, x, p) for x, p in curves)
    assert loose == pytest.approx(tight, rel=1e-9)


@pytest.mark.slow  # several plans of a few seconds each
def test_a_looser_itl_sla_keeps_the_wide_decode_workers(tmp_path: Path) -> None:
    tight = _plan(tmp_path, "tight", DISAGG)
    loose = _plan(tmp_path, "loose", DISAGG, "models[0].sla.itl_ms=5")
    assert _objective(loose) <= _objective(tight) * (1 + GAP)

    def decode_layouts(data: dict[str, Any]) -> set[tuple[str, int]]:
        return {
            (p["gpu"], p["tp"])
            for c in data["candidates"]
            for p in c.get("pools") or ()
            if p["role"] == "decode"
        }

    assert decode_layouts(tight) <= decode_layouts(loose)


CAPPED = """\
name: mono
region: US
electricity_usd_per_kwh: 0.12
time_limit_s: 300
power_cap_kw: 8.7
gpus:
  L4: {available: 6}
  A100-SXM4-80GB: {available: 8}
  H100-SXM5-80GB: {available: 8}
models:
  - name: chat8
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {requests_per_s_by_period: [1, 4, 8, 2], input_tokens: 1024, output_tokens: 256}
    sla: {itl_ms: 40}
  - name: big70
    model: meta-llama/Llama-3.1-70B-Instruct
    load: {requests_per_s_by_period: [0.5, 2, 3, 1], input_tokens: 2048, output_tokens: 512}
    sla: {itl_ms: 60, ttft_ms: 2000}
  - name: oss
    model: openai/gpt-oss-120b
    load: {requests_per_s_by_period: [2, 2, 5, 1], input_tokens: 1024, output_tokens: 512}
    sla: {itl_ms: 30}
"""


@pytest.mark.slow  # planner.solve.fallback's steps 3 and 4 run: 20-50 s
def test_a_search_that_stops_on_its_own_does_not_ask_for_more_time(tmp_path: Path) -> None:
    """Three entries under a tight power cap: the search ended in well under a second of its
    300 s and said "no plan found within the time limit of 300 s … raise time_limit_s"; then
    (round 13) that more time is no help, neither found nor proven. Since the widened
    enumeration and the exhaustive master (planner.solve.fallback) it is proven impossible."""
    # 8.5 kW since the retrain of 2026-12-07 (fuzz round 26: the least feasible cap is 8.662 kW,
    # the lower bound 8.375 kW; 8.1 kW after the retrain of 2026-12-06 evening): between the
    # bound and the least feasible cap, where only the search can tell
    result, out = plan_text(tmp_path, CAPPED, "--set", "power_cap_kw=8.5")
    data = json.loads(out.read_text())
    assert data["status"] == "infeasible" and result.code == 1, result.err
    assert data["solve"]["seconds"] < 150
    first = data["solve"]["messages"][0]
    assert "raise time_limit_s" not in first, first
    # the limits it sets, and a cap the least-power plan meets
    assert "raise power_cap_kw to 8.66" in first and "add inventory" in first, first


@pytest.mark.slow  # several plans of a few seconds each
def test_the_same_unit_is_priced_the_same_at_any_sla(tmp_path: Path) -> None:
    """A disaggregated unit's power curve, read at rates below both capacities, is one function
    at ITL 4.5 and 5 ms (its rates were fractions of each SLA's own capacity)."""
    by_sla = []
    for itl_ms in (4.5, 5):
        data = _plan(tmp_path, f"u{itl_ms}", DISAGG, f"models[0].sla.itl_ms={itl_ms}")
        by_sla.append(
            {
                tuple((p["role"], p["gpu"], p["workers"], p["tp"]) for p in c["pools"]): c
                for c in data["candidates"]
                if c.get("pools") and c["feasible"]
            }
        )
    shared = sorted(set(by_sla[0]) & set(by_sla[1]))
    assert len(shared) >= 10, len(shared)
    for key in shared:
        tight, loose = by_sla[0][key], by_sla[1][key]
        top = min(max(tight["load_curve_requests_per_s"]), max(loose["load_curve_requests_per_s"]))
        rates = np.linspace(0.0, top, 41)
        a, b = (
            np.interp(rates, c["load_curve_requests_per_s"], c["power_curve_w_per_replica"])
            for c in (tight, loose)
        )
        assert b == pytest.approx(a, rel=1e-9), key
