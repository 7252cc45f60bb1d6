"""Physical invariants of the shipped predictors over parallel layouts, over the whole catalog.

For every catalog GPU, dense and MoE LLMs (8, 128 and 256 experts; multi-latent attention) and
every layout of the grid (TP × PP 1/2/4 × DP, EP up to the expert count) that fits a replica:

* power and its interval lie in [idle, TDP]; power and ITL are non-decreasing in batch;
* ITL never beats the memory-read / compute floor plus the layout's communication floor;
* a GPU at least as strong in bandwidth, FLOPS, memory and fabric (interconnect, NVLink domain,
  scale-out bandwidth and latency) is never predicted slower (ITL, TTFT) at equal layout;
* adding a node (PP or DP doubled) never makes a replica faster than its communication allows:
  with real communication it is never faster than with free communication, and without
  communication its speed-up is at most the GPU-count ratio;
* a faster interconnect, a larger NVLink domain or a faster scale-out network never slows it;
* the expert-parallel degree (up to the expert count) is accepted and changes no prediction.

The default run uses a deterministic subsample of the layouts (:data:`FAST`); the exhaustive
grid (:data:`FULL`, DP 1–8) runs with ``-m slow``.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import NamedTuple

import numpy as np
import polars as pl
import pytest

from predictors.api import LAYOUT_OUTPUT_COLUMNS, Predictor
from predictors.catalog.validity import max_replica_gpus
from predictors.estimators.itl import PhysicsItlEstimator
from predictors.estimators.step import StepInputs, layout_comm_s
from predictors.features import add_features, join_specs
from predictors.training import dominance

MODELS = (
    "meta-llama/Llama-3.1-70B-Instruct",
    "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "Qwen/Qwen3-30B-A3B",
    "deepseek-ai/DeepSeek-V3",
)


class Grid(NamedTuple):
    tp: tuple[int, ...]
    pp: tuple[int, ...]
    dp: tuple[int, ...]
    batches: tuple[int, ...]
    precisions: tuple[str, ...]
    engines: tuple[str, ...]


#: Default run: every PP, DP 1, 2, 3 and 8 (an odd degree included), three batches.
FAST = Grid((1, 2, 8), (1, 2, 4), (1, 2, 3, 8), (1, 16, 256), ("bf16", "fp8"), ("vllm",))
#: Exhaustive: DP 1–8, rack-scale TP, more batches and engines.
FULL = Grid(
    (1, 2, 4, 8, 16, 36, 72),
    (1, 2, 4),
    tuple(range(1, 9)),
    (1, 4, 16, 64, 256),
    ("bf16", "fp8", "fp4"),
    ("vllm", "tensorrt-llm", "sglang"),
)
KEYS = ["model", "gpu", "engine", "precision", "input_tokens", "output_tokens"]
LAYOUT = list(LAYOUT_OUTPUT_COLUMNS)


@pytest.fixture(scope="module")
def predictor() -> Predictor:
    return Predictor.load()


def predicted_grid(predictor: Predictor, grid: Grid) -> pl.DataFrame:
    """Every catalog GPU × LLM × layout × batch × precision × engine of *grid* that fits a
    replica, predicted with TTFT (rows with an error removed), with idle power and TDP."""
    cat = predictor.catalog
    limit = {g["id"]: max_replica_gpus(g) for g in cat.gpus.to_dicts()}
    rows = [
        (m, g, tp * pp * dp, e, p, b, 1024, 256, pp, dp)
        for m, g, tp, pp, dp, b, p, e in itertools.product(
            MODELS, limit, grid.tp, grid.pp, grid.dp, grid.batches, grid.precisions, grid.engines
        )
        if tp * pp * dp <= limit[g]
    ]
    names = ["model", "gpu", "gpu_count", "engine", "precision", "batch_size"]
    names += ["input_tokens", "output_tokens", "pipeline_parallel", "data_parallel"]
    frame = pl.DataFrame(rows, schema=names, orient="row")
    out = pl.concat(
        [
            frame.drop("pipeline_parallel", "data_parallel"),
            predictor.predict(frame, with_ttft=True).select(
                "error",
                "itl_s",
                "itl_s_lo",
                "itl_s_hi",
                "ttft_s",
                *LAYOUT,
                "power_w_per_gpu",
                "power_w_per_gpu_lo",
                "power_w_per_gpu_hi",
            ),
        ],
        how="horizontal",
    ).filter(pl.col("error") == "")
    specs = cat.gpus.select(pl.col("id").alias("gpu"), "idle_power_w", "tdp_w")
    return out.join(specs, on="gpu")


@pytest.fixture(scope="module")
def grid(predictor: Predictor) -> pl.DataFrame:
    return predicted_grid(predictor, FAST)


def featurised(predictor: Predictor, rows: pl.DataFrame) -> pl.DataFrame:
    """*rows* (with their resolved layout) with catalog facts and every feature column."""
    base = rows.select(*KEYS, "gpu_count", "batch_size", *LAYOUT[:3]).with_columns(
        pl.col(c).cast(pl.Float64) for c in LAYOUT[:3]
    )
    return add_features(
        join_specs(
            base.with_columns(
                pl.lit(predictor.card["reference_source"]).alias("source"),
                pl.lit(False).alias("itl_includes_prefill"),
            ),
            predictor.catalog,
        )
    )


def itl_of(predictor: Predictor, feats: pl.DataFrame, *, free_comm: bool = False) -> np.ndarray:
    """The shipped ITL estimator on *feats*; *free_comm*: with zero-cost communication."""
    est = predictor.models.targets["itl"].estimator
    if free_comm:
        assert isinstance(est, PhysicsItlEstimator) and est.step is not None
        free = dataclasses.replace(est.step, allreduce_latency_s=0.0, scale_out_overhead_s=0.0)
        est = dataclasses.replace(est, step=free)
        feats = feats.with_columns(
            pl.lit(1e12).alias("interconnect_gb_s"),
            pl.lit(1e13).alias("scale_out_gbit_s"),
            pl.lit(0.0).alias("scale_out_latency_us"),
        )
    return np.asarray(est.predict(add_features(feats)))


def falls(frame: pl.DataFrame, by: list[str], order: str, value: str) -> pl.DataFrame:
    """Groups of *by* where *value* drops (beyond float noise) as *order* grows."""
    return (
        frame.sort([*by, order])
        .with_columns(pl.col(value).diff().over(by).alias("_step"))
        .filter(pl.col("_step") < -1e-9 * pl.col(value))
    )


def check_grid_covers_the_layouts(predictor: Predictor, g: pl.DataFrame, grid: Grid) -> None:
    assert set(g["gpu"]) == set(predictor.catalog.gpus["id"])
    assert set(g["model"]) == set(MODELS)
    assert set(g["pipeline_parallel"]) == set(grid.pp)
    assert set(g["data_parallel"]) == set(grid.dp)
    multi_node = g.filter(pl.col("gpu_count") > 8)
    assert multi_node.height > 1_000 and multi_node["gpu"].n_unique() > 20


def check_power(g: pl.DataFrame) -> None:
    eps = 1e-6
    for col in ("power_w_per_gpu_lo", "power_w_per_gpu", "power_w_per_gpu_hi"):
        low = g.filter(pl.col(col) < pl.col("idle_power_w") - eps)
        high = g.filter(pl.col(col) > pl.col("tdp_w") + eps)
        assert low.is_empty(), f"{col} below idle: {low.head(3).to_dicts()}"
        assert high.is_empty(), f"{col} above TDP: {high.head(3).to_dicts()}"
    assert (g["power_w_per_gpu_lo"] <= g["power_w_per_gpu"] + eps).all()
    assert (g["power_w_per_gpu"] <= g["power_w_per_gpu_hi"] + eps).all()
    for value in ("power_w_per_gpu", "itl_s", "ttft_s"):
        bad = falls(g, [*KEYS, "gpu_count", *LAYOUT], "batch_size", value)
        assert bad.is_empty(), f"{value} falls with load: {bad.head(3).to_dicts()}"


def check_floor(predictor: Predictor, g: pl.DataFrame) -> None:
    feats = featurised(predictor, g)
    x = StepInputs.of(feats)
    comm = layout_comm_s(x.layout, x.batch, x.hidden, x.layers, x.interconnect_b_s, 0.0)[1]
    floor = PhysicsItlEstimator.floor_s(feats)
    itl, lo = g["itl_s"].to_numpy(), g["itl_s_lo"].to_numpy()
    roofline = np.maximum(x.memory_floor_s(), x.compute_floor_s())
    assert np.all(itl >= floor * (1 - 1e-9))
    assert np.all(floor >= roofline + comm - 1e-15)  # the floor carries the communication
    assert np.all(lo >= roofline * (1 - 1e-9)) and np.all(lo <= itl)
    assert np.all(itl <= g["itl_s_hi"].to_numpy())
    # the communication floor is real: pipeline transfers, and the all-to-all of MoE layers
    # under attention DP, are paid by every such row
    assert (comm[x.layout.pp > 1] > 0).all()
    assert (comm[(x.layout.dp > 1) & (x.layout.moe_layers > 0)] > 0).all()
    assert (comm[(x.layout.pp == 1) & (x.layout.dp == 1)] == 0).all()


def fabric_pairs(predictor: Predictor) -> pl.DataFrame:
    """(gpu_a, gpu_b, precision) of :func:`dominance.dominating_pairs` where B's fabric is also
    at least A's: interconnect, NVLink domain, scale-out bandwidth and its latency."""
    latency = predictor.catalog.gpus.select(pl.col("id").alias("gpu_a"), "scale_out_latency_us")
    pairs = dominance.dominating_pairs(predictor).filter(~pl.col("weaker_ic"))
    pairs = pairs.join(latency, on="gpu_a").join(
        latency.rename({"gpu_a": "gpu_b"}), on="gpu_b", suffix="_b"
    )
    return pairs.filter(pl.col("scale_out_latency_us_b") <= pl.col("scale_out_latency_us"))


def check_dominance(predictor: Predictor, g: pl.DataFrame) -> None:
    """Equal layout, B at least as strong in everything: never slower (ITL and TTFT)."""
    pairs = fabric_pairs(predictor)
    on = ["model", "engine", "precision", "batch_size", "gpu_count", *LAYOUT]
    a = g.select(pl.col("gpu").alias("gpu_a"), *on, pl.col("itl_s"), pl.col("ttft_s"))
    b = a.rename({"gpu_a": "gpu_b"})
    both = pairs.join(a, on=["gpu_a", "precision"]).join(b, on=["gpu_b", *on], suffix="_b")
    assert both.height > 5_000 and (both["gpu_count"] > 8).sum() > 500
    for value in ("itl_s", "ttft_s"):
        bad = both.filter(pl.col(f"{value}_b") > pl.col(value) * (1 + 1e-9))
        worst = bad.with_columns((pl.col(f"{value}_b") / pl.col(value)).alias("ratio"))
        assert bad.is_empty(), worst.sort("ratio", descending=True).head(3).to_dicts()


def check_adding_a_node(predictor: Predictor, g: pl.DataFrame) -> None:
    """PP or DP doubled at equal TP: never faster than with free communication, and without
    communication at most (GPU-count ratio) times faster."""
    feats = featurised(predictor, g)
    frame = g.select(*KEYS, "batch_size", "gpu_count", *LAYOUT[:3]).with_columns(
        pl.Series("itl", g["itl_s"].to_numpy()),
        pl.Series("free", itl_of(predictor, feats, free_comm=True)),
    )
    assert np.all(frame["itl"].to_numpy() >= frame["free"].to_numpy() * (1 - 1e-9))
    keys = [*KEYS, "batch_size", "tensor_parallel"]
    checked = 0
    for grow, keep in (
        ("pipeline_parallel", "data_parallel"),
        ("data_parallel", "pipeline_parallel"),
    ):
        small = frame.select(*keys, keep, grow, "gpu_count", "free")
        big = small.filter(pl.col(grow) % 2 == 0).with_columns(pl.col(grow) // 2)
        pairs = small.join(big, on=[*keys, keep, grow], suffix="_big")
        bad = pairs.filter(
            pl.col("free_big") * pl.col("gpu_count_big")
            < pl.col("free") * pl.col("gpu_count") * (1 - 1e-9)
        )
        assert bad.is_empty(), (
            f"superlinear without communication ({grow}): {bad.head(3).to_dicts()}"
        )
        checked += pairs.height
    assert checked > 5_000


def check_faster_fabric(predictor: Predictor, g: pl.DataFrame) -> None:
    feats = featurised(predictor, g)
    base = itl_of(predictor, feats)
    faster = {
        "interconnect": pl.col("interconnect_gb_s").fill_null(64.0) * 2.0,
        "scale-out bandwidth": pl.col("scale_out_gbit_s") * 2.0,
        "scale-out latency": pl.col("scale_out_latency_us") * 0.5,
        "NVLink domain": pl.max_horizontal(pl.col("nvlink_domain_gpus") * 9, pl.col("node_gpus")),
    }
    columns = {
        "interconnect": "interconnect_gb_s",
        "scale-out bandwidth": "scale_out_gbit_s",
        "scale-out latency": "scale_out_latency_us",
        "NVLink domain": "nvlink_domain_gpus",
    }
    for what, expr in faster.items():
        itl = itl_of(predictor, feats.with_columns(expr.alias(columns[what])))
        worse = itl > base * (1 + 1e-9)
        assert not worse.any(), f"a faster {what} slows {worse.sum()} rows"
        if what != "scale-out latency":
            assert (itl < base * (1 - 1e-6)).any(), f"the {what} changes nothing"


def test_layout_grid_covers_the_catalog(predictor: Predictor, grid: pl.DataFrame) -> None:
    check_grid_covers_the_layouts(predictor, grid, FAST)


def test_power_within_idle_and_tdp_and_monotone_in_load(grid: pl.DataFrame) -> None:
    check_power(grid)


def test_itl_respects_the_memory_and_communication_floor(
    predictor: Predictor, grid: pl.DataFrame
) -> None:
    check_floor(predictor, grid)


def test_a_stronger_gpu_is_never_slower_at_equal_layout(
    predictor: Predictor, grid: pl.DataFrame
) -> None:
    check_dominance(predictor, grid)


def test_adding_a_node_is_bounded_by_its_communication(
    predictor: Predictor, grid: pl.DataFrame
) -> None:
    check_adding_a_node(predictor, grid)


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_a_faster_fabric_never_slows_a_replica(predictor: Predictor, grid: pl.DataFrame) -> None:
    check_faster_fabric(predictor, grid)


def test_expert_parallel_up_to_the_expert_count(predictor: Predictor) -> None:
    """Every EP that divides a stage's GPUs, up to the expert count, is valid and predicts what
    the default EP predicts (EP moves experts between ranks; imbalance is not modelled)."""
    cat = predictor.catalog
    rows = []
    for model in MODELS[1:]:
        experts = int(cat.llm(model)["num_experts"])
        for gpu, tp, dp in itertools.product(
            ("H200-SXM-141GB", "GB200", "MI300X"), (1, 8, 16), FAST.dp
        ):
            stage = tp * dp
            for ep in [e for e in range(1, experts + 1) if not stage % e] + [None]:
                rows.append((model, gpu, stage, "fp8", 64, 1024, 256, 1, dp, ep))
    names = ["model", "gpu", "gpu_count", "precision", "batch_size", "input_tokens"]
    frame = pl.DataFrame(
        rows,
        schema=[*names, "output_tokens", "pipeline_parallel", "data_parallel", "expert_parallel"],
        orient="row",
    )
    out = pl.concat(
        [frame, predictor.predict(frame).select("error", "itl_s", "power_w_per_gpu")],
        how="horizontal",
    )
    ep_errors = out.filter(pl.col("error").str.contains("expert_parallel"))
    assert ep_errors.is_empty(), ep_errors.head(3).to_dicts()
    ok = out.filter(pl.col("error") == "")
    spread = ok.group_by("model", "gpu", "gpu_count", "data_parallel").agg(
        (pl.col("itl_s").max() / pl.col("itl_s").min()).alias("itl"),
        (pl.col("power_w_per_gpu").max() / pl.col("power_w_per_gpu").min()).alias("power"),
        pl.col("expert_parallel").max().alias("ep"),
    )
    assert (spread["itl"] <= 1 + 1e-12).all() and (spread["power"] <= 1 + 1e-12).all()
    experts_of = {m: int(cat.llm(m)["num_experts"]) for m in MODELS[1:]}
    reached = spread.filter(pl.col("ep") == pl.col("model").replace_strict(experts_of))
    assert set(reached["model"]) == {"mistralai/Mixtral-8x7B-Instruct-v0.1", "Qwen/Qwen3-30B-A3B"}
    too_many = predictor.predict(frame.head(1).with_columns(pl.lit(16).alias("expert_parallel")))
    assert too_many["error"][0].startswith("expert_parallel: 16 is larger than the 8 experts")


@pytest.mark.slow
def test_exhaustive_layout_grid(predictor: Predictor) -> None:
    """Every property above on :data:`FULL` (DP 1–8, TP up to 72, three engines)."""
    g = predicted_grid(predictor, FULL)
    check_grid_covers_the_layouts(predictor, g, FULL)
    check_power(g)
    check_floor(predictor, g)
    check_dominance(predictor, g)
    check_adding_a_node(predictor, g)
    check_faster_fabric(predictor, g)
