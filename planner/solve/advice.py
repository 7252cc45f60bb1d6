"""The figures infeasibility messages give as the fix ("raise power_cap_kw to at least …",
"the cheapest plan … costs …"): rounded *up* at the digits shown, so a limit raised to the
printed figure is enough whenever the figure's exact value is, and never printed equal to the
limit it is to replace (more digits until they read apart)."""

from __future__ import annotations

import math

from planner.text import apart

ROUND_RTOL = 1e-12
"""A value this close above a printed figure is taken as that figure (its float round-off)."""


def _up_decimals(value: float, decimals: int) -> float:
    """*value* rounded up at *decimals* decimals (negative: to tens, hundreds, …)."""
    scale = 10.0**decimals
    return math.ceil(value * scale * (1 - ROUND_RTOL)) / scale


def _sig_decimals(value: float, sig: int) -> int:
    return sig - 1 - math.floor(math.log10(abs(value))) if value != 0 else sig


def raise_to(need: float, current: float, sig: int = 6) -> tuple[str, str]:
    """*need* rounded up to *sig* significant digits (``,.6g`` style) and *current* as ``.6g``
    (``:g``) writes it; both with more significant digits, up to 17, until they read apart."""
    for digits in range(sig, 18):
        shown = f"{_up_decimals(need, _sig_decimals(need, digits)):,.{digits}g}"
        limit = f"{current:.{digits}g}"
        if shown.replace(",", "") != limit or need <= current:
            return shown, limit
    return shown, limit  # pragma: no cover - 17 digits read any two floats apart


def apart_up(need: float, limit: float, decimals: int) -> tuple[str, str]:
    """*need* and *limit* as :func:`planner.text.apart` writes them, *need* rounded up at the
    decimals shown (then more decimals, up to 12, while they read the same)."""
    digits = len(apart(need, limit, decimals)[1].partition(".")[2])
    while True:
        shown, written = f"{_up_decimals(need, digits):,.{digits}f}", f"{limit:,.{digits}f}"
        if shown != written or need <= limit or digits >= 12:
            return shown, written
        digits += 1


def usd_up(value: float) -> str:
    """Dollars as :func:`planner.solve.budget.usd` writes them (to the cent, or 3 significant
    digits below one dollar), rounded up."""
    if abs(value) >= 1:
        return f"{_up_decimals(value, 2):,.2f}"
    return f"{_up_decimals(value, _sig_decimals(value, 3)):.3g}"
