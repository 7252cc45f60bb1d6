"""The parallel layout's communication in the decode-step model (see
:mod:`predictors.estimators.step`, whose docstring states the formulas): TP all-reduces, the
attention-DP all-to-all of the MoE layers and the pipeline transfers of one token cycle."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

#: Bytes per activation element exchanged between GPUs (16-bit activations).
ACTIVATION_BYTES = 2.0
#: Scale-out network assumed where the catalog has none: 100 Gb/s per GPU, 5 µs per message.
DEFAULT_SCALE_OUT_GBIT_S = 100.0
DEFAULT_SCALE_OUT_LATENCY_US = 5.0


@dataclass(frozen=True)
class LayoutInputs:
    """The parallel layout and fabric of rows (pure TP where *frame* has no layout columns)."""

    tp: np.ndarray
    pp: np.ndarray
    dp: np.ndarray
    moe_layers: np.ndarray
    experts_per_token: np.ndarray
    domain: np.ndarray
    scale_out_b_s: np.ndarray
    """Scale-out bandwidth per GPU, one direction, bytes/s."""
    scale_out_latency_s: np.ndarray
    micro: np.ndarray
    """Micro-batches per token cycle (``PP``, or 1 for a layer split:
    :func:`predictors.physics.micro_batches`)."""

    @staticmethod
    def of(frame: pl.DataFrame) -> LayoutInputs:
        """The layout of every row of *frame* (missing columns: TP = gpu_count, PP = DP = 1)."""

        def col(name: str, default: float | str) -> np.ndarray:
            fallback = (
                frame[default].cast(pl.Float64).fill_null(np.nan).to_numpy()
                if isinstance(default, str)
                else np.full(frame.height, default)
            )
            if name not in frame.columns:
                return fallback
            values = frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()
            return np.where(np.isnan(values), fallback, values)

        tp = col("tensor_parallel", "gpu_count")
        domain = np.maximum(col("nvlink_domain_gpus", 1.0), col("node_gpus", 8.0))
        # a frame without a known layout (measurement tables) is one TP group over one fabric
        known = col("layout_known", 0.0) > 0 if "layout_known" in frame.columns else False
        layers = col("num_layers", 1.0)
        moe = col("is_moe", 0.0) > 0
        dense = np.minimum(np.nan_to_num(col("first_k_dense", 0.0)), layers)
        pp = col("pipeline_parallel", 1.0)
        micro = col("micro_batches", np.nan)
        return LayoutInputs(
            tp=tp,
            pp=pp,
            dp=col("data_parallel", 1.0),
            moe_layers=np.where(moe, layers - dense, 0.0),
            experts_per_token=np.nan_to_num(col("num_experts_per_tok", 1.0), nan=1.0),
            domain=np.where(known, domain, np.maximum(domain, tp)),
            scale_out_b_s=col("scale_out_gbit_s", DEFAULT_SCALE_OUT_GBIT_S) / 8.0 * 1e9,
            scale_out_latency_s=col("scale_out_latency_us", DEFAULT_SCALE_OUT_LATENCY_US) * 1e-6,
            micro=np.where(np.isnan(micro), pp, micro),
        )


def layout_comm_s(
    lay: LayoutInputs,
    batch: np.ndarray,
    hidden: np.ndarray,
    layers: np.ndarray,
    interconnect_b_s: np.ndarray,
    alpha_s: float,
    scale_out_overhead_s: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """(TP all-reduces, all-to-all + pipeline transfers) of one token cycle of rows with layout
    *lay*, seconds (the formulas of :mod:`predictors.estimators.step`; all-reduce latency
    *alpha_s*, bidirectional interconnect *interconnect_b_s* in bytes/s). A message that leaves
    the NVLink domain pays the network's latency (catalog ``scale_out_latency_us``) plus
    *scale_out_overhead_s*, the collective library's own cost per cross-node step (proxy threads,
    host-side synchronisation), fitted with the other step parameters."""
    tp, pp, dp = lay.tp, lay.pp, lay.dp
    net_latency = lay.scale_out_latency_s + scale_out_overhead_s
    stage = tp * dp
    ic = interconnect_b_s
    net_bidir = 2.0 * lay.scale_out_b_s
    # inside a domain a GPU reaches its peers over NVLink or, where faster, the network: a larger
    # domain never moves traffic onto a slower link
    in_domain = np.maximum(ic / 2.0, lay.scale_out_b_s)
    cross_tp = tp > lay.domain
    ic_tp = np.where(cross_tp, np.minimum(ic, net_bidir), ic)
    alpha_tp = alpha_s + np.where(cross_tp, net_latency, 0.0)
    ring = 2.0 * (tp - 1.0) / np.maximum(tp, 1.0)
    # a micro-batch holds at least one sequence (physics.micro_batches: min(PP, b))
    rank_tokens = batch / (np.minimum(lay.micro, np.maximum(batch, 1.0)) * dp)
    allreduce = alpha_tp + ring * (rank_tokens * hidden * ACTIVATION_BYTES) / ic_tp
    dense_layers = layers - lay.moe_layers
    tp_comm = np.where(
        tp > 1.0,
        np.where(dp > 1.0, layers * allreduce + dense_layers * allreduce, layers * 2.0 * allreduce),
        0.0,
    )
    # attention DP: dispatch + combine all-to-all per MoE layer over the stage's GPUs
    sent = rank_tokens / tp * lay.experts_per_token * hidden * ACTIVATION_BYTES
    inside = np.minimum(stage, lay.domain)
    outside = np.maximum(stage - lay.domain, 0.0)
    one_way = sent * (inside - 1.0) / stage / in_domain + sent * outside / stage / (
        lay.scale_out_b_s
    )
    a2a_alpha = alpha_s + np.where(outside > 0.0, net_latency, 0.0)
    ep_comm = np.where(
        (dp > 1.0) & (stage > 1.0), lay.moe_layers * 2.0 * (a2a_alpha + one_way), 0.0
    )
    # pipeline: PP - 1 stage boundaries per token cycle, those leaving a domain over the network;
    # a stage smaller than a domain is never split over two: floor(D / stage) stages per domain
    boundaries = np.maximum(pp - 1.0, 0.0)
    per_domain = np.maximum(np.floor(lay.domain / np.maximum(stage, 1.0)), 1.0)
    packed = np.maximum(np.ceil(np.maximum(pp, 1.0) / per_domain) - 1.0, 0.0)
    crossing = np.where(stage >= lay.domain, boundaries, np.minimum(packed, boundaries))
    hop = rank_tokens * hidden * ACTIVATION_BYTES
    pp_comm = (boundaries - crossing) * (alpha_s + hop / in_domain) + crossing * (
        alpha_s + net_latency + hop / lay.scale_out_b_s
    )
    return np.asarray(tp_comm), np.asarray(ep_comm + pp_comm)
