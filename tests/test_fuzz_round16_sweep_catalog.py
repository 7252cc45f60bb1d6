"""Fuzz round 16e (sweep and user catalogs). Each test failed before its fix:

* a sweep counted the base plan as meeting the SLA in draws where it no longer carried the
  peak after its failover losses (the plan's own rule), so regret went negative (p10 −24,882 $);
* ``catalog validate DIR`` passed an overlay whose aliases name bundled GPUs, which every other
  command refuses.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli_runner import run_cli

FAILOVER = """\
name: failover-regret
region: US
electricity_usd_per_kwh: 0.12
objective: {minimize: cost}
failover: {replicas: 1}
gpus:
  L4: {}
  H100-SXM5-80GB: {}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {requests_per_s: 25, input_tokens: 1024, output_tokens: 256}
    sla: {itl_ms: 60}
"""


@pytest.mark.slow  # 16 re-plans: 6 s
def test_a_base_plan_that_loses_its_failover_does_not_meet_the_sla(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(FAILOVER, encoding="utf-8")
    out = tmp_path / "sweep.json"
    result = run_cli("sweep", str(scenario), "--draws", "16", "--set",
                     "sweep.arrival_rate_sd=0.4", "-f", "json", "-o", str(out))  # fmt: skip
    assert result.code == 0, result.err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["summary"]["regret_objective"]["p10"] >= -1e-6
    for r in data["records"]:
        base, best = r["base"], r["optimal"]
        if best.get("objective") is not None and all(base["sla_met"].values()):
            # the draw's optimum keeps the failover too: the base fleet cannot beat it
            assert base["objective"] >= best["objective"] * (1 - 1e-9), r["index"]


def test_validate_dir_checks_the_overlay_against_the_bundled_catalogs(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parent.parent
    header = (repo / "catalogs" / "gpus.csv").read_text(encoding="utf-8").splitlines()[0]
    columns = header.split(",")
    values = dict.fromkeys(columns, "")
    values.update(
        id="X-GPU", aliases="NVIDIA L4", vendor="NVIDIA", architecture="Hopper",
        form_factor="SXM5", release_year="2022", memory_gb="80",
        memory_bandwidth_gb_s="3350", tdp_w="700", idle_power_w="105",
        idle_power_source="test", fp16_tflops_dense="989.4", source="test",
    )  # fmt: skip
    user = tmp_path / "ucat"
    user.mkdir()
    (user / "gpus.csv").write_text(
        header + "\n" + ",".join(values[c] for c in columns) + "\n", encoding="utf-8"
    )
    standalone = run_cli("catalog", "validate", str(user))
    overlay = run_cli("catalog", "validate", "--user-catalog", str(user))
    assert overlay.code == 1 and "'NVIDIA L4' also names 'L4'" in overlay.err
    assert standalone.code == 1 and standalone.errors == overlay.errors
    shutil.rmtree(user)
