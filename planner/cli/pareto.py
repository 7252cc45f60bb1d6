"""CLI commands ``pareto`` (the energy ↔ cost front of a scenario or a saved plan) and ``diff``
(what changed between two plan JSON files); registered with ``report`` by
:func:`planner.cli.report.register`.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from planner.cli.predictors_option import ModelsOpt, chosen_predictor
from planner.cli.printing import OutputOption, shown_path
from planner.cli.report_options import ReportFileArgument, TimeLimitOption, TrustOption, warn
from planner.cli.validate import OverlayOption, SetOption
from planner.scenario.limits import MAX_PARETO_POINTS
from predictors.core.errors import WattgpuError

if TYPE_CHECKING:
    from planner.documents.pareto import ParetoDocument

#: File name suffixes ``pareto --chart`` writes, and the format each names.
CHART_SUFFIXES = (".png", ".svg")


class ParetoFormat(StrEnum):
    """Output format of ``wattgpu pareto``: a text table or JSON."""

    table = "table"
    json = "json"


class DiffFormat(StrEnum):
    """Output format of ``wattgpu diff``: text lines or JSON."""

    text = "text"
    json = "json"


def pareto(
    file: ReportFileArgument,
    points: Annotated[
        int,
        typer.Option(
            "--points",
            "-n",
            min=2,
            max=MAX_PARETO_POINTS,
            help="Points on the front, both ends (least cost, least energy) included.",
        ),
    ] = 7,
    format_: Annotated[ParetoFormat, typer.Option("--format", "-f")] = ParetoFormat.table,
    output: OutputOption = None,
    chart: Annotated[
        Path | None,
        typer.Option("--chart", help="Also write the front as a chart to this .png or .svg file."),
    ] = None,
    set_: SetOption = None,
    overlay: OverlayOption = None,
    time_limit: TimeLimitOption = None,
    trust: TrustOption = False,
    models: ModelsOpt = None,
) -> None:
    """Energy ↔ cost Pareto front by ε-constraint (each point a solved plan)."""
    from planner.analysis.pareto import pareto_front
    from planner.cli.printing import emit
    from planner.report.source import plan_source
    from planner.scenario.bundled import find_scenario
    from predictors.core.escape import terminal_text
    from predictors.core.output import check_output_path
    from predictors.core.progress import Progress

    if chart is not None and chart.suffix.lower() not in CHART_SUFFIXES:
        raise WattgpuError(
            f"--chart {chart}: the chart is written as PNG or SVG; give a file name ending in "
            f"{' or '.join(CHART_SUFFIXES)}"
        )
    file = find_scenario(file)
    inputs = [file, *(overlay or [])]
    if output is not None:  # before solving: a path that cannot be written loses nothing
        check_output_path(output, inputs, "--output")
        if chart is not None and output.resolve() == chart.resolve():
            raise WattgpuError(
                f"--output {output}: is the --chart file too — give the front and the chart "
                "different file names"
            )
    with Progress("planning") as progress:
        src = plan_source(
            file,
            set_ or [],
            overlay or [],
            time_limit_s=time_limit,
            progress=progress.update,
            trust=trust,
            warn=warn,
            predictor=chosen_predictor(models),
        )
        if not src.plan.has_solution:
            raise WattgpuError(
                f"{file}: plan is {src.plan.status}: "
                + "; ".join(src.plan.solve.messages or ("no solution",))
            )

        def on_point(done: int, total: int) -> None:
            progress.update(f"Pareto front: solved {done} of {total} plans")

        front = pareto_front(src.inputs, points, src.plan, on_point=on_point)
    if chart is not None:
        from planner.report.charts import pareto_chart

        drawn = pareto_chart(front, chart.suffix.lower().lstrip("."))
        if drawn is None:
            raise WattgpuError(f"--chart {chart}: the front has no points to draw")
        from predictors.core.output import write_output

        write_output(chart, drawn, inputs=inputs, option="--chart")
        typer.echo(f"wrote {shown_path(chart)}", err=True)
    if format_ is ParetoFormat.json:
        text = json.dumps(front.to_json_dict(), indent=2)
    else:
        text = terminal_text("\n".join(pareto_lines(front)))
    emit(text + "\n", output, f"{format_.value} Pareto front", inputs=inputs)


def pareto_lines(front: ParetoDocument) -> list[str]:
    """The front as a text table with the chosen plan and the baselines below it."""
    from planner.report.blocks import gpus_text, num

    lines = [
        f"Estimated energy ↔ cost Pareto front of {front.scenario}",
        f"{'point':<12} {'facility kWh':>14} {'cost $':>14} {'CO2e kg':>12}  GPUs",
    ]
    for p in front.points:
        lines.append(
            f"{p.label:<12} {num(p.facility_energy_kwh, 6):>14} "
            f"{num(p.cost_usd, 6):>14} {num(p.carbon_kg, 5):>12}  {gpus_text(p.gpus)}"
        )
    marks = ([front.chosen] if front.chosen else []) + list(front.baselines)
    if marks:
        lines.append("markers:")
        for m in marks:
            lines.append(
                f"  {m.label}: {num(m.facility_energy_kwh, 6)} kWh, "
                f"{num(m.cost_usd, 6)} $, {num(m.carbon_kg, 5)} kg CO2e"
            )
    lines.append(f"method: {front.method}")
    lines.extend(f"note: {m}" for m in front.messages)
    return lines


def diff(
    a: Annotated[Path, typer.Argument(help="Plan JSON (`wattgpu plan --format json`).")],
    b: Annotated[Path, typer.Argument(help="Plan JSON to compare with A.")],
    format_: Annotated[DiffFormat, typer.Option("--format", "-f")] = DiffFormat.text,
    trust: TrustOption = False,
) -> None:
    """What changed between two plan JSON files: allocations, totals, status, assumptions."""
    from planner.analysis.diff import diff_files
    from predictors.core.escape import terminal_text

    d = diff_files(a, b, trust=trust, warn=warn)
    if format_ is DiffFormat.json:
        typer.echo(json.dumps(d.to_json_dict(), indent=2))
    else:
        typer.echo(terminal_text("\n".join(d.lines())))
