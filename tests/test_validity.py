"""Configuration validity (predictors.catalog.validity) over the whole catalog, and per row in
predict."""

from __future__ import annotations

import polars as pl
import pytest

from predictors.api import Predictor
from predictors.catalog.store import Catalog, load_catalog
from predictors.catalog.validate import FORM_FACTORS
from predictors.catalog.validity import (
    NODE_GPUS_BY_FORM_FACTOR,
    node_gpu_limit,
    tp_fits_heads,
)
from predictors.core.paths import catalogs_dir


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return load_catalog(catalog_dir=catalogs_dir())


def test_every_form_factor_has_a_documented_node_size() -> None:
    assert set(NODE_GPUS_BY_FORM_FACTOR) == FORM_FACTORS
    assert node_gpu_limit("SXM5") == 8 and node_gpu_limit("Superchip") == 4  # trays; NVL72: 72


def test_vllm_head_rule() -> None:
    assert tp_fits_heads(8, 32, 8) and tp_fits_heads(4, 32, 8)
    assert tp_fits_heads(16, 32, 8)  # KV heads replicated on 2 GPUs each
    assert not tp_fits_heads(3, 32, 8)  # does not divide the attention heads
    assert not tp_fits_heads(8, 28, 4) and tp_fits_heads(4, 28, 4)  # Qwen2.5-7B-like
    assert not tp_fits_heads(8, 64, 12)  # heads divide, KV heads neither divide nor replicate
    assert tp_fits_heads(12, 48, 12) and not tp_fits_heads(0, 32, 8)


def test_predict_reports_invalid_configurations_per_row() -> None:
    predictor = Predictor.load()
    rows = pl.DataFrame(
        {
            "model": ["meta-llama/Llama-3.1-8B-Instruct"] * 4,
            "gpu": ["H100", "H100", "L4", "GB200"],
            "gpu_count": ["3", "12", "2", "6"],
        }
    )
    out = predictor.predict(rows)
    errors = out["error"].to_list()
    assert errors[0].startswith("gpu_count: tensor parallelism 3 does not divide the 32 attention")
    assert errors[0].endswith(
        "use a tensor-parallel degree of 1, 2, 4, 8, or keep 3 GPUs with pipeline_parallel 3 "
        "(tensor parallelism 1 × pipeline 3)"
    )
    assert errors[1].startswith("gpu_count: tensor parallelism 12 does not divide the 32")
    assert errors[2] == ""  # the good row is still predicted
    assert out["itl_s"][2] is not None and out["itl_s"][2] > 0
    assert errors[3].startswith("gpu_count: tensor parallelism 6 does not divide")
    for err in (errors[0], errors[1], errors[3]):
        assert "\n" not in err and err.count("; ") >= 1
    assert out["itl_s"][0] is None and out["power_w_per_gpu"][1] is None


@pytest.mark.parametrize(
    ("count", "message"),
    [
        ("12", "tensor parallelism 12 does not divide the 32 attention heads"),
        ("100000", "100000 GPUs exceed the 64 of one replica of H100-SXM5-80GB (8 nodes of 8)"),
        ("216", "216 GPUs exceed the 64 of one replica of H100-SXM5-80GB"),
        ("100001", "must be a whole number from 1 to 100,000"),
        ("3", "does not divide the 32 attention heads"),
    ],
)
@pytest.mark.slow
def test_cli_predict_invalid_configuration_is_one_line(
    capsys: pytest.CaptureFixture[str], count: str, message: str
) -> None:
    from planner.cli.app import main

    with pytest.raises(SystemExit) as info:
        main(
            [
                "predict",
                "--model",
                "meta-llama/Llama-3.1-8B-Instruct",
                "--gpu",
                "H100",
                "--gpu-count",
                count,
            ]
        )
    assert info.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and err[0].startswith("error: predict: --gpu-count:")


def test_a_moe_count_tp_cannot_take_is_offered_attention_data_parallelism() -> None:
    """72 GPUs of a GB200 NVL72 rack cannot be TP 72 for Kimi-K2's 64 heads: the error offers
    the attention-DP layout of the same GPUs, and that layout predicts; a dense model's error
    offers no DP (its copies would be plain replicas)."""
    predictor = Predictor.load()
    rows = pl.DataFrame(
        {
            "model": ["moonshotai/Kimi-K2-Instruct", "meta-llama/Llama-3.1-8B-Instruct"],
            "gpu": ["GB200", "H100"],
            "gpu_count": ["72", "3"],
        }
    )
    kimi, llama = predictor.predict(rows)["error"].to_list()
    assert kimi.endswith(", or keep 72 GPUs with data_parallel 9 (tensor parallelism 8 × data 9)")
    assert "data_parallel" not in llama
    again = rows.head(1).with_columns(pl.lit("9").alias("data_parallel"))
    out = predictor.predict(again)
    assert out["error"][0] == "" and out["tensor_parallel"][0] == 8 and out["itl_s"][0] > 0
