"""The settings of one sweep and its grid points (from the ``sweep:`` block and the options).

:func:`grid_points` expands the block's axes into the cartesian product (axis order as in
:class:`planner.scenario.sweep_block.SweepGrid`, values in the order given). The limits
(:data:`~planner.scenario.sweep_block.MAX_DRAWS` draws,
:data:`~planner.scenario.sweep_block.MAX_GRID_POINTS` grid points) stop a sweep unless
``--force``; a grid name that is not a model entry or a GPU of the scenario is an error with a
did-you-mean. Each of these errors names the file that set the field (a :data:`Source`, from
:func:`field_source`: the scenario, one of its overlays or a ``--set``) and the field path.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.inputs import PlanningInputs
from planner.scenario.errors import format_path
from planner.scenario.load import merged_scenario
from planner.scenario.model import Scenario
from planner.scenario.sweep_block import (
    FORCED_MAX_DRAWS,
    FORCED_MAX_GRID_POINTS,
    MAX_DRAWS,
    MAX_GRID_POINTS,
    AxisRange,
    SweepBlock,
)
from predictors.core.errors import WattgpuError, did_you_mean

CHOICES: tuple[str, ...] = ("none", "robust")

#: Where a field of the scenario was set, by field path (``sweep.draws`` -> ``s.yaml``).
Source = Callable[[str], str]


def field_source(
    path: str | Path, overlays: Sequence[str | Path] = (), overrides: Sequence[str] = ()
) -> Source:
    """Where each field of the scenario *path* (with *overlays* merged over it and *overrides*
    applied, :func:`planner.scenario.load.merged_scenario`) was set: the scenario file, the
    overlay that states it or ``FILE --set PATH=VALUE``. Call it on a scenario that loaded."""
    if not overlays and not overrides:
        return lambda field: str(path)
    _, source, _ = merged_scenario(Path(path), overrides, overlays)
    return source if callable(source) else (lambda field: source)


def field_error(source: Source | None, field: str, message: str) -> WattgpuError:
    """``FILE: field: message`` (``field: message`` without a source)."""
    return WattgpuError(f"{source(field)}: {field}: {message}" if source else f"{field}: {message}")


@dataclass(frozen=True)
class SweepSettings:
    """Everything a sweep needs besides the scenario."""

    draws: int
    seed: int
    sampler: str
    arrival_rate_sd: float
    idle_power_sd: float
    choose: str = "none"
    sla_probability: float = 0.95
    batch_size: int = 0
    """Draws per task (0: chosen from the number of draws and workers)."""


def settings(
    block: SweepBlock | None,
    *,
    draws: int | None,
    seed: int | None,
    choose: str,
    sla_probability: float,
    force: bool,
    batch_size: int = 0,
    source: Source | None = None,
) -> SweepSettings:
    """The settings of the sweep: the block's values, the options on top; limits checked, and
    a sweep of no draws and no grid axis refused (:func:`nothing_to_sweep`). An error in the
    block names the file *source* gives for its field."""
    given, block = block, block or SweepBlock.model_validate({})
    n = block.draws if draws is None else draws
    if n < 0:
        raise WattgpuError(f"--draws: must be >= 0, got {n}")
    if n > FORCED_MAX_DRAWS:
        raise WattgpuError(
            f"--draws: {n:,} draws is above the most a sweep takes, {FORCED_MAX_DRAWS:,} even "
            "with --force (every draw's record is held in memory); give fewer"
        )
    if n > MAX_DRAWS and not force:
        if draws is None:  # the scenario's sweep.draws
            raise field_error(source, "sweep.draws", _draws_above(n, ""))
        raise WattgpuError(f"--draws: {_draws_above(n, '--draws')}")
    if choose not in CHOICES:
        raise WattgpuError(
            f"--choose: unknown choice {choose!r}{did_you_mean(choose, CHOICES)}; use "
            f"{', '.join(CHOICES)}"
        )
    if not (math.isfinite(sla_probability) and 0.0 < sla_probability <= 1.0):
        raise WattgpuError(f"--sla-probability: must be in (0, 1], got {sla_probability!r}")
    if choose == "robust" and n == 0:
        raise WattgpuError("--choose robust: needs uncertainty draws; add --draws N (e.g. 200)")
    if batch_size < 0:
        raise WattgpuError(f"--batch-size: must be >= 0, got {batch_size}")
    if n == 0 and not block.has_axis:
        raise nothing_to_sweep(given, draws, source)
    return SweepSettings(
        draws=n,
        seed=block.seed if seed is None else seed,
        sampler=block.sampler,
        arrival_rate_sd=block.arrival_rate_sd,
        idle_power_sd=block.idle_power_sd,
        choose=choose,
        sla_probability=sla_probability,
        batch_size=batch_size,
    )


def nothing_to_sweep(
    block: SweepBlock | None, draws: int | None, source: Source | None
) -> WattgpuError:
    """The error of a sweep with no draws and no grid axis, naming the scenario file (*source*
    of ``sweep``) and the field: *block* None when the scenario has none, *draws* the
    ``--draws`` given (None: the block's)."""
    given = "" if draws is None else f"--draws {draws} and "
    why = "the scenario has no sweep block" if block is None else "sweep.grid has no axis"
    why = ("sweep.draws is 0 and " if block is not None and draws is None else given) + why
    fix = "--draws N above 0, or a" if given else "--draws N, or sweep.draws or a"
    return field_error(
        source,
        "sweep",
        f"nothing to sweep — {why}; give {fix} sweep.grid axis in the scenario (docs/sweep.md)",
    )


def _draws_above(n: int, option: str) -> str:
    digits = int(n.bit_length() * 0.30103) + 1
    count = f"{n:,} draws" if n < 10**18 else f"a draw count of about {digits} digits"
    above = f"{count} is above the limit of {MAX_DRAWS:,}"
    if option:
        return f"{above}; give fewer or add --force"
    return f"{above}; lower it, give --draws N or add --force"


Axis = list[float] | list[int] | AxisRange


def _values(axis: Axis) -> tuple[float, ...]:
    return axis.values() if isinstance(axis, AxisRange) else tuple(float(v) for v in axis)


def _number(value: float) -> str:
    return f"{value:.10g}"


def _twice(values: Sequence[float]) -> list[float]:
    """The values that *values* holds more than once, in order."""
    counts = Counter(values)
    return [v for v in counts if counts[v] > 1]


def _most_steps(axis: AxisRange, whole: bool) -> int:
    """The most steps below *axis*'s that give distinct values over its span (1 at least)."""
    if axis.start == axis.stop:
        return 1
    low, high = sorted((axis.start, axis.stop))
    top = min(axis.steps - 1, _whole(high) - _whole(low) + 1) if whole else axis.steps - 1
    for steps in range(top, 1, -1):
        values = axis.model_copy(update={"steps": steps}).values()
        if not _twice([_whole(v) for v in values] if whole else values):
            return steps
    return 1


def _whole(value: float) -> int:
    """*value* rounded down to a whole number (GPUs), but a value a range's arithmetic left a
    few units in the last place below a whole number is that number: 44 · 15/22 is
    29.999999999999996, 30 GPUs of the evenly spaced range 0..44 in 23 steps (fuzz round 28:
    floored to 29, and 0..22 in 23 steps refused as repeating 14)."""
    return math.floor(value + 1e-12 * max(1.0, abs(value)))


def _repeats(source: Source | None, field: str, axis: Axis, whole: bool) -> WattgpuError | None:
    """The error of an axis that gives a value twice (its grid points would be planned twice
    and weigh twice in every mean): a range (``gpu_available``'s rounded down to whole GPUs)
    names the most steps that give distinct values, a list the values it repeats."""
    values = _values(axis)
    twice = _twice([_whole(v) for v in values] if whole else values)
    if not twice:
        return None
    shown = ", ".join(_number(v) for v in twice[:5]) + (", ..." if len(twice) > 5 else "")
    if not isinstance(axis, AxisRange):
        return field_error(source, field, f"repeats {shown}; list each value once")
    most = _most_steps(axis, whole)
    kind = "whole numbers" if whole else "values"
    span = f"{_number(axis.start)}..{_number(axis.stop)}"
    return field_error(
        source,
        field,
        f"steps {axis.steps} over {span} gives repeated {kind} {shown}; use at most {most} "
        f"step{'s' if most > 1 else ''} or list the values",
    )


#: Grid axes that set the figures of the one site of a scenario without regions.
SITE_AXES = ("electricity_usd_per_kwh", "grid_g_co2_per_kwh", "power_cap_kw", "gpu_available")


def _axes(
    block: SweepBlock,
    names: Sequence[str],
    gpus: Sequence[str],
    has_regions: bool,
    resolve_gpu: Callable[[str], str | None],
    source: Source | None,
) -> tuple[list[tuple[str, str | None, tuple]], list[WattgpuError]]:
    """The grid axes of *block* for a scenario of model entries *names*, GPU types *gpus*
    (catalog ids) and regions or not; and every problem, in the block's order."""
    grid = block.grid
    axes: list[tuple[str, str | None, tuple]] = []
    problems: list[WattgpuError] = []
    if has_regions:  # these axes set one site's figure; a region has its own
        problems += [
            field_error(
                source,
                f"sweep.grid.{key}",
                f"the scenario has regions, each with its own {key}; the grid varies only "
                "the top-level one — remove the axis (or the regions), or sweep a copy of "
                "the scenario with that region's figures changed",
            )
            for key in SITE_AXES
            if getattr(grid, key)
        ]

    def add(key: str, sub: str | None, axis: Axis, whole: bool = False, name: str = "") -> None:
        values = _values(axis)
        axes.append((key, sub, tuple(_whole(v) for v in values) if whole else values))
        named = name or sub
        field = format_path(("sweep", "grid", key, named) if named else ("sweep", "grid", key))
        repeated = _repeats(source, field, axis, whole)
        problems.extend([repeated] if repeated is not None else [])

    for key in ("load_growth", "electricity_usd_per_kwh", "grid_g_co2_per_kwh"):
        axis = getattr(grid, key)
        if axis is not None:
            add(key, None, axis)
    for name, axis in (grid.model_load or {}).items():
        if name not in names:
            problems.append(
                field_error(
                    source,
                    format_path(("sweep", "grid", "model_load", name)),
                    f"no model entry named {name!r}{did_you_mean(name, list(names))}; use one "
                    "of the scenario's model names",
                )
            )
        add("model_load", name, axis)
    named: dict[str, str] = {}  # GPU -> the first name of it under gpu_available
    for name, axis in (grid.gpu_available or {}).items():
        # a catalog alias names its GPU, as under gpus: (e.g. H100 for H100-SXM5-80GB)
        gpu = name if name in gpus else (resolve_gpu(name) or name)
        if gpu in named:
            problems.append(
                field_error(
                    source,
                    format_path(("sweep", "grid", "gpu_available", name)),
                    f"names the same GPU as gpu_available.{named[gpu]} ({gpu}) — list it once",
                )
            )
        named.setdefault(gpu, name)
        if gpu not in gpus:
            problems.append(
                field_error(
                    source,
                    format_path(("sweep", "grid", "gpu_available", name)),
                    f"GPU {name!r} is not in the scenario{did_you_mean(name, list(gpus))}"
                    "; use a GPU listed under gpus:",
                )
            )
        add("gpu_available", gpu, axis, whole=True, name=name)
    for key in ("power_cap_kw", "budget_usd"):
        axis = getattr(grid, key)
        if axis is not None:
            add(key, None, axis)
    return axes, problems


def _too_many_points(
    axes: list[tuple[str, str | None, tuple]], source: Source | None, force: bool = False
) -> WattgpuError | None:
    size = math.prod(len(values) for _, _, values in axes) if axes else 0
    if size <= (FORCED_MAX_GRID_POINTS if force else MAX_GRID_POINTS):
        return None
    if force or size > FORCED_MAX_GRID_POINTS:
        return field_error(
            source,
            "sweep.grid",
            f"{size:,} grid points is above the most a sweep takes, "
            f"{FORCED_MAX_GRID_POINTS:,} even with --force (each point is a full plan); use "
            "fewer values",
        )
    return field_error(
        source,
        "sweep.grid",
        f"{size:,} grid points is above the limit of {MAX_GRID_POINTS:,}; use fewer values "
        "or add --force",
    )


def block_problems(
    scenario: Scenario, resolve_gpu: Callable[[str], str | None], source: Source | None = None
) -> list[str]:
    """Every problem ``wattgpu sweep`` (without options) would refuse in the scenario's
    ``sweep:`` block: draws or grid points above the limits, grid names that are not a model
    entry or GPU of the scenario, site axes in a scenario with regions (``wattgpu validate``)."""
    block = scenario.sweep
    if block is None:
        return []
    problems = []
    if block.draws > MAX_DRAWS:
        problems.append(field_error(source, "sweep.draws", _draws_above(block.draws, "")))
    names = [m.name for m in scenario.models]
    axes, found = _axes(
        block, names, list(scenario.gpu_offers), bool(scenario.regions), resolve_gpu, source
    )
    problems += found
    too_many = _too_many_points(axes, source)
    problems += [too_many] if too_many is not None else []
    return [str(p) for p in problems]


def sweep_block_problems(
    scenario: Scenario,
    path: str | Path,
    overlays: Sequence[str | Path] = (),
    overrides: Sequence[str] = (),
) -> list[str]:
    """:func:`block_problems` of *scenario* read from *path* with *overlays* and *overrides*,
    each naming the file that set the field, against the catalog its plan uses."""
    from planner.pipeline import scenario_catalog

    source = field_source(path, overlays, overrides)
    return block_problems(scenario, scenario_catalog(scenario, path).try_resolve_gpu, source)


def axis_label(key: str, sub: str | None) -> str:
    """``key`` or ``key.sub`` of a grid axis."""
    return f"{key}.{sub}" if sub else key


def grid_points(
    block: SweepBlock | None,
    inputs: PlanningInputs,
    *,
    force: bool,
    resolve_gpu: Callable[[str], str | None] = lambda name: None,
    source: Source | None = None,
) -> tuple[list[str], list[dict[str, Any]]]:
    """(axis labels, the grid points) of *block*; no axes gives no points. *resolve_gpu* maps a
    GPU name of ``gpu_available`` to its catalog id (None: unknown); an error names the file
    *source* gives for its field."""
    if block is None:
        return [], []
    names = [m.name for m in inputs.models]
    axes, problems = _axes(
        block, names, list(inputs.inventory), bool(inputs.regions), resolve_gpu, source
    )
    if problems:
        raise problems[0]
    if not axes:
        return [], []
    too_many = _too_many_points(axes, source, force)
    if too_many is not None:
        raise too_many
    points = []
    for combo in itertools.product(*(values for _, _, values in axes)):
        point: dict[str, Any] = {}
        for (key, sub, _), value in zip(axes, combo, strict=True):
            if sub is None:
                point[key] = value
            else:
                point.setdefault(key, {})[sub] = value
        points.append(point)
    return [axis_label(k, s) for k, s, _ in axes], points
