"""The order language: order lines of a mail to one action, and back.

Forgiving by design, never guessing: case-insensitive; companies by abbreviation or
full name (``KCC``, ``Kansas City Central``, ``ep&rg``); cities by id or name
(``KCY``, ``Kansas City``, ``kansas``); a section as two cities in either order
(``DEN-KCY``, ``Kansas City - Denver``, ``DEN/KCY``, ``Denver to Kansas City``,
``DEN KCY``); one order per line, or several on a line separated by ``;`` (or by
``,``/``and``/``then`` before a verb).  A mail carries one turn, so the lines of a
turn are combined::

    build KCC DEN-KCY white        place a KCC train, playing a white track card
    build EPRG elp-sat joker as white
    take stack | take UP | take KCC | take display 2 | take #2 | take none
    swap MRR                       return an MRR share from hand, take a UP share
    swap drawn                     return the share just drawn from the stack
    invest 2 KCC | invest KCC UP   then: discard plain
    pass; discard white            only when neither BUILD nor INVEST is possible
    start KCC                      the initial investment

Grammar (words in any case; ``a``, ``the``, ``card``, ``share``, ``with`` ... are
ignored where they cannot mean anything else; bullets, numbering, a full stop or
comma at the end, smart quotes, dashes and full-width forms are all read)::

    mail     := line { newline line }         one mail is one turn
    line     := part { (";" | "|") part }     also split before a verb after
                                              ",", "and", "then", "-"
    part     := build | take | swap | invest | discard | pass | start
    build    := ("build"|"place"|"lay"|"put") COMPANY SECTION [CARD]
                (the card may also stand before the section, the company after it)
    SECTION  := CITY ("-"|"/"|"to"|"and"|" ") CITY     either order
    CITY     := id | name | first word(s) of one name | LA, SF, KC, NY, DC ...
    CARD     := TYPE | "joker" ["as" TYPE] | TYPE "joker"
    TYPE     := plain | black-white (bw, b/w, "black and white") | black | white
    take     := ("take"|"draw"|"get"|"pick") ("stack" | "top card" | "UP"
                | COMPANY | ["display"|"#"] 1-4 | "none")
    swap     := ("swap"|"exchange"|"trade"|"return") (SHARE | ["just"] "drawn")
                ["for" "UP"] | "no swap"
    invest   := ("invest"|"inv") SHARES
    SHARES   := [N ["x"] | "x" N] SHARE [x N] { ["," | "and"] [N ["x"]] SHARE }   (× is x)
    discard  := ("discard"|"drop") CARD
    pass     := ("pass"|"skip") [CARD]
    start    := ("start"|"initial [investment]"|"choose") SHARE

A comment runs from a ``#`` that starts a word (not ``#2``) to the end of the
line and is ignored (``start KCC  # my best move``).
Skipped: mail commands (``command``: help, status, history, rules, secret new),
``game:``/``secret:`` lines, greetings and sign-offs ("Hi all,", "Thanks! Bob").
Nothing is guessed: when words can be read two ways (``'San'``: San Antonio or
San Francisco; ``as white`` without a joker) the order is refused with the
readings.

``str(action)`` is the canonical text; ``parse_turn([str(a)], board) == a`` too, but
game files are replayed with the strict reader ``moderator.rules.notation.parse_action``
only, so that making this parser friendlier can never stop an archived game loading.
A line that cannot be read raises ``OrderError(code, line, **values)``: ``code``
names what is wrong, ``values`` hold the words and suggestions the refusal needs,
and ``reason`` is its sentence, worded by ``templates/words/orders.txt`` (one
macro per code; what would be understood).  See ``templates/help.txt`` for the
player's guide.

This module is the grammar (words to actions), the refusals (named, with their
values) and the suggestions; the words themselves and the lookups of cities, companies and cards
are in :mod:`moderator.orders.vocabulary`, and every city an order names is found
by its :meth:`CityIndex.find <moderator.orders.vocabulary.CityIndex.find>`.
"""
from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from dataclasses import dataclass, replace
from typing import Any

from .. import i18n
from ..rules.actions import DRAWN, Action, Build, Invest, Pass, Start, Take
from ..rules.board import Board, section_id
from ..rules.components import COMPANIES, JOKER, TRACK_TYPES, UP
from .languages import CANONICAL
from .lexicon import Lexicon, canonical, fold, format_action, language_of, lexicon, suggestions
from .vocabulary import (
    BUILD_FILLERS,
    BUILD_VERBS,
    CARD_WORDS,
    CARDISH,
    CARDS,
    COMMAND_ALIASES,
    COMMAND_FILLERS,
    COMMANDS,
    ARG_COMMANDS,
    CONNECTORS,
    DISCARD_VERBS,
    FILLERS,
    GREETINGS,
    INVEST_VERBS,
    NEGATIONS,
    NUMBER_WORDS,
    ORDER_WORDS,
    ORDINALS,
    PASS_VERBS,
    POLITE,
    PREAMBLE,
    REDRAW_VERBS,
    SIGN_OFFS,
    SPLIT_VERBS,
    START_VERBS,
    SWAP_DRAWN,
    SWAP_VERBS,
    TAKE_VERBS,
    VERBS,
    CityIndex,
    card_word,
    city_index,
    companies_at,
    company_names,
    company_of,
)

__all__ = ["MAX_LINE", "COMMANDS", "CARDS", "OrderError", "NoOrderFound", "card_word",
           "command", "uncommented", "english", "parse_turn", "format_action"]

MAX_LINE = 400
"""Order lines longer than this many characters are refused unread."""


class OrderError(ValueError):
    """An order line that cannot be read.

    ``code`` names the refusal (``not_a_company``, ``no_section_between`` ...),
    ``values`` holds what its wording needs (the offending words, suggestions, the
    order concerned), ``line`` is the offending text.  The wording lives in the
    template ``templates/words/orders.txt``, one macro per code: ``reason`` renders
    it (what is wrong and what would be understood), ``str(exc)`` is the reason
    and ``(in: 'LINE')``."""

    def __init__(self, code: str, line: str = "", **values: Any):
        super().__init__(code, line)
        self.code = code
        self.line = line
        self.values = values

    @property
    def reason(self) -> str:
        """The player's sentence: ``word("orders", code, **values)``."""
        from ..render.words import word  # lazily: Jinja only when a refusal is worded

        return word("orders", self.code, **self.values)

    def __str__(self) -> str:
        try:
            text = self.reason
        except Exception:  # no templates, or a code without a macro: still loggable
            text = self.code + (f" {self.values!r}" if self.values else "")
        return text + (f" (in: {self.line!r})" if self.line else "")

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild, (type(self), self.code, self.line, self.values)


def _rebuild(cls: type[OrderError], code: str, line: str, values: dict[str, Any]) -> OrderError:
    return cls(code, line, **values)


class NoOrderFound(OrderError):
    """The lines hold no order at all (only greetings, commands, chatter)."""


# The words (verbs, card words, commands, fillers, companies, the city lookup)
# are in .vocabulary; COMMANDS, CARDS and card_word are re-exported from here.

_MAX_SHARES = 20
"""Shares in one invest order at most."""
_MAX_WORDS = 30
"""Words in one order part at most (a longer one is not an order)."""

# ============================================================== cleaning

_TRANSLATE = str.maketrans({
    **{c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58\ufe63\uff0d"},
    **{c: "'" for c in "\u2018\u2019\u201a\u201b\u2032\u00b4"},
    **{c: " " for c in "\"\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb`"},
    **{c: " - " for c in "\u2192\u21d2\u27f6\u2794\u279c\u279d\u279e\u27f9\u2194"},
    **{c: "" for c in "\u200b\u200c\u200d\u2060\ufeff\u00ad"},
    "\u3001": ",", "\u3002": ".", "\uff61": ".", "\uff64": ",", "\u00d7": " x ",
    "\u00bf": " ", "\u00a1": " ",  # Spanish opening marks: "¿Ayuda?", "¡Hola!"
    "\t": " ",
})

_EDGE_QUOTE_RE = re.compile(r"(?<![\w])'|'(?![\w])")
_ARROW_RE = re.compile(r"(?<!-)-+>|(?<!=)=+>")  # lookbehinds keep long runs linear
_SPACES_RE = re.compile(r"\s+")
_FACE_RE = re.compile(r"\bface[\s-]*(up|down)\b", re.IGNORECASE)
_BRACKETS_RE = re.compile(r"[()\[\]{}<>:=*_~]")
_TIMES_RE = re.compile(r"\b(\d{1,2})\s*x\s*(?=[a-z])", re.IGNORECASE)
_COMMA_RE = re.compile(r"\s*([,+])\s*")
_PIECE_RE = re.compile(r"[;|]")
_KEY_LINE_RE = re.compile(r"\s*(game|secret)\s*[:=]", re.IGNORECASE)
_BULLET_RE = re.compile(
    r"^(?:[-*+\u2022\u25e6\u25aa\u25ab\u2023\u25cf\u25cb\u25a0\u25a1\u25ba\u25b6"
    r"\u27a2\u2713\u2714\u2610\u2611\u00b7]+\s*"
    r"|\(?\d{1,2}\s*[.):]\s*(?!\d)"
    r"|\(?[a-h]\)\s*"
    r"|#\d{1,2}[.):]?\s+)+"
)
_BW_RE = re.compile(
    r"\b(?:black|blk|b)(?:\s*(?:-\s*and\s*-|-\s*n\s*-|[-/+&]|\band\b|\bn\b)\s*|\s+)(?:white|wht|w)\b"
    r"|\b(?:white|wht|w)(?:\s*(?:-\s*and\s*-|[-/+&]|\band\b)\s*|\s+)(?:black|blk|b)\b",
    re.IGNORECASE,
)
_NOSTRIPE_RE = re.compile(r"\b(?:no|without)[\s-]*stripes?\b", re.IGNORECASE)


def _clean(line: str) -> str:
    """One line made plain: full-width forms and accents folded, smart quotes and
    dashes made ASCII, invisible characters dropped, bullets and numbering removed."""
    text = line
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        text = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
        text = text.translate(_TRANSLATE)
    text = _EDGE_QUOTE_RE.sub(" ", text.replace('"', " ").replace("`", " ").replace("\t", " "))
    text = _ARROW_RE.sub(" - ", text)
    text = _SPACES_RE.sub(" ", text).strip()
    return _BULLET_RE.sub("", text).strip()


def _tokens(text: str) -> list[str]:
    """Words of one order part; ``,`` and ``+`` become words of their own."""
    low = text.lower()
    if "w" in low and "b" in low:
        text = _BW_RE.sub(" black-white ", text)
    if "stripe" in low:
        text = _NOSTRIPE_RE.sub(" plain ", text)
    if "face" in low:
        text = _FACE_RE.sub(lambda m: "face" + m.group(1).lower(), text)
    text = _BRACKETS_RE.sub(" ", text)
    if "x" in low:
        text = _TIMES_RE.sub(r"\1 x ", text)
    if "," in text or "+" in text:
        text = _COMMA_RE.sub(r" \1 ", text)
    return text.split()


@functools.lru_cache(maxsize=4096)
def _low(tok: str) -> str:
    return tok.lower().strip(".!?")


def _pieces(line: str, lex: Lexicon | None = None, cities: CityIndex | None = None,
            origins: dict[str, str] | None = None) -> list[str]:
    """The order parts of one line: split on ``;`` and ``|``, each stripped of
    bullets and of punctuation at its ends; the words of ``lex``'s language read
    as English (:meth:`Lexicon.translate <moderator.orders.lexicon.Lexicon.translate>`,
    which notes in ``origins`` the player's word each English word was read from)."""
    out = []
    text = _clean(line)
    if lex is not None:
        text = _clean(lex.translate(text, cities, origins))
    for piece in _PIECE_RE.split(text):
        piece = _BULLET_RE.sub("", piece.strip()).strip(" .,!?:")
        if piece:
            out.append(piece)
    return out


def _split_verbs(tokens: list[str]) -> list[list[str]]:
    """Split the words of one part before each verb that starts another order
    ("build KCC DEN-KCY white, take stack and swap MRR")."""
    parts: list[list[str]] = [[]]
    head = None  # the first word of the current part that is not preamble
    for i, tok in enumerate(tokens):
        low = _low(tok)
        current = parts[-1]
        if (
            current
            and low in SPLIT_VERBS
            and head is not None
            and not (low == "draw" and i + 1 < len(tokens) and _low(tokens[i + 1]) == "pile")
            and not (head in SWAP_VERBS and low in TAKE_VERBS)
        ):
            carry = []
            if low in SWAP_VERBS and _low(current[-1]) in NEGATIONS:
                carry = [current.pop()]  # "..., don't swap"
            while current and _low(current[-1]) in CONNECTORS:
                current.pop()
            if carry and not current:
                parts[-1] = carry
            else:
                parts.append(carry)
            head = _low(carry[0]) if carry else None
        parts[-1].append(tok)
        if head is None and low not in PREAMBLE:
            head = low
    return [p for p in parts if p]


_COMMENT_RE = re.compile(r"(?:^|(?<=\s))[#\uff03](?!\s*\d)")


def uncommented(line: str) -> str:
    """``line`` without its comment: from a ``#`` that starts a word and is not
    followed by a number (``take #2``, ``take # 2`` name the face-up display) to
    the end of the line (``start WW  # my best move`` -> ``start WW``)."""
    if "#" not in line and "\uff03" not in line:
        return line
    match = _COMMENT_RE.search(line)
    return line if match is None else line[:match.start()].rstrip()


_VACATION_ARG = re.compile(r"(?i)off|end|over|back|\d+\s*[a-z]*")


def _zone_named(text: str) -> bool:
    from .names import timezone_named

    return timezone_named(text) is not None


def command(line: str, language: str | None = None) -> str | None:
    """The mail command if ``line`` is one: one of COMMANDS (``"Help!"``, ``"status
    please"``, ``"- rules"``, ``"?"``), ``"secret new"`` (``"new secret"``), or a
    command of ARG_COMMANDS with its argument as written: ``"timezone
    Europe/Madrid"`` (any one word: a wrong zone is answered), ``"vacation 5d"``,
    ``"vacation off"`` (a number with a unit, or off), ``"language"`` alone or
    ``"language cs"`` (any one word: a wrong code is answered); else None.

    The command's words may also be those of ``language`` (default: the language
    in force, :func:`moderator.i18n.current`): ``"ayuda"``, ``"Hilfe"``,
    ``"nápověda"``, ``"帮助"`` are ``"help"``, ``"vacaciones 5 días"`` is
    ``"vacation 5 days"``; the command is returned in English words."""
    if len(line.split()) > 4:
        return None
    text = _clean(line)
    raw = text.strip(" .,!:;").split()
    if raw and ARG_COMMANDS.get(raw[0].lower().rstrip(":")) == "language" and len(raw) <= 2:
        # the code is read as written, not as a word of the language ("Sprache de")
        arg = " ".join(raw[1:]).strip(" .,!:;")
        return f"language {arg}" if arg else "language"
    lex = lexicon(language_of(language))
    if lex.pattern is not None:
        text = _clean(lex.translate(text))
    text = text.strip(" .,!:;")
    parts = text.split()
    if parts and parts[0].lower().rstrip(":") in ARG_COMMANDS:  # "language: cs" too
        name = ARG_COMMANDS[parts[0].lower().rstrip(":")]
        arg = " ".join(parts[1:]).strip(" .,!:;")
        if name == "timezone" and (len(parts) == 2 or (len(parts) == 3 and _zone_named(arg))):
            return f"timezone {arg}"  # "timezone New York": a place of two words
        if name == "vacation" and arg and _VACATION_ARG.fullmatch(arg):
            return f"vacation {arg.lower()}"
        if name == "language" and len(parts) <= 2:
            return f"language {arg}" if arg else "language"
        return None
    if text.strip("?") == "":
        return "help" if text else None
    words = [_low(t) for t in _tokens(text.strip("?"))]
    words = [w for w in words if w not in PREAMBLE and w not in COMMAND_FILLERS]
    if sorted(words) == ["new", "secret"]:
        return "secret new"
    if len(words) != 1:
        return None
    word = COMMAND_ALIASES.get(words[0], words[0])
    return word if word in COMMANDS else None


def english(line: str, language: str | None = None) -> str:
    """``line`` with the words of ``language`` (default: the language in force) read
    as the English words they stand for, cleaned as order lines are (accents,
    full-width forms): what a reader of English command words reads in any language
    (``"me rindo, confirmado"`` → ``"resign , confirm"``).  ``line`` itself in
    English."""
    lex = lexicon(language_of(language))
    if lex.pattern is None:
        return line
    return _SPACES_RE.sub(" ", lex.translate(_clean(line))).strip()


# ============================================================== suggestions

_Why = tuple[str, dict[str, Any]]
"""A refusal not yet raised: its code and values (``OrderError`` without a line)."""


def _why(code: str, **values: Any) -> _Why:
    return code, values


def _refuse(why: _Why, line: str) -> OrderError:
    return OrderError(why[0], line, **why[1])


def _suggest_card(word: str) -> str | None:
    """The track card whose word (English, or of the language in force:
    ``languages.WORDS[...]["cards"]``) ``word`` is nearest (``names.nearest``:
    ``"whtie"`` → ``white``, Spanish ``"blamca"`` → ``blanca``), written as the
    language in force writes it, or None when none is close."""
    from .languages import WORDS
    from .names import nearest

    lang = i18n.current()
    table = {w: card for w, card in CARD_WORDS.items() if len(w) >= 3 and "/" not in w}
    for english, words in WORDS.get(lang, {}).get("cards", {}).items():
        if english in CARDS:
            table.update((fold(w), english) for w in words if len(w) >= 3)
    near = nearest(word, {k: k for k in table}, n=1, cutoff=0.7)
    return canonical(table[near[0]], lang) if near else None


def _suggest_company(text: str) -> str | None:
    """The abbreviation of the company whose name ``text`` is nearest, or None."""
    names = company_names()
    near = difflib.get_close_matches(text.lower(), list(names), n=1, cutoff=0.6)
    return names[near[0]] if near else None


def _city(cities: CityIndex, cid: str) -> dict[str, str]:
    """A city as its refusals name it: ``{"id": "DEN", "name": "Denver"}``."""
    return {"id": cid, "name": cities.board.cities[cid].name}


def _unknown_city(cities: CityIndex, text: str) -> _Why:
    """What to say about ``text`` that names no one city: the cities it could
    be, or the nearest name on the board."""
    _, ids = cities.find(text)
    if ids:
        return _why("ambiguous_city", text=text.strip(), cities=[_city(cities, c) for c in ids])
    names = {c.name.lower(): c.id for c in cities.board.cities.values()}
    names.update({c.id.lower(): c.id for c in cities.board.cities.values()})
    near = difflib.get_close_matches(text.strip().lower(), list(names), n=1, cutoff=0.6)
    return _why("unknown_city", text=text.strip(),
                suggestion=_city(cities, names[near[0]]) if near else None)


_SECTION_SPLIT = re.compile(r"\s*(?:-+|/|\\|\.\.+|,)\s*|\s+(?:to|and|&|till|until|thru|through)\s+", re.I)


def _section(tokens: list[str], board: Board, explain: bool = True) -> tuple[str | None, _Why | None]:
    """``(section id, None)`` for tokens naming a section, else ``(None, why)``
    (``(None, None)`` if not ``explain``)."""
    cities = city_index(board)
    text = " ".join(t for t in tokens if _low(t) not in ("from", "between"))
    if not text.strip():
        return None, _why("build_needs_section")
    ends = [p for p in _SECTION_SPLIT.split(text.strip()) if p and p.strip()]
    if len(ends) == 1:
        # no separator: "DEN KCY", "Kansas City Denver"
        words = ends[0].split()
        found = set()
        for k in range(1, len(words)):
            a, _ = cities.find(" ".join(words[:k]))
            b, _ = cities.find(" ".join(words[k:]))
            if a and b:
                found.add((a, b))
        if len(found) == 1:
            a, b = found.pop()
        elif len(found) > 1:
            return None, _why("ambiguous_section", text=text)
        else:
            a, _ = cities.find(ends[0])
            if a:
                return None, _why(
                    "one_city", section=board.sections_at(a)[0].id if board.sections_at(a) else None
                )
            return None, _why("not_a_section", text=text)
    elif len(ends) == 2:
        a, _ = cities.find(ends[0])
        b, _ = cities.find(ends[1])
        for end, cid in ((ends[0], a), (ends[1], b)):
            if cid is None:
                return None, _unknown_city(cities, end) if explain else None
    else:
        return None, _why("too_many_cities", text=text)
    assert a is not None and b is not None
    if a == b:
        return None, _why("same_city", city=_city(cities, a))
    sid = section_id(a, b)
    if sid not in board.sections:
        return None, _why("no_section_between", a=_city(cities, a), b=_city(cities, b),
                          near=[s.other(a) for s in board.sections_at(a)])
    return sid, None


# ============================================================== parts

@dataclass
class _Parts:
    build: Build | None = None
    take: Take | None = None
    swap: str | None = None
    invest: list[str] | None = None
    discard: str | None = None
    passing: bool = False
    start: str | None = None
    redraw: str | None = None
    lines: dict[str, str] | None = None  # order -> the line it came from

    def set(self, name: str, value: object, line: str) -> None:
        if self.lines is None:
            self.lines = {}
        if name in self.lines:
            raise OrderError("repeated_order", line, order=name)
        self.lines[name] = line
        setattr(self, "passing" if name == "pass" else name, value)

    def line_of(self, name: str) -> str:
        return (self.lines or {}).get(name, "")


def _drop(tokens: list[str], words: set[str]) -> list[str]:
    return [t for t in tokens if _low(t) not in words]


def _count(tok: str) -> int | None:
    low = _low(tok)
    if low in NUMBER_WORDS:
        return NUMBER_WORDS[low]
    m = re.fullmatch(r"(\d{1,3})x?", low)
    return int(m.group(1)) if m else None


def _shares(tokens: list[str], line: str, order: str) -> list[str]:
    """A list of shares: ``2 KCC``, ``KCC KCC``, ``2x KCC``, ``KCC x2``, ``KCC and
    UP``, ``Kansas City Central, Union Pacific``, ``two shares of KCC``.  ``order``
    (``invest``, ``start`` or ``swap``) is the order they are for: its refusals
    show an example of it."""
    toks = _drop(tokens, FILLERS | {"in", "each"})
    out: list[str] = []
    count: int | None = None
    last: int | None = None  # index in out where the last company's run starts
    i = 0
    while i < len(toks):
        low = _low(toks[i])
        if low in (",", "+", "and", "&", "plus"):
            i += 1
            continue
        m = re.fullmatch(r"[x*](\d{1,3})", low)
        if m or (low in ("x", "*", "times") and i + 1 < len(toks) and _count(toks[i + 1])):
            n = int(m.group(1)) if m else _count(toks[i + 1])
            step = 1 if m else 2
            if (last is None and count is None and not out and i + step < len(toks)
                    and companies_at(toks, i + step)):
                toks = toks[:i] + [str(n)] + toks[i + step:]  # "×2 KCC": a count before
                continue
            if last is None or count is not None or len(out) - last != 1:
                raise OrderError("unclear_multiplier", line, word=toks[i], order=order)
            if not 1 <= n <= _MAX_SHARES:  # type: ignore[operator]
                raise OrderError("not_a_share_count", line, count=n, order=order)
            out += [out[-1]] * (n - 1)  # type: ignore[operator]
            i += 1 if m else 2
            last = None
            continue
        n = _count(toks[i])
        if n is not None:
            if count is not None:
                raise OrderError("two_numbers", line, count=count, word=toks[i], order=order)
            if not 1 <= n <= _MAX_SHARES:
                raise OrderError("not_a_share_count", line, count=n, order=order)
            count = n
            i += 1
            if i < len(toks) and _low(toks[i]) in ("x", "*", "times"):
                i += 1
            continue
        found = companies_at(toks, i)
        if not found:
            word = toks[i]
            if card_word(word):
                raise OrderError("card_not_share", line, word=word, order=order)
            raise OrderError("not_a_company", line, word=word, suggestion=_suggest_company(word))
        abbr, used = found[0]
        last = len(out)
        out += [abbr] * (count or 1)
        if count is not None:
            last = None  # an explicit count cannot be multiplied again
        count = None
        i += used
    if count is not None:
        # a number after the last company: "invest KCC 2"
        if last is not None and len(out) - last == 1:
            out += [out[-1]] * (count - 1)
        else:
            raise OrderError("count_of_what", line, count=count, order=order)
    return out


def _written_span(tokens: list[str], words: list[str]) -> str:
    """The words of ``tokens`` (as written) from the first of ``words`` (lower
    case, some of them) to the last, with the words between that were dropped
    as fillers: what a refusal quotes ("# my best move", not "# best move")."""
    low = [_low(t) for t in tokens]
    if words[0] not in low or words[-1] not in low:
        return " ".join(words)
    first = low.index(words[0])
    last = len(low) - 1 - low[::-1].index(words[-1])
    return " ".join(tokens[first:last + 1]).replace(" ,", ",") if first <= last else " ".join(words)


def _parse_take(rest: list[str], line: str) -> Take:
    original = {_low(t): t for t in rest}
    words = [_low(t) for t in rest if t not in (",", "+")]
    text = " ".join(words)
    text = re.sub(r"(?:#|\bno\b\.?|\bnr\b\.?|\bnumber\b)\s*(\d)", r"place \1", text)
    words = [w for w in text.split() if w not in FILLERS | {
        "from", "in", "on", "at", "to", "into", "hand", "me", "please", "it",
    }]
    if not words:
        raise OrderError("which_take", line)
    if words in (["none"], ["nothing"], ["no"]):
        return Take("none")
    stack = {"stack", "top", "deck", "blind", "unseen", "hidden", "random", "facedown",
             "covered", "closed", "draw"}
    display = {"display", "faceup", "open", "visible", "place", "slot", "position", "row",
               "market", "spot"}
    has_stack = any(w in stack for w in words)
    has_display = any(w in display for w in words)
    rest_words = [w for w in words if w not in stack | display | {"pile"}]
    numbers = [w for w in rest_words if re.fullmatch(r"\d+", w) or w in ORDINALS or w in NUMBER_WORDS]
    others = [w for w in rest_words if w not in numbers]
    company = None
    if others:
        found = companies_at(others, 0)
        if not found or found[0][1] != len(others):
            bad = others[found[0][1]] if found else _written_span(rest, others)
            bad = original.get(bad, bad)
            if card_word(bad):
                raise OrderError("take_card", line, word=bad)
            raise OrderError("take_not_a_company", line, word=bad, suggestion=_suggest_company(bad))
        company = found[0][0]
    if company == UP:
        if numbers:
            raise OrderError("take_one_share", line)
        return Take("up")
    if company is not None:
        if numbers and numbers not in (["one"], ["1"]):
            raise OrderError("take_one_share", line)
        if has_stack:
            raise OrderError("stack_is_unseen", line, company=company)
        return Take("display", company)
    if numbers:
        if has_stack or len(numbers) > 1:
            raise OrderError("which_take", line)
        word = numbers[0]
        if word in ORDINALS or word in NUMBER_WORDS:
            if not has_display:
                raise OrderError("place_of_what", line, word=word)
            place = ORDINALS.get(word) or NUMBER_WORDS[word]
        else:
            place = int(word)
        if not 1 <= place <= 4:
            raise OrderError("no_such_place", line, place=place)
        return Take("display", place=place)
    if has_stack:
        return Take("stack")
    if "pile" in words:
        raise OrderError("pile_is_ambiguous", line)
    raise OrderError("which_face_up", line)


def _parse_swap(rest: list[str], line: str) -> str | None:
    toks = _drop(rest, FILLERS | {"one", "box", "back", "pile", "please", "from", "hand"})
    if [_low(t) for t in toks] in (["none"], ["nothing"], ["no"]):
        return None
    connectors = {"for", "with", "to", "into", "-", "against", "get", "take", "receive", "and"}
    low = [_low(t) for t in toks]
    if DRAWN in low:  # "swap drawn", "swap the share just drawn for UP" (rules: BUILD, step 4)
        i = low.index(DRAWN)
        right = _drop(toks[i + 1:], connectors)
        if all(w in SWAP_DRAWN[DRAWN] for w in low[:i + 1]):
            if right and _shares(right, line, "swap") != [UP]:
                raise OrderError("swap_takes_up", line)
            return DRAWN
    # "swap El Paso and Rio Grande for UP": a connector may belong to a company name;
    # try each reading, the whole words first
    cuts = [None] + [i for i, t in enumerate(toks) if _low(t) in connectors]
    errors: list[OrderError] = []
    for cut in cuts:
        left, right = (toks, []) if cut is None else (toks[:cut], _drop(toks[cut + 1:], connectors))
        try:
            if right and _shares(right, line, "swap") != [UP]:
                raise OrderError("swap_takes_up", line)
            if not left:
                raise OrderError("which_swap", line)
            shares = _shares(left, line, "swap")
            if cut is None and len(shares) == 2 and shares[1] == UP:
                shares = shares[:1]  # "swap MRR UP"
            if len(shares) != 1:
                raise OrderError("swap_one_share", line)
            return shares[0]
        except OrderError as exc:
            errors.append(exc)
    # the most telling reason: one about the swap itself, else the whole words' one
    for exc in errors:
        if exc.code in ("swap_takes_up", "swap_one_share"):
            raise exc
    raise errors[0]


def _parse_cards(tokens: list[str], line: str) -> tuple[str | None, str | None]:
    """``(card, space)`` from the card words of a build: ``black``, ``joker``,
    ``joker as white``, ``white joker``."""
    words = [_low(t) for t in tokens]
    cards = [card_word(w) for w in words if card_word(w)]
    said_as = "as" in words
    if not cards:
        if said_as:
            raise OrderError("which_card", line)
        return None, None
    jokers = [c for c in cards if c == JOKER]
    types = [c for c in cards if c != JOKER]
    if len(jokers) > 1 or len(types) > 1:
        raise OrderError("one_card", line)
    if jokers and types:
        return JOKER, types[0]
    if jokers:
        return JOKER, None
    if said_as:
        raise OrderError("as_without_joker", line, card=types[0])
    return types[0], None


def _is_cardish(tok: str) -> bool:
    low = _low(tok)
    return bool(card_word(low)) or low in CARDISH or low in BUILD_FILLERS


def _build_rest(tokens: list[str], board: Board, line: str) -> tuple[tuple[str, str | None, str | None] | None, _Why | None]:
    """Section and card from the tokens of a build without the company:
    ``((section, card, space), None)`` or ``(None, why)``.  Card words may come
    before or after the section; the longest readable section wins."""
    n = len(tokens)
    lead = 0
    while lead < n and _is_cardish(tokens[lead]):
        lead += 1
    trail = 0
    while trail < n - lead and _is_cardish(tokens[n - 1 - trail]):
        trail += 1
    for total in range(lead + trail + 1):
        for i in range(min(lead, total), -1, -1):
            j = total - i
            if j > trail:
                continue
            middle = tokens[i:n - j]
            sid, _ = _section(middle, board, explain=False)
            if sid:
                card, space = _parse_cards(tokens[:i] + tokens[n - j:], line)
                return (sid, card, space), None
    middle = tokens[lead:n - trail]
    # "... joker as gold": the word after "as" is not a track type
    for k in range(len(middle) - 1):
        if _low(middle[k]) == "as" and not card_word(middle[k + 1]) and \
                _section(middle[:k - 1] if k and _is_cardish(middle[k - 1]) else middle[:k], board, explain=False)[0]:
            return None, _why("not_a_track_type", word=middle[k + 1], types=list(TRACK_TYPES))
    _, reason = _section(middle, board)
    for bad, shorter in ((middle[-1:], middle[:-1]), (middle[:1], middle[1:])):
        if bad and shorter and _section(shorter, board, explain=False)[0]:
            if companies_at(bad, 0):
                return None, _why("company_not_card", word=bad[0])
            return None, _why("build_not_a_card", word=bad[0], suggestion=_suggest_card(bad[0]))
    return None, reason or _why("build_needs_section")


def _parse_build(rest: list[str], board: Board, line: str) -> Build:
    tokens = [t for t in rest if t not in (",", "+")]
    if not tokens:
        raise OrderError("which_build", line)
    readings: set[tuple[str, str, str | None, str | None]] = set()
    first_reason: _Why | None = None
    # the company first (the usual order) ...
    for abbr, used in companies_at(tokens, 0):
        got, reason = _build_rest(tokens[used:], board, line)
        if got:
            readings.add((abbr, *got))
        elif first_reason is None:
            first_reason = reason
    # ... or anywhere else ("build DEN-KCY KCC black")
    if not readings:
        for i in range(1, len(tokens)):
            for abbr, used in companies_at(tokens, i):
                got, _ = _build_rest(tokens[:i] + tokens[i + used:], board, line)
                if got:
                    readings.add((abbr, *got))
    if len(readings) > 1:
        texts = sorted(str(Build(*r)) for r in readings)
        raise OrderError("ambiguous_build", line, readings=texts)
    if not readings:
        got, _ = _build_rest(tokens, board, line)
        if got:
            raise OrderError("which_company", line, section=got[0])
        if first_reason is not None:
            raise _refuse(first_reason, line)
        if _count(tokens[0]) is not None and companies_at(tokens, 1):
            raise OrderError("one_train", line)
        if len(tokens) > 1 and _build_rest(tokens[1:], board, line)[0]:
            raise OrderError("company_first", line, word=tokens[0],
                             suggestion=_suggest_company(tokens[0]))
        raise OrderError("build_needs_company", line, suggestion=_suggest_company(tokens[0]))
    company, sid, card, space = readings.pop()
    if company == UP:
        raise OrderError("up_builds_no_track", line, companies=list(COMPANIES))
    return Build(company, sid, card, space)


def _parse_discard(rest: list[str], line: str) -> str:
    toks = _drop(rest, FILLERS | {"one", "1", "track", "stripe", "striped", "from", "hand",
                                   ",", "please", "away"})
    if not toks:
        raise OrderError("which_discard", line)
    cards = [card_word(t) for t in toks]
    if None in cards:
        bad = toks[cards.index(None)]
        raise OrderError("discard_not_a_card", line, word=bad, suggestion=_suggest_card(bad))
    if len(cards) > 1:
        raise OrderError("discard_one_card", line)
    return cards[0]  # type: ignore[return-value]


def _parse_part(tokens: list[str], board: Board, parts: _Parts, line: str) -> None:
    """Read one order part into ``parts``.  Readings are cached per board (they
    depend on the words only)."""
    cache = city_index(board).parts
    key = tuple(tokens)
    found = cache.get(key)
    if found is None:
        found = _read_part(tokens, board, line)
        if len(cache) < 50000:
            cache[key] = found
    for name, value in found:
        parts.set(name, value, line)


def _read_part(tokens: list[str], board: Board, line: str) -> list[tuple[str, object]]:
    """``[(order name, value)]`` read from the words of one part."""
    while tokens and _low(tokens[0]) in PREAMBLE | CONNECTORS:
        tokens = tokens[1:]
    while tokens and (_low(tokens[-1]) in POLITE or tokens[-1] in (",", ".", "!", ":)", ":-)")):
        tokens = tokens[:-1]  # "start EPRG, thanks", "... plain please"
    if not tokens:
        return []
    if len(tokens) > _MAX_WORDS:
        raise OrderError("order_too_long", line, words=len(tokens))
    verb = _low(tokens[0])
    rest = tokens[1:]
    if verb in NEGATIONS and rest and _low(rest[0]) in SWAP_VERBS:
        return []  # "no swap"
    if verb == "initial" and rest and _low(rest[0]) in ("investment", "invest", "share"):
        rest = rest[1:]
    if verb == "pick" and len(rest) > 1 and _low(rest[0]) == "up":
        rest = rest[1:]  # "pick up the UP share"

    if verb in BUILD_VERBS:
        return [("build", _parse_build(rest, board, line))]
    if verb in TAKE_VERBS:
        return [("take", _parse_take(rest, line))]
    if verb in SWAP_VERBS:
        swap = _parse_swap(rest, line)
        return [] if swap is None else [("swap", swap)]
    if verb in INVEST_VERBS:
        if not _drop(rest, FILLERS | {"in"}):
            raise OrderError("which_invest", line)
        return [("invest", _shares(rest, line, "invest"))]
    if verb in DISCARD_VERBS:
        return [("discard", _parse_discard(rest, line))]
    if verb in PASS_VERBS:
        more = _drop(rest, {"turn", "this", "my", "the", "i", "and", "with", ","})
        if not more:
            return [("pass", True)]
        cards = [card_word(t) for t in more]
        if len(cards) == 1 and cards[0]:
            return [("pass", True), ("discard", cards[0])]
        raise OrderError("pass_one_card", line)
    if verb in REDRAW_VERBS:
        card = _parse_discard(rest, line)
        if card == JOKER:
            raise OrderError("joker_never_dead", line)
        return [("redraw", card)]
    if verb in START_VERBS:
        shares = _shares(_drop(rest, {"with", "investment", "invest", "is", "in"}), line, "start")
        if not shares:
            raise OrderError("which_start", line)
        if len(shares) != 1:
            raise OrderError("one_initial_share", line)
        return [("start", shares[0])]
    raise _refuse(_unknown(tokens, board), line)


def _unknown(tokens: list[str], board: Board) -> _Why:
    """What to say about a part that starts with no known verb."""
    word = tokens[0]
    low = _low(word)
    text = " ".join(tokens)
    cmd = command(text, i18n.DEFAULT)
    if cmd:
        return _why("command_alone", command=cmd)
    if low in ("stack", "top") and len(tokens) <= 2:
        return _why("stack_alone", text=text)
    card = card_word(low)
    if card and len(tokens) == 1:
        return _why("card_alone", word=word, card=card)
    found = companies_at(tokens, 0)
    if found and found[0][1] == len(tokens):
        return _why("company_alone", text=text, company=found[0][0])
    if found:
        try:
            build = _parse_build(tokens, board, "")
        except OrderError:
            pass
        else:
            return _why("verb_first", order=str(build))
    lang = i18n.current()
    words = {**{w: canonical(c, lang) for w, c in ARG_COMMANDS.items() if len(w) >= 4}, **suggestions(lang)}
    near = difflib.get_close_matches(fold(low), sorted(words), n=1, cutoff=0.7)
    return _why("unknown_order", word=word, suggestion=words[near[0]] if near else None)


# ============================================================== turns

def _is_chatter(tokens: list[str]) -> bool:
    """A greeting or sign-off ("Hi all,", "Thanks!", "Cheers, Bob") holding no verb."""
    if not tokens or _low(tokens[0]) not in GREETINGS:
        return False
    return not any(_low(t) in VERBS for t in tokens[1:])


def _is_prose(tokens: list[str], board: Board) -> bool:
    """A line of plain words that cannot be meant as an order ("Sorry for the
    delay!", "Grüße, Cy", a bare signature): no verb, no company, track card, city,
    number or order word.  A line with any of those is read (and refused if wrong),
    so a mistyped order is never skipped silently.  A line of one word close to
    a command (``statsu``, ``histroy``, Czech ``napovda``; :func:`_close_to_command`)
    is read too, so its refusal offers the command."""
    if command(" ".join(tokens), i18n.DEFAULT):
        return False  # a command inside an order line is pointed out
    if len(tokens) == 1 and _close_to_command(_low(tokens[0]), i18n.current()):
        return False
    for tok in tokens:
        low = _low(tok)
        if (low in VERBS or low in ORDER_WORDS or card_word(tok) or company_of(tok)
                or any(ch.isdigit() for ch in tok) or city_index(board).find(tok, short=False)[0]):
            return False
    return True


@functools.lru_cache(maxsize=4096)
def _close_to_command(word: str, language: str) -> bool:
    """Whether ``word`` (one word, lower case) is a mistyping of a mail command
    of English or ``language`` (``difflib`` ratio 0.8 of the folded words, words
    of four letters or more; the command itself is no mistyping):
    ``"statsu"``, ``"histroy"``, ``"rulez"``, not ``"hell"`` or ``"stan"``."""
    key = fold(word).strip(".,;:!?()")
    if len(key) < 4 or not key.isalpha():
        return False
    words = _command_words(language)
    return key not in words and bool(difflib.get_close_matches(key, words, n=1, cutoff=0.8))


@functools.lru_cache(maxsize=None)
def _command_words(language: str) -> tuple[str, ...]:
    """The folded words of the mail commands in English and ``language``
    (``status``, ``rules``, ``hilfe``, ``napoveda`` ...), four letters or more."""
    from .languages import WORDS

    out = set(COMMANDS) | set(COMMAND_ALIASES) | set(ARG_COMMANDS)
    for english, words in WORDS.get(language, {}).get("commands", {}).items():
        if english in COMMANDS:
            out.update(fold(w) for w in words)
    return tuple(sorted(w for w in out if len(w) >= 4 and " " not in w))


def parse_turn(lines: list[str], board: Board, language: str | None = None) -> Action:
    """Read the order lines of one mail into one action.

    ``lines`` are order lines; mail commands (``help``, ``status`` ...; see
    ``command``), ``game:``/``secret:`` lines, greetings and sign-offs ("Hi all",
    "Thanks, Bob") and lines of plain words (``_is_prose``) are skipped.  Raises OrderError naming the line and what would be
    understood when a line cannot be read or the lines do not make one turn (e.g. a
    build together with an invest).

    ``language`` (default: the language in force, :func:`moderator.i18n.current`)
    is the player's: its order words are read as well as the English ones
    (:mod:`moderator.orders.lexicon`; ``construir KCC DEN-KCY negra; tomar pila``),
    and the orders a refusal suggests are written in its canonical words
    (:func:`format_action`)."""
    lang = language_of(language)
    origins: dict[str, str] = {}
    with i18n.speaking(lang):
        try:
            return _parse_turn(lines, board, lang, origins)
        except OrderError as exc:
            if lang != i18n.DEFAULT:
                origins.update(_as_written(lines, origins))
                exc.values = _localized(exc.code, exc.values, board, lang, origins)
            else:  # accents the reading folded away are given back ('José's')
                accented = {k: v for k, v in _as_written(lines, {}).items() if not v.isascii()}
                exc.values = _quoted_as_written(exc.values, accented)
            raise


_WRITTEN_WORD_RE = re.compile(r"[^\s;|,.!?()\[\]{}<>:=\"']+")
_WRITTEN_APOSTROPHE_WORD_RE = re.compile(r"[^\s;|,.!?()\[\]{}<>:=\"]+")


def _as_written(lines: list[str], origins: dict[str, str]) -> dict[str, str]:
    """``origins`` (English word -> the folded text of the player's it was read
    from) with each text as the player wrote it, accents and case kept (``"weiss"``
    -> ``"Weiß"``, ``"dve"`` -> ``"dvě"``), and each other folded word of ``lines``
    to its written form."""
    written: dict[str, str] = {}
    for line in lines:
        text = unicodedata.normalize("NFKC", str(line))
        for word in _WRITTEN_WORD_RE.findall(text):
            written.setdefault(fold(word), word)
        for word in _WRITTEN_APOSTROPHE_WORD_RE.findall(text):
            word = word.replace("\u2019", "'").strip("'")  # "José's", "José’s"
            if word:
                written.setdefault(fold(word), word)
    out = {fold(k): v for k, v in written.items()}
    for english, text in origins.items():
        out[english] = " ".join(written.get(fold(w), w) for w in text.split())
    return out


def _localized(code: str, values: dict[str, Any], board: Board, lang: str,
               origins: dict[str, str] | None = None) -> dict[str, Any]:
    """The values of a refusal with the orders and words it suggests in ``lang``'s
    canonical words: an order (``verb_first``), the readings of a build, a command,
    the name of an order (``follows_build``: ``tomar``), a track card to write.  A
    word the player wrote (``word``, ``text``) is quoted as the player wrote it:
    each English word read from a word of the language back to that word
    (``origins``: English word -> the player's text, from
    :meth:`Lexicon.translate <moderator.orders.lexicon.Lexicon.translate>`; ``two``
    -> ``zwei``), else as written.  Values a template compares (``order`` of the
    share refusals) stay English."""
    out = dict(values)

    def order(text: str) -> str:
        try:
            return format_action(_parse_turn([text], board, i18n.DEFAULT), lang)
        except OrderError:  # not a whole action: word by word
            return " ".join(canonical(w, lang) for w in text.split())

    if code == "verb_first":
        out["order"] = order(values["order"])
    elif code == "ambiguous_build":
        out["readings"] = [order(r) for r in values["readings"]]
    elif code == "command_alone":
        out["command"] = " ".join(canonical(w, lang) for w in values["command"].split())
    elif code in ("repeated_order", "start_alone", "build_or", "follows_build"):
        out["order"] = canonical(values["order"], lang)  # shown, never compared
    elif code in ("card_alone", "as_without_joker") and "card" in values:
        out["card"] = canonical(values["card"], lang)
    if origins:
        # a word of the player's language is quoted as written ('zwei', not
        # the English 'two' it was read as)
        quoted = _quoted_as_written(values, origins)
        out.update((key, quoted[key]) for key in ("word", "text") if key in quoted)
    return out


def _quoted_as_written(values: dict[str, Any], origins: dict[str, str]) -> dict[str, Any]:
    """``values`` with each word of the player's quoted in them (``word``,
    ``text``) as the player wrote it: each word found in ``origins`` (folded word
    -> the player's text) replaced by that text (``"Jose's"`` -> ``"José's"``)."""
    out = dict(values)
    for key in ("word", "text"):
        if isinstance(values.get(key), str):
            out[key] = " ".join(origins.get(_low(w), w) for w in values[key].split())
    return out


def _parse_turn(lines: list[str], board: Board, lang: str,
                origins: dict[str, str] | None = None) -> Action:
    lex = lexicon(lang)
    if lex.pattern is None:
        lex = None
    cities = city_index(board)
    parts = _Parts()
    signed_off = False
    for raw in lines:
        if len(str(raw)) > MAX_LINE:
            raise OrderError("line_too_long", str(raw)[:60] + "...", length=len(str(raw)))
    for raw in lines:
        for line in str(raw).splitlines() or [""]:
            line = uncommented(line)
            if command(line, lang) or _KEY_LINE_RE.match(line):
                continue
            for piece in _pieces(line, lex, cities, origins):
                tokens = _tokens(piece)
                if lex is not None:
                    tokens = _verb_last(tokens)
                for sub in _split_verbs(tokens):
                    if _is_chatter(sub):
                        signed_off = signed_off or _low(sub[0]) in SIGN_OFFS
                        continue
                    if signed_off and _low(sub[0]) not in VERBS:
                        continue
                    if _is_prose(sub, board):
                        continue
                    _parse_part(sub, board, parts, raw)
    return _combine(parts, lines)


def _verb_last(tokens: list[str]) -> list[str]:
    """The words of an order written verb last, as German and Czech do ("Weiß
    abwerfen", "2 KCC investieren", "Stapel nehmen"), verb first; other words as
    they are.  Only a part whose verbs each end a clause (at its end, or before
    ``and``, ``then`` or ``,``: "zwei KCC investieren und eine einfache abwerfen"
    → "invest two KCC discard plain"), each clause with an order word before its
    verb (a company, track card, number or ``stack``...), so "ich muss leider
    passen" stays a line of chatter and a pass."""
    if len(tokens) < 2 or _low(tokens[-1]) not in VERBS:
        return tokens
    clauses: list[list[str]] = []
    start = 0
    for i, tok in enumerate(tokens):
        if _low(tok) not in VERBS:
            continue
        if i + 1 < len(tokens) and _low(tokens[i + 1]) not in CONNECTORS | {","}:
            return tokens  # a verb inside a clause: written verb first
        clauses.append(tokens[start:i + 1])
        start = i + 1
        while start < len(tokens) and _low(tokens[start]) in CONNECTORS | {","}:
            start += 1
    out: list[str] = []
    for clause in clauses:
        head = clause[:-1]
        if not any(_low(t) in ORDER_WORDS or card_word(t) or company_of(t) or _count(t) is not None
                   for t in head):
            return tokens
        out += clause[-1:] + head
    return out


def _combine(parts: _Parts, lines: list[str]) -> Action:
    given = [k for k in ("start", "build", "take", "swap", "invest", "discard", "pass")
             if k in (parts.lines or {})]
    action = _combine_main(parts, lines, given)
    if parts.redraw is not None:
        if isinstance(action, Start):
            raise OrderError("redraw_with_start", parts.line_of("redraw"))
        action = replace(action, redraw=parts.redraw)
    return action


def _combine_main(parts: _Parts, lines: list[str], given: list[str]) -> Action:
    if parts.start is not None:
        others = [k for k in given if k != "start"]
        if others:
            raise OrderError("start_alone", parts.line_of(others[0]), order=others[0])
        return Start(parts.start)
    if parts.build is not None:
        for other in ("invest", "pass"):
            if other in given:
                raise OrderError("build_or", parts.line_of(other), order=other)
        if parts.discard is not None:
            raise OrderError("build_discards_nothing", parts.line_of("discard"))
        return Build(parts.build.company, parts.build.section, parts.build.card,
                     parts.build.space, parts.take, parts.swap)
    for other in ("take", "swap"):
        if other in given:
            raise OrderError("follows_build", parts.line_of(other), order=other)
    if parts.invest is not None:
        if parts.passing:
            raise OrderError("invest_or_pass", parts.line_of("pass"))
        return Invest(tuple(sorted(parts.invest)), parts.discard)
    if parts.passing or parts.discard is not None:
        return Pass(parts.discard)
    if parts.redraw is not None:
        raise OrderError("redraw_alone", parts.line_of("redraw"))
    raise NoOrderFound("no_order", " / ".join(str(x) for x in lines))
