"""The tokens a workload holds in a model's context window (``max_position_embeddings``).

A decoder-only model holds the prompt and the generated tokens in one window: input + output.
An encoder-decoder model (T5, BART, ...) reads the prompt in its encoder and generates in its
decoder, each with its own positions, so each side must fit the window on its own: the longer of
input and output (fuzz round 28: FastChat-T5's measured runs of 250 input and up to 326 output
tokens were refused against its 512-token window). One rule for ``predict``, scenarios and
saved plans."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

#: Hugging Face ``model_type`` values of encoder-decoder models.
ENCODER_DECODER_TYPES: frozenset[str] = frozenset(
    {"t5", "mt5", "umt5", "longt5", "switch_transformers", "bart", "mbart", "pegasus", "marian"}
)


def is_encoder_decoder(model_type: object) -> bool:
    """True for a catalog ``model_type`` of an encoder-decoder model."""
    return isinstance(model_type, str) and model_type.lower() in ENCODER_DECODER_TYPES


def context_tokens(model_type: object, input_tokens: float, output_tokens: float) -> float:
    """The tokens one window holds: input + output, or the longer of them for an
    encoder-decoder model."""
    if is_encoder_decoder(model_type):
        return max(input_tokens, output_tokens)
    return input_tokens + output_tokens


#: How :func:`context_tokens` counts, for messages: a decoder-only and an encoder-decoder model.
COUNTED = "input_tokens + output_tokens"
COUNTED_ENCODER_DECODER = "the longer of input_tokens and output_tokens (an encoder-decoder model)"


def what_is_counted(model_type: object) -> str:
    """How :func:`context_tokens` counts for *model_type*, for messages."""
    return COUNTED_ENCODER_DECODER if is_encoder_decoder(model_type) else COUNTED


def context_tokens_expr(encoder_decoder: pl.Expr) -> pl.Expr:
    """:func:`context_tokens` on the ``input_tokens`` and ``output_tokens`` columns, with
    *encoder_decoder* a boolean expression per row."""
    both = pl.col("input_tokens") + pl.col("output_tokens")
    longer = pl.max_horizontal(pl.col("input_tokens"), pl.col("output_tokens"))
    return pl.when(encoder_decoder.fill_null(False)).then(longer).otherwise(both)


def context_excess(llm: Mapping[str, Any], input_tokens: float, output_tokens: float) -> str:
    """'' when catalog model *llm* holds the tokens (or records no window), else what exceeds
    it: ``131,256 tokens (input 131,000 + output 256) exceed the 131,072-token context of M``."""
    window = llm.get("max_position_embeddings")
    kind = llm.get("model_type")
    tokens = context_tokens(kind, input_tokens, output_tokens)
    if window is None or tokens <= window:
        return ""
    held = (
        f"the longer of input {input_tokens:,.0f} and output {output_tokens:,.0f}: an "
        "encoder-decoder model"
        if is_encoder_decoder(kind)
        else f"input {input_tokens:,.0f} + output {output_tokens:,.0f}"
    )
    return f"{tokens:,.0f} tokens ({held}) exceed the {window:,}-token context of {llm.get('id')}"
