"""Parameters of a Nemotron-H style Mamba-2 / attention hybrid, counted layer by layer.

In these models (``model_type`` ``nemotron_h``: Nemotron-H, Nemotron Nano v2, Nemotron 3) each
layer is one block, named by ``hybrid_override_pattern`` (or, in newer configs, the list
``layers_block_type``): ``M`` a Mamba-2 mixer, ``*`` attention, ``-`` an MLP, ``E`` a mixture of
experts; each block has one RMSNorm. Counted as transformers' ``NemotronH`` modules hold them:

* Mamba-2: ``d = mamba_num_heads · mamba_head_dim`` inner channels, ``c = d + 2 · n_groups ·
  ssm_state_size`` convolution channels; ``in_proj`` ``hidden × (d + c + heads)``, ``conv1d``
  ``c · conv_kernel`` (+ ``c`` bias), ``dt_bias``, ``A_log`` and ``D`` (``heads`` each), a gated
  norm of ``d`` and ``out_proj`` ``d × hidden``;
* attention: ``q``/``o`` of ``heads · head_dim`` and ``k``/``v`` of ``kv_heads · head_dim``;
* MLP: up and down projections (squared-ReLU, not gated) of ``intermediate_size``;
* MoE: ``n_routed_experts`` experts of up and down ``moe_intermediate_size`` (in a
  ``moe_latent_size`` space with one projection in and one out when the config has one), the
  shared expert(s) of ``moe_shared_expert_intermediate_size``, and the router (``hidden`` per
  expert plus its correction bias); a token uses ``num_experts_per_tok`` of the routed experts;
* embeddings, an untied LM head and the final norm.

Multi-token-prediction layers (``mtp_*``) are not part of the counted language model
(``catalogs/LLMS.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from predictors.catalog.hf_keys import HfConfig, opt_bool
from predictors.catalog.llm_params import catalog_params_b
from predictors.core.errors import WattgpuError

#: ``layers_block_type`` names → ``hybrid_override_pattern`` letters.
BLOCK_LETTERS: dict[str, str] = {"mamba": "M", "attention": "*", "mlp": "-", "moe": "E"}


@dataclass(frozen=True)
class HybridCounts:
    """Total and per-token parameters (billions) of a hybrid model."""

    total_b: float
    active_b: float


def hybrid_pattern(cfg: HfConfig) -> str | None:
    """The block letters of every layer (``M*-E``), from ``hybrid_override_pattern`` or
    ``layers_block_type``; None for a config with neither."""
    pattern = cfg.get("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        letters = pattern
    else:
        blocks = cfg.get("layers_block_type")
        if not (isinstance(blocks, list) and blocks):
            return None
        unknown = sorted({str(b) for b in blocks} - set(BLOCK_LETTERS))
        if unknown:
            raise WattgpuError(
                f"{cfg.source}: 'layers_block_type' names {', '.join(map(repr, unknown))}; "
                f"wattgpu counts {', '.join(BLOCK_LETTERS)} blocks"
            )
        letters = "".join(BLOCK_LETTERS[str(b)] for b in blocks)
    bad = sorted(set(letters) - set(BLOCK_LETTERS.values()))
    if bad:
        raise WattgpuError(
            f"{cfg.source}: 'hybrid_override_pattern' holds {', '.join(map(repr, bad))}; "
            "wattgpu counts M (Mamba-2), * (attention), - (MLP) and E (MoE) blocks"
        )
    return letters


def _mamba(cfg: HfConfig, hidden: int) -> int:
    heads = cfg.need_int("mamba_num_heads")
    inner = heads * cfg.need_int("mamba_head_dim")
    conv = inner + 2 * cfg.need_int("n_groups") * cfg.need_int("ssm_state_size")
    kernel = cfg.need_int("conv_kernel")
    bias = bool(opt_bool(cfg, "use_bias"))
    in_proj = hidden * (inner + conv + heads) + (inner + conv + heads) * bias
    conv1d = conv * kernel + conv * bool(opt_bool(cfg, "use_conv_bias"))
    return in_proj + conv1d + 3 * heads + inner + inner * hidden + hidden * bias


def _attention(cfg: HfConfig, hidden: int) -> int:
    heads = cfg.need_int("num_attention_heads")
    kv = cfg.opt_int("num_key_value_heads") or heads
    head_dim = cfg.opt_int("head_dim", "attention_head_dim") or hidden // heads
    bias = bool(opt_bool(cfg, "attention_bias"))
    return (
        2 * hidden * heads * head_dim
        + 2 * hidden * kv * head_dim
        + bias * (heads * head_dim + 2 * kv * head_dim + hidden)
    )


def _moe(cfg: HfConfig, hidden: int) -> tuple[int, int]:
    """(all, per-token) parameters of one MoE block."""
    experts = cfg.need_int("n_routed_experts", "num_experts")
    top_k = cfg.need_int("num_experts_per_tok")
    width = cfg.need_int("moe_intermediate_size")
    latent = cfg.opt_int("moe_latent_size")
    inner = latent or hidden
    expert = 2 * inner * width
    shared = (
        (cfg.opt_int("n_shared_experts") or 0)
        * 2
        * hidden
        * (cfg.opt_int("moe_shared_expert_intermediate_size") or width)
    )
    fixed = shared + experts * hidden + experts + (2 * hidden * latent if latent else 0)
    return fixed + experts * expert, fixed + top_k * expert


def count_hybrid(cfg: HfConfig, pattern: str) -> HybridCounts:
    """:class:`HybridCounts` of the layers *pattern* (:func:`hybrid_pattern`) describes."""
    hidden = cfg.need_int("hidden_size")
    vocab = cfg.need_int("vocab_size")
    tied = bool(opt_bool(cfg, "tie_word_embeddings"))
    base = vocab * hidden * (1 if tied else 2) + hidden
    total = active = base + len(pattern) * hidden
    per_block: dict[str, tuple[int, int]] = {}
    for letter in sorted(set(pattern)):
        if letter == "M":
            n = _mamba(cfg, hidden)
            per_block[letter] = (n, n)
        elif letter == "*":
            n = _attention(cfg, hidden)
            per_block[letter] = (n, n)
        elif letter == "-":
            n = 2 * hidden * cfg.need_int("intermediate_size")
            per_block[letter] = (n, n)
        else:
            per_block[letter] = _moe(cfg, hidden)
    for letter in pattern:
        all_, used = per_block[letter]
        total += all_
        active += used
    return HybridCounts(total / 1e9, active / 1e9)


def hybrid_facts(cfg: HfConfig, pattern: str) -> dict[str, Any]:
    """The ``catalogs/llms.csv`` size columns of a hybrid config (the MoE ones empty when it has
    no MoE block)."""
    counts = count_hybrid(cfg, pattern)
    moe = "E" in pattern
    return {
        "total_params_b": catalog_params_b(counts.total_b),
        "active_params_b": catalog_params_b(counts.active_b if moe else counts.total_b),
        "is_moe": moe,
        "moe_intermediate_size": cfg.need_int("moe_intermediate_size") if moe else None,
        "num_experts": cfg.need_int("n_routed_experts", "num_experts") if moe else None,
        "num_experts_per_tok": cfg.need_int("num_experts_per_tok") if moe else None,
        "num_shared_experts": (cfg.opt_int("n_shared_experts") or 0) if moe else None,
        "first_k_dense": 0 if moe else None,
    }
