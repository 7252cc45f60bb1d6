"""Physical baselines the learned predictors must beat, computed on the same rows and splits.

* ``tdp``: power per GPU = TDP (the provisioning rule of thumb).
* ``load_scaled_tdp``: power per GPU = idle + (TDP − idle) · u, where the load ``u`` is the
  fraction of the roofline ridge the batch reaches, ``u = min(1, b / b_ridge)`` and ``b_ridge`` is
  the batch at which compute time equals weight-streaming time (beyond it the GPU is
  compute-bound and assumed to run at TDP).
* ``roofline``: ITL = max(memory time, compute time) of one decode step (:mod:`predictors.physics`).
* ``prefill_roofline``: TTFT = prefill compute of one prompt at 50 % MFU plus one weight read.

All take a frame that already has :func:`predictors.features.add_features` columns.
"""

from __future__ import annotations

import numpy as np
import polars as pl


def tdp_power_w(frame: pl.DataFrame) -> np.ndarray:
    """Power per GPU predicted as the board TDP."""
    return frame["tdp_w"].to_numpy().astype(np.float64)


def load_scaled_tdp_power_w(frame: pl.DataFrame) -> np.ndarray:
    """Power per GPU = idle + (TDP − idle) · min(1, batch / ridge batch)."""
    # b / b_ridge equals compute time / memory time of the step at batch b.
    u = (frame["compute_time_s"] / frame["memory_time_s"]).clip(0.0, 1.0).fill_null(1.0).to_numpy()
    tdp = frame["tdp_w"].to_numpy().astype(np.float64)
    idle = frame["idle_power_w"].to_numpy().astype(np.float64)
    return np.asarray(idle + (tdp - idle) * u, dtype=np.float64)


def roofline_itl_s(frame: pl.DataFrame) -> np.ndarray:
    """ITL predicted by the decode-step roofline."""
    return frame["roofline_itl_s"].to_numpy().astype(np.float64)


def prefill_roofline_ttft_s(frame: pl.DataFrame) -> np.ndarray:
    """TTFT predicted by the prefill roofline of one prompt (no queueing)."""
    return frame["prefill_time_s"].to_numpy().astype(np.float64)
