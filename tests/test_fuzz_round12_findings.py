"""Findings left open by the valid-scenario fuzzer's round 11, fixed in round 12.

* A power cap below one replica's draw was explained as "needs at least 0.1 kW facility power
  …, cap is 0.1 kW" (0.097 against 0.05, both rounded to one decimal); every cap and budget
  message now shows the two numbers apart.
* A model entry without requests (``min_replicas`` only) left its per-request and per-token
  disclosure fields out instead of stating them not applicable, as the fleet's are.
* Node failover of a disaggregated unit mixing two GPU types counted the units a lost node
  takes out on the decode type's node size and the unit's GPUs of both types (8 // 2 = 4 units
  of 1 L40S + 1 L4), though eight units fill one node of each type.
* Round 12b (layouts): ``data_parallel`` above 1 on a dense model was accepted and predicted
  inconsistently (DP 8 at batch 128 slower than one copy at batch 16); the plan's "needs … GB for
  weights, has … GB usable" added the runtime reserve to both, so it disagreed with predict's.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
import yaml

from planner.build import planning_inputs
from planner.scenario.load import scenario_from_dict
from predictors.api import Predictor
from tests.cli_runner import one_error_line, plan_text, run_cli

SMALL = """\
name: small
region: US
electricity_usd_per_kwh: 0.12
{limit}
gpus:
  L4: {{}}
  H100-SXM5-80GB: {{}}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {{requests_per_s: 0.33, input_tokens: 1024, output_tokens: 256}}
    sla: {{itl_ms: 100}}
  - name: standby
    model: meta-llama/Llama-3.2-3B-Instruct
    load: {{requests_per_s: 0, input_tokens: 512, output_tokens: 128}}
    sla: {{itl_ms: 50}}
    min_replicas: 1
"""


def _scenario(folder: Path, limit: str) -> Path:
    path = folder / "s.yaml"
    path.write_text(SMALL.format(limit=limit), encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_power_cap_below_one_replica_reads_apart_from_the_need(tmp_path: Path) -> None:
    result = run_cli("plan", str(_scenario(tmp_path, "power_cap_kw: 0.05")))
    assert result.code == 1, result.out
    text = " ".join(result.out.split())  # the message as one line, however wrapped
    line = text[text.index("power cap:") :]
    need = float(re.findall(r"at least ([\d.,]+) kW", line)[0].replace(",", ""))
    cap = float(re.findall(r"cap of ([\d.,]+) kW", line)[0].replace(",", ""))
    assert cap == 0.05 and need > cap, line


@pytest.mark.slow
def test_a_budget_far_below_the_cost_reads_apart(tmp_path: Path) -> None:
    result = run_cli("plan", str(_scenario(tmp_path, "budget_usd: 0.004")))
    assert result.code == 1, result.out
    (line,) = [x for x in result.out.splitlines() if "budget:" in x]
    cost, budget = (float(v.replace(",", "")) for v in re.findall(r"([\d.,]+) \$", line))
    assert budget == 0.004 and cost > budget, line


@pytest.mark.slow
def test_an_entry_without_requests_states_its_per_request_fields_not_applicable(
    tmp_path: Path,
) -> None:
    result, plan = plan_text(tmp_path, SMALL.format(limit=""))
    assert result.code == 0, result.err
    out = tmp_path / "r.json"
    result = run_cli("report", str(plan), "-f", "json", "-o", str(out), "--pareto-points", "0")
    assert result.code == 0, result.err
    models = {m["name"]: m["fields"] for m in json.loads(out.read_text())["disclosure"]["models"]}
    per_request = (
        "energy_wh_per_request",
        "energy_j_per_output_token",
        "energy_prefill_j_per_output_token",
        "energy_decode_j_per_output_token",
        "energy_wh_per_1000_output_tokens",
        "sci_g_co2e_per_1m_output_tokens",
    )
    for key in per_request:
        assert models["standby"][key]["value"] is None, key
        assert models["standby"][key]["not_applicable"], key
        assert models["chat"][key]["value"] > 0, key
    assert set(models["standby"]) == set(models["chat"])


MIXED = {
    "name": "mixed-node-failover",
    "region": "US",
    "electricity_usd_per_kwh": 0.08,
    "deployment": "disaggregated",
    "failover": {"nodes": 1},
    "gpus": {"L4": {"usd_per_hour": 0.5}, "L40S": {"usd_per_hour": 1.0}},
    "models": [
        {
            "name": "m",
            "model": "meta-llama/Llama-3.1-8B-Instruct",
            "load": {"input_tokens": 512, "output_tokens": 256, "requests_per_s": 4},
            "sla": {"itl_ms": 150},
        }
    ],
}


@pytest.mark.slow  # about 1 s: the default run stays under 2 minutes
def test_node_failover_of_a_mixed_unit_loses_the_worst_type_s_node(predictor: Predictor) -> None:
    """A unit with 1 L40S and 1 L4 GPU: eight units fill one node of each type, so a lost node
    takes out eight units, not the decode type's 8 // (2 GPUs) = 4 of before."""
    scenario = scenario_from_dict(MIXED, "s.yaml", predictor.catalog)
    inputs = planning_inputs(scenario, predictor)
    mixed = [c for c in inputs.candidates if len(c.gpu_use) == 2]
    assert mixed, "no unit mixes the two types"
    for c in mixed:
        worst = max(max(1, inputs.node_gpus(g) // n) for g, n in c.gpu_use)
        assert inputs.replicas_per_unit(c) == worst, c.label
    old = [max(1, inputs.node_gpus(c.gpu) // c.gpus_per_replica) for c in mixed]  # decode type's
    assert any(inputs.replicas_per_unit(c) > o for c, o in zip(mixed, old, strict=True))


@pytest.mark.slow  # plans mixed units with node failover: 2.1 s
def test_a_saved_plan_with_node_failover_of_mixed_units_recomputes(tmp_path: Path) -> None:
    result, plan = plan_text(tmp_path, yaml.safe_dump(MIXED), "--candidates", "all")
    assert result.code == 0, result.err
    result = run_cli("report", str(plan), "-f", "json", "--pareto-points", "0")
    assert result.code == 0, result.err


# --- round 12b: layouts ------------------------------------------------------------------------


@pytest.mark.slow
def test_data_parallel_on_a_dense_model_is_refused(tmp_path: Path) -> None:
    """Attention DP is for MoE models; a dense model's DP copies are separate replicas (DP 8 at
    batch 128 predicted 16.6 ms where one copy at batch 16 is 10.9 ms)."""
    args = ("--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100-SXM5-80GB")
    result = run_cli("predict", *args, "--gpu-count", "8", "--data-parallel", "8")
    one_error_line(result, "--data-parallel:", "is dense", "separate replicas")
    rows = tmp_path / "rows.csv"
    rows.write_text(
        "model,gpu,gpu_count,data_parallel\n"
        "meta-llama/Llama-3.1-8B-Instruct,H100-SXM5-80GB,8,8\n"
        "Qwen/Qwen3-30B-A3B,H100-SXM5-80GB,8,8\n",
        encoding="utf-8",
    )
    result = run_cli("predict", "--input", str(rows))
    assert result.code == 0, result.err
    dense, moe = csv.DictReader(io.StringIO(result.out))
    assert dense["error"].startswith("data_parallel:") and dense["itl_s"] == ""
    assert moe["error"] == "" and moe["data_parallel"] == "8"
    scenario = {
        **MIXED,
        "deployment": "aggregated",
        "failover": None,
        "gpus": {"H100-SXM5-80GB": {"layouts": [{"gpu_count": 16, "data_parallel": 2}]}},
    }
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario), encoding="utf-8")
    one_error_line(run_cli("validate", str(path)), "layouts[0]: data_parallel:", "is dense")


@pytest.mark.slow
def test_plan_and_predict_state_the_same_usable_memory(tmp_path: Path) -> None:
    """Llama-3.1-70B on one H100: predict says 75.8 GB usable; the plan's candidate said 77 GB
    (the runtime reserve added back) and 143 GB 'for weights'."""
    result = run_cli(
        "predict", "--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "H100-SXM5-80GB"
    )
    usable = float(re.findall(r"has ([\d.]+) GB usable", one_error_line(result))[0])
    scenario = {
        **MIXED,
        "deployment": "aggregated",
        "failover": None,
        "gpus": {"H100-SXM5-80GB": {"tp_degrees": [1, 2, 4]}},
        "models": [{**MIXED["models"][0], "model": "meta-llama/Llama-3.1-70B-Instruct"}],  # type: ignore[index]
    }
    result, plan = plan_text(tmp_path, yaml.safe_dump(scenario), "--candidates", "all")
    assert result.code == 0, result.err
    (reason,) = [c["reason"] for c in json.loads(plan.read_text())["candidates"] if c["tp"] == 1]
    assert f"has {usable:.0f} GB usable on 1× H100-SXM5-80GB" in reason, reason
