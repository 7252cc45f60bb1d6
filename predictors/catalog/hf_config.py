"""Normalise a raw Hugging Face ``config.json`` dict into a row of ``catalogs/llms.csv``.

Handles the key spellings of Llama, Mistral, Mixtral, Qwen2/2.5/3 (dense and MoE), Gemma 2/3
(including the ``text_config`` nesting of multimodal checkpoints), Phi-2/3/4, DeepSeek-V2/V3
(multi-head latent attention), gpt-oss, Llama 4, Falcon and GPT-2/GPT-NeoX style configs, and
Nemotron-H Mamba-2 / attention hybrids (counted block by block, :mod:`predictors.catalog.
hybrid_params`). A fact that is needed but absent raises :class:`WattgpuError` naming the key and
the file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from predictors.catalog.hf_keys import HfConfig, opt_bool
from predictors.catalog.hf_quant import quantised_dtype
from predictors.catalog.hf_unread import (
    interval_layer_types,
    refuse_layer_types_length,
    refuse_miscounted_moe,
    refuse_unread,
)
from predictors.catalog.hybrid_params import hybrid_facts, hybrid_pattern
from predictors.catalog.kv_layers import KV_LAYER_COLUMNS, kv_layer_facts
from predictors.catalog.llm_params import ArchSpec, catalog_params_b, count_params
from predictors.catalog.quantised import split_scheme
from predictors.core.errors import WattgpuError
from predictors.core.escape import short_repr

#: What a catalog model id looks like: ORG/NAME as on the Hugging Face Hub.
MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")

#: Column order of ``catalogs/llms.csv`` (the fixed data contract).
LLM_COLUMNS: tuple[str, ...] = (
    "id", "aliases", "family", "model_type", "total_params_b", "active_params_b", "num_layers",
    "hidden_size", "num_attention_heads", "num_kv_heads", "head_dim", "intermediate_size",
    "moe_intermediate_size", "num_experts", "num_experts_per_tok", "num_shared_experts",
    "first_k_dense", "kv_lora_rank", "qk_rope_head_dim", "vocab_size", "max_position_embeddings",
    "default_dtype", "is_moe", "attention_kind", "sliding_window", "tie_word_embeddings", "source",
    *KV_LAYER_COLUMNS,
)  # fmt: skip

#: Model types whose MLP is a plain up/down projection (2 matrices), not gated (3).
NON_GATED_MLP = frozenset(
    {"gpt2", "gpt_neox", "falcon", "RefinedWeb", "RefinedWebModel", "phi", "opt", "bloom", "gptj",
     "gpt_bigcode", "starcoder2", "codegen", "mpt", "nemotron"}
)  # fmt: skip
_LAYERNORM_BIAS = (NON_GATED_MLP - {"nemotron"}) | {"stablelm"}
_QKV_BIAS = frozenset(
    {"qwen2", "qwen2_moe", "qwen2_vl", "gpt2", "gpt_neox", "phi", "opt", "bloom", "starcoder2",
     "gpt_bigcode", "codegen"}
)  # fmt: skip
_PARALLEL_BLOCK = frozenset({"gptj", "phi", "falcon", "RefinedWeb", "RefinedWebModel", "gpt_neox"})
#: ``tie_word_embeddings`` default of the transformers config class, used when the key is absent.
_TIE_DEFAULT = {
    "llama": False, "mistral": False, "mixtral": False, "qwen2": False, "qwen2_moe": False,
    "qwen3": False, "qwen3_moe": False, "gemma": True, "gemma2": True, "gemma3": True,
    "gemma3_text": True, "phi3": False, "phi": False, "gpt2": True, "gpt_neox": False,
    "falcon": True, "RefinedWeb": True, "RefinedWebModel": True, "deepseek_v2": False,
    "deepseek_v3": False, "gpt_oss": False, "llama4": False, "llama4_text": False, "opt": True,
    "bloom": True, "gptj": False, "starcoder2": True, "olmo": False, "olmo2": False,
    "granite": True, "granitemoe": True, "phimoe": False, "cohere": True, "internlm2": False,
    "nemotron": False, "stablelm": False, "gpt_bigcode": True,
}  # fmt: skip
_HYBRID_TYPES = frozenset({"gemma2", "gemma3", "gemma3_text", "cohere2", "llama4", "llama4_text"})
_DTYPES = {
    "float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "half": "fp16", "float": "fp32",
    "fp32": "fp32", "fp16": "fp16", "bf16": "bf16", "float8_e4m3fn": "fp8",
}  # fmt: skip

_FAMILIES: tuple[tuple[str, str], ...] = (
    (r"deepseek-r1-distill", "deepseek-r1-distill"), (r"deepseek-r1", "deepseek-r1"),
    (r"deepseek-v3", "deepseek-v3"), (r"deepseek-v2", "deepseek-v2"), (r"deepseek", "deepseek"),
    (r"codellama", "code-llama"), (r"llama-4", "llama-4"), (r"llama-3\.3", "llama-3.3"),
    (r"llama-3\.2", "llama-3.2"), (r"llama-3\.1", "llama-3.1"), (r"llama-3", "llama-3"),
    (r"llama-2", "llama-2"), (r"minitron", "nemotron"), (r"nemotron", "nemotron"),
    (r"qwen3", "qwen3"), (r"qwen2\.5", "qwen2.5"), (r"qwen2", "qwen2"), (r"qwen1\.5", "qwen1.5"),
    (r"codegemma", "codegemma"), (r"gemma-3", "gemma-3"), (r"gemma-2", "gemma-2"),
    (r"gemma", "gemma"), (r"mixtral", "mixtral"), (r"mistral|ministral", "mistral"),
    (r"phi-4", "phi-4"), (r"phi-3", "phi-3"), (r"phi-2|phi-1", "phi"), (r"gpt-oss", "gpt-oss"),
    (r"olmoe", "olmoe"), (r"olmo", "olmo"), (r"granite", "granite"), (r"falcon", "falcon"),
    (r"smollm", "smollm"), (r"starcoder", "starcoder"), (r"vicuna", "vicuna"),
    (r"kimi", "kimi"), (r"glm", "glm"), (r"minimax", "minimax"), (r"yi-", "yi"),
)  # fmt: skip


def family_from_id(model_id: str, model_type: str) -> str:
    """Guess a model family from the repo id (falls back to the config's model_type)."""
    low = model_id.lower()
    for pattern, family in _FAMILIES:
        if re.search(pattern, low):
            return family
    return model_type


def _kv_heads(cfg: HfConfig, heads: int) -> int:
    value = cfg.opt_int("num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num")
    if value is not None:
        return value
    if opt_bool(cfg, "multi_query") is True:
        return 1
    return heads  # transformers' documented default: multi-head attention


def _dtype(cfg: HfConfig) -> str:
    quant = cfg.get("quantization_config")
    if quant is not None:
        return quantised_dtype(quant, cfg.source)
    value = cfg.get("torch_dtype", "dtype")
    if value is None:
        raise WattgpuError(
            f'{cfg.source}: config has no \'torch_dtype\'; add e.g. "torch_dtype": "bfloat16"'
        )
    dtype = _DTYPES.get(str(value).lower())
    if dtype is None:
        raise WattgpuError(f"{cfg.source}: unknown torch_dtype {value!r}; use bfloat16 or float16")
    return dtype


def _attention_kind(cfg: HfConfig, num_layers: int, max_pos: int) -> tuple[str, int | None]:
    if cfg.get("kv_lora_rank"):
        return "mla", None
    if cfg.get("hybrid_override_pattern"):  # Mamba-2 / attention hybrid (Nemotron-H)
        return "hybrid", None
    window = cfg.opt_int("sliding_window", "attention_chunk_size")
    layer_types = cfg.get("layer_types")
    if isinstance(layer_types, list) and layer_types:
        kinds = {str(t) for t in layer_types}
        local = {k for k in kinds if "sliding" in k or "chunked" in k or "linear" in k}
        if local and len(local) < len(kinds):
            return "hybrid", window if any("linear" not in k for k in local) else None
        if local and window:
            return "sliding", window
        return "full", None
    if cfg.model_type in _HYBRID_TYPES or cfg.get("sliding_window_pattern", "no_rope_layers"):
        if window:
            return "hybrid", window
    if opt_bool(cfg, "use_sliding_window") is False or not window or window >= max_pos:
        return "full", None
    max_window_layers = cfg.opt_int("max_window_layers")
    if max_window_layers is not None and max_window_layers < num_layers:
        return "hybrid", window
    return "sliding", window


def _checkpoint_dtype(cfg: HfConfig, model_id: str) -> tuple[str, str]:
    """(default_dtype, a note for the source column): config.json's precision, or where it
    states 16 or 32 bits without a ``quantization_config`` and the id names a quantised
    checkpoint (``…-FP8``, ``…-NVFP4``: NVIDIA's ModelOpt keeps the scheme in
    ``hf_quant_config.json``), the precision the id's suffix implies, as the predictors read
    such an id (:mod:`predictors.catalog.quantised`)."""
    dtype = _dtype(cfg)
    scheme = split_scheme(model_id)
    if cfg.get("quantization_config") is not None or scheme is None:
        return dtype, ""
    if dtype not in ("bf16", "fp16", "fp32"):
        return dtype, ""
    _, written, implied = scheme
    return implied, (
        f"; precision {implied} from the id's {written} suffix, config.json states {dtype} "
        "without a quantization_config"
    )


def _tie(cfg: HfConfig) -> bool:
    value = opt_bool(cfg, "tie_word_embeddings")
    if value is not None:
        return value
    text_type = str(cfg.raw.get("model_type", ""))
    for key in (cfg.model_type, text_type):
        if key in _TIE_DEFAULT:
            return _TIE_DEFAULT[key]
    raise WattgpuError(
        f"{cfg.source}: config has no 'tie_word_embeddings' and model_type "
        f'{cfg.model_type!r} has no known default; add "tie_word_embeddings": true or false'
    )


def arch_spec_from_hf_config(raw: Mapping[str, Any], source: str) -> ArchSpec:
    """The :class:`ArchSpec` (inputs of the parameter counter) of a raw config dict."""
    cfg = HfConfig(raw, source)
    return _spec(cfg)


#: Config keys of the number of routed experts each token uses.
_TOP_K_KEYS = ("num_experts_per_tok", "experts_per_token", "moe_top_k", "moe_topk")


def _top_k(cfg: HfConfig) -> int:
    """Routed experts per token of an MoE config: required (without it the active parameters
    would be the attention alone)."""
    if cfg.get(*_TOP_K_KEYS) is None:
        raise WattgpuError(
            f"{cfg.source}: an MoE config (it names its experts) has no 'num_experts_per_tok' "
            f"(nor {', '.join(repr(k) for k in _TOP_K_KEYS[1:])}); add the number of experts "
            'each token is routed to, e.g. "num_experts_per_tok": 2'
        )
    return cfg.need_int(*_TOP_K_KEYS)


def _spec(cfg: HfConfig) -> ArchSpec:
    refuse_unread(cfg)
    refuse_miscounted_moe(cfg)
    mt = cfg.model_type
    hidden = cfg.need_int("hidden_size", "n_embd", "d_model", "dim")
    heads = cfg.need_int("num_attention_heads", "n_head", "n_heads", "num_heads")
    experts = cfg.opt_int("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
    experts = experts or None
    gated = mt not in NON_GATED_MLP
    if mt in NON_GATED_MLP:
        inter = cfg.opt_int("intermediate_size", "n_inner", "ffn_hidden_size") or 4 * hidden
    else:
        inter = cfg.need_int(
            "intermediate_size_mlp", "intermediate_size", "ff_intermediate_size", "ffn_hidden_size"
        )
    moe_inter = None
    shared = 0
    shared_width = None
    if experts:
        moe_inter = cfg.opt_int("moe_intermediate_size") or cfg.need_int("intermediate_size")
        shared = cfg.opt_int("n_shared_experts", "num_shared_experts") or 0
        shared_width = cfg.opt_int("shared_expert_intermediate_size", "shared_intermediate_size")
        if shared_width and not shared:
            shared = 1
        if mt.startswith("llama4"):
            shared, shared_width = 1, moe_inter
    nope = cfg.opt_int("qk_nope_head_dim")
    rope = cfg.opt_int("qk_rope_head_dim")
    head_dim = cfg.opt_int("head_dim")
    if head_dim is None:
        head_dim = (nope + rope) if (nope and rope) else hidden // heads
    bias = opt_bool(cfg, "attention_bias", "qkv_bias", "bias")
    return ArchSpec(
        num_layers=cfg.need_int("num_hidden_layers", "n_layer", "num_layers", "n_layers"),
        hidden_size=hidden,
        num_attention_heads=heads,
        num_kv_heads=_kv_heads(cfg, heads),
        head_dim=head_dim,
        intermediate_size=inter,
        vocab_size=cfg.need_int("vocab_size", "padded_vocab_size"),
        tie_word_embeddings=_tie(cfg),
        mlp_gated=gated,
        attention_bias=bias if bias is not None else mt in _QKV_BIAS,
        attention_out_bias=bias if bias is not None else mt in _QKV_BIAS - {"qwen2"},
        mlp_bias=bool(opt_bool(cfg, "mlp_bias")) or mt in _LAYERNORM_BIAS - {"stablelm"},
        norm_with_bias=mt in _LAYERNORM_BIAS,
        qk_norm=mt in {"qwen3", "qwen3_moe", "olmo2", "gemma3", "gemma3_text"},
        parallel_attention_mlp=mt in _PARALLEL_BLOCK,
        num_experts=experts,
        num_experts_per_tok=_top_k(cfg) if experts else None,
        moe_intermediate_size=moe_inter,
        num_shared_experts=shared,
        shared_expert_intermediate_size=shared_width,
        first_k_dense=(cfg.opt_int("first_k_dense_replace") or 0) if experts else 0,
        moe_layer_step=(cfg.opt_int("interleave_moe_layer_step", "decoder_sparse_step") or 1),
        router_bias=mt == "gpt_oss",
        expert_bias=mt == "gpt_oss",
        kv_lora_rank=cfg.opt_int("kv_lora_rank"),
        q_lora_rank=cfg.opt_int("q_lora_rank"),
        qk_rope_head_dim=rope,
        qk_nope_head_dim=nope,
        v_head_dim=cfg.opt_int("v_head_dim"),
    )


def catalog_row_from_hf_config(
    raw: Mapping[str, Any], model_id: str, source: str, *, layer_period: bool = True
) -> dict[str, Any]:
    """Return a ``catalogs/llms.csv`` row (typed values; ``aliases`` a list) for *raw*.

    *source* names the file (used in error messages and written to the ``source`` column).
    Parameter counts come from :func:`predictors.catalog.llm_params.count_params`. With
    *layer_period* a ``layer_types`` list shorter than the layers repeats (the catalog builder's
    seed writes the period only); without (``catalog import-hf``) a list of another length than
    the layers is refused.
    """
    cfg = HfConfig(raw, source)
    if not MODEL_ID.fullmatch(model_id):
        raise WattgpuError(
            f"--id {short_repr(model_id, 60)}: must look like ORG/NAME (letters, digits, "
            "'.', '_', '-'), e.g. my-org/my-model-7b"
        )
    if not cfg.model_type:
        raise WattgpuError(
            f'{source}: config has no \'model_type\'; add e.g. "model_type": "llama"'
        )
    pattern = hybrid_pattern(cfg)
    if pattern is not None:  # one block per layer, counted by its kind (hybrid_params)
        stated = cfg.opt_int("num_hidden_layers")
        if stated is not None and stated != len(pattern):
            raise WattgpuError(
                f"{source}: 'num_hidden_layers' {stated} is not the {len(pattern)} blocks of its "
                "layer pattern; make them agree"
            )
        cfg.raw.update(hybrid_override_pattern=pattern, num_hidden_layers=len(pattern))
    interval_layer_types(cfg)
    spec = _spec(cfg)
    if not layer_period and pattern is None:  # a block pattern is read in place of the list
        refuse_layer_types_length(cfg, spec.num_layers)
    max_pos = cfg.need_int(
        "max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"
    )
    kind, window = _attention_kind(cfg, spec.num_layers, max_pos)
    layers = kv_layer_facts(cfg.get, cfg.opt_int, cfg.model_type, spec.num_layers, kind, window)
    counts = count_params(spec)
    dtype, implied = _checkpoint_dtype(cfg, model_id)
    return {
        "id": model_id,
        "aliases": [],
        "family": family_from_id(model_id, cfg.model_type),
        "model_type": cfg.model_type,
        "total_params_b": catalog_params_b(counts.total_b),
        "active_params_b": catalog_params_b(counts.active_b if spec.is_moe else counts.total_b),
        "num_layers": spec.num_layers,
        "hidden_size": spec.hidden_size,
        "num_attention_heads": spec.num_attention_heads,
        "num_kv_heads": spec.num_kv_heads,
        "head_dim": spec.head_dim,
        "intermediate_size": spec.intermediate_size,
        "moe_intermediate_size": spec.moe_intermediate_size,
        "num_experts": spec.num_experts,
        "num_experts_per_tok": spec.num_experts_per_tok,
        "num_shared_experts": spec.num_shared_experts if spec.is_moe else None,
        "first_k_dense": spec.first_k_dense if spec.is_moe else None,
        "kv_lora_rank": spec.kv_lora_rank,
        "qk_rope_head_dim": spec.qk_rope_head_dim if spec.is_mla else None,
        "vocab_size": spec.vocab_size,
        "max_position_embeddings": max_pos,
        "default_dtype": dtype,
        "is_moe": spec.is_moe,
        "attention_kind": kind,
        "sliding_window": window,
        "tie_word_embeddings": spec.tie_word_embeddings,
        "source": f"{source} (params: wattgpu counter{implied})",
        **layers,
        **(hybrid_facts(cfg, pattern) if pattern is not None else {}),
    }


def format_csv_cell(value: Any) -> str:
    """Render one row value as its ``llms.csv`` cell text."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "|".join(str(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}" if abs(value) < 1e6 else str(value)
    return str(value)
