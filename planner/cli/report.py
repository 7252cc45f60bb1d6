"""CLI commands of the report family: ``report``, and ``pareto`` and ``diff``
(:mod:`planner.cli.pareto`).

Registered on the main app by :mod:`planner.cli.app`. Heavy imports (OR-Tools, XGBoost, matplotlib)
happen inside the command functions so ``wattgpu --help`` stays fast.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from planner.cli.predictors_option import ModelsOpt, chosen_predictor
from planner.cli.printing import shown_path
from planner.cli.report_options import ReportFileArgument, TimeLimitOption, TrustOption, warn
from planner.cli.validate import OverlayOption, SetOption
from planner.scenario.limits import MAX_PARETO_POINTS
from predictors.core.errors import WattgpuError

if TYPE_CHECKING:
    from planner.documents.plan import PlanDocument
    from planner.documents.sweep import SweepDocument

ACCURACY_CSV = Path("docs") / "accuracy.predictions.csv"
"""Written by ``wattgpu evaluate`` (relative to the working directory or the checkout)."""


class ReportFormat(StrEnum):
    """Output format of ``wattgpu report``: Markdown, HTML, JSON, plain text, or the
    disclosure as SPDX 3.0 JSON-LD (AI profile) or CycloneDX 1.6 JSON."""

    md = "md"
    html = "html"
    json = "json"
    text = "text"
    spdx = "spdx"
    cyclonedx = "cyclonedx"


def _front_points(value: int) -> int:
    """``--pareto-points``: 0 (no front) or 2 and more, as ``pareto --points`` (a front of one
    point has no ends)."""
    if value == 1:
        raise typer.BadParameter(
            "1 is not a front (it has two ends) — give 2 to "
            f"{MAX_PARETO_POINTS} points, or 0 for no front"
        )
    return value


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
    typer.echo(f"wrote {shown_path(output)}", err=True)


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
            callback=_front_points,
            help="Points on the energy↔cost front, both ends included: 2 to "
            f"{MAX_PARETO_POINTS}, or 0 for no front (as pareto --points).",
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
    user_catalog: Annotated[
        Path | None,
        typer.Option(
            "--user-catalog",
            help="User catalog of a saved plan (default: the one the plan records).",
            file_okay=False,
        ),
    ] = None,
) -> None:
    """Estimated energy/emissions disclosure of a plan (md, html, json, text, spdx, cyclonedx)."""
    from planner.report.build import make_report
    from planner.report.render import render_report
    from planner.report.source import plan_source
    from planner.scenario.bundled import find_scenario
    from predictors.core.output import check_not_input
    from predictors.core.progress import Progress

    # every file the command reads: the report never replaces one (the model card and the
    # accuracy CSV too: fuzz round 27 found both overwritten)
    extra = [p for p in (sweep, model_card, accuracy) if p is not None]
    if output is not None:
        check_not_input(output, [file, *(overlay or []), *extra], "--output")
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
            warn=warn,
            flags=True,
            predictor=chosen_predictor(models),
            user_catalog=user_catalog,
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
    if data.disclosure is None and format_.value in ("spdx", "cyclonedx"):
        raise WattgpuError(
            f"{file}: status {src.plan.status} ("
            + "; ".join(src.plan.solve.messages or ("no solution",))
            + f"), no allocations to disclose as {format_.value}; plan a feasible scenario first"
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
    _write(text, output, [file, *(overlay or []), *extra])


def _load_sweep(path: Path, fmt: str) -> SweepDocument:
    from planner.documents.base import load_document
    from planner.documents.sweep import SweepDocument

    if fmt in ("json", "spdx", "cyclonedx"):
        raise WattgpuError(
            f"--sweep: not with --format {fmt} (a JSON document; the sweep JSON is its own "
            "document); use md, html or text"
        )
    fix = "give a file written by `wattgpu sweep --format json`"
    return load_document(path, SweepDocument, "sweep JSON", fix, strict=True, kind="sweep")


def _check_accuracy(path: Path, fmt: str) -> None:
    from planner.report.svg_charts import read_accuracy

    if fmt != "html":
        raise WattgpuError(
            f"--accuracy: only the html report draws the accuracy chart, not --format {fmt}; "
            "use --format html or leave --accuracy out"
        )
    try:
        read_accuracy(path)
    except WattgpuError as exc:  # name the option, as every other option's error does
        raise WattgpuError(f"--accuracy: {exc}") from None


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
        warn(
            "warning: --sweep: the sweep's base plan is not this plan (other deployments, loads "
            "or prices): its SLA probabilities are left out of the flags (sweep the same "
            "scenario and --set)"
        )
    elif doc.summary is None and _other_plan(doc, plan):  # a grid-only sweep: no probabilities
        warn(
            "warning: --sweep: the sweep's base plan is not this plan (other deployments, loads "
            "or prices): its section shows that plan's grid, not this one's (sweep the same "
            "scenario and --set)"
        )
    return found


def _other_plan(doc: SweepDocument, plan: PlanDocument) -> bool:
    """True when the sweep's base plan is another fleet, or the same one at other totals (as
    :func:`planner.analysis.flags.sweep_sla_probability` reads it)."""
    from planner.analysis.flags import sweep_plan_mismatch
    from planner.inputs import deployment_text

    mine = "; ".join(deployment_text(a.key, a.replicas) for a in plan.allocations)
    return doc.base.fleet != mine or sweep_plan_mismatch(doc, plan) is not None


def _with_sweep(text: str, fmt: str, doc: SweepDocument) -> str:
    if fmt == "html":
        from planner.report.sweep_html import add_sweep_html

        return add_sweep_html(text, doc)
    from planner.report.sweep_html import sweep_text
    from planner.report.sweep_view import sweep_markdown

    # the text report lays the section out as its own parts: names as they are, no Markdown
    section = sweep_text(doc) if fmt == "text" else sweep_markdown(doc)
    return text.rstrip("\n") + "\n\n" + section


def register(app: typer.Typer) -> None:
    """Add ``report``, ``pareto`` and ``diff`` (:mod:`planner.cli.pareto`) to *app*."""
    from planner.cli.pareto import diff, pareto

    app.command("report")(report)
    app.command("pareto")(pareto)
    app.command("diff")(diff)
