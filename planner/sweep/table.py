"""The candidate table as arrays, and the planning inputs of one draw or grid point.

Built once from the point-estimate :class:`~planner.inputs.PlanningInputs` (the predictors run
only there). A draw rescales every feasible candidate's curves, vectorised over candidates, and
never calls the predictors:

* ITL: the curve × the ITL factor. The SLA-relevant ITL at a rate is the curve × ``k``, where
  ``k = itl_s_at_capacity / itl_curve[-1]`` (1 for a mean SLA; the percentile's or the upper
  bound's ratio otherwise). The new capacity is the largest rate of the curve at which
  ``factor · k · itl`` meets the SLA (linear between knots); it never exceeds the point
  estimate's capacity (the curve is not known beyond it), so a faster draw keeps its capacity.
  A draw whose ITL misses the SLA even at the lightest load makes the candidate infeasible.
* power: idle × the GPU type's idle factor, plus (curve − idle) × the power factor, clipped to
  the replica's TDP. A disaggregated unit's pools each take the factors of their own GPU type
  (its prefill pool's curve from the plan's ``pools``; the row's GPU is its decode pool's).
* TTFT: the TTFT at each knot × the TTFT factor (a unit's: its prefill pool's GPU effect): a
  unit's recorded curve, an aggregated replica's light-load prefill plus its ITL there; the
  TTFT SLA's percentile ratio carried as ``k`` for the ITL, on candidates whose capacity the
  TTFT SLA sets. Above the TTFT SLA at the lightest load the candidate is infeasible for that
  draw; else its capacity is also at most the largest rate meeting the TTFT SLA.

A candidate the point estimate excludes stays excluded. Loads are multiplied by the arrival
factor of their model entry and by the grid's load growth and per-model load.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from planner.inputs import Candidate, Exclusion, PlanningInputs, ms_over
from planner.inputs.candidate import least_slope_w
from planner.sweep.draws import LIGHT_MAX_BATCH, TARGETS, Sigmas

GridPoint = dict[str, Any]


@dataclass(frozen=True)
class Layout:
    """Where each effect's standard normals sit in a draw's vector."""

    gpus: tuple[str, ...]
    llms: tuple[str, ...]
    n_rows: int
    n_models: int

    def offset(self, target: str) -> int:
        """First column of *target*'s effects."""
        return TARGETS.index(target) * self.block

    @property
    def block(self) -> int:
        """Columns of one target: GPU effects, LLM effects, row effects."""
        return len(self.gpus) + len(self.llms) + self.n_rows

    @property
    def arrival(self) -> int:
        """First column of the arrival factors (one per model entry)."""
        return len(TARGETS) * self.block

    @property
    def idle(self) -> int:
        """First column of the idle-power factors (one per GPU type)."""
        return self.arrival + self.n_models

    @property
    def dims(self) -> int:
        """Length of a draw's vector."""
        return self.idle + len(self.gpus)


@dataclass(frozen=True)
class CandidateTable:
    """The point-estimate inputs and the feasible candidates' curves as padded arrays."""

    inputs: PlanningInputs
    layout: Layout
    index: tuple[int, ...]
    """Positions in ``inputs.candidates`` of the feasible candidates (the table's rows)."""
    rates: np.ndarray
    power_w: np.ndarray
    itl_s: np.ndarray
    knots: np.ndarray
    idle_w: np.ndarray
    tdp_w: np.ndarray
    k_sla: np.ndarray
    sla_s: np.ndarray
    ttft_s: np.ndarray
    ttft_sla_s: np.ndarray
    sd: dict[str, np.ndarray]
    """Per target: the sd of every column of its block (GPU, LLM, row effects)."""
    arrival_sd: float
    idle_sd: float
    gpu_of_row: np.ndarray
    llm_of_row: np.ndarray
    prefill_power_w: np.ndarray
    """A unit's prefill pool's power at the row's knots (W; 0 for an aggregated replica)."""
    prefill_idle_w: np.ndarray
    prefill_gpu: np.ndarray
    """GPU type (column of ``layout.gpus``) of a unit's prefill pool; the row's own else."""
    ttft_curve_s: np.ndarray
    """(N, width) TTFT at the knots, at the SLA's percentile where the TTFT SLA sets the
    capacity (module docstring)."""


def candidate_gpus(c: Candidate) -> tuple[str, ...]:
    """The GPU types a candidate runs on: a unit's pools', else its own."""
    return tuple(p.gpu for p in c.pools) or (c.gpu,)


def _prefill(c: Candidate, knots: int) -> tuple[tuple[float, ...], float, str]:
    """(power at the knots, idle power, GPU type) of a unit's prefill pool; zeros and the
    candidate's own GPU for an aggregated replica (or a unit that records no pool curves)."""
    pool = next((p for p in c.pools if p.role == "prefill"), None)
    if pool is None or len(pool.power_curve_w) != knots:
        return (0.0,) * knots, 0.0, c.gpu
    return tuple(pool.power_curve_w), pool.idle_power_w, pool.gpu


def _ttft_curve(c: Candidate, itl: Sequence[float], sla_s: float | None) -> tuple[float, ...]:
    """The TTFT of *c* at its knots (s): a unit's curve, an aggregated replica's light-load
    prefill plus its ITL at each knot; scaled so that it meets *sla_s* exactly at capacity where
    the TTFT SLA sets the capacity (the percentile's ratio to the mean, as ``k`` for the ITL)."""
    if c.ttft_s is None:
        return tuple(0.0 for _ in itl)
    curve = tuple(c.ttft_curve_s) or tuple(c.ttft_s - itl[0] + y for y in itl)
    if len(curve) != len(itl):
        return tuple(c.ttft_s for _ in itl)
    if c.capacity_limit == "ttft" and sla_s is not None and curve[-1] > 0:
        k = max(sla_s / curve[-1], 1.0)
        return tuple(k * t for t in curve)
    return curve


def _pad(rows: Sequence[Sequence[float]], width: int) -> np.ndarray:
    out = np.empty((len(rows), width))
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
        out[i, len(row) :] = row[-1] if row else 0.0
    return out


def build_table(
    inputs: PlanningInputs, sigmas: dict[str, Sigmas], arrival_sd: float, idle_sd: float
) -> CandidateTable:
    """The table of *inputs*' feasible candidates with the draws' sds."""
    index = tuple(i for i, c in enumerate(inputs.candidates) if c.feasible)
    cands = [inputs.candidates[i] for i in index]
    gpus = tuple(sorted({g for c in inputs.candidates for g in candidate_gpus(c)}))
    llms = tuple(sorted({c.model for c in inputs.candidates}))
    layout = Layout(gpus, llms, len(cands), len(inputs.models))
    curves = [c.curve for c in cands]
    width = max((len(xs) for xs, _ in curves), default=1)
    itls = [
        c.itl_curve_s or tuple(c.itl_s_at_capacity for _ in xs)
        for c, (xs, _) in zip(cands, curves, strict=True)
    ]
    demand = {m.name: m for m in inputs.models}
    pre = [_prefill(c, len(xs)) for c, (xs, _) in zip(cands, curves, strict=True)]
    ttfts = [
        _ttft_curve(c, itl_row, demand[c.name].ttft_sla_s)
        for c, itl_row in zip(cands, itls, strict=True)
    ]
    itl = _pad(itls, width)
    last_itl = np.array([row[-1] for row in itls]) if itls else np.zeros(0)
    k_sla = np.array([c.itl_s_at_capacity for c in cands]) / np.maximum(last_itl, 1e-12)
    sd: dict[str, np.ndarray] = {}
    for target in TARGETS:
        s = sigmas[target]
        rows = [
            s.row_sd_light if c.batch_size <= LIGHT_MAX_BATCH else s.row_sd_heavy for c in cands
        ]
        sd[target] = np.array(
            [s.gpu_sd.get(g, max(s.gpu_sd.values(), default=0.0)) for g in gpus]
            + [s.llm_sd] * len(llms)
            + rows
        )
    inf = float("inf")
    return CandidateTable(
        inputs=inputs,
        layout=layout,
        index=index,
        rates=_pad([xs for xs, _ in curves], width),
        power_w=_pad([ps for _, ps in curves], width),
        itl_s=itl,
        knots=np.array([len(xs) for xs, _ in curves], dtype=np.int64),
        idle_w=np.array([c.idle_power_w_per_replica for c in cands]),
        tdp_w=np.array([(c.tdp_w_per_gpu or inf) * c.gpus_per_replica for c in cands]),
        k_sla=np.maximum(k_sla, 1.0) if cands else k_sla,
        sla_s=np.array([demand[c.name].itl_sla_s for c in cands]),
        ttft_s=np.array([c.ttft_s if c.ttft_s is not None else 0.0 for c in cands]),
        ttft_sla_s=np.array([demand[c.name].ttft_sla_s or inf for c in cands]),
        sd=sd,
        arrival_sd=arrival_sd,
        idle_sd=idle_sd,
        gpu_of_row=np.array([gpus.index(c.gpu) for c in cands], dtype=np.int64),
        llm_of_row=np.array([llms.index(c.model) for c in cands], dtype=np.int64),
        prefill_power_w=_pad([p for p, _, _ in pre], width),
        prefill_idle_w=np.array([idle for _, idle, _ in pre]),
        prefill_gpu=np.array([gpus.index(g) for _, _, g in pre], dtype=np.int64),
        ttft_curve_s=_pad(ttfts, width),
    )


def log_factors(table: CandidateTable, z: np.ndarray) -> dict[str, np.ndarray]:
    """Per target the log factor of every table row for the draw vector *z*."""
    lay = table.layout
    n_g, n_l = len(lay.gpus), len(lay.llms)
    out: dict[str, np.ndarray] = {}
    for target in TARGETS:
        block = z[lay.offset(target) : lay.offset(target) + lay.block] * table.sd[target]
        gpu, llm, row = block[:n_g], block[n_g : n_g + n_l], block[n_g + n_l :]
        out[target] = gpu[table.gpu_of_row] + llm[table.llm_of_row] + row
    return out


def _interp_rows(x: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Per row: ys interpolated at x (xs ascending per row, held at the ends)."""
    out = np.empty(len(x))
    for i in range(len(x)):
        out[i] = np.interp(x[i], xs[i], ys[i])
    return out


def _capacity(table: CandidateTable, itl: np.ndarray, ttft: np.ndarray) -> np.ndarray:
    """New capacity per row: the largest rate whose k · itl meets the ITL SLA and whose TTFT
    meets the TTFT SLA (0: none)."""
    cap = table.rates[np.arange(len(itl)), table.knots - 1].copy()
    for curve, sla in ((itl * table.k_sla[:, None], table.sla_s), (ttft, table.ttft_sla_s)):
        ok = curve <= sla[:, None] * (1 + 1e-9)
        for i in np.nonzero(~ok.all(axis=1))[0]:
            j = int(np.argmin(ok[i]))  # first knot that misses the SLA
            if j == 0:
                cap[i] = 0.0
                continue
            x0, x1 = table.rates[i, j - 1], table.rates[i, j]
            y0, y1 = curve[i, j - 1], curve[i, j]
            t = (sla[i] - y0) / (y1 - y0) if y1 > y0 else 0.0
            cap[i] = min(cap[i], x0 + min(max(t, 0.0), 1.0) * (x1 - x0))
    return cap


def _candidate(
    c: Candidate, i: int, table: CandidateTable, cap: float, itl: np.ndarray, power: np.ndarray
) -> Candidate:
    n = int(table.knots[i])
    xs, ps, ys = table.rates[i, :n], power[i, :n], itl[i, :n]
    keep = xs < cap * (1 - 1e-12)
    end_p, end_y = float(np.interp(cap, xs, ps)), float(np.interp(cap, xs, ys))
    rates = (*xs[keep].tolist(), cap)
    pw = (*ps[keep].tolist(), end_p)
    it = (*ys[keep].tolist(), end_y)
    idle = pw[0]
    return replace(
        c,
        itl_s_at_capacity=end_y * float(table.k_sla[i]),
        max_requests_per_s_per_replica=cap,
        idle_power_w_per_replica=idle,
        energy_j_per_request=least_slope_w(rates, pw),
        power_w_per_gpu_at_capacity=end_p / c.gpus_per_replica,
        load_curve_requests_per_s=rates,
        power_curve_w_per_replica=pw,
        itl_curve_s=it,
    )


def _swapped(table: CandidateTable, z: np.ndarray, target: str, f: np.ndarray) -> np.ndarray:
    """*target*'s log factor *f* of every row with its GPU effect that of its prefill pool's
    GPU."""
    lay, n_g = table.layout, len(table.layout.gpus)
    gpu = z[lay.offset(target) : lay.offset(target) + n_g] * table.sd[target][:n_g]
    return np.asarray(f - gpu[table.gpu_of_row] + gpu[table.prefill_gpu])


def drawn_candidates(table: CandidateTable, z: np.ndarray | None) -> tuple[Candidate, ...]:
    """Every candidate of the inputs under draw *z* (None: the point estimate)."""
    base = table.inputs.candidates
    if z is None or not table.index:
        return base
    f = log_factors(table, z)
    lay = table.layout
    n_g = len(lay.gpus)
    idle_f = np.exp(z[lay.idle : lay.idle + n_g] * table.idle_sd)
    itl = table.itl_s * np.exp(f["itl"])[:, None]
    # a unit's prefill pool: its own GPU type's idle, power and TTFT effects (docstring)
    own, pre = table.gpu_of_row, table.prefill_gpu
    moved = {t: np.where(pre == own, f[t], _swapped(table, z, t, f[t])) for t in ("power", "ttft")}
    rest_idle = table.idle_w - table.prefill_idle_w
    idle = rest_idle * idle_f[own] + table.prefill_idle_w * idle_f[pre]
    dyn = (table.power_w - table.prefill_power_w - rest_idle[:, None]) * np.exp(f["power"])[
        :, None
    ] + (table.prefill_power_w - table.prefill_idle_w[:, None]) * np.exp(moved["power"])[:, None]
    power = np.minimum(idle[:, None] + dyn, np.maximum(table.tdp_w, idle)[:, None])
    ttft = table.ttft_s * np.exp(moved["ttft"])
    cap = _capacity(table, itl, table.ttft_curve_s * np.exp(moved["ttft"])[:, None])
    out = list(base)
    for i, pos in enumerate(table.index):
        c = base[pos]
        if ttft[i] > table.ttft_sla_s[i]:
            out[pos] = replace(
                c,
                feasible=False,
                exclusion=Exclusion.TTFT_SLA,
                reason="sweep draw: TTFT {} ms > SLA {} ms".format(
                    *ms_over(ttft[i], table.ttft_sla_s[i])
                ),
            )
        elif cap[i] <= 0.0:
            out[pos] = replace(
                c,
                feasible=False,
                exclusion=Exclusion.ITL_SLA,
                reason="sweep draw: ITL {} ms > SLA {} ms even at the lightest load".format(
                    *ms_over(itl[i, 0] * table.k_sla[i], table.sla_s[i])
                ),
            )
        else:
            out[pos] = _candidate(c, i, table, float(cap[i]), itl, power)
    return tuple(out)


def load_factors(table: CandidateTable, z: np.ndarray | None, point: GridPoint) -> dict[str, float]:
    """Per model entry the factor its load is multiplied by (draw and grid point)."""
    lay = table.layout
    growth = float(point.get("load_growth", 1.0))
    per_model = point.get("model_load", {})
    out = {}
    for j, m in enumerate(table.inputs.models):
        a = float(np.exp(z[lay.arrival + j] * table.arrival_sd)) if z is not None else 1.0
        out[m.name] = a * growth * float(per_model.get(m.name, 1.0))
    return out


def drawn_inputs(table: CandidateTable, z: np.ndarray | None, point: GridPoint) -> PlanningInputs:
    """The planning inputs of draw *z* (None: point estimate) at grid point *point*."""
    base = table.inputs
    factors = load_factors(table, z, point)
    models = tuple(
        replace(
            m,
            requests_per_s_by_period=tuple(r * factors[m.name] for r in m.requests_per_s_by_period),
        )
        if factors[m.name] != 1.0
        else m
        for m in base.models
    )
    inventory = dict(base.inventory)
    for gpu, count in point.get("gpu_available", {}).items():
        inventory[gpu] = int(count)
    changes: dict[str, Any] = {
        "models": models,
        "candidates": drawn_candidates(table, z),
        "inventory": inventory,
    }
    for key in ("electricity_usd_per_kwh", "grid_g_co2_per_kwh", "power_cap_kw", "budget_usd"):
        if key in point:
            changes[key] = float(point[key])
    if "grid_g_co2_per_kwh" in point:  # a grid point's factor holds in every period
        changes["grid_g_co2_per_kwh_by_period"] = None
    return replace(base, **changes)
