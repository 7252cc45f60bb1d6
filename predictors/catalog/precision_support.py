"""Which weight precisions each accelerator generation serves: the precision capability rule.

The engines serve an 8-bit float or 4-bit checkpoint only on accelerators with kernels for it,
so a (precision, GPU) pair is checked against :data:`MINIMUM_GENERATION` by
:func:`precision_problems`, with the engine capability table
(:mod:`predictors.catalog.engine_support`) in :func:`predictors.catalog.validity.layout_problems`
(``predict``, ``compare`` and ``plan`` share it):

* **fp8** needs an NVIDIA GPU of the Turing generation or newer (compute capability 7.5: vLLM
  serves FP8 checkpoints weight-only through FP8 Marlin below Ada, W8A8 on Ada, Hopper and
  Blackwell), AMD CDNA 3 (MI300) or newer, Intel Gaudi 2 or newer.
* **fp4** (MXFP4, NVFP4) needs an NVIDIA GPU of the Ampere generation or newer (MXFP4 through
  Marlin needs BF16 activations, which Turing lacks; native FP4 on Blackwell), AMD CDNA 3 or newer,
  Intel Gaudi 2 or newer.
* **int4** (AWQ, GPTQ, compressed-tensors W4A16) needs an NVIDIA GPU of the Pascal generation or
  newer (GPTQ's own kernel runs from compute capability 6.0; AWQ and the Marlin kernels need
  Turing or Ampere, so an AWQ checkpoint on Volta is not refused here, the precision does not
  say which kernel it needs).

Other precisions are not checked (bf16 on a GPU before Ampere is predicted at fp16's rate, as the
engines cast it), nor are architectures the rule does not know (a user catalog row with another
vendor or an unnamed generation), nor Intel's Data Center GPU Max. Each problem is one line
``precision: what is wrong; fix``, the style of the other row errors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from predictors.catalog import engine_support

#: NVIDIA architectures, oldest first, by the architecture's first word (lower case).
NVIDIA_GENERATIONS: tuple[str, ...] = (
    "kepler",
    "maxwell",
    "pascal",
    "volta",
    "turing",
    "ampere",
    "ada",
    "hopper",
    "blackwell",
    "rubin",
)
#: Their names in the problems.
_NVIDIA_NAMES = {"ada": "Ada Lovelace"}

#: Per precision, the oldest generation that serves it: NVIDIA (an entry of
#: :data:`NVIDIA_GENERATIONS`), AMD CDNA (its number), Intel Gaudi (its number); None: any.
MINIMUM_GENERATION: dict[str, dict[str, str | int | None]] = {
    "fp8": {"cuda": "turing", "rocm": 3, "hpu": 2},
    "fp4": {"cuda": "ampere", "rocm": 3, "hpu": 2},
    "int4": {"cuda": "pascal", "rocm": None, "hpu": None},
}
SOURCE = (
    "docs.vllm.ai: features/quantization (supported hardware: FP8 W8A8 on Ada, Hopper and AMD "
    "MI300; AWQ from Turing; Marlin GPTQ/AWQ/FP8 from Ampere) and quantization/fp8 (FP8 "
    "weight-only W8A16 through FP8 Marlin from compute capability 7.5, vllm-project/vllm#29901: "
    "Marlin on Turing for GPTQ, AWQ, FP8 and NVFP4, not MXFP4, which needs BF16 activations); "
    "vLLM gpt-oss recipe (MXFP4 through Marlin on Ampere); ROCm: FP8 from MI300 (CDNA 3); "
    "vLLM Intel Gaudi plugin: FP8 by INC on Gaudi 2 and Gaudi 3"
)

_NUMBERED = {"rocm": re.compile(r"\bcdna\s*(\d+)"), "hpu": re.compile(r"\bgaudi\s*(\d+)")}
_FAMILY = {"rocm": "AMD CDNA", "hpu": "Intel Gaudi"}


def _generation(gpu: Mapping[str, Any], where: str) -> str | int | None:
    """The GPU's generation in the terms of :data:`MINIMUM_GENERATION`; None when unknown."""
    arch = str(gpu.get("architecture") or "").strip().lower()
    if where == "cuda":
        words = arch.replace("lovelace", "ada").split()
        return words[0] if words and words[0] in NVIDIA_GENERATIONS else None
    pattern = _NUMBERED.get(where)
    found = pattern.search(arch) if pattern else None
    return int(found.group(1)) if found else None


def _older(generation: str | int, minimum: str | int) -> bool:
    if isinstance(generation, str) and isinstance(minimum, str):
        return NVIDIA_GENERATIONS.index(generation) < NVIDIA_GENERATIONS.index(minimum)
    return isinstance(generation, int) and isinstance(minimum, int) and generation < minimum


def _named(where: str, generation: str | int) -> str:
    if isinstance(generation, str):
        return f"NVIDIA GPU of the {_NVIDIA_NAMES.get(generation, generation.title())} generation"
    return f"{_FAMILY[where]} {generation} GPU"


def precision_problems(precision: str | None, gpu: Mapping[str, Any]) -> list[str]:
    """Why catalog GPU *gpu* cannot serve weights at *precision* (empty: it can, or the rule does
    not know: another precision, vendor or an unknown architecture)."""
    minimum = MINIMUM_GENERATION.get(precision or "", {})
    where = engine_support.platform(gpu)
    least = minimum.get(where) if where else None
    if where is None or least is None:
        return []
    generation = _generation(gpu, where)
    if generation is None or not _older(generation, least):
        return []
    sixteen = "fp16" if where == "cuda" and _older(generation, "ampere") else "fp16 or bf16"
    return [
        f"precision: {precision} needs an {_named(where, least)} or newer; {gpu.get('id')} is "
        f"{gpu.get('architecture')}; use {sixteen}, or a newer GPU"
    ]


def serves(precision: str | None, gpu: Mapping[str, Any]) -> bool:
    """True unless catalog GPU *gpu* cannot serve *precision* (:func:`precision_problems`)."""
    return not precision_problems(precision, gpu)
