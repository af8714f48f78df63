"""The map's PNG from bands compressed alone and kept (``board_map._deflated``):
one well-formed zlib stream, the same bytes whether its bands (and a reader's
last rows, ``_TAILS``) were kept or compressed anew, and a new train
compresses again only the band it is in and the legend's company cells."""
from __future__ import annotations

import io
import random
import zlib

from PIL import Image

from moderator.render import board_map as bm
from moderator.rules.engine import Game

from game_helpers import place, played_until_end

NAMES = ["Ann", "Bob", "Cy"]


def played(seed: int, actions: int) -> Game:
    return played_until_end(NAMES, seed, actions)


def forget() -> None:
    bm._BASES.clear()
    bm._PREFIXES.clear()
    bm._BANDS.clear()
    bm._TAILS.clear()


def idat(png: bytes) -> bytes:
    start = png.index(b"IDAT") + 4
    return png[start:start + int.from_bytes(png[start - 8:start - 4], "big")]


def test_the_bands_join_into_one_zlib_stream():
    game = played(5, 60)
    forget()
    png = bm.render_map(game, "Ann")
    stream = zlib.decompressobj()
    rows = stream.decompress(idat(png))  # checks the Adler-32 at the end
    assert stream.eof and stream.unused_data == b""
    step = bm.WIDTH // 2 + 1  # the filter byte, then two 4-bit pixels a byte
    assert len(rows) == bm.HEIGHT * step
    assert idat(png)[:2] == b"\x78\x9c" and (0x789C % 31) == 0
    img = Image.open(io.BytesIO(png))
    img.load()
    assert img.tobytes("raw", "P;4") == b"".join(rows[r * step + 1:(r + 1) * step] for r in range(bm.HEIGHT))


def test_kept_bands_give_the_bytes_of_bands_compressed_anew():
    games = [played(s, n) for s, n in ((1, 40), (2, 90), (1, 41), (3, 200))]
    first = {}
    for g in games:  # positions and games alternate: bands kept from one serve another
        for reader in (*NAMES, None):
            first[(id(g), reader)] = bm.render_map(g, reader)
    for g in games:
        for reader in (*NAMES, None):
            forget()
            assert bm.render_map(g, reader) == first[(id(g), reader)]


def test_a_new_train_compresses_its_band_and_the_legend_again():
    game = played(7, 60)
    forget()
    bm.render_map(game, "Ann")
    kept = set(bm._BANDS)
    tails = list(bm._TAILS)
    lay = bm.layout(game.board)
    sid, space = next((sid, t) for sid, row in game.placed.items()
                      for t, occ in zip(game.board.sections[sid].spaces, row) if occ is None)
    index = next(i for i, (t, occ) in enumerate(zip(game.board.sections[sid].spaces, game.placed[sid]))
                 if t == space and occ is None)
    place(game, "UP" if "UP" in game.box else next(iter(game.box)), sid, space)
    _, y = lay.space_xy(game.board, sid, index)
    # the rows a train's disc (and its antialiased edge) covers, and the bands they fall in
    reach = range(y - bm.TRAIN_R - 2, y + bm.TRAIN_R + 3)
    bands = {(a, b) for a, b in bm._bands(lay) if any(a <= r < b for r in reach) and b <= lay.map_height}
    png = bm.render_map(game, "Ann")
    new = set(bm._BANDS) - kept
    # the train's band(s) and the legend's (the company's value and trains left);
    # Ann's own legend lines are unchanged: her last rows are kept too
    assert len(new) == len(bands) + 1
    assert list(bm._TAILS) == tails  # drawn once: the same lines
    assert Image.open(io.BytesIO(png)).convert("RGB").tobytes() == \
        bm.map_image(game, "Ann").quantize(palette=bm.palette(), dither=Image.Dither.NONE).convert("RGB").tobytes()


def test_the_adler32_of_two_pieces_joined():
    rng = random.Random(9)
    for size1, size2 in [(0, 0), (1, 0), (0, 1), (65521, 65521), (65520, 3), (5, 131042),
                         *((rng.randrange(200_000), rng.randrange(200_000)) for _ in range(40))]:
        for fill in (None, 0xFF):
            one = bytes([fill]) * size1 if fill else rng.randbytes(size1)
            two = bytes([fill]) * size2 if fill else rng.randbytes(size2)
            assert bm._adler32_combine(zlib.adler32(one), zlib.adler32(two), size2) == zlib.adler32(one + two)


def test_a_readers_last_rows_are_kept_by_their_lines():
    game = played(4, 30)
    forget()
    first = {r: bm.render_map(game, r) for r in (*NAMES, None)}
    assert len(bm._TAILS) == len(NAMES) + 1  # each reader's own lines
    bm._BASES.clear()
    bm._PREFIXES.clear()
    again = {r: bm.render_map(game, r) for r in (*NAMES, None)}  # the tails kept
    assert again == first and len(bm._TAILS) == len(NAMES) + 1
