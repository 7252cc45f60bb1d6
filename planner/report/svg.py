"""Small inline-SVG charts for the HTML report: panels with linear or log axes, nice ticks,
lines, markers, horizontal bars, error bars, scatter and legends.

Drawing the report's charts with matplotlib was 65 % of ``wattgpu report --format html`` (5.4 of
8.2 s CPU, 2 loaded cores); a chart here is a string built in milliseconds and the browser sets
its text. Coordinates are pixels (100 per inch of the former figures); text widths are estimated
(:func:`text_width_px`) only to leave room for labels and legends. A :class:`Svg` is one
``<svg>`` element (inline SVG in HTML needs no ``xmlns``) holding :class:`Panel` s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

#: matplotlib's tab20 colours (the charts' categorical palette).
PALETTE: tuple[str, ...] = (
    "#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728", "#ff9896",
    "#9467bd", "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2", "#7f7f7f", "#c7c7c7",
    "#bcbd22", "#dbdb8d", "#17becf", "#9edae5",
)  # fmt: skip
GRID = 'stroke="#000" stroke-opacity="0.1"'
TICK_PX, LABEL_PX, TITLE_PX = 13.0, 14.0, 15.0
EM_WIDTH = 0.6
"""Estimated mean glyph width of the sans-serif UI font, in em (generous: digits are 0.55)."""


def text_width_px(text: str, size_px: float) -> float:
    """Estimated width of *text* at *size_px* (for margins only; the browser sets the text)."""
    return len(text) * size_px * EM_WIDTH


def colors(n: int) -> list[str]:
    """*n* colours of :data:`PALETTE` (cycled)."""
    return [PALETTE[i % len(PALETTE)] for i in range(max(1, n))]


def _f(v: float) -> str:
    """A coordinate with one decimal (pixels)."""
    return f"{v:.1f}".rstrip("0").rstrip(".")


def nice_ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    """Ticks at a 1, 2, 2.5 or 5 × 10^k step covering [lo, hi] with about *target* intervals."""
    if not hi > lo:
        return [lo]
    raw = (hi - lo) / target
    base = 10.0 ** math.floor(math.log10(raw))
    step = next(m * base for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * base >= raw)
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    return [k * step for k in range(first, last + 1)]


def log_ticks(lo: float, hi: float) -> list[float]:
    """Ticks in [lo, hi] at the powers of ten; at 1, 2 and 5 × 10^k within two decades."""
    subs = (1.0, 2.0, 5.0) if hi / lo <= 100.0 else (1.0,)
    out = []
    for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        out += [s * 10.0**k for s in subs if lo * (1 - 1e-9) <= s * 10.0**k <= hi * (1 + 1e-9)]
    return out


def tick_text(value: float, ticks: Sequence[float], log: bool = False) -> str:
    """*value* as a tick label: as many decimals as the tick step needs, thousands separated."""
    if log:
        return f"{value:,.0f}" if value >= 1 else f"{value:g}"
    step = min((b - a for a, b in zip(ticks, ticks[1:], strict=False)), default=1.0)
    decimals = next(
        (d for d in range(10) if math.isclose(step * 10**d, round(step * 10**d), rel_tol=1e-6)), 9
    )
    text = f"{value:,.{decimals}f}"
    return "0" if text.strip("-0.,") == "" else text


@dataclass(frozen=True)
class Scale:
    """Data [lo, hi] onto pixels [px_lo, px_hi] (linear or log10)."""

    lo: float
    hi: float
    px_lo: float
    px_hi: float
    log: bool = False

    def __call__(self, v: float) -> float:
        """The pixel of data value *v*."""
        if self.log:
            a, b, x = math.log10(self.lo), math.log10(self.hi), math.log10(max(v, 1e-300))
        else:
            a, b, x = self.lo, self.hi, v
        t = (x - a) / (b - a) if b > a else 0.5
        return self.px_lo + t * (self.px_hi - self.px_lo)

    def ticks(self) -> list[float]:
        """Tick values within the domain."""
        return log_ticks(self.lo, self.hi) if self.log else nice_ticks(self.lo, self.hi)


def span(
    values: Sequence[float], *, pad: float = 0.05, zero: bool = False, log: bool = False
) -> tuple[float, float]:
    """(lo, hi) of *values* with *pad* of the range added on each side (multiplicative for
    log axes); *zero*: the range starts at 0 (bars)."""
    vals = [float(v) for v in values if math.isfinite(v) and (v > 0 or not log)]
    if not vals:
        return (1.0, 10.0) if log else (0.0, 1.0)
    lo, hi = min(vals), max(vals)
    if log:
        f = (hi / lo) ** pad if hi > lo else 2.0
        return lo / f, hi * f
    if zero:
        lo = min(lo, 0.0)
        return lo, hi + pad * (hi - lo) if hi > lo else 1.0
    if hi == lo:
        return lo - 0.5 * max(1.0, abs(lo)), hi + 0.5 * max(1.0, abs(hi))
    return lo - pad * (hi - lo), hi + pad * (hi - lo)


@dataclass(frozen=True)
class Entry:
    """One legend entry: a line (width, dash), a marker shape, or a filled box."""

    label: str
    color: str
    kind: str = "line"
    width: float = 1.5
    dash: str | None = None
    marker: str = "o"


MARKERS = ("o", "s", "^", "D", "v", "*")


def marker_svg(shape: str, x: float, y: float, r: float, color: str, *, hollow: bool) -> str:
    """One marker of *shape* (:data:`MARKERS`) centred on (x, y), radius *r*."""
    paint = f'fill="none" stroke="{color}" stroke-width="1.3"' if hollow else f'fill="{color}"'
    if shape == "o":
        return f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(r)}" {paint}/>'
    if shape == "s":
        side = _f(2 * r)
        return f'<rect x="{_f(x - r)}" y="{_f(y - r)}" width="{side}" height="{side}" {paint}/>'
    pts: list[tuple[float, float]]
    if shape in ("^", "v"):
        s = 1 if shape == "^" else -1
        pts = [(x, y - s * r), (x + r, y + s * r * 0.8), (x - r, y + s * r * 0.8)]
    elif shape == "D":
        pts = [(x, y - r), (x + r, y), (x, y + r), (x - r, y)]
    else:  # star
        pts = [
            (x + (r if k % 2 == 0 else r * 0.45) * math.sin(k * math.pi / 5),
             y - (r if k % 2 == 0 else r * 0.45) * math.cos(k * math.pi / 5))
            for k in range(10)
        ]  # fmt: skip
    coords = " ".join(f"{_f(a)},{_f(b)}" for a, b in pts)
    return f'<polygon points="{coords}" {paint}/>'


@dataclass
class Panel:
    """One plotting area at (x, y) of w × h pixels with its scales; what is drawn on it is
    kept in :attr:`body`, the points it covers in :attr:`points` (for legend placement)."""

    x: float
    y: float
    w: float
    h: float
    sx: Scale
    sy: Scale
    body: list[str] = field(default_factory=list)
    points: list[tuple[float, float]] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        box: tuple[float, float, float, float],
        xlim: tuple[float, float],
        ylim: tuple[float, float],
        *,
        xlog: bool = False,
        ylog: bool = False,
    ) -> Panel:
        """A panel in *box* (x, y, w, h) showing *xlim* × *ylim*."""
        x, y, w, h = box
        return cls(x, y, w, h, Scale(*xlim, x, x + w, xlog), Scale(*ylim, y + h, y, ylog))

    def line(
        self,
        xs: Sequence[float],
        ys: Sequence[float],
        color: str,
        width: float = 1.5,
        dash: str | None = None,
    ) -> None:
        """A polyline through the data points."""
        pts = [(self.sx(a), self.sy(b)) for a, b in zip(xs, ys, strict=True)]
        self.points += pts
        coords = " ".join(f"{_f(a)},{_f(b)}" for a, b in pts)
        style = f' stroke-dasharray="{dash}"' if dash else ""
        self.body.append(
            f'<polyline points="{coords}" fill="none" stroke="{color}" '
            f'stroke-width="{_f(width)}"{style} stroke-linejoin="round"/>'
        )

    def marker(
        self, x: float, y: float, color: str, r: float = 3.0, shape: str = "o", hollow: bool = False
    ) -> None:
        """One marker at data point (x, y)."""
        px, py = self.sx(x), self.sy(y)
        self.points.append((px, py))
        self.body.append(marker_svg(shape, px, py, r, color, hollow=hollow))

    def scatter(
        self, xs: Sequence[float], ys: Sequence[float], color: str, r: float, opacity: float
    ) -> None:
        """Dots at the data points (one group, each dot translucent)."""
        dots = "".join(
            f'<circle cx="{_f(self.sx(a))}" cy="{_f(self.sy(b))}" r="{_f(r)}"/>'
            for a, b in zip(xs, ys, strict=True)
        )
        self.body.append(f'<g fill="{color}" fill-opacity="{opacity:g}">{dots}</g>')

    def hbar(
        self, row: float, left: float, width: float, color: str, thickness: float = 0.8
    ) -> None:
        """A horizontal bar on category row *row* (y data units) from *left* over *width*."""
        x0, x1 = self.sx(left), self.sx(left + width)
        y0, y1 = self.sy(row + thickness / 2), self.sy(row - thickness / 2)
        self.body.append(
            f'<rect x="{_f(min(x0, x1))}" y="{_f(y0)}" width="{_f(abs(x1 - x0))}" '
            f'height="{_f(y1 - y0)}" fill="{color}"/>'
        )

    def hwhisker(self, row: float, lo: float, hi: float, color: str = "#333") -> None:
        """A horizontal error bar from *lo* to *hi* on row *row*, with caps."""
        y, a, b = self.sy(row), self.sx(lo), self.sx(hi)
        self.body.append(
            f'<path d="M{_f(a)} {_f(y)}H{_f(b)}M{_f(a)} {_f(y - 4)}V{_f(y + 4)}'
            f'M{_f(b)} {_f(y - 4)}V{_f(y + 4)}" stroke="{color}" stroke-width="1.2" fill="none"/>'
        )

    def axes(
        self,
        *,
        title: str = "",
        xlabel: str = "",
        ylabel: str = "",
        grid: str = "xy",
        rows: Sequence[str] | None = None,
        tick_px: float = TICK_PX,
        label_px: float = LABEL_PX,
        title_px: float = TITLE_PX,
    ) -> tuple[list[str], list[str]]:
        """(grid lines to draw under the data, frame, ticks, labels and title over it). *rows*:
        category names of rows 0, 1, … on the y axis instead of numeric ticks."""
        x0, y0, x1, y1 = self.x, self.y, self.x + self.w, self.y + self.h
        xt = self.sx.ticks()
        if rows is not None:
            yt: list[tuple[float, str]] = [(float(i), name) for i, name in enumerate(rows)]
        else:
            ticks = self.sy.ticks()
            yt = [(v, tick_text(v, ticks, self.sy.log)) for v in ticks]
        under, out = self._ticks(
            "x", [(v, tick_text(v, xt, self.sx.log)) for v in xt], "x" in grid, tick_px
        )
        more_under, more = self._ticks("y", yt, "y" in grid, tick_px)
        under += more_under
        out += more
        out.append(
            f'<rect x="{_f(x0)}" y="{_f(y0)}" width="{_f(self.w)}" height="{_f(self.h)}" '
            'fill="none" stroke="#333"/>'
        )
        if xlabel:
            out.append(
                f'<text x="{_f((x0 + x1) / 2)}" y="{_f(y1 + 12 + tick_px + label_px)}" '
                f'font-size="{_f(label_px)}" text-anchor="middle">{escape(xlabel)}</text>'
            )
        if ylabel:
            widest = max((text_width_px(t, tick_px) for _, t in yt), default=0.0)
            lx, ly = x0 - 14 - widest, (y0 + y1) / 2
            out.append(
                f'<text transform="translate({_f(lx)},{_f(ly)}) rotate(-90)" '
                f'font-size="{_f(label_px)}" text-anchor="middle">{escape(ylabel)}</text>'
            )
        if title:
            out.append(
                f'<text x="{_f((x0 + x1) / 2)}" y="{_f(y0 - 7)}" font-size="{_f(title_px)}" '
                f'text-anchor="middle">{escape(title)}</text>'
            )
        return under, out

    def _ticks(
        self, axis: str, ticks: list[tuple[float, str]], grid: bool, tick_px: float
    ) -> tuple[list[str], list[str]]:
        """(grid lines, tick marks and labels) of the x or y *axis* at (value, label) *ticks*."""
        x0, y0, x1, y1 = self.x, self.y, self.x + self.w, self.y + self.h
        under: list[str] = []
        out: list[str] = []
        for v, text in ticks:
            if axis == "x":
                p = _f(self.sx(v))
                line, mark = f"M{p} {_f(y0)}V{_f(y1)}", f"M{p} {_f(y1)}v4"
                where = f'x="{p}" y="{_f(y1 + 6 + tick_px)}" text-anchor="middle"'
            else:
                p = _f(self.sy(v))
                line, mark = f"M{_f(x0)} {p}H{_f(x1)}", f"M{_f(x0)} {p}h-4"
                where = f'x="{_f(x0 - 7)}" y="{p}" dy="0.32em" text-anchor="end"'
            if grid:
                under.append(f'<path d="{line}" {GRID}/>')
            out.append(f'<path d="{mark}" stroke="#333"/>')
            out.append(f'<text {where} font-size="{_f(tick_px)}">{escape(text)}</text>')
        return under, out

    def legend(
        self, entries: Sequence[Entry], size_px: float = 11.0, where: str = "best"
    ) -> list[str]:
        """A legend box inside the panel (``best``: the corner covering the fewest drawn
        points, as matplotlib's ``loc="best"``) or ``outside`` to its right, centred."""
        if not entries:
            return []
        row = size_px * 1.35
        width = max(text_width_px(e.label, size_px) for e in entries) + 2.8 * size_px + 10
        height = row * len(entries) + 6
        if where == "outside":
            lx, ly = self.x + self.w + 10, self.y + (self.h - height) / 2
        else:
            corners = {  # in the order matplotlib's "best" tries them
                "upper right": (self.x + self.w - 6 - width, self.y + 6),
                "upper left": (self.x + 6, self.y + 6),
                "lower left": (self.x + 6, self.y + self.h - 6 - height),
                "lower right": (self.x + self.w - 6 - width, self.y + self.h - 6 - height),
            }

            def covered(corner: str) -> int:
                cx, cy = corners[corner]
                return sum(cx <= a <= cx + width and cy <= b <= cy + height for a, b in self.points)

            lx, ly = corners[where if where in corners else min(corners, key=covered)]
        out = []
        for i, e in enumerate(entries):
            cy = ly + 3 + row * (i + 0.5)
            hx = lx + 4
            if e.kind == "line":
                dash = f' stroke-dasharray="{e.dash}"' if e.dash else ""
                out.append(
                    f'<path d="M{_f(hx)} {_f(cy)}h{_f(2 * size_px)}" stroke="{e.color}" '
                    f'stroke-width="{_f(e.width)}"{dash}/>'
                )
            elif e.kind == "box":
                out.append(
                    f'<rect x="{_f(hx)}" y="{_f(cy - size_px * 0.4)}" width="{_f(2 * size_px)}" '
                    f'height="{_f(size_px * 0.8)}" fill="{e.color}"/>'
                )
            else:
                hollow = e.kind == "hollow"
                out.append(
                    marker_svg(e.marker, hx + size_px, cy, size_px * 0.45, e.color, hollow=hollow)
                )
            out.append(
                f'<text x="{_f(hx + 2.5 * size_px)}" y="{_f(cy)}" dy="0.32em" '
                f'font-size="{_f(size_px)}">{escape(e.label)}</text>'
            )
        return out


@dataclass
class Svg:
    """One chart: width × height pixels of panels and free text."""

    width: float
    height: float
    title: str
    parts: list[str] = field(default_factory=list)

    def add(self, panel: Panel, axes: tuple[list[str], list[str]], *over: list[str]) -> None:
        """Draw *panel*: the grid of its *axes* under its data, the rest of them and *over*
        (legends) over it."""
        under, frame = axes
        self.parts += under + panel.body + frame
        for more in over:
            self.parts += more

    def text(self, x: float, y: float, text: str, size_px: float = TITLE_PX) -> None:
        """A centred line of text (a figure title)."""
        self.parts.append(
            f'<text x="{_f(x)}" y="{_f(y)}" font-size="{_f(size_px)}" '
            f'text-anchor="middle">{escape(text)}</text>'
        )

    def render(self) -> str:
        """The ``<svg>`` element (scales down to its container; text inherits the page font)."""
        return (
            f'<svg viewBox="0 0 {_f(self.width)} {_f(self.height)}" width="{_f(self.width)}" '
            f'height="{_f(self.height)}" role="img" aria-label="{escape(self.title)}" '
            'font-family="inherit" fill="#1d2430">' + "".join(self.parts) + "</svg>"
        )
