"""Which of a command's options the user gave (on the command line or by an environment
variable), for commands that refuse an option their other choices would silently ignore."""

from __future__ import annotations

import typer


def given_options(ctx: typer.Context, names: tuple[str, ...]) -> list[str]:
    """The options among *names* (parameter names) given on the command line (or by an
    environment variable), as their flags (``--batch-size``), in the command's order."""
    given = ("COMMANDLINE", "ENVIRONMENT")  # names: typer's click is its own copy
    found = []
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name) if param.name in names else None
        if source is not None and source.name in given:
            found.append(param.opts[0])
    return found
