"""Quantised checkpoints: resolve ``…-FP8``, ``…-NVFP4``, ``…-AWQ``, ``…-GPTQ-Int4`` to their base.

A quantised checkpoint (``nvidia/Llama-3.1-8B-Instruct-FP8``, ``nvidia/DeepSeek-R1-NVFP4``,
``Qwen/Qwen2.5-7B-Instruct-AWQ``, ``…-GPTQ-Int4``, ``RedHatAI/…-FP8-dynamic``,
``neuralmagic/…-quantized.w4a16``, ``unsloth/…-bnb-4bit``) has the architecture of its base model
and stores the weights at a lower precision. When the catalog has no row for the checkpoint
itself, :func:`resolve_checkpoint` strips the quantisation suffix (:data:`SCHEME_PRECISION`),
finds the base model in the catalog (by ``org/name``, then by the name alone, which the catalog's
aliases and ids cover) and returns it with the **implied precision**. A catalog row for the
checkpoint always wins; an explicit precision always wins over the implied one
(:func:`fill_implied_precision` fills only empty cells). Every resolution carries a one-line
:meth:`Checkpoint.note` for the output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import polars as pl

from predictors.core.errors import UnknownIdError

#: Suffix tokens (lower case, after splitting the repo name on ``-``, ``_`` and ``.``) and the
#: weight precision each implies. AWQ and GPTQ are 4-bit unless a token says 8-bit.
SCHEME_PRECISION: dict[str, str] = {
    "fp8": "fp8",
    "nvfp4": "fp4",
    "mxfp4": "fp4",
    "fp4": "fp4",
    "int4": "int4",
    "w4a16": "int4",
    "4bit": "int4",
    "awq": "int4",
    "gptq": "int4",
    "bnb": "int4",
    "int8": "int8",
    "w8a8": "int8",
    "w8a16": "int8",
    "8bit": "int8",
}
#: Tokens that only qualify a scheme (``FP8-dynamic``, ``quantized.w4a16``, ``FP8-KV``).
MODIFIERS = frozenset({"dynamic", "static", "quantized", "quant", "kv", "block", "hf"})
#: When several scheme tokens appear, the precision of the first kind found in this order wins:
#: a number format (``INT8``, ``FP8``, ``NVFP4``, ``MXFP4``, ``FP4``, ``INT4``) before a bit-width
#: pair that names none (``W8A8``, ``W8A16``, ``8bit``, ``W4A16``, ``4bit``), before a method
#: (``AWQ``, ``GPTQ``, ``bnb``). So ``GPTQ-Int8`` is int8, ``AWQ-INT4`` int4, ``bnb-4bit`` int4,
#: ``W8A8-FP8`` and ``w8a8_fp8`` fp8 (an FP8 checkpoint), ``W8A8`` and ``W8A8-INT8`` int8.
_PRIORITY = (
    *("int8", "fp8", "nvfp4", "mxfp4", "fp4", "int4"),
    *("w8a8", "w8a16", "8bit", "w4a16", "4bit"),
)
_SPLIT = re.compile(r"([-_.])")


@dataclass(frozen=True)
class Checkpoint:
    """How a model name resolved: the catalog id, and for a quantised checkpoint its scheme."""

    name: str
    model_id: str
    precision: str | None = None
    """Weight precision the checkpoint implies; None when the name is a catalog model."""
    scheme: str | None = None
    """The quantisation suffix as written (e.g. ``FP8``, ``GPTQ-Int4``)."""

    @property
    def quantised(self) -> bool:
        """True when the name is a quantised checkpoint (it implies a precision)."""
        return self.precision is not None

    def note(self, explicit_precision: str | None = None) -> str:
        """One line for the output ('' for a catalog model)."""
        if not self.quantised:
            return ""
        head = f"note: {self.name} is a quantised checkpoint ({self.scheme}) of {self.model_id}"
        if explicit_precision and explicit_precision.strip().lower() != self.precision:
            return (
                f"{head}: predicted as {self.model_id} at the explicit precision "
                f"{explicit_precision.strip().lower()} instead of the implied {self.precision}"
            )
        return (
            f"{head}: predicted as {self.model_id} at {self.precision} (an explicit precision "
            "overrides it)"
        )


def split_scheme(name: str) -> tuple[str, str, str] | None:
    """(base name, scheme as written, implied precision) of a quantised repo name, else None."""
    org, _, repo = name.rpartition("/")
    parts = _SPLIT.split(repo)  # tokens interleaved with their separators
    tokens = parts[0::2]
    keep = len(tokens)
    while keep > 1 and (tokens[keep - 1].lower() in SCHEME_PRECISION | dict.fromkeys(MODIFIERS)):
        keep -= 1
    found = [t.lower() for t in tokens[keep:] if t.lower() in SCHEME_PRECISION]
    if not found:
        return None
    precision = next(
        (SCHEME_PRECISION[k] for k in _PRIORITY if k in found), SCHEME_PRECISION[found[0]]
    )
    base = "".join(parts[: 2 * keep - 1])
    scheme = "".join(parts[2 * keep :])
    return (f"{org}/{base}" if org else base), scheme, precision


def _base_id(catalog: Any, base: str) -> str | None:
    found = catalog.try_resolve_llm(base)
    if found is None and "/" in base:
        found = catalog.try_resolve_llm(base.rpartition("/")[2])
    return found


def try_resolve_checkpoint(catalog: Any, name: str) -> Checkpoint | None:
    """The resolution of *name* (catalog model or quantised checkpoint of one), or None.

    *catalog* is a :class:`predictors.catalog.store.Catalog`.
    """
    direct = catalog.try_resolve_llm(name)
    if direct is not None:
        return Checkpoint(name, direct)
    split = split_scheme(name)
    if split is None:
        return None
    base, scheme, precision = split
    model_id = _base_id(catalog, base)
    return None if model_id is None else Checkpoint(name, model_id, precision, scheme)


def resolve_checkpoint(catalog: Any, name: str) -> Checkpoint:
    """Like :func:`try_resolve_checkpoint`; an unknown name raises UnknownIdError."""
    found = try_resolve_checkpoint(catalog, name)
    if found is not None:
        return found
    split = split_scheme(name)
    if split is None:
        catalog.resolve_llm(name)  # raises with the did-you-mean list
        raise UnknownIdError(f"unknown llm '{name}'")  # pragma: no cover - resolve_llm raised
    base, scheme, _ = split
    try:
        catalog.resolve_llm(base)
    except UnknownIdError as exc:
        raise UnknownIdError(
            f"unknown llm '{name}': a {scheme} quantised checkpoint of '{base}', which is not in "
            "the catalog",
            hint=exc.hint,
            fix="add the base model (`wattgpu catalog import-hf`) or use a catalog id with "
            "--precision",
        ) from None
    raise UnknownIdError(f"unknown llm '{name}'")  # pragma: no cover - base resolved above


def resolve_llm(catalog: Any, name: str) -> str:
    """Catalog id of a model name or of a quantised checkpoint's base; UnknownIdError else."""
    return resolve_checkpoint(catalog, name).model_id


#: How a serving engine loads a checkpoint stored at a precision it does not serve: vLLM's
#: ``dtype: auto`` serves FP32 checkpoints in FP16.
SERVED_DTYPE: dict[str, str] = {"fp32": "fp16"}


def checkpoint_precision(catalog: Any, model_id: str) -> str:
    """The precision a catalog LLM is served at when nobody says otherwise: its checkpoint's
    ``default_dtype`` (FP8 for DeepSeek-V3, FP4 for gpt-oss), FP32 served as FP16. The one
    default of ``predict``, ``compare``, ``plan`` and the measurement adapters."""
    dtype = str(catalog.llm(model_id).get("default_dtype") or "bf16")
    return SERVED_DTYPE.get(dtype, dtype)


def fill_implied_precision(rows: pl.DataFrame, catalog: Any) -> pl.DataFrame:
    """Rows with an empty or missing ``precision`` set to the checkpoint's precision: what a
    quantised ``model`` name implies, else the catalog model's :func:`checkpoint_precision`.

    Rows with an explicit precision, and rows whose model does not resolve, are left as they are.
    """
    if "model" not in rows.columns:
        return rows
    implied: dict[str, str] = {}
    for name in rows["model"].cast(pl.String).drop_nulls().unique().to_list():
        found = try_resolve_checkpoint(catalog, name.strip())
        if found is not None:
            implied[name] = found.precision or checkpoint_precision(catalog, found.model_id)
    if not implied:
        return rows
    original = (
        pl.col("precision").cast(pl.String)
        if "precision" in rows.columns
        else pl.lit(None, dtype=pl.String)
    )
    current = original.str.strip_chars()
    fill = pl.col("model").cast(pl.String).replace_strict(implied, default=None)
    empty = current.is_null() | (current == "")
    return rows.with_columns(
        pl.when(empty & fill.is_not_null()).then(fill).otherwise(original).alias("precision")
    )


def without_unused_precision(out: pl.DataFrame, given: pl.DataFrame, catalog: Any) -> pl.DataFrame:
    """*out* (predicted from input *given*, row for row) with an empty ``precision`` where the
    input left it empty and the ``model`` resolves to no catalog model (nor a quantised checkpoint
    of one): no precision was used, so the default states none (docs/contracts.md)."""
    if "precision" not in out.columns or out.is_empty():
        return out
    stated = (
        given["precision"].cast(pl.String).str.strip_chars().fill_null("") != ""
        if "precision" in given.columns
        else pl.repeat(False, given.height, eager=True)
    )
    names = (
        given["model"].cast(pl.String).str.strip_chars().fill_null("")
        if "model" in given.columns
        else pl.repeat("", given.height, dtype=pl.String, eager=True)
    )
    known = {n for n in names.unique().to_list() if n and try_resolve_checkpoint(catalog, n)}
    unused = ~stated & ~names.is_in(list(known))
    if not unused.any():
        return out
    return out.with_columns(
        pl.when(pl.lit(unused)).then(None).otherwise(pl.col("precision")).alias("precision")
    )


def notes(catalog: Any, names: list[str], explicit_precision: str | None = None) -> list[str]:
    """The resolution note of every distinct quantised checkpoint among *names*."""
    out = []
    for name in dict.fromkeys(n.strip() for n in names if n and n.strip()):
        found = try_resolve_checkpoint(catalog, name)
        if found is not None and found.quantised:
            out.append(found.note(explicit_precision))
    return out
