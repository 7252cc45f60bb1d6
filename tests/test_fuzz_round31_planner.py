"""Fuzz round 31 (operator scenarios): an infeasible ``robust: true`` plan says what drives it.

Qwen3-235B FP8 at 8 requests/s with ``robust: true`` asked for "B300 needs 176 GPUs, has 24"
where the point predictions need 12, and nothing said that ``robust`` (capacity on the upper end
of the ITL interval) made the difference.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.pipeline import ROBUST_INFEASIBLE, plan_file
from planner.result import PlanStatus

SCENARIO = """name: robust-short
region: US
electricity_usd_per_kwh: 0.1
robust: {robust}
gpus: {{L4: {{available: 2}}}}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {{requests_per_s: 40, input_tokens: 512, output_tokens: 256}}
    sla: {{itl_ms: 60}}
"""


@pytest.mark.parametrize("robust", [True, False])
def test_an_infeasible_robust_plan_names_robust_as_its_last_reason(
    tmp_path: Path, robust: bool
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(robust=str(robust).lower()), encoding="utf-8")
    plan = plan_file(path, [], [], baselines=False).plan
    assert plan.status == PlanStatus.INFEASIBLE
    assert any("L4 needs" in m for m in plan.solve.messages), plan.solve.messages
    assert (plan.solve.messages[-1] == ROBUST_INFEASIBLE) is robust
    assert sum(m == ROBUST_INFEASIBLE for m in plan.solve.messages) == int(robust)
