"""The measured parallel layout of aggregated rows, read as what the engines ran.

Adapters carry each source's stated layout (``tensor_parallel``, ``pipeline_parallel``,
``data_parallel``, ``expert_parallel`` of :data:`predictors.measurements.schema.LAYOUT_COLUMNS`).
One reading needs the model's facts and is made here, after catalog resolution:

* **Wide expert parallelism (aiconfigurator).** TensorRT-LLM and SGLang take ``tp_size`` as the
  world size of a stage; with attention data parallelism (TensorRT-LLM ``enable_attention_dp``,
  SGLang ``--enable-dp-attention``) attention runs one rank per GPU and the MoE layers run
  expert-parallel over all of them. aiconfigurator's rows of such runs (DeepSeek-R1 on GB200,
  ``tp_size`` 12–72, ``attention_dp_size`` 1, ``moe_tp_size`` = ``tp_size``, ``moe_ep_size`` 1)
  state a TP that does not divide the attention heads, which no engine runs as attention TP
  (and ``moe_tp_size`` 36 does not divide DeepSeek's expert width either). A MoE row with DP 1
  whose stated TP does not fit the heads is therefore read as TP 1 × attention DP ``tp_size`` ×
  EP ``tp_size`` (docs/data.md).
"""

from __future__ import annotations

from typing import Any, Protocol

import polars as pl

from predictors.catalog.validity import tp_fits_heads


class LlmFacts(Protocol):
    """The part of the catalog this module uses."""

    def llm(self, name_or_id: str) -> dict[str, Any]:
        """Catalog row of an LLM."""


def _is_wide_ep(llm: dict[str, Any], tp: int) -> bool:
    heads, kv = llm.get("num_attention_heads"), llm.get("num_kv_heads")
    if not llm.get("is_moe") or heads is None or kv is None:
        return False
    return not tp_fits_heads(tp, int(heads), int(kv))


def read_layouts(rows: pl.DataFrame, catalog: LlmFacts) -> pl.DataFrame:
    """*rows* (resolved: ``model`` is a catalog id where ``drop_reason`` is null) with the
    wide-EP reading of the module docstring applied to aiconfigurator's aggregated rows."""
    eligible = (
        (pl.col("source") == "aiconfigurator")
        & pl.col("drop_reason").is_null()
        & (pl.col("data_parallel") == 1)
        & (pl.col("tensor_parallel") > 1)
    )
    candidates = rows.filter(eligible)
    pairs = candidates.select("model", "tensor_parallel").unique().rows()
    wide = [(m, tp) for m, tp in pairs if _is_wide_ep(catalog.llm(m), tp)]
    if not wide:
        return rows
    key = pl.DataFrame(
        {"model": [m for m, _ in wide], "tensor_parallel": [t for _, t in wide]},
        schema={"model": pl.String, "tensor_parallel": pl.Int64},
    ).with_columns(pl.lit(True).alias("_wide"))
    marked = rows.join(key, on=["model", "tensor_parallel"], how="left").with_columns(
        (pl.col("_wide").fill_null(False) & eligible.fill_null(False)).alias("_wide")
    )
    world = pl.col("tensor_parallel")
    return marked.with_columns(
        pl.when("_wide").then(pl.lit(1, pl.Int64)).otherwise(world).alias("tensor_parallel"),
        pl.when("_wide").then(world).otherwise(pl.col("data_parallel")).alias("data_parallel"),
        pl.when("_wide").then(world).otherwise(pl.col("expert_parallel")).alias("expert_parallel"),
    ).drop("_wide")
