"""Quantised checkpoint ids resolve to their base model with the precision they imply."""

from __future__ import annotations

import polars as pl
import pytest

from predictors.api import Predictor
from predictors.catalog.quantised import (
    fill_implied_precision,
    resolve_checkpoint,
    split_scheme,
    try_resolve_checkpoint,
)
from predictors.catalog.store import Catalog, load_catalog
from predictors.core.errors import UnknownIdError
from predictors.core.paths import catalogs_dir


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return load_catalog(catalog_dir=catalogs_dir())


@pytest.mark.parametrize(
    ("name", "base", "precision"),
    [
        ("nvidia/Llama-3.1-8B-Instruct-FP8", "meta-llama/Llama-3.1-8B-Instruct", "fp8"),
        ("nvidia/DeepSeek-R1-NVFP4", "deepseek-ai/DeepSeek-R1", "fp4"),
        ("Qwen/Qwen2.5-7B-Instruct-AWQ", "Qwen/Qwen2.5-7B-Instruct", "int4"),
        ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "Qwen/Qwen2.5-7B-Instruct", "int4"),
        ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "Qwen/Qwen2.5-7B-Instruct", "int8"),
        (
            "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4",
            "meta-llama/Llama-3.1-8B-Instruct",
            "int4",
        ),
        (
            "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic",
            "meta-llama/Llama-3.1-8B-Instruct",
            "fp8",
        ),
        (
            "neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w4a16",
            "meta-llama/Llama-3.1-70B-Instruct",
            "int4",
        ),
        ("unsloth/Llama-3.2-1B-Instruct-bnb-4bit", "meta-llama/Llama-3.2-1B-Instruct", "int4"),
    ],
)
def test_checkpoint_resolves_to_base(cat: Catalog, name: str, base: str, precision: str) -> None:
    got = resolve_checkpoint(cat, name)
    assert (got.model_id, got.precision) == (base, precision)
    assert got.quantised and base in got.note() and precision in got.note()


def test_catalog_rows_win_and_plain_names_are_not_quantised(cat: Catalog) -> None:
    own = resolve_checkpoint(cat, "nvidia/Llama-3.1-70B-Instruct-FP8")  # has its own row
    assert own.model_id == "nvidia/Llama-3.1-70B-Instruct-FP8" and not own.quantised
    plain = resolve_checkpoint(cat, "meta-llama/Llama-3.1-8B-Instruct")
    assert plain.precision is None and plain.note() == ""
    assert split_scheme("openai/gpt-oss-120b") is None
    assert split_scheme("FP8") is None  # a scheme alone is no model


def test_unknown_base_names_the_scheme_and_fix(cat: Catalog) -> None:
    assert try_resolve_checkpoint(cat, "acme/Nothing-7B-AWQ") is None
    with pytest.raises(
        UnknownIdError, match=r"AWQ quantised checkpoint of 'acme/Nothing-7B'.*fix:"
    ):
        resolve_checkpoint(cat, "acme/Nothing-7B-AWQ")


def test_explicit_precision_wins(cat: Catalog) -> None:
    rows = pl.DataFrame(
        {
            "model": ["nvidia/Llama-3.1-8B-Instruct-FP8"] * 3
            + ["meta-llama/Llama-3.1-8B-Instruct"],
            "precision": ["", "bf16", None, ""],
        }
    )
    # an empty cell takes the checkpoint's precision: FP8 from the name, else the catalog's BF16
    assert fill_implied_precision(rows, cat)["precision"].to_list() == [
        "fp8",
        "bf16",
        "fp8",
        "bf16",
    ]
    no_column = fill_implied_precision(rows.drop("precision"), cat)
    assert no_column["precision"].to_list() == ["fp8", "fp8", "fp8", "bf16"]


def test_predict_uses_the_base_at_the_implied_precision() -> None:
    predictor = Predictor.load()
    rows = pl.DataFrame(
        {
            "model": ["nvidia/Llama-3.1-8B-Instruct-FP8", "meta-llama/Llama-3.1-8B-Instruct"],
            "gpu": ["H100", "H100"],
            "precision": ["", "fp8"],
        }
    )
    out = predictor.predict(rows)
    assert out["error"].to_list() == ["", ""]
    assert out["precision"].to_list() == ["fp8", "fp8"]
    assert out["itl_s"][0] == pytest.approx(out["itl_s"][1])
    assert out["power_w_per_gpu"][0] == pytest.approx(out["power_w_per_gpu"][1])


@pytest.mark.slow
def test_cli_predict_states_the_resolutions(capsys: pytest.CaptureFixture[str]) -> None:
    from planner.cli.app import main

    def run(*args: str) -> None:
        with pytest.raises(SystemExit) as info:
            main(["predict", "--model", "nvidia/Llama-3.1-8B-Instruct-FP8", *args])
        assert info.value.code in (0, None)

    run("--gpu", "A100")
    captured = capsys.readouterr()
    assert "(vllm, fp8," in captured.out
    assert "quantised checkpoint (FP8) of meta-llama/Llama-3.1-8B-Instruct" in captured.err
    assert "assumed A100-SXM4-80GB" in captured.err
    run("--gpu", "H100", "--precision", "bf16")
    captured = capsys.readouterr()
    assert "(vllm, bf16," in captured.out
    assert "explicit precision bf16 instead of the implied fp8" in captured.err
