"""The words of an unknown catalog name: the value shortened, a did-you-mean when it can help.

A value echoed in an error is shortened by :func:`~predictors.core.escape.short_repr` (a 7 MB
``region`` or ``--model`` value gave a 7 MB error "line"), and no did-you-mean is searched for a
value far longer than any catalog id or alias (:data:`SUGGEST_MAX_CHARS`): nothing is close to
it, and difflib's work grows with its length (seconds and hundreds of MB for 7 MB).
"""

from __future__ import annotations

from collections.abc import Iterable

from predictors.core.errors import UnknownIdError, did_you_mean
from predictors.core.escape import short_repr

#: Longest value a did-you-mean is searched for (catalog ids and aliases are far shorter).
SUGGEST_MAX_CHARS = 200


def suggestible(name: str) -> bool:
    """Whether a did-you-mean is searched for *name* (no longer than :data:`SUGGEST_MAX_CHARS`)."""
    return len(name) <= SUGGEST_MAX_CHARS


def close_names(name: str, choices: Iterable[str]) -> str:
    """:func:`~predictors.core.errors.did_you_mean` of *name*; '' for a value too long to be
    close to any of *choices*."""
    return did_you_mean(name, choices) if suggestible(name) else ""


def unknown_name(kind: str, name: str) -> str:
    """``unknown gpu 'H2OO'``: *name* as :func:`~predictors.core.escape.short_repr` shows it."""
    return f"unknown {kind} {short_repr(name)}"


def unknown_id_error(
    kind: str, name: str, ids: list[str], names: Iterable[str], fix: str
) -> UnknownIdError:
    """The error of an unknown *kind* name: the closest *ids* as its did-you-mean, else the
    :func:`close_names` of *names*."""
    hint = f" (did you mean: {', '.join(ids)}?)" if ids else close_names(name, names)
    return UnknownIdError(unknown_name(kind, name), hint=hint, fix=fix)
