"""The ``wattgpu`` command: the only place that prints or exits.

Each command family lives in its own module and registers itself on :data:`app`:
``cli_catalog`` (catalog, with ``cli_hf_import`` for import-hf), ``cli_data`` (data summary),
``cli_predictors`` (train, evaluate, predict), ``cli_scenarios`` (the bundled examples),
``cli_validate`` (validate), ``cli_plan`` (plan, compare), ``cli_report`` (report, pareto,
diff) ``cli_schema`` (schema), ``cli_docs`` (docs) and ``cli_sweep`` (sweep).
Exit codes (the README's rules): errors the user can fix
(:class:`predictors.core.errors.WattgpuError`) print one line per problem and exit 1; a malformed
command line (unknown option, missing argument, bad choice) is reported by typer with the usage
and exits 2; a bug exits 2 with ``error: internal error …``. ``--debug`` anywhere on the command
line shows the traceback instead. A line break in a path the user typed is shown escaped
(:mod:`planner.cli.oneline`), so it cannot split an error line. Standard output that cannot be
written (a full disk, a closed pipe, a closed descriptor: ``>&-``) is one clean line and exit 1;
a command that writes nothing there (its output to ``--output``) runs as usual. On a terminal or
pipe whose encoding cannot show a character (an ASCII-only locale) that character is replaced,
never an error. Every command's ``--output``/``--chart`` refuses a directory name as typed
(``-o newdir/``; :mod:`planner.cli.outputs`).
"""

from __future__ import annotations

import errno
import functools
import io
import os
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from planner.cli import catalog as cli_catalog
from planner.cli import data as cli_data
from planner.cli import docs as cli_docs
from planner.cli import models as cli_predictors
from planner.cli import plan as cli_plan
from planner.cli import report as cli_report
from planner.cli import scenarios as cli_scenarios
from planner.cli import schema as cli_schema
from planner.cli import sweep as cli_sweep
from planner.cli import threads
from planner.cli import validate as cli_validate
from planner.cli.number_options import guard_number_options
from planner.cli.oneline import escape_breaks, escape_user_breaks, user_values
from planner.cli.outputs import guard_file_options
from predictors.core.errors import WattgpuError
from predictors.core.escape import terminal_text
from predictors.core.signals import stop_signals_exit
from predictors.core.version import __version__

#: Options whose value may be left out: option -> (value when bare, the values it takes).
OPTIONAL_VALUES: dict[str, tuple[str, frozenset[str]]] = {
    "--candidates": ("best", frozenset({"best", "all"})),
}


def bare_optional_values(args: list[str]) -> list[str]:
    """*args* with every bare option of :data:`OPTIONAL_VALUES` given its default value
    (``--candidates`` -> ``--candidates=best``; ``--candidates all`` stays), since click
    options take a value always or never; nothing after ``--`` is touched."""
    out: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i:]
        spec = OPTIONAL_VALUES.get(arg)
        if spec is not None and (i + 1 >= len(args) or args[i + 1] not in spec[1]):
            arg = f"{arg}={spec[0]}"
        out.append(arg)
    return out


class _Group(TyperGroup):
    """The root command group: bare optional values are filled in before parsing, on every way
    in (the console script, ``python -m``, typer's test runner); every command's file options
    refuse a directory name as typed (:mod:`planner.cli.outputs`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        guard_file_options(self.commands)
        guard_number_options(self.commands)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # click's Context
        return super().parse_args(ctx, bare_optional_values(args))


app = typer.Typer(
    cls=_Group,
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
    cli_docs,
    cli_sweep,
):
    _module.register(app)


@functools.cache
def command() -> Any:
    """The Click command of :data:`app`, built once per process: building it inspects every
    command's signature (about 40 ms), which ``app(...)`` would pay again on every call of
    :func:`main` in one process (the test suites' in-process runs)."""
    return typer.main.get_command(app)


def _tolerate_narrow_encodings() -> None:
    """Replace what an ASCII-only (or other narrow) stdout/stderr encoding cannot show."""
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) or "utf-8"
        try:
            "×—µτ…".encode(encoding)
        except (UnicodeEncodeError, LookupError):
            reconfigure = getattr(stream, "reconfigure", None)
            if reconfigure is not None:
                reconfigure(errors="replace")


class StdoutClosedError(OSError):
    """Writing a standard output whose descriptor is closed."""


class _ClosedStdout(io.RawIOBase):
    """Standard output when its descriptor is closed (``>&-``: Python's ``sys.stdout`` is None):
    the first write fails as writing a closed descriptor does (EBADF), any later one (the
    interpreter's flush at exit) is dropped."""

    failed = False

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        if not self.failed:
            self.failed = True
            raise StdoutClosedError(errno.EBADF, "standard output is closed")
        return len(data)


def _stand_in_for_closed_stdout() -> None:
    """A closed standard output (``sys.stdout`` None) made a buffered stream that fails when
    something is written to it, so a command that prints nothing there (``-o FILE``) succeeds
    and one that prints is the one clean error line of :func:`_output_failed`."""
    if sys.stdout is None:
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(_ClosedStdout()), encoding="utf-8")


#: Errors of writing standard output that are no bug: a full disk, a closed pipe, an I/O error.
_WRITE_FAILURES = (errno.ENOSPC, errno.EPIPE, errno.EIO, errno.EFBIG)


def _output_failed(exc: OSError) -> None:
    """Standard output could not be written: say so on stderr (if it still works), exit 1."""
    if exc.errno == errno.EPIPE:  # the reader went away (`| head`): nothing more to say
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), sys.stdout.fileno())
        sys.exit(1)
    reason = exc.strerror or str(exc)
    closed = isinstance(exc, StdoutClosedError)
    fix = "write it elsewhere" if closed else "free space or write it elsewhere"
    try:
        typer.echo(f"error: cannot write the output ({reason}) — {fix} with --output", err=True)
    except OSError:
        pass
    sys.exit(1)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    _stand_in_for_closed_stdout()
    _tolerate_narrow_encodings()
    try:
        try:
            _check_environment()
            with stop_signals_exit():  # SIGTERM, SIGHUP: no half-written file left behind
                command().main(args=args, prog_name="wattgpu", standalone_mode=True)
        finally:
            sys.stdout.flush()  # a full disk shows up here, not at interpreter exit
    except WattgpuError as exc:
        if debug:
            raise
        # one line per problem: a line break in a path the user typed is escaped, not a break
        text = escape_user_breaks(str(exc), user_values(args, os.environ))
        from planner.scenario.text import escape_bidi  # a path's U+202E cannot reverse a line

        for line in text.splitlines() or ["unknown error"]:
            typer.echo(f"error: {escape_bidi(terminal_text(line))}", err=True)
        sys.exit(1)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG and not debug:
            _name_too_long(exc)
        failed = isinstance(exc, StdoutClosedError) or exc.errno in _WRITE_FAILURES
        if debug or not failed:
            _internal_error(exc, debug)
        _output_failed(exc)
    except Exception as exc:  # a bug, not bad input: one line, the traceback on --debug
        _internal_error(exc, debug)


def _name_too_long(exc: OSError) -> None:
    """A path (from an option, an argument or an environment variable) whose name the file
    system refuses as too long: one line naming it, exit 1 (Python's pathlib raises this from
    ``exists()`` and ``is_file()``, so any command can meet it)."""
    name = str(exc.filename) if exc.filename is not None else "a path"
    shown = name if len(name) <= 80 else f"{name[:40]}...{name[-30:]} ({len(name)} characters)"
    shown = terminal_text(escape_breaks(shown))
    typer.echo(
        f"error: {shown}: file name too long for the file system (at most 255 "
        "bytes per path component); use a shorter name",
        err=True,
    )
    sys.exit(1)


def _check_environment() -> None:
    """Refuse an environment polars would panic on or silently ignore, before it reads it."""
    problem = threads.pool_variable_problem()
    if problem is not None:
        raise WattgpuError(problem)


def _internal_error(exc: Exception, debug: bool) -> None:
    if debug:
        raise exc
    first = terminal_text((str(exc).splitlines() or [""])[0][:300])
    typer.echo(
        f"error: internal error {type(exc).__name__}: {first} "
        "(rerun with --debug for the traceback and please report it)",
        err=True,
    )
    sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    main()
