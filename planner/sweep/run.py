"""The whole sweep: table, draws, grid, tasks on an engine, summary, robust choice, document.

:func:`run_sweep` takes a solved point-estimate :class:`~planner.pipeline.PlanRun` (its plan is
the base plan; its candidate table is built once) and returns the
:class:`~planner.documents.sweep.SweepDocument`. Items (draws, then grid points) go to the engine
in batches of :func:`batch_size` items; results come back in item order whatever the engine.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from planner.documents.sweep import SweepDocument
from planner.pipeline import PlanRun
from planner.scenario.sweep_block import SweepBlock
from planner.sweep import aggregate
from planner.sweep.draws import TARGETS, Sigmas, sigmas_from_card, standard_normals
from planner.sweep.evaluate import Fleet, Item, Shared, evaluate_fleet, fleet_of, run_batch
from planner.sweep.executors import run_batches
from planner.sweep.flags import allocation_flags, robust_plan
from planner.sweep.spec import SweepSettings, grid_points
from planner.sweep.table import CandidateTable, build_table
from predictors.core.errors import WattgpuError

Progress = Callable[[str], None]
MAX_BATCH = 50
"""Most items per task (about 4 s of work on the default scenario)."""
MIN_BATCH = 25
"""Fewest items per task when there are enough for every worker (about 2 s of work)."""

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


def batch_size(items: int, workers: int, requested: int = 0) -> int:
    """Items per task: *requested*, else about four tasks per worker, between MIN_BATCH (or
    fewer, so that every worker gets a task) and MAX_BATCH."""
    if requested > 0:
        return requested
    workers = max(1, workers)
    least = min(MIN_BATCH, math.ceil(items / workers))
    return max(1, least, min(MAX_BATCH, math.ceil(items / (4 * workers))))


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
    engine: str,
    shared: Shared,
    items: list[Item],
    workers: int,
    address: str | None,
    progress: Progress,
    what: str,
    requested: int,
) -> list[dict[str, Any]]:
    size = batch_size(len(items), workers, requested)
    batches = [items[i : i + size] for i in range(0, len(items), size)]
    finished = [0]

    def done(_: int) -> None:
        finished[0] += 1
        progress(f"{what}: {finished[0]}/{len(batches)} tasks of {size} done")

    results = run_batches(
        engine, run_batch, shared, batches, workers=workers, address=address, done=done
    )
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
) -> SweepDocument:
    """Sweep *run*'s scenario (module doc)."""
    step = progress or (lambda text: None)
    inputs = run.inputs
    if not run.plan.has_solution:
        raise WattgpuError(
            f"{inputs.scenario}: the base plan is {run.plan.status.value} "
            f"({'; '.join(run.plan.solve.messages)[:200]}); a sweep needs a base plan: "
            "`wattgpu plan` says why"
        )
    axes, points = grid_points(block, inputs, force=force)
    if s.draws == 0 and not points:
        raise WattgpuError(
            "nothing to sweep: give --draws N or a sweep.grid in the scenario (docs/sweep.md)"
        )
    gpus = tuple(sorted({c.gpu for c in inputs.candidates}))
    if s.draws:
        cat = run.predictor.catalog.gpus
        vendor = dict(zip(cat["id"].to_list(), cat["vendor"].to_list(), strict=True))
        sigmas = sigmas_from_card(run.predictor_card, {g: vendor.get(g, "") for g in gpus})
    else:
        sigmas = _zero_sigmas(gpus)
    table: CandidateTable = build_table(inputs, sigmas, s.arrival_rate_sd, s.idle_power_sd)
    base = fleet_of(run.plan)
    z = standard_normals(s.draws, table.layout.dims, s.seed, s.sampler)
    items = [Item("draw", i, z[i], {}) for i in range(s.draws)]
    items += [Item("grid", j, None, p) for j, p in enumerate(points)]
    step(f"sweep: {s.draws} draws and {len(points)} grid points on {engine} ({workers} workers)")
    records = _run(
        engine, Shared(table, base), items, workers, address, step, "sweep", s.batch_size
    )
    draws = records[: s.draws]
    grid = records[s.draws :]
    names = [m.name for m in inputs.models]
    summary = None
    if draws:
        summary = aggregate.summary(draws, base, inputs.period_hours, names)
        summary["tornado"] = aggregate.tornado_draws(draws, z, table.layout, names)
    if grid and summary is not None:
        summary["tornado"] = aggregate.tornado_grid(axes, points, grid) + summary["tornado"]
    robust = None
    if s.choose == "robust":
        fleets, seen = aggregate.robust_fleets(draws, base)
        step(f"robust choice: {len(fleets)} fleets on every draw")
        shared = Shared(table, base, tuple(fleets), optimise=False)
        again = _run(
            engine, shared, items[: s.draws], workers, address, step, "robust", s.batch_size
        )
        robust = aggregate.robust_choice(fleets, seen, again, s.sla_probability, names)
    step("flags: planning the scenario with robust: true for comparison")
    sla = summary["sla_probability"] if summary is not None else None
    flags = allocation_flags(run, robust_plan(run), sla)
    doc = {
        "scenario": inputs.scenario,
        "method": METHOD,
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
        "flags": flags,
    }
    return SweepDocument.model_validate(doc)
