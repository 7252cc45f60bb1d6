"""The per-unit inputs of the disaggregated serving model (:mod:`predictors.serving.disagg`):
each pool's arrays, the KV transfer, the prefill queue's settings, and row selection."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from predictors.serving.curves import FloatArray, ServingCurves, rising_throughput


@dataclass(frozen=True)
class PrefillPool:
    """Per-row inputs of the prefill side (each field (N,))."""

    workers: FloatArray
    gpus_per_worker: FloatArray
    service_s: FloatArray
    """s: seconds one prompt occupies a server (the queue's service time,
    :meth:`DisaggSettings.service_s`)."""
    latency_s: FloatArray
    """T_1: TTFT of a lone prompt on one worker (the predictors' TTFT at batch 1), >= s."""
    servers: FloatArray
    """c: servers of the queue (:meth:`DisaggSettings.servers`)."""
    compute_s: FloatArray
    """c_p: the prompt's compute on one worker (FLOPs at the prefill MFU + TP all-reduce)."""
    ranks: FloatArray
    """Attention data-parallel ranks per worker."""
    peak_s: FloatArray
    """A prompt's FLOPs at the peak of all the worker's GPUs (:func:`predictors.physics.
    prefill_peak_s`): no setting lets a worker average less per prompt."""
    busy_power_w: FloatArray
    """Power per GPU while the worker runs a prefill pass (in [idle, TDP])."""
    idle_w: FloatArray
    tdp_w: FloatArray


@dataclass(frozen=True)
class PowerBands:
    """Per-row bounds of the power predictor's interval on both pools (W per GPU, clipped to
    [idle, TDP] and holding the point: ``lo <= point <= hi``), as an aggregated replica's serving
    curves carry them (:class:`predictors.serving.grid.ServingTable`)."""

    prefill_busy_lo_w: FloatArray
    """(N,) lower bound of :attr:`PrefillPool.busy_power_w`."""
    prefill_busy_hi_w: FloatArray
    """(N,) upper bound of :attr:`PrefillPool.busy_power_w`."""
    decode_lo_w: FloatArray
    """(N, G) lower bound of the decode worker's power curve on the batch grid."""
    decode_hi_w: FloatArray
    """(N, G) upper bound of the decode worker's power curve on the batch grid."""


@dataclass(frozen=True)
class DisaggSettings:
    """The prefill queue's three modelling choices (the model has no fitted parameter; these are
    chosen among :data:`SETTING_CANDIDATES` inside training folds, docs/serving-accuracy.md).

    * ``lone_share`` κ: a prompt occupies a server for ``s = max(c_p, κ · T_1)`` (κ = 0: its
      compute only, the engine's fixed latency overlapping other prompts; κ = 1: the whole
      lone-prompt TTFT, nothing overlaps);
    * ``per_rank``: the servers are the attention-DP ranks of the workers (``x · DP``, each
      rank prefills its own prompts) rather than the workers (``x``);
    * ``waves``: how a closed-loop benchmark's prompts reach the prefill queue
      (:func:`predictors.serving.disagg.closed_loop_point`, the measured rows only; the planner
      plans open-loop Poisson traffic and never reads it). False: as a Poisson stream at the
      loop's rate (the M/D/c wait); True: in synchronised waves of all ``N`` users, as a loop
      of equal-length requests started together stays (prompts that finish prefill in one batch
      decode, finish and return together), each wave queueing ``N / c`` prompts per server.
    """

    lone_share: float = 0.0
    per_rank: bool = False
    waves: bool = False

    def service_s(
        self, compute_s: FloatArray, latency_s: FloatArray, ranks: FloatArray, peak_s: FloatArray
    ) -> FloatArray:
        """s = max(c_p, κ · T_1, r · p): with ``r`` servers per worker (its DP ranks when
        ``per_rank``, else 1) a worker's prompts never average less than ``p``, their FLOPs at
        the peak of all its GPUs."""
        per_worker = ranks if self.per_rank else np.ones_like(ranks)
        result: FloatArray = np.maximum(
            np.maximum(compute_s, self.lone_share * latency_s), per_worker * peak_s
        )
        return result

    def servers(self, workers: FloatArray, ranks: FloatArray) -> FloatArray:
        """c = x · DP when ``per_rank``, else x."""
        result: FloatArray = workers * ranks if self.per_rank else np.asarray(workers)
        return result


#: The candidates of :class:`DisaggSettings`: κ and ``per_rank`` fixed before any evaluation,
#: ``waves`` added after seeing held-out TTFT (docs/serving-accuracy.md, "Decided after seeing").
SETTING_CANDIDATES: tuple[DisaggSettings, ...] = tuple(
    DisaggSettings(k, r, w)
    for w in (False, True)
    for k in (0.0, 0.25, 0.5, 1.0)
    for r in (False, True)
)

#: The settings of the shipped model: :data:`SETTING_CANDIDATES`' choice on every measured
#: disaggregated row whose configuration is fully stated (as the shipped predictors are trained
#: on every row; the held-out check re-chooses inside each fold), reported by
#: ``tools/serving_accuracy.py`` in docs/serving-accuracy.md (a test checks they agree).
DEFAULT_SETTINGS = DisaggSettings(0.0, True, True)


def with_settings(t: DisaggTable, settings: DisaggSettings) -> DisaggTable:
    """*t* with its prefill queue under *settings*."""
    p = t.prefill
    pool = replace(
        p,
        service_s=settings.service_s(p.compute_s, p.latency_s, p.ranks, p.peak_s),
        servers=settings.servers(p.workers, p.ranks),
    )
    return replace(t, prefill=pool)


@dataclass(frozen=True)
class KvTransfer:
    """Per-row KV-cache transfer from the prefill to the decode worker (each field (N,))."""

    bytes_per_request: FloatArray
    links: FloatArray
    """Parallel GPU-to-GPU links the transfer uses."""
    link_bytes_per_s: FloatArray
    """One-way bandwidth of one link, bytes/s."""
    latency_s: FloatArray
    nvlink: npt.NDArray[np.bool_]
    """True where the transfers stay inside an NVLink domain (one GPU type, and a prefill worker
    fits one domain beside a decode worker)."""

    @property
    def seconds(self) -> FloatArray:
        """t_kv = latency + bytes / (links · link bandwidth)."""
        result: FloatArray = self.latency_s + self.bytes_per_request / (
            self.links * self.link_bytes_per_s
        )
        return result


@dataclass(frozen=True)
class DisaggTable:
    """Everything the model needs per unit; built by :func:`predictors.serving.disagg_build.
    disagg_curves`. Rows with a non-empty ``error`` are refused (their numbers are meaningless)."""

    prefill: PrefillPool
    decode: ServingCurves
    """Per decode worker, c_p = 0 (no prefill chunks in its steps)."""
    decode_workers: FloatArray
    decode_gpus_per_worker: FloatArray
    decode_tdp_w: FloatArray
    kv: KvTransfer
    output_tokens: FloatArray
    error: list[str]
    """Per unit: '' or the one-line reasons it cannot run ('; '-joined)."""
    in_domain: list[bool]
    """Per unit: both sides inside the predictors' training domain."""
    power_bands: PowerBands | None = None
    """The pools' power intervals (None: the predictors give none)."""

    @property
    def rows(self) -> int:
        """Number of units."""
        return int(self.decode_workers.size)

    @property
    def ok(self) -> npt.NDArray[np.bool_]:
        """(N,) True where the unit is not refused."""
        return np.asarray([e == "" for e in self.error], dtype=bool)

    @property
    def gpus(self) -> FloatArray:
        """GPUs of each unit: x · g_p + y · g_d."""
        result: FloatArray = (
            self.prefill.workers * self.prefill.gpus_per_worker
            + self.decode_workers * self.decode_gpus_per_worker
        )
        return result

    @property
    def idle_w(self) -> FloatArray:
        """Unit power with no load (every GPU idle), W."""
        result: FloatArray = (
            self.prefill.workers * self.prefill.gpus_per_worker * self.prefill.idle_w
            + self.decode_workers * self.decode_gpus_per_worker * self.decode.idle_w
        )
        return result


def decode_curves(c: ServingCurves) -> ServingCurves:
    """*c* (aggregated curves of the decode worker's configuration) without prefill chunks."""
    zero = np.zeros(c.rows)
    return rising_throughput(replace(c, prefill_s=zero, ttft_base_s=zero, comm_s_per_token=zero))


def refused_table(error: list[str]) -> DisaggTable:
    """A table of units that are all refused (*error* non-empty for each): zero capacity."""
    from predictors.serving.curves import BATCH_GRID

    n = len(error)
    zero, one = np.zeros(n), np.ones(n)
    grid = np.asarray(BATCH_GRID, dtype=np.float64)
    curves = ServingCurves(
        grid, np.ones((n, grid.size)), np.zeros((n, grid.size)), zero, zero, zero, zero, one, zero
    )
    return DisaggTable(
        prefill=PrefillPool(one, one, one, one, one, one, one, zero, zero, zero, zero),
        decode=curves,
        decode_workers=one,
        decode_gpus_per_worker=one,
        decode_tdp_w=zero,
        kv=KvTransfer(zero, one, one, zero, np.zeros(n, dtype=bool)),
        output_tokens=one,
        error=error,
        in_domain=[False] * n,
    )


_Rows = TypeVar("_Rows", PrefillPool, ServingCurves, KvTransfer, PowerBands)


def _sub(obj: _Rows, idx: npt.NDArray[np.int64]) -> _Rows:
    """*obj* (a dataclass of per-row arrays) at rows *idx* (a shared batch grid kept)."""
    arrays = {
        f.name: getattr(obj, f.name)[idx]
        for f in fields(obj)
        if isinstance(getattr(obj, f.name), np.ndarray) and f.name != "batch"
    }
    return replace(obj, **arrays)


def take_units(t: DisaggTable, idx: npt.NDArray[np.int64]) -> DisaggTable:
    """The units *idx* of *t*."""

    return replace(
        t,
        prefill=_sub(t.prefill, idx),
        decode=_sub(t.decode, idx),
        kv=_sub(t.kv, idx),
        decode_workers=t.decode_workers[idx],
        decode_gpus_per_worker=t.decode_gpus_per_worker[idx],
        decode_tdp_w=t.decode_tdp_w[idx],
        output_tokens=t.output_tokens[idx],
        error=[t.error[i] for i in idx],
        in_domain=[t.in_domain[i] for i in idx],
        power_bands=None if t.power_bands is None else _sub(t.power_bands, idx),
    )
