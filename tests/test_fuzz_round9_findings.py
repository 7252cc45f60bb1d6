"""Findings of the valid-scenario fuzzer, round 9 (each once a wrong status or message).

* A disaggregated unit mixing two GPU types was placed in a region that offers only one of them
  (placement looked at the decode type alone), took the other type from no stock at all, and the
  plan stopped as ``time_limit`` instead of being proven infeasible; a mixed unit in a region
  was also priced at the region's price of one type for all its GPUs.
* With every limit needed together, the explanation said "no single limit explains it;
  together:" and numbers "within the other limits", though the others were loosened too, and
  the saved plan joined the header to its lines as "together:; power cap: …".
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from planner.build import planning_inputs
from planner.result import PlanStatus
from planner.scenario.load import scenario_from_dict
from planner.solve.optimize import solve
from predictors.api import Predictor
from tests.cli_runner import plan_text, run_cli

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def _regional(deployment: str, eu_gpus: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "mixed-regions",
        "region": "US",
        "electricity_usd_per_kwh": 0.08,
        "deployment": deployment,
        "gpus": {"L4": {"usd_per_hour": 0.5}, "L40S": {"usd_per_hour": 1.0}},
        "regions": {"eu": {"gpus": eu_gpus}, "us": {}},
        "models": [
            {
                "name": "m",
                "model": LLAMA,
                "load": {"input_tokens": 512, "output_tokens": 256, "requests_per_s": 1},
                "sla": {"itl_ms": 150},
                "regions": ["eu"],
            }
        ],
    }


@pytest.mark.parametrize("deployment", ["aggregated", "disaggregated", "both"])
@pytest.mark.slow  # about 1 s: the default run stays under 2 minutes
def test_a_region_without_stock_is_proven_infeasible_in_every_deployment(
    predictor: Predictor, deployment: str
) -> None:
    scenario = scenario_from_dict(
        _regional(deployment, {"L4": {"available": 0}}), "s.yaml", predictor.catalog
    )
    inputs = planning_inputs(scenario, predictor)
    for c in inputs.candidates:
        assert c.region == "eu"
        assert {g for g, _ in c.gpu_use} == {"L4"}, c.label  # eu offers L4 alone
    plan = solve(inputs, baselines=False)
    assert plan.status == PlanStatus.INFEASIBLE
    assert any("serve at most 0 req/s" in m for m in plan.solve.messages), plan.solve.messages


@pytest.mark.slow  # about 1 s: the default run stays under 2 minutes
def test_a_mixed_unit_in_a_region_pays_that_region_s_price_of_each_type(
    predictor: Predictor,
) -> None:
    eu = {"L4": {"usd_per_hour": 0.7}, "L40S": {"usd_per_hour": 3.0}}
    scenario = scenario_from_dict(_regional("disaggregated", eu), "s.yaml", predictor.catalog)
    inputs = planning_inputs(scenario, predictor)
    price = {"L4": 0.7, "L40S": 3.0}
    mixed = [c for c in inputs.candidates if len(c.gpu_use) == 2]
    assert mixed, "the entry tries units that mix L4 and L40S"
    for c in inputs.candidates:
        want = sum(price[g] * k for g, k in c.gpu_use)
        assert math.isclose(c.usd_per_hour_per_replica, want, rel_tol=1e-9), c.label


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_a_region_price_of_one_type_leaves_the_other_at_the_scenario_price(
    predictor: Predictor,
) -> None:
    scenario = scenario_from_dict(
        _regional("disaggregated", {"L4": {}, "L40S": {"usd_per_hour": 3.0}}),
        "s.yaml",
        predictor.catalog,
    )
    inputs = planning_inputs(scenario, predictor)
    price = {"L4": 0.5, "L40S": 3.0}
    for c in inputs.candidates:
        want = sum(price[g] * k for g, k in c.gpu_use)
        assert math.isclose(c.usd_per_hour_per_replica, want, rel_tol=1e-9), c.label


JOINT = """\
name: joint-limits
region: US
electricity_usd_per_kwh: 0.1
power_cap_kw: 1
budget_usd: 100
gpus:
  L4: {}
models:
- name: m
  model: meta-llama/Llama-3.1-8B-Instruct
  load: {input_tokens: 512, output_tokens: 256, requests_per_s: 20}
  sla: {itl_ms: 100}
"""


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_limits_needed_together_are_named_as_such(tmp_path: Path) -> None:
    result, out = plan_text(tmp_path, JOINT)
    path = tmp_path / "scenario.yaml"
    assert result.code == 1, result.out + result.err
    messages = json.loads(out.read_text())["solve"]["messages"]
    assert messages[0].startswith("more than one limit must be loosened"), messages
    assert not any(m.rstrip().endswith(":") for m in messages), messages
    assert any(m.startswith("power cap: the loosened plan draws") for m in messages), messages
    assert any(m.startswith("budget: the loosened plan costs") for m in messages), messages
    assert not any("within the other limits" in m for m in messages), messages
    # each limit alone is what the header says: loosening only one leaves no plan
    for drop in ("budget_usd=null", "power_cap_kw=null"):
        alone = run_cli("plan", str(path), "--set", drop)
        assert alone.code == 1, alone.out + alone.err


MIXED = """\
name: mix
region: US
electricity_usd_per_kwh: 0.08
deployment: disaggregated
gpus:
  L4: {usd_per_hour: 0.5}
  L40S: {usd_per_hour: 1.0}
regions:
  eu: {}
models:
- name: m
  model: meta-llama/Llama-3.1-8B-Instruct
  load: {input_tokens: 4096, output_tokens: 256, requests_per_s: 3}
  sla: {itl_ms: 60, ttft_ms: 800}
"""


@pytest.mark.slow  # plans a two-region disaggregated scenario per case: 3.5 s each
@pytest.mark.parametrize(
    ("edit", "says"),
    [
        ("region", "is not in the inventory of its region 'eu'"),
        ("plan", "is not in the plan's inventory"),
    ],
)
def test_a_saved_unit_whose_pool_type_its_region_lacks_is_named(
    tmp_path: Path, edit: str, says: str
) -> None:
    # every candidate (the best few kept by default are same-type units), less those whose own
    # type is L40S: they would be named first, at `.gpu`, and the errors are capped
    planned, saved = plan_text(tmp_path, MIXED, "--candidates", "all")
    assert planned.code == 0, planned.err
    data = json.loads(saved.read_text())
    data["candidates"] = [c for c in data["candidates"] if c["gpu"] != "L40S"]
    data["candidate_counts"]["kept"] = len(data["candidates"])
    data["candidates_kept"] = "best"
    mixed = [
        i
        for i, c in enumerate(data["candidates"])
        if len({p["gpu"] for p in c.get("pools") or ()}) == 2
    ][:5]
    assert mixed, "the plan lists units that mix L4 and L40S"
    data["regions"][0]["inventory"].pop("L40S")
    if edit == "plan":
        data["inventory"].pop("L40S")
    saved.write_text(json.dumps(data))
    result = run_cli("report", str(saved))
    assert result.code == 1, result.out + result.err
    for i in mixed:
        j = next(j for j, p in enumerate(data["candidates"][i]["pools"]) if p["gpu"] == "L40S")
        assert any(
            f"candidates[{i}].pools[{j}].gpu: 'L40S' {says}" in line for line in result.errors
        ), result.err
    assert not any("planning inputs" in line for line in result.errors), result.err
