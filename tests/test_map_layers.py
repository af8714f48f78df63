"""The map drawn from what every position of a board shares (issue 31: the
status mail's map, the largest single cost of a loaded cycle): the layers
drawn once per board (``board_map._layers``: the lines and starting spaces,
the cities' dots), the outline masks kept (``_polygon``) and the mail's map
without the company cells it does not show give the very pixels, and the very
PNG bytes, of every mark drawn in its order on a fresh picture, as before."""
from __future__ import annotations

import struct
import zlib

import pytest
from PIL import Image, ImageDraw

from moderator import i18n
from moderator.render import board_map as bm
from moderator.rules.engine import Game

from game_helpers import played_until_end

NAMES = ["Ann", "Bob", "Cy", "Dee"]
POSITIONS = [(1, 0), (2, 15), (3, 60), (4, 120), (5, 200), (6, 400)]


def played(seed: int, actions: int) -> Game:
    return played_until_end(NAMES[:2 + seed % 3], seed, actions)


def forget() -> None:
    for kept in (bm._BASES, bm._PREFIXES, bm._BANDS, bm._TAILS, bm._MAILS, bm._LAYERS, bm._AREAS):
        kept.clear()


def in_order(monkeypatch, fn):
    """``fn()`` with every mark drawn in its order (no layers) and Pillow's own
    ``ImageDraw.polygon``: the drawing as it was before the layers."""
    with monkeypatch.context() as m:
        m.setattr(bm, "_layers", lambda board, lay: None)
        m.setattr(bm, "_polygon", lambda draw, pts, fill, outline, width:
                  draw.polygon(pts, fill=fill, outline=outline, width=width))
        forget()
        return fn()


def test_the_default_board_has_layers():
    game = played(1, 0)
    lay = bm.layout(game.board)
    layers = bm._layers(game.board, lay)
    assert layers is not None
    under, starts, (dots, mask) = layers
    assert under.size == (lay.width, lay.height)
    assert dots.size == mask.size == (lay.width, lay.map_height) and mask.mode == "1"
    drawn_in_order = sum(len(v) for v in starts.values())
    assert drawn_in_order < sum(len(s.starts) for s in game.board.sections.values())


@pytest.mark.parametrize("seed,actions", POSITIONS)
def test_the_base_image_has_the_pixels_of_every_mark_drawn_in_order(monkeypatch, seed, actions):
    game = played(seed, actions)
    view = game.public_view()
    lay = bm.layout(game.board)
    for language in ("en", "zh"):
        with i18n.speaking(language):
            old = in_order(monkeypatch, lambda: bm._base_image(game, view, lay))
            forget()
            new = bm._base_image(game, view, lay)
            assert new.tobytes() == old.tobytes()
            # without the cells: the same pixels above them
            top = lay.map_height + bm.CELLS_TOP - bm._px(6)
            bare = bm._base_image(game, view, lay, cells=False)
            assert bare.crop((0, 0, lay.width, top)).tobytes() == old.crop((0, 0, lay.width, top)).tobytes()


def mail_map_as_before(game: Game) -> bytes:
    """``mail_map`` as it was drawn before the layers (the same steps): the
    whole base image, its rows above the company cells, the companies' marks,
    every row compressed by one ``zlib.compress``."""
    view = game.public_view()
    lay = bm.layout(game.board)
    base = bm._base_image(game, view, lay)
    companies = [c["abbr"] for c in view["companies"]]
    top = lay.map_height + bm.CELLS_TOP - bm._px(6)
    rows = -(-len(companies) // bm.MAIL_KEY_COLS)
    img = Image.new("RGB", (lay.width, top + rows * bm.CELL_H + bm._px(4)), bm.LEGEND_BACKGROUND)
    img.paste(base.crop((0, 0, lay.width, top)), (0, 0))
    draw = ImageDraw.Draw(img)
    cell_w = lay.width // bm.MAIL_KEY_COLS
    for i, abbr in enumerate(companies):
        cx = (i % bm.MAIL_KEY_COLS) * cell_w + bm._px(14)
        cy = top + (i // bm.MAIL_KEY_COLS) * bm.CELL_H
        bm._mark(draw, (cx + bm._px(12), cy + bm._px(15)), abbr, bm._px(12))
        bm._text(img, (cx + bm._px(32), cy), abbr, bm.LEGEND_SIZE, bm.INK)
    rows = bm._scanlines(bm._packed(img.quantize(palette=bm.palette(), dither=Image.Dither.NONE)),
                         bm._row_bytes(img.width))
    return b"".join([
        b"\x89PNG\r\n\x1a\n",
        bm._chunk(b"IHDR", struct.pack(">IIBBBBB", img.width, img.height, bm.PALETTE_BITS, 3, 0, 0, 0)),
        bm._chunk(b"PLTE", bytes(v for c in bm.palette_colours() for v in c)),
        bm._chunk(b"IDAT", zlib.compress(rows, bm.MAIL_PNG_LEVEL)),
        bm._chunk(b"IEND", b""),
    ])


@pytest.mark.parametrize("seed,actions", POSITIONS)
def test_the_mail_map_and_the_map_are_the_same_bytes_as_drawn_in_order(monkeypatch, seed, actions):
    game = played(seed, actions)
    languages = ("en", "es", "de", "cs", "zh")
    old = {}
    for language in languages:
        with i18n.speaking(language):
            old[language] = in_order(monkeypatch, lambda: (mail_map_as_before(game),
                                                           bm.render_map(game, game.players[0])))
    forget()
    for language in languages:  # one position in every language in turn: its map area kept
        with i18n.speaking(language):
            assert (bm.mail_map(game), bm.render_map(game, game.players[0])) == old[language]
    for language in languages:
        with i18n.speaking(language):
            assert bm.mail_map(game) == old[language][0]  # kept (``_MAILS``)


def test_kept_mail_maps_follow_the_position_and_the_language():
    a, b = played(3, 60), played(3, 61)
    forget()
    with i18n.speaking("en"):
        first = bm.mail_map(a)
    with i18n.speaking("de"):
        german = bm.mail_map(a)
    with i18n.speaking("en"):
        assert bm.mail_map(a) is first  # kept for its board and language
        later = bm.mail_map(b)
    assert german != first
    assert (later == first) == (a.placed == b.placed and
                                [(c["abbr"], c["home"]) for c in a.public_view()["companies"]] ==
                                [(c["abbr"], c["home"]) for c in b.public_view()["companies"]])


@pytest.mark.parametrize("mode", ["RGB", "L"])
def test_the_polygon_has_pillows_pixels_and_leaves_its_mask_clear(mode):
    size = (120, 90)
    shapes = [bm._shape_points(shape, (30.4 + 7 * k, 40.6 + 3 * k), 9.3 + k)
              for k, shape in enumerate(sorted(set(bm.SHAPES.values()) - {"circle"}))]
    ink, fill = ((30, 30, 30), (200, 40, 10)) if mode == "RGB" else (30, 200)
    for width in (1, 2, 3):
        ours, pillows = Image.new(mode, size), Image.new(mode, size)
        for pts in shapes:
            bm._polygon(ImageDraw.Draw(ours), pts, fill, ink, width)
            ImageDraw.Draw(pillows).polygon(pts, fill=fill, outline=ink, width=width)
        assert ours.tobytes() == pillows.tobytes()
        mask, _ = bm._polygon_mask(size)
        assert mask.getbbox() is None  # all 0 again
