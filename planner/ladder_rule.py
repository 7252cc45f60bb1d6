"""When a pair's ladder of layouts stops (docs/method.md, "Layouts in the planner").

Per (model entry, GPU type) the planner evaluates groups of layouts of ascending GPU count
(:mod:`planner.build`). :func:`group_facts` sums up one evaluated group; :func:`stop_after` says
how many groups the rule evaluates: the groups the caller says were listed (:mod:`planner.build`:
the scenario's ``tp_degrees`` and the offer's stated ``layouts`` where they are evaluated in one
predictor call anyway), then each next one while it lowers the least
GPU power or cost of serving the entry's peak (by the objective, :func:`watched`), and the first
that lowers neither; the pair keeps every group evaluated. The listed groups are all evaluated
because the figure at the peak is not convex along the ladder: a group that lowers neither can
precede one that lowers both (Llama-3.1-8B on H100 at ITL 26 ms: TP 2 no better than TP 1, TP 4
3.6 % less energy than both), and stopping there made a looser SLA give a worse plan. Every
evaluated group is kept because the figure at the peak does not decide the plan either: a group
no cheaper at the peak can be in the optimum beside another (gpt-oss-120b on B200 at 31 req/s:
TP 1 + TP 2, 179,780 $, against 240,373 $ on TP 1 alone) or be what a power cap or an inventory
needs (fuzz round 15; keeping only the improving groups, stop 45, gave both).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from planner.inputs import Candidate, Exclusion

if TYPE_CHECKING:
    from planner.scenario.model import Scenario


class GroupFacts(NamedTuple):
    """Of one evaluated group of layouts: whether one fits in memory, one is feasible, one is
    excluded for a reason no wider replica can change (a scenario rule or a missing price), and
    the least GPU power (W) and GPU cost ($/h) of its feasible layouts serving the entry's peak
    on as few replicas as carry it (inf without one)."""

    fits: bool
    feasible: bool
    final: bool
    watts_at_peak: float = math.inf
    usd_per_hour_at_peak: float = math.inf


def group_facts(group: Sequence[Candidate], peak: float, least: int) -> GroupFacts:
    """*group*'s facts for an entry of peak load *peak* req/s and *least* replicas at least."""
    fits = feasible = final = False
    watts = dollars = math.inf
    for c in group:
        code = c.exclusion
        fits = fits or code != Exclusion.MEMORY
        final = final or code in (Exclusion.RULE, Exclusion.NO_PRICE)
        cap = c.max_requests_per_s_per_replica
        if c.feasible and cap > 0:
            feasible = True
            n = max(least, math.ceil(peak / cap - 1e-9))
            watts = min(watts, n * c.idle_power_w_per_replica + peak * c.energy_j_per_request)
            dollars = min(dollars, n * c.usd_per_hour_per_replica)
    return GroupFacts(fits, feasible, final, watts, dollars)


#: A wider group "improves" when it lowers the least power or cost at the entry's peak by more
#: than this share (round-off and near-ties are no reason to evaluate more layouts).
IMPROVES_BY = 0.01


def watched(scenario: Scenario) -> tuple[bool, bool]:
    """Which figures at the peak a wider group must lower to be worth the next one: (power,
    GPU cost), by the objective (energy and carbon: power; cost: cost; weighted: both)."""
    kind = scenario.objective.minimize
    return kind != "cost", kind in ("cost", "weighted")


def _improving(groups: list[GroupFacts], watch: tuple[bool, bool]) -> list[bool]:
    """Per group: whether it lowers (by :data:`IMPROVES_BY`) the least GPU power or cost at the
    entry's peak of the groups before it, as *watch* says (:func:`watched`)."""
    out = []
    watts = dollars = math.inf
    for g in groups:
        out.append(
            (watch[0] and g.watts_at_peak < watts * (1 - IMPROVES_BY))
            or (watch[1] and g.usd_per_hour_at_peak < dollars * (1 - IMPROVES_BY))
        )
        watts, dollars = min(watts, g.watts_at_peak), min(dollars, g.usd_per_hour_at_peak)
    return out


def stop_after(
    groups: list[GroupFacts], watch: tuple[bool, bool] = (True, True), listed: int = 0
) -> int | None:
    """How many of a pair's evaluated groups (GPU count ascending; their :func:`group_facts`)
    the layout rule evaluates, None when it needs the next group too (module docstring): the
    first *listed* groups (the user's ``tp_degrees`` and stated layouts), every group up to the
    first that fits in memory, on to the first that meets the SLA, then each next one while it
    lowers (by :data:`IMPROVES_BY`) the least GPU power or cost at the entry's peak of the groups
    before it, as *watch* says (:func:`watched`; :func:`_improving`); the first that lowers
    neither ends the ladder; or up to a final exclusion."""
    fitting = 0
    first_ok: int | None = None
    for i, (g, improves) in enumerate(zip(groups, _improving(groups, watch), strict=True)):
        if g.fits:
            past_first = first_ok is not None
            if first_ok is None and g.feasible:
                first_ok = fitting
            fitting += 1
            if past_first and not improves and i + 1 >= listed:
                return i + 1
        if g.final:
            return i + 1
    return None
