"""The dominance sweep: a GPU at least as strong as another is never predicted slower.

For every ordered pair (A, B) of same-vendor catalog GPUs where B has at least A's memory
bandwidth, dense tensor FLOPS at the row's precision and memory (and more of at least one), and
for every LLM, tensor-parallel degree, batch, token count, engine and precision of the grid
(:data:`MODELS` … :data:`PRECISIONS`) that fits both, the sweep compares the predicted ITL:
a violation is ``ITL(B) > TOLERANCE · ITL(A)``. Comparisons at TP > 1 are marked
``weaker_interconnect`` when B's interconnect is slower than A's (the step model's all-reduce
cost legitimately favours A there; those are counted but kept apart). The time to first token
(``ttft_ratio``) is compared on the same rows; its model has no interconnect term, so it must
hold everywhere.
"""

from __future__ import annotations

import itertools

import polars as pl

from predictors.api import BATCH_INPUT_COLUMNS, LAYOUT_OUTPUT_COLUMNS, Predictor
from predictors.physics import peak_tflops, tp_domain_gpus

#: Allowed slack: B may be predicted at most 5 % slower than A.
TOLERANCE = 1.05
#: LLMs of the sweep: 1B–70B, dense and mixture-of-experts.
MODELS: tuple[str, ...] = (
    "meta-llama/Llama-3.2-1B-Instruct",
    "meta-llama/Llama-3.2-3B-Instruct",
    "meta-llama/Llama-3.1-8B-Instruct",
    "Qwen/Qwen2.5-14B-Instruct",
    "Qwen/Qwen3-30B-A3B",
    "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "meta-llama/Llama-3.1-70B-Instruct",
)
GPU_COUNTS: tuple[int, ...] = (1, 2, 4, 8)
BATCHES: tuple[int, ...] = (1, 8, 64)
TOKENS: tuple[tuple[int, int], ...] = ((128, 128), (1024, 256), (4096, 512))
ENGINES: tuple[str, ...] = ("vllm", "tensorrt-llm", "sglang")
PRECISIONS: tuple[str, ...] = ("bf16", "fp8", "fp4")


def grid(gpus: list[str]) -> pl.DataFrame:
    """Every (GPU, LLM, TP, batch, tokens, engine, precision) row of the sweep."""
    rows = [
        (m, g, n, e, p, b, i, o)
        for g, m, n, b, (i, o), e, p in itertools.product(
            gpus, MODELS, GPU_COUNTS, BATCHES, TOKENS, ENGINES, PRECISIONS
        )
    ]
    return pl.DataFrame(
        rows,
        schema=list(BATCH_INPUT_COLUMNS),
        orient="row",
    )


def dominating_pairs(predictor: Predictor) -> pl.DataFrame:
    """(gpu_a, gpu_b, precision, weaker_interconnect) where B dominates A at that precision."""
    gpus = predictor.catalog.gpus.select(
        pl.col("id").alias("gpu"),
        "vendor",
        "memory_bandwidth_gb_s",
        "memory_gb",
        "fp16_tflops_dense",
        "fp8_tflops_dense",
        "int8_tops_dense",
        "fp4_tflops_dense",
        pl.col("interconnect_gb_s").fill_null(0.0),
        tp_domain_gpus().alias("domain"),
        pl.col("scale_out_gbit_s").fill_null(0.0),
    )
    specs = pl.concat(
        [gpus.with_columns(pl.lit(p).alias("precision")) for p in PRECISIONS]
    ).with_columns(peak_tflops().alias("tflops"))
    pairs = specs.join(specs, on=["vendor", "precision"], suffix="_b").filter(
        (pl.col("gpu") != pl.col("gpu_b"))
        & (pl.col("memory_bandwidth_gb_s_b") >= pl.col("memory_bandwidth_gb_s"))
        & (pl.col("tflops_b") >= pl.col("tflops"))
        & (pl.col("memory_gb_b") >= pl.col("memory_gb"))
        & (
            (pl.col("memory_bandwidth_gb_s_b") > pl.col("memory_bandwidth_gb_s"))
            | (pl.col("tflops_b") > pl.col("tflops"))
            | (pl.col("memory_gb_b") > pl.col("memory_gb"))
        )
    )
    return pairs.select(
        pl.col("gpu").alias("gpu_a"),
        "gpu_b",
        "precision",
        (
            (pl.col("interconnect_gb_s_b") < pl.col("interconnect_gb_s"))
            | (pl.col("domain_b") < pl.col("domain"))
            | (pl.col("scale_out_gbit_s_b") < pl.col("scale_out_gbit_s"))
        ).alias("weaker_ic"),
    )


def sweep(predictor: Predictor) -> pl.DataFrame:
    """Every comparison of the sweep where both GPUs fit: ITL of A and B and their ratio."""
    pairs = dominating_pairs(predictor)
    gpus = sorted(set(pairs["gpu_a"].to_list()) | set(pairs["gpu_b"].to_list()))
    rows = grid(gpus)
    pred = pl.concat(
        [
            rows,
            predictor.predict(rows, with_ttft=True).select(
                "itl_s", "ttft_s", "error", *LAYOUT_OUTPUT_COLUMNS
            ),
        ],
        how="horizontal",
    ).filter(pl.col("error") == "")
    # the same configuration on both GPUs: equal GPU count and equal resolved layout (a GPU
    # whose NVLink domain is smaller needs pipeline stages where the other runs one TP group)
    keys = ["model", "gpu_count", "engine", "precision", "batch_size", "input_tokens"]
    keys += list(LAYOUT_OUTPUT_COLUMNS)
    a = pred.select(
        pl.col("gpu").alias("gpu_a"),
        *keys,
        pl.col("itl_s").alias("itl_s_a"),
        pl.col("ttft_s").alias("ttft_s_a"),
    )
    b = pred.select(
        pl.col("gpu").alias("gpu_b"),
        *keys,
        pl.col("itl_s").alias("itl_s_b"),
        pl.col("ttft_s").alias("ttft_s_b"),
    )
    out = pairs.join(a, on=["gpu_a", "precision"]).join(b, on=["gpu_b", *keys])
    return out.with_columns(
        (pl.col("itl_s_b") / pl.col("itl_s_a")).alias("ratio"),
        (pl.col("weaker_ic") & (pl.col("gpu_count") > 1)).alias("weaker_interconnect"),
        (pl.col("ttft_s_b") / pl.col("ttft_s_a")).alias("ttft_ratio"),
    ).drop("weaker_ic")


def violations(comparisons: pl.DataFrame) -> pl.DataFrame:
    """Comparisons where the stronger GPU is predicted more than 5 % slower."""
    return comparisons.filter(pl.col("ratio") > TOLERANCE)


def summary(predictor: Predictor) -> dict[str, float | int]:
    """Counts of the sweep for docs/accuracy.md."""
    comp = sweep(predictor)
    weak = comp.filter(pl.col("weaker_interconnect"))
    return {
        "models": len(MODELS),
        "pairs": comp.select("gpu_a", "gpu_b").unique().height,
        "comparisons": comp.height,
        "violations": violations(comp.filter(~pl.col("weaker_interconnect"))).height,
        "worst_ratio": float(comp["ratio"].max() or 0.0),  # type: ignore[arg-type]
        "weaker_interconnect": weak.height,
        "weaker_interconnect_violations": violations(weak).height,
        "ttft_violations": comp.filter(pl.col("ttft_ratio") > TOLERANCE).height,
        "ttft_worst_ratio": float(comp["ttft_ratio"].max() or 0.0),  # type: ignore[arg-type]
    }
