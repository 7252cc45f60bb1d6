"""Fuzz round 28 (predict contract): an encoder-decoder model's context window holds its
prompt and its output each, not their sum.

Before: the 12 measured ML.ENERGY v1 runs of FastChat-T5 (a Flan-T5-XL encoder-decoder, 512-token
window; 250 input and 269-326 output tokens) were refused by ``predict``, ``compare`` and
scenarios: "input_tokens + output_tokens = 563 exceed the model's 512-token context"."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from predictors.api import Predictor
from predictors.catalog.context_window import context_tokens, is_encoder_decoder
from tests.cli_runner import run_cli

T5 = "lmsys/fastchat-t5-3b-v1.0"


def _rows(model: str, tokens: list[tuple[int, int]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "model": [model] * len(tokens),
            "gpu": ["A100-PCIE-80GB"] * len(tokens),
            "engine": ["hf-transformers"] * len(tokens),
            "input_tokens": [i for i, _ in tokens],
            "output_tokens": [o for _, o in tokens],
        }
    )


def test_an_encoder_decoder_window_holds_the_longer_side(predictor: Predictor) -> None:
    out = predictor.predict(_rows(T5, [(250, 313), (512, 512), (513, 10), (10, 600)]))
    errors = out["error"].to_list()
    assert errors[:2] == ["", ""], errors
    assert errors[2] == (
        "the longer of input_tokens and output_tokens (an encoder-decoder model) = 513 exceed "
        "the model's 512-token context; lower them"
    )
    assert "= 600 exceed the model's 512-token context" in errors[3]


def test_a_decoder_only_window_still_holds_the_sum(predictor: Predictor) -> None:
    model = "meta-llama/Llama-3.1-8B-Instruct"
    out = predictor.predict(_rows(model, [(100_000, 31_072), (100_000, 31_073)]))
    assert out["error"].to_list()[0] == ""
    assert out["error"].to_list()[1] == (
        "input_tokens + output_tokens = 131073 exceed the model's 131072-token context; lower them"
    )


def test_a_scenario_entry_of_an_encoder_decoder_model(tmp_path: Path) -> None:
    def scenario(tokens: tuple[int, int]) -> Path:
        path = tmp_path / f"t5-{tokens[0]}-{tokens[1]}.yaml"
        path.write_text(
            "name: t5\nregion: US\nelectricity_usd_per_kwh: 0.1\n"
            "gpus:\n  A100-PCIE-80GB: {}\nmodels:\n  - name: chat\n"
            f"    model: {T5}\n    load: {{requests_per_s: 0.5, input_tokens: {tokens[0]}, "
            f"output_tokens: {tokens[1]}}}\n    sla: {{itl_ms: 200}}\n",
            encoding="utf-8",
        )
        return path

    assert run_cli("validate", str(scenario((250, 313)))).code == 0
    bad = run_cli("validate", str(scenario((600, 10))))
    assert bad.code == 1
    assert (
        "models[0].load.input_tokens: 600 tokens (the longer of input 600 and output 10: an "
        "encoder-decoder model) exceed the 512-token context" in bad.err
    ), bad.err


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_no_measured_configuration_exceeds_its_context(measurements_dir: Path) -> None:
    from predictors.catalog.store import load_catalog
    from predictors.measurements import load_measurements

    catalog = load_catalog()
    table = load_measurements(measurements_dir, catalog).table
    llms = catalog.llms.select("id", "model_type", "max_position_embeddings")
    rows = table.join(llms, left_on="model", right_on="id", how="inner").filter(
        pl.col("max_position_embeddings").is_not_null()
    )
    over = [
        (r["source"], r["model"], r["input_tokens"], r["output_tokens"])
        for r in rows.iter_rows(named=True)
        if context_tokens(r["model_type"], r["input_tokens"], r["output_tokens"])
        > r["max_position_embeddings"]
    ]
    assert rows.height > 5_000
    assert over == []
    assert any(is_encoder_decoder(t) for t in rows["model_type"].unique().to_list())
