"""Uncertainty draws: error sigmas from the model card and quasi-random standard normals.

The predictors' errors are drawn the way they are correlated in the held-out residuals
(:mod:`predictors.training.residuals`, model card key ``residuals``): per target (ITL, power,
TTFT) one GPU effect per GPU type (sd from the leave-one-GPU-out split, of the GPU's vendor
when the card has it), one LLM effect per LLM (sd from the leave-one-LLM-out split) and one row
effect per candidate (the row sd of the candidate's batch bucket, leave-one-GPU-out). On top:
one arrival-rate factor per model entry and one idle-power factor per GPU type (log-sds from the
``sweep:`` block). All are log-normal factors centred on the point prediction.

The standard normals come from a scrambled Sobol sequence or a Latin hypercube
(``scipy.stats.qmc``), seeded from ``numpy.random.SeedSequence(seed)``, mapped through the
normal quantile function. They are drawn once, in the process that starts the sweep, so every
engine and worker count sees the same numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from predictors.core.errors import WattgpuError

TARGETS: tuple[str, ...] = ("itl", "power", "ttft")
GPU_SPLIT = "logo"
LLM_SPLIT = "lolo"
LIGHT_MAX_BATCH = 8
"""Candidates with an operating batch up to this use the card's ``light`` row sd."""
_U_EPS = 1e-12
SOBOL_MAX_DIMS = 21_201
"""scipy's Sobol direction numbers cover this many dimensions."""


@dataclass(frozen=True)
class Sigmas:
    """Log-sds of one target: per GPU type, per LLM (one value) and per candidate row."""

    gpu_sd: dict[str, float]
    llm_sd: float
    row_sd_light: float
    row_sd_heavy: float


def _bucket(split: dict[str, Any], vendor: str | None) -> dict[str, Any]:
    by_vendor = split.get("by_vendor", {})
    return by_vendor.get(vendor, split) if vendor else split


def sigmas_from_card(card: dict[str, Any], vendors: dict[str, str]) -> dict[str, Sigmas]:
    """Per target the :class:`Sigmas` of the GPU types in *vendors* (GPU id -> vendor)."""
    residuals = card.get("residuals")
    fix = (
        "a model directory written by `wattgpu train` (--models, $WATTGPU_MODELS) has none "
        "until `wattgpu evaluate --data DATA --output ACCURACY.md --metrics-to DIR` adds them "
        "(in a checkout also `python tools/card_residuals.py --card DIR/model_card.json`)"
    )
    if not isinstance(residuals, dict) or not isinstance(residuals.get("targets"), dict):
        raise WattgpuError(f"model card: no residuals (key 'residuals'); {fix}")
    out: dict[str, Sigmas] = {}
    for target in TARGETS:
        per_split = residuals["targets"].get(target)
        if not per_split or GPU_SPLIT not in per_split or LLM_SPLIT not in per_split:
            raise WattgpuError(
                f"model card: residuals.targets.{target} lacks the {GPU_SPLIT}/{LLM_SPLIT} "
                f"splits; {fix}"
            )
        logo, lolo = per_split[GPU_SPLIT], per_split[LLM_SPLIT]
        gpu_sd = {g: float(_bucket(logo, v)["all"]["gpu_sd"]) for g, v in vendors.items()}
        rows = logo.get("all", {})
        light = logo.get("light", rows)
        heavy = logo.get("heavy", rows)
        out[target] = Sigmas(
            gpu_sd=gpu_sd,
            llm_sd=float(lolo["all"]["llm_sd"]),
            row_sd_light=float(light["row_sd"]),
            row_sd_heavy=float(heavy["row_sd"]),
        )
    return out


def _sampler(kind: str, dims: int, seed: int) -> Any:
    from scipy.stats import qmc

    rng = np.random.default_rng(np.random.SeedSequence(seed))
    if kind == "sobol":
        return qmc.Sobol(d=dims, scramble=True, seed=rng)
    if kind == "lhs":
        return qmc.LatinHypercube(d=dims, seed=rng)
    raise WattgpuError(f"sweep.sampler: unknown sampler {kind!r}; use sobol or lhs")


def sobol_problem(sampler: str, dims: int) -> str | None:
    """Why *sampler* cannot draw *dims* dimensions (Sobol above :data:`SOBOL_MAX_DIMS`), with
    the fix; None when it can."""
    if sampler != "sobol" or dims <= SOBOL_MAX_DIMS:
        return None
    return (
        f"sobol covers at most {SOBOL_MAX_DIMS:,} dimensions and this scenario's draws have "
        f"{dims:,} (three per feasible candidate, plus GPU, LLM, arrival and idle effects); "
        "set sweep.sampler: lhs (--set sweep.sampler=lhs)"
    )


def standard_normals(n: int, dims: int, seed: int, sampler: str) -> np.ndarray:
    """An (n, dims) array of quasi-random standard normals (see module doc)."""
    from scipy.stats import norm

    if n == 0 or dims == 0:
        return np.zeros((n, dims))
    too_many = sobol_problem(sampler, dims)
    if too_many is not None:
        raise WattgpuError(f"sweep.sampler: {too_many}")
    engine = _sampler(sampler, dims, seed)
    if sampler == "sobol":
        # Sobol points are balanced in powers of two: draw the next one, keep the first n.
        u = engine.random_base2(m=max(0, math.ceil(math.log2(n))))[:n]
    else:
        u = engine.random(n)
    return np.asarray(norm.ppf(np.clip(u, _U_EPS, 1 - _U_EPS)), dtype=np.float64)
