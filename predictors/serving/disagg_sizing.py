"""Worker counts for measured disaggregated runs that do not state them.

Most of aiconfigurator's disaggregated rows (1,172 of 1,418 in ``../shared``) give each side's
per-worker layout but leave the prefill and decode worker counts empty. Reading them as one
prefill and one decode worker is often impossible: at 4,096-8,192 users a single decode worker
cannot hold the loop's sequences in memory, and the model then makes the surplus users wait
before prefill (:func:`predictors.serving.disagg.closed_loop_point`), tens of seconds that no
measured row shows. :func:`size_unstated` reads such a row as the smallest unit that can run the
loop, the way a disaggregated deployment is sized (rate matching, as NVIDIA's aiconfigurator and
Dynamo's planner size the pools):

* **decode workers** ``y = ⌈N / B⌉``: enough workers for the loop's ``N`` sequences at the decode
  worker's batch limit ``B`` (memory and the engine's maximum batch, ``ServingCurves.max_batch``);
* **prefill workers** ``x``: the fewest whose pool keeps up with the decode pool, i.e. whose
  utilisation ``λ · s / c`` is at most 1 at the loop's rate ``λ`` with a prefill pool that never
  queues (``x = N``: every user's prompt has a server), where ``s`` is the prefill service time and
  ``c`` the servers (:class:`predictors.serving.disagg_table.DisaggSettings`), so ``x = ⌈λ · s /
  (c / x)⌉``, at least 1 and at most ``N``.

No measured latency or throughput enters the rule; it has no fitted parameter. Rows that state
their counts, and refused units, keep theirs.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt

from predictors.serving.curves import FloatArray
from predictors.serving.disagg import closed_loop_point
from predictors.serving.disagg_table import DisaggTable


def _with_workers(t: DisaggTable, prefill: FloatArray, decode: FloatArray) -> DisaggTable:
    """*t* with *prefill* and *decode* workers per unit, the queue's servers scaled with the
    prefill workers (``c / x`` servers per worker is the setting's, unchanged)."""
    per_worker = t.prefill.servers / t.prefill.workers
    pool = replace(t.prefill, workers=prefill, servers=per_worker * prefill)
    return replace(t, prefill=pool, decode_workers=decode)


def size_unstated(
    t: DisaggTable,
    concurrency: FloatArray,
    unstated: npt.NDArray[np.bool_],
    waves: bool = False,
) -> DisaggTable:
    """*t* (under its prefill-queue settings, :func:`predictors.serving.disagg.with_settings`)
    with the units where *unstated* is True sized for their closed loop of *concurrency* users
    (module docstring); *waves* as in :func:`predictors.serving.disagg.closed_loop_point`."""
    n = np.maximum(np.asarray(concurrency, dtype=np.float64), 1.0)
    pick = np.asarray(unstated, dtype=bool) & t.ok
    if not pick.any():
        return t
    limit = np.maximum(t.decode.max_batch, 1.0)
    decode = np.where(pick, np.maximum(np.ceil(n / limit), 1.0), t.decode_workers)
    # the loop's rate when prefill never queues: a server for every user's prompt
    per_worker = t.prefill.servers / t.prefill.workers
    free = np.where(pick, np.ceil(n / per_worker), t.prefill.workers)
    pt, _ = closed_loop_point(_with_workers(t, free, decode), n, waves)
    with np.errstate(invalid="ignore"):
        need = np.ceil(pt.requests_per_s * t.prefill.service_s / per_worker - 1e-9)
    need = np.clip(np.where(np.isfinite(need), need, 1.0), 1.0, np.maximum(free, 1.0))
    prefill = np.where(pick, need, t.prefill.workers)
    return _with_workers(t, prefill, decode)


__all__ = ["size_unstated"]
