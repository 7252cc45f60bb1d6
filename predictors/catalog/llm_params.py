"""Count the parameters of a decoder-only transformer LLM from its config facts.

The counter covers token embeddings and an untied LM head, attention (multi-head, grouped-query,
multi-query, and DeepSeek-style multi-head latent attention), dense MLPs (gated: gate, up and down
matrices; non-gated, as in GPT-2, GPT-NeoX, Falcon or Phi-2: up and down), mixture-of-experts
layers (routed experts, shared experts and the router), leading dense layers of MoE models
(``first_k_dense``), MoE layers interleaved with dense ones (Llama 4 Maverick) and norms.

Conventions (see ``catalogs/LLMS.md``):

* ``total_b`` counts every weight of the language model (vision towers and multi-token-prediction
  heads are not part of it).
* ``active_b`` counts the weights used for one token: everything except the routed experts that
  are not selected. Embeddings are included, so for a dense model ``active_b == total_b`` (the
  catalog contract). Some vendors leave the input embedding out of their "active" figure
  (OpenAI's gpt-oss); ``input_embedding_b`` lets a caller do the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from predictors.core.errors import WattgpuError


@dataclass(frozen=True)
class ArchSpec:
    """The architecture facts the counter needs (Hugging Face ``config.json`` meanings)."""

    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    """Hidden width of a dense MLP (for MoE models: of the dense layers, if any)."""
    vocab_size: int
    tie_word_embeddings: bool
    mlp_gated: bool = True
    """True for SwiGLU/GeGLU MLPs (3 matrices), False for plain up/down MLPs (2 matrices)."""
    attention_bias: bool = False
    """Bias vectors on the q, k, v (and o) projections."""
    attention_out_bias: bool = False
    mlp_bias: bool = False
    norm_with_bias: bool = False
    """LayerNorm with bias (2 vectors per norm) instead of RMSNorm (1 vector)."""
    qk_norm: bool = False
    """Per-head RMSNorm on queries and keys (Qwen3, OLMo-2 style: counted per head dim)."""
    parallel_attention_mlp: bool = False
    """One norm per layer instead of two (GPT-J, Falcon-7B/40B, Phi-2)."""
    # mixture of experts
    num_experts: int | None = None
    num_experts_per_tok: int | None = None
    moe_intermediate_size: int | None = None
    num_shared_experts: int = 0
    shared_expert_intermediate_size: int | None = None
    """Width of each shared expert; defaults to ``moe_intermediate_size`` when not given."""
    first_k_dense: int = 0
    moe_layer_step: int = 1
    """Every ``moe_layer_step``-th layer (1-based) after ``first_k_dense`` is an MoE layer."""
    router_bias: bool = False
    expert_bias: bool = False
    # multi-head latent attention (DeepSeek-V2/V3)
    kv_lora_rank: int | None = None
    q_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None

    @property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model (``num_experts`` given and non-zero)."""
        return bool(self.num_experts)

    @property
    def is_mla(self) -> bool:
        """True for multi-head latent attention (``kv_lora_rank`` given and non-zero)."""
        return bool(self.kv_lora_rank)


@dataclass(frozen=True)
class ParamCount:
    """Parameter counts in billions."""

    total_b: float
    active_b: float
    input_embedding_b: float
    """The token-embedding table (a lookup, no multiply), included in both totals."""


def catalog_params_b(billions: float) -> float:
    """A parameter count (billions) as the catalog writes it: three decimals (a million
    parameters), four significant digits below 0.1 B, so no model rounds to 0."""
    return round(billions, 3) if billions >= 0.1 else float(f"{billions:.4g}")


def _attention_params(spec: ArchSpec) -> int:
    h = spec.hidden_size
    if spec.is_mla:
        nope = _need(spec.qk_nope_head_dim, "qk_nope_head_dim")
        rope = _need(spec.qk_rope_head_dim, "qk_rope_head_dim")
        v_dim = _need(spec.v_head_dim, "v_head_dim")
        kv_rank = _need(spec.kv_lora_rank, "kv_lora_rank")
        heads = spec.num_attention_heads
        q_out = heads * (nope + rope)
        if spec.q_lora_rank:
            q = h * spec.q_lora_rank + spec.q_lora_rank + spec.q_lora_rank * q_out
        else:
            q = h * q_out
        kv = h * (kv_rank + rope) + kv_rank + kv_rank * heads * (nope + v_dim)
        out = heads * v_dim * h
        return q + kv + out
    q_dim = spec.num_attention_heads * spec.head_dim
    kv_dim = spec.num_kv_heads * spec.head_dim
    params = h * q_dim + 2 * h * kv_dim + q_dim * h
    if spec.attention_bias:
        params += q_dim + 2 * kv_dim
    if spec.attention_bias or spec.attention_out_bias:
        params += h
    if spec.qk_norm:
        params += 2 * spec.head_dim
    return params


def _mlp_params(hidden: int, width: int, gated: bool, bias: bool) -> int:
    matrices = 3 if gated else 2
    params = matrices * hidden * width
    if bias:
        params += (matrices - 1) * width + hidden
    return params


def _need(value: int | None, name: str) -> int:
    if not value:
        raise WattgpuError(f"parameter counter: multi-head latent attention needs {name}")
    return value


def _is_moe_layer(spec: ArchSpec, layer: int) -> bool:
    if not spec.is_moe or layer < spec.first_k_dense:
        return False
    return (layer + 1) % spec.moe_layer_step == 0


def count_params(spec: ArchSpec) -> ParamCount:
    """Return total and active parameters (B) of the model described by *spec*."""
    h = spec.hidden_size
    norm = 2 * h if spec.norm_with_bias else h
    embed = spec.vocab_size * h
    total = embed + norm  # final norm
    active = embed + norm
    if not spec.tie_word_embeddings:
        total += embed
        active += embed
    attention = _attention_params(spec)
    norms_per_layer = norm if spec.parallel_attention_mlp else 2 * norm
    dense_mlp = _mlp_params(h, spec.intermediate_size, spec.mlp_gated, spec.mlp_bias)
    for layer in range(spec.num_layers):
        total += attention + norms_per_layer
        active += attention + norms_per_layer
        if not _is_moe_layer(spec, layer):
            total += dense_mlp
            active += dense_mlp
            continue
        experts = spec.num_experts or 0
        top_k = spec.num_experts_per_tok or 0
        width = spec.moe_intermediate_size or spec.intermediate_size
        expert = _mlp_params(h, width, spec.mlp_gated, spec.expert_bias)
        router = experts * h + (experts if spec.router_bias else 0)
        shared_width = spec.shared_expert_intermediate_size or width
        shared = spec.num_shared_experts * _mlp_params(h, shared_width, spec.mlp_gated, False)
        total += experts * expert + router + shared
        active += top_k * expert + router + shared
    return ParamCount(total_b=total / 1e9, active_b=active / 1e9, input_embedding_b=embed / 1e9)
