"""The rows of the MILP (:mod:`planner.solve.milp`) that regions add.

Its inventory rows count GPUs per ``gpu@region`` key already (:attr:`Candidate.stock_use`);
with regions (docs/method.md, "Regions") a plan also keeps:

* placement: each entry in one of its regions, ``Σ_r y[m,r] = 1`` with binary ``y`` and
  ``n[c] <= bound[c] · y[m, region of c]`` (entries with candidates in one region only need none);
* each region's power cap in every period, ``PUE_r · Σ_{c in r} (idle_w[c]·n[c] + e_j[c]·x[c,t])
  / 1000 <= C_r``, elastic per region (family ``power_cap``, one slack per region).

The search solvers place entries themselves (:class:`planner.solve.columns.Decomposition`);
these rows serve the elastic re-solves that say why a scenario with regions has no plan
(:mod:`planner.solve.explain`), so that they name a region's limit, not a fleet-wide one.
"""

from __future__ import annotations

from typing import Any, Protocol

from planner.solve.coefficients import facility_kw_coefficients
from planner.solve.failover import MilpRows


class RegionRows(MilpRows, Protocol):
    """What these rows need of :class:`planner.solve.milp.MilpModel`."""

    x: list[list[Any]]


#: How a region's power-cap slack is named (``what`` of :meth:`MilpModel.slack`).
REGION_CAP = "region "


def add_placement(mm: RegionRows) -> None:
    """place[m]: each entry with candidates in several regions is placed in one of them."""
    s = mm.solver
    places: dict[str, dict[str, list[int]]] = {}
    for i, c in enumerate(mm.candidates):
        places.setdefault(c.name, {}).setdefault(c.region, []).append(i)
    for name, regions in places.items():
        if len(regions) < 2:
            continue
        one = s.Constraint(1.0, 1.0, f"place[{name}]")
        for region, idx in regions.items():
            y = s.BoolVar(f"place[{name},{region}]")
            one.SetCoefficient(y, 1.0)
            for i in idx:
                row = s.Constraint(-s.infinity(), 0.0, f"placed[{mm.candidates[i].label}]")
                row.SetCoefficient(mm.n[i], 1.0)
                row.SetCoefficient(y, -mm.n[i].ub())


def add_region_caps(mm: RegionRows) -> None:
    """power_cap[r,t]: every capped region's facility kW in every period (its PUE)."""
    s, inputs = mm.solver, mm.inputs
    for r in inputs.regions:
        mine = [i for i, c in enumerate(mm.candidates) if c.region == r.name]
        if r.power_cap_kw is None or not mine:
            continue
        slack = mm.slack("power_cap", f"{REGION_CAP}{r.name}", r.power_cap_kw)
        for t in range(inputs.periods):
            row = s.Constraint(-s.infinity(), r.power_cap_kw, f"power_cap[{r.name},{t}]")
            for i in mine:
                kw_n, kw_x = facility_kw_coefficients(inputs, mm.candidates[i])
                row.SetCoefficient(mm.n[i], kw_n)
                row.SetCoefficient(mm.x[i][t], kw_x)
            if slack is not None:
                row.SetCoefficient(slack, -1.0)
