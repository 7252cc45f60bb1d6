"""CLI commands of the predictors: ``train`` and ``evaluate``; ``predict`` is
:mod:`planner.cli.predict` (registered here with them)."""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from planner.cli import predict as cli_predict
from planner.cli.printing import shown_path
from predictors.core.errors import WattgpuError
from predictors.core.output import write_output

DataOption = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help="Measurement directory (default: $WATTGPU_DATA, else ../shared/data/measurements "
        "beside the wattgpu checkout or the working directory).",
    ),
]


def _data_dir(data: Path | None) -> Path:
    from predictors.core.paths import default_data_dir

    chosen = data or default_data_dir()
    if chosen is None:
        raise WattgpuError(
            "--data: no measurement directory given and ../shared/data/measurements not found; "
            "pass --data DIR or set WATTGPU_DATA"
        )
    if not chosen.is_dir():
        raise WattgpuError(f"--data: {chosen} is not a directory; pass an existing directory")
    return chosen


def _load_table(data: Path | None) -> tuple[Any, Path]:
    from predictors.catalog.store import load_catalog
    from predictors.measurements import load_measurements

    directory = _data_dir(data)
    catalog = load_catalog()
    ms = load_measurements(directory, catalog)
    if ms.table.is_empty():
        why = "; ".join(f"{r} ({n} rows)" for r, n in ms.dropped.head(3).rows())
        raise WattgpuError(
            f"--data: {directory} holds no usable measurement rows"
            + (f": {why}" if why else "")
            + f" — `wattgpu data summary --data {directory}` lists every row dropped and the "
            "catalog names nearest to unresolved ones"
        )
    return (ms, catalog), directory


def _stored_metrics(path: Path) -> Any:
    """The held-out metrics an earlier ``evaluate --metrics-to`` stored beside the models
    (recorded in the new card: a list of metric records), {} when there are none; a one-line
    error when the file is not JSON or not a list of objects."""
    if not path.is_file():
        return {}
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise WattgpuError(
            f"{path}: not valid JSON ({str(exc).splitlines()[0][:80]}) — delete it, or write it "
            "again with `wattgpu evaluate --metrics-to DIR`"
        ) from None
    if not (isinstance(metrics, list) and all(isinstance(m, dict) for m in metrics)):
        raise WattgpuError(
            f"{path}: must be a JSON list of held-out metric records (what `wattgpu evaluate "
            "--metrics-to DIR` writes) — delete it, or write it again that way"
        )
    return metrics


def train(
    data: DataOption = None,
    output_text: Annotated[
        str | None,  # as typed: a Path reads './-' as '-', a directory named '-'
        typer.Option(
            "--output",
            metavar="<path>",  # as a Path option shows; the value stays as typed (a str)
            help="Model directory (default in a source checkout: predictors/trained; required "
            "for an installed wattgpu).",
        ),
    ] = None,
) -> None:
    """Train the power and ITL predictors on all usable rows and write boosters + model card."""
    from predictors.core.paths import is_source_checkout, trained_dir
    from predictors.estimators import artifacts
    from predictors.training.train import train as fit

    if output_text is None and not is_source_checkout():
        raise WattgpuError(
            "--output: required for an installed wattgpu (the shipped models live inside the "
            "installed package, which train never overwrites) — pass --output DIR"
        )
    if output_text == "-":  # docs/cli.md, "Output files": never standard output
        raise WattgpuError(
            "--output -: names no directory (train writes a model directory, never to standard "
            "output); give a directory such as my-models (./- for a directory named '-')"
        )
    output = Path(output_text) if output_text is not None else None
    if output is not None:
        artifacts.check_model_output(output, "--output")
    (ms, catalog), directory = _load_table(data)
    out = output or trained_dir()
    metrics = _stored_metrics(out / "evaluation_summary.json")
    start = time.perf_counter()
    models = fit(ms.table, catalog, metrics)
    missing = [t for t in ("power", "itl") if t not in models.targets]
    if missing:  # nothing written: the planner needs both
        skipped = models.card.get("selection", {})
        counts = ", ".join(f"{t} {skipped.get(t, {}).get('skipped', '?')}" for t in missing)
        raise WattgpuError(
            f"--data {directory}: too few usable rows to train ({counts}); nothing written — "
            f"`wattgpu data summary --data {directory}` lists the rows dropped and why"
        )
    artifacts.save(models, out)
    rows = models.card["training_data"]["rows"]
    typer.echo(
        f"trained on {directory}: power {rows['power']} rows, ITL {rows['itl']} rows "
        f"in {time.perf_counter() - start:.1f} s -> {out}"
    )


def evaluate(
    data: DataOption = None,
    output: Annotated[Path, typer.Option("--output", help="Markdown report to write.")] = Path(
        "docs/accuracy.md"
    ),
    model_dir: Annotated[
        Path | None,
        typer.Option(
            "--metrics-to",
            help="Model directory: also write evaluation_summary.json there and the held-out "
            "metrics and residuals into its model card.",
        ),
    ] = None,
) -> None:
    """Score ours, the paper's recipe and physical baselines on CV, LOGO and LOLO splits."""
    import polars as pl

    from predictors.api import Predictor
    from predictors.catalog.store import load_catalog
    from predictors.core.output import check_output_path, check_outside
    from predictors.core.paths import is_source_checkout, models_dir
    from predictors.core.progress import Progress
    from predictors.core.version import __version__
    from predictors.estimators.artifacts import protect_model_dir, require_model_dir
    from predictors.training.accuracy import breakdown, run, summarise, unseen_protocol
    from predictors.training.accuracy_report import render
    from predictors.training.evaluate import TARGETS, target_rows
    from predictors.training.layout_report import by_layout
    from predictors.training.stability import seed_stability
    from predictors.training.train import prepare
    from predictors.training.unseen_rank import same_model_tau

    given = _data_dir(data)
    if model_dir is not None:
        check_outside(model_dir, given, "--metrics-to", "--data")
        require_model_dir(model_dir, "--metrics-to")
        protect_model_dir(model_dir)
    protect_model_dir(models_dir())  # the predictors the report's dominance sweep reads
    load_catalog()  # registers the catalogs the data is read against (cached for the load)
    for path in (output, output.with_suffix(".predictions.csv")):  # before the long work
        check_outside(path, given, "--output", "--data")
        check_output_path(path)
    (ms, catalog), directory = _load_table(data)
    frame = prepare(ms.table, catalog)
    _require_rows(frame, directory)
    start = time.perf_counter()
    with Progress("evaluating") as progress:

        def step(what: str) -> None:
            if progress.enabled:
                progress.update(f"evaluating {what}")
            else:
                typer.echo(f"  evaluating {what}", err=True)

        long = run(frame, progress=step)
        stability = seed_stability(frame, progress=step)
        same_model = same_model_tau(frame, progress=step)
    summary = summarise(long)
    seconds = time.perf_counter() - start
    meta = {
        # in a checkout relative to it, so the committed report names no machine's path; in an
        # installed wheel as given (relative to site-packages it meant nothing: fuzz round 29)
        "data": (
            os.path.relpath(directory.resolve(), Path(__file__).resolve().parents[2])
            if is_source_checkout()
            else str(directory)
        ),
        "rows": {t: target_rows(frame, TARGETS[t]).height for t in TARGETS},
        "sources": sorted(frame["source"].unique().to_list()),
        "gpus": sorted(frame["gpu"].unique().to_list()),
        "version": __version__,
        "seconds": seconds,
        "method": _method_text(),
        "dominance": _dominance(),
        "stability": stability,
        "same_model_tau": same_model,
        "unseen_protocol": unseen_protocol(long),
        "layouts": by_layout(long, frame, Predictor.load(catalog=catalog)),
    }
    text = render(summary, breakdown(long, "source", "logo"), breakdown(long, "gpu", "logo"), meta)
    write_output(output, text)
    # Held-out predictions of ours and the paper's recipe on unseen GPUs / LLMs, for the
    # predicted-vs-measured chart of `wattgpu report` (5 significant digits keep it small).
    held = long.filter(
        pl.col("method").is_in(["ours", "paper_recipe"]) & pl.col("split").is_in(["logo", "lolo"])
    ).with_columns(pl.col(c).round_sig_figs(5) for c in ("measured", "predicted", "lo", "hi"))
    write_output(output.with_suffix(".predictions.csv"), held.write_csv)
    records = [
        {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
        for r in summary.filter(pl.col("method") == "ours").iter_rows(named=True)
    ]
    if model_dir is not None:
        write_output(
            model_dir / "evaluation_summary.json",
            json.dumps(records, indent=2, sort_keys=True) + "\n",
            option="--metrics-to",
            updates_input=True,  # the summary of the models it evaluates, protected from --output
        )
        card_path = model_dir / "model_card.json"
        if card_path.exists():
            from predictors.training.residuals import add_residuals

            vendors = dict(
                zip(catalog.gpus["id"].to_list(), catalog.gpus["vendor"].to_list(), strict=True)
            )
            add_residuals(card_path, long, vendors, records)
    typer.echo(f"wrote {shown_path(output)} ({seconds:.0f} s)")
    for r in summary.iter_rows(named=True):
        typer.echo(
            f"  {r['target']:5} {r['split']:4} {r['method']:15} MdAPE {r['mdape_pct']:6.1f} %"
        )


def _require_rows(frame: Any, directory: Path) -> None:
    """WattgpuError, before any work or output, unless the power and ITL targets each have the
    rows :func:`predictors.training.train.train` needs to fit them (as train refuses)."""
    from predictors.training.evaluate import MIN_TARGET_ROWS, TARGETS, target_rows

    counts = {t: target_rows(frame, TARGETS[t]).height for t in ("power", "itl")}
    short = [f"{t} {n} rows < {MIN_TARGET_ROWS}" for t, n in counts.items() if n < MIN_TARGET_ROWS]
    if short:
        raise WattgpuError(
            f"--data {directory}: too few usable rows to evaluate ({', '.join(short)}); nothing "
            f"written — `wattgpu data summary --data {directory}` lists the rows dropped and why"
        )


def _dominance() -> dict[str, Any] | None:
    """Dominance sweep of the shipped predictors (None when none are trained yet)."""
    from predictors.api import Predictor
    from predictors.training import dominance

    try:
        return dominance.summary(Predictor.load())
    except WattgpuError:
        return None


def _method_text() -> str:
    from predictors.estimators.candidates import power_candidates

    cands = power_candidates()
    p = cands[0]
    return (
        f"Ours: XGBoost on `{p.transform}` (power) and `log_itl_over_roofline` (ITL); inside "
        "every training set a nested grouped CV (inner folds grouped like the outer split) picks "
        f"one of the configurations {', '.join(c.name for c in cands)} (physics-full: the "
        "paper's features plus roofline physics, load and source nuisance codes; "
        "physics-transfer: the same without GPU-identity columns such as bandwidth, clocks, "
        f"transistors and year), {p.num_boost_round} trees, max depth {p.params['max_depth']}, "
        "power monotone non-decreasing in batch. Paper recipe: XGBoost max_depth 6, 200 trees, "
        "reg_lambda 150 on power/TDP and max_depth 5, 100 trees on log ITL with the paper's "
        "features. Intervals: since v3 the same locally adaptive conformal calibration as v2 "
        "(see above), on the chosen configuration's residuals."
    )


def register(app: typer.Typer) -> None:
    """Add ``train``, ``evaluate`` and ``predict`` to *app*."""
    app.command("train")(train)
    app.command("evaluate")(evaluate)
    app.command("predict")(cli_predict.predict)
