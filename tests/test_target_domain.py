"""Each target's own training rows decide whether a row is in the domain.

The card's domain was the union of every target's evidence: every power row is NVIDIA, yet an
AMD or Intel GPU whose ITL was measured counted as in the domain, so a plan on MI300X showed
its power (and energy) without the "outside the training domain" flag. The card now records
per target the GPU vendors and architectures of its training rows (``domain.targets``), and a
row is outside the domain where a target it is predicted for has none on its GPU's vendor or
architecture.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from cli_runner import run_cli

from predictors.api import Predictor
from predictors.core.paths import trained_dir

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _rows(predictor: Predictor) -> pl.DataFrame:
    gpus = predictor.catalog.gpus["id"].to_list()
    return pl.DataFrame(
        {
            "model": [MODEL] * len(gpus),
            "gpu": gpus,
            "batch_size": [8] * len(gpus),
            "input_tokens": [512] * len(gpus),
            "output_tokens": [256] * len(gpus),
        }
    )


def test_the_card_records_each_targets_gpu_vendors_and_architectures(
    predictor: Predictor,
) -> None:
    dom = predictor.card["domain"]
    targets = dom["targets"]
    assert set(targets) == {"power", "itl", "ttft"}
    for record in targets.values():
        assert set(record["vendors"]) <= set(dom["vendors"])
        assert set(record["architectures"]) <= set(dom["architectures"])
    assert targets["power"]["vendors"] == ["NVIDIA"]  # ML.ENERGY measures NVIDIA GPUs only
    assert "AMD" in targets["itl"]["vendors"]


def test_every_catalog_gpu_is_in_the_domain_only_where_each_target_has_its_rows(
    predictor: Predictor,
) -> None:
    """Over the whole GPU catalog, with and without TTFT: a row is in the domain only if every
    target it carries was trained on its GPU's vendor and architecture, and every row whose
    vendor or architecture some target lacks says which target."""
    rows = _rows(predictor)
    specs = predictor.catalog.gpus.select(pl.col("id").alias("gpu"), "vendor", "architecture")
    targets = predictor.card["domain"]["targets"]
    for with_ttft, names in ((False, ("power", "itl")), (True, ("power", "itl", "ttft"))):
        out = predictor.predict(rows, with_ttft=with_ttft).join(specs, on="gpu", how="left")
        assert out.height == rows.height
        checked = 0
        for row in out.iter_rows(named=True):
            lacking = [
                t
                for t in names
                if row["vendor"] not in targets[t]["vendors"]
                or row["architecture"] not in targets[t]["architectures"]
            ]
            if lacking:
                assert row["in_domain"] is False, row
                checked += 1
        assert checked >= 5, "the catalog has AMD, Intel and Blackwell Ultra GPUs"


@pytest.mark.slow
def test_mi300x_power_is_out_of_the_domain_and_says_why(predictor: Predictor) -> None:
    rows = pl.DataFrame(
        {
            "model": [MODEL] * 2,
            "gpu": ["MI300X", "H100-SXM5-80GB"],
            "batch_size": [8, 8],
            "input_tokens": [512, 512],
            "output_tokens": [256, 256],
        }
    )
    out = predictor.predict(rows)
    assert out["in_domain"].to_list() == [False, True]
    assert out["gpu_measured"].to_list() == [True, True]  # its ITL rows are still its own
    line = run_cli("predict", "--model", MODEL, "--gpu", "MI300X", "--batch-size", "8")
    assert line.code == 0, line.err
    assert "GPU vendor 'AMD' has no power training rows" in line.out + line.err


@pytest.mark.slow
def test_a_card_without_per_target_records_checks_only_the_union(predictor: Predictor) -> None:
    rows = _rows(predictor)
    card = {**predictor.card, "domain": dict(predictor.card["domain"])}
    del card["domain"]["targets"]
    models = dataclasses.replace(predictor.models, card=card)  # a card from before the records
    old = dataclasses.replace(predictor, models=models)
    before = old.predict(rows)["domain_reason"].fill_null("")
    after = predictor.predict(rows)["domain_reason"].fill_null("")
    assert not before.str.contains("has no power training rows").any()
    assert after.str.contains("GPU vendor 'AMD' has no power training rows").any()
    # the per-target lines only add reasons: a row out of the union's domain stays out
    assert ((before != "") <= (after != "")).all()
    power = predictor.predict(rows)["power_w_per_gpu"]
    assert old.predict(rows)["power_w_per_gpu"].equals(power)  # only the flags change


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ("x", "domain.targets: must be an object"),
        ({"power": 3}, "domain.targets.power: must be an object"),
        ({"power": {"vendors": "NVIDIA", "architectures": []}}, "domain.targets.power.vendors"),
    ],
)
def test_a_damaged_targets_record_is_one_line(tmp_path: Path, value: object, where: str) -> None:
    models = tmp_path / "models"
    shutil.copytree(trained_dir(), models)
    card_path = models / "model_card.json"
    card = json.loads(card_path.read_text(encoding="utf-8"))
    card["domain"]["targets"] = value
    card_path.write_text(json.dumps(card), encoding="utf-8")
    result = run_cli(
        "predict", "--models", str(models), "--model", MODEL, "--gpu", "H100-SXM5-80GB"
    )
    assert result.code != 0
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and where in lines[0] and "Traceback" not in result.err, result.err
