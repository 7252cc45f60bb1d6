"""Fuzz round 24: ``compare`` says that every row is a fleet of at least one replica.

Before: at ``--requests-per-s 0`` ``compare`` priced one idle H100 for a year (920 kWh, 26 k$)
where ``plan`` of the same one-entry scenario deploys nothing, and no output said that
``compare`` plans with ``min_replicas: 1``. Its assumptions now say so, with what a 0 req/s row
means.
"""

from __future__ import annotations

import json

import pytest

from tests.cli_runner import run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")
ARGS = ("compare", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--itl-ms", "30")
ARGS += ("--gpus", "H100-SXM5-80GB", "-f", "json")


@pytest.mark.parametrize("rate", ["0", "2"])
def test_every_row_is_at_least_one_replica_and_says_so(rate: str) -> None:
    result = run_cli(*ARGS, "--requests-per-s", rate)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    said = " ".join(data["assumptions"])
    assert "at least one replica (min_replicas 1)" in said
    idle = "standing cost of one idle replica kept ready" in said
    assert idle == (rate == "0"), said
    row = data["rows"][0]
    assert row["fits"] and row["replicas"] == 1
