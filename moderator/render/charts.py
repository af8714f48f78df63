"""Charts as inline SVG, drawn in Python when the archive site is built (issue 28).

Two kinds, both generic (labelled numbers in, a ``Chart`` out):

* ``line_chart``: one line per series over shared x positions (a player's money
  after each dividend, a company's dividend value after each round), with
  optional vertical marks (the dividends); each line ends in a direct label
  (its name and last value) beside its shape, so that colour is never the only
  carrier;
* ``bar_chart``: one horizontal bar per label, optionally split into parts laid
  end to end (a company's payout at each dividend), each bar labelled with its
  name on the left and its total on the right, each part wide enough with its
  amount inside.

A ``Chart`` holds the ``svg`` (markup: ``<svg role="img">`` with a ``<title>``
and a ``<desc>``, a ``viewBox`` and no fixed size, so that it scales to the
width of its column; no script, no external file) and the same numbers as a
table (``columns``, ``rows``): its text equivalent, which
``templates/archive/charts.html`` shows under the picture.  Every number drawn
is also in the SVG as data (``data-values`` on each series or bar, space
separated, in order) so that a test can read it back.

Sizes are in the SVG's user units; the view box is ``WIDTH`` wide, so that at
a 390-px phone (the picture about 366 CSS px wide) one unit is about 0.96 CSS
px and the smallest type (``SMALL``, 12.5) about 12 px.  Ink (axes, type)
is ``currentColor``: the page's text colour, light or dark.  Company colours
and shapes are the board map's (``board_map.COMPANY_COLOURS``, ``SHAPES``:
colour-vision safe); every line and bar is edged in ink so that white and
black stay visible on either background.  The words (titles, axis names) are
the caller's: the templates pass them translated.

Pure: no I/O, no clock.  Money is in millions of dollars, as everywhere.
"""
from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass, field
from html import escape
from typing import Sequence

from markupsafe import Markup

WIDTH = 380
"""The view box's width, in user units."""
FONT = 13.0
"""The size of the labels (series names, totals), in user units."""
SMALL = 12.5
"""The size of the axis ticks and the amounts inside bars, in user units."""

#: Colours of series that are not companies (players), Okabe & Ito's palette
#: for colour-vision deficiencies (2008), in order; each series also has its
#: own marker shape (``SERIES_SHAPES``).
SERIES_COLOURS: tuple[str, ...] = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00", "#56b4e9",
                                   "#f0e442")
SERIES_SHAPES: tuple[str, ...] = ("circle", "triangle", "diamond", "triangle_down", "star", "plus", "cross")
BAR_COLOUR = "#5b7fa8"
"""The fill of a bar that is no company's (a player's record): mid blue, readable
on white and on a dark page."""

UP_COLOUR = "#666666"
"""Union Pacific's fill (it has no colour in the game, no trains on the map): a
mid grey between Wyoming & Western's light grey and Denver Midland's black; its
square shape and its label tell it apart."""


def hex_colour(rgb: Sequence[int]) -> str:
    """``(r, g, b)`` (0-255) as ``#rrggbb``."""
    return "#%02x%02x%02x" % tuple(rgb)


def company_style(abbr: str) -> tuple[str, str]:
    """``(colour, shape)`` of a company as the board map draws it; for ``UP`` (no
    trains, not on the map) ``UP_COLOUR`` and a square."""
    from .board_map import COMPANY_COLOURS, SHAPES

    if abbr in COMPANY_COLOURS:
        return hex_colour(COMPANY_COLOURS[abbr]), SHAPES[abbr]
    return UP_COLOUR, "square"


@dataclass(frozen=True)
class Series:
    """One line of a ``line_chart``: its ``label`` (shown at its end and as a
    column of the table), ``values`` (one per x position; None where it has no
    value), its ``colour`` (CSS) and marker ``shape`` (a name of
    ``board_map.SHAPES``' shapes, or ``"square"``); ``marks_every_point`` draws the
    marker at every value, not only at the end."""

    label: str
    values: tuple[float | None, ...]
    colour: str = SERIES_COLOURS[0]
    shape: str = "circle"
    marks_every_point: bool = False


@dataclass(frozen=True)
class Bar:
    """One bar of a ``bar_chart``: its ``label``, its ``parts`` (numbers laid end
    to end, left to right; one for a plain bar), ``colour`` and an optional marker
    ``shape`` drawn before the label (a company's)."""

    label: str
    parts: tuple[float, ...]
    colour: str = BAR_COLOUR
    shape: str | None = None

    @property
    def total(self) -> float:
        """The sum of the parts."""
        return sum(self.parts)


@dataclass
class Chart:
    """A drawn chart: ``svg`` (markup), ``title``, ``caption`` (a sentence to show
    with it), and its text equivalent ``columns`` (header cells) and ``rows`` (body
    rows, strings); ``id`` is the ``<figure>``'s id (``chart-ID``)."""

    id: str
    title: str
    caption: str
    svg: Markup
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)


def number(value: float | None, decimals: int = 0) -> str:
    """A value as the charts and their tables write it: ``decimals`` places (an
    int as is), ``–`` for None."""
    if value is None:
        return "–"
    if decimals == 0 and float(value).is_integer():
        return str(int(value))
    return f"{value:.{decimals}f}"


def text_width(text: str, size: float) -> float:
    """The width of ``text`` at font size ``size``, estimated (on the wide side) for
    a sans-serif face: 0.72 em a capital, 0.6 em another character, 1 em a wide
    one (CJK), none for a combining mark."""
    em = 0.0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        em += 1.0 if unicodedata.east_asian_width(ch) in ("W", "F") else 0.72 if ch.isupper() else 0.6
    return em * size


def shorten(text: str, width: float, size: float) -> str:
    """``text`` cut with ``…`` to fit ``width`` at ``size`` (the table keeps it whole)."""
    if text_width(text, size) <= width:
        return text
    while text and text_width(text + "…", size) > width:
        text = text[:-1]
    return text + "…"


def nice_ticks(top: float, most: int = 5) -> list[float]:
    """Ticks from 0 to at least ``top``: a step of 1, 2 or 5 times a power of ten,
    at most ``most`` + 1 ticks.  ``nice_ticks(37) == [0, 10, 20, 30, 40]``."""
    if top <= 0:
        return [0, 1]
    raw = top / most
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        step = m * power
        if step >= raw:
            break
    step = max(step, 1)
    n = math.ceil(top / step - 1e-9)
    return [i * step for i in range(n + 1)]


def spread(wanted: list[float], gap: float, low: float, high: float) -> list[float]:
    """Positions as near ``wanted`` as possible, each at least ``gap`` from the
    next, within ``[low, high]`` (the labels at the lines' ends, top to bottom):
    labels that would overlap form a group centred on the mean of their wanted
    positions, groups merging until none overlap (then moved inside the bounds)."""
    order = sorted(range(len(wanted)), key=lambda i: wanted[i])
    groups: list[list[int]] = []  # each: the labels of a group, top to bottom
    tops: list[float] = []

    def top_of(members: list[int]) -> float:
        mean = sum(wanted[i] for i in members) / len(members)
        top = mean - (len(members) - 1) * gap / 2
        return max(low, min(top, high - (len(members) - 1) * gap))

    for i in order:
        groups.append([i])
        tops.append(top_of([i]))
        while len(groups) > 1 and tops[-2] + len(groups[-2]) * gap > tops[-1]:
            members = groups.pop(-2) + groups.pop()
            tops.pop()
            tops.pop()
            groups.append(members)
            tops.append(top_of(members))
    placed = [0.0] * len(wanted)
    for members, top in zip(groups, tops):
        for k, i in enumerate(members):
            placed[i] = top + k * gap
    return placed


def _f(v: float) -> str:
    """A coordinate, short."""
    return f"{v:.1f}".rstrip("0").rstrip(".")


def marker(shape: str, x: float, y: float, r: float, colour: str) -> str:
    """A series' or company's marker: ``shape`` centred at ``(x, y)`` within radius
    ``r``, filled with ``colour``, edged in ink."""
    from .board_map import _shape_points

    edge = 'stroke="currentColor" stroke-width="1"'
    if shape == "square":
        return (f'<rect x="{_f(x - r)}" y="{_f(y - r)}" width="{_f(2 * r)}" height="{_f(2 * r)}" '
                f'fill="{colour}" {edge}/>')
    points = _shape_points(shape, (x, y), r)
    if points is None:
        return f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(r)}" fill="{colour}" {edge}/>'
    return f'<polygon points="{" ".join(f"{_f(a)},{_f(b)}" for a, b in points)}" fill="{colour}" {edge}/>'


def _svg(chart_id: str, title: str, desc: str, height: float, body: list[str]) -> Markup:
    tid, did = f"chart-{chart_id}-title", f"chart-{chart_id}-desc"
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {WIDTH} '
            f'{_f(height)}" aria-labelledby="{tid} {did}" data-chart="{escape(chart_id)}" '
            f'font-family="system-ui, sans-serif" fill="currentColor">'
            f'<title id="{tid}">{escape(title)}</title><desc id="{did}">{escape(desc)}</desc>')
    return Markup(head + "".join(body) + "</svg>")


def line_chart(chart_id: str, title: str, desc: str, x_title: str, y_title: str,
               x_labels: Sequence[str], series: Sequence[Series], marks: Sequence[tuple[float, str]] = (),
               marks_title: str = "", caption: str = "", decimals: int = 0) -> Chart:
    """A line chart: x positions ``0 .. len(x_labels) - 1`` (ticks labelled with
    ``x_labels``, thinned to fit), y from 0 to a round number above the largest
    value (``y_title`` above the axis: the unit); each of ``series`` a line with its
    marker and direct label (``label value``) at its last value.  ``marks``:
    ``(x, label)`` vertical dashed lines at (fractional) x positions, labelled at
    the top; the table then has a column ``marks_title`` listing the marks that
    fall at or before each x position and after the previous one.  The table: a
    row per x position (``x_title``, then each series).  ValueError without
    x positions."""
    if not x_labels:
        raise ValueError("a line chart needs at least one x position")
    n = len(x_labels)
    top_values = [v for s in series for v in s.values if v is not None]
    ticks = nice_ticks(max(top_values, default=0))
    tick_w = max(text_width(number(t), SMALL) for t in ticks)
    ends_text = [number(_last(s.values), decimals) for s in series]
    label_w = min(max((text_width(f"{s.label} {v}", FONT) for s, v in zip(series, ends_text)), default=0), 120)
    # the direct label: the name (cut to fit, the table has it whole) and its last value
    label_texts = [f"{shorten(s.label, label_w - text_width(' ' + v, FONT), FONT)} {v}"
                   for s, v in zip(series, ends_text)]
    left, right = tick_w + 8, WIDTH - (label_w + 18)
    top, plot_h = 36.0, 190.0  # above the plot: the unit (y 0.5-16), the marks' labels (y 19.5-32)
    bottom = top + plot_h
    height = bottom + 46
    span = max(n - 1, 1)

    def xpos(i: float) -> float:
        return left + (right - left) * (i / span if n > 1 else 0.5)

    def ypos(v: float) -> float:
        return bottom - plot_h * v / ticks[-1]

    body = [f'<text x="0" y="{_f(top - 23)}" font-size="{SMALL}">{escape(y_title)}</text>']
    for t in ticks:  # grid and y ticks
        y = ypos(t)
        body.append(f'<line x1="{_f(left)}" x2="{_f(right)}" y1="{_f(y)}" y2="{_f(y)}" stroke="currentColor" '
                    f'stroke-opacity="{0.6 if t == 0 else 0.18}" stroke-width="1"/>')
        body.append(f'<text x="{_f(left - 5)}" y="{_f(y + SMALL * 0.35)}" font-size="{SMALL}" '
                    f'text-anchor="end">{number(t)}</text>')
    # x ticks: the first (the start) begins at the axis, the others centred on their
    # point, thinned to every ``every``-th so that they do not touch; the last always
    step = (right - left) / span
    widest = max((text_width(x, SMALL) for x in x_labels[1:]), default=0) + 6
    every = max(1, math.ceil(widest / step)) if n > 1 else 1
    first_end = left - 2 + text_width(x_labels[0], SMALL) + 4
    for i, lab in enumerate(x_labels):
        half = text_width(lab, SMALL) / 2
        if i and i != n - 1 and (i % every or n - 1 - i < every or xpos(i) - half < first_end):
            continue
        if i and i == n - 1 and n > 1 and xpos(i) - half < first_end:
            continue  # a chart of two points whose start label is wide: the table has it
        anchor, x = ("start", left - 2) if i == 0 and n > 1 else ("middle", xpos(i))
        body.append(f'<text x="{_f(x)}" y="{_f(bottom + SMALL + 6)}" font-size="{SMALL}" '
                    f'text-anchor="{anchor}">{escape(lab)}</text>')
    body.append(f'<text x="{_f((left + right) / 2)}" y="{_f(bottom + 2 * SMALL + 14)}" font-size="{SMALL}" '
                f'text-anchor="middle">{escape(x_title)}</text>')
    row_end = [-math.inf, -math.inf]  # the right end of the last mark label in each row
    for x, lab in sorted(marks):  # the dividends; a label that would touch the one before goes a row lower
        xp = xpos(x)
        half = text_width(lab, SMALL) / 2
        row = 0 if xp - half > row_end[0] + 2 else 1 if xp - half > row_end[1] + 2 else 0
        row_end[row] = xp + half
        ly = top - 4 if row == 0 else top + SMALL + 1
        body.append(f'<g class="mark" data-x="{_f(x)}"><line x1="{_f(xp)}" x2="{_f(xp)}" y1="{_f(top - 2)}" '
                    f'y2="{_f(bottom)}" stroke="currentColor" stroke-opacity="0.55" stroke-dasharray="3 3"/>'
                    f'<text x="{_f(xp)}" y="{_f(ly)}" font-size="{SMALL}" text-anchor="middle">'
                    f'{escape(lab)}</text></g>')
    ends: list[tuple[float, float]] = []
    for s in series:
        pts = [(xpos(i), ypos(v)) for i, v in enumerate(s.values) if v is not None]
        d = " ".join(f"{_f(a)},{_f(b)}" for a, b in _corners(pts))
        values = " ".join("-" if v is None else number(v, decimals) for v in s.values)
        g = [f'<g class="series" data-label="{escape(s.label)}" data-values="{values}">']
        if len(pts) > 1:  # an ink casing under the colour: white and black lines stay visible
            g.append(f'<polyline points="{d}" fill="none" stroke="currentColor" stroke-width="4" '
                     f'stroke-opacity="0.75" stroke-linejoin="round"/>')
            g.append(f'<polyline points="{d}" fill="none" stroke="{s.colour}" stroke-width="2.2" '
                     f'stroke-linejoin="round"/>')
        for k, (a, b) in enumerate(pts):
            if s.marks_every_point or k == len(pts) - 1:
                g.append(marker(s.shape, a, b, 4.2, s.colour))
        g.append("</g>")
        body.append("".join(g))
        ends.append(pts[-1] if pts else (right, bottom))
    placed = spread([e[1] + FONT * 0.35 for e in ends], FONT + 1, top + 3, bottom + FONT)
    for s, text, (ex, ey), ly in zip(series, label_texts, ends, placed):
        lx = right + 9
        body.append(f'<text x="{_f(lx)}" y="{_f(ly)}" font-size="{FONT}">'
                    f'{escape(text)}</text>')
        if abs(ly - FONT * 0.35 - ey) > 2:  # moved off its line's end: a leader
            body.append(f'<line x1="{_f(ex + 5)}" y1="{_f(ey)}" x2="{_f(lx - 2)}" y2="{_f(ly - FONT * 0.35)}" '
                        f'stroke="currentColor" stroke-opacity="0.5" stroke-width="0.8"/>')
    columns = [x_title] + [s.label for s in series] + ([marks_title] if marks else [])
    rows = []
    for i, lab in enumerate(x_labels):
        row = [lab] + [number(s.values[i], decimals) for s in series]
        if marks:
            row.append(", ".join(m for x, m in marks if i - 1 < x <= i or (i == 0 and x <= 0)))
        rows.append(row)
    return Chart(chart_id, title, caption, _svg(chart_id, title, desc, height, body), columns, rows)


def _corners(pts: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points of a polyline that are not in the middle of a level run (the same
    y before and after): the same line, fewer bytes (a company's value stays the
    same for rounds)."""
    return [p for k, p in enumerate(pts)
            if k == 0 or k == len(pts) - 1 or not (pts[k - 1][1] == p[1] == pts[k + 1][1])]


def _last(values: Sequence[float | None]) -> float | None:
    for v in reversed(values):
        if v is not None:
            return v
    return None


def bar_chart(chart_id: str, title: str, desc: str, label_title: str, bars: Sequence[Bar],
              part_titles: Sequence[str] = (), total_title: str = "", caption: str = "",
              decimals: int = 0) -> Chart:
    """A horizontal bar chart: a bar per item of ``bars`` (top to bottom, in the
    given order), its length the bar's total on a scale from 0 to the largest
    total, its parts laid end to end (an amount inside each part wide enough for
    it); the label (after the bar's marker shape, if any) on the left, the total
    on the right.  The table: ``label_title``, then a column per part
    (``part_titles``; one ``total_title`` column for plain bars) and, with several
    parts, ``total_title``.  ValueError when a bar's parts do not match
    ``part_titles`` or a part is negative."""
    nparts = max(len(part_titles), 1)
    for b in bars:
        if len(b.parts) != nparts or any(p < 0 for p in b.parts):
            raise ValueError(f"bar {b.label!r}: {len(b.parts)} part(s) of {nparts}, none negative")
    has_shape = any(b.shape for b in bars)
    label_w = min(max((text_width(b.label, FONT) for b in bars), default=0), 120)
    total_w = max((text_width(number(b.total, decimals), FONT) for b in bars), default=0)
    x0 = label_w + (24 if has_shape else 8)
    x1 = WIDTH - total_w * 1.15 - 8  # the total is bold: wider than the estimate
    row_h, gap, top = 20.0, 7.0, 4.0
    height = top + len(bars) * (row_h + gap) + 2
    most = max((b.total for b in bars), default=0) or 1
    scale = (x1 - x0) / most
    body = [f'<line x1="{_f(x0)}" x2="{_f(x0)}" y1="{_f(top - 2)}" y2="{_f(height - 2)}" '
            f'stroke="currentColor" stroke-opacity="0.6"/>']
    for k, b in enumerate(bars):
        y = top + k * (row_h + gap)
        cy = y + row_h / 2
        values = " ".join(number(p, decimals) for p in b.parts)
        g = [f'<g class="bar" data-label="{escape(b.label)}" data-values="{values}">']
        if b.shape:
            g.append(marker(b.shape, 7, cy, 5.5, b.colour))
        g.append(f'<text x="{_f(x0 - 5)}" y="{_f(cy + FONT * 0.35)}" font-size="{FONT}" text-anchor="end">'
                 f'{escape(shorten(b.label, label_w + 2, FONT))}</text>')
        x = x0
        ink = _ink_on(b.colour)
        for p in b.parts:
            w = p * scale
            if w > 0:
                g.append(f'<rect class="part" x="{_f(x)}" y="{_f(y)}" width="{_f(max(w - 1.5, 0.8))}" height="{_f(row_h)}" '
                         f'fill="{b.colour}" stroke="currentColor" stroke-width="0.8"/>')
                text = number(p, decimals)
                if nparts > 1 and text_width(text, SMALL) + 4 <= w - 1.5:
                    fill = f' fill="{ink}"' if ink else ""
                    g.append(f'<text x="{_f(x + (w - 1.5) / 2)}" y="{_f(cy + SMALL * 0.35)}" font-size="{SMALL}" '
                             f'text-anchor="middle"{fill}>{text}</text>')
            x += w
        g.append(f'<text x="{_f(x + 4)}" y="{_f(cy + FONT * 0.35)}" font-size="{FONT}" font-weight="bold">'
                 f'{number(b.total, decimals)}</text>')
        g.append("</g>")
        body.append("".join(g))
    if len(part_titles) > 1:
        columns = [label_title, *part_titles, total_title]
        rows = [[b.label, *(number(p, decimals) for p in b.parts), number(b.total, decimals)] for b in bars]
    else:
        columns = [label_title, part_titles[0] if part_titles else total_title]
        rows = [[b.label, number(b.total, decimals)] for b in bars]
    return Chart(chart_id, title, caption, _svg(chart_id, title, desc, height, body), columns, rows)


def _ink_on(colour: str) -> str | None:
    """Black or white, whichever reads better on the fill ``colour`` (``#rrggbb``,
    by its relative luminance, WCAG); None for another form (the page's ink)."""
    if not colour.startswith("#") or len(colour) != 7:
        return None
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    lum = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
    return "#000" if lum > 0.18 else "#fff"
