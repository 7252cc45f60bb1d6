"""The ``wattgpu`` command: the only place that prints or exits.

Each command family lives in its own module and registers itself on :data:`app`:
``cli_catalog`` (catalog, with ``cli_hf_import`` for import-hf), ``cli_data`` (data summary),
``cli_predictors`` (train, evaluate, predict), ``cli_scenarios`` (the bundled examples),
``cli_validate`` (validate), ``cli_plan`` (plan, compare), ``cli_report`` (report, pareto,
diff) and ``cli_schema`` (schema).
Exit codes (the README's rules): errors the user can fix
(:class:`predictors.core.errors.WattgpuError`) print one line per problem and exit 1; a malformed
command line (unknown option, missing argument, bad choice) is reported by typer with the usage
and exits 2; a bug exits 2 with ``error: internal error …``. ``--debug`` anywhere on the command
line shows the traceback instead.
"""

from __future__ import annotations

import sys

import typer

from planner.cli import catalog as cli_catalog
from planner.cli import data as cli_data
from planner.cli import models as cli_predictors
from planner.cli import plan as cli_plan
from planner.cli import report as cli_report
from planner.cli import scenarios as cli_scenarios
from planner.cli import schema as cli_schema
from planner.cli import validate as cli_validate
from predictors.core.errors import WattgpuError
from predictors.core.escape import terminal_text
from predictors.core.version import __version__

app = typer.Typer(
    name="wattgpu",
    help="Plan LLM inference fleets: predict GPU power and latency, choose GPUs, report energy.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"wattgpu {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """wattgpu: energy-aware GPU planning for LLM inference."""


for _module in (
    cli_catalog,
    cli_data,
    cli_predictors,
    cli_scenarios,
    cli_validate,
    cli_plan,
    cli_report,
    cli_schema,
):
    _module.register(app)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    try:
        app(args=args, prog_name="wattgpu", standalone_mode=True)
    except WattgpuError as exc:
        if debug:
            raise
        for line in str(exc).splitlines() or ["unknown error"]:
            typer.echo(f"error: {terminal_text(line)}", err=True)
        sys.exit(1)
    except Exception as exc:  # a bug, not bad input: one line, the traceback on --debug
        if debug:
            raise
        first = terminal_text((str(exc).splitlines() or [""])[0][:300])
        typer.echo(
            f"error: internal error {type(exc).__name__}: {first} "
            "(rerun with --debug for the traceback and please report it)",
            err=True,
        )
        sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    main()
