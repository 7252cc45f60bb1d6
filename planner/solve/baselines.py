"""Naive fleets to compare the optimised plan against (solved by the same machinery).

Each baseline is a restriction of the candidate set; :func:`planner.solve.optimize.solve` plans it
under the same load, SLA, inventory, power cap, budget and minimum replicas as the plan:

* ``best-tflops-per-w``: every model on the single available GPU type with the best dense
  FP16 TFLOPS per TDP watt (the spec-sheet efficiency heuristic). Models that type cannot
  serve under the SLA make the baseline infeasible, and the reason says which.
* ``h100``: every model on H100-SXM5-80GB (the most common datacenter choice), when the
  scenario makes it available.
* ``cheapest-per-hour``: per model, the GPU type with the lowest $/GPU-hour among those with a
  candidate that meets the SLA.

A baseline on one GPU type keeps the disaggregated units whose pools are all of that type
(aggregated or disaggregated, as the scenario's ``deployment`` allows); mixed-type units are in
no baseline.

In every baseline a model keeps all TP degrees of its chosen GPU type.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.inputs import Candidate, PlanningInputs

COMMON_DATACENTER_GPU = "H100-SXM5-80GB"


@dataclass(frozen=True)
class BaselineSpec:
    """A baseline's candidate set, or the reason it cannot be formed at all."""

    name: str
    description: str
    candidates: tuple[Candidate, ...] | None
    reason: str = ""


def _available_gpus(inputs: PlanningInputs) -> list[str]:
    return sorted(g for g, count in inputs.inventory.items() if count != 0)


def _single_type(c: Candidate) -> str | None:
    """The one GPU type every GPU of *c* is of (None for a mixed unit, which is on no single
    type)."""
    if not c.pools:
        return c.gpu
    types = {g for g, _ in c.gpu_use}
    return types.pop() if len(types) == 1 else None


def _on_type(inputs: PlanningInputs, gpu: str) -> tuple[Candidate, ...]:
    """The candidates of *inputs* whose every GPU is of type *gpu*, in input order."""
    return tuple(c for c in inputs.candidates if _single_type(c) == gpu)


def _usd_per_gpu_hour(inputs: PlanningInputs, c: Candidate) -> float:
    info = inputs.gpu_info.get(c.gpu)
    if info is not None:
        return info.usd_per_hour
    return c.usd_per_hour_per_replica / c.gpus_per_replica


def best_tflops_per_w(inputs: PlanningInputs) -> BaselineSpec:
    """Every model on the single available GPU type with the best TFLOPS/W."""
    name = "best-tflops-per-w"
    ranked = sorted(
        (g for g in _available_gpus(inputs) if g in inputs.gpu_info),
        key=lambda g: (-inputs.gpu_info[g].tflops_per_w, g),
    )
    if not ranked:
        return BaselineSpec(
            name, "single GPU type with the best TFLOPS/W", None, "no TFLOPS/W data"
        )
    gpu = ranked[0]
    description = f"every model on {gpu} (best TFLOPS/W: {inputs.gpu_info[gpu].tflops_per_w:.3g})"
    return BaselineSpec(name, description, _on_type(inputs, gpu))


def common_datacenter(inputs: PlanningInputs) -> BaselineSpec:
    """Every model on H100-SXM5-80GB when it is available."""
    name = "h100"
    description = f"every model on {COMMON_DATACENTER_GPU}"
    if COMMON_DATACENTER_GPU not in _available_gpus(inputs):
        return BaselineSpec(
            name, description, None, f"{COMMON_DATACENTER_GPU} is not available in this scenario"
        )
    return BaselineSpec(name, description, _on_type(inputs, COMMON_DATACENTER_GPU))


def cheapest_per_hour(inputs: PlanningInputs) -> BaselineSpec:
    """Per model, the GPU type with the lowest $/GPU-hour that meets the SLA."""
    available = set(_available_gpus(inputs))
    chosen: dict[str, str] = {}
    for m in inputs.models:
        ok = [
            c
            for c in inputs.candidates_of(m.name)
            if c.feasible and c.gpu in available and _single_type(c) == c.gpu
        ]
        if ok:
            best = min(ok, key=lambda c: (_usd_per_gpu_hour(inputs, c), c.gpu))
            chosen[m.name] = best.gpu
    cands = tuple(
        c for c in inputs.candidates if _single_type(c) == chosen.get(c.name, c.gpu)
    )  # models without a feasible candidate keep theirs, so the solve explains them
    picks = ", ".join(f"{k}: {v}" for k, v in chosen.items())
    return BaselineSpec("cheapest-per-hour", f"cheapest $/h GPU meeting the SLA ({picks})", cands)


def baseline_specs(inputs: PlanningInputs) -> list[BaselineSpec]:
    """The three baselines of issue 5, in report order."""
    return [best_tflops_per_w(inputs), common_datacenter(inputs), cheapest_per_hour(inputs)]
