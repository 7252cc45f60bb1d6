"""The parameter counter against published parameter counts, and the bundled LLM catalog."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from predictors.catalog.hf_config import LLM_COLUMNS, arch_spec_from_hf_config
from predictors.catalog.llm_params import ArchSpec, count_params

CATALOG = Path(__file__).resolve().parent.parent / "catalogs" / "llms.csv"


def _llama(
    layers: int,
    hidden: int,
    heads: int,
    kv: int,
    inter: int,
    vocab: int,
    *,
    head_dim: int | None = None,
    tie: bool = False,
    **kw: Any,
) -> ArchSpec:
    return ArchSpec(
        num_layers=layers, hidden_size=hidden, num_attention_heads=heads, num_kv_heads=kv,
        head_dim=head_dim or hidden // heads, intermediate_size=inter,
        vocab_size=vocab, tie_word_embeddings=tie, **kw,
    )  # fmt: skip


# ruff: noqa: E501 (table below, one model per entry)
# (name, spec, published total B, published active B or None, source of the published number)
PUBLISHED = [
    ("Llama-3.1-8B", _llama(32, 4096, 32, 8, 14336, 128256), 8.03, None, "HF safetensors: 8.03B"),
    ("Llama-3.1-70B", _llama(80, 8192, 64, 8, 28672, 128256), 70.6, None, "HF safetensors: 70.6B"),
    ("Llama-2-7B", _llama(32, 4096, 32, 32, 11008, 32000), 6.74, None, "Llama 2 paper: 6.7B (6.74B)"),
    ("Mistral-7B-v0.1", _llama(32, 4096, 32, 8, 14336, 32000), 7.24, None, "HF safetensors: 7.24B"),
    ("Qwen2.5-7B", _llama(28, 3584, 28, 4, 18944, 152064, attention_bias=True), 7.61, None,
     "Qwen2.5 model card: 7.61B"),
    ("gemma-2-9b", _llama(42, 3584, 16, 8, 14336, 256000, head_dim=256, tie=True), 9.24, None,
     "HF safetensors: 9.24B"),
    ("Phi-3-mini", _llama(32, 3072, 32, 32, 8192, 32064), 3.82, None, "Phi-3 report: 3.8B (3.82B)"),
    ("gpt2", _llama(12, 768, 12, 12, 3072, 50257, tie=True, mlp_gated=False, attention_bias=True,
                    mlp_bias=True, norm_with_bias=True), 0.124, None, "GPT-2 card: 124M (+1M positions)"),
    ("Mixtral-8x7B", _llama(32, 4096, 32, 8, 14336, 32000, num_experts=8, num_experts_per_tok=2,
                            moe_intermediate_size=14336), 46.7, 12.9, "Mistral AI blog: 46.7B / 12.9B"),
    ("Qwen3-30B-A3B", _llama(48, 2048, 32, 4, 6144, 151936, head_dim=128, num_experts=128,
                             num_experts_per_tok=8, moe_intermediate_size=768), 30.5, 3.3,
     "Qwen3 model card: 30.5B / 3.3B"),
    ("DeepSeek-V3", _llama(61, 7168, 128, 128, 18432, 129280, num_experts=256, num_experts_per_tok=8,
                           moe_intermediate_size=2048, num_shared_experts=1, first_k_dense=3,
                           kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64,
                           qk_nope_head_dim=128, v_head_dim=128), 671.0, 37.0,
     "DeepSeek-V3 report: 671B / 37B (MTP module excluded)"),
    ("Llama-4-Maverick", _llama(48, 5120, 40, 8, 16384, 202048, head_dim=128, num_experts=128,
                                num_experts_per_tok=1, moe_intermediate_size=8192,
                                num_shared_experts=1, moe_layer_step=2), 400.0, 17.0,
     "Meta Llama 4 card: 400B / 17B"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "spec", "total", "active", "source"), PUBLISHED)
def test_counter_matches_published_counts(
    name: str, spec: ArchSpec, total: float, active: float | None, source: str
) -> None:
    counted = count_params(spec)
    assert counted.total_b == pytest.approx(total, rel=0.02), f"{name} total vs {source}"
    if active is None:
        assert counted.active_b == pytest.approx(counted.total_b)
    else:
        assert counted.active_b == pytest.approx(active, rel=0.02), f"{name} active vs {source}"


def test_gpt_oss_120b_matches_openai_card() -> None:
    """OpenAI gpt-oss card: 116.8B total, 5.13B active (active excludes the input embedding)."""
    raw = {
        "model_type": "gpt_oss", "num_hidden_layers": 36, "hidden_size": 2880,
        "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
        "intermediate_size": 2880, "num_local_experts": 128, "num_experts_per_tok": 4,
        "vocab_size": 201088, "tie_word_embeddings": False,
    }  # fmt: skip
    counted = count_params(arch_spec_from_hf_config(raw, "gpt-oss.json"))
    assert counted.total_b == pytest.approx(116.8, rel=0.02)
    assert counted.active_b - counted.input_embedding_b == pytest.approx(5.13, rel=0.02)


def test_tied_embeddings_count_once_and_gated_mlp_has_three_matrices() -> None:
    untied = count_params(_llama(2, 64, 4, 4, 128, 1000))
    tied = count_params(_llama(2, 64, 4, 4, 128, 1000, tie=True))
    assert (untied.total_b - tied.total_b) * 1e9 == pytest.approx(64 * 1000)
    plain = count_params(_llama(2, 64, 4, 4, 128, 1000, mlp_gated=False))
    assert (untied.total_b - plain.total_b) * 1e9 == pytest.approx(2 * 64 * 128)


def test_first_k_dense_layers_are_not_moe() -> None:
    base: dict[str, Any] = dict(num_experts=4, num_experts_per_tok=1, moe_intermediate_size=32)
    all_moe = count_params(_llama(4, 64, 4, 4, 256, 100, **base))
    one_dense = count_params(_llama(4, 64, 4, 4, 256, 100, first_k_dense=1, **base))
    dense_mlp, moe = 3 * 64 * 256, 4 * 3 * 64 * 32 + 4 * 64
    assert (one_dense.total_b - all_moe.total_b) * 1e9 == pytest.approx(dense_mlp - moe)


def _catalog_rows() -> list[dict[str, str]]:
    with CATALOG.open(newline="") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames or ()) == LLM_COLUMNS
        return list(reader)


def test_bundled_llm_catalog_is_complete() -> None:
    rows = _catalog_rows()
    assert len(rows) >= 120
    names = {n.casefold() for r in rows for n in [r["id"], *r["aliases"].split("|")] if n}
    for spelling in (
        "lmsys/vicuna-7B", "metaai/Llama-2-7b-chat-hf", "meta-llama/Meta-Llama-3.1-8B-Instruct",
        "mistralai/Mixtral-8x22B-Instruct-v0.1-pp1", "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",
        "Llama-3.1-8B", "zhipuai/GLM-5", "meta-llama/Llama-2-70b-hf", "Deci/DeciLM-7B",
        "openai/gpt-oss-120b", "deepseek-ai/DeepSeek-R1-0528", "LLaMA-2-7B", "Mixtral-8x7B",
    ):  # fmt: skip
        assert spelling.casefold() in names, spelling
    by_id = {r["id"]: r for r in rows}
    assert by_id["meta-llama/Llama-3.1-405B-Instruct-FP8"]["default_dtype"] == "fp8"
    assert by_id["deepseek-ai/DeepSeek-V3"]["attention_kind"] == "mla"
    assert by_id["deepseek-ai/DeepSeek-V3"]["kv_lora_rank"] == "512"
    assert by_id["google/gemma-2-9b-it"]["attention_kind"] == "hybrid"
    assert by_id["openai/gpt-oss-20b"]["attention_kind"] == "hybrid"
    assert by_id["mistralai/Mistral-7B-v0.1"]["attention_kind"] == "sliding"
    assert by_id["meta-llama/Llama-3.1-8B"]["attention_kind"] == "full"
    for row in rows:
        if row["is_moe"] == "false":
            assert row["active_params_b"] == row["total_params_b"], row["id"]
