"""Fuzz round 17b: a looser SLA never removes a disaggregated unit.

The units' worker layouts came from the layouts the aggregated ladder's rule evaluated, and the
rule stops earlier at a looser SLA: Mixtral-8x7B on L40S planned 141,547 kWh at ITL 8 ms and
178,225 kWh at 10 ms (the TP 8 × DP 8 decode worker of the 8 ms plan was no longer tried). The
units now take the whole ladder (planner.build, planner.disagg.units)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_runner import run_cli

SCENARIO = """
name: mx
horizon_hours: 8760
region: US
electricity_usd_per_kwh: 0.12
objective: {minimize: energy}
engine: vllm
deployment: disaggregated
gpus: {L40S: {}}
models:
  - name: mx
    model: mistralai/Mixtral-8x7B-Instruct-v0.1
    load: {requests_per_s: 5, input_tokens: 4000, output_tokens: 400}
    sla: {itl_ms: 8, ttft_ms: 1000}
"""


@pytest.mark.slow  # two disaggregated plans: 5 s
def test_a_looser_itl_sla_never_plans_more_energy_on_units(tmp_path: Path) -> None:
    scenario = tmp_path / "mx.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    energy = []
    for itl_ms in (8, 10):
        out = tmp_path / f"mx{itl_ms}.json"
        result = run_cli(
            "plan", str(scenario), "--set", f"models[0].sla.itl_ms={itl_ms}", "-f", "json",
            "-o", str(out),
        )  # fmt: skip
        assert result.code == 0, result.err
        energy.append(json.loads(out.read_text(encoding="utf-8"))["totals"]["facility_energy_kwh"])
    tight, loose = energy
    assert loose <= tight * (1 + 1e-9), (tight, loose)
