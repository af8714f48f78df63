"""The board map's texts drawn from kept masks (``board_map._text``): the very
pixels ``ImageDraw.text`` draws, on any background, clipped at the picture's
edges, and the whole map the same as one drawn with ``ImageDraw.text`` alone."""
from __future__ import annotations

import random

import pytest
from PIL import Image, ImageDraw

from moderator.render import board_map as bm
from moderator.rules.engine import Game

from game_helpers import played_until_end

PLAYERS = ["Ann", "Zoë Ångström-Łukasiewicz Longname", "Cy"]


def noise(size: tuple[int, int], seed: int) -> Image.Image:
    """An RGB picture of random pixels: every blend of a mask shows in it."""
    rng = random.Random(seed)
    return Image.frombytes("RGB", size, bytes(rng.randrange(256) for _ in range(size[0] * size[1] * 3)))


def direct(img: Image.Image, xy, text: str, size: int, fill, halo) -> None:
    """What ``_text`` drew before its masks were kept: ``ImageDraw.text`` (in
    the map's font mode, ``bm.TEXT_MODE``)."""
    draw = ImageDraw.Draw(img)
    draw.fontmode = bm.TEXT_MODE
    if halo is None:
        draw.text(xy, text, font=bm._font(size), fill=fill)
    else:
        draw.text(xy, text, font=bm._font(size), fill=fill, stroke_width=3, stroke_fill=halo)


CASES = [
    ("BOS", bm.LABEL_SIZE, bm.INK, bm.BACKGROUND),
    ("KC", bm.LABEL_SIZE, bm.INK, bm.INK),  # halo in the fill's colour: the stroke only
    ("black-white", bm.SMALL_SIZE, bm.MUTED, None),
    ("MRR $17M", bm.LEGEND_SIZE, bm.INK, None),
    ("Zoë · ÅŁ 3 left… gjpqy", bm.SMALL_SIZE, bm.MUTED, None),
    ("", bm.LEGEND_SIZE, bm.INK, None),
]


@pytest.mark.parametrize("text,size,fill,halo", CASES)
@pytest.mark.parametrize("xy", [(40, 30), (0, 0), (-9, -7), (105, 40), (112, 3), (60, 50)])
def test_a_text_from_its_kept_masks_is_the_text_imagedraw_draws(text, size, fill, halo, xy):
    """Pasted from its masks, a text is pixel for pixel what ``ImageDraw.text``
    draws, at a whole-pixel point inside the picture or across its edges
    (clipped alike), over random pixels; drawn twice (the masks kept), the same."""
    expected = noise((120, 60), len(text) + xy[0])
    got = expected.copy()
    direct(expected, xy, text, size, fill, halo)
    bm._text(got, xy, text, size, fill, halo)
    assert got.tobytes() == expected.tobytes()
    again = noise((120, 60), len(text) + xy[0])
    bm._text(again, xy, text, size, fill, halo)
    assert again.tobytes() == expected.tobytes()
    if text:
        assert expected.tobytes() != noise((120, 60), len(text) + xy[0]).tobytes()  # something was drawn


MIXED = ["李雷 Jiří", "Zoë 李雷 · 3", "李雷, 你已投资的股票：1 MRR", "Řehoř 𝔄nn 🚂"]
"""Texts in more than one face (no face covers ř and 李 both), and characters
no face has (transliterated, or left out)."""


@pytest.mark.parametrize("text", MIXED)
@pytest.mark.parametrize("halo", [None, bm.BACKGROUND])
@pytest.mark.parametrize("xy", [(10, 12), (-5, 3)])
def test_a_text_in_several_faces_from_its_masks_is_the_text_drawn_run_by_run(monkeypatch, text, halo, xy):
    """A text in runs of several faces (``_parts``) is, pasted from its masks,
    pixel for pixel what ``_text`` draws run by run with ``ImageDraw.text``
    (each run on the first face's baseline)."""
    got = noise((320, 60), 3)
    expected = got.copy()
    bm._text(got, xy, text, bm.SMALL_SIZE, bm.INK, halo)
    monkeypatch.setattr(bm, "_text_masks", lambda *a: None)
    bm._text(expected, xy, text, bm.SMALL_SIZE, bm.INK, halo)
    assert got.tobytes() == expected.tobytes()
    assert got.tobytes() != noise((320, 60), 3).tobytes()


def test_a_text_at_a_fraction_of_a_pixel_is_drawn_directly():
    """A point between pixels places the glyphs differently: no mask is used."""
    expected, got = noise((120, 60), 1), noise((120, 60), 1)
    direct(expected, (20.5, 10.25), "DEN", bm.LABEL_SIZE, bm.INK, bm.BACKGROUND)
    bm._text(got, (20.5, 10.25), "DEN", bm.LABEL_SIZE, bm.INK, bm.BACKGROUND)
    assert got.tobytes() == expected.tobytes()


def test_the_masks_are_kept_once_per_text():
    bm._text_masks.cache_clear()
    img = noise((120, 60), 2)
    for _ in range(3):
        bm._text(img, (5, 5), "SF", bm.LABEL_SIZE, bm.INK, bm.BACKGROUND)
    info = bm._text_masks.cache_info()
    assert (info.misses, info.hits) == (1, 2)


def forget() -> None:
    """Nothing kept: every text of the next map is drawn."""
    bm._BASES.clear()
    bm._PREFIXES.clear()
    bm._BANDS.clear()
    bm._TAILS.clear()


def played(actions: int, seed: int) -> Game:
    return played_until_end(PLAYERS, seed, actions)


@pytest.mark.parametrize("actions", [3, 40, 10_000])
def test_the_map_from_kept_masks_is_the_map_drawn_with_imagedraw(monkeypatch, actions):
    """Every reader's map (and the public one), its PNG and its picture, is the
    same whether its texts come from kept masks or from ``ImageDraw.text``."""
    g = played(actions, seed=7)
    readers = [None, *PLAYERS]
    forget()
    kept = {r: (bm.render_map(g, r), bm.map_image(g, r).tobytes()) for r in readers}
    forget()
    monkeypatch.setattr(bm, "_text_masks", lambda *a: None)
    monkeypatch.setattr(bm, "_line_masks", lambda *a: None)
    drawn = {r: (bm.render_map(g, r), bm.map_image(g, r).tobytes()) for r in readers}
    forget()
    assert kept == drawn
    assert len({png for png, _ in kept.values()}) == len(readers)  # each reader's own legend lines
