"""Which layers of an LLM hold a KV cache, from its Hugging Face config facts.

The memory rule (:func:`predictors.physics.kv_bytes_per_sequence`) needs, per model, how many
layers keep keys and values for the whole context, how many keep at most ``sliding_window``
tokens (sliding-window or chunked attention), and the fixed state per sequence of the layers that
keep no per-token KV (Mamba-2 and gated-DeltaNet linear attention). The three
``catalogs/llms.csv`` columns (:data:`KV_LAYER_COLUMNS`) are read from the config:

* ``layer_types`` (Gemma 3, gpt-oss, Qwen3-Next / Qwen3.5, Cohere 2): ``full_attention`` →
  full; ``sliding_attention`` / ``chunked_attention`` → window; ``linear_attention`` → state. A
  list shorter than the model repeats as a pattern (the catalog seed writes the period only;
  ``catalog import-hf`` refuses a list of another length than the layers,
  :func:`predictors.catalog.hf_unread.refuse_layer_types_length`);
* ``hybrid_override_pattern`` (Nemotron-H, Nemotron Nano v2, Nemotron 3): ``*`` is an attention
  layer (full), ``M`` a Mamba-2 layer (state); ``-`` (MLP) and ``E`` (MoE) hold neither;
* Gemma 2 (``model_type`` gemma2, no list): layer ``i`` slides when ``i`` is even (transformers'
  ``Gemma2DecoderLayer``); ``sliding_window_pattern`` ``p`` (older Gemma 3 configs): layer ``i``
  is full when ``(i + 1) % p == 0``;
* Llama 4: chunked attention on every layer but each ``no_rope_layer_interval``-th (default 4,
  transformers' ``Llama4TextConfig``), or per ``no_rope_layers`` (1 = chunked) when given;
* Qwen2-style ``max_window_layers`` with ``use_sliding_window``: the layers from that index on
  slide; every other windowed model (Mistral-7B-v0.1, Phi-3 4k, StarCoder2): all layers slide.

The state of a Mamba-2 layer is ``heads · head_dim · d_state`` SSM values (in
``mamba_ssm_cache_dtype``, else 16-bit) plus the convolution's ``(heads · head_dim + 2 · groups ·
d_state) · (conv_kernel − 1)`` 16-bit values; of a gated-DeltaNet layer ``value_heads · key_dim ·
value_dim`` values (``mamba_ssm_dtype``, else 16-bit) plus ``(2 · key_heads · key_dim +
value_heads · value_dim) · (kernel − 1)`` 16-bit values — the state shapes vLLM allocates per
sequence. Models whose columns stay empty keep every layer full (the reading before the columns).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The ``catalogs/llms.csv`` columns this module fills (appended after ``source``).
KV_LAYER_COLUMNS: tuple[str, ...] = (
    "full_attention_layers",
    "window_attention_layers",
    "state_bytes_per_sequence",
)
_FP32 = {"float32", "fp32", "float"}


def _kind_of(layer_type: str) -> str:
    """'full', 'window' or 'state' for one ``layer_types`` entry."""
    text = layer_type.lower()
    if "sliding" in text or "chunk" in text or "local" in text:
        return "window"
    if "linear" in text or "mamba" in text or "recurrent" in text:
        return "state"
    return "full"


def _cycle(pattern: list[Any], layers: int) -> list[Any]:
    return [pattern[i % len(pattern)] for i in range(layers)] if pattern else []


def _state_bytes(get: Any, num: Any, layers: int) -> int | None:
    """Fixed per-sequence state of *layers* recurrent layers (None without the config's sizes)."""
    if layers == 0:
        return 0
    v_heads = num("linear_num_value_heads")
    if v_heads is not None:  # gated DeltaNet (Qwen3-Next, Qwen3.5)
        k_heads, kernel = num("linear_num_key_heads"), num("linear_conv_kernel_dim")
        k_dim, v_dim = num("linear_key_head_dim"), num("linear_value_head_dim")
        if k_heads is None or k_dim is None or v_dim is None or kernel is None:
            return None
        ssm = v_heads * k_dim * v_dim * (4 if str(get("mamba_ssm_dtype")) in _FP32 else 2)
        conv = (2 * k_heads * k_dim + v_heads * v_dim) * (kernel - 1) * 2
        return int(layers * (ssm + conv))
    heads, head_dim = num("mamba_num_heads"), num("mamba_head_dim")
    d_state, kernel = num("ssm_state_size"), num("conv_kernel")
    groups = num("n_groups", "mamba_num_groups")
    if heads is None or head_dim is None or d_state is None or kernel is None or groups is None:
        return None
    ssm = heads * head_dim * d_state * (4 if str(get("mamba_ssm_cache_dtype")) in _FP32 else 2)
    conv = (heads * head_dim + 2 * groups * d_state) * (kernel - 1) * 2
    return int(layers * (ssm + conv))


def _counts(
    get: Any, num: Any, model_type: str, layers: int, kind: str, window: int | None
) -> tuple[int, int, int] | None:
    """(full, window, state) layer counts, or None when every layer is full attention."""
    pattern = get("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        return pattern.count("*"), 0, pattern.count("M")
    types = get("layer_types")
    if isinstance(types, list) and types:
        kinds = [_kind_of(str(t)) for t in _cycle(types, layers)]
        if not window:
            kinds = ["full" if k == "window" else k for k in kinds]
        counts = (kinds.count("full"), kinds.count("window"), kinds.count("state"))
        return None if counts[0] == layers else counts
    if kind not in ("sliding", "hybrid") or not window:
        return None
    if model_type.startswith("llama4"):
        flags = get("no_rope_layers")
        if not (isinstance(flags, list) and len(flags) == layers):
            step = num("no_rope_layer_interval") or 4
            flags = [int((i + 1) % step != 0) for i in range(layers)]
        chunked = sum(1 for f in flags if f)
        return layers - chunked, chunked, 0
    if model_type == "gemma2":
        return layers // 2, layers - layers // 2, 0
    period = num("sliding_window_pattern") if get("layer_types") is None else None
    if period:
        full = sum(1 for i in range(layers) if (i + 1) % period == 0)
        return full, layers - full, 0
    first = num("max_window_layers")
    if kind == "hybrid" and first is not None and first < layers:
        return first, layers - first, 0
    return 0, layers, 0


def kv_layer_facts(
    get: Any, num: Any, model_type: str, layers: int, kind: str, window: int | None
) -> dict[str, int | None]:
    """The :data:`KV_LAYER_COLUMNS` of a config (*get* looks config keys up, first found wins;
    *num* the same for whole numbers, raising on a value that is not one; *kind* / *window* are
    the row's ``attention_kind`` / ``sliding_window``). All None where every layer keeps the full
    context (MLA and dense attention)."""
    counts = None if kind == "mla" else _counts(get, num, model_type, layers, kind, window)
    if counts is None:
        return dict.fromkeys(KV_LAYER_COLUMNS)
    full, windowed, recurrent = counts
    return {
        "full_attention_layers": full,
        "window_attention_layers": windowed,
        "state_bytes_per_sequence": _state_bytes(get, num, recurrent),
    }


def lookup(raw: Mapping[str, Any]) -> tuple[Any, Any]:
    """*get* and *num* for :func:`kv_layer_facts` over a trusted config dict (``text_config``
    merged; the catalog builder's reference configs)."""
    merged = dict(raw)
    text = raw.get("text_config")
    if isinstance(text, Mapping):
        merged.update({k: v for k, v in text.items() if v is not None})

    def get(*keys: str) -> Any:
        return next((merged[k] for k in keys if merged.get(k) is not None), None)

    def num(*keys: str) -> int | None:
        value = get(*keys)
        return None if value is None else int(value)

    return get, num


def kv_layer_rules(row: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """Catalog checks of the :data:`KV_LAYER_COLUMNS`: both counts or neither, no
    more layers than ``num_layers``, windowed layers only with a window."""
    full, window = row.get("full_attention_layers"), row.get("window_attention_layers")
    layers = row.get("num_layers")
    if (full is None) != (window is None):
        given = "full_attention_layers" if window is None else "window_attention_layers"
        other = "window_attention_layers" if window is None else "full_attention_layers"
        return [(other, f"{given} given without {other}", f"fill {other} (0 if none)")]
    if full is None or window is None:
        if row.get("state_bytes_per_sequence") is not None:
            return [
                (
                    "full_attention_layers",
                    "state_bytes_per_sequence given without the layer counts",
                    "fill full_attention_layers and window_attention_layers",
                )
            ]
        return []
    if layers is not None and full + window > layers:
        return [
            (
                "window_attention_layers",
                f"{full} full + {window} windowed layers exceed num_layers {layers}",
                "count each layer once (Mamba / linear-attention layers in neither)",
            )
        ]
    if window and row.get("sliding_window") is None:
        return [
            (
                "sliding_window",
                f"{window} windowed layers without a sliding_window",
                "fill sliding_window (the window or chunk size in tokens)",
            )
        ]
    return []
