"""A GPU counts as measured only with the specs it was measured with: the model card records
them (``domain.gpu_specs``), and a catalog row that gives a measured GPU's id other values
(a user catalog's power-capped or re-rated board) describes a GPU nobody measured."""

from __future__ import annotations

import csv
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from planner.cli.app import app
from predictors.api import Predictor
from predictors.catalog.store import load_catalog
from predictors.core.paths import catalogs_dir
from predictors.estimators.domain import MEASURED_SPEC_COLUMNS, measured_spec_ranges
from tests.test_cli_catalog import write

LLAMA8B = "meta-llama/Llama-3.1-8B-Instruct"
H100 = "H100-SXM5-80GB"


def _bundled_row(gpu: str) -> dict[str, str]:
    with (catalogs_dir() / "gpus.csv").open(encoding="utf-8", newline="") as fh:
        return next(r for r in csv.DictReader(fh) if r["id"] == gpu)


def _predict(user: Path | None) -> str:
    args = ["predict", "--model", LLAMA8B, "--gpu", H100]
    result = CliRunner().invoke(app, [*args, "--user-catalog", str(user)] if user else args)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_card_records_every_measured_gpus_specs_as_the_catalog_gives_them() -> None:
    card = Predictor.load().card
    recorded = card["domain"]["gpu_specs"]
    assert sorted(recorded) == sorted(card["domain"]["gpus"])
    gpus = load_catalog().gpus
    for gpu, specs in recorded.items():
        row = gpus.filter(pl.col("id") == gpu).row(0, named=True)
        assert set(specs) == set(MEASURED_SPEC_COLUMNS)
        for col, value in specs.items():
            assert value == (None if row[col] is None else pytest.approx(float(row[col]))), col


@pytest.mark.slow
def test_a_user_catalog_that_rerates_a_measured_gpu_makes_it_unmeasured(tmp_path: Path) -> None:
    assert "GPU measured   yes" in _predict(None)
    same = tmp_path / "same"
    write(same / "gpus.csv", [_bundled_row(H100)])
    assert "GPU measured   yes" in _predict(same)  # the same specs: still the measured GPU
    capped = tmp_path / "capped"
    write(capped / "gpus.csv", [{**_bundled_row(H100), "tdp_w": "500"}])
    assert "GPU measured   no (physics and other GPUs only)" in _predict(capped)


def test_the_measured_spec_ranges_come_from_the_card_not_the_catalog() -> None:
    card = Predictor.load().card
    gpus = load_catalog().gpus
    rerated = gpus.with_columns(
        pl.when(pl.col("id") == H100)
        .then(pl.lit(99_999.0))
        .otherwise(pl.col("memory_bandwidth_gb_s"))
        .alias("memory_bandwidth_gb_s")
    )
    assert measured_spec_ranges(card, rerated) == measured_spec_ranges(card, gpus)
    older = {**card, "domain": {k: v for k, v in card["domain"].items() if k != "gpu_specs"}}
    assert measured_spec_ranges(older, rerated)["memory_bandwidth_gb_s"][1] == 99_999.0
