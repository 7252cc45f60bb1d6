"""The whole sweep: table, draws, grid, tasks on an engine, summary, robust choice, document.

:func:`run_sweep` takes a solved point-estimate :class:`~planner.pipeline.PlanRun` (its plan is
the base plan; its candidate table is built once) and returns the
:class:`~planner.documents.sweep.SweepDocument`. The engine starts once and gets the candidate
table once (:func:`planner.sweep.executors.open_engine`); the draws' pass and the robust
choice's second pass run on the same workers. Items (draws, then grid points) go to it in the
batches of :func:`batches_of` (balanced: as many per worker); results come back in item order
whatever the engine.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from planner.analysis.flags import uncertainty_flags
from planner.documents.sweep import SweepDocument
from planner.pipeline import PlanRun
from planner.scenario.sweep_block import SweepBlock
from planner.sweep import aggregate
from planner.sweep.draws import (
    TARGETS,
    Sigmas,
    sigmas_from_card,
    sobol_problem,
    standard_normals,
)
from planner.sweep.evaluate import Fleet, Item, Pass, evaluate_fleet, fleet_of, run_batch
from planner.sweep.executors import Session, open_engine
from planner.sweep.spec import Source, SweepSettings, field_error, grid_points, nothing_to_sweep
from planner.sweep.table import CandidateTable, build_table, candidate_gpus
from predictors.core.errors import WattgpuError

Progress = Callable[[str], None]
MAX_BATCH = 50
"""Most items per task (about 4 s of work on the default scenario)."""
MIN_BATCH = 25
"""Fewest items per task when there are enough for every worker (about 2 s of work)."""
TASKS_PER_WORKER = 4
"""Tasks per worker aimed at (within MIN_BATCH..MAX_BATCH items each)."""

METHOD = (
    "Monte-Carlo re-planning over the point-estimate candidate table: per draw the ITL, power "
    "and TTFT curves are rescaled by log-normal factors (one GPU effect per GPU type, one LLM "
    "effect per LLM, one row effect per candidate; sds from the model card's held-out "
    "residuals), loads by an arrival factor per model entry and idle power by a factor per GPU "
    "type; capacity is recomputed on the rescaled ITL curve (never above the point estimate's); "
    "each draw is re-optimised with the exact solver and the base plan is re-evaluated on it. "
    "Quasi-random normals (scipy.stats.qmc) seeded by numpy.random.SeedSequence. See "
    "docs/method.md, section Sweep."
)

GRID_METHOD = (
    "What-if grid without uncertainty draws: each grid point is re-planned with the exact solver "
    "on the point-estimate candidate table and the base plan is re-evaluated on it. See "
    "docs/method.md, section Sweep."
)
"""The method of a sweep of grid points only (``--draws 0``): no curve is rescaled."""


def batches_of(items: list[Item], workers: int, requested: int = 0) -> list[list[Item]]:
    """*items* in consecutive batches: of *requested* items each when given; else about
    :data:`TASKS_PER_WORKER` per worker, never more than MAX_BATCH items and (when there are at
    least MIN_BATCH per worker) never fewer than MIN_BATCH, their count a multiple of *workers*
    (every worker gets as many; fewer items than workers: one each) and the items split evenly
    (sizes differ by at most one)."""
    n = len(items)
    if requested > 0:
        return [items[i : i + requested] for i in range(0, n, requested)]
    w = max(1, workers)
    least = math.ceil(n / MAX_BATCH)
    count = max(least, min(TASKS_PER_WORKER * w, n // MIN_BATCH), 1)
    down = w * (count // w)
    count = down if down >= max(least, 1) else min(w * math.ceil(count / w), max(n, 1))
    edges = [round(k * n / count) for k in range(count + 1)]
    return [items[a:b] for a, b in zip(edges, edges[1:], strict=False) if b > a]


def _zero_sigmas(gpus: tuple[str, ...]) -> dict[str, Sigmas]:
    return {t: Sigmas({g: 0.0 for g in gpus}, 0.0, 0.0, 0.0) for t in TARGETS}


def _sigmas_json(sig: dict[str, Sigmas], s: SweepSettings) -> dict[str, Any]:
    out: dict[str, Any] = {
        t: {
            "gpu_sd": {g: v for g, v in sorted(v.gpu_sd.items())},
            "llm_sd": v.llm_sd,
            "row_sd_light": v.row_sd_light,
            "row_sd_heavy": v.row_sd_heavy,
        }
        for t, v in sig.items()
    }
    out["arrival"] = {"arrival_rate_sd": s.arrival_rate_sd}
    out["idle"] = {"idle_power_sd": s.idle_power_sd}
    return out


def _outcome(o: dict[str, Any]) -> dict[str, Any]:
    return {
        k: (aggregate.rnd(v) if isinstance(v, float) else v)
        for k, v in o.items()
        if k != "facility_energy_kwh_by_period"
    }


def _fleet_doc(f: Fleet) -> dict[str, Any]:
    return {"fleet": f.label(), "gpus": f.gpu_mix()}


def _record(r: dict[str, Any], point: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "index": r["index"],
        "status": r["status"],
        "error": r.get("error"),
        "messages": r.get("messages", []),
        "fleet": _fleet_doc(r["fleet"]) if "fleet" in r else None,
        "optimal": _outcome(r["optimal"]) if "optimal" in r else None,
        "base": _outcome(r["base"]) if "base" in r else None,
        "point": point,
    }


def _run(
    session: Session,
    spec: Pass,
    items: list[Item],
    workers: int,
    progress: Progress,
    what: str,
    requested: int,
) -> list[dict[str, Any]]:
    batches = batches_of(items, workers, requested)
    finished = [0]

    def done(_: int) -> None:
        finished[0] += 1
        progress(f"{what}: {finished[0]}/{len(batches)} tasks done")

    results = session.run(run_batch, [(spec, b) for b in batches], done)
    return [r for batch in results for r in batch]


def run_sweep(
    run: PlanRun,
    block: SweepBlock | None,
    s: SweepSettings,
    *,
    engine: str = "local",
    workers: int = 1,
    address: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
    stages: dict[str, float] | None = None,
    source: Source | None = None,
) -> SweepDocument:
    """Sweep *run*'s scenario (module doc). *stages*, when given, receives the wall seconds of
    each stage: ``prepare`` (table and draws), ``start`` (the engine: workers, table sent),
    ``draws`` (the first pass), ``robust`` (the second pass and its choice), ``stop`` (the
    engine), ``aggregate`` (summary, tornado), ``flags``
    (:func:`planner.analysis.flags.uncertainty_flags`) and ``document``. A grid error names the
    file *source* (:func:`planner.sweep.spec.field_source`) gives for its field."""
    step = progress or (lambda text: None)
    clock = _Clock(stages)
    inputs = run.inputs
    if not run.plan.has_solution:
        # every message whole (its fix holds the number to give), on one line
        why = " ".join("; ".join(run.plan.solve.messages).split())
        raise WattgpuError(
            f"{inputs.scenario}: the base plan is {run.plan.status.value}"
            f"{f' ({why})' if why else ''}; a sweep needs a base plan: `wattgpu plan` says why"
        )
    axes, points = grid_points(
        block,
        inputs,
        force=force,
        resolve_gpu=run.predictor.catalog.try_resolve_gpu,
        source=source,
    )
    if s.draws == 0 and not points:  # settings() refuses it first; a caller's own settings
        given = None if block is None or block.draws == 0 else 0  # --draws 0 over the block's
        raise nothing_to_sweep(block, given, source)
    gpus = tuple(sorted({g for c in inputs.candidates for g in candidate_gpus(c)}))
    if s.draws:
        cat = run.predictor.catalog.gpus
        vendor = dict(zip(cat["id"].to_list(), cat["vendor"].to_list(), strict=True))
        sigmas = sigmas_from_card(run.predictor_card, {g: vendor.get(g, "") for g in gpus})
    else:
        sigmas = _zero_sigmas(gpus)
    table: CandidateTable = build_table(inputs, sigmas, s.arrival_rate_sd, s.idle_power_sd)
    base = fleet_of(run.plan)
    too_many = sobol_problem(s.sampler, table.layout.dims) if s.draws else None
    if too_many is not None:
        raise field_error(source, "sweep.sampler", too_many)
    z = standard_normals(s.draws, table.layout.dims, s.seed, s.sampler)
    items = [Item("draw", i, z[i], {}) for i in range(s.draws)]
    items += [Item("grid", j, None, p) for j, p in enumerate(points)]
    clock.lap("prepare")
    step(
        f"sweep: {s.draws} draws and {len(points)} grid points on {engine} "
        f"({workers} worker{'' if workers == 1 else 's'})"
    )
    names = [m.name for m in inputs.models]
    robust = None
    with open_engine(
        engine, table, workers=workers, address=address, warm=run_batch.__module__
    ) as session:
        clock.lap("start")
        records = _run(session, Pass(base), items, workers, step, "sweep", s.batch_size)
        clock.lap("draws")
        draws = records[: s.draws]
        if s.choose == "robust":
            fleets, seen = aggregate.robust_fleets(draws, base, inputs)
            step(f"robust choice: {len(fleets)} fleets on every draw")
            spec = Pass(base, tuple(fleets), optimise=False)
            again = _run(session, spec, items[: s.draws], workers, step, "robust", s.batch_size)
            robust = aggregate.robust_choice(fleets, seen, again, s.sla_probability, names)
            clock.lap("robust")
    clock.lap("stop")
    grid = records[s.draws :]
    summary = None
    if draws:
        summary = aggregate.summary(draws, base, inputs.period_hours, names)
        bars = aggregate.tornado_grid(axes, points, grid) if grid else []
        summary["tornado"] = aggregate.tornado(bars, aggregate.tornado_draws(draws, z, table))
    clock.lap("aggregate")
    sla = summary["sla_probability"] if summary is not None else None
    flags = uncertainty_flags(run, sla, draws=s.draws or None, progress=step).flags
    clock.lap("flags")
    doc = {
        "scenario": inputs.scenario,
        "method": METHOD if s.draws else GRID_METHOD,
        "seed": s.seed,
        "sampler": s.sampler,
        "draws": s.draws,
        "sigmas": _sigmas_json(sigmas, s),
        "base": _fleet_doc(base),
        "base_outcome": _outcome(evaluate_fleet(base, inputs)),
        "summary": summary,
        "grid_axes": axes,
        "grid": [_record(r, p) for r, p in zip(grid, points, strict=True)],
        "robust": robust,
        "records": [_record(r) for r in draws],
        "flags": [f.to_json_dict() for f in flags],
    }
    out = SweepDocument.model_validate(doc)
    clock.lap("document")
    return out


class _Clock:
    """Wall seconds per stage into *stages* (nothing when None)."""

    def __init__(self, stages: dict[str, float] | None) -> None:
        self.stages = stages
        self.last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        if self.stages is not None:
            self.stages[name] = self.stages.get(name, 0.0) + now - self.last
        self.last = now
