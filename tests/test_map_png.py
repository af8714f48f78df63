"""The map's PNG is written from pieces compressed once: the rows every reader
of a position shares (in bands kept by content, see test_map_bands.py), then
each reader's own legend lines.  Each PNG must decode to exactly the pixels of
that reader's map (``map_image`` mapped to the palette), also when positions
and games alternate (the kept pieces are per position and per band)."""
from __future__ import annotations

import io
import zlib

from PIL import Image

from moderator.render import board_map as bm
from moderator.rules.engine import Game

from game_helpers import played_until_end

NAMES = ["Ann", "Bob", "Cy", "Dee"]


def played(seed: int, actions: int) -> Game:
    return played_until_end(NAMES, seed, actions)


def pixels(png: bytes) -> bytes:
    img = Image.open(io.BytesIO(png))
    img.load()
    assert img.mode == "P" and img.size == (bm.WIDTH, bm.HEIGHT)
    return img.convert("RGB").tobytes()


def expected(game: Game, player: str | None) -> bytes:
    return bm.map_image(game, player).quantize(palette=bm.palette(), dither=Image.Dither.NONE) \
        .convert("RGB").tobytes()


def test_every_readers_png_has_the_pixels_of_their_map():
    early, late, other = played(1, 12), played(1, 300), played(2, 200)
    for game in (early, late, early, other, late):  # positions alternate: kept streams reused
        for player in (*NAMES, None):
            png = bm.render_map(game, player)
            assert pixels(png) == expected(game, player), player
            assert bm.render_map(game, player) == png  # the same bytes again


def test_the_png_is_well_formed_and_compressed():
    game = played(3, 150)
    png = bm.render_map(game, "Ann")
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png.endswith(b"IEND\xaeB`\x82")
    Image.open(io.BytesIO(png)).verify()  # chunk CRCs
    # one IDAT: the scanlines, each filter byte 0 then a 4-bit palette index per
    # pixel, two a byte (16 colours at most)
    assert png[24:26] == b"\x04\x03"  # IHDR: bit depth 4, colour type 3 (palette)
    assert len(bm.palette_colours()) <= 16
    start = png.index(b"IDAT") + 4
    length = int.from_bytes(png[start - 8:start - 4], "big")
    rows = zlib.decompress(png[start:start + length])
    step = bm.WIDTH // 2 + 1
    assert len(rows) == bm.HEIGHT * step
    assert all(rows[i * step] == 0 for i in range(bm.HEIGHT))
    indices = [v for i in range(bm.HEIGHT) for b in rows[i * step + 1:(i + 1) * step] for v in (b >> 4, b & 15)]
    assert max(indices) < len(bm.palette_colours())
    assert len(png) < len(rows) // 10  # compressed, not stored
    # a scaled map (a phone's width) is still drawn whole and scaled
    small = Image.open(io.BytesIO(bm.render_map(game, "Ann", width=390)))
    assert small.size == (390, round(bm.HEIGHT * 390 / bm.WIDTH))


def test_the_late_map_is_at_most_30_kb_in_every_language():
    """The status mail must stay within 50 KB (issue 26): the map late in play
    (85 trains or so on the board), every reader's, names in several scripts,
    is at most 30,000 bytes in each of the five languages."""
    from moderator import i18n

    names = ["José", "李雷", "Jiří", "Zoë"]
    late = played_until_end(names, 3, 10_000)
    trains = sum(1 for row in late.placed.values() for occ in row if occ is not None)
    assert trains >= 70
    for language in i18n.LANGUAGES:
        with i18n.speaking(language):
            for reader in (*names, None):
                size = len(bm.render_map(late, reader))
                assert size <= 30_000, (language, reader, size)
