"""Keep an error one line when a path the user typed holds a line break.

The CLI prints a :class:`~predictors.core.errors.WattgpuError` one ``error:`` line per line of
its message (one per problem), so a path such as ``$'a\\nb.yaml'`` echoed in a message split
it into two. The messages are written all over the code base, from the path as given, resolved
or cut to a parent or a name; what they share is the text around each line break of what the
user typed. :func:`escape_user_breaks` finds that text in the message (the path component
around the break, else the break with one character either side) and writes the break as
Python does in a ``repr`` (``a\\nb.yaml``), leaving the breaks between problems alone.
:func:`user_values` lists what the user typed: the command line and the ``WATTGPU_*``
variables (paths of the user catalog and the measurements).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from predictors.core.errors import LINE_BREAKS, escape_breaks

__all__ = ["LINE_BREAKS", "escape_breaks", "escape_user_breaks", "user_values"]

#: Characters that end the path component around a break (``--output=a/b``).
_BOUNDS = frozenset("/=") | frozenset(sep for sep in (os.sep, os.altsep) if sep)


def user_values(args: Iterable[str], environ: Mapping[str, str]) -> list[str]:
    """The command-line arguments and ``WATTGPU_*`` variables that hold a line break."""
    values = [*args, *(v for k, v in environ.items() if k.startswith("WATTGPU_"))]
    return [v for v in values if any(c in LINE_BREAKS for c in v)]


def _component(value: str, at: int) -> str:
    start, end = at, at + 1
    while start > 0 and value[start - 1] not in _BOUNDS:
        start -= 1
    while end < len(value) and value[end] not in _BOUNDS:
        end += 1
    return value[start:end]


def escape_user_breaks(message: str, values: Iterable[str]) -> str:
    """*message* with the line breaks that come from *values* (what the user typed) escaped."""
    for value in values:
        for at, char in enumerate(value):
            if char not in LINE_BREAKS:
                continue
            wide = _component(value, at)
            fragment = wide if wide in message else value[max(0, at - 1) : at + 2]
            message = message.replace(fragment, escape_breaks(fragment))
    return message
