"""The file options of every command (``--output``/``-o``, ``--chart``), checked as typed.

typer turns an option's text into a :class:`pathlib.Path`, which drops a trailing separator
(``Path("newdir/")`` is ``newdir``) and a trailing ``/.``: ``-o newdir/`` would write a *file*
named ``newdir``. A name that ends so names a directory, so :func:`guard_file_options` makes
each such option look at the text the user typed, before typer converts it, and refuse a
directory name in one line (``error: --output newdir/: names a directory; give a file name such
as newdir/plan.json``). Options whose value is a directory (``train --output``, ``--data``,
``--models``, …: :data:`DIRECTORY_VALUES`) refuse only an empty value, which typer would read as
the current directory.
The root command group applies it to every command once, so a command added later is covered.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from predictors.core.errors import WattgpuError

#: The options that name one file to write (on every command that has them).
FILE_OPTIONS = ("--output", "--chart")
#: (command, option) pairs whose value is a directory, not a file.
DIRECTORY_OPTIONS = frozenset({("train", "--output")})
#: The options that name a directory to read or write, and an example of one: an empty value
#: (typer reads ``--data ""`` as the current directory, and train wrote its models there) is
#: refused as typed (:func:`empty_directory_problem`).
DIRECTORY_VALUES = {
    "--data": "../shared/data/measurements",
    "--models": "my-models",
    "--metrics-to": "my-models",
    "--user-catalog": "my-catalog",
}
#: The file name suggested inside a directory, by command (default: ``COMMAND.json``) or option.
EXAMPLE_NAMES = {
    "report": "report.md",
    "evaluate": "accuracy.md",
    "predict": "predictions.csv",
    "docs": "method.md",
    "--chart": "chart.png",
}
_SEPARATORS = tuple(sep for sep in (os.sep, os.altsep) if sep)


def directory_name_problem(text: str, option: str, example: str) -> str | None:
    """Why *text*, typed as the value of the file option *option*, is no file name (or None).

    A name ending in a separator, ``.`` or ``..`` names a directory, whether it exists or not;
    ``-`` would be a file named ``-``, never standard output.
    """
    if text == "":
        return f"{option}: is empty; give a file name such as {example}"
    if text == "-":  # not standard output (docs/cli.md, "Output files"): a file named '-'
        return (
            f"{option} -: names no file ({option} never writes to standard output; leave it out "
            f"where the command prints); give a file name such as {example} (./- for a file '-')"
        )
    last = text
    for sep in _SEPARATORS:
        last = last.rsplit(sep, 1)[-1]
    if last not in ("", ".", ".."):
        return None
    inside = text if text.endswith(_SEPARATORS) else text + os.sep
    return f"{option} {text}: names a directory; give a file name such as {inside}{example}"


def empty_directory_problem(text: str, option: str, example: str) -> str | None:
    """Why *text*, typed as the value of the directory option *option*, names none (or None)."""
    if text != "":
        return None
    return f"{option}: is empty (read as the current directory); give a directory such as {example}"


def _guard(param: Any, option: str, example: str, check: Any = directory_name_problem) -> None:
    """Make *param* (a typer option) refuse what *check* refuses before typer converts it."""
    process = param.process_value

    def checked(ctx: Any, value: Any) -> Any:
        if isinstance(value, str) and not ctx.resilient_parsing:
            problem = check(value, option, example)
            if problem is not None:
                raise WattgpuError(problem)
        return process(ctx, value)

    param.process_value = checked


def command_params(commands: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """(command name, parameter) of every command of *commands* (name -> click command; a
    group's subcommands too): what the option guards wrap."""
    for name, command in commands.items():
        sub = getattr(command, "commands", None)
        if isinstance(sub, Mapping):
            yield from command_params(sub)
        for param in getattr(command, "params", ()):
            yield name, param


def guard_file_options(commands: Mapping[str, Any]) -> None:
    """Apply the directory-name check to the :data:`FILE_OPTIONS` of *commands*, once each."""
    for name, param in command_params(commands):
        if getattr(param, "_wattgpu_file_guard", False):
            continue
        option = next((o for o in FILE_OPTIONS if o in param.opts), None)
        directory = next((o for o in DIRECTORY_VALUES if o in param.opts), None)
        if option is not None and (name, option) in DIRECTORY_OPTIONS:
            _guard(param, option, "my-models", empty_directory_problem)
        elif option is not None:
            example = EXAMPLE_NAMES.get(option) or EXAMPLE_NAMES.get(name) or f"{name}.json"
            _guard(param, option, example)
        elif directory is not None:
            _guard(param, directory, DIRECTORY_VALUES[directory], empty_directory_problem)
        else:
            continue
        param._wattgpu_file_guard = True
