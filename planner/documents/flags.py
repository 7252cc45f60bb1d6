"""Uncertainty flags of a plan's allocations (issue 20, item 7): the rule and its documents.

An allocation is flagged when the upper end of its candidate's 90 % ITL interval at capacity
(``itl_s_hi``) exceeds its model entry's ITL SLA, or when its GPU lies outside the predictors'
training domain (``in_domain`` false). :func:`flag_reasons` is that rule on plain values, so the
plan's flags (:mod:`planner.analysis.flags`) and the check of a saved plan
(:mod:`planner.documents.verify`) apply the same one. Each flag also says what the scenario with
``robust: true`` deploys for the entry instead, and the sweep's probability that the plan meets
the entry's SLA when a sweep was run (``wattgpu report --sweep``, ``wattgpu sweep``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from planner.documents.base import Document
from planner.inputs import layout_text, ms_over

RULE = (
    "an allocation whose candidate's upper 90 % ITL bound at capacity (a replica carrying the "
    "most load it is planned for) exceeds its entry's ITL SLA, or whose GPU lies outside the "
    "predictors' training domain"
)

NOT_COMPUTED = "not computed (see robust_note)"
"""``robust_instead`` when the robust alternative was not computed."""

RobustResolve = Literal[
    "not_needed", "already_robust", "flagged_entries", "all_entries", "not_computed"
]


def flag_reasons(gpu: str, itl_s_hi: float | None, itl_sla_s: float, in_domain: bool) -> list[str]:
    """Why an allocation on *gpu* is flagged (:data:`RULE`); empty when it is not."""
    reasons = []
    if itl_s_hi is not None and itl_s_hi > itl_sla_s:
        reasons.append(
            "ITL upper 90 % bound {} ms > SLA {} ms at capacity".format(
                *ms_over(itl_s_hi, itl_sla_s)
            )
        )
    if not in_domain:
        reasons.append(f"{gpu} is outside the predictors' training domain")
    return reasons


def layout_of(tp: int, pp: int | None, dp: int | None, ep: int | None) -> str:
    """:func:`planner.inputs.layout_text` of degrees an older plan may leave empty (1)."""
    return layout_text(tp, pp or 1, dp or 1, ep or 1)


class DeploymentDocument(Document):
    """One deployment: GPU type, TP degree, replicas and the rest of its layout."""

    gpu: str
    tp: int
    replicas: int
    pipeline_parallel: int | None = None
    """Pipeline stages of one replica (null in plans written before layouts: 1)."""
    data_parallel: int | None = None
    """Attention data-parallel ranks of one replica (null in older plans: 1)."""
    expert_parallel: int | None = None
    """Expert-parallel degree of the MoE layers (null in older plans: 1)."""
    pools: str | None = Field(None, exclude_if=lambda v: v is None)
    """A disaggregated unit's pools (``1× H100-SXM5-80GB TP4 → 2× H100-SXM5-80GB TP8``; its
    ``gpu`` and ``tp`` are its decode pool's); left out for an aggregated replica."""

    @property
    def layout(self) -> str:
        """The layout as the report's TP column shows it (``8``, ``8×PP2``)."""
        return layout_of(self.tp, self.pipeline_parallel, self.data_parallel, self.expert_parallel)


class FlagDocument(Document):
    """An allocation whose ITL interval misses the SLA or whose GPU is out of domain."""

    name: str
    gpu: str
    """The allocation's GPU type; a disaggregated unit's pools (``1× H100 TP8 → 2× H100 TP8``)."""
    tp: int
    replicas: int
    itl_s_hi_at_capacity: float | None
    itl_sla_s: float
    in_domain: bool
    reasons: list[str]
    robust_instead: str
    """What the scenario with ``robust: true`` deploys for this model entry (or why that is not
    known: not computed, no plan)."""
    sla_probability: float | None
    """The sweep's probability that the plan meets this entry's SLA (None: no sweep, no draws)."""
    robust_deployments: list[DeploymentDocument] | None = None
    """The deployments of ``robust_instead`` (None when the robust plan is not known)."""
    pipeline_parallel: int | None = None
    """Pipeline stages of the allocation's replicas (null in plans written before: 1); with
    ``tp``, ``data_parallel`` and ``expert_parallel`` the flag names one allocation."""
    data_parallel: int | None = None
    """Attention data-parallel ranks of the allocation's replicas (null in older plans: 1)."""
    expert_parallel: int | None = None
    """Expert-parallel degree of the allocation's replicas (null in older plans: 1)."""

    @property
    def layout(self) -> str:
        """The layout as the report's TP column shows it (``8``, ``8×PP2``)."""
        return layout_of(self.tp, self.pipeline_parallel, self.data_parallel, self.expert_parallel)

    @property
    def is_unit(self) -> bool:
        """True for a disaggregated unit, whose ``gpu`` names its pools with their layouts."""
        return " → " in self.gpu

    @property
    def degrees(self) -> tuple[int, int, int, int]:
        """(TP, PP, DP, EP) of the flagged allocation (1 where an older plan has none)."""
        return (
            self.tp,
            self.pipeline_parallel or 1,
            self.data_parallel or 1,
            self.expert_parallel or 1,
        )


class UncertaintyFlagsDocument(Document):
    """The flags of a plan and how the ``robust: true`` alternative was found."""

    rule: str
    """Which allocations are flagged (:data:`RULE`)."""
    robust_resolve: RobustResolve
    """How ``robust_instead`` was found: ``not_needed`` (nothing flagged), ``already_robust``
    (the plan is planned with ``robust: true``), ``flagged_entries`` (the flagged model entries
    re-solved alone: nothing links the entries), ``all_entries`` (the whole scenario re-solved)
    or ``not_computed`` (see ``robust_note``)."""
    robust_note: str
    """``robust_resolve`` in words."""
    sla_probability_draws: int | None
    """Draws of the sweep the SLA probabilities come from (None: no sweep)."""
    flags: list[FlagDocument]
    """The flagged allocations, in plan order."""
