"""``wattgpu compare --by cost`` ranks every GPU the catalog prices (issue 11's done-when)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from planner.cli.app import app

runner = CliRunner()
GPUS = "T4,L4,A10G,A30,L40S,A100-SXM4-80GB,H100,H200,B200"


@pytest.mark.slow
def test_compare_by_cost_ranks_every_priced_gpu() -> None:
    result = runner.invoke(
        app,
        [
            "compare",
            "--model",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--requests-per-s",
            "2",
            "--itl-ms",
            "50",
            "--gpus",
            GPUS,
            "--by",
            "cost",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert len(rows) == 9
    fits = [r for r in rows if r["fits"]]
    assert all(r["priced"] for r in rows), [r["gpu"] for r in rows if not r["priced"]]
    costs = [r["cost_usd"] for r in fits]
    assert costs == sorted(costs) and all(c > 0 for c in costs)
    assert {r["gpu"] for r in rows} >= {"H100-SXM5-80GB", "H200-SXM-141GB", "B200", "A30"}


@pytest.mark.slow
def test_compare_quantised_checkpoint_plans_the_base_at_its_precision() -> None:
    result = runner.invoke(
        app,
        [
            "compare",
            "--model",
            "nvidia/Llama-3.1-8B-Instruct-FP8",
            "--requests-per-s",
            "1",
            "--itl-ms",
            "60",
            "--gpus",
            "H100",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["model"] == "meta-llama/Llama-3.1-8B-Instruct" and data["precision"] == "fp8"
    assert any("resolved to meta-llama/Llama-3.1-8B-Instruct" in a for a in data["assumptions"])
