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
    swap     := ("swap"|"exchange"|"trade"|"return") SHARE ["for" "UP"] | "no swap"
    invest   := ("invest"|"inv") SHARES
    SHARES   := [N ["x"]] SHARE [x N] { ["," | "and"] [N ["x"]] SHARE }
    discard  := ("discard"|"drop") CARD
    pass     := ("pass"|"skip") [CARD]
    start    := ("start"|"initial [investment]"|"choose") SHARE

Skipped: mail commands (``command``: help, status, history, rules, secret new),
``game:``/``secret:`` lines, greetings and sign-offs ("Hi all,", "Thanks! Bob").
Nothing is guessed: when words can be read two ways (``'San'``: San Antonio or
San Francisco; ``as white`` without a joker) the order is refused with the
readings.

``str(action)`` is the canonical text; ``parse_turn([str(a)], board) == a`` too, but
game files are replayed with the strict reader ``moderator.rules.notation.parse_action``
only, so that making this parser friendlier can never stop an archived game loading.
A line that cannot be read raises ``OrderError(reason, line)``: ``reason`` says what
is wrong and what would be understood.  See ``templates/help.txt`` for the player's
guide.

This module is the grammar (words to actions), the error messages and the
suggestions; the words themselves and the lookups of cities, companies and cards
are in :mod:`moderator.orders.vocabulary`, and every city an order names is found
by its :meth:`CityIndex.find <moderator.orders.vocabulary.CityIndex.find>`.
"""
from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from dataclasses import dataclass, replace

from ..rules.actions import Action, Build, Invest, Pass, Start, Take
from ..rules.board import Board, section_id
from ..rules.components import COMPANIES, JOKER, TRACK_TYPES, UP
from .vocabulary import (
    BUILD_FILLERS,
    BUILD_VERBS,
    CARD_LIST,
    CARDISH,
    CARDS,
    COMMAND_ALIASES,
    COMMAND_FILLERS,
    COMMANDS,
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
           "command", "parse_turn"]

MAX_LINE = 400
"""Order lines longer than this many characters are refused unread."""


class OrderError(ValueError):
    """An order line that cannot be read.  ``line`` is the offending text and
    ``reason`` what is wrong and what would be understood."""

    def __init__(self, reason: str, line: str = ""):
        super().__init__(f"{reason}" + (f" (in: {line!r})" if line else ""))
        self.reason = reason
        self.line = line


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
    "\u3001": ",", "\u3002": ".", "\uff61": ".", "\uff64": ",", "\u00d7": "x",
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


def _pieces(line: str) -> list[str]:
    """The order parts of one line: split on ``;`` and ``|``, each stripped of
    bullets and of punctuation at its ends."""
    out = []
    for piece in _PIECE_RE.split(_clean(line)):
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


def command(line: str) -> str | None:
    """The mail command if ``line`` is one: one of COMMANDS (``"Help!"``, ``"status
    please"``, ``"- rules"``, ``"?"``) or ``"secret new"`` (``"new secret"``); else
    None."""
    if len(line.split()) > 4:
        return None
    text = _clean(line).strip(" .,!:;")
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


# ============================================================== suggestions

def _suggest_company(text: str) -> str:
    names = company_names()
    near = difflib.get_close_matches(text.lower(), list(names), n=1, cutoff=0.6)
    return f" (did you mean {names[near[0]]}?)" if near else ""


def _not_a_company(text: str) -> str:
    return (
        f"{text!r} is not a company{_suggest_company(text)}; use an abbreviation like "
        "KCC or UP, or a full name like Kansas City Central"
    )


def _unknown_city(cities: CityIndex, text: str) -> str:
    """What to say about ``text`` that names no one city: the cities it could
    be, or the nearest name on the board."""
    _, ids = cities.find(text)
    if ids:
        return (
            f"{text.strip()!r} could be "
            + " or ".join(cities.label(c) for c in ids)
            + "; write the city id or its full name"
        )
    names = {c.name.lower(): c.id for c in cities.board.cities.values()}
    names.update({c.id.lower(): c.id for c in cities.board.cities.values()})
    near = difflib.get_close_matches(text.strip().lower(), list(names), n=1, cutoff=0.6)
    hint = f" (did you mean {cities.label(names[near[0]])}?)" if near else ""
    return (
        f"{text.strip()!r} is not a city on the board{hint}; "
        "write city ids like DEN or names like Denver"
    )


_SECTION_SPLIT = re.compile(r"\s*(?:-+|/|\\|\.\.+|,)\s*|\s+(?:to|and|&|till|until|thru|through)\s+", re.I)


def _section(tokens: list[str], board: Board, explain: bool = True) -> tuple[str | None, str | None]:
    """``(section id, None)`` for tokens naming a section, else ``(None, reason)``
    (``(None, None)`` if not ``explain``)."""
    cities = city_index(board)
    text = " ".join(t for t in tokens if _low(t) not in ("from", "between"))
    if not text.strip():
        return None, "build needs a section as CITY-CITY: e.g. 'build KCC DEN-KCY white'"
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
            return None, (
                f"{text!r} can be read as more than one section; write it as CITY-CITY, e.g. DEN-KCY"
            )
        else:
            a, _ = cities.find(ends[0])
            if a:
                return None, (
                    f"a section joins two cities: write it as CITY-CITY, e.g. "
                    f"{board.sections_at(a)[0].id if board.sections_at(a) else 'DEN-KCY'}"
                )
            return None, f"{text!r} is not a section; write it as CITY-CITY, e.g. DEN-KCY"
    elif len(ends) == 2:
        a, _ = cities.find(ends[0])
        b, _ = cities.find(ends[1])
        for end, cid in ((ends[0], a), (ends[1], b)):
            if cid is None:
                return None, _unknown_city(cities, end) if explain else None
    else:
        return None, f"{text!r} is not a section: a section joins two cities, e.g. DEN-KCY"
    assert a is not None and b is not None
    if a == b:
        return None, f"a section joins two different cities, not {cities.label(a)} and itself"
    sid = section_id(a, b)
    if sid not in board.sections:
        near = ", ".join(s.other(a) for s in board.sections_at(a))
        return None, (
            f"there is no section between {cities.label(a)} and {cities.label(b)}; "
            f"sections from {a} go to {near}"
        )
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
            raise OrderError(f"a turn has only one {name} order", line)
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


def _shares(tokens: list[str], line: str, example: str) -> list[str]:
    """A list of shares: ``2 KCC``, ``KCC KCC``, ``2x KCC``, ``KCC x2``, ``KCC and
    UP``, ``Kansas City Central, Union Pacific``, ``two shares of KCC``."""
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
            if last is None or count is not None or len(out) - last != 1:
                raise OrderError(f"I cannot tell which share {toks[i]!r} counts; {example}", line)
            if not 1 <= n <= _MAX_SHARES:  # type: ignore[operator]
                raise OrderError(f"{n} is not a number of shares; {example}", line)
            out += [out[-1]] * (n - 1)  # type: ignore[operator]
            i += 1 if m else 2
            last = None
            continue
        n = _count(toks[i])
        if n is not None:
            if count is not None:
                raise OrderError(f"two numbers in a row ({count} {toks[i]}); {example}", line)
            if not 1 <= n <= _MAX_SHARES:
                raise OrderError(f"{n} is not a number of shares; {example}", line)
            count = n
            i += 1
            if i < len(toks) and _low(toks[i]) in ("x", "*", "times"):
                i += 1
            continue
        found = companies_at(toks, i)
        if not found:
            word = toks[i]
            if card_word(word):
                raise OrderError(f"{word!r} is a track card, not a share; {example}", line)
            raise OrderError(_not_a_company(word), line)
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
            raise OrderError(f"{count} of what? {example}", line)
    return out


def _parse_take(rest: list[str], line: str) -> Take:
    original = {_low(t): t for t in rest}
    words = [_low(t) for t in rest if t not in (",", "+")]
    text = " ".join(words)
    text = re.sub(r"(?:#|\bno\b\.?|\bnr\b\.?|\bnumber\b)\s*(\d)", r"place \1", text)
    words = [w for w in text.split() if w not in FILLERS | {
        "from", "in", "on", "at", "to", "into", "hand", "me", "please", "it",
    }]
    usage = (
        "say which share to take: 'take stack' (the top card), 'take UP', a face-up "
        "company ('take KCC') or a face-up place ('take display 2')"
    )
    if not words:
        raise OrderError(usage, line)
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
            bad = others[found[0][1]] if found else " ".join(others)
            bad = original.get(bad, bad)
            if card_word(bad):
                raise OrderError(f"{bad!r} is a track card; {usage}", line)
            raise OrderError(
                f"{bad!r} is not a company{_suggest_company(bad)}; {usage}", line
            )
        company = found[0][0]
    if company == UP:
        if numbers:
            raise OrderError("a build takes one share; " + usage, line)
        return Take("up")
    if company is not None:
        if numbers and numbers not in (["one"], ["1"]):
            raise OrderError("a build takes one share; " + usage, line)
        if has_stack:
            raise OrderError(
                f"the top card of the stack is unseen: write 'take stack', or 'take {company}' "
                f"for a face-up {company} share",
                line,
            )
        return Take("display", company)
    if numbers:
        if has_stack or len(numbers) > 1:
            raise OrderError(usage, line)
        word = numbers[0]
        if word in ORDINALS or word in NUMBER_WORDS:
            if not has_display:
                raise OrderError(
                    f"{word!r} of what? write 'take display 2' for a face-up place, or "
                    "'take stack' for the top card",
                    line,
                )
            place = ORDINALS.get(word) or NUMBER_WORDS[word]
        else:
            place = int(word)
        if not 1 <= place <= 4:
            raise OrderError(f"the face-up display has places 1-4, not {place}", line)
        return Take("display", place=place)
    if has_stack:
        return Take("stack")
    if "pile" in words:
        raise OrderError(
            "'pile' could be the share stack or the UP pile: write 'take stack' or 'take UP'",
            line,
        )
    raise OrderError("say which face-up share: 'take KCC' or 'take display 2'", line)


def _parse_swap(rest: list[str], line: str) -> str | None:
    example = "write e.g. 'swap MRR' to return an MRR share and take a UP share"
    toks = _drop(rest, FILLERS | {"one", "box", "back", "pile", "please", "from", "hand"})
    if [_low(t) for t in toks] in (["none"], ["nothing"], ["no"]):
        return None
    connectors = {"for", "with", "to", "into", "-", "against", "get", "take", "receive", "and"}
    # "swap El Paso and Rio Grande for UP": a connector may belong to a company name;
    # try each reading, the whole words first
    cuts = [None] + [i for i, t in enumerate(toks) if _low(t) in connectors]
    errors: list[OrderError] = []
    for cut in cuts:
        left, right = (toks, []) if cut is None else (toks[:cut], _drop(toks[cut + 1:], connectors))
        try:
            if right and _shares(right, line, example) != [UP]:
                raise OrderError("a swap always takes a UP share; " + example, line)
            if not left:
                raise OrderError("say which share to return; " + example, line)
            shares = _shares(left, line, example)
            if cut is None and len(shares) == 2 and shares[1] == UP:
                shares = shares[:1]  # "swap MRR UP"
            if len(shares) != 1:
                raise OrderError("a swap returns exactly one share; " + example, line)
            return shares[0]
        except OrderError as exc:
            errors.append(exc)
    # the most telling reason: one about the swap itself, else the whole words' one
    for exc in errors:
        if exc.reason.startswith(("a swap always", "a swap returns")):
            raise exc
    raise errors[0]


def _parse_cards(tokens: list[str], line: str) -> tuple[str | None, str | None]:
    """``(card, space)`` from the card words of a build: ``black``, ``joker``,
    ``joker as white``, ``white joker``."""
    words = [_low(t) for t in tokens]
    cards = [card_word(w) for w in words if card_word(w)]
    said_as = "as" in words
    example = "e.g. 'black', 'joker' or 'joker as white'"
    if not cards:
        if said_as:
            raise OrderError(f"say which track card to play, {example}", line)
        return None, None
    jokers = [c for c in cards if c == JOKER]
    types = [c for c in cards if c != JOKER]
    if len(jokers) > 1 or len(types) > 1:
        raise OrderError(f"a build plays one track card: {example}", line)
    if jokers and types:
        return JOKER, types[0]
    if jokers:
        return JOKER, None
    if said_as:
        raise OrderError(
            f"say which card you play: '{types[0]}' for a {types[0]} card, or "
            f"'joker as {types[0]}' for a joker",
            line,
        )
    return types[0], None


def _is_cardish(tok: str) -> bool:
    low = _low(tok)
    return bool(card_word(low)) or low in CARDISH or low in BUILD_FILLERS


def _build_rest(tokens: list[str], board: Board, line: str) -> tuple[tuple[str, str | None, str | None] | None, str]:
    """Section and card from the tokens of a build without the company:
    ``((section, card, space), "")`` or ``(None, reason)``.  Card words may come
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
                return (sid, card, space), ""
    middle = tokens[lead:n - trail]
    # "... joker as gold": the word after "as" is not a track type
    for k in range(len(middle) - 1):
        if _low(middle[k]) == "as" and not card_word(middle[k + 1]) and \
                _section(middle[:k - 1] if k and _is_cardish(middle[k - 1]) else middle[:k], board, explain=False)[0]:
            return None, f"{middle[k + 1]!r} is not a track type; a joker plays as one of {', '.join(TRACK_TYPES)}"
    _, reason = _section(middle, board)
    for bad, shorter in ((middle[-1:], middle[:-1]), (middle[:1], middle[1:])):
        if bad and shorter and _section(shorter, board, explain=False)[0]:
            what = "a company" if companies_at(bad, 0) else "not a track card"
            return None, f"{bad[0]!r} is {what}; play one of {CARD_LIST}"
    return None, reason or "build needs a section as CITY-CITY: e.g. 'build KCC DEN-KCY white'"


def _parse_build(rest: list[str], board: Board, line: str) -> Build:
    tokens = [t for t in rest if t not in (",", "+")]
    example = "e.g. 'build KCC DEN-KCY white'"
    if not tokens:
        raise OrderError(f"say which company builds where, {example}", line)
    readings: set[tuple[str, str, str | None, str | None]] = set()
    first_reason = None
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
        raise OrderError(
            "this build can be read in more than one way (" + " or ".join(texts)
            + "); write the company abbreviation and the section as CITY-CITY",
            line,
        )
    if not readings:
        got, _ = _build_rest(tokens, board, line)
        if got:
            raise OrderError(
                f"say which company builds on {got[0]}: e.g. 'build KCC {got[0]} black'", line
            )
        if first_reason is not None:
            raise OrderError(first_reason, line)
        if _count(tokens[0]) is not None and companies_at(tokens, 1):
            raise OrderError(f"a build places one train: {example}", line)
        if len(tokens) > 1 and _build_rest(tokens[1:], board, line)[0]:
            raise OrderError(
                f"{tokens[0]!r} is not a company{_suggest_company(tokens[0])}; write the "
                f"company first, {example}",
                line,
            )
        raise OrderError(
            f"build needs a company first{_suggest_company(tokens[0])}: {example}", line
        )
    company, sid, card, space = readings.pop()
    if company == UP:
        raise OrderError(
            "Union Pacific (UP) has no trains and builds no track; build for one of "
            + ", ".join(COMPANIES),
            line,
        )
    return Build(company, sid, card, space)


def _parse_discard(rest: list[str], line: str) -> str:
    toks = _drop(rest, FILLERS | {"one", "1", "track", "stripe", "striped", "from", "hand",
                                   ",", "please", "away"})
    usage = f"say which track card to discard: {CARD_LIST}"
    if not toks:
        raise OrderError(usage, line)
    cards = [card_word(t) for t in toks]
    if None in cards:
        bad = toks[cards.index(None)]
        raise OrderError(f"{bad!r} is not a track card; {usage}", line)
    if len(cards) > 1:
        raise OrderError(f"discard one track card: {CARD_LIST}", line)
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
        raise OrderError(
            f"this order is too long ({len(tokens)} words); write one order per line, "
            "e.g. 'build KCC DEN-KCY white'",
            line,
        )
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
        example = "write e.g. 'invest 2 KCC' or 'invest KCC UP'"
        if not _drop(rest, FILLERS | {"in"}):
            raise OrderError("say which shares to invest: e.g. 'invest 2 KCC' or 'invest KCC UP'", line)
        return [("invest", _shares(rest, line, example))]
    if verb in DISCARD_VERBS:
        return [("discard", _parse_discard(rest, line))]
    if verb in PASS_VERBS:
        more = _drop(rest, {"turn", "this", "my", "the", "i", "and", "with", ","})
        if not more:
            return [("pass", True)]
        cards = [card_word(t) for t in more]
        if len(cards) == 1 and cards[0]:
            return [("pass", True), ("discard", cards[0])]
        raise OrderError("write 'pass; discard CARD' with one of " + CARD_LIST, line)
    if verb in REDRAW_VERBS:
        card = _parse_discard(rest, line)
        if card == JOKER:
            raise OrderError("a joker is never dead: redraw plain, black-white, black or white", line)
        return [("redraw", card)]
    if verb in START_VERBS:
        example = "the initial investment is one share: e.g. 'start KCC'"
        shares = _shares(_drop(rest, {"with", "investment", "invest", "is", "in"}), line, example)
        if not shares:
            raise OrderError("say which share is your initial investment: e.g. 'start KCC'", line)
        if len(shares) != 1:
            raise OrderError(example, line)
        return [("start", shares[0])]
    raise OrderError(_unknown(tokens, board), line)


def _unknown(tokens: list[str], board: Board) -> str:
    """What to say about a part that starts with no known verb."""
    word = tokens[0]
    low = _low(word)
    text = " ".join(tokens)
    cmd = command(text)
    if cmd:
        return f"write the command {cmd!r} on a line by itself"
    if low in ("stack", "top") and len(tokens) <= 2:
        return f"{text!r} alone is not an order: write 'take stack' after a build"
    card = card_word(low)
    if card and len(tokens) == 1:
        return (
            f"{word!r} alone is not an order: write 'discard {card}' after an invest, "
            f"or 'pass; discard {card}'"
        )
    found = companies_at(tokens, 0)
    if found and found[0][1] == len(tokens):
        abbr = found[0][0]
        return (
            f"{text!r} alone is not an order: write 'start {abbr}' for the initial "
            f"investment, 'invest {abbr}', or 'take {abbr}' after a build"
        )
    if found:
        try:
            build = _parse_build(tokens, board, "")
        except OrderError:
            pass
        else:
            return f"an order starts with a verb: did you mean '{build}'?"
    near = difflib.get_close_matches(low, sorted(VERBS | set(COMMANDS)), n=1, cutoff=0.7)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return (
        f"I do not know the order {word!r}{hint}; orders are build, take, swap, invest, "
        "discard, pass and start (commands: help, status, history, rules)"
    )


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
    so a mistyped order is never skipped silently."""
    if command(" ".join(tokens)):
        return False  # a command inside an order line is pointed out
    for tok in tokens:
        low = _low(tok)
        if (low in VERBS or low in ORDER_WORDS or card_word(tok) or company_of(tok)
                or any(ch.isdigit() for ch in tok) or city_index(board).find(tok, short=False)[0]):
            return False
    return True


def parse_turn(lines: list[str], board: Board) -> Action:
    """Read the order lines of one mail into one action.

    ``lines`` are order lines; mail commands (``help``, ``status`` ...; see
    ``command``), ``game:``/``secret:`` lines, greetings and sign-offs ("Hi all",
    "Thanks, Bob") and lines of plain words (``_is_prose``) are skipped.  Raises OrderError naming the line and what would be
    understood when a line cannot be read or the lines do not make one turn (e.g. a
    build together with an invest)."""
    parts = _Parts()
    signed_off = False
    for raw in lines:
        if len(str(raw)) > MAX_LINE:
            raise OrderError(
                f"this line is too long ({len(str(raw))} characters); write one order per "
                "line, e.g. 'build KCC DEN-KCY white'",
                str(raw)[:60] + "...",
            )
    for raw in lines:
        for line in str(raw).splitlines() or [""]:
            if command(line) or _KEY_LINE_RE.match(line):
                continue
            for piece in _pieces(line):
                for sub in _split_verbs(_tokens(piece)):
                    if _is_chatter(sub):
                        signed_off = signed_off or _low(sub[0]) in SIGN_OFFS
                        continue
                    if signed_off and _low(sub[0]) not in VERBS:
                        continue
                    if _is_prose(sub, board):
                        continue
                    _parse_part(sub, board, parts, raw)
    return _combine(parts, lines)


def _combine(parts: _Parts, lines: list[str]) -> Action:
    given = [k for k in ("start", "build", "take", "swap", "invest", "discard", "pass")
             if k in (parts.lines or {})]
    action = _combine_main(parts, lines, given)
    if parts.redraw is not None:
        if isinstance(action, Start):
            raise OrderError("redraw belongs to a turn, not to the initial investment",
                             parts.line_of("redraw"))
        action = replace(action, redraw=parts.redraw)
    return action


def _combine_main(parts: _Parts, lines: list[str], given: list[str]) -> Action:
    if parts.start is not None:
        others = [k for k in given if k != "start"]
        if others:
            raise OrderError(
                "the initial investment mail carries only 'start SHARE', no "
                + others[0] + " order",
                parts.line_of(others[0]),
            )
        return Start(parts.start)
    if parts.build is not None:
        for other in ("invest", "pass"):
            if other in given:
                raise OrderError(
                    f"a turn is either build or {other}, not both", parts.line_of(other)
                )
        if parts.discard is not None:
            raise OrderError(
                "a build plays its track card and discards nothing; 'discard' belongs to "
                "invest or pass",
                parts.line_of("discard"),
            )
        return Build(parts.build.company, parts.build.section, parts.build.card,
                     parts.build.space, parts.take, parts.swap)
    for other in ("take", "swap"):
        if other in given:
            raise OrderError(
                f"{other} follows a build: e.g. 'build KCC DEN-KCY white; take stack'",
                parts.line_of(other),
            )
    if parts.invest is not None:
        if parts.passing:
            raise OrderError("a turn is either invest or pass, not both", parts.line_of("pass"))
        return Invest(tuple(sorted(parts.invest)), parts.discard)
    if parts.passing or parts.discard is not None:
        return Pass(parts.discard)
    if parts.redraw is not None:
        raise OrderError("redraw goes with a build, invest or pass in the same mail",
                         parts.line_of("redraw"))
    raise NoOrderFound(
        "no order found: write e.g. 'build KCC DEN-KCY white; take stack' or "
        "'invest 2 KCC; discard plain'",
        " / ".join(str(x) for x in lines),
    )
