"""CLI commands of the report family: ``report``, ``pareto`` and ``diff``.

Registered on the main app by :mod:`planner.cli.app`. Heavy imports (OR-Tools, XGBoost, matplotlib)
happen inside the command functions so ``wattgpu --help`` stays fast.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from planner.cli.predictors_option import ModelsOpt, chosen_predictor
from planner.cli.validate import OverlayOption, SetOption
from planner.scenario.limits import MAX_PARETO_POINTS, MAX_TIME_LIMIT_S
from predictors.core.errors import WattgpuError
from predictors.core.escape import terminal_text

if TYPE_CHECKING:
    from planner.documents.pareto import ParetoDocument
    from planner.documents.plan import PlanDocument
    from planner.documents.sweep import SweepDocument

ACCURACY_CSV = Path("docs") / "accuracy.predictions.csv"
"""Written by ``wattgpu evaluate`` (relative to the working directory or the checkout)."""
#: File name suffixes ``pareto --chart`` writes, and the format each names.
CHART_SUFFIXES = (".png", ".svg")


class ReportFormat(StrEnum):
    """Output format of ``wattgpu report``: Markdown, HTML, JSON, plain text, or the
    disclosure as SPDX 3.0 JSON-LD (AI profile) or CycloneDX 1.6 JSON."""

    md = "md"
    html = "html"
    json = "json"
    text = "text"
    spdx = "spdx"
    cyclonedx = "cyclonedx"


class ParetoFormat(StrEnum):
    """Output format of ``wattgpu pareto``: a text table or JSON."""

    table = "table"
    json = "json"


class DiffFormat(StrEnum):
    """Output format of ``wattgpu diff``: text lines or JSON."""

    text = "text"
    json = "json"


ReportFileArgument = Annotated[
    Path,
    typer.Argument(
        help="Scenario YAML file (planned first), a bundled example's name (`wattgpu scenarios`) "
        "or a saved plan JSON (`wattgpu plan --format json`; reported as saved, no predictor "
        "loaded)."
    ),
]
TimeLimitOption = Annotated[
    float | None,
    typer.Option(
        "--time-limit",
        min=0.001,
        max=MAX_TIME_LIMIT_S,
        help="Solver time limit per solve in seconds (default: scenario).",
    ),
]
TrustOption = Annotated[
    bool,
    typer.Option(
        "--trust",
        help="Report a saved plan whose figures do not recompute from its allocations "
        "(hand-edited or damaged) anyway, with a warning per field, instead of refusing it; "
        "the report shows the figures its allocations recompute to.",
    ),
]


def _accuracy_csv(given: Path | None) -> Path | None:
    if given is not None:
        return given
    if ACCURACY_CSV.is_file():
        return ACCURACY_CSV
    checkout = Path(__file__).resolve().parents[2] / ACCURACY_CSV
    return checkout if checkout.is_file() else None


def _write(text: str, output: Path | None, inputs: list[Path] | None = None) -> None:
    from predictors.core.output import write_output

    if output is None:
        typer.echo(text, nl=not text.endswith("\n"))
        return
    write_output(output, text, inputs=inputs or [])
    typer.echo(f"wrote {output}", err=True)


def report(
    file: ReportFileArgument,
    format_: Annotated[
        ReportFormat,
        typer.Option(
            "--format",
            "-f",
            help=(
                "md, html (one self-contained file), json, text, spdx (SPDX 3.0 JSON-LD, "
                "AI profile) or cyclonedx (CycloneDX 1.6 JSON)."
            ),
        ),
    ] = ReportFormat.md,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
    set_: SetOption = None,
    overlay: OverlayOption = None,
    pareto_points: Annotated[
        int,
        typer.Option(
            "--pareto-points",
            min=0,
            max=MAX_PARETO_POINTS,
            help="Points of the energy↔cost front (0 = skip).",
        ),
    ] = 5,
    accuracy: Annotated[
        Path | None,
        typer.Option(
            "--accuracy",
            help="Predictions CSV of `wattgpu evaluate` for the accuracy chart (html only).",
        ),
    ] = None,
    model_card: Annotated[
        Path | None,
        typer.Option(
            "--model-card",
            help="Model card (file or directory) describing the predictors "
            "(default: the shipped predictors/trained/model_card.json).",
        ),
    ] = None,
    time_limit: TimeLimitOption = None,
    trust: TrustOption = False,
    sweep: Annotated[
        Path | None,
        typer.Option(
            "--sweep",
            help="Sweep JSON (`wattgpu sweep --format json`) of the same scenario: adds its "
            "section (P10/P50/P90, SLA probabilities, fan, tornado, GPU mix); md, html, text.",
        ),
    ] = None,
    models: ModelsOpt = None,
) -> None:
    """Estimated energy and emissions disclosure of a plan (md, html, json or text)."""
    from planner.report.build import make_report
    from planner.report.render import render_report
    from planner.report.source import plan_source
    from planner.scenario.bundled import find_scenario
    from predictors.core.output import check_not_input
    from predictors.core.progress import Progress

    if output is not None:
        check_not_input(output, [file, *(overlay or [])], "--output")
    sweep_doc = _load_sweep(sweep, format_.value) if sweep is not None else None
    if accuracy is not None:
        _check_accuracy(accuracy, format_.value)

    file = find_scenario(file)
    with Progress("planning") as progress:
        src = plan_source(
            file,
            set_ or [],
            overlay or [],
            model_card=model_card,
            time_limit_s=time_limit,
            progress=progress.update,
            trust=trust,
            warn=_warn,
            flags=True,
            predictor=chosen_predictor(models),
        )
        if sweep_doc is not None:
            _check_sweep(sweep_doc, src.plan)
        csv = _accuracy_csv(accuracy)
        progress.update("writing the report (uncertainty bands, Pareto front)")
        data, _ = make_report(
            src.plan,
            src.card,
            pareto_points=pareto_points,
            inputs=src.inputs,
            scenario_file=str(file),
            accuracy_csv=csv,
            sla_probability=_sla_probability(sweep_doc, src.plan),
            catalog=src.catalog,
        )
    if not src.plan.has_solution:
        typer.echo(
            f"warning: plan is {src.plan.status}: "
            + "; ".join(src.plan.solve.messages or ("no solution",)),
            err=True,
        )
    text = render_report(data, format_.value, csv)
    if sweep_doc is not None:
        text = _with_sweep(text, format_.value, sweep_doc)
    _write(text, output, [file, *(overlay or []), *([sweep] if sweep else [])])


def _load_sweep(path: Path, fmt: str) -> SweepDocument:
    from planner.documents.base import load_document
    from planner.documents.sweep import SweepDocument

    if fmt in ("json", "spdx", "cyclonedx"):
        raise WattgpuError(
            f"--sweep: not with --format {fmt} (a JSON document; the sweep JSON is its own "
            "document); use md, html or text"
        )
    fix = "give a file written by `wattgpu sweep --format json`"
    return load_document(path, SweepDocument, "sweep JSON", fix, strict=True)


def _check_accuracy(path: Path, fmt: str) -> None:
    from planner.report.svg_charts import read_accuracy

    if fmt != "html":
        raise WattgpuError(
            f"--accuracy: only the html report draws the accuracy chart, not --format {fmt}; "
            "use --format html or leave --accuracy out"
        )
    read_accuracy(path)


def _check_sweep(doc: SweepDocument, plan: PlanDocument) -> None:
    if doc.scenario != plan.scenario:
        raise WattgpuError(
            f"--sweep: the sweep is of scenario {doc.scenario!r}, the plan of {plan.scenario!r}; "
            "give the sweep of the same scenario"
        )


def _sla_probability(
    doc: SweepDocument | None, plan: PlanDocument
) -> tuple[dict[str, float | None], int] | None:
    from planner.analysis.flags import sweep_sla_probability

    if doc is None:
        return None
    found = sweep_sla_probability(doc, plan)
    if found is None and doc.summary is not None:
        _warn(
            "warning: --sweep: the sweep's base plan is not this plan (other deployments, loads "
            "or prices): its SLA probabilities are left out of the flags (sweep the same "
            "scenario and --set)"
        )
    return found


def _with_sweep(text: str, fmt: str, doc: SweepDocument) -> str:
    if fmt == "html":
        from planner.report.sweep_html import add_sweep_html

        return add_sweep_html(text, doc)
    from planner.report.sweep_view import sweep_markdown

    return text.rstrip("\n") + "\n\n" + sweep_markdown(doc)


def pareto(
    file: ReportFileArgument,
    points: Annotated[
        int,
        typer.Option(
            "--points", "-n", min=2, max=MAX_PARETO_POINTS, help="Cost caps between the ends."
        ),
    ] = 7,
    format_: Annotated[ParetoFormat, typer.Option("--format", "-f")] = ParetoFormat.table,
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
    from planner.report.source import plan_source
    from planner.scenario.bundled import find_scenario
    from predictors.core.progress import Progress

    if chart is not None and chart.suffix.lower() not in CHART_SUFFIXES:
        raise WattgpuError(
            f"--chart {chart}: the chart is written as PNG or SVG; give a file name ending in "
            f"{' or '.join(CHART_SUFFIXES)}"
        )
    file = find_scenario(file)
    with Progress("planning") as progress:
        src = plan_source(
            file,
            set_ or [],
            overlay or [],
            time_limit_s=time_limit,
            progress=progress.update,
            trust=trust,
            warn=_warn,
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

        write_output(chart, drawn, inputs=[file, *(overlay or [])], option="--chart")
        typer.echo(f"wrote {chart}", err=True)
    if format_ is ParetoFormat.json:
        typer.echo(json.dumps(front.to_json_dict(), indent=2))
        return
    from predictors.core.escape import terminal_text

    typer.echo(terminal_text("\n".join(pareto_lines(front))))


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

    d = diff_files(a, b, trust=trust, warn=_warn)
    if format_ is DiffFormat.json:
        typer.echo(json.dumps(d.to_json_dict(), indent=2))
    else:
        typer.echo(terminal_text("\n".join(d.lines())))


def _warn(line: str) -> None:
    typer.echo(terminal_text(line), err=True)


def register(app: typer.Typer) -> None:
    """Add ``report``, ``pareto`` and ``diff`` to *app*."""
    app.command("report")(report)
    app.command("pareto")(pareto)
    app.command("diff")(diff)
