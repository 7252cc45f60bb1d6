"""Fuzz round 17d: the Python API and the disclosure exports.

Each test failed before its fix: ``predict_rows`` stopped on a polars DuplicateError for an input
column named like one of the new last columns (so an output could not be fed back); Markdown
kept ``[a](javascript:…)`` in user text a live link; CycloneDX named the scenario's default grid
for an entry placed in another region, and SPDX and CycloneDX put the fleet's training energy on
every model (a sum over the BOM gave N times the figure)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from predictors.api import Predictor
from predictors.core.escape import md_text
from predictors.rows import predict_rows
from tests.cli_runner import run_cli


@pytest.mark.slow
def test_an_output_fed_back_to_predict_rows_is_predicted_again() -> None:
    predictor = Predictor.load()
    rows = pl.DataFrame({"model": ["meta-llama/Llama-3.1-8B-Instruct"], "gpu": ["A30"]})
    first = predict_rows(predictor, rows)
    again = predict_rows(predictor, first)
    assert again.columns[-3:] == ["model_id", "gpu_id", "metric_definition"]
    assert again["itl_s"][0] == first["itl_s"][0]
    stale = rows.with_columns(pl.lit("x").alias("model_id"), pl.lit(9.0).alias("ttft_s"))
    out = predict_rows(predictor, stale, with_ttft=True)
    assert out["model_id"][0] == "meta-llama/Llama-3.1-8B-Instruct" and out["ttft_s"][0] != 9.0


def test_markdown_user_text_makes_no_link_or_image() -> None:
    text = md_text("[a](javascript:alert(1)) ![i](http://evil.example/x.png)")
    assert "](" not in text.replace("\\](", "")
    assert text == "\\[a\\](javascript:alert(1)) !\\[i\\](http://evil.example/x.png)"


@pytest.mark.slow  # two reports: 6 s
def test_exports_name_the_entrys_grid_and_give_training_energy_once(tmp_path: Path) -> None:
    overlay = tmp_path / "fr.yaml"
    overlay.write_text("regions:\n  fr: {region: FR}\n", encoding="utf-8")
    bom = tmp_path / "fr.cdx.json"
    args = ("--pareto-points", "0", "--set", "disclosure.training_energy_kwh=1000",
            "--set", "disclosure.training_source=vendor")  # fmt: skip
    result = run_cli(
        "report", "paper-llama8b-low-load", "--overlay", str(overlay), *args,
        "-f", "cyclonedx", "-o", str(bom),
    )  # fmt: skip
    assert result.code == 0, result.err
    components = json.loads(bom.read_text(encoding="utf-8"))["components"]
    energy = components[0]["modelCard"]["considerations"]["environmentalConsiderations"]
    inference = energy["energyConsumptions"][0]["energyProviders"][0]
    assert inference["organization"]["name"] == "grid of region fr"
    assert inference["description"].startswith("56.039 gCO2e/kWh")
    spdx = tmp_path / "ef.spdx.json"
    result = run_cli("report", "enterprise-fleet", *args, "-f", "spdx", "-o", str(spdx))
    assert result.code == 0, result.err
    graph = json.loads(spdx.read_text(encoding="utf-8"))["@graph"]
    packages = [g for g in graph if g.get("type") == "ai_AIPackage"]
    training = [
        float(t["ai_energyQuantity"])
        for p in packages
        for t in p["ai_energyConsumption"].get("ai_trainingEnergyConsumption", [])
    ]
    assert len(packages) > 1 and training == [1000.0]
