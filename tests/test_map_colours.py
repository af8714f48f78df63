"""Every company on the map told apart by readers with a colour-vision deficiency
(issue 26): its colour stays at least ``MIN_DELTA_E`` from every other company's
when protanopia, deuteranopia and tritanopia are simulated, and its trains and
home station have a shape of their own, so that nobody needs colour at all.

The simulation is colorspacious' (Machado, Oliveira and Fernandes 2009, at
severity 100: a full dichromacy); the colour difference is colorspacious'
``deltaE``, the Euclidean distance in CAM02-UCS (Luo et al. 2006).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from colorspacious import cspace_convert, deltaE
from PIL import Image, ImageDraw

from moderator.render import board_map as bm
from moderator.rules.components import COMPANIES

DEFICIENCIES = ["protanomaly", "deuteranomaly", "tritanomaly"]


def seen(rgb: tuple[int, int, int], deficiency: str | None) -> np.ndarray:
    """``rgb`` (0-255) as a reader with ``deficiency`` (None: normal vision) sees
    it, as sRGB in 0..1."""
    x = np.array(rgb, dtype=float) / 255
    if deficiency is None:
        return x
    cvd = {"name": "sRGB1+CVD", "cvd_type": deficiency, "severity": 100}
    return np.clip(cspace_convert(x, cvd, "sRGB1"), 0, 1)


def closest_pair(colours: dict[str, tuple[int, int, int]], deficiency: str | None
                 ) -> tuple[float, str, str]:
    """The smallest CAM02-UCS ΔE between two of ``colours`` as seen with
    ``deficiency``, and the two companies."""
    return min((float(deltaE(seen(colours[a], deficiency), seen(colours[b], deficiency),
                             input_space="sRGB1", uniform_space="CAM02-UCS")), a, b)
               for a, b in itertools.combinations(sorted(colours), 2))


@pytest.mark.parametrize("deficiency", [None, *DEFICIENCIES])
def test_every_two_company_colours_stay_apart(deficiency):
    assert set(bm.COMPANY_COLOURS) == set(COMPANIES)
    d, a, b = closest_pair(bm.COMPANY_COLOURS, deficiency)
    assert d >= bm.MIN_DELTA_E == 15.0, (deficiency, a, b, round(d, 1))


def test_the_check_fails_the_palette_it_replaced():
    """The palette before issue 26: simulated protanopia makes KCC's brown and
    BNL's red nearly the same (ΔE 0.4), deuteranopia MRR's blue and SFRB's
    purple close (5.1); the check says so."""
    old = {"WW": (140, 140, 140), "MRR": (30, 95, 215), "KCC": (135, 80, 35), "ESL": (250, 140, 20),
           "UMR": (255, 255, 255), "SFRB": (140, 60, 185), "DM": (20, 20, 20), "MS": (250, 215, 25),
           "BNL": (220, 30, 35), "EPRG": (25, 150, 60)}
    d, a, b = closest_pair(old, "protanomaly")
    assert (a, b) == ("BNL", "KCC") and d < 1.0
    d, a, b = closest_pair(old, "deuteranomaly")
    assert (a, b) == ("MRR", "SFRB") and d < bm.MIN_DELTA_E


def shape_mask(company: str, r: float = bm.TRAIN_R) -> set[tuple[int, int]]:
    """The pixels a train of ``company`` covers, drawn in one colour on a blank
    picture four times its drawn size (the shape alone, no colour)."""
    img = Image.new("L", (120, 120), 0)
    draw = ImageDraw.Draw(img)
    pts = bm._shape_points(bm.SHAPES[company], (60, 60), r * 4)
    if pts is None:
        draw.ellipse((60 - 4 * r, 60 - 4 * r, 60 + 4 * r, 60 + 4 * r), fill=255)
    else:
        draw.polygon(pts, fill=255)
    data = img.tobytes()
    return {(i % 120, i // 120) for i, v in enumerate(data) if v}


def test_every_company_has_a_shape_of_its_own():
    """Any two companies' trains differ in at least a fifth of the pixels
    either covers (1 - intersection/union >= 0.2: a circle and a diamond differ by 0.21), and every shape covers its
    centre (where its colour is read) and stays within the space's reach."""
    assert set(bm.SHAPES) == set(COMPANIES) and len(set(bm.SHAPES.values())) == len(COMPANIES)
    masks = {c: shape_mask(c) for c in COMPANIES}
    for c, m in masks.items():
        assert (60, 60) in m, c
        assert all(abs(x - 60) <= 4 * bm.TRAIN_R * 1.25 and abs(y - 60) <= 4 * bm.TRAIN_R * 1.25 for x, y in m)
    for a, b in itertools.combinations(COMPANIES, 2):
        union = len(masks[a] | masks[b])
        assert 1 - len(masks[a] & masks[b]) / union >= 0.2, (a, b)


def test_a_train_and_its_home_station_show_the_companys_shape_on_the_map():
    """On the drawn map a train's pixels in its company's colour have its shape:
    a DM train (a plus) leaves the corners of its box in the background, a BNL
    train (a bar) fills its row but not its column."""
    from game_helpers import default_board, place, started

    g = started(["Ann", "Bob", "Cy", "Dee"], board=default_board())
    place(g, "DM", "ABQ-DEN", "plain")
    lay = bm.layout(g.board)
    img = bm.map_image(g, "Ann")
    x, y = lay.space_xy(g.board, "ABQ-DEN", 1)
    dm = bm.COMPANY_COLOURS["DM"]
    assert img.getpixel((x, y)) == dm
    d = round(bm.TRAIN_R * 0.6)  # inside the arms' outline (2 px): 4 px at TRAIN_R 7
    assert img.getpixel((x + d, y - d)) != dm and img.getpixel((x - d, y + d)) != dm  # the plus's corners
    assert img.getpixel((x + d, y)) == dm and img.getpixel((x, y - d)) == dm  # its arms
    # DM's home station: a white square framed in ink with the plus inside
    hx, hy = (round(v) for v in lay.cities[g.board.companies["DM"].home])
    assert img.getpixel((hx, hy)) == dm
    assert img.getpixel((hx - bm.HOME_HALF + 3, hy - bm.HOME_HALF + 3)) == bm.LEGEND_BACKGROUND
