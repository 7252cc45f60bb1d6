"""Fuzz round 17a: ``catalog import-hf`` on real config.json shapes.

Each test failed before its fix: common ``quantization_config`` blocks imported at 16 bits, an MoE
config without its top-k imported with the attention alone active, Mamba hybrids counted as
attention layers (3.4 × the parameters; now counted block by block), the text "false" read as
true, and one ``Infinity`` in a key the importer never reads refusing the whole file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from predictors.catalog.hf_config import catalog_row_from_hf_config
from predictors.catalog.llm_params import catalog_params_b
from predictors.core.errors import WattgpuError
from tests.cli_runner import run_cli
from tests.conftest import SHARED_DATA

HF_CONFIGS = SHARED_DATA / "reference" / "llms" / "hf_configs"

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


NEMOTRON_H: dict[str, Any] = {
    **LLAMA_8B,
    "model_type": "nemotron_h",
    "hidden_size": 1024,
    "intermediate_size": 4096,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "head_dim": 128,
    "num_hidden_layers": 4,
    "vocab_size": 1000,
    "mamba_num_heads": 16,
    "mamba_head_dim": 64,
    "n_groups": 2,
    "ssm_state_size": 32,
    "conv_kernel": 4,
    "use_conv_bias": True,
    "use_bias": False,
    "attention_bias": False,
}


def test_a_nemotron_h_pattern_is_counted_block_by_block() -> None:
    # M: in_proj 1024 x (1024 + 1152 + 16) + conv 1152 x 4 + 1152 + 3 x 16 + 1024 + out 1024^2
    mamba = 1024 * 2192 + 1152 * 5 + 48 + 1024 + 1024 * 1024
    attention = 2 * 1024 * 1024 + 2 * 1024 * 256  # q, o; k, v
    mlp = 2 * 1024 * 4096  # up, down (squared ReLU: not gated)
    norms = 4 * 1024 + 1024  # one per block, the final one
    embeddings = 2 * 1000 * 1024  # untied
    expected = (2 * mamba + attention + mlp + norms + embeddings) / 1e9
    for config in (
        {**NEMOTRON_H, "hybrid_override_pattern": "M*M-"},
        {**NEMOTRON_H, "layers_block_type": ["mamba", "attention", "mamba", "mlp"]},
    ):
        row = catalog_row_from_hf_config(config, "t/h", "config.json")
        assert row["total_params_b"] == row["active_params_b"] == catalog_params_b(expected)
        assert (row["attention_kind"], row["full_attention_layers"]) == ("hybrid", 1)
        assert row["state_bytes_per_sequence"] > 0


@pytest.mark.parametrize(
    ("stem", "total_b", "active_b"),
    [  # the model cards' figures
        ("nvidia--Nemotron-H-56B-Base-8K", 56.0, None),
        ("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 31.6, 3.6),
        ("nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8", 120.0, 12.0),
        ("nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", 550.0, 55.0),
    ],
)
def test_published_nemotron_h_configs_count_to_their_model_cards(
    stem: str, total_b: float, active_b: float | None
) -> None:
    path = HF_CONFIGS / f"{stem}_config.json"
    if not path.is_file():
        pytest.skip(f"reference config not found: {path} (../shared is absent)")
    row = catalog_row_from_hf_config(json.loads(path.read_text()), "t/h", str(path))
    assert row["total_params_b"] == pytest.approx(total_b, rel=0.02)
    if active_b is not None:
        assert row["active_params_b"] == pytest.approx(active_b, rel=0.07)


def test_mamba_layers_outside_the_nemotron_pattern_are_refused() -> None:
    with pytest.raises(WattgpuError, match="'layer_types' holds Mamba layers"):
        _row(layer_types=["mamba", "attention"])
    with pytest.raises(WattgpuError, match="'hybrid_override_pattern' holds 'X'"):
        catalog_row_from_hf_config(
            {**NEMOTRON_H, "hybrid_override_pattern": "M*X-"}, "t/h", "config.json"
        )


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
