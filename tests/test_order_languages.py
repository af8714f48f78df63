"""Orders in Spanish, German, Czech and Chinese (issue 15).

moderator/orders/languages.py holds the words; moderator/orders/lexicon.py reads
them as English before the grammar of moderator/orders/parser.py.  The golden cases
of each language are in tests/orders_golden_LANG.yaml.
"""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moderator import i18n
from moderator.orders.languages import CANONICAL, CITIES, EXAMPLES, LANGUAGES, WORDS
from moderator.orders.lexicon import canonical, fold, format_action, lexicon
from moderator.orders.parser import NoOrderFound, OrderError, command, parse_turn
from moderator.orders.vocabulary import city_index, company_of
from moderator.rules.actions import DRAWN, Build, Invest, Pass, Start, Take
from moderator.rules.board import Board
from moderator.rules.components import COMPANIES, JOKER, TRACK_TYPES

HERE = Path(__file__).resolve().parent
MINI = HERE / "boards" / "mini.yaml"


@pytest.fixture(scope="module")
def board() -> Board:
    return Board.default()


def _golden(lang: str) -> list[dict]:
    cases = yaml.safe_load((HERE / f"orders_golden_{lang}.yaml").read_text(encoding="utf-8"))
    assert isinstance(cases, list) and cases
    return cases


GOLDEN = [(lang, case) for lang in LANGUAGES for case in _golden(lang)]


def _id(item) -> str:
    lang, case = item
    text = " / ".join(case["lines"])
    return f"{lang}: " + (text if len(text) <= 50 else text[:47] + "...")


# ---------------------------------------------------------------- golden cases

def test_golden_files_are_well_formed():
    for lang in LANGUAGES:
        cases = _golden(lang)
        assert len([c for c in cases if "action" in c]) >= 20, lang
        assert len([c for c in cases if "code" in c]) >= 6, lang
        for case in cases:
            assert set(case) in ({"lines", "action"}, {"lines", "code", "values"}), case
            assert all(isinstance(line, str) for line in case["lines"]), case


@pytest.mark.parametrize("item", GOLDEN, ids=_id)
def test_golden(item, board):
    lang, case = item
    if "action" in case:
        action = parse_turn(case["lines"], board, language=lang)
        assert str(action) == case["action"]
        # written back in the language, it reads as the same action
        assert parse_turn([format_action(action, lang)], board, language=lang) == action
    else:
        with pytest.raises(OrderError) as info:
            parse_turn(case["lines"], board, language=lang)
        assert info.value.code == case["code"]
        for key, value in case["values"].items():
            assert info.value.values[key] == value, key
        assert info.value.line in case["lines"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_english_golden_actions_read_the_same_in_every_language(lang, board):
    """English order words keep working whatever the player's language."""
    cases = yaml.safe_load((HERE / "orders_golden.yaml").read_text(encoding="utf-8"))
    actions = [c for c in cases if "action" in c]
    assert len(actions) > 100
    for case in actions:
        assert str(parse_turn(case["lines"], board, language=lang)) == case["action"], case["lines"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_english_golden_refusals_keep_their_code(lang, board):
    cases = yaml.safe_load((HERE / "orders_golden.yaml").read_text(encoding="utf-8"))
    refusals = [c for c in cases if "error" in c]
    for case in refusals:
        with pytest.raises(OrderError) as english:
            parse_turn(case["lines"], board, language="en")
        with pytest.raises(OrderError) as other:
            parse_turn(case["lines"], board, language=lang)
        assert other.value.code == english.value.code, case["lines"]


def test_words_of_a_language_only_in_that_language(board):
    assert parse_turn(["construir KCC DEN-KCY negra; tomar pila"], board, language="es") == \
        Build("KCC", "DEN-KCY", "black", None, Take("stack"))
    for lang in ("en", "de", "cs", "zh"):
        with pytest.raises(OrderError) as info:
            parse_turn(["construir KCC DEN-KCY negra; tomar pila"], board, language=lang)
        assert info.value.code == "unknown_order"


def test_language_defaults_to_the_language_in_force(board):
    line = ["bauen KCC DEN-KCY schwarz; nehmen Stapel"]
    with i18n.speaking("de"):
        assert str(parse_turn(line, board)) == "build KCC DEN-KCY black; take stack"
        assert command("Hilfe") == "help"
        assert format_action(Start("KCC")) == "starten KCC"
    with pytest.raises(OrderError):
        parse_turn(line, board)
    assert command("Hilfe") is None
    assert format_action(Start("KCC")) == "start KCC"


def test_language_tags(board):
    """Regional tags and names as i18n.normalize reads them; an unknown one is English."""
    line = ["construir KCC DEN-KCY negra"]
    assert str(parse_turn(line, board, language="es-MX")) == "build KCC DEN-KCY black"
    assert str(parse_turn(line, board, language="Español")) == "build KCC DEN-KCY black"
    with pytest.raises(OrderError):
        parse_turn(line, board, language="xx")


# ---------------------------------------------------------------- writing back

@pytest.mark.parametrize("lang", LANGUAGES)
def test_examples_for_the_guides(lang, board):
    """The example lines the translated guides use are what format_action writes,
    and read as the English line beside them."""
    assert set(EXAMPLES[lang]) == set(EXAMPLES["es"])
    for english, line in EXAMPLES[lang].items():
        action = parse_turn([english], board)
        assert parse_turn([line], board, language=lang) == action
        assert format_action(action, lang) == line


def test_format_action_exact(board):
    build = Build("EPRG", "ELP-PHX", JOKER, "white", Take("display", place=2), DRAWN, "black")
    assert format_action(build, "en") == str(build)
    assert format_action(build, "es") == \
        "renovar negra; construir EPRG ELP-PHX comodín como blanca; tomar boca arriba 2; cambiar robada"
    assert format_action(build, "de") == \
        "neuziehen schwarz; bauen EPRG ELP-PHX Joker als weiß; nehmen Auslage 2; tauschen gezogene"
    assert format_action(build, "cs") == \
        "vyměň kartu černá; postav EPRG ELP-PHX žolík jako bílá; vezmi nabídka 2; vyměň líznutou"
    assert format_action(build, "zh") == "重抽 黑色; 建造 EPRG ELP-PHX 百搭 当作 白色; 拿 场上 2; 交换 刚抽的"
    assert format_action(Build("MS", "JAX-MIA", "black-white", None, Take("none")), "zh") == \
        "建造 MS JAX-MIA 黑白; 不拿"
    assert format_action(Invest(("KCC", "KCC", "KCC"), "plain"), "es") == "invertir 3 KCC; descartar lisa"
    assert format_action(Invest(("DM", "MS")), "cs") == "investuj DM MS"
    assert format_action(Pass("joker"), "de") == "passen; abwerfen Joker"
    assert format_action(Pass(), "zh") == "过"


_SECTIONS = sorted(Board.default().sections)
_SHARES = sorted(COMPANIES) + ["UP"]
_cards = st.sampled_from(TRACK_TYPES + (JOKER,))


@st.composite
def _builds(draw):
    card = draw(st.none() | _cards)
    space = draw(st.none() | st.sampled_from(TRACK_TYPES)) if card == JOKER else None
    take = draw(st.none() | st.sampled_from([Take("stack"), Take("up"), Take("none")])
                | st.builds(lambda c: Take("display", c), st.sampled_from(sorted(COMPANIES)))
                | st.builds(lambda p: Take("display", place=p), st.integers(1, 4)))
    swap = draw(st.none() | st.sampled_from(_SHARES + [DRAWN]))
    redraw = draw(st.none() | st.sampled_from(TRACK_TYPES))
    company = draw(st.sampled_from(sorted(COMPANIES)))
    return Build(company, draw(st.sampled_from(_SECTIONS)), card, space, take, swap, redraw)


@st.composite
def _invests(draw):
    if draw(st.booleans()):
        shares = (draw(st.sampled_from(_SHARES)),) * draw(st.integers(1, 6))
    else:
        shares = tuple(sorted(draw(st.lists(st.sampled_from(_SHARES), min_size=2, max_size=2,
                                            unique=True))))
    return Invest(shares, draw(st.none() | _cards), draw(st.none() | st.sampled_from(TRACK_TYPES)))


_actions = st.one_of(
    _builds(),
    _invests(),
    st.builds(Pass, st.none() | _cards, st.none() | st.sampled_from(TRACK_TYPES)),
    st.builds(Start, st.sampled_from(_SHARES)),
)


@pytest.mark.parametrize("lang", ("en",) + LANGUAGES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(action=_actions)
def test_round_trip_in_every_language(lang, action, board):
    """parse(format(a, L), language=L) == a, and the English text reads the same in L."""
    assert parse_turn([format_action(action, lang)], board, language=lang) == action
    assert parse_turn([str(action)], board, language=lang) == action


# ---------------------------------------------------------------- commands

@pytest.mark.parametrize("lang", LANGUAGES)
def test_commands_in_every_language(lang):
    for name in ("help", "status", "history", "rules", "legal", "hint"):
        word = CANONICAL[lang][name]
        assert command(word, lang) == name, word
        assert command(word.upper() + "!", lang) == name, word
        for other in WORDS[lang]["commands"][name]:
            assert command(other, lang) == name, other
        assert command(name, lang) == name  # English too
    zone = CANONICAL[lang]["timezone"]
    assert command(f"{zone} Europe/Madrid", lang) == "timezone Europe/Madrid"
    assert command(f"{CANONICAL[lang]['vacation']} 5", lang) == "vacation 5"


@pytest.mark.parametrize("line, lang, expected", [
    ("vacaciones 5 días", "es", "vacation 5 days"),
    ("vacaciones fin", "es", "vacation off"),
    ("Urlaub 3 Tage", "de", "vacation 3 days"),
    ("Urlaub ende", "de", "vacation off"),
    ("dovolená 2 dny", "cs", "vacation 2 days"),
    ("dovolená konec", "cs", "vacation off"),
    ("休假 3天", "zh", "vacation 3 days"),
    ("休假 48小时", "zh", "vacation 48 hours"),
    ("时区 Asia/Shanghai", "zh", "timezone Asia/Shanghai"),
    ("zona horaria Europe/Madrid", "es", "timezone Europe/Madrid"),
    ("časové pásmo Europe/Prague", "cs", "timezone Europe/Prague"),
    ("帮助", "zh", "help"),
    ("¿Ayuda?", "es", "help"),
    ("Stand bitte", "de", "status"),
    ("pravidla prosím", "cs", "rules"),
    ("construir KCC DEN-KCY negra", "es", None),
    ("ayuda", "en", None),
])
def test_command_lines(line, lang, expected):
    assert command(line, lang) == expected


def test_commands_are_skipped_in_a_mail(board):
    assert parse_turn(["estado", "construir KCC DEN-KCY negra"], board, language="es") == \
        Build("KCC", "DEN-KCY", "black")
    with pytest.raises(NoOrderFound):
        parse_turn(["帮助"], board, language="zh")


# ---------------------------------------------------------------- suggestions

@pytest.mark.parametrize("lang, typo, suggestion", [
    ("es", "contruir", "construir"), ("es", "invertr", "invertir"), ("es", "descatar", "descartar"),
    ("es", "biuld", "construir"), ("de", "investiern", "investieren"), ("de", "abwerfn", "abwerfen"),
    ("cs", "investju", "investuj"), ("cs", "odhot", "odhoď"), ("en", "biuld", "build"),
])
def test_suggested_verb_is_the_canonical_word(lang, typo, suggestion, board):
    with pytest.raises(OrderError) as info:
        parse_turn([f"{typo} KCC DEN-KCY white"], board, language=lang)
    assert info.value.code == "unknown_order"
    assert info.value.values["suggestion"] == suggestion


def test_english_verbs_still_read_not_suggested(board):
    assert parse_turn(["build KCC DEN-KCY white"], board, language="es") == Build("KCC", "DEN-KCY", "white")


@pytest.mark.parametrize("lang, expected", [
    ("es", ["construir KCC DEN-KCY blanca", "construir MRR DEN-KCY blanca"]),
    ("zh", ["建造 KCC DEN-KCY 白色", "建造 MRR DEN-KCY 白色"]),
])
def test_ambiguous_build_readings_in_the_language(lang, expected, board):
    """The readings of a build that can mean two things (a board whose city and
    company names overlap; the default board has none) are written in the
    player's words."""
    from moderator.orders.parser import _localized

    values = {"readings": ["build KCC DEN-KCY white", "build MRR DEN-KCY white"]}
    assert _localized("ambiguous_build", values, board, lang) == {"readings": expected}
    assert values["readings"][0] == "build KCC DEN-KCY white"  # not changed in place


def test_refusal_worded_in_the_language_of_the_player(board):
    """The values are in the player's words; the sentence is the template's (English
    until the catalogue translates it)."""
    with pytest.raises(OrderError) as info:
        parse_turn(["KCC DEN-KCY negra"], board, language="es")
    assert "'construir KCC DEN-KCY negra'" in info.value.reason


# ---------------------------------------------------------------- forgiving input
# Failures of multilingual command parsers (issue search): non-ASCII spaces
# (no-break, ideographic), full-width letters and digits from CJK input methods,
# decomposed accents (NFD), CJK glued to ASCII without spaces, one-character CJK
# words, Chinese numerals mixed with digits.

@pytest.mark.parametrize("lang, line, expected", [
    ("es", "construir\u00a0KCC\u00a0DEN-KCY negra", "build KCC DEN-KCY black"),
    ("zh", "建造\u3000KCC\u3000DEN-KCY\u3000黑色", "build KCC DEN-KCY black"),
    ("zh", "建造ＫＣＣ　ＤＥＮ－ＫＣＹ　黑色；拿场上２", "build KCC DEN-KCY black; take display 2"),
    ("es", unicodedata.normalize("NFD", "construír KCC DEN-KCY negra; cambiar robada"),
     "build KCC DEN-KCY black; swap drawn"),
    ("cs", unicodedata.normalize("NFD", "investuj 2 KCC; odhoď žolíka"), "invest 2 KCC; discard joker"),
    ("cs", "INVESTUJ 2 KCC; ODHOĎ ŽOLÍKA", "invest 2 KCC; discard joker"),
    ("cs", "investuj 2 KCC; odhod zolika", "invest 2 KCC; discard joker"),
    ("de", "investiere 2 KCC; wirf WEISS ab", "invest 2 KCC; discard white"),
    ("de", "investiere 2 KCC; wirf weiß ab", "invest 2 KCC; discard white"),
    ("zh", "建造UP12-13", None),
    ("zh", "建造KCC丹佛-堪萨斯城黑色", "build KCC DEN-KCY black"),
    ("zh", "过", "pass"),
    ("zh", "投资两股KCC", "invest 2 KCC"),
    ("zh", "投资三股KCC", "invest 3 KCC"),
    ("zh", "投资３股ＫＣＣ", "invest 3 KCC"),
    ("zh", "投资KCC，UP。弃百搭。", "invest KCC UP; discard joker"),
])
def test_forgiving_input(lang, line, expected, board):
    if expected is None:
        assert lexicon(lang).translate(line).split() == ["build", "UP12-13"]
        assert lexicon(lang).translate("建造UP 12-13").split() == ["build", "UP", "12-13"]
        return
    assert str(parse_turn([line], board, language=lang)) == expected


@pytest.mark.parametrize("lang, line", [
    ("es", "Perdón por el retraso, estuve de viaje."),
    ("es", "¿Qué pasa con el juego?"),
    ("de", "Entschuldigung für die Verspätung!"),
    ("de", "Ich muss leider los."),
    ("cs", "Promiňte, že píšu pozdě."),
    ("zh", "抱歉来晚了"),
    ("zh", "我明白了"),
    ("zh", "不过我今天很忙，明天再看"),
    ("zh", "我抽空再看一下"),
    ("zh", "我放弃思考"),
])
def test_chatter_is_not_an_order(lang, line, board):
    """Lines of plain words in the language are skipped, not read as orders."""
    with pytest.raises(NoOrderFound):
        parse_turn([line], board, language=lang)
    order = format_action(Pass(), lang)
    assert parse_turn([line, order], board, language=lang) == Pass()


# ---------------------------------------------------------------- cities

def test_every_city_has_a_chinese_name(board):
    names = {c.name for c in board.cities.values()}
    assert set(CITIES["zh"].values()) <= names
    assert names <= set(CITIES["zh"].values())


@pytest.mark.parametrize("lang, line, section", [
    ("es", "construir ESL Nueva York-Albany blanca", "ALB-NYC"),
    ("es", "construir ESL nueva york - boston blanca", "BOS-NYC"),
    ("es", "construir MS Nueva Orleans-Memphis blanca", "MEM-NOL"),
    ("es", "construir MS Nueva Orleans-Memphis blanca", "MEM-NOL"),
    ("es", "construir KCC San Luis-Kansas City blanca", "KCY-STL"),
    ("es", "construir EPRG El Paso-Phoenix blanca", "ELP-PHX"),
    ("es", "construir DM LA-Phoenix blanca", "LAX-PHX"),
    ("es", "construir DM Los Ángeles-Phoenix blanca", "LAX-PHX"),
    ("zh", "建造KCC 旧金山-洛杉矶 白色", "LAX-SFO"),
    ("zh", "建造KCC 盐湖城到丹佛 白色", "DEN-SLC"),
    ("zh", "建造KCC 纽约波士顿 白色", "BOS-NYC"),
])
def test_city_names_of_the_language(lang, line, section, board):
    assert parse_turn([line], board, language=lang).section == section


def test_city_names_of_a_language_on_another_board():
    """Exonyms name cities by the board's English names: the mini board calls
    Marquette MAR."""
    mini = Board.load(MINI)
    assert parse_turn(["建造MRR 马凯特-芝加哥 白色"], mini, language="zh") == Build("MRR", "CHI-MAR", "white")


def test_a_city_id_that_is_a_word_of_the_language(board):
    """German 'den' (DEN), Spanish 'por' (POR), 'la' (LA), 'paso' (El Paso)."""
    assert parse_turn(["baue KCC DEN KCY schwarz, nimm den Stapel"], board, language="de") == \
        Build("KCC", "DEN-KCY", "black", None, Take("stack"))
    assert parse_turn(["construir WW por-sea negra; cambiar MRR por UP; tomar la pila"], board,
                      language="es") == Build("WW", "POR-SEA", "black", None, Take("stack"), "MRR")
    assert parse_turn(["construir DM la sfo negra"], board, language="es").section == "LAX-SFO"
    assert parse_turn(["construir DM LA SFO negra"], board, language="es").section == "LAX-SFO"
    assert parse_turn(["paso"], board, language="es") == Pass()


# ---------------------------------------------------------------- the table

def test_canonical_words_cover_every_language_and_word():
    keys = set(CANONICAL["es"])
    for lang in LANGUAGES:
        assert set(CANONICAL[lang]) == keys, lang
        assert set(WORDS[lang]) == set(WORDS["es"]), lang
    assert {"build", "take", "swap", "invest", "discard", "pass", "start", "redraw", "help",
            "status", "history", "rules", "legal", "hint", "timezone", "vacation", "resign",
            "confirm", "digest", "language", "joker", "stack", "display"} <= keys


@pytest.mark.parametrize("lang", LANGUAGES)
def test_canonical_words_read_as_themselves(lang):
    """Each canonical word is a word of the table and reads as its English word."""
    lex = lexicon(lang)
    for word, written in CANONICAL[lang].items():
        assert lex.translate(fold(written)).split() == word.split(), written
        assert canonical(word, lang) == written


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_word_names_a_company(lang):
    for key in lexicon(lang).english:
        assert company_of(key) is None, key


@pytest.mark.parametrize("lang", LANGUAGES)
def test_words_that_are_city_words_are_guarded(lang, board):
    """A word of a language that is also an id, short name or word of a city name
    on the default board is one the reader keeps as the city where it is one
    (tests above); this lists them so a new one is noticed."""
    cities = city_index(board)
    city_words = set(cities.names) | set(cities.prefix) | {"la", "sf", "kc", "ny", "dc", "slc", "stl", "nola"}
    city_words |= {w.lower() for c in board.cities.values() for w in re.split(r"\W+", c.name) if w}
    found = sorted(k for k in lexicon(lang).english if k in city_words)
    assert found == {"es": ["el", "la", "los", "paso", "por"], "de": ["den"], "cs": [], "zh": []}[lang]


@pytest.mark.parametrize("line, section", [
    ("Stavím KCC z Denveru do Kansas City černou", "DEN-KCY"),
    ("postav ESL z New Yorku do Bostonu bílou", "BOS-NYC"),
    ("postav KCC z Chicaga do St. Louis černou", "CHI-STL"),
    ("postav WW ze Seattlu do Portlandu bílou", "POR-SEA"),
    ("postav EPRG z El Pasa do Phoenixu bílou", "ELP-PHX"),
    ("postav KCC z Omahy do Denveru černou", "DEN-OMA"),
])
def test_czech_city_names_in_other_cases(line, section, board):
    assert parse_turn([line], board, language="cs").section == section


def test_czech_city_name_not_recognised_is_suggested(board):
    """Franciska (c to k) is not the name with another ending: the refusal names
    the city."""
    with pytest.raises(OrderError) as info:
        parse_turn(["postav DM ze San Franciska do Los Angeles bílou"], board, language="cs")
    assert info.value.code == "unknown_city"
    assert info.value.values["suggestion"] == {"id": "SFO", "name": "San Francisco"}


_ALPHABET = st.sampled_from(list("abcdeilnorstuyzáéíñóúčďěňřšťůýžßäöü建造拿弃过白黑色股票堆场上第二两丹佛纽约 -,;.:/|0123456789KCDENY\u3000\uff0c\uff1b"))


@pytest.mark.parametrize("lang", LANGUAGES)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(_ALPHABET, max_size=60) | st.lists(st.sampled_from(
    [w for words in WORDS["es"]["verbs"].values() for w in words] + ["KCC", "DEN-KCY", "2", "los", "la", "paso",
     "建造", "不拿", "丹佛", "den", "por", "Denveru"]), max_size=8).map(" ".join))
def test_any_text_is_read_or_refused(lang, text, board):
    """Whatever a mail holds, the reader answers with an action or a named refusal."""
    try:
        parse_turn([text], board, language=lang)
    except OrderError as exc:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", exc.code)
    command(text, lang)


@pytest.mark.parametrize("lang, line, expected", [
    ("es", "me rindo", "resign"),
    ("es", "Abandono la partida, confirmado", "resign confirm"),
    ("es", "resumen desactivar", "digest off"),
    ("de", "Ich gebe auf", "resign"),
    ("de", "aufgeben, bestätigt", "resign confirm"),
    ("de", "Sammelmail einschalten", "digest on"),
    ("cs", "vzdávám se", "resign"),
    ("cs", "souhrn vypnout", "digest off"),
    ("zh", "认输", "resign"),
    ("zh", "认输，确认", "resign confirm"),
    ("zh", "摘要 开", "digest on"),
    ("es", "resign", "resign"),
    ("es", "construir KCC DEN-KCY negra", None),
    ("en", "me rindo", None),
])
def test_seat_commands_in_the_language_in_force(lang, line, expected):
    """gm.seat_command (resign, digest) reads the words of the language in force."""
    from moderator.moderation.gm import seat_command

    with i18n.speaking(lang):
        assert seat_command(line) == expected


def test_languages_are_those_pbem_speaks():
    assert set(LANGUAGES) == set(i18n.LANGUAGES) - {i18n.DEFAULT}
    assert set(WORDS) == set(CANONICAL) == set(CITIES) == set(EXAMPLES) == set(LANGUAGES)


# ------------------------------------------------- counts and places in every language

@pytest.mark.parametrize("lang, line, expected", [
    ("zh", "投资两张EPRG，弃一张无条纹。", "invest 2 EPRG; discard plain"),
    ("zh", "投资三张EPRG", "invest 3 EPRG"),
    ("zh", "投资２张EPRG", "invest 2 EPRG"),
    ("zh", "投资2张EPRG", "invest 2 EPRG"),
    ("zh", "投资两股EPRG", "invest 2 EPRG"),
    ("zh", "投资两份KCC和一股UP", "invest KCC KCC UP"),
    ("zh", "投资俩个KCC", "invest 2 KCC"),
    ("zh", "投资四只KCC", "invest 4 KCC"),
    ("zh", "投资两枚KCC", "invest 2 KCC"),
    ("zh", "投资一张EPRG", "invest EPRG"),
    ("zh", "投资两KCC", "invest 2 KCC"),
    ("cs", "investuj dvě akcie KCC", "invest 2 KCC"),
    ("cs", "investuj tři KCC", "invest 3 KCC"),
    ("de", "investiere zwei KCC", "invest 2 KCC"),
    ("de", "investiere drei KCC", "invest 3 KCC"),
    ("es", "invertir dos KCC", "invest 2 KCC"),
    ("es", "invertir tres KCC", "invest 3 KCC"),
    ("de", "investiere 2x KCC", "invest 2 KCC"),
    ("es", "invertir KCC ×2", "invest 2 KCC"),
    ("cs", "investuj 2×KCC", "invest 2 KCC"),
    ("cs", "investuj KCC×2", "invest 2 KCC"),
    ("es", "invertir ×2 KCC", "invest 2 KCC"),
    ("zh", "投资KCC×2", "invest 2 KCC"),
    ("de", "investiere KCC ×2 und UP", "invest KCC KCC UP"),
])
def test_counts_of_shares(lang, line, expected, board):
    assert str(parse_turn([line], board, language=lang)) == expected


@pytest.mark.parametrize("lang, line, word", [
    ("zh", "投资几张EPRG", "几"),      # "some": no number
    ("zh", "投资十十张EPRG", "十十"),  # no number either
])
def test_a_count_not_read_is_refused_never_one(lang, line, word, board):
    with pytest.raises(OrderError) as info:
        parse_turn([line], board, language=lang)
    assert info.value.code == "not_a_company"
    assert info.value.values["word"] == word


def test_ten_shares_is_a_count_not_one(board):
    # ten is read as ten (the engine refuses it if the player holds fewer), not as 1
    assert parse_turn(["投资十张EPRG"], board, language="zh") == Invest(("EPRG",) * 10)


@pytest.mark.parametrize("lang, take", [
    ("zh", "拿场上第２张"), ("zh", "拿场上第2张"), ("zh", "拿场上第二个"), ("zh", "拿场上２"),
    ("cs", "vezmi druhou z nabídky"), ("de", "nimm die zweite aus der Auslage"),
    ("de", "die zweite aus der Auslage nehmen"), ("es", "tomar la segunda boca arriba"),
])
def test_ordinal_places_of_the_display(lang, take, board):
    build = {"zh": "建造KCC DEN-KCY无条纹", "cs": "postav KCC DEN-KCY obyčejná",
             "de": "bauen KCC DEN-KCY einfach", "es": "construir KCC DEN-KCY lisa"}[lang]
    action = parse_turn([build, take], board, language=lang)
    assert action == Build("KCC", "DEN-KCY", "plain", take=Take("display", place=2))


def test_chinese_ordinal_past_the_display_is_refused(board):
    with pytest.raises(OrderError) as info:
        parse_turn(["建造KCC DEN-KCY无条纹", "拿场上第5张"], board, language="zh")
    assert info.value.code == "no_such_place"
    assert info.value.values["place"] == 5


@pytest.mark.parametrize("lang, line, code, word", [
    ("de", "investiere zwei KCC; zwei abwerfen", "discard_not_a_card", "zwei"),
    ("de", "zwei KCC", "unknown_order", "zwei"),
    ("es", "dos KCC", "unknown_order", "dos"),
    ("cs", "investuj 2 KCC; odhoď dvě", "discard_not_a_card", "dvě"),
    ("cs", "bílá", "card_alone", "bílá"),
    ("zh", "投资两张KCC；弃两张", "discard_not_a_card", "两张"),
])
def test_refusal_quotes_the_players_word(lang, line, code, word, board):
    with pytest.raises(OrderError) as info:
        parse_turn([line], board, language=lang)
    assert info.value.code == code
    assert info.value.values["word"] == word
    assert f"'{word}'" in info.value.reason
