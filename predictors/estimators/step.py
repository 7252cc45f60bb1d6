"""Analytical decode-step time with a handful of GPU-independent parameters.

One decode step of a batch of ``b`` sequences on ``n`` tensor-parallel GPUs takes::

    t = κ(vendor) · ( layers · o(engine)                          engine overhead (launches, Python)
        + ((bytes / (η_bw(engine) · n · BW))^p + (flops / (η_f · n · F))^p)^(1/p)   memory, compute
        + [n > 1] · layers · 2 · (α + 2 (n − 1)/n · b · hidden · 2 B / IC) )        all-reduces (TP)

``bytes`` = weights read by the step (routed experts touched by the batch for MoE) plus the KV
cache of the batch at its mean context; ``flops`` = 2 · active params · b; ``F`` is the GPU's
dense tensor rate at the row's precision (fp8/fp4/int8 where the GPU has it, 16-bit otherwise);
``BW`` the memory bandwidth and ``IC`` the per-GPU interconnect bandwidth (PCIe 4.0 x16,
64 GB/s, where the catalog has none). The ``p``-norm is a smooth maximum of the memory and compute
times (``p`` = 1: no overlap, ``p`` → ∞: the roofline). ``κ`` is a software-stack factor per GPU
vendor (CUDA = 1, ROCm, Intel), the same for every GPU of a vendor.

The parameters (``η_bw`` ≤ 0.9 and an overhead per layer for each engine family, shrunk towards
shared values so that an engine measured on one GPU only follows the others; ``η_f`` ≤ 0.7;
``p``; ``α``; ``λ`` ≤ 200 µs; ``κ``) are fitted by robust least squares (soft-L1 loss on log
ITL) on every training row, every GPU given the same total weight. None of them belongs to a
GPU, so the fit cannot memorise one: a GPU enters only through BW, F, IC and its vendor, and
the step time is non-increasing in BW, F and IC and non-decreasing in batch, context and
parameters. Because
``η_bw`` ≤ 1, ``t / κ`` is never below the memory-read floor ``bytes / (n · BW)``.

Parallel layouts (``n = TP · PP · DP``, :mod:`predictors.catalog.validity`; ``bytes`` are then
replica-equivalent, :mod:`predictors.physics`). The communication term generalises, with the
``M = min(PP, b)`` micro-batches of ``m = b / M`` sequences (a micro-batch holds at least one
sequence: :func:`predictors.physics.micro_batches`) and ``m / DP`` sequences per attention-DP
rank:

* TP all-reduces of ``(m / DP) · hidden · 2 B`` over the TP GPUs: two per layer with DP 1 (the
  MoE layer's expert outputs are summed by the same all-reduce, as vLLM does with EP = TP), one
  per layer plus one per dense layer with DP > 1. A TP group larger than the NVLink domain
  (:func:`predictors.physics.tp_domain_gpus`) runs at ``min(IC, 2 · scale-out)`` and pays the
  scale-out latency per message: the network's (catalog) plus ``λ``, the collective library's
  own cost per cross-domain message, fitted with the other parameters.
* Attention DP > 1, per MoE layer: dispatch and combine all-to-all of each GPU's ``m / (DP ·
  TP) · k · hidden · 2 B`` to the other ``TP · DP − 1`` GPUs of the stage, the share outside the
  NVLink domain over the scale-out network (``scale_out_gbit_s`` per GPU, its latency).
* PP > 1: ``PP − 1`` activation transfers of ``(m / DP) · hidden · 2 B`` per token cycle, over
  NVLink inside a domain and over the scale-out network where a stage boundary leaves it
  (stages smaller than a domain are packed ``⌊D / stage⌋`` to a domain, never split over two).

With PP = DP = 1 every new factor is 1 and every new term 0, so pure tensor parallelism is
computed exactly as before. The all-to-all and pipeline terms (:attr:`StepTimes.layout_comm`)
are also added to the ITL floor: a layout is never predicted faster than its communication.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import polars as pl

from predictors.estimators.layout_comm import ACTIVATION_BYTES as ACTIVATION_BYTES
from predictors.estimators.layout_comm import LayoutInputs, layout_comm_s
from predictors.physics import ENGINES

#: Ceilings (and floors) of the fitted efficiencies: achieved bandwidth and MFU stay realistic.
ETA_BW_BOUNDS = (0.1, 0.9)
ETA_FLOPS_BOUNDS = (0.25, 0.7)
SMOOTHNESS_BOUNDS = (1.0, 8.0)
#: Latency of one all-reduce, seconds.
ALLREDUCE_LATENCY_BOUNDS = (0.0, 50e-6)
#: The collective library's own latency per message that leaves the NVLink domain, on top of the
#: network's (catalog ``scale_out_latency_us``), seconds.
SCALE_OUT_OVERHEAD_BOUNDS = (0.0, 200e-6)
#: Engine overhead per layer and step, seconds.
LAYER_OVERHEAD_BOUNDS = (0.0, 1e-3)
#: Interconnect assumed where the catalog has none: PCIe 4.0 x16, GB/s.
DEFAULT_INTERCONNECT_GB_S = 64.0
#: Weight of the shrinkage of per-engine η_bw and overhead towards shared values.
SHRINKAGE = 10.0
#: Software-stack factor per GPU vendor, relative to this vendor (fixed at 1).
REFERENCE_VENDOR = "NVIDIA"
VENDOR_FACTOR_BOUNDS = (0.5, 20.0)
#: Engine families: engines without their own rows use the vLLM overhead.
ENGINE_FAMILY: dict[str, str] = {e: e for e in ENGINES} | {"deepspeed": "deepspeed-mii"}

#: Columns (from :func:`predictors.features.add_features`) the step model reads.
STEP_COLUMNS: tuple[str, ...] = (
    "weight_read_bytes",
    "kv_read_bytes",
    "step_flops",
    "peak_flops",
    "memory_bandwidth_gb_s",
    "interconnect_gb_s",
    "gpu_count",
    "num_layers",
    "hidden_size",
    "batch_size",
    "engine",
)


@dataclass
class StepParams:
    """Fitted parameters of the decode-step model (all GPU-independent)."""

    eta_bw: dict[str, float] = field(default_factory=lambda: {"vllm": 0.6})
    """Achieved fraction of peak memory bandwidth, per engine family."""
    eta_flops: float = 0.4
    smoothness: float = 2.0
    allreduce_latency_s: float = 10e-6
    layer_overhead_s: dict[str, float] = field(default_factory=lambda: {"vllm": 5e-5})
    vendor_factor: dict[str, float] = field(default_factory=lambda: {REFERENCE_VENDOR: 1.0})
    scale_out_overhead_s: float = 0.0
    """Collective latency per cross-domain message beyond the network's (0 in cards before it
    was fitted: the earlier model)."""

    def to_json(self) -> dict[str, Any]:
        """The parameters as plain JSON values (stored in the model card)."""
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> StepParams:
        """Parameters read back from :meth:`to_json` output."""
        return StepParams(
            {str(k): float(v) for k, v in data["eta_bw"].items()},
            float(data["eta_flops"]),
            float(data["smoothness"]),
            float(data["allreduce_latency_s"]),
            {str(k): float(v) for k, v in data["layer_overhead_s"].items()},
            {str(k): float(v) for k, v in data["vendor_factor"].items()},
            float(data.get("scale_out_overhead_s", 0.0)),
        )


@dataclass(frozen=True)
class StepInputs:
    """The physical quantities of rows, as float arrays (per replica, all GPUs together)."""

    bytes_read: np.ndarray
    flops: np.ndarray
    bandwidth_b_s: np.ndarray
    peak_flops: np.ndarray
    interconnect_b_s: np.ndarray
    gpus: np.ndarray
    layers: np.ndarray
    hidden: np.ndarray
    batch: np.ndarray
    engine_keys: pl.Series
    """Each row's engine (String); :attr:`engine` is the same as a numpy array."""
    vendor_keys: pl.Series
    """Each row's GPU vendor (String); :attr:`vendor` is the same as a numpy array."""
    layout: LayoutInputs

    @functools.cached_property
    def engine(self) -> np.ndarray:
        """Each row's engine (missing: vLLM)."""
        return self.engine_keys.to_numpy()

    @functools.cached_property
    def vendor(self) -> np.ndarray:
        """Each row's GPU vendor (missing: the reference vendor)."""
        return self.vendor_keys.to_numpy()

    @staticmethod
    def of(frame: pl.DataFrame) -> StepInputs:
        """Inputs of every row of *frame*; missing interconnect = PCIe 4.0 x16 (64 GB/s).

        The inputs of the last frame asked for are kept while that frame lives (a weak
        reference: a prediction asks for them several times; the frames it passes are not
        changed in place, and a frame whose shape changed is read again)."""
        last = _LAST_INPUTS.get("frame")
        if last is not None and last[0]() is frame and last[1] == frame.shape:
            return last[2]
        inputs = StepInputs._of(frame)
        _LAST_INPUTS["frame"] = (weakref.ref(frame), frame.shape, inputs)
        return inputs

    @staticmethod
    def _of(frame: pl.DataFrame) -> StepInputs:

        def col(name: str) -> np.ndarray:
            return frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()

        ic = frame["interconnect_gb_s"].cast(pl.Float64).fill_null(DEFAULT_INTERCONNECT_GB_S)
        return StepInputs(
            bytes_read=col("weight_read_bytes") + col("kv_read_bytes"),
            flops=col("step_flops"),
            bandwidth_b_s=col("memory_bandwidth_gb_s") * 1e9,
            peak_flops=col("peak_flops"),
            interconnect_b_s=ic.to_numpy() * 1e9,
            gpus=col("gpu_count"),
            layers=col("num_layers"),
            hidden=col("hidden_size"),
            batch=col("batch_size"),
            engine_keys=frame["engine"].cast(pl.String).fill_null("vllm"),
            vendor_keys=frame["vendor"].cast(pl.String).fill_null(REFERENCE_VENDOR),
            layout=LayoutInputs.of(frame),
        )

    def memory_floor_s(self) -> np.ndarray:
        """Bytes of the step read once at peak bandwidth of all GPUs (the ITL floor)."""
        return np.asarray(self.bytes_read / (self.gpus * self.bandwidth_b_s))

    def compute_floor_s(self) -> np.ndarray:
        """FLOPs of the step at peak dense FLOPS of all GPUs."""
        return np.asarray(self.flops / (self.gpus * self.peak_flops))


#: The last (frame, inputs) pair of :meth:`StepInputs.of`.
_LAST_INPUTS: dict[str, tuple[weakref.ref[pl.DataFrame], tuple[int, int], StepInputs]] = {}


@dataclass(frozen=True)
class StepTimes:
    """Components of the modelled step time, seconds."""

    overhead: np.ndarray
    memory: np.ndarray
    compute: np.ndarray
    core: np.ndarray
    comm: np.ndarray

    vendor_factor: np.ndarray
    layout_comm: np.ndarray
    """The all-to-all and pipeline part of ``comm`` (0 for pure TP), seconds."""

    @property
    def total(self) -> np.ndarray:
        """Modelled step time, seconds: (overhead + core + all-reduces) x vendor factor."""
        return np.asarray((self.overhead + self.core + self.comm) * self.vendor_factor)


def _mapped(keys: pl.Series, value_of: Callable[[str], float]) -> np.ndarray:
    """``value_of(key)`` for every row's key (a String series), computed once per distinct key
    (hash lookups, no sort of the string column)."""
    column = keys
    table = {k: float(value_of(k)) for k in column.unique().drop_nulls().to_list()}
    return column.replace_strict(table, default=np.nan, return_dtype=pl.Float64).to_numpy()


def _per_engine(values: dict[str, float], engine: pl.Series) -> np.ndarray:
    """The value of each row's engine family (vLLM's for families without their own)."""
    default = values.get("vllm", 0.0)
    return _mapped(engine, lambda e: values.get(ENGINE_FAMILY.get(e, "vllm"), default))


def unseen_vendor_factor(params: StepParams) -> float:
    """κ of a vendor no training row measured: the geometric mean of the fitted vendors' (the
    reference's 1 among them), the software stack of an average measured vendor. It was 1, the
    reference's, so a user's accelerator of an unmeasured vendor was predicted with CUDA's
    efficiency and faster than an AMD GPU stronger in every spec (fuzz round 31; AMD is fitted
    at 1.89, Intel at 2.91)."""
    factors = list(params.vendor_factor.values()) or [1.0]
    return float(np.exp(np.mean(np.log(factors))))


def _vendor_factor(params: StepParams, vendor: pl.Series) -> np.ndarray:
    unseen = unseen_vendor_factor(params)
    return _mapped(vendor, lambda v: params.vendor_factor.get(v, unseen))


def step_times(
    params: StepParams,
    x: StepInputs,
    per_row: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> StepTimes:
    """Modelled decode-step time of every row (see the module docstring).

    *per_row* (η_bw, overhead per layer, vendor factor of every row) skips the table look-ups.
    """
    if per_row is None:
        per_row = (
            _per_engine(params.eta_bw, x.engine_keys),
            _per_engine(params.layer_overhead_s, x.engine_keys),
            _vendor_factor(params, x.vendor_keys),
        )
    eta_bw, overhead_per_layer, vendor_factor = per_row
    memory = x.memory_floor_s() / eta_bw
    compute = x.compute_floor_s() / params.eta_flops
    p = params.smoothness
    # scale before the power to avoid overflow: max · ‖(m, c) / max‖_p
    top = np.maximum(memory, compute)
    with np.errstate(invalid="ignore", divide="ignore"):
        core = top * ((memory / top) ** p + (compute / top) ** p) ** (1.0 / p)
    tp_comm, layout_comm = layout_comm_s(
        x.layout,
        x.batch,
        x.hidden,
        x.layers,
        x.interconnect_b_s,
        params.allreduce_latency_s,
        params.scale_out_overhead_s,
    )
    overhead = x.layers * overhead_per_layer
    comm = tp_comm + layout_comm
    return StepTimes(overhead, memory, compute, core, comm, vendor_factor, layout_comm)


def fit_step_params(frame: pl.DataFrame, itl_s: np.ndarray) -> StepParams:
    """Robust (soft-L1) least squares of log ITL on the step model over all rows of *frame*.

    Rows are weighted so that every GPU carries the same total weight (a GPU with many rows does
    not dominate the fit); engines without rows keep the vLLM overhead.
    """
    from scipy.optimize import least_squares

    x = StepInputs.of(frame)
    y = np.log(itl_s)
    ok = np.isfinite(y) & np.isfinite(x.memory_floor_s()) & np.isfinite(x.compute_floor_s())
    gpu = frame["gpu"].to_numpy() if "gpu" in frame.columns else np.zeros(frame.height)
    _, inverse, counts = np.unique(gpu, return_inverse=True, return_counts=True)
    weight = np.sqrt(1.0 / counts[inverse])
    weight = weight / weight[ok].mean() if ok.any() else weight
    family_of_row = np.array([ENGINE_FAMILY.get(e, "vllm") for e in x.engine.tolist()])
    families = sorted(set(family_of_row[ok].tolist()) | {"vllm"})
    one_hot = np.stack([family_of_row == f for f in families], axis=1).astype(np.float64)
    vendors = sorted(set(x.vendor[ok].tolist()) - {REFERENCE_VENDOR})
    vendor_hot = np.stack(
        [x.vendor == v for v in vendors] or [np.zeros(x.vendor.size, dtype=bool)], axis=1
    ).astype(np.float64)
    nf, nv = len(families), len(vendors)

    def unpack(theta: np.ndarray) -> StepParams:
        eta_bw, overhead, kappa = np.split(np.asarray(theta[4:-2]), [nf, 2 * nf])
        return StepParams(
            {f: float(v) for f, v in zip(families, eta_bw, strict=True)},
            float(theta[0]),
            float(theta[1]),
            float(theta[2]) * 1e-6,
            {f: float(v) * 1e-6 for f, v in zip(families, overhead, strict=True)},
            {REFERENCE_VENDOR: 1.0} | {v: float(k) for v, k in zip(vendors, kappa, strict=True)},
            float(theta[3]) * 1e-6,
        )

    def residual(theta: np.ndarray) -> np.ndarray:
        eta_bw, overhead, kappa = np.split(np.asarray(theta[4:-2]), [nf, 2 * nf])
        per_row = (
            one_hot @ eta_bw,
            one_hot @ (overhead * 1e-6),
            1.0 + vendor_hot @ (kappa - 1.0) if nv else np.ones(x.vendor.size),
        )
        t = step_times(unpack(theta), x, per_row).total
        # shrinkage of the engine families towards shared values: an engine measured on one
        # GPU only cannot tell overhead from bandwidth, and then follows the other engines
        eta0, o0 = theta[-2], theta[-1]
        prior = SHRINKAGE * np.concatenate(
            [np.log(eta_bw / eta0), np.log((overhead + 5.0) / (o0 + 5.0))]
        )
        return np.concatenate([weight[ok] * (np.log(t[ok]) - y[ok]), prior])

    lo = (
        [ETA_FLOPS_BOUNDS[0], SMOOTHNESS_BOUNDS[0], ALLREDUCE_LATENCY_BOUNDS[0] * 1e6]
        + [SCALE_OUT_OVERHEAD_BOUNDS[0] * 1e6]
        + [ETA_BW_BOUNDS[0]] * nf
        + [LAYER_OVERHEAD_BOUNDS[0] * 1e6] * nf
        + [VENDOR_FACTOR_BOUNDS[0]] * nv
        + [ETA_BW_BOUNDS[0], LAYER_OVERHEAD_BOUNDS[0] * 1e6]
    )
    hi = (
        [ETA_FLOPS_BOUNDS[1], SMOOTHNESS_BOUNDS[1], ALLREDUCE_LATENCY_BOUNDS[1] * 1e6]
        + [SCALE_OUT_OVERHEAD_BOUNDS[1] * 1e6]
        + [ETA_BW_BOUNDS[1]] * nf
        + [LAYER_OVERHEAD_BOUNDS[1] * 1e6] * nf
        + [VENDOR_FACTOR_BOUNDS[1]] * nv
        + [ETA_BW_BOUNDS[1], LAYER_OVERHEAD_BOUNDS[1] * 1e6]
    )
    x0 = np.array([0.4, 2.0, 10.0, 20.0] + [0.6] * nf + [50.0] * nf + [1.5] * nv + [0.6, 50.0])
    if not ok.any():
        return unpack(x0)
    sol = least_squares(
        residual,
        x0,
        bounds=(lo, hi),
        loss="soft_l1",
        f_scale=0.3,
        x_scale="jac",
        max_nfev=200,
        ftol=1e-6,
        xtol=1e-6,
        gtol=1e-6,
        tr_solver="lsmr",
    )
    return unpack(np.round(sol.x, 9))
