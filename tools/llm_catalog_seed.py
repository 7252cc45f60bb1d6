# ruff: noqa: E501  (data table: one model per line)
"""Seed data for ``tools/build_llm_catalog.py``: which models, from which config, with which aliases.

Each entry names the catalog id (a Hugging Face repo id), where its config facts come from
(a verbatim config in ``reference/llms/hf_configs``, an MLC-LLM preset, a row of
``reference/llms/llm_arch_table.csv``, another entry with the same architecture, or config facts
written here by hand from the model's published ``config.json``), its aliases, and a published
parameter count with its source where one exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Entry:
    id: str
    src: tuple[str, Any]
    aliases: tuple[str, ...] = ()
    published: tuple[float, float | None, str] | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    note: str = ""


def hand(
    mt: str, layers: int, hidden: int, heads: int, kv: int, inter: int, vocab: int, max_pos: int,
    tie: bool, dtype: str, **extra: Any,
) -> tuple[str, dict[str, Any]]:  # fmt: skip
    """Config facts written by hand (HF key names) from the model's published config.json."""
    cfg = {
        "model_type": mt, "num_hidden_layers": layers, "hidden_size": hidden,
        "num_attention_heads": heads, "num_key_value_heads": kv, "intermediate_size": inter,
        "vocab_size": vocab, "max_position_embeddings": max_pos, "tie_word_embeddings": tie,
        "torch_dtype": dtype,
    }  # fmt: skip
    cfg.update(extra)
    return ("hand", cfg)


def E(mid: str, src: tuple[str, Any], aliases: str = "", pub: Any = None, note: str = "",
      **over: Any) -> Entry:  # fmt: skip
    return Entry(mid, src, tuple(a for a in aliases.split("|") if a), pub, over, note)


def HF(stem: str) -> tuple[str, str]:
    return ("hf", stem)


def MLC(name: str) -> tuple[str, str]:
    return ("mlc", name)


def ARCH(mid: str) -> tuple[str, str]:
    return ("arch", mid)


def AS(mid: str) -> tuple[str, str]:
    return ("as", mid)


CARD = "model card"
SAFE = "HF safetensors metadata"
L1_7 = hand("llama", 32, 4096, 32, 32, 11008, 32000, 2048, False, "float16")
L1_13 = hand("llama", 40, 5120, 40, 40, 13824, 32000, 2048, False, "float16")
L1_NOTE = "LLaMA-1 fine-tune: architecture of the LLaMA base it was tuned from"
PYTHIA12 = hand("gpt_neox", 36, 5120, 40, 40, 20480, 50688, 2048, False, "float16")
G35 = {"layer_types": ["sliding_attention"] * 5 + ["full_attention"]}  # gemma-3 5:1 pattern
OSS = {"layer_types": ["sliding_attention", "full_attention"]}
NEMO_H = "Mamba-2/attention hybrid: only some layers hold a KV cache (see LLMS.md)"
#: Nemotron Nano v2 layer patterns and Mamba-2 sizes (HF key names), recalled from the published
#: config.json files (not in ../shared): ``*`` attention, ``M`` Mamba-2, ``-`` MLP.
NANO9_MAMBA = {"hybrid_override_pattern": "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
               "mamba_num_heads": 128, "mamba_head_dim": 80, "ssm_state_size": 128, "n_groups": 8,
               "conv_kernel": 4}  # fmt: skip
NANO12_MAMBA = {
    **NANO9_MAMBA,
    "hybrid_override_pattern": "M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M-",
}

ENTRIES: list[Entry] = [
    # --- Llama 1 / 2 and LLaMA-1 fine-tunes (ML.ENERGY v1, Argonne) ---
    E("huggyllama/llama-7b", L1_7, "metaai/llama-7B|LLaMA-7B|llama-7b", (6.74, None, "LLaMA paper (6.7B)")),
    E("huggyllama/llama-13b", L1_13, "metaai/llama-13B|LLaMA-13B|llama-13b", (13.0, None, "LLaMA paper")),
    E("lmsys/vicuna-7b-v1.3", L1_7, "lmsys/vicuna-7B|vicuna-7b", note=L1_NOTE),
    E("lmsys/vicuna-13b-v1.3", L1_13, "lmsys/vicuna-13B|vicuna-13b", note=L1_NOTE),
    E("tatsu-lab/alpaca-7b-wdiff", L1_7, "tatsu-lab/alpaca-7B|alpaca-7b", note=L1_NOTE),
    E("BAIR/koala-7b", L1_7, "koala-7b", note="measurement name (weights published as diffs); " + L1_NOTE),
    E("BAIR/koala-13b", L1_13, "koala-13b", note="measurement name (weights published as diffs); " + L1_NOTE),
    E("camel-ai/CAMEL-13B-Combined-Data", L1_13, "", note=L1_NOTE),
    E("nomic-ai/gpt4all-13b-snoozy", L1_13, "", note=L1_NOTE),
    E("openaccess-ai-collective/manticore-13b-chat-pyg", L1_13, "", note=L1_NOTE),
    E("project-baize/baize-v2-7b", L1_7, "project-baize/baize-v2-7B", note=L1_NOTE),
    E("Neutralzz/BiLLa-7B-SFT", hand("llama", 32, 4096, 32, 32, 11008, 46943, 2048, False, "float16"),
      note="LLaMA-7B with an extended (Chinese) vocabulary of 46,943 tokens per its config"),
    E("h2oai/h2ogpt-gm-oasst1-en-2048-open-llama-7b-preview-300bt-v2", L1_7,
      "H2OAI/H2OGPT-oasst1-7B", note="OpenLLaMA-7B architecture (LLaMA-7B layout)"),
    E("Salesforce/xgen-7b-8k-inst", hand("llama", 32, 4096, 32, 32, 11008, 51200, 8192, False, "float32"), "xgen-7b-8k-inst"),
    E("meta-llama/Llama-2-7b-hf", MLC("llama2_7b"), "Llama-2-7B|LLaMA-2-7B|llama2-7b", (6.74, None, "Llama 2 paper"), max_position_embeddings=4096),
    E("meta-llama/Llama-2-7b-chat-hf", AS("meta-llama/Llama-2-7b-hf"), "metaai/Llama-2-7b-chat-hf|Llama-2-7b-chat|llama2-7b-chat", (6.74, None, "Llama 2 paper")),
    E("meta-llama/Llama-2-13b-hf", MLC("llama2_13b"), "Llama-2-13B|LLaMA-2-13B|llama2-13b", (13.0, None, "Llama 2 paper"), max_position_embeddings=4096),
    E("meta-llama/Llama-2-13b-chat-hf", AS("meta-llama/Llama-2-13b-hf"), "metaai/Llama-2-13b-chat-hf|Llama-2-13b-chat|llama2-13b-chat", (13.0, None, "Llama 2 paper")),
    E("meta-llama/Llama-2-70b-hf", MLC("llama2_70b"), "Llama-2-70B|LLaMA-2-70B|llama2-70b", (69.0, None, "Llama 2 paper (70B; 68.98B per safetensors)"), max_position_embeddings=4096),
    E("meta-llama/Llama-2-70b-chat-hf", AS("meta-llama/Llama-2-70b-hf"), "Llama-2-70b-chat|llama2-70b-chat"),
    E("codellama/CodeLlama-7b-hf", MLC("codellama_7b"), "CodeLlama-7B|codellama-7b"),
    E("codellama/CodeLlama-13b-hf", MLC("codellama_13b"), "CodeLlama-13B|codellama-13b"),
    E("codellama/CodeLlama-34b-hf", MLC("codellama_34b"), "CodeLlama-34B|codellama-34b"),
    E("codellama/CodeLlama-70b-hf", hand("llama", 80, 8192, 64, 8, 28672, 32016, 16384, False, "bfloat16"), "CodeLlama-70B|codellama-70b"),
    # --- Llama 3 / 3.1 / 3.2 / 3.3 / 4 ---
    E("meta-llama/Meta-Llama-3-8B", hand("llama", 32, 4096, 32, 8, 14336, 128256, 8192, False, "bfloat16"), "Llama-3-8B|LLaMA-3-8B|llama3-8b", (8.03, None, SAFE)),
    E("meta-llama/Meta-Llama-3-8B-Instruct", AS("meta-llama/Meta-Llama-3-8B"), "Llama-3-8B-Instruct|llama3-8b-instruct"),
    E("meta-llama/Meta-Llama-3-70B", hand("llama", 80, 8192, 64, 8, 28672, 128256, 8192, False, "bfloat16"), "Llama-3-70B|LLaMA-3-70B|llama3-70b", (70.6, None, SAFE)),
    E("meta-llama/Meta-Llama-3-70B-Instruct", AS("meta-llama/Meta-Llama-3-70B"), "Llama-3-70B-Instruct|llama3-70b-instruct"),
    E("meta-llama/Llama-3.1-8B", HF("meta-llama--Meta-Llama-3.1-8B"), "meta-llama/Meta-Llama-3.1-8B|Meta-Llama-3.1-8B|Llama-3.1-8B-base", (8.03, None, SAFE)),
    E("meta-llama/Llama-3.1-8B-Instruct", AS("meta-llama/Llama-3.1-8B"), "meta-llama/Meta-Llama-3.1-8B-Instruct|Llama-3.1-8B-Instruct|Meta-Llama-3.1-8B-Instruct|Llama-3.1-8B|llama3.1-8b-instruct", (8.03, None, SAFE)),
    E("meta-llama/Llama-3.1-70B", HF("meta-llama--Meta-Llama-3.1-70B"), "meta-llama/Meta-Llama-3.1-70B|Meta-Llama-3.1-70B|Llama-3.1-70B-base", (70.6, None, SAFE)),
    E("meta-llama/Llama-3.1-70B-Instruct", AS("meta-llama/Llama-3.1-70B"), "meta-llama/Meta-Llama-3.1-70B-Instruct|Llama-3.1-70B-Instruct|Meta-Llama-3.1-70B-Instruct|Llama-3.1-70B", (70.6, None, SAFE)),
    E("nvidia/Llama-3.1-70B-Instruct-FP8", AS("meta-llama/Llama-3.1-70B"), "Llama-3.1-70B-Instruct-FP8", default_dtype="fp8", note="NVIDIA ModelOpt FP8 checkpoint"),
    E("meta-llama/Llama-3.1-405B", HF("meta-llama--Meta-Llama-3.1-405B"), "meta-llama/Meta-Llama-3.1-405B|Meta-Llama-3.1-405B|Llama-3.1-405B-base", (405.9, None, SAFE)),
    E("meta-llama/Llama-3.1-405B-Instruct", AS("meta-llama/Llama-3.1-405B"), "meta-llama/Meta-Llama-3.1-405B-Instruct|Llama-3.1-405B-Instruct|Meta-Llama-3.1-405B-Instruct|Llama-3.1-405B", (405.9, None, SAFE)),
    E("meta-llama/Llama-3.1-405B-Instruct-FP8", AS("meta-llama/Llama-3.1-405B"), "meta-llama/Meta-Llama-3.1-405B-Instruct-FP8|Llama-3.1-405B-Instruct-FP8", (405.9, None, SAFE), default_dtype="fp8"),
    E("meta-llama/Llama-3.2-1B", MLC("llama3_2_1b"), "Llama-3.2-1B|llama3.2-1b", (1.24, None, SAFE)),
    E("meta-llama/Llama-3.2-1B-Instruct", AS("meta-llama/Llama-3.2-1B"), "Llama-3.2-1B-Instruct|llama3.2-1b-instruct", (1.24, None, SAFE)),
    E("meta-llama/Llama-3.2-3B", MLC("llama3_2_3b"), "Llama-3.2-3B|llama3.2-3b", (3.21, None, SAFE)),
    E("meta-llama/Llama-3.2-3B-Instruct", AS("meta-llama/Llama-3.2-3B"), "Llama-3.2-3B-Instruct|llama3.2-3b-instruct", (3.21, None, SAFE)),
    E("meta-llama/Llama-3.3-70B-Instruct", HF("meta-llama--Llama-3.3-70B-Instruct"), "Llama-3.3-70B-Instruct|Llama-3.3-70B|llama3.3-70b", (70.6, None, SAFE)),
    E("meta-llama/Llama-4-Scout-17B-16E-Instruct", HF("meta-llama--Llama-4-Scout-17B-16E-Instruct"), "Llama-4-Scout|Llama-4-Scout-17B-16E-Instruct|llama4-scout", (109.0, 17.0, "Meta Llama 4 model card (text+vision)")),
    E("meta-llama/Llama-4-Maverick-17B-128E-Instruct", HF("meta-llama--Llama-4-Maverick-17B-128E-Instruct"), "Llama-4-Maverick|Llama-4-Maverick-17B-128E-Instruct|llama4-maverick", (400.0, 17.0, "Meta Llama 4 model card (text+vision)")),
    E("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", AS("meta-llama/Llama-4-Maverick-17B-128E-Instruct"), "Llama-4-Maverick-FP8|Llama-4-Maverick-17B-128E-Instruct-FP8", (400.0, 17.0, "Meta Llama 4 model card"), default_dtype="fp8"),
    # --- Mistral / Mixtral ---
    E("mistralai/Mistral-7B-v0.1", MLC("mistral_7b"), "Mistral-7B|Mistral-7B-v0.1|mistral-7b", (7.24, None, SAFE), sliding_window=4096, torch_dtype="bfloat16"),
    E("mistralai/Mistral-7B-Instruct-v0.1", AS("mistralai/Mistral-7B-v0.1"), "Mistral-7B-Instruct-v0.1", (7.24, None, SAFE)),
    E("mistralai/Mistral-7B-v0.3", MLC("mistral_7b_v03"), "Mistral-7B-v0.3", (7.25, None, SAFE), sliding_window=None),
    E("mistralai/Mistral-7B-Instruct-v0.3", AS("mistralai/Mistral-7B-v0.3"), "Mistral-7B-Instruct-v0.3|mistral-7b-instruct", (7.25, None, SAFE)),
    E("mistralai/Mistral-Nemo-Instruct-2407", hand("mistral", 40, 5120, 32, 8, 14336, 131072, 1024000, False, "bfloat16", head_dim=128), "Mistral-Nemo|Mistral-Nemo-Instruct-2407", (12.2, None, SAFE)),
    E("mistralai/Mistral-Large-Instruct-2407", hand("mistral", 88, 12288, 96, 8, 28672, 32768, 131072, False, "bfloat16", head_dim=128), "Mistral-Large-2407|Mistral-Large-Instruct-2407", (123.0, None, CARD)),
    E("mistralai/Mistral-Small-Instruct-2409", ARCH("mistralai/Mistral-Small-Instruct-2409"), "Mistral-Small-2409", (22.2, None, SAFE)),
    E("mistralai/Mistral-Small-24B-Instruct-2501", ARCH("mistralai/Mistral-Small-24B-Instruct-2501"), "Mistral-Small-24B|Mistral-Small-24B-Instruct-2501", (23.6, None, SAFE)),
    E("mistralai/Mixtral-8x7B-v0.1", HF("mistralai--Mixtral-8x7B-v0.1"), "Mixtral-8x7B|Mixtral-8x7B-v0.1|mixtral-8x7b", (46.7, 12.9, "Mistral AI Mixtral announcement")),
    E("mistralai/Mixtral-8x7B-Instruct-v0.1", AS("mistralai/Mixtral-8x7B-v0.1"), "Mixtral-8x7B-Instruct|Mixtral-8x7B-Instruct-v0.1", (46.7, 12.9, "Mistral AI Mixtral announcement")),
    E("mistralai/Mixtral-8x22B-v0.1", HF("mistralai--Mixtral-8x22B-v0.1"), "Mixtral-8x22B|Mixtral-8x22B-v0.1", (141.0, 39.0, "Mistral AI Mixtral 8x22B announcement")),
    E("mistralai/Mixtral-8x22B-Instruct-v0.1", AS("mistralai/Mixtral-8x22B-v0.1"), "Mixtral-8x22B-Instruct|Mixtral-8x22B-Instruct-v0.1|mistralai/Mixtral-8x22B-Instruct-v0.1-pp1", (141.0, 39.0, "Mistral AI Mixtral 8x22B announcement")),
    E("mlabonne/AlphaMonarch-7B", ARCH("mlabonne/AlphaMonarch-7B"), "AlphaMonarch-7B", note="Mistral-7B-v0.1 merge"),
    E("mlabonne/NeuralBeagle14-7B", ARCH("mlabonne/NeuralBeagle14-7B"), "NeuralBeagle14-7B", note="Mistral-7B-v0.1 merge"),
    E("berkeley-nest/Starling-LM-7B-alpha", ARCH("berkeley-nest/Starling-LM-7B-alpha"), "Starling-LM-7B-alpha"),
    E("upstage/SOLAR-10.7B-Instruct-v1.0", ARCH("upstage/SOLAR-10.7B-Instruct-v1.0"), "SOLAR-10.7B", (10.7, None, CARD)),
    E("upstage/solar-pro-preview-instruct", ARCH("upstage/solar-pro-preview-instruct"), "solar-pro-preview", (22.1, None, CARD), note="model_type solar (Mistral-style layers)"),
    # --- Qwen ---
    E("Qwen/Qwen1.5-7B", hand("qwen2", 32, 4096, 32, 32, 11008, 151936, 32768, False, "bfloat16"), "Qwen1.5-7B", (7.72, None, SAFE)),
    E("Qwen/Qwen1.5-1.8B-Chat", ARCH("Qwen/Qwen1.5-1.8B-Chat"), "Qwen1.5-1.8B-Chat", (1.84, None, SAFE), torch_dtype="bfloat16", tie_word_embeddings=False, note="MLC preset marks the embeddings tied; the published 1.84B count and the Qwen1.5 config say untied"),
    E("Qwen/Qwen1.5-MoE-A2.7B-Chat", ARCH("Qwen/Qwen1.5-MoE-A2.7B-Chat"), "Qwen1.5-MoE-A2.7B", (14.3, 2.7, CARD), shared_expert_intermediate_size=5632),
    E("Qwen/Qwen2-0.5B", MLC("qwen2_0_5b"), "Qwen2-0.5B", (0.49, None, CARD)),
    E("Qwen/Qwen2-1.5B", MLC("qwen2_1_5b"), "Qwen2-1.5B", (1.54, None, CARD)),
    E("Qwen/Qwen2-7B", MLC("qwen2_7b"), "Qwen2-7B|qwen2-7b", (7.62, None, SAFE)),
    E("Qwen/Qwen2-72B", hand("qwen2", 80, 8192, 64, 8, 29568, 152064, 131072, False, "bfloat16"), "Qwen2-72B|qwen2-72b", (72.7, None, SAFE)),
    E("Qwen/Qwen2.5-0.5B-Instruct", ARCH("Qwen/Qwen2.5-0.5B-Instruct"), "Qwen2.5-0.5B-Instruct|qwen2.5-0.5b", (0.49, None, "Qwen2.5 model card")),
    E("Qwen/Qwen2.5-1.5B-Instruct", ARCH("Qwen/Qwen2.5-1.5B-Instruct"), "Qwen2.5-1.5B-Instruct|qwen2.5-1.5b", (1.54, None, "Qwen2.5 model card")),
    E("Qwen/Qwen2.5-3B-Instruct", ARCH("Qwen/Qwen2.5-3B-Instruct"), "Qwen2.5-3B-Instruct|qwen2.5-3b", (3.09, None, "Qwen2.5 model card")),
    E("Qwen/Qwen2.5-7B", ARCH("Qwen/Qwen2.5-7B-Instruct"), "Qwen2.5-7B", (7.61, None, "Qwen2.5 model card")),
    E("Qwen/Qwen2.5-7B-Instruct", ARCH("Qwen/Qwen2.5-7B-Instruct"), "Qwen2.5-7B-Instruct", (7.61, None, "Qwen2.5 model card")),
    E("Qwen/Qwen2.5-14B-Instruct", hand("qwen2", 48, 5120, 40, 8, 13824, 152064, 32768, False, "bfloat16"), "Qwen2.5-14B-Instruct|qwen2.5-14b", (14.7, None, "Qwen2.5 model card")),
    E("Qwen/Qwen2.5-32B-Instruct", hand("qwen2", 64, 5120, 40, 8, 27648, 152064, 32768, False, "bfloat16"), "Qwen2.5-32B-Instruct|qwen2.5-32b", (32.5, None, "Qwen2.5 model card")),
    E("Qwen/Qwen2.5-72B-Instruct", hand("qwen2", 80, 8192, 64, 8, 29568, 152064, 32768, False, "bfloat16"), "Qwen2.5-72B-Instruct|qwen2.5-72b", (72.7, None, "Qwen2.5 model card")),
    E("nvidia/AceMath-1.5B-Instruct", ARCH("nvidia/AceMath-1.5B-Instruct"), "AceMath-1.5B-Instruct"),
    E("nvidia/AceMath-7B-Instruct", ARCH("nvidia/AceMath-7B-Instruct"), "AceMath-7B-Instruct"),
    E("Qwen/Qwen3-0.6B", HF("Qwen--Qwen3-0.6B"), "Qwen3-0.6B|qwen3-0.6b", (0.6, None, "Qwen3 model card")),
    E("Qwen/Qwen3-1.7B", HF("Qwen--Qwen3-1.7B"), "Qwen3-1.7B|qwen3-1.7b", (1.7, None, "Qwen3 model card")),
    E("Qwen/Qwen3-4B", hand("qwen3", 36, 2560, 32, 8, 9728, 151936, 40960, True, "bfloat16", head_dim=128), "Qwen3-4B|qwen3-4b", (4.0, None, "Qwen3 model card")),
    E("Qwen/Qwen3-8B", HF("Qwen--Qwen3-8B"), "Qwen3-8B|qwen3-8b", (8.2, None, "Qwen3 model card")),
    E("Qwen/Qwen3-14B", ARCH("Qwen/Qwen3-14B"), "Qwen3-14B|qwen3-14b", (14.8, None, "Qwen3 model card")),
    E("Qwen/Qwen3-32B", HF("Qwen--Qwen3-32B"), "Qwen3-32B|qwen3-32b", (32.8, None, "Qwen3 model card")),
    E("Qwen/Qwen3-32B-FP8", HF("Qwen--Qwen3-32B-FP8"), "Qwen3-32B-FP8", (32.8, None, "Qwen3 model card")),
    E("nvidia/Qwen3-32B-NVFP4", AS("Qwen/Qwen3-32B"), "Qwen3-32B-NVFP4", default_dtype="fp4", note="NVIDIA ModelOpt NVFP4 checkpoint"),
    E("Qwen/Qwen3-30B-A3B", HF("Qwen--Qwen3-30B-A3B"), "Qwen3-30B-A3B|qwen3-30b-a3b", (30.5, 3.3, "Qwen3 model card")),
    E("Qwen/Qwen3-30B-A3B-FP8", HF("Qwen--Qwen3-30B-A3B-FP8"), "Qwen3-30B-A3B-FP8", (30.5, 3.3, "Qwen3 model card")),
    E("Qwen/Qwen3-30B-A3B-Instruct-2507", AS("Qwen/Qwen3-30B-A3B"), "Qwen3-30B-A3B-Instruct-2507", (30.5, 3.3, "Qwen3 model card")),
    E("Qwen/Qwen3-30B-A3B-Thinking-2507", AS("Qwen/Qwen3-30B-A3B"), "Qwen3-30B-A3B-Thinking-2507", (30.5, 3.3, "Qwen3 model card")),
    E("Qwen/Qwen3-Coder-30B-A3B-Instruct", AS("Qwen/Qwen3-30B-A3B"), "Qwen3-Coder-30B-A3B-Instruct", (30.5, 3.3, "Qwen3-Coder model card"), note="same layout as Qwen3-30B-A3B (context extended to 256K in the published config)"),
    E("Qwen/Qwen3-235B-A22B", HF("Qwen--Qwen3-235B-A22B"), "Qwen3-235B-A22B|qwen3-235b-a22b", (235.0, 22.0, "Qwen3 model card")),
    E("Qwen/Qwen3-235B-A22B-FP8", HF("Qwen--Qwen3-235B-A22B-FP8"), "Qwen3-235B-A22B-FP8", (235.0, 22.0, "Qwen3 model card")),
    E("nvidia/Qwen3-235B-A22B-NVFP4", HF("nvidia--Qwen3-235B-A22B-NVFP4"), "Qwen3-235B-A22B-NVFP4", (235.0, 22.0, "Qwen3 model card"), default_dtype="fp4"),
    E("Qwen/Qwen3-235B-A22B-Instruct-2507", AS("Qwen/Qwen3-235B-A22B"), "Qwen3-235B-A22B-Instruct-2507", (235.0, 22.0, "Qwen3 model card")),
    E("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", AS("Qwen/Qwen3-235B-A22B"), "Qwen3-235B-A22B-Instruct-2507-FP8", (235.0, 22.0, "Qwen3 model card"), default_dtype="fp8"),
    E("Qwen/Qwen3-235B-A22B-Thinking-2507", AS("Qwen/Qwen3-235B-A22B"), "Qwen3-235B-A22B-Thinking-2507", (235.0, 22.0, "Qwen3 model card")),
    E("Qwen/Qwen3-235B-A22B-Thinking-2507-FP8", AS("Qwen/Qwen3-235B-A22B"), "Qwen3-235B-A22B-Thinking-2507-FP8", (235.0, 22.0, "Qwen3 model card"), default_dtype="fp8"),
    E("Qwen/Qwen3-Coder-480B-A35B-Instruct", HF("Qwen--Qwen3-Coder-480B-A35B-Instruct"), "Qwen3-Coder-480B-A35B-Instruct|qwen3-coder-480b", (480.0, 35.0, "Qwen3-Coder model card")),
    E("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", AS("Qwen/Qwen3-Coder-480B-A35B-Instruct"), "Qwen3-Coder-480B-A35B-Instruct-FP8", (480.0, 35.0, "Qwen3-Coder model card"), default_dtype="fp8"),
    E("Qwen/Qwen3-VL-8B-Instruct", HF("Qwen--Qwen3-VL-8B-Instruct"), "Qwen3-VL-8B-Instruct", note="language model only (vision tower not counted)"),
    E("Qwen/Qwen3-VL-32B-Instruct", HF("Qwen--Qwen3-VL-32B-Instruct"), "Qwen3-VL-32B-Instruct", note="language model only (vision tower not counted)"),
    E("Qwen/Qwen3-VL-30B-A3B-Instruct", HF("Qwen--Qwen3-VL-30B-A3B-Instruct"), "Qwen3-VL-30B-A3B-Instruct", note="language model only (vision tower not counted)"),
    E("Qwen/Qwen3-VL-235B-A22B-Instruct", HF("Qwen--Qwen3-VL-235B-A22B-Instruct"), "Qwen3-VL-235B-A22B-Instruct", note="language model only (vision tower not counted)"),
    E("Qwen/Qwen3-VL-235B-A22B-Instruct-FP8", AS("Qwen/Qwen3-VL-235B-A22B-Instruct"), "Qwen3-VL-235B-A22B-Instruct-FP8", default_dtype="fp8", note="language model only (vision tower not counted)"),
    E("Qwen/Qwen3-Omni-30B-A3B-Instruct", AS("Qwen/Qwen3-30B-A3B"), "Qwen3-Omni-30B-A3B-Instruct", note="thinker LM assumed to share the Qwen3-30B-A3B layout; audio/vision encoders and talker not counted (not verified against its config)"),
    E("Qwen/Qwen3.5-397B-A17B", HF("Qwen--Qwen3.5-397B-A17B"), "Qwen3.5-397B-A17B", (397.0, 17.0, "model name (aiconfigurator config copy, not independently verified)"), intermediate_size=1024, note="counter not applicable (active -13 %): gated-DeltaNet linear attention on 3 of 4 layers: attention_kind hybrid"),
    # --- Gemma ---
    E("google/gemma-7b", hand("gemma", 28, 3072, 16, 16, 24576, 256000, 8192, True, "bfloat16", head_dim=256), "gemma-7b", (8.54, None, SAFE)),
    E("google/gemma-1.1-7b-it", AS("google/gemma-7b"), "gemma-1.1-7b-it", (8.54, None, SAFE)),
    E("google/gemma-2b", MLC("gemma_2b"), "gemma-2b", (2.51, None, SAFE)),
    E("google/codegemma-7b", AS("google/gemma-7b"), "codegemma-7b", (8.54, None, SAFE)),
    E("google/codegemma-1.1-2b", AS("google/gemma-2b"), "codegemma-1.1-2b", (2.51, None, SAFE)),
    E("google/gemma-2-2b", MLC("gemma2_2b"), "gemma-2-2b", (2.61, None, SAFE)),
    E("google/gemma-2-2b-it", MLC("gemma2_2b"), "gemma-2-2b-it|gemma2-2b-it", (2.61, None, SAFE)),
    E("google/gemma-2-9b", MLC("gemma2_9b"), "gemma-2-9b", (9.24, None, SAFE)),
    E("google/gemma-2-9b-it", MLC("gemma2_9b"), "gemma-2-9b-it|gemma2-9b-it", (9.24, None, SAFE)),
    E("google/gemma-2-27b", MLC("gemma2_27b"), "gemma-2-27b", (27.2, None, SAFE)),
    E("google/gemma-2-27b-it", MLC("gemma2_27b"), "gemma-2-27b-it|gemma2-27b-it", (27.2, None, SAFE)),
    E("google/gemma-3-1b-it", MLC("gemma3_1b_it"), "gemma-3-1b-it|gemma3-1b", (1.0, None, "Gemma 3 model card"), layer_types=G35["layer_types"]),
    E("google/gemma-3-4b-it", hand("gemma3", 34, 2560, 8, 4, 10240, 262208, 131072, True, "bfloat16", head_dim=256, sliding_window=1024, **G35), "gemma-3-4b-it|gemma3-4b", note="language model only (SigLIP vision tower ~0.4B not counted)"),
    E("google/gemma-3-12b-it", ARCH("google/gemma-3-12b-it"), "gemma-3-12b-it|gemma3-12b", head_dim=256, max_position_embeddings=131072, sliding_window=1024, torch_dtype="bfloat16", note="language model only (vision tower ~0.4B not counted)", **G35),
    E("google/gemma-3-27b-it", ARCH("google/gemma-3-27b-it"), "gemma-3-27b-it|gemma3-27b", head_dim=128, max_position_embeddings=131072, sliding_window=1024, torch_dtype="bfloat16", note="language model only (vision tower ~0.4B not counted)", **G35),
    # --- Phi ---
    E("microsoft/phi-1_5", MLC("phi-1_5"), "phi-1_5|phi-1.5", (1.42, None, SAFE), model_type="phi"),
    E("microsoft/phi-2", MLC("phi-2"), "phi-2", (2.78, None, SAFE), model_type="phi"),
    E("microsoft/Phi-3-mini-4k-instruct", ARCH("microsoft/Phi-3-mini-4k-instruct"), "Phi-3-mini-4k-instruct|phi-3-mini|phi3-mini", (3.82, None, SAFE)),
    E("microsoft/Phi-3-small-8k-instruct", hand("phi3small", 32, 4096, 32, 8, 14336, 100352, 8192, True, "bfloat16"), "Phi-3-small-8k-instruct|phi-3-small", (7.39, None, SAFE), note="blocksparse local attention on alternate layers not modelled (attention_kind full)"),
    E("microsoft/Phi-3-medium-4k-instruct", ARCH("microsoft/Phi-3-medium-4k-instruct"), "Phi-3-medium-4k-instruct|phi-3-medium", (14.0, None, SAFE)),
    E("microsoft/Phi-3.5-mini-instruct", MLC("phi-3_5"), "Phi-3.5-mini-instruct|phi-3.5-mini", (3.82, None, SAFE)),
    E("microsoft/Phi-3.5-MoE-instruct", hand("phimoe", 32, 4096, 32, 8, 6400, 32064, 131072, False, "bfloat16", num_local_experts=16, num_experts_per_tok=2), "Phi-3.5-MoE-instruct|phi-3.5-moe", (41.9, 6.6, CARD)),
    E("microsoft/Phi-tiny-MoE-instruct", ARCH("microsoft/Phi-tiny-MoE-instruct"), "Phi-tiny-MoE-instruct", (3.8, 1.1, CARD + " (active excludes embeddings)")),
    E("microsoft/phi-4", ARCH("microsoft/phi-4"), "phi-4|phi4", (14.7, None, SAFE)),
    E("microsoft/Phi-4-mini-instruct", MLC("phi-4"), "Phi-4-mini-instruct|phi-4-mini", (3.84, None, SAFE)),
    # --- gpt-oss, GPT-2, GPT-J, GPT-NeoX family ---
    E("openai/gpt-oss-20b", HF("openai--gpt-oss-20b"), "gpt-oss-20b|gpt-oss-20B", (20.9, 4.19, "OpenAI gpt-oss model card (3.61B active without the input embedding)")),
    E("unsloth/gpt-oss-20b-BF16", AS("openai/gpt-oss-20b"), "gpt-oss-20b-BF16", (20.9, 4.19, "OpenAI gpt-oss model card"), default_dtype="bf16"),
    E("openai/gpt-oss-120b", HF("openai--gpt-oss-120b"), "gpt-oss-120b|gpt-oss-120B", (116.8, 5.71, "OpenAI gpt-oss model card (5.13B active without the input embedding)")),
    E("openai-community/gpt2", MLC("gpt2"), "gpt2|GPT-2", (0.124, None, CARD), torch_dtype="float32"),
    E("EleutherAI/gpt-j-6b", MLC("gpt_j"), "gpt-j-6b|GPT-J-6B", (6.05, None, CARD), torch_dtype="float32"),
    E("EleutherAI/gpt-neox-20b", ARCH("EleutherAI/gpt-neox-20b"), "gpt-neox-20b", (20.6, None, "GPT-NeoX-20B paper")),
    E("OpenAssistant/oasst-sft-1-pythia-12b", PYTHIA12, "oasst-sft-1-pythia-12b", (11.8, None, "Pythia paper (pythia-12b)")),
    E("databricks/dolly-v2-12b", PYTHIA12, "databricks/dolly-v2-12B|dolly-v2-12b", (11.8, None, "Pythia paper (pythia-12b)")),
    E("togethercomputer/RedPajama-INCITE-7B-Chat", hand("gpt_neox", 32, 4096, 32, 32, 16384, 50432, 2048, False, "float16"), "RedPajama-INCITE-7B-Chat"),
    E("StabilityAI/stablelm-tuned-alpha-7b", hand("gpt_neox", 16, 6144, 48, 48, 24576, 50432, 4096, False, "float16"), "stabilityai/stablelm-tuned-alpha-7b|stablelm-tuned-alpha-7b"),
    E("bigscience/bloom-7b1", hand("bloom", 30, 4096, 32, 32, 16384, 250880, 2048, True, "float16"), "bloom-7b1", (7.07, None, CARD)),
    E("FreedomIntelligence/phoenix-inst-chat-7b", AS("bigscience/bloom-7b1"), "phoenix-inst-chat-7b", note="BLOOMZ-7b1-mt fine-tune: BLOOM-7b1 architecture"),
    E("facebook/opt-6.7b", hand("opt", 32, 4096, 32, 32, 16384, 50272, 2048, True, "float16"), "opt-6.7b", (6.7, None, "OPT paper")),
    E("facebook/opt-13b", hand("opt", 40, 5120, 40, 40, 20480, 50272, 2048, True, "float16"), "opt-13b", (13.0, None, "OPT paper")),
    E("lmsys/fastchat-t5-3b-v1.0", ("t5", None), "fastchat-t5-3b", (2.85, None, SAFE), note="encoder-decoder (Flan-T5-XL): 24 encoder + 24 decoder layers; layers/heads describe the decoder"),
    E("RWKV/rwkv-raven-7b", ("rwkv", None), "rwkv-raven-7b", (7.39, None, SAFE), note="RWKV-4 recurrent model: no attention, constant state"),
    # --- DeepSeek ---
    E("deepseek-ai/DeepSeek-V3", HF("deepseek-ai--DeepSeek-V3"), "DeepSeek-V3|deepseek-v3", (671.0, 37.0, "DeepSeek-V3 technical report (MTP module excluded)")),
    E("deepseek-ai/DeepSeek-V3-0324", AS("deepseek-ai/DeepSeek-V3"), "DeepSeek-V3-0324", (671.0, 37.0, "DeepSeek-V3 technical report")),
    E("deepseek-ai/DeepSeek-V3.1", AS("deepseek-ai/DeepSeek-V3"), "DeepSeek-V3.1|deepseek-v3.1", (671.0, 37.0, "DeepSeek-V3.1 model card")),
    E("nvidia/DeepSeek-V3.1-NVFP4", HF("nvidia--DeepSeek-V3.1-NVFP4"), "DeepSeek-V3.1-NVFP4", (671.0, 37.0, "DeepSeek-V3.1 model card"), default_dtype="fp4"),
    E("deepseek-ai/DeepSeek-R1", HF("deepseek-ai--DeepSeek-R1"), "DeepSeek-R1|deepseek-r1", (671.0, 37.0, "DeepSeek-R1 model card")),
    E("deepseek-ai/DeepSeek-R1-0528", AS("deepseek-ai/DeepSeek-R1"), "DeepSeek-R1-0528", (671.0, 37.0, "DeepSeek-R1 model card")),
    E("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", hand("qwen2", 28, 1536, 12, 2, 8960, 151936, 131072, False, "bfloat16"), "DeepSeek-R1-Distill-Qwen-1.5B|r1-distill-qwen-1.5b", (1.78, None, SAFE)),
    E("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", hand("qwen2", 28, 3584, 28, 4, 18944, 152064, 131072, False, "bfloat16"), "DeepSeek-R1-Distill-Qwen-7B|r1-distill-qwen-7b", (7.62, None, SAFE)),
    E("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", hand("qwen2", 48, 5120, 40, 8, 13824, 152064, 131072, False, "bfloat16"), "DeepSeek-R1-Distill-Qwen-14B|r1-distill-qwen-14b", (14.8, None, SAFE)),
    E("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", hand("qwen2", 64, 5120, 40, 8, 27648, 152064, 131072, False, "bfloat16"), "DeepSeek-R1-Distill-Qwen-32B|r1-distill-qwen-32b", (32.8, None, SAFE)),
    E("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", AS("meta-llama/Llama-3.1-8B"), "DeepSeek-R1-Distill-Llama-8B|r1-distill-llama-8b", (8.03, None, SAFE)),
    E("deepseek-ai/DeepSeek-R1-Distill-Llama-70B", AS("meta-llama/Llama-3.3-70B-Instruct"), "DeepSeek-R1-Distill-Llama-70B|r1-distill-llama-70b", (70.6, None, SAFE)),
    E("deepseek-ai/deepseek-llm-7b-chat", ARCH("deepseek-ai/deepseek-llm-7b-chat"), "deepseek-llm-7b-chat", (6.91, None, SAFE)),
    E("deepseek-ai/deepseek-moe-16b-base", ARCH("deepseek-ai/deepseek-moe-16b-base"), "deepseek-moe-16b", (16.4, 2.8, "DeepSeekMoE paper"), n_shared_experts=2, first_k_dense_replace=1),
    E("moonshotai/Kimi-K2-Instruct", HF("moonshotai--Kimi-K2-Instruct"), "Kimi-K2-Instruct|kimi-k2", note="model card rounds to 1T total / 32B active; counter value kept"),
    E("moonshotai/Kimi-K2.5", HF("moonshotai--Kimi-K2.5"), "Kimi-K2.5", note="aiconfigurator config copy (same layout as Kimi-K2)"),
    # --- recent MoE models measured by aiconfigurator (configs copied there; not independently verified) ---
    E("MiniMaxAI/MiniMax-M2.5", HF("MiniMaxAI--MiniMax-M2.5"), "MiniMax-M2.5", note="aiconfigurator config copy; not independently verified"),
    E("zai-org/GLM-5", HF("zai-org--GLM-5"), "zhipuai/GLM-5|GLM-5", note="aiconfigurator config copy; not independently verified"),
    # --- OLMo, Granite, Falcon, SmolLM, InternLM, Yi, others ---
    E("allenai/OLMo-2-1124-7B-Instruct", ARCH("allenai/OLMo-2-1124-7B-Instruct"), "OLMo-2-1124-7B-Instruct|olmo-2-7b", (7.3, None, SAFE)),
    E("allenai/OLMo-2-1124-13B-Instruct", ARCH("allenai/OLMo-2-1124-13B-Instruct"), "OLMo-2-1124-13B-Instruct|olmo-2-13b", (13.7, None, SAFE)),
    E("allenai/OLMo-2-0325-32B-Instruct", MLC("olmo2_32b"), "OLMo-2-0325-32B-Instruct|olmo-2-32b", (32.2, None, SAFE), torch_dtype="bfloat16"),
    E("allenai/OLMoE-1B-7B-0924", ARCH("allenai/OLMoE-1B-7B-0924"), "OLMoE-1B-7B-0924|olmoe-1b-7b", (6.92, 1.28, "OLMoE paper")),
    E("ibm-granite/granite-3.0-2b-instruct", ARCH("ibm-granite/granite-3.0-2b-instruct"), "granite-3.0-2b-instruct"),
    E("ibm-granite/granite-3.0-8b-instruct", ARCH("ibm-granite/granite-3.0-8b-instruct"), "granite-3.0-8b-instruct", (8.17, None, SAFE)),
    E("ibm-granite/granite-3.1-8b-instruct", AS("ibm-granite/granite-3.0-8b-instruct"), "granite-3.1-8b-instruct", (8.17, None, SAFE), max_position_embeddings=131072),
    E("ibm-granite/granite-3.1-3b-a800m-instruct", ARCH("ibm-granite/granite-3.1-3b-a800m-instruct"), "granite-3.1-3b-a800m-instruct", (3.3, 0.8, CARD + " (active excludes embeddings)")),
    E("tiiuae/falcon-7b", hand("falcon", 32, 4544, 71, 1, 18176, 65024, 2048, True, "bfloat16", multi_query=True), "falcon-7b", note="tie_word_embeddings per transformers FalconConfig default (true)"),
    E("tiiuae/falcon-40b", hand("falcon", 60, 8192, 128, 8, 32768, 65024, 2048, True, "bfloat16"), "falcon-40b", (41.8, None, SAFE)),
    E("tiiuae/Falcon3-3B-Instruct", ARCH("tiiuae/Falcon3-3B-Instruct"), "Falcon3-3B-Instruct", (3.23, None, SAFE)),
    E("tiiuae/Falcon3-7B-Instruct", hand("llama", 28, 3072, 12, 4, 23040, 131072, 32768, False, "bfloat16", head_dim=256), "Falcon3-7B-Instruct", (7.46, None, SAFE)),
    E("tiiuae/Falcon3-Mamba-7B-Instruct", ("mamba", None), "Falcon3-Mamba-7B-Instruct", (7.27, None, SAFE), note="pure Mamba: no attention, constant state"),
    E("HuggingFaceTB/SmolLM2-135M-Instruct", MLC("smollm2_135m"), "SmolLM2-135M-Instruct|smollm2-135m", (0.135, None, CARD)),
    E("HuggingFaceTB/SmolLM2-360M-Instruct", MLC("smollm2_360m"), "SmolLM2-360M-Instruct|smollm2-360m", (0.362, None, CARD)),
    E("HuggingFaceTB/SmolLM2-1.7B-Instruct", ARCH("HuggingFaceTB/SmolLM2-1.7B-Instruct"), "SmolLM2-1.7B-Instruct|smollm2-1.7b", (1.71, None, CARD)),
    E("HuggingFaceTB/SmolLM-1.7B-Instruct", MLC("smollm_1_7b"), "SmolLM-1.7B-Instruct|smollm-1.7b"),
    E("TinyLlama/TinyLlama-1.1B-Chat-v1.0", MLC("tinyllama_1b_chat_v1.0"), "TinyLlama-1.1B-Chat|tinyllama-1.1b", (1.1, None, CARD)),
    E("internlm/internlm2-7b", ARCH("internlm/internlm2-7b"), "internlm2-7b", (7.74, None, SAFE)),
    E("internlm/internlm2_5-20b-chat", ARCH("internlm/internlm2_5-20b-chat"), "internlm2_5-20b-chat", (19.9, None, SAFE)),
    E("01-ai/Yi-1.5-6B-Chat", ARCH("01-ai/Yi-1.5-6B-Chat"), "Yi-1.5-6B-Chat", (6.06, None, SAFE)),
    E("01-ai/Yi-1.5-9B-Chat", ARCH("01-ai/Yi-1.5-9B-Chat"), "Yi-1.5-9B-Chat", (8.83, None, SAFE)),
    E("BAAI/Aquila-7B", hand("aquila", 32, 4096, 32, 32, 11008, 100008, 2048, False, "float16"), "Aquila-7B", note="LLaMA-style layout (model_type aquila)"),
    E("Deci/DeciLM-7B", hand("deci", 32, 4096, 32, 4, 14336, 32000, 8192, False, "bfloat16"), "DeciLM-7B", (7.04, None, CARD), note="variable GQA per layer (4/2/1 KV heads); num_kv_heads shows the largest"),
    E("bigcode/starcoder2-3b", hand("starcoder2", 30, 3072, 24, 2, 12288, 49152, 16384, True, "bfloat16", sliding_window=4096), "starcoder2-3b", (3.03, None, SAFE)),
    E("bigcode/starcoder2-7b", hand("starcoder2", 32, 4608, 36, 4, 18432, 49152, 16384, True, "bfloat16", sliding_window=4096), "starcoder2-7b", (7.17, None, SAFE)),
    E("bigcode/starcoder2-15b", hand("starcoder2", 40, 6144, 48, 4, 24576, 49152, 16384, False, "bfloat16", sliding_window=4096), "starcoder2-15b", (15.96, None, SAFE)),
    # --- Nemotron ---
    E("nvidia/Nemotron-Mini-4B-Instruct", ARCH("nvidia/Nemotron-Mini-4B-Instruct"), "Nemotron-Mini-4B-Instruct", (4.19, None, SAFE), model_type="nemotron", note="non-gated squared-ReLU MLP"),
    E("nvidia/Llama-3.1-Minitron-4B-Width-Base", ARCH("nvidia/Llama-3.1-Minitron-4B-Width-Base"), "Llama-3.1-Minitron-4B-Width-Base", (4.51, None, SAFE)),
    E("nvidia/Mistral-NeMo-Minitron-8B-Instruct", ARCH("nvidia/Mistral-NeMo-Minitron-8B-Instruct"), "Mistral-NeMo-Minitron-8B-Instruct", (8.41, None, SAFE)),
    E("nvidia/Llama-3.1-Nemotron-70B-Instruct-HF", AS("meta-llama/Llama-3.1-70B"), "Llama-3.1-Nemotron-70B-Instruct", (70.6, None, SAFE)),
    E("nvidia/NVIDIA-Nemotron-Nano-9B-v2", ("nemotron_h", (56, 4480, 40, 8, 128, 15680, 131072, 131072, NANO9_MAMBA)), "NVIDIA-Nemotron-Nano-9B-v2|nemotron-nano-9b-v2", (8.89, None, SAFE), note=NEMO_H + "; 4 of 56 layers are attention and 27 Mamba-2 (pattern and Mamba sizes recalled from the published config)"),
    E("nvidia/NVIDIA-Nemotron-Nano-12B-v2", ("nemotron_h", (62, 5120, 40, 8, 128, 20480, 131072, 131072, NANO12_MAMBA)), "NVIDIA-Nemotron-Nano-12B-v2|nemotron-nano-12b-v2", (12.3, None, SAFE), note=NEMO_H + "; 6 of 62 layers are attention and 28 Mamba-2 (pattern and Mamba sizes recalled from the published config)"),
    E("nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16", ("nemotron_h", (62, 5120, 40, 8, 128, 20480, 131072, 131072, NANO12_MAMBA)), "NVIDIA-Nemotron-Nano-12B-v2-VL", (12.3, None, "language model of Nemotron-Nano-12B-v2"), note=NEMO_H + "; vision encoder not counted; layer pattern of Nemotron-Nano-12B-v2 (recalled)"),
    E("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", ("nemotron_h_moe", None), "NVIDIA-Nemotron-3-Nano-30B-A3B|nemotron-3-nano-30b-a3b", (30.0, 3.5, "wattgpu model_features.csv (maufadel/wattgpu)"), note=NEMO_H + "; layer pattern and Mamba sizes: hf_configs/nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16_config.json"),
]  # fmt: skip
