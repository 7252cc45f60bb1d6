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


REGIONS = """name: region-price
region: DE
electricity_usd_per_kwh: 0.2
regions:
  de: {}
  fr: {region: FR, gpus: {L4: {usd_per_hour: 0.3}, H100-SXM5-80GB: {}}}
gpus: {L4: {}, H100-SXM5-80GB: {}}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    regions: [fr]
    load: {requests_per_s: 1, input_tokens: 512, output_tokens: 128}
    sla: {itl_ms: 100}
"""


def test_the_price_basis_names_a_region_s_own_gpu_price(tmp_path: Path) -> None:
    """The plan costs the L4s placed in fr at fr's 0.3 $/h; the basis the disclosure cites
    said only the catalog's median (fuzz round 31)."""
    path = tmp_path / "s.yaml"
    path.write_text(REGIONS, encoding="utf-8")
    run = plan_file(path, [], [], baselines=False)
    bases = dict(run.inputs.provenance.price_basis_by_gpu or {})
    assert bases["L4"].startswith("rental (median on-demand price")
    assert bases["L4"].endswith(
        "; in region fr: scenario usd_per_hour 0.3 $/h (regions.fr.gpus.L4.usd_per_hour)"
    )
    assert "in region" not in bases["H100-SXM5-80GB"]  # fr offers it at the scenario's price
    (allocation,) = run.plan.allocations
    assert allocation.candidate.gpu == "L4" and allocation.candidate.region == "fr"
    gpus = allocation.replicas * allocation.candidate.gpus_per_replica
    assert allocation.gpu_cost_usd == pytest.approx(0.3 * gpus * run.inputs.hours)
