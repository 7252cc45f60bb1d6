"""Error types shared by every stage.

Every error that reaches a user is a :class:`WattgpuError` whose message is one line naming
the file, the field and the fix. The CLI prints it and exits 1; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

#: What :meth:`str.splitlines` splits on.
LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


def escape_breaks(text: str) -> str:
    """*text* with every line break written as an escape (``\\n``, ``\\x1c``, ``\\u2028``):
    a value echoed inside one problem's line never splits it."""
    return "".join(repr(c)[1:-1] if c in LINE_BREAKS else c for c in text)


class WattgpuError(Exception):
    """A problem the user can fix; the message is one line (or one line per problem)."""


class CatalogError(WattgpuError):
    """A catalog file is malformed or contradicts itself."""


class UnknownIdError(WattgpuError):
    """A GPU, LLM or region name that no catalog id or alias matches.

    The parts stay apart so that callers can reword the message without parsing it:
    :attr:`problem` (``unknown gpu 'H2OO'``), :attr:`hint` (`` (did you mean: …?)``) and
    :attr:`fix`; the message is ``problem + hint + '; fix: ' + fix``.
    """

    def __init__(self, problem: str, *, hint: str = "", fix: str = "") -> None:
        self.problem, self.hint, self.fix = problem, hint, fix
        super().__init__(f"{problem}{hint}" + (f"; fix: {fix}" if fix else ""))


class DataError(WattgpuError):
    """A measurement file cannot be read in its declared format."""


def did_you_mean(name: str, choices: Iterable[str], n: int = 3) -> str:
    """Return ' (did you mean: a, b?)' for the closest choices, or '' when nothing is close."""
    pool = sorted(set(choices))
    lowered = {c.lower(): c for c in pool}
    hits = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.5)
    if not hits:
        return ""
    shown = [lowered[h] for h in hits]
    if any("," in c for c in shown):  # 'Texas, US' beside 'US Texas' would read as three names
        shown = [f"'{c}'" for c in shown]
    return " (did you mean: " + ", ".join(shown) + "?)"


def misspelt_required(
    unknown: Sequence[str], missing: Sequence[str], *, alone: bool = False
) -> dict[str, str]:
    """Unknown names that stand for a missing required one (a misspelt required key or
    column), unknown -> required: an unknown whose did-you-mean names exactly one missing name
    that no other unknown is close to, or (*alone*: a small mapping, where one stray key beside
    one missing key is that key) the only unknown beside the only missing name."""
    if alone and len(unknown) == 1 and len(missing) == 1:
        return {unknown[0]: missing[0]}
    close = {u: [m for m in missing if did_you_mean(u, [m])] for u in unknown}
    claims = [m for near in close.values() for m in near]
    return {
        u: near[0] for u, near in close.items() if len(near) == 1 and claims.count(near[0]) == 1
    }
