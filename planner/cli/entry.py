"""The ``wattgpu`` console script: :func:`planner.cli.app.main`, stoppable by Ctrl-C from the start.

Importing :mod:`planner.cli.app` (polars, typer and every command module) takes about a second,
before any of the command's own handling of Ctrl-C is in place: a Ctrl-C then printed Python's
``KeyboardInterrupt`` traceback (exit status -2). This module imports only the standard library,
so the script's first import is cheap, and a ``KeyboardInterrupt`` while the command line loads
(or at any later point the command does not handle) exits with status 130, the one typer gives
a Ctrl-C during a command, without a traceback (docs/cli.md "Stopping a command").
``planner.cli.app:main`` stays the in-process entry point of the tests and of Python callers.
"""

from __future__ import annotations

import sys

#: Exit status after Ctrl-C (128 + SIGINT), as typer and shells give it.
INTERRUPTED = 130


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: :func:`planner.cli.app.main` (*argv*: the arguments, default
    ``sys.argv[1:]``), exit 130 on Ctrl-C."""
    try:
        from planner.cli.app import main as run

        run(argv)
    except KeyboardInterrupt:
        sys.exit(INTERRUPTED)
