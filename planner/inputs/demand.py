"""One model entry's demand on the fleet: its load per period and its latency SLA."""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.inputs.failover import Failover
from planner.inputs.validation import fail, non_negative


@dataclass(frozen=True)
class ModelDemand:
    """One scenario model entry: its load per period and its latency SLA."""

    name: str
    """Unique key of the scenario entry (the same model may appear twice under two names)."""
    model: str
    """Catalog LLM id."""
    requests_per_s_by_period: tuple[float, ...]
    """Mean arrival rate in every period (requests/s)."""
    itl_sla_s: float
    """Inter-token latency SLA (s)."""
    ttft_sla_s: float | None = None
    """Time-to-first-token SLA (s), already applied by the capacity model; reported only."""
    min_replicas: int = 0
    """Minimum number of replicas of this model over all deployments (availability)."""
    input_tokens: float = 0.0
    """Mean prompt length (tokens); reported only."""
    output_tokens: float = 0.0
    """Mean completion length (tokens); reported only."""
    precision: str | None = None
    """Weight precision the candidates were predicted at (provenance; reported only)."""
    failover: Failover | None = None
    """Capacity that must survive any k lost replicas or nodes (None: no failover;
    :mod:`planner.inputs.failover`)."""
    sla_percentile: float | None = None
    """Latency percentile the ITL and TTFT SLAs refer to (None: the mean); the candidates'
    capacity was computed at it, so it is recorded only."""

    def __post_init__(self) -> None:
        where = f"model {self.name!r}"
        if not self.name:
            raise fail("models", "every model needs a non-empty name")
        if not self.requests_per_s_by_period:
            raise fail(where, "requests_per_s_by_period is empty; give one value per period")
        for value in self.requests_per_s_by_period:
            non_negative(where, requests_per_s=value)
        non_negative(where, input_tokens=self.input_tokens, output_tokens=self.output_tokens)
        non_negative(where, ttft_sla_s=self.ttft_sla_s)
        if not math.isfinite(self.itl_sla_s) or self.itl_sla_s <= 0:
            raise fail(where, f"itl_sla_s must be > 0, got {self.itl_sla_s!r}")
        if self.min_replicas < 0:
            raise fail(where, f"min_replicas must be >= 0, got {self.min_replicas}")
        pct = self.sla_percentile
        if pct is not None and not (math.isfinite(pct) and 0 < pct < 100):
            raise fail(where, f"sla_percentile must be in (0, 100) or None, got {pct!r}")
