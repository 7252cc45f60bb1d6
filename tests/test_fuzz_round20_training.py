"""Fuzz round 20b: models trained on the user's own measurements.

Each test failed before its fix: data of one GPU gave every inner selection score NaN, so the
first candidate was kept without a word (and the card held a literal NaN); a card trained
without ML.ENERGY v3 still predicted in its protocol; the report of a plan made with such
models said they were trained on public measurements only; a hard link to a data file was read
twice."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import polars as pl
import pytest

from planner.report.card_info import OWN_NOTE, PUBLIC_NOTE, provenance_of
from predictors.catalog.store import load_catalog
from predictors.estimators.card import ModelCard
from predictors.measurements import load_measurements
from predictors.training.train import REFERENCE_SOURCE, reference_source, train

HEADER = [
    "", "model", "gpu_type", "lambda_qps", "generation_tokens_total", "measurement_duration",
    "gpu_energy", "gpu_0_power_draw_watts_mean", "gpu_0_power_draw_watts_min",
    "gpu_0_power_draw_watts_max", "gpu_0_power_draw_watts_std",
    "time_to_first_token_seconds_events", "e2e_request_latency_seconds_events",
    "request_generation_tokens", "request_prompt_tokens",
]  # fmt: skip


def _watt_counts(path: Path, gpus: list[str], rates: int = 55) -> None:
    """Synthetic Watt Counts runs of Llama-2-7B on *gpus* at *rates* request rates."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        i = 0
        for g, gpu in enumerate(gpus):
            for k in range(rates):
                lam = 0.5 * k
                itl = 0.015 + 0.001 * lam - 0.003 * g
                n = 20
                w.writerow([
                    i, "meta-llama/Llama-2-7b-chat-hf", gpu, lam, 200 * n,
                    n / (lam or 5) + 10, 0, min(150 + 25 * lam, 390), 100, 400, 10,
                    json.dumps([0.1] * n), json.dumps([0.1 + 199 * itl] * n),
                    json.dumps([200] * n), json.dumps([300] * n),
                ])  # fmt: skip
                i += 1


@pytest.fixture(scope="module")
def one_gpu_card(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    data = tmp_path_factory.mktemp("one")
    _watt_counts(data / "runs.csv", ["NVIDIA H100 80GB HBM3"])
    catalog = load_catalog()
    table = load_measurements(data, catalog).table
    return train(table, catalog).card


def test_one_gpus_data_is_chosen_on_random_rows_and_said(one_gpu_card: dict[str, object]) -> None:
    selection = one_gpu_card["selection"]
    assert isinstance(selection, dict)
    for target in ("power", "itl"):
        entry = selection[target]
        assert entry["inner_folds"] == "random rows (one GPU)"
        scores = entry["inner_logo_mdape_pct"].values()
        assert all(isinstance(v, float) and v == v for v in scores), entry


def test_a_card_without_the_reference_source_predicts_in_a_source_it_saw(
    one_gpu_card: dict[str, object],
) -> None:
    assert one_gpu_card["reference_source"] == "watt-counts"
    frame = pl.DataFrame({"source": ["argonne", REFERENCE_SOURCE, "argonne"]})
    assert reference_source(frame) == REFERENCE_SOURCE


def test_the_report_says_whether_the_training_data_is_the_public_one(
    one_gpu_card: dict[str, object],
) -> None:
    own = provenance_of(ModelCard.model_validate(one_gpu_card))
    assert own.note == OWN_NOTE
    shipped = json.loads(
        (Path(__file__).resolve().parent.parent / "predictors/trained/model_card.json").read_text(
            encoding="utf-8"
        )
    )
    assert provenance_of(ModelCard.model_validate(shipped)).note == PUBLIC_NOTE


def test_a_hard_link_to_a_data_file_is_read_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _watt_counts(data / "runs.csv", ["NVIDIA H100 80GB HBM3"], rates=5)
    os.link(data / "runs.csv", data / "again.csv")
    assert load_measurements(data).all_rows.height == 5
