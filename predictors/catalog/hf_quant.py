"""The weight precision a Hugging Face ``quantization_config`` implies (the catalog's
``default_dtype`` of an imported checkpoint).

Read per ``quant_method`` (``quant_algo`` too, as TensorRT Model Optimizer writes it), in the
catalog's precisions (fp8, int8, fp4, int4; ``catalogs/LLMS.md`` maps checkpoint names the same
way):

* ``fp8``, ``fbgemm_fp8`` (Meta's Llama-3.1 FP8), an ``fp8`` ``quant_algo`` → fp8;
* ``mxfp4`` (gpt-oss), an ``nvfp4``/``fp4`` ``quant_algo`` → fp4;
* ``awq``, ``gptq`` → int4 at 4 bits (the default), int8 at 8;
* ``bitsandbytes`` → int4 with ``load_in_4bit``, int8 with ``load_in_8bit``;
* ``compressed-tensors`` → the weights' ``num_bits`` and ``type`` (float / int) of its
  ``config_groups`` (the widest when groups differ);
* ``modelopt`` ``MIXED_PRECISION`` → the scheme of most of its MLP and expert layers (which hold
  most of the weights), of most layers when none is named so.

Anything else (another method, 2- or 3-bit weights) is a one-line error naming the field: a
silent fallback to ``torch_dtype`` would count a quantised checkpoint's weights at 16 bits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from predictors.core.errors import WattgpuError
from predictors.core.escape import short_repr

#: The methods this module reads (named in its error).
KNOWN_METHODS: tuple[str, ...] = (
    "fp8",
    "fbgemm_fp8",
    "mxfp4",
    "awq",
    "gptq",
    "bitsandbytes",
    "compressed-tensors",
    "modelopt",
)
#: Weight bits of an integer scheme → the catalog precision.
_INT_BITS = {4: "int4", 8: "int8"}
_FLOAT_BITS = {4: "fp4", 8: "fp8"}


#: What a user can do when the scheme is not read.
FIX = (
    "remove the quantization_config block, import again and set default_dtype in the user "
    "catalog's llms.csv (fp8, int8, fp4 or int4)"
)


def _from_algo(algo: str) -> str | None:
    """The precision a ``quant_algo`` states (``FP8``, ``NVFP4``, ``W4A8_AWQ``, ``W8A8_SQ``)."""
    if "fp4" in algo:
        return "fp4"
    if "fp8" in algo:
        return "fp8"
    if algo.startswith("w4") or "int4" in algo:
        return "int4"
    if algo.startswith("w8") or "int8" in algo:
        return "int8"
    return None


def _bits(value: Any, where: str, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value not in _INT_BITS:
        raise WattgpuError(
            f"{source}: {where} {short_repr(value, 20)} is not 4- or 8-bit weights, which wattgpu "
            f"models; {FIX}"
        )
    return int(value)


def _compressed(quant: Mapping[str, Any], source: str) -> str:
    groups = quant.get("config_groups")
    found: list[tuple[int, str]] = []
    if isinstance(groups, Mapping):
        for name, group in groups.items():
            weights = group.get("weights") if isinstance(group, Mapping) else None
            if not isinstance(weights, Mapping):
                continue
            where = f"quantization_config.config_groups.{name}.weights.num_bits"
            bits = _bits(weights.get("num_bits"), where, source)
            kind = str(weights.get("type", "int")).lower()
            found.append((bits, (_FLOAT_BITS if kind == "float" else _INT_BITS)[bits]))
    if not found:
        raise WattgpuError(
            f"{source}: quantization_config (compressed-tensors) states no weights' num_bits in "
            f"its config_groups; {FIX}"
        )
    return max(found)[1]


def _mixed(quant: Mapping[str, Any]) -> str | None:
    layers = quant.get("quantized_layers")
    if not isinstance(layers, Mapping) or not layers:
        return None
    schemes = {
        str(name): _from_algo(str(v.get("quant_algo", "")).lower())
        for name, v in layers.items()
        if isinstance(v, Mapping)
    }
    bulk = [p for n, p in schemes.items() if p and any(k in n for k in ("mlp", "expert", "ffn"))]
    votes = Counter(bulk or [p for p in schemes.values() if p])
    return votes.most_common(1)[0][0] if votes else None


def quantised_dtype(quant: Any, source: str) -> str:
    """The catalog precision of the weights a ``quantization_config`` *quant* describes."""
    if not isinstance(quant, Mapping):
        raise WattgpuError(
            f"{source}: 'quantization_config' must be an object, got {short_repr(quant, 40)}"
        )
    method = str(quant.get("quant_method") or "").lower()
    algo = str(quant.get("quant_algo") or "").lower()
    if method == "mxfp4":
        return "fp4"
    if method in ("fp8", "fbgemm_fp8"):
        return "fp8"
    if method in ("awq", "gptq"):
        return _INT_BITS[_bits(quant.get("bits", 4), "quantization_config.bits", source)]
    if method == "bitsandbytes":
        if quant.get("load_in_4bit") is True:
            return "int4"
        if quant.get("load_in_8bit") is True:
            return "int8"
    if method == "compressed-tensors":
        return _compressed(quant, source)
    stated = _mixed(quant) if algo == "mixed_precision" else _from_algo(algo)
    if stated is not None:
        return stated
    what = f"quant_method {method!r}" if method else "no quant_method"
    raise WattgpuError(
        f"{source}: quantization_config has {what}"
        + (f" and quant_algo {algo!r}" if algo else "")
        + f", which wattgpu does not read (it reads {', '.join(KNOWN_METHODS)}); "
        + FIX
    )
