"""The order words of one language read as English, and actions written in a language.

The grammar of :mod:`moderator.orders.parser` is English.  A player writing in
Spanish, German, Czech or Chinese has the words of their language read as the
English words they stand for (:data:`moderator.orders.languages.WORDS`) before the
grammar sees them: ``construir KCC DEN-KCY negra; tomar pila`` is read as ``build
KCC DEN-KCY black; take stack``, ``建造KCC丹佛-堪萨斯城黑色`` as ``build KCC Denver -
Kansas City black``.  So every forgiving rule of the English grammar (word order,
fillers, sections as names, shares as ``2x KCC`` ...) holds in every language, and
English words keep working in every language.

Words are matched without accents and case (``construír`` = ``CONSTRUIR``; German
``ß`` as ``ss``), longest phrase first (``volver a robar`` before ``robar``).
Chinese is written without spaces: its words are found anywhere in the text, so
``建造UP`` splits into ``建造`` and ``UP``.  Words of other languages match only as
whole words.

:func:`format_action` writes an action in a language's canonical words
(:data:`moderator.orders.languages.CANONICAL`), which read back to the same action.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from ..i18n import DEFAULT, current, fold, normalize  # fold: kept importable here
from ..rules.actions import DRAWN, Action, Build, Invest, Pass, Start, Take
from ..rules.components import JOKER
from .languages import (
    CANONICAL,
    CHINESE_DIGITS,
    CHINESE_MEASURE_WORDS,
    CITIES,
    CITY_CASE_ENDINGS,
    WORDS,
)
from .vocabulary import (
    BUILD_VERBS,
    CITY_ALIASES,
    COMMANDS,
    DISCARD_VERBS,
    INVEST_VERBS,
    PASS_VERBS,
    REDRAW_VERBS,
    START_VERBS,
    SWAP_VERBS,
    TAKE_VERBS,
    VERBS,
    CityIndex,
    norm,
)

_ENGLISH_NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six",
                    7: "seven", 8: "eight", 9: "nine", 10: "ten"}
_ENGLISH_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth"}

QUIET = ""
"""What a word without meaning (``quiet``) is read as: nothing."""


def language_of(language: str | None) -> str:
    """The language code an entry point works in: ``language`` if given (any tag
    :func:`moderator.i18n.normalize` reads; an unknown one means English), else the
    language in force (:func:`moderator.i18n.current`)."""
    if language is None:
        return current()
    return normalize(language) or DEFAULT


def _is_cjk(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F") and ch.isalpha()


@dataclass(frozen=True)
class Lexicon:
    """The words of one language: ``english`` maps each folded word or phrase to the
    English text it is read as (``""`` for words without meaning), ``pattern``
    matches any of them (None for English)."""

    language: str
    english: dict[str, str]
    pattern: re.Pattern | None

    def translate(self, text: str, cities: CityIndex | None = None,
                  origins: dict[str, str] | None = None) -> str:
        """``text`` (one cleaned line, accents already folded by the parser) with
        every word of this language replaced by its English reading, padded with
        spaces.  A word that is part of a city's name there is kept (Spanish
        ``el``/``paso`` in ``El Paso``, ``la`` in ``LA-SFO``; see
        :func:`_city_word`).  Chinese numbers and ordinals with or without a
        measure word (``两张``, ``十股``, ``2个``, ``第２张``) are read as English ones
        (:func:`_chinese_numbers`).  ``origins``, when given, gets each English
        word written to the player's text it was read from (``{"two": "zwei"}``;
        the first one wins), so that a refusal quotes the player's word.  Never
        raises."""
        if self.pattern is None:
            return text
        text = text.replace("ß", "ss").replace("ẞ", "SS")
        if self.language == "zh":
            text = _chinese_numbers(text, origins)

        def replace(m: re.Match) -> str:
            found = m.group(0)
            key = " ".join(found.casefold().split())
            english = self.english[key]
            if _city_word(found, m, cities):
                return found
            if origins is not None:
                for word in english.split():
                    origins.setdefault(word, found)
            return f" {english} " if english else " "

        text = self.pattern.sub(replace, text)
        endings = CITY_CASE_ENDINGS.get(self.language)
        if endings and cities is not None:
            text = _declined_cities(text, cities, endings, self.english)
        return text


_ZH_NUMERAL = "[" + "".join(CHINESE_DIGITS) + "十]+"
_ZH_NUMBER_RE = re.compile(
    rf"(第\s*)?({_ZH_NUMERAL}|\d{{1,3}})\s*(?:([{CHINESE_MEASURE_WORDS}])|(?=[A-Za-z0-9\s]|$))"
)


def _chinese_number(text: str) -> int | None:
    """The number ``text`` writes (``"两"`` 2, ``"十二"`` 12, ``"二十五"`` 25,
    ``"3"`` 3), or None when it is no number of 1-99 (``"十十"``, ``"零"``)."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        if "十" in ones or len(tens) > 1 or len(ones) > 1:
            return None
        n = (CHINESE_DIGITS[tens] if tens else 1) * 10 + (CHINESE_DIGITS[ones] if ones else 0)
    elif len(text) == 1:
        n = CHINESE_DIGITS[text]
    else:
        return None
    return n if n >= 1 else None


def _chinese_numbers(text: str, origins: dict[str, str] | None = None) -> str:
    """``text`` with Chinese counts and ordinals as English words: a number with a
    measure word (``两张`` / ``三股`` / ``2个`` → ``two`` / ``three`` / ``two``) or
    before a company or the end (``两EPRG``); an ordinal ``第…`` (``第２张`` →
    ``second``, ``第5张`` → ``place 5``, which the grammar refuses as no such place).
    A number in a word (``三藩市``) is left alone; one that is no number of 1-99
    is left as written, so the grammar refuses it (never read as 1)."""
    def replace(m: re.Match) -> str:
        ordinal, digits, measure = m.group(1), m.group(2), m.group(3)
        if not digits.isdigit() and not (ordinal or measure):
            # a Chinese numeral alone: only before a company, number or the end
            if m.end() < len(m.string) and not re.match(r"\s*[A-Za-z0-9]", m.string[m.end():]):
                return m.group(0)
        elif digits.isdigit() and not ordinal:
            return f" {digits} " if measure else m.group(0)
        n = _chinese_number(digits)
        if n is None:
            return f" {m.group(0)} "
        if ordinal:
            english = _ENGLISH_ORDINALS.get(n, f"place {n}")
        else:
            english = _ENGLISH_NUMBERS.get(n, str(n))
        if origins is not None:
            for word in english.split():
                origins.setdefault(word, m.group(0).strip())
        return f" {english} "

    return _ZH_NUMBER_RE.sub(replace, text)


_LATIN_WORD_RE = re.compile(r"(?<![\w'])[^\W\d_]{4,}(?![\w'])")


def _declined_cities(text: str, cities: CityIndex, endings: tuple[str, ...],
                     words: dict[str, str]) -> str:
    """``text`` with city names in another grammatical case read as the board's
    names (Czech ``Denveru`` → ``Denver``, ``New Yorku`` → ``New York``, ``San
    Franciska`` → ``San Francisco``); see :data:`CITY_CASE_ENDINGS`."""
    names = cities.full

    def replace(m: re.Match) -> str:
        word = m.group(0)
        low = word.lower()
        if low in words or low in cities.names or low in cities.prefix or low in CITY_ALIASES:
            return word
        before = m.string[:m.start()].split()
        prev = norm(before[-1]) if before else ""
        for ending in endings:
            if not low.endswith(ending) or len(low) - len(ending) < 3:
                continue
            stem = norm(low[:-len(ending)])
            for key in ((prev + stem) if prev else "", stem):
                if not key:
                    continue
                found = {n for n in names if n.startswith(key) and len(n) - len(key) <= 2}
                if len(found) == 1:
                    return names[found.pop()].split()[-1]
        return word

    return _LATIN_WORD_RE.sub(replace, text)


def _city_word(found: str, m: re.Match, cities: CityIndex | None) -> bool:
    """Whether the word ``found`` (matched by ``m`` in a line) is part of a city's
    name there, so not to be read as a word of the language: with the word before
    or after it, it makes (the start of) a city's name on the board of ``cities``
    (Spanish ``el`` and ``paso`` in ``El Paso``); or it is a city's id or short
    name (``LA``, ``POR``) written in capitals, next to ``-`` or ``/``, or next to
    another city (``por SEA``)."""
    if " " in found or _is_cjk(found[0]):
        return False
    low = found.lower()
    if low not in CITY_ALIASES and (cities is None or (low not in cities.names
                                                       and low not in cities.words)):
        return False  # no city's id, short name or name word: the usual case, quickly
    text = m.string
    before, after = text[:m.start()].rstrip(), text[m.end():]
    nxt = re.split(r"[-/,;.]", after.split()[0])[0] if after.split() else ""
    prv = re.split(r"[-/,;.]", before.split()[-1])[-1] if before.split() else ""
    if low in CITY_ALIASES or (cities is not None and low in cities.names):
        if after.lstrip()[:1] in ("-", "/") or before[-1:] in ("-", "/"):
            return True
        if found.isupper() and len(found) > 1:
            return True
        if cities is not None and any(w and cities.find(w, short=False)[0] for w in (nxt, prv)):
            return True
    if cities is None:
        return False
    for key in (norm(f"{low} {nxt}") if nxt else "", norm(f"{prv} {low}") if prv else ""):
        if key and (key in cities.names or key in cities.prefix):
            return True
    return False


def _entries(language: str) -> dict[str, str]:
    """Every folded word/phrase of ``language`` -> its English reading."""
    table = WORDS[language]
    out: dict[str, str] = {}

    def add(word: str, english: str) -> None:
        key = fold(word)
        if key in out and out[key] != english:
            raise ValueError(f"{language}: {word!r} is read as both {out[key]!r} and {english!r}")
        out[key] = english

    for group in ("verbs", "commands", "cards", "words"):
        for english, words in table[group].items():  # type: ignore[union-attr]
            for w in words:
                add(w, english)
    for w, n in table["numbers"].items():  # type: ignore[union-attr]
        add(w, _ENGLISH_NUMBERS[n])
    for w, n in table["ordinals"].items():  # type: ignore[union-attr]
        add(w, _ENGLISH_ORDINALS[n])
    for w in table["quiet"]:  # type: ignore[union-attr]
        add(w, QUIET)
    sign_offs = {fold(w) for w in table["sign_offs"]}  # type: ignore[union-attr]
    for w in table["greetings"]:  # type: ignore[union-attr]
        add(w, "cheers" if fold(w) in sign_offs else "hi")
    for w in table["sign_offs"]:  # type: ignore[union-attr]
        add(w, "cheers")
    for name, english in CITIES[language].items():
        add(name, english)
    return out


def _pattern(entries: dict[str, str]) -> re.Pattern:
    """One regular expression matching any of ``entries``, longest first; words of
    letters match whole (not inside another word), Chinese words anywhere."""
    whole, anywhere = [], []
    for key in sorted(entries, key=lambda k: (-len(k), k)):
        body = r"\s+".join(re.escape(part) for part in key.split(" "))
        if _is_cjk(key[0]) and _is_cjk(key[-1]):
            anywhere.append(body)
        else:
            whole.append(body)
    alts = []
    if whole:  # the boundaries once, around all words of letters: fast to fail
        alts.append(r"(?<![\w'])(?:" + "|".join(whole) + r")(?![\w'])")
    alts.extend(anywhere)
    return re.compile("|".join(alts), re.IGNORECASE)


@functools.lru_cache(maxsize=None)
def lexicon(language: str) -> Lexicon:
    """The :class:`Lexicon` of ``language`` (a key of :data:`moderator.i18n.LANGUAGES`);
    English has none of its own (its words are the grammar's).  ValueError when
    the table gives one word two readings."""
    if language not in WORDS:
        return Lexicon(language, {}, None)
    entries = _entries(language)
    return Lexicon(language, entries, _pattern(entries))


# ============================================================== writing

def canonical(word: str, language: str | None = None) -> str:
    """The word ``language`` writes for the English order word, command or card
    ``word`` (``canonical("build", "es")`` → ``"construir"``); ``word`` itself in
    English or where the table has none."""
    lang = language_of(language)
    return CANONICAL.get(lang, {}).get(word, word)


def _card(card: str | None, space: str | None, lang: str) -> str:
    if card is None:
        return ""
    if card == JOKER and space:
        return f"{canonical(JOKER, lang)} {canonical('as', lang)} {canonical(space, lang)}"
    return canonical(card, lang)


def _take(take: Take, lang: str) -> str:
    verb = canonical("take", lang)
    if take.source == "display":
        if take.company:
            return f"{verb} {take.company}"
        return f"{verb} {canonical('display', lang)} {take.place}"
    if take.source == "up":
        return f"{verb} UP"
    if take.source == "none":
        return canonical("take none", lang) if lang != DEFAULT else "take none"
    return f"{verb} {canonical('stack', lang)}"


def format_action(action: Action, language: str | None = None) -> str:
    """``action`` as order text in ``language`` (default: the language in force):
    the same parts as ``str(action)`` (which is the English text, returned as is
    for English), with that language's canonical words
    (:data:`moderator.orders.languages.CANONICAL`): ``Build("KCC", "DEN-KCY",
    "black", take=Take("stack"))`` → ``"construir KCC DEN-KCY negra; tomar pila"``
    in Spanish.  ``parse_turn([format_action(a, L)], board, language=L) == a``."""
    lang = language_of(language)
    if lang == DEFAULT or lang not in CANONICAL:
        return str(action)
    redraw = getattr(action, "redraw", None)
    lead = f"{canonical('redraw', lang)} {canonical(redraw, lang)}; " if redraw else ""
    if isinstance(action, Start):
        return f"{canonical('start', lang)} {action.share}"
    if isinstance(action, Build):
        text = f"{canonical('build', lang)} {action.company} {action.section}"
        card = _card(action.card, action.space, lang)
        text += f" {card}" if card else ""
        if action.take is not None:
            text += f"; {_take(action.take, lang)}"
        if action.swap is not None:
            share = canonical("drawn", lang) if action.swap == DRAWN else action.swap
            text += f"; {canonical('swap', lang)} {share}"
        return lead + text
    if isinstance(action, Invest):
        kinds = sorted(set(action.shares))
        if len(kinds) == 1 and len(action.shares) > 1:
            what = f"{len(action.shares)} {kinds[0]}"
        else:
            what = " ".join(action.shares)
        text = f"{canonical('invest', lang)} {what}"
        if action.discard is not None:
            text += f"; {canonical('discard', lang)} {canonical(action.discard, lang)}"
        return lead + text
    if isinstance(action, Pass):
        text = canonical("pass", lang)
        if action.discard:
            text += f"; {canonical('discard', lang)} {canonical(action.discard, lang)}"
        return lead + text
    raise TypeError(f"not an action: {action!r}")


def suggestions(language: str) -> dict[str, str]:
    """The words a "did you mean" for an unknown order word is chosen from, folded,
    to what it suggests: every verb and command of ``language`` (and of English)
    to that language's canonical word for it (``"contruir"`` is nearest
    ``"construir"``, suggested as ``construir``; ``"tomer"`` as ``tomar``)."""
    english_verb = {}
    for name, words in (("build", BUILD_VERBS), ("take", TAKE_VERBS), ("swap", SWAP_VERBS),
                        ("invest", INVEST_VERBS), ("discard", DISCARD_VERBS),
                        ("pass", PASS_VERBS), ("start", START_VERBS), ("redraw", REDRAW_VERBS)):
        for w in words:
            english_verb[w] = name
    out = {w: canonical(english_verb[w], language) for w in VERBS}
    out.update({c: canonical(c, language) for c in COMMANDS})
    table = WORDS.get(language)
    if table:
        for group in ("verbs", "commands"):
            for english, words in table[group].items():  # type: ignore[union-attr]
                if english in ("on", "off"):
                    continue
                for w in words:
                    out[fold(w)] = canonical(english, language)
    return out


