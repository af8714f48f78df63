"""Every script of the five languages drawn on the map and in its legend, never a
missing-glyph box (issue 26): the faces are found by fontconfig
(``moderator.render.fonts``), and every character the map draws is checked
against the cmap of the very face it is drawn with, read by fontTools (not
fontconfig's charset, which chose the face).  A character no face covers is
drawn transliterated or left out; without any face found, Pillow's bundled font
draws ASCII, checked by its glyph masks against its missing-glyph box.
"""
from __future__ import annotations

import random
from functools import lru_cache

import pytest
from fontTools.ttLib import TTFont

from moderator import i18n
from moderator.render import board_map as bm
from moderator.render import fonts
from moderator.rules.engine import Game

from game_helpers import default_board

NAMES = ["José", "李雷", "Jiří", "Zoë", "Łukasz", "Ðorđe"]
LANGUAGES = list(i18n.LANGUAGES)


def forget() -> None:
    """Nothing of an earlier map kept: every text of the next map is drawn."""
    for kept in (bm._BASES, bm._PREFIXES, bm._BANDS, bm._TAILS, bm._LAYOUTS, bm._LINES):
        kept.clear()
    for fn in (bm._text_masks, bm._line_masks, bm._parts, bm._face_font, bm._text_width):
        fn.cache_clear()


@pytest.fixture
def drawn(monkeypatch):
    """The texts the map draws, ``(text, size)``, as ``_text`` is called."""
    seen: list[tuple[str, int]] = []
    real = bm._text

    def spy(img, xy, text, size, *a, **k):
        seen.append((text, size))
        return real(img, xy, text, size, *a, **k)

    forget()
    monkeypatch.setattr(bm, "_text", spy)
    yield seen
    forget()


def game(names=NAMES, actions: int = 60) -> Game:
    g = Game.new(default_board(), names, 5)
    rng = random.Random(5)
    for _ in range(actions):
        player = g.waiting_for()[0]
        nxt = g.copy()
        nxt.push(player, nxt.random_action(player, rng))
        if nxt.phase == "over":
            break
        g = nxt
    return g


@lru_cache(maxsize=None)
def cmap(path: str, index: int) -> frozenset[int]:
    """The code points the face's cmap maps to a glyph (fontTools)."""
    with TTFont(path, fontNumber=index, lazy=True) as font:
        return frozenset(font.getBestCmap())


def test_fontconfig_finds_a_latin_and_a_cjk_face():
    """Debian's fonts-dejavu-core and fonts-noto-cjk (installed by .ci/run): the
    chain starts with DejaVu Sans and has a face with Chinese characters."""
    chain = fonts.chain()
    assert chain[0].path is not None and chain[0].path.endswith("DejaVuSans.ttf")
    assert any(f.path and ord("李") in cmap(f.path, f.index) for f in chain)
    for face in chain:  # fontconfig's charset is what the face's cmap maps
        assert all(face.covers(ch) == (ord(ch) in cmap(face.path, face.index)) for ch in "Aé·…ř李雷：，")


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_character_drawn_has_a_glyph_in_its_face(drawn, language):
    """The maps of every reader (names in Latin with diacritics and in Chinese)
    and the public map, in ``language``: every character of every run is in the
    cmap of the face that draws it, and the readers' names are drawn whole."""
    g = game()
    with i18n.speaking(language):
        for reader in [*NAMES, None]:
            bm.map_image(g, reader)
    texts = {t for t, _ in drawn}
    assert texts
    for name in NAMES:  # each reader named in their own first line, as written
        assert any(t.startswith(name) for t in texts), name
    checked = 0
    for text, size in set(drawn):
        parts = bm._parts(text, size)
        assert "".join(run for _, run, _ in parts) == text  # nothing transliterated or left out
        for font, run, _ in parts:
            have = cmap(font.path, font.index)
            missing = sorted({ch for ch in run if not ch.isspace() and ord(ch) not in have})
            assert missing == [], (text, font.path, missing)
            checked += len(run)
    assert checked > 500


@pytest.mark.parametrize("language", ["zh", "cs", "de"])
def test_the_legend_words_are_the_catalogues(drawn, language):
    """The legend's words are the language's own, from its catalogue."""
    from moderator.render.templates import card_text
    from moderator.render.words import word

    with i18n.speaking(language):
        bm.map_image(game(), "Jiří")
        want = {card_text("black-white"), word("board", "key_home"), word("board", "key_train")}
        english = {"black-white", "home", "train"}
    texts = {t for t, _ in drawn}
    assert want <= texts and not want & english
    assert not english & texts


def test_a_character_no_face_has_is_transliterated_or_left_out(drawn):
    """"𝔄nn" (a mathematical letter no face here has) is drawn "Ann"; an
    emoji and a hieroglyph are left out; a name of nothing drawable is not
    named: its line reads "Your shares invested"."""
    assert fonts.drawable("𝔄nn 🚂") == "Ann "
    assert fonts.drawable("𓀀𓀁") == ""
    names = ["𝔄nn", "𓀀𓀁", "Bob"]
    g = game(names, actions=12)
    bm.map_image(g, "𝔄nn")
    bm.map_image(g, "𓀀𓀁")
    texts = {t for t, _ in drawn}
    assert any(t.startswith("Ann, your shares invested: ") for t in texts)
    assert any(t.startswith("Your shares invested: ") for t in texts)
    for text, size in set(drawn):
        for font, run, _ in bm._parts(text, size):
            have = cmap(font.path, font.index)
            assert all(ch.isspace() or ord(ch) in have for ch in run), text


def test_without_fontconfig_the_bundled_font_draws_ascii_only(drawn, monkeypatch):
    """No face found (no fontconfig): Pillow's bundled font, which has no glyph
    for "é" or "李" (it draws its box); the names are drawn "Jose", "Jiri" and
    李雷 not at all, and no character drawn is the box."""
    monkeypatch.setattr(fonts, "chain", lambda: (fonts.BUNDLED,))
    forget()
    font = bm._font(bm.SMALL_SIZE)
    box = bytes(font.getmask("\uffff"))
    assert bytes(font.getmask("é")) == box and bytes(font.getmask("李")) == box  # what the test guards against
    g = game()
    with i18n.speaking("cs"):
        for reader in ["José", "李雷", "Jiří", None]:
            bm.map_image(g, reader)
    texts = {t for t, _ in drawn}
    assert any(t.startswith("Jose, ") for t in texts) and any(t.startswith("Jiri, ") for t in texts)
    for text, size in set(drawn):
        f = bm._font(size)
        shown = "".join(run for _, run, _ in bm._parts(text, size))
        missing = sorted({ch for ch in shown if not ch.isspace() and bytes(f.getmask(ch)) == box})
        assert missing == [], (text, missing)


def test_doctor_says_which_fonts_the_map_draws_with(monkeypatch):
    """``pbem doctor``'s line "map fonts": OK naming the faces here; a NOTE
    naming the Debian packages without a CJK face, or without any."""
    from moderator import doctor

    check = doctor.check_map_fonts()
    assert check.status == doctor.OK and "DejaVuSans.ttf" in check.text and "NotoSansCJK" in check.text
    assert check.line().endswith("[docs/operations.md: Languages]")
    latin = next(f for f in fonts.chain() if f.covers("ř"))
    monkeypatch.setattr(fonts, "chain", lambda: (latin,))
    check = doctor.check_map_fonts()
    assert check.status == doctor.NOTE and "Chinese characters (fonts-noto-cjk)" in check.text
    assert "fonts-dejavu-core" not in check.text
    monkeypatch.setattr(fonts, "chain", lambda: (fonts.BUNDLED,))
    check = doctor.check_map_fonts()
    assert check.status == doctor.NOTE
    assert check.text.endswith("install fontconfig fonts-dejavu-core fonts-noto-cjk")


def test_runs_split_a_text_by_the_first_face_that_has_each_character():
    """With made-up faces: a Latin one (ASCII and Latin Extended-A, so "ř") and a
    CJK one (ASCII and "李雷", not "ř"): a text one face covers whole is one run
    in it, even the second; a mixed one is cut per character, a space in the run
    it is in; what no face has is drawn bare of its accents or left out."""
    latin = fonts.Face("latin.ttf", 0, fonts.parse_charset("20-7e a0-17f"))
    cjk = fonts.Face("cjk.ttc", 2, fonts.parse_charset("20-7e 674e 96f7"))
    assert latin.ranges == ((0x20, 0x7E), (0xA0, 0x17F))
    assert fonts.parse_charset("a0 20-7e") == ((0x20, 0x7E), (0xA0, 0xA0))
    faces = (latin, cjk)
    assert fonts.runs("Jiří", faces) == [(0, "Jiří")]
    assert fonts.runs("李雷 Li", faces) == [(1, "李雷 Li")]
    assert fonts.runs("李雷 Jiří", faces) == [(1, "李雷 "), (0, "Jiří")]
    assert fonts.runs("Jiří 李", faces) == [(0, "Jiří "), (1, "李")]
    assert fonts.drawable("José", (cjk,)) == "Jose"  # é: e and a combining accent, e kept
    assert fonts.drawable("Zoë 🚂 x", faces) == "Zoë  x"
    assert fonts.drawable("Jiří", (cjk,)) == "Jiri"
    assert fonts.runs("🚂", faces) == []
