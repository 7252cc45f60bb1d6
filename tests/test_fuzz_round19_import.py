"""Fuzz round 19e: ``catalog import-hf`` on architectures users bring next.

Each test failed before its fix: Jamba, pure Mamba, MiniMax-Text-01's lightning attention and
DBRX's nested config were imported as plain transformers (Jamba 92 B against its published
51.6 B, KV on every layer); Qwen3-Next's ``full_attention_interval`` was ignored (KV on all of
its layers); NVIDIA's FP8 / NVFP4 checkpoints, whose config.json states bfloat16, were imported
at 16 bits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from predictors.catalog.hf_config import catalog_row_from_hf_config
from predictors.core.errors import WattgpuError
from tests.conftest import SHARED_DATA

JAMBA: dict[str, Any] = {
    "model_type": "jamba",
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 65536,
    "max_position_embeddings": 262144,
    "attn_layer_period": 8,
    "attn_layer_offset": 4,
    "expert_layer_period": 2,
    "expert_layer_offset": 1,
    "num_experts": 16,
    "num_experts_per_tok": 2,
    "mamba_d_state": 16,
    "mamba_d_conv": 4,
    "mamba_expand": 2,
}
MAMBA: dict[str, Any] = {
    "model_type": "mamba",
    "torch_dtype": "float16",
    "tie_word_embeddings": True,
    "hidden_size": 2560,
    "num_hidden_layers": 64,
    "intermediate_size": 5120,
    "vocab_size": 50280,
    "state_size": 16,
    "num_attention_heads": 1,
    "max_position_embeddings": 2048,
}
SMALL: dict[str, Any] = {
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
    "hidden_size": 2048,
    "num_hidden_layers": 8,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "head_dim": 128,
    "intermediate_size": 5120,
    "vocab_size": 32000,
    "max_position_embeddings": 32768,
}
MINIMAX = {**SMALL, "model_type": "minimax_text_01", "attn_type_list": [0, 0, 0, 1] * 2}
DBRX: dict[str, Any] = {
    "model_type": "dbrx",
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
    "d_model": 6144,
    "n_heads": 48,
    "n_layers": 40,
    "vocab_size": 100352,
    "max_position_embeddings": 32768,
    "intermediate_size_mlp": 10752,
    "attn_config": {"kv_n_heads": 8},
    "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4},
}


@pytest.mark.parametrize(
    ("config", "words"),
    [
        (JAMBA, "a Mamba / state-space model (model_type 'jamba')"),
        (MAMBA, "a Mamba / state-space model (model_type 'mamba')"),
        ({**SMALL, "model_type": "llama", "mamba_d_state": 16}, "its key 'mamba_d_state'"),
        (MINIMAX, "'attn_type_list' mixes lightning"),
        (DBRX, "'attn_config' nests the layer facts"),
    ],
)
def test_layers_the_counter_would_miscount_are_refused(config: dict[str, Any], words: str) -> None:
    with pytest.raises(WattgpuError) as err:
        catalog_row_from_hf_config(config, "t/m", "config.json")
    text = str(err.value)
    assert text.startswith("config.json: ") and words in text and "by hand" in text
    assert "\n" not in text


def test_softmax_only_attn_type_list_still_imports() -> None:
    row = catalog_row_from_hf_config(
        {**MINIMAX, "model_type": "minimax_m2", "attn_type_list": [1] * 8}, "t/m", "config.json"
    )
    assert row["attention_kind"] == "full"


def test_qwen3_next_interval_keeps_kv_on_every_fourth_layer() -> None:
    config = {
        **SMALL,
        "model_type": "qwen3_next",
        "full_attention_interval": 4,
        "linear_num_key_heads": 16,
        "linear_num_value_heads": 32,
        "linear_key_head_dim": 128,
        "linear_value_head_dim": 128,
        "linear_conv_kernel_dim": 4,
    }
    row = catalog_row_from_hf_config(config, "t/next", "config.json")
    listed = catalog_row_from_hf_config(
        {**config, "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 2},
        "t/next",
        "config.json",
    )
    assert row["attention_kind"] == "hybrid" and row["full_attention_layers"] == 2
    assert row["state_bytes_per_sequence"] > 0
    assert {k: v for k, v in row.items() if k != "source"} == {
        k: v for k, v in listed.items() if k != "source"
    }


NVIDIA_FP8 = (
    SHARED_DATA
    / "reference"
    / "llms"
    / "hf_configs"
    / ("nvidia--Llama-3.1-70B-Instruct-FP8_config.json")
)


@pytest.mark.skipif(not NVIDIA_FP8.is_file(), reason="needs ../shared's reference configs")
def test_a_quantised_id_without_quantization_config_takes_its_suffix_precision() -> None:
    import json

    raw = json.loads(Path(NVIDIA_FP8).read_text(encoding="utf-8"))
    assert "quantization_config" not in raw and raw["torch_dtype"] == "bfloat16"
    row = catalog_row_from_hf_config(raw, "myorg/Llama-3.1-70B-Instruct-FP8", "c.json")
    assert row["default_dtype"] == "fp8"
    assert "precision fp8 from the id's FP8 suffix" in row["source"]
    plain = catalog_row_from_hf_config(raw, "myorg/Llama-3.1-70B-Instruct", "c.json")
    assert plain["default_dtype"] == "bf16"
    nvfp4 = catalog_row_from_hf_config(raw, "myorg/Llama-3.1-70B-Instruct-NVFP4", "c.json")
    assert nvfp4["default_dtype"] == "fp4"
