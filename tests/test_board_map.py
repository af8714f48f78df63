"""The picture of the board (``moderator.render.board_map``) and its text twin.

The PNGs of a game at its start and late in play are written to
``tests/artifacts/`` (gitignored), at full size and scaled down to a 390-px phone,
for a person to look at.
"""
from __future__ import annotations

import io
import random
import re
from pathlib import Path

import pytest
from PIL import Image

from moderator.render import board_map as bm
from moderator.rules.components import COMPANIES
from moderator.rules.engine import Game

from game_helpers import default_board, place, played_until_end, started

ARTIFACTS = Path(__file__).parent / "artifacts"
PLAYERS = ["Ann", "Bob", "Cy", "Dee"]


def played(actions: int, seed: int = 3) -> Game:
    """A 4-player game on the default board after up to ``actions`` random legal
    actions, stopping before the game would end."""
    return played_until_end(PLAYERS, seed, actions)


@pytest.fixture(scope="module")
def start_game() -> Game:
    return played(len(PLAYERS))  # every player made the initial investment


@pytest.fixture(scope="module")
def late_game() -> Game:
    g = played(10_000)
    assert g.phase == "play" and sum(g.box.values()) < 60
    return g


def decode(data: bytes) -> Image.Image:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    img = Image.open(io.BytesIO(data))
    img.load()
    return img.convert("RGB")


SPACE_COLOURS = {**{f"company {c}": rgb for c, rgb in bm.COMPANY_COLOURS.items()},
                 **{f"track {t}": rgb for t, rgb in bm.TRACK_COLOURS.items() if t != "black-white"}}
"""What a space of the map may show: a train in a company's colour, or a free
space in its track type's colour."""


def shows(img: Image.Image, xy: tuple[float, float]) -> set[str]:
    """Which of ``SPACE_COLOURS`` the pixel at ``xy`` is nearest to (the map is a
    palette PNG: its colours are a few steps off those drawn), e.g. ``{"company
    DM"}``; several names when their colours are the same (UMR's train and a free
    white space are both white: the shape tells them apart).  A train drawn in
    another company's colour is nearest to that one."""
    px = img.getpixel((round(xy[0]), round(xy[1])))

    def dist(name: str) -> int:
        return sum((a - b) ** 2 for a, b in zip(px, SPACE_COLOURS[name]))

    best = min(map(dist, SPACE_COLOURS))
    return {n for n in SPACE_COLOURS if dist(n) == best}


def test_shows_tells_every_company_and_track_colour_apart():
    """The check itself: each reference colour, and each one moved by up to 9
    steps (as the palette may move it), is nearest to itself and to no other."""
    for name, rgb in SPACE_COLOURS.items():
        for dv in (-9, 0, 9):
            moved = tuple(min(255, max(0, v + dv)) for v in rgb)
            seen = shows(Image.new("RGB", (1, 1), moved), (0, 0))
            assert name in seen, (name, moved)
            assert seen <= {n for n, c in SPACE_COLOURS.items() if c == rgb}, (name, seen)


def test_a_train_in_the_wrong_colour_is_seen(monkeypatch):
    """A map whose DM trains are drawn in BNL's red fails the colour check."""
    g = started(PLAYERS, board=default_board())
    place(g, "DM", "ABQ-DEN", "plain")
    lay = bm.layout(g.board)
    xy = lay.space_xy(g.board, "ABQ-DEN", 1)
    assert "company DM" in shows(decode(bm.render_map(g, "Ann")), xy)
    monkeypatch.setattr(bm, "_BASES", {})  # the kept base images were drawn in the right colours
    monkeypatch.setitem(bm.COMPANY_COLOURS, "DM", bm.COMPANY_COLOURS["BNL"])
    assert "company BNL" in shows(decode(bm.render_map(g, "Ann")), xy)
    bm._BASES.clear()
    monkeypatch.setitem(bm.COMPANY_COLOURS, "DM", (0, 200, 200))  # a colour of no company
    assert "company DM" not in shows(decode(bm.render_map(g, "Ann")), xy)


def _under_label(lay: bm.Layout, xy: tuple[float, float], r: float) -> bool:
    x, y = xy
    return any(x + r > b[0] and x - r < b[2] and y + r > b[1] and y - r < b[3]
               for b in lay.label_boxes.values())


# ---------------------------------------------------------------- the PNG
def test_png_decodes_to_the_chosen_size(start_game):
    img = decode(bm.render_map(start_game, "Ann"))
    assert img.size == (bm.WIDTH, bm.HEIGHT) == (640, 731)
    small = decode(bm.render_map(start_game, "Ann", width=390))
    assert small.size == (390, round(bm.HEIGHT * 390 / bm.WIDTH))


def test_artifacts_at_start_and_late_for_desktop_and_phone(start_game, late_game):
    ARTIFACTS.mkdir(exist_ok=True)
    for name, g in (("start", start_game), ("late", late_game)):
        for suffix, width in (("", None), ("-390", 390)):
            data = bm.render_map(g, "Ann", width=width)
            (ARTIFACTS / f"map-{name}{suffix}.png").write_bytes(data)
            assert decode(data).width == (width or bm.WIDTH)
    (ARTIFACTS / "map-late-public.png").write_bytes(bm.render_map(late_game))


def test_a_placed_train_shows_its_company_colour_and_a_free_space_its_track_colour():
    g = started(PLAYERS, board=default_board())
    board = g.board
    place(g, "DM", "ABQ-DEN", "plain")  # ABQ-DEN: [black, plain]: the plain space is index 1
    lay = bm.layout(board)
    img = decode(bm.render_map(g, "Ann"))
    assert "company DM" in shows(img, lay.space_xy(board, "ABQ-DEN", 1))
    assert "track black" in shows(img, lay.space_xy(board, "ABQ-DEN", 0))
    place(g, "BNL", "ABQ-DEN", "black")
    img = decode(bm.render_map(g, "Ann"))
    assert "company BNL" in shows(img, lay.space_xy(board, "ABQ-DEN", 0))
    # a starting space holds its company's train
    assert "company WW" in shows(img, lay.start_xy(board, "BIL-CHY", "WW"))


def test_every_space_not_under_a_label_shows_its_colour(late_game):
    """Free spaces in their track type's colour (black-white: black upper left,
    white lower right), trains in their company's colour, at every space of the
    board whose centre no city label covers."""
    g, board = late_game, late_game.board
    lay = bm.layout(board)
    img = decode(bm.render_map(g, "Ann"))
    checked = 0
    for sid, s in board.sections.items():
        for co in s.starts:
            xy = lay.start_xy(board, sid, co)
            if not _under_label(lay, xy, 2):
                assert f"company {co}" in shows(img, xy), (sid, co)
                checked += 1
        for i, (track, occ) in enumerate(zip(s.spaces, g.placed[sid])):
            x, y = lay.space_xy(board, sid, i)
            if _under_label(lay, (x, y), 4):
                continue
            checked += 1
            if occ is not None:
                assert f"company {occ}" in shows(img, (x, y)), (sid, i, occ)
            elif track == "black-white":
                assert "track black" in shows(img, (x - 3, y - 3)), (sid, i)
                assert "track white" in shows(img, (x + 3, y + 3)), (sid, i)
            else:
                assert f"track {track}" in shows(img, (x, y)), (sid, i, track)
    total = sum(s.capacity for s in board.sections.values())
    assert checked >= 0.95 * total  # labels keep off the spaces


def test_every_company_has_a_distinct_colour():
    assert set(bm.COMPANY_COLOURS) == set(COMPANIES)
    assert len(set(bm.COMPANY_COLOURS.values())) == len(COMPANIES)


def test_layout_keeps_cities_in_the_map_and_apart():
    board = default_board()
    lay = bm.layout(board)
    assert lay is bm.layout(board)  # computed once per board
    for x, y in lay.cities.values():
        assert 0 < x < lay.width and 0 < y < lay.map_height
    pts = list(lay.cities.values())
    closest = min(((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5
                  for i, a in enumerate(pts) for b in pts[i + 1:])
    assert closest >= 30
    for box in lay.label_boxes.values():
        assert 0 <= box[0] and box[2] <= lay.width and 0 <= box[1] and box[3] <= lay.map_height


def test_any_board_gets_a_layout():
    """The mini test board (13 cities, a different spread) draws too."""
    from game_helpers import mini_board

    g = started(board=mini_board())
    img = decode(bm.render_map(g, "Ann"))
    assert img.size == (bm.WIDTH, bm.HEIGHT)


# ---------------------------------------------------------------- what each reader sees
def test_the_readers_shares_appear_only_for_that_reader(late_game):
    g = late_game
    ann, bob, public = (decode(bm.render_map(g, p)) for p in ("Ann", "Bob", None))
    lay = bm.layout(g.board)
    top = (0, 0, lay.width, lay.shares_top)
    rest = (0, lay.shares_top, lay.width, lay.height)
    # the board and the companies are the same for everyone ...
    assert ann.crop(top).tobytes() == bob.crop(top).tobytes() == public.crop(top).tobytes()
    # ... the last lines are the reader's own
    assert ann.crop(rest).tobytes() != bob.crop(rest).tobytes()
    assert public.crop(rest).tobytes() not in (ann.crop(rest).tobytes(), bob.crop(rest).tobytes())
    lines = bm.legend_lines(g.view("Ann"), "Ann")
    hand = g.share_hands["Ann"]
    for share in set(hand):
        assert f"{hand.count(share)} {share}" in lines[1]
    assert lines[0].startswith("Ann, your shares invested: ") and lines[1].startswith("Your shares in hand: ")
    assert not any("Bob" in line for line in lines)
    assert not any("shares" in line for line in bm.legend_lines(g.public_view(), None))


def test_another_players_hand_never_changes_the_picture(late_game):
    g = late_game.copy()
    before = bm.render_map(g, "Ann")
    public = bm.render_map(g)
    g.share_hands["Bob"] = ["UP"] * 7
    g.track_hands["Bob"] = ["joker"] * 3
    assert bm.render_map(g, "Ann") == before
    assert bm.render_map(g) == public
    g.share_hands["Ann"] = g.share_hands["Ann"] + ["UP"]
    assert bm.render_map(g, "Ann") != before



def test_a_reader_map_from_the_kept_base_is_the_map_drawn_from_scratch(late_game):
    """One base per position is drawn and kept (``map_image``); each reader's map
    made from it is, pixel for pixel, the one drawn with nothing kept, and a new
    train or a changed company value draws a new base."""
    g = late_game.copy()
    bm._BASES.clear()
    ann = bm.map_image(g, "Ann")
    kept = bm._BASES[(id(g.board), "en")][2]
    bob = bm.map_image(g, "Bob")  # from the kept base
    assert bm._BASES[(id(g.board), "en")][2] is kept
    bm._BASES.clear()
    assert bm.map_image(g, "Bob").tobytes() == bob.tobytes()
    assert bm.map_image(g, "Ann").tobytes() == ann.tobytes()
    sid, row = next((sid, row) for sid, row in g.placed.items() if row and None in row)
    g.placed[sid] = [*row[:row.index(None)], "UP", *row[row.index(None) + 1:]]  # one more train
    after = bm.map_image(g, "Bob")
    assert bm._BASES[(id(g.board), "en")][2] is not kept
    assert after.tobytes() != bob.tobytes()
    bm._BASES.clear()
    assert bm.map_image(g, "Bob").tobytes() == after.tobytes()

def test_readers_in_several_languages_keep_a_base_each(late_game):
    """Readers of one position in Spanish and Czech alternate (a cycle's status
    mails): each language's base is drawn once and kept, its legend in that
    language, and each map is the one drawn from scratch in its language."""
    from moderator import i18n

    g = late_game
    bm._BASES.clear()
    maps = {}
    for lang, reader in (("es", "Ann"), ("cs", "Bob"), ("es", "Cy"), ("cs", "Dee")):
        with i18n.speaking(lang):
            maps[reader] = bm.render_map(g, reader)
    assert set(bm._BASES) == {(id(g.board), "es"), (id(g.board), "cs")}
    kept = {k: v[2] for k, v in bm._BASES.items()}
    with i18n.speaking("es"):
        assert bm.render_map(g, "Ann") == maps["Ann"]
    assert bm._BASES[(id(g.board), "es")][2] is kept[(id(g.board), "es")]
    bm._BASES.clear()
    for lang, reader in (("cs", "Dee"), ("es", "Cy")):
        with i18n.speaking(lang):
            assert bm.render_map(g, reader) == maps[reader]
    assert maps["Ann"] != maps["Cy"]  # the readers' own lines


# ---------------------------------------------------------------- the text
def _blocks(lines: list[str]) -> dict[str, str]:
    """Company abbreviation -> its block of lines joined into one line."""
    out: dict[str, list[str]] = {}
    current = None
    for line in lines:
        m = re.match(r"([A-Z]+) \(", line)
        if m and m.group(1) in COMPANIES:
            current = m.group(1)
            out[current] = [line]
        elif line.startswith("  ") and current:
            out[current].append(line.strip())
        else:
            current = None
    return {c: " ".join(v) for c, v in out.items()}


@pytest.mark.parametrize("which", ["start", "late"])
def test_text_lists_exactly_the_networks_and_buildable_sections(which, start_game, late_game):
    g = start_game if which == "start" else late_game
    lines = bm.board_text(g)
    blocks = _blocks(lines)
    assert list(blocks) == list(COMPANIES)
    for abbr, text in blocks.items():
        network = re.search(r"network: ([A-Z ]+?)(?= next:)", text).group(1).split()
        assert network == sorted(g.network.network_cities(abbr))
        want: dict[str, set[str]] = {}
        for sid, track in g.network.placements(abbr):
            want.setdefault(sid, set()).add(track)
        nxt = text.split(" next: ", 1)[1]
        got = {m.group(1): set(m.group(2).split("/"))
               for m in re.finditer(r"([A-Z]+-[A-Z]+) \(([a-z/-]+)\)", nxt)}
        assert got == want, abbr
        if not want:
            assert nxt in ("nothing", "no trains left")


def test_text_has_a_city_legend_and_short_lines(late_game):
    lines = bm.board_text(late_game)
    legend = " ".join(lines[lines.index("") + 1:])
    assert legend.startswith("Cities: ")
    for c in late_game.board.cities.values():
        assert f"{c.id} {c.name}" in legend
    assert max(map(len, lines)) <= 70


def test_text_is_public(late_game):
    g = late_game.copy()
    before = bm.board_text(g)
    g.share_hands["Bob"] = ["UP"] * 7
    assert bm.board_text(g) == before


# ---------------------------------------------------------------- the command line
def test_pbem_show_map_writes_the_public_view(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import pbem

    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    r = runner.invoke(pbem.main, ["new", "ridge", "--player", "Ann=ann@example.org",
                                  "--player", "Bob=bob@example.org", "--seed", "5"],
                      catch_exceptions=False)
    assert r.exit_code == 0, r.output
    r = runner.invoke(pbem.main, ["show", "ridge", "--map", "ridge.png"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "Map written to ridge.png." in r.output
    img = decode((tmp_path / "ridge.png").read_bytes())
    assert img.size == (bm.WIDTH, bm.HEIGHT)
    r = runner.invoke(pbem.main, ["show", "ridge", "--map", str(tmp_path / "no" / "such" / "x.png")])
    assert r.exit_code == 1 and "cannot write" in r.output


def test_show_help_does_not_import_pillow():
    from test_startup import imported

    proc, names = imported("show", "--help")
    assert proc.returncode == 0 and "--map" in proc.stdout
    assert not {n for n in names if n == "PIL" or n.startswith("PIL.") or n.startswith("moderator.render")}


@pytest.mark.parametrize("which", ["default", "mini"])
def test_each_starting_space_lies_at_its_companys_home_end(which):
    from game_helpers import mini_board

    board = default_board() if which == "default" else mini_board()
    lay = bm.layout(board)
    for sid, s in board.sections.items():
        for co in s.starts:
            home = board.companies[co].home
            other = s.other(home)
            x, y = lay.start_xy(board, sid, co)
            hx, hy = lay.cities[home]
            ox, oy = lay.cities[other]
            assert (x - hx) ** 2 + (y - hy) ** 2 < (x - ox) ** 2 + (y - oy) ** 2, (sid, co)


def test_the_legend_names_the_reader_in_their_script_and_language():
    """The reader's first line names them as they are written (José, 李雷, Jiří),
    in the language in force; the words come from the catalogues."""
    from moderator import i18n

    names = ["José", "李雷", "Jiří", "Zoë"]
    g = Game.new(default_board(), names, 5)
    rng = random.Random(5)
    for _ in range(30):
        player = g.waiting_for()[0]
        g.push(player, g.random_action(player, rng))
    assert bm.legend_lines(g.view("李雷"), "李雷")[0].startswith("李雷, your shares invested: ")
    with i18n.speaking("zh"):
        assert bm.legend_lines(g.view("李雷"), "李雷")[0].startswith("李雷，你已投资的股票：")
        assert bm.legend_lines(g.view("Jiří"), "Jiří")[1].startswith("你手中的股票：")
    with i18n.speaking("cs"):
        assert bm.legend_lines(g.view("Jiří"), "Jiří")[0].startswith("Jiří, vaše investované akcie: ")
        assert bm.legend_lines(g.public_view(), None) == [
            f"Veřejný pohled · tah {g.turn + 1} · dividendy {g.dividends_paid}/{g.final_dividend}"]


# ---------------------------------------------------------------- readable on a phone
@pytest.mark.parametrize("language", ["en", "es", "de", "cs", "zh"])
def test_every_text_is_at_least_11_css_px_high_on_a_390_px_phone(monkeypatch, late_game, language):
    """Shown 390 CSS px wide (a phone; the mail's picture is at most 100% wide),
    the picture is scaled by 390 / WIDTH: each text drawn at ``size`` px (its
    em, as CSS's font-size) is ``size * 390 / WIDTH`` CSS px high.  Every text
    of the map and legend, the city ids first, is at least 11; in a mail on a
    1280-px desktop (at most ``send.MAX_IMAGE_WIDTH`` 640 wide) at least 18."""
    from moderator.moderation.send import MAX_IMAGE_WIDTH
    from moderator import i18n

    sizes: list[tuple[str, int]] = []
    real = bm._text

    def spy(img, xy, text, size, *a, **k):
        sizes.append((text, size))
        return real(img, xy, text, size, *a, **k)

    monkeypatch.setattr(bm, "_text", spy)
    monkeypatch.setattr(bm, "_BASES", {})
    with i18n.speaking(language):
        img = decode(bm.render_map(late_game, "Ann"))
    assert img.width == bm.WIDTH == 640
    ids = set(late_game.board.cities)
    assert ids <= {t for t, _ in sizes}  # every city labelled
    label = {s for t, s in sizes if t in ids}
    assert label == {bm.LABEL_SIZE} and bm.LABEL_SIZE * 390 / img.width == 11.578125
    assert min(s for _, s in sizes) * 390 / img.width >= bm.PHONE_MIN_CSS_PX == 11
    assert min(s for _, s in sizes) * min(MAX_IMAGE_WIDTH, img.width) / img.width >= 18


def test_the_pngs_left_to_look_at_in_every_language():
    """The late-game map of a reader in each language, full size and at 390 px,
    in tests/artifacts/ (map-late-LANG.png, map-late-LANG-390.png)."""
    from moderator import i18n

    names = ["José", "李雷", "Jiří", "Zoë"]
    g = played_until_end(names, 3, 10_000)
    ARTIFACTS.mkdir(exist_ok=True)
    for language, reader in (("en", "Zoë"), ("es", "José"), ("de", "Zoë"), ("cs", "Jiří"), ("zh", "李雷")):
        with i18n.speaking(language):
            for suffix, width in (("", None), ("-390", 390)):
                data = bm.render_map(g, reader, width=width)
                (ARTIFACTS / f"map-late-{language}{suffix}.png").write_bytes(data)
                assert decode(data).width == (width or bm.WIDTH)


@pytest.mark.parametrize("language", ["en", "es", "de", "cs", "zh"])
def test_nothing_of_the_legend_is_cut_short(monkeypatch, language):
    """Late in play, with every reader's shares (up to ten kinds in hand), no
    text of the legend needs an ellipsis in any language: the company cells fit
    their half of the width, the reader's lines wrap after a comma."""
    from moderator import i18n

    names = ["José", "李雷", "Jiří", "Zoë"]
    g = played_until_end(names, 3, 10_000)
    drawn: list[str] = []
    real = bm._text

    def spy(img, xy, text, size, *a, **k):
        drawn.append(text)
        return real(img, xy, text, size, *a, **k)

    monkeypatch.setattr(bm, "_text", spy)
    monkeypatch.setattr(bm, "_BASES", {})
    with i18n.speaking(language):
        for reader in (*names, None):
            bm.map_image(g, reader)
    assert len(drawn) > 60 and not [t for t in drawn if "…" in t]
    hand = max((len(set(g.share_hands[n])) for n in names))
    assert hand >= 7  # long lines were there to wrap


# ---------------------------------------------------------------- the mail's picture
@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_mails_picture_is_the_map_and_its_key_then_every_companys_mark(late_game, language):
    """``mail_map`` (issue 26: at most 50 KB a status mail): a 4-bit palette PNG
    640 x 547 (the map 432 rows, the legend's key to row 490, then two rows of
    27 px of company marks and 3 px); its first 490 rows are the very pixels of
    ``render_map``'s; below them each company's mark in its colour, five a row
    (centres 128 px apart from x = 21, at y = 502 and 529), where the reader's
    map has its company cells and shares: no reader's own lines, the same PNG
    for every reader; at most 18 KB late in play."""
    from moderator import i18n

    with i18n.speaking(language):
        png = bm.mail_map(late_game)
        full = decode(bm.render_map(late_game, "Ann")).convert("RGB")
        again = bm.mail_map(late_game)
    assert again == png
    assert png[24:26] == b"\x04\x03"  # IHDR: bit depth 4, colour type 3 (palette)
    img = decode(png).convert("RGB")
    assert img.size == (640, 547)
    assert img.crop((0, 0, 640, 490)).tobytes() == full.crop((0, 0, 640, 490)).tobytes()
    companies = [c["abbr"] for c in late_game.public_view()["companies"]]
    assert len(companies) == 10
    centres = [img.getpixel((21 + 128 * (i % 5), 502 + 27 * (i // 5))) for i in range(10)]
    assert centres == [bm.COMPANY_COLOURS[c] for c in companies]
    assert full.crop((0, 490, 640, 547)).tobytes() != img.crop((0, 490, 640, 547)).tobytes()
    assert len(png) <= 18_000, len(png)
