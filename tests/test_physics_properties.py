"""Physical invariants of the shipped predictors, checked over the whole GPU catalog.

* power and its 90 % interval lie in [idle, TDP] of every GPU;
* power is non-decreasing in batch;
* ITL and its lower bound never beat the memory-read floor (bytes at peak bandwidth);
* ITL is non-decreasing in batch, context and parameters and non-increasing in bandwidth and
  FLOPS (every catalog GPU, perturbed one spec at a time);
* achieved bandwidth and MFU implied by ITL stay below realistic ceilings.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from predictors.api import Predictor
from predictors.estimators.itl import ETA_BW_MAX, MFU_MAX, RESIDUAL_BOUNDS
from predictors.estimators.step import StepInputs
from predictors.features import add_features, join_specs

MODELS = (
    "meta-llama/Llama-3.2-1B-Instruct",
    "meta-llama/Llama-3.1-8B-Instruct",
    "Qwen/Qwen3-30B-A3B",
    "meta-llama/Llama-3.1-70B-Instruct",
)
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
WORKLOAD_KEYS = ["model", "gpu", "gpu_count", "engine", "precision", "input_tokens"]
#: The layout each prediction resolved (re-featurised rows keep it: a GH200 "TP 8" is PP 8).
RESOLVED_LAYOUT = ("tensor_parallel", "pipeline_parallel", "data_parallel")


@pytest.fixture(scope="module")
def predictor() -> Predictor:
    return Predictor.load()


@pytest.fixture(scope="module")
def catalog_grid(predictor: Predictor) -> pl.DataFrame:
    """Every catalog GPU × LLM × TP × batch × engine × precision × prompt length, predicted."""
    gpus = predictor.catalog.gpus["id"].to_list()
    rows = list(
        itertools.product(
            MODELS, gpus, (1, 2, 8), ("vllm", "tensorrt-llm"), ("bf16", "fp8"), BATCHES, (512, 4096)
        )
    )
    frame = pl.DataFrame(
        rows,
        schema=["model", "gpu", "gpu_count", "engine", "precision", "batch_size", "input_tokens"],
        orient="row",
    ).with_columns(pl.lit(256).alias("output_tokens"))
    out = predictor.predict(frame).filter(pl.col("error") == "")
    specs = predictor.catalog.gpus.select(pl.col("id").alias("gpu"), "idle_power_w", "tdp_w")
    return out.join(specs, on="gpu")


def _featurised(predictor: Predictor, rows: pl.DataFrame) -> pl.DataFrame:
    return add_features(
        join_specs(
            rows.with_columns(
                pl.lit(predictor.card["reference_source"]).alias("source"),
                pl.lit(False).alias("itl_includes_prefill"),
            ),
            predictor.catalog,
        )
    )


def _itl(predictor: Predictor, feats: pl.DataFrame) -> np.ndarray:
    return np.asarray(predictor.models.targets["itl"].estimator.predict(add_features(feats)))


def test_grid_covers_every_catalog_gpu(predictor: Predictor, catalog_grid: pl.DataFrame) -> None:
    assert set(catalog_grid["gpu"]) == set(predictor.catalog.gpus["id"])
    assert catalog_grid.height > 10_000


def test_power_and_its_interval_stay_within_idle_and_tdp(catalog_grid: pl.DataFrame) -> None:
    g = catalog_grid
    eps = 1e-6
    for col in ("power_w_per_gpu_lo", "power_w_per_gpu", "power_w_per_gpu_hi"):
        low = g.filter(pl.col(col) < pl.col("idle_power_w") - eps)
        high = g.filter(pl.col(col) > pl.col("tdp_w") + eps)
        assert low.is_empty(), f"{col} below idle: {low.head(3).to_dicts()}"
        assert high.is_empty(), f"{col} above TDP: {high.head(3).to_dicts()}"
    assert (g["power_w_per_gpu_lo"] <= g["power_w_per_gpu"] + eps).all()
    assert (g["power_w_per_gpu"] <= g["power_w_per_gpu_hi"] + eps).all()


def _non_decreasing(frame: pl.DataFrame, by: list[str], order: str, value: str) -> pl.DataFrame:
    """Groups of *by* where *value* drops (beyond float noise) as *order* grows."""
    return (
        frame.sort([*by, order])
        .with_columns(pl.col(value).diff().over(by).alias("_step"))
        .filter(pl.col("_step") < -1e-9 * pl.col(value))
    )


def test_power_and_itl_are_non_decreasing_in_batch(catalog_grid: pl.DataFrame) -> None:
    for value in ("power_w_per_gpu", "itl_s"):
        bad = _non_decreasing(catalog_grid, WORKLOAD_KEYS, "batch_size", value)
        assert bad.is_empty(), f"{value} falls with batch: {bad.head(3).to_dicts()}"


def test_itl_is_non_decreasing_in_context(catalog_grid: pl.DataFrame) -> None:
    keys = [k for k in WORKLOAD_KEYS if k != "input_tokens"] + ["batch_size"]
    bad = _non_decreasing(catalog_grid, keys, "input_tokens", "itl_s")
    assert bad.is_empty(), f"ITL falls with context: {bad.head(3).to_dicts()}"


def test_itl_and_its_lower_bound_respect_the_memory_read_floor(
    predictor: Predictor, catalog_grid: pl.DataFrame
) -> None:
    feats = _featurised(
        predictor,
        catalog_grid.select(*WORKLOAD_KEYS, "batch_size", "output_tokens", *RESOLVED_LAYOUT),
    )
    x = StepInputs.of(feats)
    floor = x.memory_floor_s()
    itl = catalog_grid["itl_s"].to_numpy()
    lo = catalog_grid["itl_s_lo"].to_numpy()
    assert np.all(itl >= floor / ETA_BW_MAX * (1 - 1e-9))
    assert np.all(itl >= x.compute_floor_s() / MFU_MAX * (1 - 1e-9))
    assert np.all(lo >= np.maximum(floor, x.compute_floor_s()) * (1 - 1e-9))
    assert np.all(lo <= itl) and np.all(itl <= catalog_grid["itl_s_hi"].to_numpy())


def _perturbed(
    predictor: Predictor, grid: pl.DataFrame, column: str | list[str], factor: float
) -> tuple[np.ndarray, np.ndarray]:
    feats = _featurised(
        predictor, grid.select(*WORKLOAD_KEYS, "batch_size", "output_tokens", *RESOLVED_LAYOUT)
    )
    cols = [column] if isinstance(column, str) else column
    bigger = feats.with_columns(pl.col(c) * factor for c in cols)
    return _itl(predictor, feats), _itl(predictor, bigger)


def test_itl_is_non_increasing_in_bandwidth_and_flops(
    predictor: Predictor, catalog_grid: pl.DataFrame
) -> None:
    flops = ["fp16_tflops_dense", "fp8_tflops_dense", "int8_tops_dense", "fp4_tflops_dense"]
    for column in ("memory_bandwidth_gb_s", flops, "interconnect_gb_s"):
        for factor in (1.1, 2.0):
            base, stronger = _perturbed(predictor, catalog_grid, column, factor)
            assert np.all(stronger <= base * (1 + 1e-9)), f"{column} × {factor} slows ITL down"
        # and the physics really responds to bandwidth: some rows get strictly faster
    base, stronger = _perturbed(predictor, catalog_grid, "memory_bandwidth_gb_s", 2.0)
    assert np.mean(stronger < base * 0.9) > 0.5


def test_itl_is_non_decreasing_in_parameters(
    predictor: Predictor, catalog_grid: pl.DataFrame
) -> None:
    base, bigger = _perturbed(predictor, catalog_grid, ["total_params_b", "active_params_b"], 1.25)
    assert np.all(bigger >= base * (1 - 1e-9))
    assert np.mean(bigger > base * 1.05) > 0.5


def test_large_batch_itl_lies_between_the_roofline_and_a_few_times_it(
    predictor: Predictor,
) -> None:
    """Llama-2-70B fp4 on one B200 at batch 1024 (the issue's example): roofline ≈ 16 ms.

    The fitted MFU is at its lower bound of 0.25 (compute term ≤ 4 × its roofline) and the
    memory term adds at most 1/η_bw; 8 × the roofline is the "few times" this allows (v1: 16 ×).
    """
    rows = pl.DataFrame(
        {
            "model": ["meta-llama/Llama-2-70b-hf"] * 3,
            "gpu": ["B200"] * 3,
            "precision": ["fp4", "fp8", "bf16"],
            "batch_size": [1024, 512, 64],
            "input_tokens": [128] * 3,
            "output_tokens": [128] * 3,
            "gpu_count": [1, 1, 2],
        }
    )
    out = predictor.predict(rows)
    feats = _featurised(predictor, predictor.predict(rows).select(*rows.columns, "engine"))
    roofline = feats["roofline_itl_s"].to_numpy()
    itl = out["itl_s"].to_numpy()
    assert np.all(itl >= roofline)
    assert np.all(itl <= 8.0 * roofline), list(zip(itl, roofline, strict=True))


def test_tensor_parallelism_costs_only_communication(
    predictor: Predictor, catalog_grid: pl.DataFrame
) -> None:
    """Without the all-reduce term (free interconnect), more GPUs never slow a step down; with
    it, the slowdown of doubling TP is bounded by the all-reduce time of the larger group."""
    import dataclasses

    from predictors.estimators.step import step_times

    est = predictor.models.targets["itl"].estimator
    grid = catalog_grid.select(*WORKLOAD_KEYS, "batch_size", "output_tokens", *RESOLVED_LAYOUT)
    feats = _featurised(predictor, grid)
    free_step = dataclasses.replace(est.step, allreduce_latency_s=0.0, scale_out_overhead_s=0.0)
    free = dataclasses.replace(est, step=free_step)
    free_feats = feats.with_columns(
        pl.lit(1e12).alias("interconnect_gb_s"),
        pl.lit(1e13).alias("scale_out_gbit_s"),
        pl.lit(0.0).alias("scale_out_latency_us"),
    )
    itl_free = free.predict(add_features(free_feats))
    comm = step_times(est.step, StepInputs.of(feats)).comm
    keys = [k for k in WORKLOAD_KEYS if k != "gpu_count"] + ["batch_size"]
    frame = feats.select(*keys, "gpu_count").with_columns(
        pl.Series("itl_free", itl_free),
        pl.Series("itl", catalog_grid["itl_s"].to_numpy()),
        pl.Series("comm", comm),
    )
    bad = _non_decreasing(
        frame.with_columns(-pl.col("itl_free").alias("neg")), keys, "gpu_count", "neg"
    )
    assert bad.is_empty(), f"TP slows a step down without communication: {bad.head(3).to_dicts()}"
    # with communication: ITL(TP) - ITL(smaller TP) <= the larger group's all-reduce time × the
    # largest factor the model can put on a step time (vendor factor × residual bound)
    kappa = max(est.step.vendor_factor.values())
    steps = (
        frame.sort([*keys, "gpu_count"])
        .with_columns(pl.col("itl").diff().over(keys).alias("rise"))
        .filter(pl.col("rise") > pl.col("comm") * kappa * np.exp(RESIDUAL_BOUNDS[1]) + 1e-12)
    )
    assert steps.is_empty(), steps.head(3).to_dicts()
    assert (frame["comm"] > 0).any()


@pytest.fixture(scope="module")
def ttft_grid(predictor: Predictor) -> pl.DataFrame:
    """The catalog grid's workloads with the experimental TTFT (``with_ttft=True``)."""
    gpus = predictor.catalog.gpus["id"].to_list()
    rows = list(
        itertools.product(MODELS, gpus, (1, 8), ("vllm",), ("bf16", "fp8"), BATCHES, (512, 4096))
    )
    frame = pl.DataFrame(
        rows,
        schema=["model", "gpu", "gpu_count", "engine", "precision", "batch_size", "input_tokens"],
        orient="row",
    ).with_columns(pl.lit(256).alias("output_tokens"))
    return predictor.predict(frame, with_ttft=True).filter(pl.col("error") == "")


def test_ttft_never_beats_the_prompt_flops_at_peak(
    predictor: Predictor, ttft_grid: pl.DataFrame
) -> None:
    feats = _featurised(
        predictor, ttft_grid.select(*WORKLOAD_KEYS, "batch_size", "output_tokens", *RESOLVED_LAYOUT)
    )
    prompt_flops = 2.0 * feats["active_params_b"] * 1e9 * feats["input_tokens"]
    at_peak = (prompt_flops / (feats["peak_flops"] * feats["gpu_count"])).to_numpy()
    ttft = ttft_grid["ttft_s"].to_numpy()
    assert np.isfinite(ttft).all() and ttft_grid.height > 5_000
    assert np.all(ttft >= at_peak * (1 - 1e-9))
    assert np.all(ttft_grid["ttft_s_lo"].to_numpy() >= at_peak * (1 - 1e-9))
    assert np.all(ttft_grid["ttft_s_lo"].to_numpy() <= ttft)
    assert np.all(ttft <= ttft_grid["ttft_s_hi"].to_numpy())


def test_ttft_is_non_decreasing_in_concurrency_and_prompt_length(ttft_grid: pl.DataFrame) -> None:
    bad = _non_decreasing(ttft_grid, WORKLOAD_KEYS, "batch_size", "ttft_s")
    assert bad.is_empty(), f"TTFT falls with concurrency: {bad.head(3).to_dicts()}"
    keys = [k for k in WORKLOAD_KEYS if k != "input_tokens"] + ["batch_size"]
    bad = _non_decreasing(ttft_grid, keys, "input_tokens", "ttft_s")
    assert bad.is_empty(), f"TTFT falls with prompt length: {bad.head(3).to_dicts()}"
