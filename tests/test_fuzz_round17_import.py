"""Fuzz round 17a: ``catalog import-hf`` on real config.json shapes.

Each test failed before its fix: common ``quantization_config`` blocks imported at 16 bits, an MoE
config without its top-k imported with the attention alone active, Mamba hybrids counted as
attention layers (3.4 × the parameters), the text "false" read as true, and one ``Infinity`` in a
key the importer never reads refusing the whole file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from predictors.catalog.hf_config import catalog_row_from_hf_config
from predictors.core.errors import WattgpuError
from tests.cli_runner import run_cli

LLAMA_8B: dict[str, Any] = {
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 32,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}


def _row(**extra: Any) -> dict[str, Any]:
    return catalog_row_from_hf_config({**LLAMA_8B, **extra}, "t/m", "config.json")


@pytest.mark.parametrize(
    ("quant", "dtype"),
    [
        ({"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0}, "fp8"),
        ({"quant_method": "bitsandbytes", "load_in_4bit": True}, "int4"),
        ({"quant_method": "bitsandbytes", "load_in_8bit": True}, "int8"),
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {"g": {"weights": {"num_bits": 8, "type": "int"}}},
            },
            "int8",
        ),
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {"g": {"weights": {"num_bits": 8, "type": "float"}}},
            },
            "fp8",
        ),
        ({"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"}, "int4"),
        ({"quant_method": "modelopt", "quant_algo": "NVFP4"}, "fp4"),
        (
            {
                "quant_method": "modelopt",
                "quant_algo": "MIXED_PRECISION",
                "quantized_layers": {
                    "model.layers.0.self_attn.q_proj": {"quant_algo": "FP8"},
                    "model.layers.0.self_attn.k_proj": {"quant_algo": "FP8"},
                    "model.layers.0.self_attn.v_proj": {"quant_algo": "FP8"},
                    "model.layers.0.mlp.up_proj": {"quant_algo": "W4A16_NVFP4"},
                    "model.layers.0.mlp.down_proj": {"quant_algo": "W4A16_NVFP4"},
                },
            },
            "fp4",  # the MLP layers hold most of the weights
        ),
        ({"quant_method": "gptq", "bits": 8}, "int8"),
        ({"quant_method": "awq"}, "int4"),
        ({"quant_method": "mxfp4"}, "fp4"),
    ],
)
def test_a_quantisation_block_sets_the_weights_precision(quant: dict[str, Any], dtype: str) -> None:
    assert _row(quantization_config=quant)["default_dtype"] == dtype


@pytest.mark.parametrize(
    ("quant", "named"),
    [
        ({"quant_method": "gptq", "bits": 3}, "quantization_config.bits 3"),
        ({"quant_method": "hqq"}, "quant_method 'hqq'"),
        ({"quant_method": "bitsandbytes"}, "quant_method 'bitsandbytes'"),
        ({"quant_method": "compressed-tensors"}, "compressed-tensors"),
        ("fp8", "'quantization_config' must be an object"),
    ],
)
def test_a_quantisation_block_not_read_is_an_error_not_16_bits(quant: Any, named: str) -> None:
    with pytest.raises(WattgpuError, match="config.json") as err:
        _row(quantization_config=quant)
    assert named in str(err.value) and "\n" not in str(err.value)


def test_an_moe_config_without_its_top_k_is_refused() -> None:
    moe = {**LLAMA_8B, "model_type": "mixtral", "num_local_experts": 8}
    with pytest.raises(WattgpuError, match="num_experts_per_tok"):
        catalog_row_from_hf_config(moe, "t/m", "config.json")
    hunyuan = catalog_row_from_hf_config({**moe, "moe_topk": 2}, "t/m", "config.json")
    stated = catalog_row_from_hf_config({**moe, "num_experts_per_tok": 2}, "t/m", "config.json")
    assert hunyuan["active_params_b"] == stated["active_params_b"] > 10


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("hybrid_override_pattern", "M-M*-M-M*"),
        ("layers_block_type", ["mamba", "attention", "mamba", "mlp"]),
        ("layer_types", ["mamba", "attention"]),
    ],
)
def test_a_mamba_hybrid_is_refused_not_counted_as_attention(key: str, value: Any) -> None:
    with pytest.raises(WattgpuError, match="Mamba layers") as err:
        _row(**{key: value})
    assert key in str(err.value)


@pytest.mark.parametrize("key", ["tie_word_embeddings", "use_sliding_window", "attention_bias"])
def test_a_flag_given_as_text_is_an_error_naming_it(key: str) -> None:
    with pytest.raises(WattgpuError, match=f"'{key}' must be true or false"):
        _row(**{key: "false", "sliding_window": 4096})


def test_a_flag_given_as_a_json_boolean_or_zero_one_is_read() -> None:
    assert _row(tie_word_embeddings=True)["tie_word_embeddings"] is True
    assert _row(tie_word_embeddings=0)["tie_word_embeddings"] is False
    untied = _row(sliding_window=4096, use_sliding_window=False)
    assert untied["attention_kind"] == "full"


def test_infinity_in_a_key_never_read_is_imported(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    text = json.dumps(LLAMA_8B)[:-1] + ', "time_step_limit": [0.0, Infinity]}'
    config.write_text(text, encoding="utf-8")
    result = run_cli(
        "catalog", "import-hf", str(config), "--id", "t/inf", "--user-catalog", str(tmp_path)
    )
    assert result.code == 0, result.err
    assert "total_params_b: 8.03" in result.out
    config.write_text(text.replace("131072", "Infinity"), encoding="utf-8")
    refused = run_cli(
        "catalog", "import-hf", str(config), "--id", "t/inf", "--user-catalog", str(tmp_path)
    )
    assert refused.code == 1
    assert "'max_position_embeddings' must be a finite whole number" in refused.err
