"""A picture of the board, and its text twin, as one player may see it.

``render_map(game, player)`` draws the board as PNG bytes (Pillow): the cities at
their latitude and longitude, every section with its spaces (a free neutral space
as a small square in its track type's colour, a train in its company's shape and
colour, ``SHAPES`` and ``COMPANY_COLOURS``, a starting space ringed), the home
stations as white squares with their company's shape, and below the map a legend
in the reader's language (``templates/words/board.txt``, the language in force):
the track types, each company's shape and colour, letters, value in millions,
home and trains left, and the reader's own shares (invested and in hand) under
their name.  ``player=None`` draws the public view, without any player's shares in
hand.  The picture uses only what the reader may see: the board and its
occupancy, the companies' public rows of ``Game.view(player)`` and that player's
own ``"you"`` part; never another player's hand.

``mail_map(game)`` is the picture of a status mail: the map and the legend's
key, then each company's shape and letters; the company values, home stations,
trains left and the reader's shares are in the mail's HTML and text parts
(issue 26: at most 50 KB a status mail).  Both are 4-bit palette PNGs
(``palette_colours``: 16 colours, the map draws no other).

Readable on a phone: the picture is ``WIDTH`` (640) px wide and every text is
drawn at least ``MIN_TEXT_SIZE`` (19) px, so shown 390 CSS px wide it is at least
``PHONE_MIN_CSS_PX`` (11) CSS px high.  Words in any script: each text is drawn
in runs of the faces fontconfig finds (``fonts``: DejaVu Sans, Noto Sans CJK),
each character in a face that has its glyph, never a missing-glyph box.  Told
apart without colour: every company has its own shape, and its colour stays
``MIN_DELTA_E`` from every other in simulated colour-vision deficiencies.

``board_text(game)`` is the plain-text twin for the text part of a mail: each
company's network, the sections it could build on next with their free space
types, and a city legend (id -> name).

The layout of a board (where each city, space and label goes) depends on the board
alone and is computed once per board (``layout``): an equirectangular projection
scaled to the map area, then a few rounds of spreading so that close cities leave
room for their sections' spaces and keep off other sections' lines, the spaces
slid along their lines off each other and off the cities, then a greedy placement
of the city labels that keeps them off each other, the cities and the spaces.

Company colours are a fact of the game (rules: Components, ``Company.colour``);
the RGB values that draw them are this module's ``COMPANY_COLOURS``.

Pillow is imported with this module; import it only where a picture is drawn (the
start-up of ``pbem --help`` must stay light).
"""
from __future__ import annotations

import hashlib
import io
import math
import struct
import zlib
from collections import OrderedDict
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Any, Callable

from PIL import Image, ImageDraw, ImageFont

from ..rules.board import Board
from ..rules.components import COMPANIES, TRACK_TYPES, UP
from .. import i18n
from . import fonts

#: Size of the picture in pixels: 640 wide, as a mail shows it at most
#: (``moderation/send.MAX_IMAGE_WIDTH``: its texts 19 px and more on a desktop) and
#: 390 on a phone, where every text of it (drawn at least ``MIN_TEXT_SIZE`` px) is at
#: least ``PHONE_MIN_CSS_PX`` CSS px high; ``pbem show --map`` writes it at 640.
#: Issue 26 (at most 50 KB a status mail): drawn at 800 with type of 23 px and more
#: the PNG was a quarter larger (26.2 against 20.5 KB, en, late in play) for the
#: same 11 CSS px on a phone.
WIDTH = 640
SCALE = 0.8
"""The picture's sizes (the marks, rows and offsets below) as drawn at 800 px
wide before issue 26, times ``SCALE``; its type is at least ``MIN_TEXT_SIZE``."""


def _px(n: float) -> int:
    """``n`` pixels of the 800-px drawing at ``WIDTH``: ``round(n * SCALE)``."""
    return round(n * SCALE)


#: Height of the map area at the top; the legend fills the rest.
MAP_HEIGHT = _px(540)

PHONE_WIDTH = 390
"""The width in CSS px a phone shows the picture at (``max-width:100%`` of a
390-px screen)."""
PHONE_MIN_CSS_PX = 11
"""The least height of a text of the picture shown ``PHONE_WIDTH`` wide, in CSS
px: its font size (the em, as CSS's ``font-size``) times ``PHONE_WIDTH / WIDTH``."""

Colour = tuple[int, int, int]

#: RGB of each company's colour (rules: Components names it, ``Company.colour``),
#: chosen so that every two stay apart for readers with a colour-vision deficiency:
#: at least ``MIN_DELTA_E`` (CAM02-UCS) apart in normal vision and as protanopia,
#: deuteranopia and tritanopia are simulated (colorspacious, Machado et al. 2009 at
#: severity 100; tests/test_map_colours.py).  Each company's trains and its home
#: station also have its own shape (``SHAPES``), so that no one needs colour alone.
COMPANY_COLOURS: dict[str, Colour] = {
    "WW": (170, 170, 170),    # grey
    "MRR": (0, 40, 245),      # blue
    "KCC": (115, 50, 15),     # brown
    "ESL": (235, 150, 40),    # orange
    "UMR": (255, 255, 255),   # white
    "SFRB": (125, 80, 135),   # purple
    "DM": (20, 20, 20),       # black
    "MS": (255, 225, 70),     # yellow
    "BNL": (200, 75, 15),     # red
    "EPRG": (5, 145, 100),    # green
}

MIN_DELTA_E = 15.0
"""The least colour difference (CAM02-UCS ΔE, colorspacious' ``deltaE``) between
any two ``COMPANY_COLOURS``, in normal vision and in each simulated dichromacy."""

#: The shape of each company's trains and of the mark in its home station: a
#: silhouette of its own, told apart from the others without colour (the legend
#: shows each with its company's letters).  Names of ``_shape_points``.
SHAPES: dict[str, str] = {
    "WW": "circle",
    "MRR": "triangle",
    "KCC": "diamond",
    "ESL": "triangle_down",
    "UMR": "tee",
    "SFRB": "star",
    "DM": "plus",
    "MS": "cross",
    "BNL": "bar",
    "EPRG": "column",
}

#: RGB of the free neutral spaces of each track type; black-white is drawn as a
#: square split into its two colours.
TRACK_COLOURS: dict[str, Colour] = {
    "plain": (200, 165, 105),
    "black": (0, 0, 0),
    "white": (255, 255, 255),
    "black-white": (0, 0, 0),  # upper-left half; the lower-right half is white
}

BACKGROUND: Colour = (246, 242, 230)
LEGEND_BACKGROUND: Colour = (255, 255, 255)
LINE: Colour = (160, 148, 128)
INK: Colour = (30, 30, 30)
OUTLINE: Colour = INK  # the edges of shapes: the ink, one colour fewer in the palette
RULE: Colour = LINE    # the rule above the reader's lines
MUTED: Colour = (95, 95, 95)

TRAIN_R = _px(9)     # radius of a train (the circle its shape fills)
START_R = _px(13)    # radius of the ring around a starting space
FREE_HALF = _px(6)   # half the side of a free space's square
CITY_R = _px(5)      # radius of a city dot
HOME_HALF = _px(11)  # half the side of a home station's square
LABEL_SIZE = 19      # city ids (19 * 390 / 640 = 11.6 CSS px on a phone)
LEGEND_SIZE = 20     # company rows of the legend
SMALL_SIZE = 19      # the key, the second lines of the legend, the reader's lines
MIN_TEXT_SIZE = 19   # the least size any text is drawn at (PHONE_MIN_CSS_PX on a phone)
MARGIN = _px(24)     # around the map's cities
CLEAR = HOME_HALF + TRAIN_R + _px(8)  # the least distance of a city from a line not its own
TEXT_MODE = "1"
"""``ImageDraw.fontmode`` of every text: "1", hinted glyphs of whole pixels
without antialiasing.  The faces are hinted for it, and the PNG is about a
third smaller (28 KB against 40 KB late in play; antialiased edges in the
palette's blends are what the text costs)."""
KEY_ROW = _px(32)    # height of a row of the legend's key
CELLS_TOP = 2 * KEY_ROW + _px(14)  # the legend's company cells, below the top of the legend
CELL_H = _px(34)     # height of a row of company cells (two a row)
READER_ROW = _px(29)  # height of a line of the reader's own
READER_ROWS = 4      # the reader's own lines (their shares, wrapped: two each at most)
#: Height of the picture: the map, the key, five rows of company cells, the reader's lines.
HEIGHT = MAP_HEIGHT + CELLS_TOP + 5 * CELL_H + _px(8) + READER_ROWS * READER_ROW + _px(4)


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The first face of the font chain (``fonts.chain``, DejaVu Sans where
    installed) at ``size`` px, cached by size."""
    return _face_font(0, size)


@lru_cache(maxsize=64)
def _face_font(index: int, size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Face ``index`` of ``fonts.chain()`` at ``size`` px (Pillow's bundled
    scalable font for the bundled face, or without FreeType its bitmap font)."""
    face = fonts.chain()[index]
    if face.path is not None:
        try:
            return ImageFont.truetype(face.path, size, index=face.index)
        except OSError:  # the file went away or is unreadable: the bundled font
            pass
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError, ImportError):  # Pillow without FreeType
        return ImageFont.load_default()


@lru_cache(maxsize=1024)
def _parts(text: str, size: int) -> tuple[tuple[Any, str, float], ...]:
    """``text`` at ``size`` px as the map draws it: its runs (``fonts.runs``,
    each character in a face that has its glyph, or transliterated, or left
    out) as ``(font, run, x offset from the text's left)``."""
    out = []
    x = 0.0
    for i, run in fonts.runs(text):
        font = _face_font(i, size)
        out.append((font, run, x))
        x += font.getlength(run)
    return tuple(out)


def _baseline(size: int) -> int:
    """The baseline below the top of a text of ``size`` px (the first face's
    ascent): where runs in other faces are set (anchor ``ls``)."""
    font = _font(size)
    return font.getmetrics()[0] if isinstance(font, ImageFont.FreeTypeFont) else 0


def _bbox(text: str, size: int, stroke: int = 0) -> tuple[float, float, float, float]:
    """The box ``text`` covers drawn at (0, 0) at ``size`` px (as ``getbbox``;
    several runs: the union of theirs, each at its baseline)."""
    parts = _parts(text, size)
    if not parts:
        return (0, 0, 0, 0)
    if len(parts) == 1 and parts[0][2] == 0:
        return parts[0][0].getbbox(parts[0][1], stroke_width=stroke)
    base = _baseline(size)
    boxes = [font.getbbox(run, stroke_width=stroke, anchor="ls") for font, run, _ in parts]
    return (min(b[0] + dx for b, (_, _, dx) in zip(boxes, parts)), min(b[1] + base for b in boxes),
            max(b[2] + dx for b, (_, _, dx) in zip(boxes, parts)), max(b[3] + base for b in boxes))


# ====================================================================== layout
@dataclass
class Layout:
    """Where everything of a board goes in the picture (pixels, origin top left).

    ``cities``: city id -> centre; ``slots``: section id -> the centres of its train
    spaces, first the starting spaces (``Section.starts`` order) then the neutral
    spaces (``Section.spaces`` order), the starting spaces at the home end;
    ``labels``: city id -> the point where its id label is drawn;
    ``label_boxes``: city id -> the box the label covers (left, top, right,
    bottom), halo included."""

    width: int
    height: int
    map_height: int
    cities: dict[str, tuple[float, float]]
    slots: dict[str, list[tuple[float, float]]]
    labels: dict[str, tuple[int, int]] = field(default_factory=dict)
    label_boxes: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)

    @property
    def shares_top(self) -> int:
        """The top of the legend's last lines (the reader's shares): everything
        above is the same for every reader of the same position."""
        return self.map_height + CELLS_TOP + 5 * CELL_H

    def space_xy(self, board: Board, sid: str, index: int) -> tuple[int, int]:
        """Pixel centre of neutral space ``index`` of section ``sid``."""
        x, y = self.slots[sid][len(board.sections[sid].starts) + index]
        return round(x), round(y)

    def start_xy(self, board: Board, sid: str, company: str) -> tuple[int, int]:
        """Pixel centre of ``company``'s starting space on section ``sid``."""
        x, y = self.slots[sid][board.sections[sid].starts.index(company)]
        return round(x), round(y)


_LAYOUTS: dict[int, tuple[Board, Layout]] = {}


def layout(board: Board) -> Layout:
    """The layout of ``board`` in the picture, computed once per board object."""
    hit = _LAYOUTS.get(id(board))
    if hit is not None and hit[0] is board:
        return hit[1]
    lay = _make_layout(board)
    _LAYOUTS[id(board)] = (board, lay)
    return lay


def _project(board: Board, w: int, h: int) -> dict[str, tuple[float, float]]:
    """Equirectangular projection (longitude shrunk by the cosine of the mean
    latitude), scaled to fit ``w`` x ``h`` less the margin and centred."""
    cities = list(board.cities.values())
    if not cities:
        return {}
    mean_lat = sum(c.lat for c in cities) / len(cities)
    k = math.cos(math.radians(mean_lat))
    xs = [c.lon * k for c in cities]
    ys = [-c.lat for c in cities]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    span_x, span_y = max(x1 - x0, 1e-6), max(y1 - y0, 1e-6)
    scale = min((w - 2 * MARGIN) / span_x, (h - 2 * MARGIN) / span_y)
    off_x = (w - span_x * scale) / 2
    off_y = (h - span_y * scale) / 2
    return {c.id: (off_x + (x - x0) * scale, off_y + (y - y0) * scale)
            for c, x, y in zip(cities, xs, ys)}


def _spread(board: Board, pos: dict[str, tuple[float, float]], w: int, h: int,
            rounds: int = 200) -> dict[str, tuple[float, float]]:
    """Push apart cities too close for their labels or their sections' spaces,
    and cities off the lines of sections that pass them by (``CLEAR``), each
    staying near its projected place (a few rounds of pairwise pushes)."""
    ids = list(pos)
    home = dict(pos)
    p = {c: list(xy) for c, xy in pos.items()}
    need: dict[tuple[str, str], float] = {}
    for s in board.sections.values():
        a, b = s.cities
        need[(a, b)] = need[(b, a)] = 2 * HOME_HALF + 10 + s.capacity * (2 * TRAIN_R + 6)
    pairs = []
    for i, a in enumerate(ids):  # only pairs that start near enough to matter
        for b in ids[i + 1:]:
            d = need.get((a, b), 48.0)
            if math.dist(pos[a], pos[b]) < 2 * d + 40:
                pairs.append((a, b, d))
    near_lines = []  # (city, section's cities): a city that starts near a section's line
    for s in board.sections.values():
        a, b = s.cities
        (ax, ay), (bx, by) = pos[a], pos[b]
        dx, dy = bx - ax, by - ay
        ll = max(dx * dx + dy * dy, 1e-6)
        for c in ids:
            x, y = pos[c]
            if c in (a, b) or not (min(ax, bx) - 60 < x < max(ax, bx) + 60
                                   and min(ay, by) - 60 < y < max(ay, by) + 60):
                continue
            t = min(max(((x - ax) * dx + (y - ay) * dy) / ll, 0.0), 1.0)
            if math.hypot(x - ax - dx * t, y - ay - dy * t) < CLEAR + 30:
                near_lines.append((c, a, b))
    for _ in range(rounds):
        moved = False
        for a, b, d in pairs:
            pa, pb = p[a], p[b]
            dx, dy = pb[0] - pa[0], pb[1] - pa[1]
            dist = math.hypot(dx, dy)
            if dist >= d:
                continue
            moved = True
            if dist < 1e-6:
                dx, dy, dist = 1.0, 0.0, 1.0
            push = (d - dist) / 2 * 0.5
            ux, uy = dx / dist * push, dy / dist * push
            pa[0] -= ux
            pa[1] -= uy
            pb[0] += ux
            pb[1] += uy
        for c, a, b in near_lines:  # a city off the lines of sections not its own
            pc, pa, pb = p[c], p[a], p[b]
            dx, dy = pb[0] - pa[0], pb[1] - pa[1]
            ll = dx * dx + dy * dy
            if ll < 1e-6:
                continue
            t = ((pc[0] - pa[0]) * dx + (pc[1] - pa[1]) * dy) / ll
            if not 0.0 < t < 1.0:
                continue
            qx, qy = pa[0] + dx * t, pa[1] + dy * t
            ox, oy = pc[0] - qx, pc[1] - qy
            dist = math.hypot(ox, oy)
            if dist >= CLEAR:
                continue
            moved = True
            if dist < 1e-6:
                ox, oy, dist = -dy, dx, math.sqrt(ll)
            push = (CLEAR - dist) * 0.25
            ux, uy = ox / dist * push, oy / dist * push
            pc[0] += ux
            pc[1] += uy
            for e in (pa, pb):
                e[0] -= ux / 2
                e[1] -= uy / 2
        for c in ids:  # a weak pull home, and stay inside the map
            q, o = p[c], home[c]
            q[0] += (o[0] - q[0]) * 0.01
            q[1] += (o[1] - q[1]) * 0.01
            q[0] = min(max(q[0], MARGIN), w - MARGIN)
            q[1] = min(max(q[1], MARGIN), h - MARGIN)
        if not moved:
            break
    return {c: (q[0], q[1]) for c, q in p.items()}


def _relaxed(board: Board, cities: dict[str, tuple[float, float]], rounds: int = 40
             ) -> dict[str, list[float]]:
    """Where each section's spaces go along its line, as fractions of the way
    from its first city to its second, in order: evenly spaced, then, where
    spaces of two sections meeting near a city would overlap (closer than a
    train's width), both slid along their own lines towards their sections'
    middles, a step at a time, keeping clear of the cities and of each other."""
    params: dict[str, list[float]] = {}
    geo: dict[str, tuple[float, float, float, float, float]] = {}
    for sid, s in board.sections.items():
        n = s.capacity
        params[sid] = [(i + 1) / (n + 1) for i in range(n)]
        (ax, ay), (bx, by) = cities[s.cities[0]], cities[s.cities[1]]
        geo[sid] = (ax, ay, bx - ax, by - ay, max(math.hypot(bx - ax, by - ay), 1e-6))
    need = 2 * TRAIN_R + 4

    def xy(sid: str, t: float) -> tuple[float, float]:
        ax, ay, dx, dy, _ = geo[sid]
        return ax + dx * t, ay + dy * t

    def slide(sid: str, k: int, toward: float) -> bool:
        """Slide space ``k`` of ``sid`` 2 px along its line (``toward`` > 0: to its
        second city), if it stays clear of its cities and its neighbours."""
        ts, length = params[sid], geo[sid][4]
        t = ts[k] + (2.0 if toward > 0 else -2.0) / length
        edge = (HOME_HALF + TRAIN_R) / length
        gap = (2 * TRAIN_R + 2) / length
        lo = ts[k - 1] + gap if k > 0 else edge
        hi = ts[k + 1] - gap if k + 1 < len(ts) else 1 - edge
        if lo <= t <= hi:
            ts[k] = t
            return True
        return False

    # the pairs that start near enough to matter (a slide moves a space 80 px at most)
    pts = [(sid, k, xy(sid, t)) for sid, ts in params.items() for k, t in enumerate(ts)]
    pairs = [(sa, ka, sb, kb) for i, (sa, ka, pa) in enumerate(pts) for sb, kb, pb in pts[i + 1:]
             if sa != sb and math.dist(pa, pb) < need + 30]
    reach = HOME_HALF + TRAIN_R + 3
    by_city = [(sid, k, cid) for sid, k, p in pts for cid, c in cities.items()
               if cid not in board.sections[sid].cities and math.dist(p, c) < reach + 30]
    for _ in range(rounds):
        moved = False
        for sa, ka, sb, kb in pairs:
            pa, pb = xy(sa, params[sa][ka]), xy(sb, params[sb][kb])
            if math.dist(pa, pb) >= need:
                continue
            for sid, k in ((sa, ka), (sb, kb)):  # both towards their sections' middles
                moved |= slide(sid, k, 0.5 - params[sid][k])
        for sid, k, cid in by_city:  # off the cities the line passes near
            (px, py), (cx, cy) = xy(sid, params[sid][k]), cities[cid]
            if math.hypot(px - cx, py - cy) >= reach:
                continue
            _, _, dx, dy, _ = geo[sid]
            moved |= slide(sid, k, (px - cx) * dx + (py - cy) * dy)  # the way along the line that is away
        if not moved:
            break
    return params


def _slots(board: Board, cities: dict[str, tuple[float, float]]) -> dict[str, list[tuple[float, float]]]:
    """The centres of each section's spaces, evenly along the line between its
    cities: each starting space at its company's home end, the neutral spaces
    between, in the order of ``Section.starts`` then ``Section.spaces``."""
    out: dict[str, list[tuple[float, float]]] = {}
    params = _relaxed(board, cities)
    for sid, s in board.sections.items():
        a, b = s.cities
        (ax, ay), (bx, by) = cities[a], cities[b]
        n = s.capacity
        points = [(ax + (bx - ax) * t, ay + (by - ay) * t) for t in params[sid]]
        lo, hi = 0, n - 1
        starts = []
        for co in s.starts:
            route = board.companies.get(co)
            if route is not None and route.home == b:
                starts.append(points[hi])
                hi -= 1
            else:
                starts.append(points[lo])
                lo += 1
        out[sid] = starts + points[lo:hi + 1]
    return out


def _overlap(r: tuple[float, float, float, float], q: tuple[float, float, float, float]) -> float:
    w = min(r[2], q[2]) - max(r[0], q[0])
    h = min(r[3], q[3]) - max(r[1], q[1])
    return w * h if w > 0 and h > 0 else 0.0


def _place_labels(board: Board, cities: dict[str, tuple[float, float]],
                  slots: dict[str, list[tuple[float, float]]], w: int, h: int
                  ) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[float, float, float, float]]]:
    """Top-left corners of the city id labels: for each city (the most crowded
    first) the one of eight places around it that overlaps least with the labels
    placed so far, the cities and the spaces, and stays inside the map."""
    obstacles: list[tuple[float, float, float, float]] = []
    for x, y in cities.values():
        obstacles.append((x - HOME_HALF, y - HOME_HALF, x + HOME_HALF, y + HOME_HALF))
    for pts in slots.values():
        for x, y in pts:
            obstacles.append((x - TRAIN_R, y - TRAIN_R, x + TRAIN_R, y + TRAIN_R))

    def crowd(c: str) -> int:
        x, y = cities[c]
        return sum(1 for o in cities.values() if abs(o[0] - x) < 90 and abs(o[1] - y) < 60)

    placed: list[tuple[float, float, float, float]] = []
    out: dict[str, tuple[int, int]] = {}
    boxes: dict[str, tuple[float, float, float, float]] = {}
    for cid in sorted(cities, key=lambda c: (-crowd(c), c)):
        x, y = cities[cid]
        left, top, right, bottom = _bbox(cid, LABEL_SIZE)
        tw, th = right - left, bottom - top
        candidates = []  # (x0, y0, preference cost): eight directions, three distances
        for step, gap in enumerate((HOME_HALF + _px(3), HOME_HALF + _px(12), HOME_HALF + _px(24))):
            far = 150.0 * SCALE ** 2 * step  # as bad as covering a quarter of a train
            candidates += [
                (x + gap, y - th / 2, far), (x - gap - tw, y - th / 2, far + 1),
                (x - tw / 2, y - gap - th, far + 2), (x - tw / 2, y + gap, far + 2),
                (x + gap - 4, y - gap - th + 4, far + 3), (x - gap - tw + 4, y - gap - th + 4, far + 3),
                (x + gap - 4, y + gap - 4, far + 3), (x - gap - tw + 4, y + gap - 4, far + 3),
            ]
        reach = (x - 60 - tw, y - 50 - th, x + 60 + tw, y + 50 + th)  # every candidate lies inside
        near = [q for q in obstacles if _overlap(reach, q)]
        near_labels = [q for q in placed if _overlap(reach, q)]
        close = [xy for c, xy in cities.items() if c != cid and abs(xy[0] - x) < 150 and abs(xy[1] - y) < 100]
        best = None
        for x0, y0, pref in candidates:
            r = (x0 - 2, y0 - 2, x0 + tw + 2, y0 + th + 2)
            cost = pref
            if r[0] < 2 or r[1] < 2 or r[2] > w - 2 or r[3] > h - 2:
                cost += 10_000
            cost += 12 * sum(_overlap(r, q) for q in near_labels)
            cost += 8 * sum(_overlap(r, q) for q in near)
            mx, my = (r[0] + r[2]) / 2, (r[1] + r[3]) / 2
            own = (mx - x) ** 2 + (my - y) ** 2
            if any((mx - ox) ** 2 + (my - oy) ** 2 < own for ox, oy in close):
                cost += 400 * SCALE ** 2  # nearer another city than its own: whose label is it?
            if best is None or cost < best[0]:
                best = (cost, r, x0, y0)
        assert best is not None
        placed.append(best[1])
        out[cid] = (round(best[2] - left), round(best[3] - top))
        boxes[cid] = best[1]
    return out, boxes


def _make_layout(board: Board) -> Layout:
    pos = _spread(board, _project(board, WIDTH, MAP_HEIGHT), WIDTH, MAP_HEIGHT)
    slots = _slots(board, pos)
    labels, boxes = _place_labels(board, pos, slots, WIDTH, MAP_HEIGHT)
    return Layout(WIDTH, HEIGHT, MAP_HEIGHT, pos, slots, labels, boxes)


# ====================================================================== drawing
def _disc(draw: ImageDraw.ImageDraw, xy: tuple[float, float], r: float, fill: Colour,
          outline: Colour = OUTLINE, width: int = 2) -> None:
    x, y = xy
    draw.ellipse((x - r, y - r, x + r, y + r), fill=fill, outline=outline, width=width)


def _free_space(draw: ImageDraw.ImageDraw, xy: tuple[float, float], track: str, half: int = FREE_HALF) -> None:
    """A free neutral space: a square in its track type's colour (black-white: split
    along the diagonal, black upper left, white lower right; white and
    black-white outlined)."""
    x, y = round(xy[0]), round(xy[1])
    box = (x - half, y - half, x + half, y + half)
    if track == "black-white":
        draw.rectangle(box, fill=TRACK_COLOURS["white"])
        draw.polygon([(x - half, y - half), (x + half, y - half), (x - half, y + half)],
                     fill=TRACK_COLOURS["black"])
        draw.rectangle(box, outline=OUTLINE, width=1)
    elif track == "white":  # white needs its outline on the map's background; the others are
        draw.rectangle(box, fill=TRACK_COLOURS["white"], outline=OUTLINE, width=1)  # clear without
    else:  # one (and the PNG is smaller)
        draw.rectangle(box, fill=TRACK_COLOURS.get(track, (255, 0, 255)))


def _shape_points(shape: str, xy: tuple[float, float], r: float) -> list[tuple[float, float]] | None:
    """The polygon of ``shape`` (a value of ``SHAPES``) centred at ``xy`` within
    the circle of radius ``r``; None for ``"circle"`` (drawn as an ellipse).
    Every shape covers its centre (where a train's colour is read)."""
    x, y = xy

    def poly(*pts: tuple[float, float]) -> list[tuple[float, float]]:
        return [(x + px * r, y + py * r) for px, py in pts]

    if shape == "circle":
        return None
    if shape == "triangle":
        return poly((0, -1.1), (1.05, 0.75), (-1.05, 0.75))
    if shape == "triangle_down":
        return poly((-1.05, -0.75), (1.05, -0.75), (0, 1.1))
    if shape == "diamond":
        return poly((0, -1.15), (1.15, 0), (0, 1.15), (-1.15, 0))
    if shape == "tee":
        return poly((-1.15, -1.1), (1.15, -1.1), (1.15, -0.35), (0.4, -0.35), (0.4, 1.1), (-0.4, 1.1),
                    (-0.4, -0.35), (-1.15, -0.35))
    if shape == "star":
        return poly(*[(math.sin(math.pi * k / 5) * (1.2 if k % 2 == 0 else 0.5),
                       -math.cos(math.pi * k / 5) * (1.2 if k % 2 == 0 else 0.5)) for k in range(10)])
    if shape == "plus":
        t = 0.42
        return poly((-t, -1.1), (t, -1.1), (t, -t), (1.1, -t), (1.1, t), (t, t), (t, 1.1), (-t, 1.1),
                    (-t, t), (-1.1, t), (-1.1, -t), (-t, -t))
    if shape == "cross":
        t, e = 0.32, 0.82
        return poly((-e, -e - t), (0, -t * 1.4), (e, -e - t), (e + t, -e), (t * 1.4, 0), (e + t, e),
                    (e, e + t), (0, t * 1.4), (-e, e + t), (-e - t, e), (-t * 1.4, 0), (-e - t, -e))
    if shape == "bar":
        return poly((-1.2, -0.55), (1.2, -0.55), (1.2, 0.55), (-1.2, 0.55))
    if shape == "column":
        return poly((-0.55, -1.2), (0.55, -1.2), (0.55, 1.2), (-0.55, 1.2))
    raise ValueError(f"no shape {shape!r}")


def _mark(draw: ImageDraw.ImageDraw, xy: tuple[float, float], company: str, r: float,
          outline: Colour = OUTLINE, width: int = 2) -> None:
    """``company``'s shape (``SHAPES``) in its colour, centred at ``xy`` within
    radius ``r``, outlined."""
    fill = COMPANY_COLOURS.get(company, (255, 0, 255))
    pts = _shape_points(SHAPES.get(company, "circle"), xy, r)
    if pts is None:
        _disc(draw, xy, r, fill, outline, width)
    else:
        _polygon(draw, pts, fill, outline, width)


def _polygon(draw: ImageDraw.ImageDraw, pts: list[tuple[float, float]], fill: Colour, outline: Colour,
             width: int) -> None:
    """``draw.polygon(pts, fill=fill, outline=outline, width=width)``, the very
    pixels: for an outline wider than 1 Pillow (``ImageDraw.polygon``) makes a
    "1" mask of the whole picture to keep the outline inside the fill, a new one
    for every polygon (a third of a map's drawing was those masks: a train is
    one); here one mask per picture size is kept (``_polygon_mask``), the
    polygon's fill drawn on it and taken off again (the same pixels set back to
    0) after the outline is drawn through it."""
    if width <= 1 or draw.im is None or draw.palette:
        draw.polygon(pts, fill=fill, outline=outline, width=width)
        return
    ink, fill_ink = draw._getink(outline, fill)
    if fill_ink is not None:
        draw.draw.draw_polygon(pts, fill_ink, 1)
    if ink is None or ink == fill_ink:
        return
    mask, mask_draw = _polygon_mask(draw.im.size)
    mask_draw.draw_polygon(pts, 1, 1)
    try:
        draw.draw.draw_polygon(pts, ink, 0, width * 2 - 1, mask.im)
    finally:
        mask_draw.draw_polygon(pts, 0, 1)


@lru_cache(maxsize=4)
def _polygon_mask(size: tuple[int, int]) -> tuple[Image.Image, Any]:
    """A "1" picture of ``size``, all 0 between uses, and its core drawing
    object (``_polygon``)."""
    mask = Image.new("1", size)
    return mask, ImageDraw.Draw(mask).draw


def _train(draw: ImageDraw.ImageDraw, xy: tuple[float, float], company: str, start: bool = False) -> None:
    """A train: its company's shape (``SHAPES``) in its colour; on a starting
    space ringed."""
    if start:
        _disc(draw, xy, START_R, BACKGROUND, OUTLINE, 2)
    _mark(draw, xy, company, TRAIN_R)


def _home(draw: ImageDraw.ImageDraw, xy: tuple[float, float], company: str, half: int = HOME_HALF) -> None:
    """A home station: a white square framed in ink with its company's shape in
    its colour inside."""
    x, y = xy
    draw.rectangle((x - half, y - half, x + half, y + half), fill=LEGEND_BACKGROUND, outline=INK, width=2)
    _mark(draw, xy, company, half - 3.5, outline=OUTLINE, width=1)


def _text(img: Image.Image, xy: tuple[int, int], text: str, size: int,
          fill: Colour = INK, halo: Colour | None = None, masks: Callable | None = None) -> None:
    """Draw ``text`` at ``xy`` (its top left, as ``ImageDraw.text`` places it) on
    ``img``, in ``fill``, with a halo of 3 pixels in ``halo`` under it when
    given, exactly as ``ImageDraw.text`` draws it (``stroke_width=3,
    stroke_fill=halo``), each run in a face that has its glyphs (``_parts``:
    never a missing-glyph box; runs in other faces on the first face's
    baseline): from its masks, rendered once per text (``masks``:
    ``_text_masks`` by default, ``_line_masks`` for the reader's legend lines)
    and pasted in ``halo`` and ``fill`` (``Image.paste`` with a mask blends as
    ``ImageDraw.text`` does: the same pixels).  At a point that is not whole
    pixels, or without a FreeType font, it is drawn directly."""
    parts = _parts(text, size)
    if not parts:
        return
    found = None
    if isinstance(xy[0], int) and isinstance(xy[1], int):  # a mask fits whole pixels only
        found = (masks or _text_masks)(text, size, halo is not None)
    if found is None:
        draw = ImageDraw.Draw(img)
        draw.fontmode = TEXT_MODE
        stroke = {"stroke_width": 3, "stroke_fill": halo} if halo is not None else {}
        if len(parts) == 1 and parts[0][2] == 0:
            draw.text(xy, parts[0][1], font=parts[0][0], fill=fill, **stroke)
            return
        base = _baseline(size)
        if halo is not None:  # every run's halo first, then the runs, as one text would be drawn
            for font, run, dx in parts:
                draw.text((xy[0] + dx, xy[1] + base), run, font=font, fill=halo, anchor="ls", **stroke)
        for font, run, dx in parts:
            draw.text((xy[0] + dx, xy[1] + base), run, font=font, fill=fill, anchor="ls")
        return
    (ox, oy), stroke, ink = found
    box = (xy[0] - ox, xy[1] - oy)
    if stroke is not None and halo is not None:
        img.paste(halo, box, stroke)
        if halo == fill:  # ImageDraw.text draws the fill only in another colour
            return
    img.paste(fill, box, ink)


def _render_masks(text: str, size: int, halo: bool
                  ) -> tuple[tuple[int, int], Image.Image | None, Image.Image] | None:
    """The masks ``ImageDraw.text`` draws ``text`` with at a point of whole
    pixels: ``(origin, halo mask, fill mask)``, "L" images of the same size
    with the text's point at ``origin``; the halo mask (``stroke_width=3``,
    filled) is None without ``halo``.  Each run of ``_parts`` in its own face.
    None when a font is not a FreeType font (then ``_text`` draws directly)."""
    parts = _parts(text, size)
    if not parts or not all(isinstance(f, ImageFont.FreeTypeFont) for f, _, _ in parts):
        return None
    stroke = 3 if halo else 0
    single = len(parts) == 1 and parts[0][2] == 0
    left, top, right, bottom = _bbox(text, size, stroke)
    pad = 4  # a mask wider than getbbox says costs nothing but zeros
    origin = (pad - min(math.floor(left), 0), pad - min(math.floor(top), 0))
    shape = (origin[0] + max(math.ceil(right), 0) + pad, origin[1] + max(math.ceil(bottom), 0) + pad)
    base = _baseline(size)

    def mask(stroke_width: int) -> Image.Image:
        # drawn in 255 on 0, an "L" image's pixels are the mask itself
        im = Image.new("L", shape, 0)
        draw = ImageDraw.Draw(im)
        draw.fontmode = TEXT_MODE
        extra = {"stroke_width": stroke_width, "stroke_fill": 255 if stroke_width else None}
        if single:
            draw.text(origin, parts[0][1], font=parts[0][0], fill=255, **extra)
        else:
            for font, run, dx in parts:
                draw.text((origin[0] + dx, origin[1] + base), run, font=font, fill=255, anchor="ls", **extra)
        return im

    return origin, (mask(stroke) if halo else None), mask(0)


_text_masks = lru_cache(maxsize=512)(_render_masks)
"""``_render_masks`` of the texts every position draws again (the city ids, the
legend's words and company cells), kept: about 5 KB each."""
_line_masks = lru_cache(maxsize=128)(_render_masks)
"""``_render_masks`` of the reader's legend lines (their shares), kept apart
(up to 30 KB each) so that they never push the city ids out."""


@lru_cache(maxsize=512)
def _text_width(text: str, size: int) -> int:
    left, _, right, _ = _bbox(text, size)
    return math.ceil(right - left)


def _shares_text(counts: dict[str, int]) -> str:
    order = {c: i for i, c in enumerate((*COMPANIES, UP))}
    items = sorted(((c, n) for c, n in counts.items() if n > 0), key=lambda cn: order.get(cn[0], 99))
    if not items:
        from .words import word
        return word("board", "shares_none")
    return ", ".join(f"{n} {c}" for c, n in items)


def map_image(game: Any, player: str | None = None) -> Image.Image:
    """The map of ``game`` as ``player`` may see it (``None``: the public view, no
    player's shares), a Pillow RGB image of ``WIDTH`` x ``HEIGHT``.  KeyError for a
    player not in the game."""
    view = game.public_view() if player is None else game.view(player)
    lay = layout(game.board)
    img = _base(game, view, lay).copy()
    _reader_lines(img, lay, view, player)
    return img


def _base(game: Any, view: dict[str, Any], lay: Layout) -> Image.Image:
    """The base image of ``game``'s position (``_base_image``), drawn once per
    position and kept (``_BASES``); never changed by callers."""
    board: Board = game.board
    key = _base_key(game, view)
    slot = (id(board), key[0])  # one kept per board and language: readers of several languages alternate
    cached = _BASES.get(slot)
    if cached is not None and cached[0] is board and cached[1] == key:
        return cached[2]
    base = _base_image(game, view, lay)
    _BASES.pop(slot, None)
    _BASES[slot] = (board, key, base)
    while len(_BASES) > BASE_CACHE:
        del _BASES[next(iter(_BASES))]
    return base


BASE_CACHE = 5
"""How many base images (``_base_image``, about 2 MB each) the process keeps:
the last one drawn of each board and language (a cycle draws every reader's map
of a game in a row, its readers in up to five languages)."""

_BASES: dict[tuple[int, str], tuple[Board, tuple, Image.Image]] = {}


def _base_key(game: Any, view: dict[str, Any]) -> tuple:
    """Everything ``_base_image`` draws from besides the board: the language in
    force, the trains placed and the companies of the legend (the same for every
    reader of that language)."""
    return (i18n.current(),  # the legend's words are the reader's language's
            tuple((sid, tuple(row)) for sid, row in game.placed.items()),
            tuple((c["abbr"], c["home"], c["value"], c["in_box"]) for c in view["companies"]))


def _base_image(game: Any, view: dict[str, Any], lay: Layout, cells: bool = True) -> Image.Image:
    """The map as every reader sees it: all but the legend's last lines
    (``_reader_lines``), which say the reader's own shares.  Drawn once per
    position (``map_image`` keeps it), copied for each reader.  ``cells=False``:
    without the legend's company cells (their rows left blank; ``mail_map``
    shows the map and the key alone)."""
    board: Board = game.board
    homes = {c["home"]: c["abbr"] for c in view["companies"]}
    layers = _layers(board, lay)
    if layers is not None:  # the same pixels as below, the position's own marks alone drawn
        under, starts, discs = layers
        img = under.copy()  # the lines and the starting spaces
        draw = ImageDraw.Draw(img)
        for sid, s in board.sections.items():
            for co, xy in starts[sid]:
                _train(draw, xy, co, start=True)
            row = game.placed.get(sid) or [None] * len(s.spaces)
            for track, occ, xy in zip(s.spaces, row, lay.slots[sid][len(s.starts):]):
                if occ is None:
                    _free_space(draw, xy, track)
                else:
                    _train(draw, xy, occ)
        img.paste(discs[0], (0, 0), discs[1])
        for cid, xy in lay.cities.items():
            if cid in homes:
                _home(draw, xy, homes[cid])
        for cid, xy in lay.labels.items():
            _text(img, xy, cid, LABEL_SIZE, INK, halo=BACKGROUND)
        _legend(img, draw, lay, view, cells)
        return img
    img = _lines(board, lay).copy()  # the sections' lines, then their spaces
    draw = ImageDraw.Draw(img)
    for sid, s in board.sections.items():
        pts = lay.slots[sid]
        for co, xy in zip(s.starts, pts):
            _train(draw, xy, co, start=True)
        row = game.placed.get(sid) or [None] * len(s.spaces)
        for track, occ, xy in zip(s.spaces, row, pts[len(s.starts):]):
            if occ is None:
                _free_space(draw, xy, track)
            else:
                _train(draw, xy, occ)

    # cities: a dot, or the home station's square in its company's colour
    for cid, xy in lay.cities.items():
        if cid in homes:
            _home(draw, xy, homes[cid])
        else:
            _disc(draw, xy, CITY_R, INK, INK, 1)
    for cid, xy in lay.labels.items():
        _text(img, xy, cid, LABEL_SIZE, INK, halo=BACKGROUND)

    _legend(img, draw, lay, view, cells)
    return img


Layers = tuple[Image.Image, dict[str, list[tuple[str, tuple[float, float]]]], tuple[Image.Image, Image.Image]]


def _layers(board: Board, lay: Layout) -> Layers | None:
    """What ``_base_image`` draws the same in every position of ``board``, drawn
    once per board (kept with its layout, ``_LAYERS``): ``(under, starts,
    discs)``: the background with the sections' lines and the starting spaces
    (an RGB picture of the whole map), the starting spaces it leaves out (by
    section: ``(company, centre)``; those near a space of a section drawn
    before them, drawn in their order), and an overlay of the map area (rows
    above ``Layout.map_height``: the legend is drawn over the rest), an RGB
    picture and its "1" mask (1 where it is drawn, else 0): every city's dot.
    A dot's pixels are of one colour (no antialiasing), so pasting the overlay
    through its mask gives the very pixels drawing the dots does.  (Not so the
    labels: their halo's edge is blended with what lies under it.)  The order of drawing
    changes (the starting spaces before every section's spaces; every dot
    before the home stations), so this is None, and every mark is drawn in
    its order, when that could change a pixel: two cities near each other,
    or a dot a home station's square would not cover."""
    kept = _LAYERS.get(id(lay))
    if kept is not None and kept[0] is lay:
        return kept[1]
    layers = _make_layers(board, lay)
    _LAYERS.pop(id(lay), None)
    _LAYERS[id(lay)] = (lay, layers)
    while len(_LAYERS) > BASE_CACHE:
        del _LAYERS[next(iter(_LAYERS))]
    return layers


_LAYERS: dict[int, tuple[Layout, Layers | None]] = {}


def _make_layers(board: Board, lay: Layout) -> Layers | None:
    mark = max(START_R, math.ceil(1.25 * TRAIN_R)) + 3  # what a starting space or train covers at most
    space = max(FREE_HALF, math.ceil(1.25 * TRAIN_R)) + 3  # a neutral space, free or with a train
    city = HOME_HALF + 3

    def near(a: tuple[float, float], r: float, b: tuple[float, float], q: float) -> bool:
        return abs(a[0] - b[0]) <= r + q and abs(a[1] - b[1]) <= r + q

    earlier: list[tuple[float, float, float]] = []  # what the sections drawn so far drew in order
    kept: dict[str, list[bool]] = {}  # the starting spaces drawn in order (not under), by section
    for sid, s in board.sections.items():
        pts = lay.slots[sid]
        kept[sid] = [any(near(xy, mark, e[:2], e[2]) for e in earlier) for xy in pts[:len(s.starts)]]
        earlier.extend((*xy, mark) for xy, k in zip(pts, kept[sid]) if k)
        earlier.extend((*xy, space) for xy in pts[len(s.starts):])
    cities = list(lay.cities.values())
    if CITY_R + 2 >= HOME_HALF or any(near(a, city, b, city) for i, a in enumerate(cities)
                                      for b in cities[i + 1:]):
        return None

    under = _lines(board, lay).copy()
    draw = ImageDraw.Draw(under)
    for sid, s in board.sections.items():
        for co, xy, k in zip(s.starts, lay.slots[sid], kept[sid]):
            if not k:
                _train(draw, xy, co, start=True)
    area = (lay.width, lay.map_height)

    starts = {sid: [(co, xy) for co, xy, k in zip(s.starts, lay.slots[sid], kept[sid]) if k]
              for sid, s in board.sections.items()}
    dots, mask = Image.new("RGB", area, BACKGROUND), Image.new("1", area, 0)
    for img, ink in ((dots, INK), (mask, 1)):
        d = ImageDraw.Draw(img)
        for xy in lay.cities.values():
            _disc(d, xy, CITY_R, ink, ink, 1)
    return under, starts, (dots, mask)


def _lines(board: Board, lay: Layout) -> Image.Image:
    """The background with every section's line, what ``_base_image`` draws
    first in every position: drawn once per board (kept with its layout)."""
    kept = _LINES.get(id(lay))
    if kept is not None and kept[0] is lay:
        return kept[1]
    img = Image.new("RGB", (lay.width, lay.height), BACKGROUND)
    draw = ImageDraw.Draw(img)
    for s in board.sections.values():
        a, b = s.cities
        draw.line((lay.cities[a], lay.cities[b]), fill=LINE, width=3)
    _LINES.pop(id(lay), None)
    _LINES[id(lay)] = (lay, img)
    while len(_LINES) > BASE_CACHE:
        del _LINES[next(iter(_LINES))]
    return img


_LINES: dict[int, tuple[Layout, Image.Image]] = {}


def _legend(img: Image.Image, draw: ImageDraw.ImageDraw, lay: Layout, view: dict[str, Any],
            cells: bool = True) -> None:
    """The legend below the map, in the language in force (``templates/words/
    board.txt``): the key (the free spaces by track type; a train, a starting
    space, a home station), then each company's shape and colour, letters,
    value in millions, home station and trains left, two companies a row
    (``cells=False``: not those)."""
    from .templates import card_text  # track types in the reader's language
    from .words import wording

    word = wording("board")
    top = lay.map_height
    draw.rectangle((0, top, lay.width, lay.height), fill=LEGEND_BACKGROUND)
    draw.line((0, top, lay.width, top), fill=LINE, width=2)

    # key: the free spaces by track type; a train, a starting space, a home station
    y = top + _px(8) + KEY_ROW // 2
    x = _px(14)
    up = SMALL_SIZE * 14 // 23  # a text's top above the row's middle
    for track in TRACK_TYPES:
        _free_space(draw, (x + _px(8), y), track, half=_px(8))
        name = card_text(track)
        _text(img, (x + _px(22), y - up), name, SMALL_SIZE, MUTED)
        x += _px(22) + _text_width(name, SMALL_SIZE) + _px(22)
    y += KEY_ROW
    x = _px(14)
    for kind, name in (("train", word("key_train")), ("start", word("key_start")), ("home", word("key_home"))):
        if kind == "train":
            _train(draw, (x + _px(10), y), "BNL")
        elif kind == "start":
            _train(draw, (x + _px(12), y), "BNL", start=True)
        else:
            _home(draw, (x + _px(11), y), "BNL")
        _text(img, (x + _px(30), y - up), name, SMALL_SIZE, MUTED)
        x += _px(30) + _text_width(name, SMALL_SIZE) + _px(28)

    # the companies: shape and colour, value in millions, home station and trains left
    if not cells:
        return
    cols, cell_w = 2, lay.width // 2
    y0 = top + CELLS_TOP
    for i, c in enumerate(view["companies"]):
        cx = (i % cols) * cell_w + _px(14)
        cy = y0 + (i // cols) * CELL_H
        _mark(draw, (cx + _px(12), cy + _px(15)), c["abbr"], _px(12))
        _text(img, (cx + _px(32), cy), f"{c['abbr']} ${c['value']}M", LEGEND_SIZE, INK)
        rest = word("cell", home=c["home"], count=c["in_box"])
        _text(img, (cx + _px(186), cy + 1), _fit(rest, SMALL_SIZE, cell_w - _px(186) - _px(8)), SMALL_SIZE, MUTED)

    y = lay.shares_top + 2
    draw.line((_px(14), y, lay.width - _px(14), y), fill=RULE, width=1)


def _reader_lines(img: Image.Image, lay: Layout, view: dict[str, Any], player: str | None,
                  top: int = 0) -> None:
    """The legend's last lines: the reader's own shares, or what the public view is
    (drawn on a picture whose row 0 is the map's row ``top``), ``_wrapped``."""
    y = lay.shares_top + _px(8) - top
    for k, line in enumerate(_wrapped(legend_lines(view, player), lay.width - 2 * _px(14))):
        _text(img, (_px(14), y + k * READER_ROW), line, SMALL_SIZE, INK, masks=_line_masks)


def _wrapped(lines: list[str], width: int, rows: int = None) -> list[str]:
    """``lines`` broken after a comma where one is wider than ``width`` pixels
    (at ``SMALL_SIZE``), the lines after the first of each indented, at most
    ``rows`` (``READER_ROWS``) in all, the last cut short with an ellipsis if
    need be."""
    rows = READER_ROWS if rows is None else rows
    out: list[str] = []
    for line in lines:
        pieces = line.split(", ")
        cur = pieces[0]
        for piece in pieces[1:]:
            if _text_width(cur + ", " + piece + ",", SMALL_SIZE) <= width:  # room for the comma it may end with
                cur += ", " + piece
            else:
                out.append(cur + ",")
                cur = "    " + piece
        out.append(cur)
    if len(out) > rows:
        out = out[:rows - 1] + [" ".join(x.strip() for x in out[rows - 1:])]
    return [_fit(x, SMALL_SIZE, width) for x in out]


def legend_lines(view: dict[str, Any], player: str | None) -> list[str]:
    """The last lines of the legend in the language in force (``templates/words/
    board.txt``): ``player``'s own shares, invested and in hand, from ``view =
    game.view(player)``, the first line naming the reader as the map draws the
    name (``fonts.drawable``: in any script the fonts cover, transliterated or
    left out where none does; a name nothing of is left of is not named); for
    the public view (``player=None``) the turn and the dividends instead."""
    from .words import wording

    word = wording("board")
    if player is None:
        return [word("public_view", turn=view["turn"] + 1, paid=view["dividends_paid"],
                     final=view["final_dividend"])]
    me = next((p for p in view["players"] if p["name"] == player), None)
    hand: dict[str, int] = {}
    for share in view["you"]["shares"]:
        hand[share] = hand.get(share, 0) + 1
    name = " ".join(fonts.drawable(player).split())
    return [word("shares_invested", player=name, shares=_shares_text(me["invested"] if me else {})),
            word("shares_in_hand", shares=_shares_text(hand))]


def _fit(text: str, size: int, width: int) -> str:
    """``text``, cut short with an ellipsis to fit ``width`` pixels."""
    if _text_width(text, size) <= width:
        return text
    while text and _text_width(text + "…", size) > width:
        text = text[:-1]
    return text + "…"


@lru_cache(maxsize=1)
def palette() -> Image.Image:
    """The fixed palette of the map's PNG (a "P" image of ``palette_colours``):
    every colour the map draws, exactly; a pixel of another colour (the few
    blended ones a glyph's halo leaves, or a scaled picture's) becomes the
    nearest of them."""
    pal = Image.new("P", (1, 1))
    pal.putpalette([v for c in palette_colours() for v in c])  # 16 entries: a 4-bit PNG
    return pal


PALETTE_BITS = 4
"""Bits per pixel of the map's PNG (``_png``): 4, at most 16 colours, which
every colour the map draws fits in (``palette_colours``); 6% smaller than 8
bits a pixel late in play (issue 26: at most 50 KB a status mail)."""


@lru_cache(maxsize=1)
def palette_colours() -> tuple[Colour, ...]:
    """The colours of ``palette``, in palette order: the companies', the track
    types', the backgrounds, the lines, the ink and the muted text, 16 in all
    (at most ``2 ** PALETTE_BITS``).  The map draws no other colour: no
    antialiasing (shapes are drawn with ``ImageDraw``'s whole pixels, texts in
    ``TEXT_MODE``)."""
    colours = tuple(dict.fromkeys([*COMPANY_COLOURS.values(), *TRACK_COLOURS.values(), BACKGROUND,
                                   LEGEND_BACKGROUND, LINE, INK, OUTLINE, RULE, MUTED]))
    assert len(colours) <= 2 ** PALETTE_BITS, len(colours)
    return colours


def render_map(game: Any, player: str | None = None, *, width: int | None = None) -> bytes:
    """The map of ``game`` as ``player`` may see it, as PNG bytes (``None``: the
    public view): a palette PNG (``palette``; a drawn colour comes back exact,
    an antialiased edge as the nearest palette colour).  ``width`` scales the picture down (e.g. 390 for a phone's
    screen); by default it is ``WIDTH`` x ``HEIGHT``."""
    if width is None or width == layout(game.board).width:
        return _png(game, player)
    img = map_image(game, player)
    if width != img.width:
        img = img.resize((width, round(img.height * width / img.width)), Image.Resampling.LANCZOS)
    # a palette PNG (``palette``): about 40% of the bytes of the RGB picture, and
    # faster to encode (benchmarks/bench_map.py); no dithering, so that each pixel
    # maps alone and the board looks the same in every reader's map
    img = img.quantize(palette=palette(), dither=Image.Dither.NONE)
    buf = io.BytesIO()
    img.save(buf, "PNG", compress_level=PNG_LEVEL, bits=PALETTE_BITS)
    return buf.getvalue()


MAIL_KEY_COLS = 5
"""Companies a row in the key of ``mail_map``: their shape and letters."""

MAIL_PNG_LEVEL = 7
"""The zlib level of ``mail_map``'s PNG: 7. At the end of the demo's game: level 7
17.4 KB in 8.3 ms, 8 16.9 KB in 18 ms, 9 16.7 KB in 35 ms (the compression, once
per position and language, was a tenth of the demo's CPU at level 9); 6 18.0 KB."""

def _mail_area(game: Any, view: dict[str, Any], lay: Layout, key: tuple
               ) -> tuple[bytes, Any, tuple[str, Image.Image]]:
    """The map area of ``mail_map`` (the rows above ``Layout.map_height``, the
    same in every language: city ids, marks and lines, no words), drawn and
    compressed once per position (``key``: the trains placed, the companies'
    letters and home stations) and kept for the board (``_AREAS``): ``(head,
    compressor, (language, base))``, the PNG scanlines of those rows fed to a zlib compressor of
    ``MAIL_PNG_LEVEL`` and what it gave so far, and the picture they were
    taken from (``_base_image(cells=False)``, its legend's key in ``language``).  A copy of the compressor fed the
    rows below and flushed gives the very bytes of ``zlib.compress`` of all the
    rows (deflate's output does not depend on how its input is cut without a
    flush): each language's map compresses only its own rows."""
    board: Board = game.board
    kept = _AREAS.get(id(board))
    if kept is not None and kept[0] is board and kept[1] == key:
        return kept[2]
    base = _base_image(game, view, lay, cells=False)
    area = base.crop((0, 0, lay.width, lay.map_height)).quantize(palette=palette(), dither=Image.Dither.NONE)
    comp = zlib.compressobj(MAIL_PNG_LEVEL)
    head = comp.compress(_scanlines(_packed(area), _row_bytes(lay.width)))
    _AREAS.pop(id(board), None)
    _AREAS[id(board)] = (board, key, (head, comp, (i18n.current(), base)))
    while len(_AREAS) > BASE_CACHE:
        del _AREAS[next(iter(_AREAS))]
    return head, comp, (i18n.current(), base)


_AREAS: dict[int, tuple[Board, tuple, tuple[bytes, Any, tuple[str, Image.Image]]]] = {}

_MAILS: dict[tuple[int, str], tuple[Board, tuple, bytes]] = {}
"""The last ``mail_map`` of each board and language: ``(id(board), language)
-> (board, key, PNG)``, its
key the language in force, the trains placed and the companies' letters and
home stations (all the picture shows)."""


def mail_map(game: Any) -> bytes:
    """The map of ``game`` as a status mail shows it, as PNG bytes (a 4-bit
    palette PNG, ``WIDTH`` wide): the map and the legend's key as
    ``render_map`` draws them (its very pixels), then each company's shape in
    its colour with its letters, ``MAIL_KEY_COLS`` a row; no company values,
    home stations, trains left nor the reader's shares, which the mail's HTML
    and text part show right above and below the picture (issue 26: at most
    50 KB a status mail; the legend's cells and lines were a quarter of the
    PNG).  The same for every reader of a language (only what the public view
    shows); drawn once per position and language (``_MAILS``), without the
    company cells ``render_map`` draws (``_base_image(cells=False)``); its map
    area, the same in every language, drawn and compressed once per position
    (``_mail_area``)."""
    view = game.public_view()
    board: Board = game.board
    lay = layout(board)
    key = (i18n.current(), tuple((sid, tuple(row)) for sid, row in game.placed.items()),
           tuple((c["abbr"], c["home"]) for c in view["companies"]))
    slot = (id(board), key[0])  # one kept per board and language, as ``_base``
    kept = _MAILS.get(slot)
    if kept is not None and kept[0] is board and kept[1] == key:
        return kept[2]
    area = _mail_area(game, view, lay, key[1:])
    companies = [c["abbr"] for c in view["companies"]]
    top = lay.map_height + CELLS_TOP - _px(6)  # the map and the key
    rows = -(-len(companies) // MAIL_KEY_COLS)
    # the rows below the map: the legend's key in the language in force, then the companies
    img = Image.new("RGB", (lay.width, top + rows * CELL_H + _px(4)), LEGEND_BACKGROUND)
    draw = ImageDraw.Draw(img)
    head, comp, drawn = area
    if drawn[0] == key[0]:  # the map area was drawn in this language: its legend's key taken
        img.paste(drawn[1].crop((0, lay.map_height, lay.width, top)), (0, lay.map_height))
    else:
        _legend(img, draw, lay, view, cells=False)  # its background covers everything below the map
        draw.rectangle((0, top, img.width, img.height), fill=LEGEND_BACKGROUND)
    cell_w = lay.width // MAIL_KEY_COLS
    for i, abbr in enumerate(companies):
        cx = (i % MAIL_KEY_COLS) * cell_w + _px(14)
        cy = top + (i // MAIL_KEY_COLS) * CELL_H
        _mark(draw, (cx + _px(12), cy + _px(15)), abbr, _px(12))
        _text(img, (cx + _px(32), cy), abbr, LEGEND_SIZE, INK)
    below = img.crop((0, lay.map_height, img.width, img.height))
    rows = _scanlines(_packed(below.quantize(palette=palette(), dither=Image.Dither.NONE)), _row_bytes(img.width))
    comp = comp.copy()  # the map's rows compressed, then these: zlib.compress(all rows), the same bytes
    out = b"".join([
        b"\x89PNG\r\n\x1a\n",
        _chunk(b"IHDR", struct.pack(">IIBBBBB", img.width, img.height, PALETTE_BITS, 3, 0, 0, 0)),
        _chunk(b"PLTE", bytes(v for c in palette_colours() for v in c)),
        _chunk(b"IDAT", head + comp.compress(rows) + comp.flush()),
        _chunk(b"IEND", b""),
    ])
    _MAILS.pop(slot, None)
    _MAILS[slot] = (board, key, out)
    while len(_MAILS) > BASE_CACHE:
        del _MAILS[next(iter(_MAILS))]
    return out


PNG_LEVEL = 8
"""The zlib level of the map's PNG (``_png``): 8, about 10% smaller than 6
(28.3 against 31.1 KB late in play) for twice its CPU; 9 gains 1% more for
twice again (benchmarks/bench_map.py)."""

BAND_ROWS = 128
"""The most rows of the map area compressed as one piece of the PNG's zlib
stream (``_deflated``): a new train changes one or two such bands and the
legend's company cells; the others are taken as they were compressed before.
Bands this tall made the PNG about 0.2% larger than one stream (at 1000x850, before issue 26: 406 maps of 6
random games: 41.0 kB on average against 40.9 kB; ``benchmarks/bench_map.py``)."""

BAND_CACHE = 1024
"""How many compressed bands (``_deflated``, about 5 KB each) the process keeps:
every band of the last positions of some hundred games."""

TAIL_CACHE = 256
"""How many readers' last rows (their legend lines, compressed: about 2 KB
each) the process keeps."""

_PREFIXES: dict[int, tuple[Image.Image, bytes, int, bytes]] = {}
_BANDS: OrderedDict[bytes, bytes] = OrderedDict()
_TAILS: OrderedDict[tuple, tuple[bytes, int, int]] = OrderedDict()
_ZLIB_HEAD = b"\x78\x9c"  # deflate, 32 KB window, default level; (0x789c % 31 == 0)
_FINAL = b"\x03\x00"  # an empty last block (fixed Huffman codes): the end of the deflate data


def _png(game: Any, player: str | None) -> bytes:
    """``render_map`` at full size: the PNG of ``map_image(game, player)`` as a
    palette PNG (``PALETTE_BITS``-bit indices into ``palette``, no dithering,
    scanline filter 0, ``PNG_LEVEL``).  Its zlib stream is a row of pieces, each compressed
    alone and ending on a byte (``_deflated``): the rows above
    ``Layout.shares_top`` (the same for every reader of the position) in bands
    (``_bands``), mapped to the palette and joined once per position, then the
    rows of the reader's legend lines, then an empty last block and the
    Adler-32 of all the rows.  A band whose rows were compressed before (an
    earlier position, another game) is not compressed again; a reader's last
    rows are kept by their legend lines (``_TAILS``).  Decodes to the
    very pixels of ``map_image(game, player).quantize(...)``."""
    view = game.public_view() if player is None else game.view(player)
    lay = layout(game.board)
    base = _base(game, view, lay)
    top = lay.shares_top
    cached = _PREFIXES.get(id(base))
    if cached is None or cached[0] is not base:
        head = base.crop((0, 0, lay.width, top)).quantize(palette=palette(), dither=Image.Dither.NONE)
        lines = _scanlines(_packed(head), _row_bytes(lay.width))
        step = _row_bytes(lay.width) + 1
        out = b"".join(_deflated(lines[a * step:b * step]) for a, b in _bands(lay))
        blank = hashlib.sha256(base.crop((0, top, lay.width, lay.height)).tobytes()).digest()
        cached = (base, out, zlib.adler32(lines), blank)
        _PREFIXES[id(base)] = cached
        while len(_PREFIXES) > BASE_CACHE:
            del _PREFIXES[next(iter(_PREFIXES))]
    _, out, adler, blank = cached
    # the reader's last rows: their legend lines on the base's (blank) last rows
    key = (blank, lay.width, lay.height, top, lay.map_height, tuple(legend_lines(view, player)))
    found = _TAILS.get(key)
    if found is None:
        tail = base.crop((0, top, lay.width, lay.height))
        _reader_lines(tail, lay, view, player, top=top)
        rows = _scanlines(_packed(tail.quantize(palette=palette(), dither=Image.Dither.NONE)),
                          _row_bytes(lay.width))
        found = _TAILS[key] = (_deflated(rows), zlib.adler32(rows), len(rows))
        while len(_TAILS) > TAIL_CACHE:
            _TAILS.popitem(last=False)
    else:
        _TAILS.move_to_end(key)
    piece, tail_adler, tail_size = found
    check = _adler32_combine(adler, tail_adler, tail_size)
    idat = b"".join([_ZLIB_HEAD, out, piece, _FINAL, struct.pack(">I", check)])
    return b"".join([
        b"\x89PNG\r\n\x1a\n",
        _chunk(b"IHDR", struct.pack(">IIBBBBB", lay.width, lay.height, PALETTE_BITS, 3, 0, 0, 0)),
        _chunk(b"PLTE", bytes(v for c in palette_colours() for v in c)),
        _chunk(b"IDAT", idat),
        _chunk(b"IEND", b""),
    ])


def _adler32_combine(first: int, second: int, size: int) -> int:
    """The Adler-32 of two pieces of data joined, from the Adler-32 ``first``
    of the first, ``second`` of the second and the second's ``size`` in bytes
    (zlib's ``adler32_combine``, which Python's ``zlib`` does not offer)."""
    base = 65521
    rem = size % base
    sum1 = first & 0xFFFF
    sum2 = rem * sum1 % base
    sum1 = (sum1 + (second & 0xFFFF) + base - 1) % base
    sum2 = (sum2 + (first >> 16) + (second >> 16) + base - rem) % base
    return sum1 | sum2 << 16


def _bands(lay: Layout) -> list[tuple[int, int]]:
    """The bands ``(first row, end row)`` of the rows above ``Layout.shares_top``:
    the map area in bands of ``BAND_ROWS``, then the legend's key (the same in
    every position), then its company cells (their values and trains left)."""
    edges = [*range(0, lay.map_height, BAND_ROWS), lay.map_height, lay.map_height + CELLS_TOP - 8,
             lay.shares_top]
    return [(a, b) for a, b in zip(edges, edges[1:]) if b > a]


def _deflated(data: bytes) -> bytes:
    """``data`` as raw deflate blocks (``PNG_LEVEL``) compressed alone (no
    reference to anything before them) and ending on a byte boundary (a sync
    flush; no last block): pieces that join into one deflate stream.  Kept by
    content (its SHA-256 digest, the fastest collision-resistant hash of
    ``hashlib`` here; ``BAND_CACHE``)."""
    key = hashlib.sha256(data).digest()
    out = _BANDS.get(key)
    if out is not None:
        _BANDS.move_to_end(key)
        return out
    comp = zlib.compressobj(PNG_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    out = comp.compress(data) + comp.flush(zlib.Z_SYNC_FLUSH)
    _BANDS[key] = out
    while len(_BANDS) > BAND_CACHE:
        _BANDS.popitem(last=False)
    return out


def _row_bytes(width: int) -> int:
    """Bytes of a row of ``width`` pixels at ``PALETTE_BITS`` bits a pixel (the
    last byte padded, as PNG packs them)."""
    return (width * PALETTE_BITS + 7) // 8


def _packed(img: Image.Image) -> bytes:
    """The rows of the "P" image ``img`` packed ``PALETTE_BITS`` bits a pixel,
    the leftmost pixel in the high bits, each row padded to a byte (PNG's
    packing; Pillow's raw "P;4" mode)."""
    return img.tobytes("raw", "P" if PALETTE_BITS == 8 else f"P;{PALETTE_BITS}")


def _scanlines(rows: bytes, width: int) -> bytes:
    """PNG scanlines of packed ``rows`` (``width`` bytes each), each with filter 0."""
    return b"".join(b"\x00" + rows[i:i + width] for i in range(0, len(rows), width))


def _chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data, CRC-32 of type and data."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


# ====================================================================== text
def buildable(game: Any, company: str) -> list[tuple[str, list[str]]]:
    """The sections ``company`` could build on next, sorted, each with the track
    types of the free spaces it may use there (sorted, distinct): from
    ``game.placements`` (empty when its box is empty)."""
    by: dict[str, list[str]] = {}
    for sid, track in game.placements(company):
        by.setdefault(sid, []).append(track)
    return [(sid, sorted(set(ts))) for sid, ts in sorted(by.items())]


def board_text(game: Any, width: int = 64) -> list[str]:
    """The board in words, for the plain-text part of a mail (public: no one's
    hand): per company its network (the cities it reaches from its home
    station) and the sections it could build on next with their free space types;
    then a legend of the city ids.  Lines of at most about ``width`` characters."""
    from .templates import card_text  # track types in the reader's language
    from .words import wording  # worded in templates/words/board.txt (translated)

    word = wording("board")

    board: Board = game.board
    net = game.network
    lines: list[str] = []
    for abbr, company in COMPANIES.items():
        route = board.companies.get(abbr)
        if route is None:
            continue
        left = game.box.get(abbr, 0)
        lines.append(word("company", company=abbr, full_name=company.name, home=route.home,
                          count=left, value=game.value(abbr)))
        lines.extend(_wrap_items(f"  {word('network')} ", sorted(net.network_cities(abbr)), width, " "))
        nxt = buildable(game, abbr)
        if nxt:
            lines.extend(_wrap_items(f"  {word('next')} ",
                                     [f"{sid} ({'/'.join(card_text(t) for t in ts)})" for sid, ts in nxt], width))
        else:
            lines.append("  " + word("next_nothing" if left else "next_no_trains"))
    lines.append("")
    lines.extend(_wrap_items(f"{word('cities')} ",
                             [f"{cid} {name}" for cid, name in city_legend(board)], width))
    return lines


def _wrap_items(head: str, items: list[str], width: int, sep: str = ", ") -> list[str]:
    """``head`` and ``items`` joined by ``sep``, broken into lines of about ``width``
    characters between items only (never inside an item); the lines after the
    first indented by four spaces."""
    lines: list[str] = []
    line = head
    fresh = True
    for item in items:
        piece = item if fresh else sep + item
        if not fresh and len(line) + len(piece) > width:
            lines.append(line + sep.rstrip())
            line, piece = "    ", item
        line += piece
        fresh = False
    lines.append(line)
    return lines


def city_legend(board: Board) -> list[tuple[str, str]]:
    """``(id, name)`` of every city of ``board``, sorted by id."""
    return [(c.id, c.name) for c in sorted(board.cities.values(), key=lambda c: c.id)]


__all__ = [
    "COMPANY_COLOURS", "MIN_DELTA_E", "mail_map", "SHAPES", "TRACK_COLOURS", "WIDTH", "HEIGHT", "PHONE_WIDTH",
    "PHONE_MIN_CSS_PX", "Layout", "layout",
    "map_image", "render_map", "legend_lines", "board_text", "buildable", "city_legend",
]
