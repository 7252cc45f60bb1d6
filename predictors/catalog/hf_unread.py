"""Hugging Face configs the importer refuses, or completes, before it counts their parameters.

:func:`refuse_unread` refuses in one line the layers the transformer counter would count as
attention + MLP (Mamba / state-space layers outside Nemotron-H's block pattern, MiniMax's
lightning attention) and the configs whose facts it does not read (DBRX's nested ones): a
silently wrong row would mis-size every prediction made with it. :func:`interval_layer_types`
writes Qwen3-Next's ``full_attention_interval`` as the ``layer_types`` list the importer reads;
:func:`refuse_layer_types_length` refuses a ``layer_types`` list of another length than the
layers (``catalog import-hf``; the catalog builder's seed writes a period that repeats).
"""

from __future__ import annotations

from predictors.catalog.hf_keys import HfConfig, as_int
from predictors.core.errors import WattgpuError
from predictors.core.escape import short_repr

#: How to add a model the importer cannot count (the end of each refusal).
BY_HAND = (
    "add the model to the user catalog's llms.csv by hand, with total_params_b and "
    "active_params_b from its model card (catalogs/LLMS.md)"
)
#: Model types of recurrent (state-space) or hybrid models outside Nemotron-H's block pattern.
_RECURRENT_TYPES = frozenset(
    {"mamba", "mamba2", "jamba", "falcon_h1", "falcon_mamba", "zamba", "zamba2", "rwkv",
     "rwkv5", "rwkv6", "recurrent_gemma", "bamba", "granitemoehybrid", "lfm2"}
)  # fmt: skip


def _recurrent_keys(cfg: HfConfig) -> list[str]:
    """Config keys of Mamba / state-space layers (``mamba_d_ssm``, ``ssm_cfg``, Jamba's
    ``attn_layer_period``), at the top level or in ``text_config``."""
    keys = set(cfg.raw) | set(cfg.raw.get("text_config") or {})
    return sorted(
        k
        for k in keys
        if (k.startswith(("mamba", "ssm_")) and not k.endswith("_dtype"))
        or k in ("ssm_cfg", "attn_layer_period", "rescale_prenorm_residual")
    )


def refuse_unread(cfg: HfConfig) -> None:
    """Layers the transformer counter would count as attention + MLP, or configs whose facts it
    does not read, refused in one line (a silently wrong row would mis-size every prediction):
    Mamba / state-space layers outside Nemotron-H's block pattern (:mod:`predictors.catalog.
    hybrid_params`), MiniMax's lightning-attention layers (``attn_type_list``) and DBRX's
    nested ``attn_config`` / ``ffn_config``."""
    value = cfg.get("layer_types")
    if isinstance(value, list) and "mamba" in str(value).lower():
        raise WattgpuError(
            f"{cfg.source}: 'layer_types' holds Mamba layers, which the importer counts only in "
            f"Nemotron-H's block pattern (hybrid_override_pattern or layers_block_type); {BY_HAND}"
        )
    if cfg.get("hybrid_override_pattern") is None and not isinstance(value, list):
        keys = _recurrent_keys(cfg)  # a layer_types list states every layer's kind itself
        if cfg.model_type in _RECURRENT_TYPES or keys:
            what = (
                f"model_type {cfg.model_type!r}"
                if cfg.model_type in _RECURRENT_TYPES
                else f"its key '{keys[0]}'"
            )
            raise WattgpuError(
                f"{cfg.source}: a Mamba / state-space model ({what}), whose layers the importer "
                f"counts only in Nemotron-H's block pattern; {BY_HAND}"
            )
    if 0 in (cfg.get("attn_type_list") or []):  # 0: lightning attention (1: softmax)
        raise WattgpuError(
            f"{cfg.source}: 'attn_type_list' mixes lightning (linear) and softmax attention "
            f"layers, which the importer does not count; {BY_HAND}"
        )
    nested = [k for k in ("attn_config", "ffn_config") if isinstance(cfg.raw.get(k), dict)]
    if nested:
        raise WattgpuError(
            f"{cfg.source}: '{nested[0]}' nests the layer facts (DBRX style), which the "
            f"importer does not read; {BY_HAND}"
        )


#: Keys of the number of routed experts, and of the step between MoE layers.
_EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
_STEP_KEYS = ("interleave_moe_layer_step", "decoder_sparse_step")
#: Model types built as mixtures of experts (besides those whose name says ``moe``).
_MOE_TYPES = frozenset(
    {"mixtral", "deepseek_v2", "deepseek_v3", "gpt_oss", "llama4", "llama4_text", "dbrx",
     "minimax", "minimax_m2", "kimi_k2", "jetmoe", "arctic", "glm4_moe", "ernie4_5_moe"}
)  # fmt: skip


def refuse_miscounted_moe(cfg: HfConfig) -> None:
    """MoE layouts the counter would count silently wrong, refused in one line naming the key:
    no experts in an MoE model type (it would count as dense), a step between MoE layers below 1
    (it would read as 1) and ``mlp_only_layers`` naming layers (Qwen-MoE dense layers in place
    of the expert block, which the counter does not place; out-of-range indices are refused
    as such)."""
    experts = cfg.get(*_EXPERT_KEYS)
    is_moe_type = "moe" in cfg.model_type.lower() or cfg.model_type in _MOE_TYPES
    if experts is not None and is_moe_type:
        key = cfg.key_of(_EXPERT_KEYS, experts)
        if as_int(experts, key, cfg.source) == 0:
            raise WattgpuError(
                f"{cfg.source}: {key!r} is 0 in a mixture-of-experts model "
                f"(model_type {cfg.model_type!r}), which would count as a dense model; state "
                "the number of routed experts"
            )
    step = cfg.get(*_STEP_KEYS)
    if step is not None:
        as_int(step, cfg.key_of(_STEP_KEYS, step), cfg.source, minimum=1)
    only = cfg.get("mlp_only_layers")
    if not only:
        return
    layers = cfg.need_int("num_hidden_layers", "n_layer", "num_layers", "n_layers")
    for index in only:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < layers:
            raise WattgpuError(
                f"{cfg.source}: 'mlp_only_layers' holds {short_repr(index, 40)}, not a layer "
                f"index from 0 to {layers - 1}; list the dense layers' 0-based indices"
            )
    raise WattgpuError(
        f"{cfg.source}: 'mlp_only_layers' names dense layers in place of the expert block, "
        f"which the importer does not count; {BY_HAND}"
    )


def interval_layer_types(cfg: HfConfig) -> None:
    """Qwen3-Next's ``full_attention_interval`` as the ``layer_types`` its transformers config
    builds when the list is absent: every interval-th layer full attention, the others linear
    attention."""
    interval = cfg.opt_int("full_attention_interval")
    if not interval or cfg.get("layer_types") is not None:
        return
    layers = cfg.need_int("num_hidden_layers", "n_layer", "num_layers")
    cfg.raw["layer_types"] = [
        "full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(layers)
    ]


#: Config keys of the number of layers (those the parameter counter reads).
_LAYER_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers")


def refuse_layer_types_length(cfg: HfConfig, layers: int) -> None:
    """A ``layer_types`` list whose length is not the *layers* of the model, refused in one line
    naming both (transformers refuses it too): repeated or cut to fit, it would give wrong full
    and windowed layer counts, and so a wrong KV cache size."""
    value = cfg.get("layer_types")
    if isinstance(value, list) and value and len(value) != layers:
        key = cfg.key_of(_LAYER_KEYS, cfg.get(*_LAYER_KEYS))
        raise WattgpuError(
            f"{cfg.source}: 'layer_types' holds {len(value)} "
            f"{'entry' if len(value) == 1 else 'entries'} but {key!r} is {layers}; give one "
            "entry per layer, in order"
        )
