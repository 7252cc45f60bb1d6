"""Round-23 finding on rack-scale layouts: a replica's stages pack whole into NVLink domains.

Before: GB200 TP 16 × PP 9 (144 GPUs) was accepted and held as 2 NVL72 racks, though 16-GPU
stages pack 4 to a 72-GPU rack (a stage never crosses a domain, as the pipeline transfers are
priced), so its 9 stages need 3 racks, above the 2 of one replica; and on 8-GPU nodes a replica
of 6-GPU stages (TP 2 × DP 3) was held as ⌈n / 8⌉ nodes where each stage takes a node of its own.
"""

from __future__ import annotations

from pathlib import Path

from planner.layouts import held_gpus
from predictors.api import Predictor
from predictors.catalog import validity
from tests.cli_runner import run_cli

SCENARIO = """\
name: pp9
horizon_hours: 8760
region: US
electricity_usd_per_kwh: 0.12
engine: vllm
gpus:
  GB200:
    available: 144
    tp_degrees: [1]
    layouts:
      - {gpu_count: 144, pipeline_parallel: 9}
models:
  - name: big
    model: meta-llama/Llama-3.1-405B-Instruct
    load: {requests_per_s: 0.5, input_tokens: 1024, output_tokens: 256}
    sla: {itl_ms: 60}
"""

RULE = (
    "9 pipeline stages of 16 GPUs (TP 16 × DP 1) pack 4 to each 72-GPU NVLink domain of GB200 "
    "(a stage never crosses a domain), so they need 3 domains, above the 2 of one replica"
)


def test_stages_that_need_three_racks_are_refused_with_the_rule(tmp_path: Path) -> None:
    path = tmp_path / "pp9.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    for command in ("validate", "plan"):
        result = run_cli(command, str(path))
        assert result.code == 1, result.out + result.err
        assert len(result.errors) == 1 and RULE in result.errors[0], result.err
    allowed = SCENARIO.replace("{gpu_count: 144, pipeline_parallel: 9}", "{gpu_count: 128, "
                               "pipeline_parallel: 8}")  # fmt: skip
    path.write_text(allowed, encoding="utf-8")
    assert run_cli("validate", str(path)).code == 0


def test_held_gpus_follow_the_stage_packing() -> None:
    catalog = Predictor.load().catalog
    gb200, h100 = catalog.gpu("GB200"), catalog.gpu("H100-SXM5-80GB")
    assert validity.domains_spanned(gb200, 16, 9) == 3
    assert validity.domains_spanned(gb200, 16, 8) == 2
    assert held_gpus(gb200, 128, 16, 8) == (144, 36)
    assert held_gpus(gb200, 144, 72, 2) == (144, 36)
    # 6-GPU stages on 8-GPU nodes: one node each (was 4 nodes for 5 stages: 30 GPUs in 32)
    assert validity.domains_spanned(h100, 6, 5) == 5
    assert held_gpus(h100, 30, 6, 5) == (40, 5)
    assert held_gpus(h100, 16, 8, 2) == (16, 2)
