"""Fuzz round 19c: hypothetical GPUs and LLMs in a user catalog.

Each test failed before its fix: an MoE model with every expert active predicted with an empty
ITL (the batch and ``compare`` then stopped with an internal error); an MLA row without its
cache dimensions, a ``first_k_dense`` covering every layer and a scale-out latency in
nanoseconds accepted; a 16-GPU node given no replica above 8 GPUs by the planner's default
degrees; and a tiny imported model rounded to 0 B parameters."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from predictors.api import Predictor
from predictors.catalog.hf_config import catalog_row_from_hf_config
from predictors.catalog.store import catalogs_dir, load_catalog
from tests.cli_runner import run_cli
from tests.test_fuzz_round17_import import LLAMA_8B


def _bundled(name: str) -> pl.DataFrame:
    return pl.read_csv(catalogs_dir() / name, infer_schema_length=0)


def _write_llm(tmp_path: Path, model: str, new_id: str, **cells: str) -> Path:
    row = _bundled("llms.csv").filter(pl.col("id") == model)
    row = row.with_columns(
        pl.lit(new_id).alias("id"),
        pl.lit("").alias("aliases"),
        *(pl.lit(v).alias(k) for k, v in cells.items()),
    )
    row.write_csv(tmp_path / "llms.csv")
    return tmp_path


def _write_gpu(tmp_path: Path, gpu: str, new_id: str, **cells: str) -> Path:
    row = _bundled("gpus.csv").filter(pl.col("id") == gpu)
    row = row.with_columns(
        pl.lit(new_id).alias("id"),
        pl.lit("").alias("aliases"),
        pl.lit("").alias("assumed_aliases"),
        *(pl.lit(v).alias(k) for k, v in cells.items()),
    )
    row.write_csv(tmp_path / "gpus.csv")
    return tmp_path


@pytest.mark.slow
def test_an_moe_model_with_every_expert_active_is_predicted(tmp_path: Path) -> None:
    config = {**LLAMA_8B, "num_local_experts": 8, "num_experts_per_tok": 8}
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    ucat = tmp_path / "ucat"
    result = run_cli(
        *["catalog", "import-hf", str(tmp_path / "config.json"), "--id", "t/all-active"]
        + ["--user-catalog", str(ucat)]
    )
    assert result.code == 0, result.out + result.err
    predictor = Predictor.load(catalog=load_catalog(ucat))
    out = predictor.predict(
        pl.DataFrame([{"model": "t/all-active", "gpu": "H200-SXM-141GB", "batch_size": 8}])
    )
    assert out["error"][0] == ""
    itl = out["itl_s"][0]
    assert itl is not None and math.isfinite(itl) and itl > 0
    # every expert active reads every weight per step: no faster than the dense model's floor
    dense = predictor.predict(
        pl.DataFrame(
            [
                {
                    "model": "meta-llama/Llama-3.1-8B-Instruct",
                    "gpu": "H200-SXM-141GB",
                    "batch_size": 8,
                }
            ]
        )
    )
    assert itl > dense["itl_s"][0]
    compare = run_cli(
        *["compare", "--user-catalog", str(ucat), "--model", "t/all-active"]
        + ["--requests-per-s", "1", "--itl-ms", "50", "--gpus", "H200", "--format", "csv"]
    )
    assert compare.code == 0, compare.out + compare.err


@pytest.mark.parametrize(
    ("cells", "column", "words"),
    [
        # every expert active, yet fewer active than total parameters
        (
            {"num_experts": "1", "num_experts_per_tok": "1", "active_params_b": "10"},
            "active_params_b",
            "every expert is active",
        ),
        # the routed experts alone give more than the active parameters
        ({"active_params_b": "1"}, "active_params_b", "routed experts alone"),
        ({"first_k_dense": "100"}, "first_k_dense", "leaves no MoE layer"),
    ],
)
def test_impossible_moe_rows_are_refused_naming_the_column(
    tmp_path: Path, cells: dict[str, str], column: str, words: str
) -> None:
    _write_llm(tmp_path, "Qwen/Qwen3-30B-A3B", "t/bad-moe", **cells)
    result = run_cli(*["catalog", "validate", str(tmp_path)])
    assert result.code == 1, result.out + result.err
    assert f"column '{column}'" in (result.out + result.err) and words in (
        result.out + result.err
    ), result.out + result.err


def test_an_mla_row_without_its_cache_dimensions_is_refused(tmp_path: Path) -> None:
    _write_llm(tmp_path, "deepseek-ai/DeepSeek-V3", "t/mla", kv_lora_rank="", qk_rope_head_dim="")
    result = run_cli(*["catalog", "validate", str(tmp_path)])
    assert result.code == 1, result.out + result.err
    assert "column 'kv_lora_rank'" in (result.out + result.err)
    assert "column 'qk_rope_head_dim'" in (result.out + result.err)


@pytest.mark.parametrize(
    ("column", "value"),
    [("scale_out_latency_us", "5000000"), ("scale_out_gbit_s", "400000")],
)
def test_scale_out_unit_mistakes_are_refused(tmp_path: Path, column: str, value: str) -> None:
    _write_gpu(tmp_path, "H100-SXM5-80GB", "t-h100", **{column: value})
    result = run_cli(*["catalog", "validate", str(tmp_path)])
    assert result.code == 1, result.out + result.err
    assert f"column '{column}'" in (result.out + result.err) and "unit mistake" in (
        result.out + result.err
    )


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_a_16_gpu_node_gets_the_16_gpu_replica_the_8_gpu_node_needs_two_nodes_for(
    tmp_path: Path,
) -> None:
    bundled = _bundled("gpus.csv").filter(pl.col("id") == "H100-SXM5-80GB")
    rows = pl.concat(
        [
            bundled.with_columns(
                pl.lit(f"t-h100-node{n}").alias("id"),
                pl.lit("").alias("aliases"),
                pl.lit("").alias("assumed_aliases"),
                pl.lit(str(n)).alias("node_gpus"),
                pl.lit(str(n)).alias("nvlink_domain_gpus"),
            )
            for n in (8, 16)
        ]
    )
    rows.write_csv(tmp_path / "gpus.csv")
    result = run_cli(
        *["compare", "--user-catalog", str(tmp_path), "--model"]
        + ["meta-llama/Llama-3.1-405B-Instruct", "--requests-per-s", "1", "--itl-ms", "100"]
        + ["--gpus", "t-h100-node8,t-h100-node16", "--format", "csv"]
    )
    assert result.code == 0, result.out + result.err
    table = pl.read_csv(result.out.encode())
    fits = dict(zip(table["gpu"], table["fits"], strict=True))
    assert fits == {"t-h100-node8": True, "t-h100-node16": True}, result.out
    layout = dict(zip(table["gpu"], table["deployment"], strict=True))
    assert "TP16" in layout["t-h100-node16"], layout


def test_a_tiny_imported_model_keeps_its_parameter_count() -> None:
    tiny = {
        **LLAMA_8B,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "num_hidden_layers": 2,
        "vocab_size": 1000,
    }
    row = catalog_row_from_hf_config(tiny, "t/tiny", "config.json")
    assert 0 < row["total_params_b"] < 0.001
    assert row["active_params_b"] == row["total_params_b"]
