"""The order language: order lines of a mail to one action, and back.

Forgiving by design: case-insensitive; companies by abbreviation or full name
(``KCC``, ``Kansas City Central``, ``ep&rg``); cities by id or name; a section as
``CITY-CITY`` in either order; one order per line, or several on a line separated by
``;``.  A mail carries one turn, so the lines of a turn are combined::

    build KCC DEN-KCY black        place a KCC train, playing a black track card
    build EPRG elp-phx joker as white
    take stack | take UP | take KCC | take display 2
    swap MRR                       return an MRR share from hand, take a UP share
    invest 2 KCC | invest KCC UP   then: discard plain
    pass; discard white            only when neither BUILD nor INVEST is possible
    start KCC                      the initial investment

``str(action)`` is the canonical text; ``parse_turn([str(a)], board) == a``.
See ``templates/help.txt`` for the player's guide.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .actions import Action, Build, Invest, Pass, Start, Take
from .board import Board
from .components import JOKER, TRACK_TYPES, UP, company_abbr

COMMANDS = ("help", "status", "history", "rules")
"""Mail commands that are not moves (answered by the moderator loop)."""


class OrderError(ValueError):
    """An order line that cannot be read.  ``line`` is the offending text and
    ``reason`` what is wrong and what would be understood."""

    def __init__(self, reason: str, line: str = ""):
        super().__init__(f"{reason}" + (f" (in: {line!r})" if line else ""))
        self.reason = reason
        self.line = line


_CARD_WORDS = {
    "plain": "plain", "none": "plain", "nostripe": "plain", "unstriped": "plain", "p": "plain",
    "black-white": "black-white", "blackwhite": "black-white", "bw": "black-white",
    "b/w": "black-white", "black/white": "black-white", "b-w": "black-white",
    "black": "black", "b": "black",
    "white": "white", "w": "white",
    "joker": JOKER, "wild": JOKER, "any": JOKER, "j": JOKER,
}

_TAKE_WORDS = ("take", "draw", "pick", "get")
_SWAP_WORDS = ("swap", "return", "exchange", "trade")
_BUILD_WORDS = ("build", "place", "lay", "b")
_INVEST_WORDS = ("invest", "i")
_START_WORDS = ("start", "initial", "choose", "first")


def card_word(word: str) -> str | None:
    """Track card kind for ``word`` (``"BW"`` → ``"black-white"``, ``"wild"`` →
    ``"joker"``), or None."""
    return _CARD_WORDS.get(word.lower().strip(".,"))


def _normalise(text: str) -> str:
    text = text.strip().replace("\u2013", "-").replace("\u2014", "-")
    text = re.sub(r"\bblack\s*(?:and|&|/|-)?\s*white\b", "black-white", text, flags=re.I)
    return text


def _company_prefix(tokens: list[str]) -> tuple[str | None, int]:
    """Longest run of tokens at the start naming a company: (abbr, tokens used)."""
    for n in range(min(len(tokens), 6), 0, -1):
        abbr = company_abbr(" ".join(tokens[:n]))
        if abbr:
            return abbr, n
    return None, 0


def _companies(text: str, line: str) -> list[str]:
    """Parse a list of shares: ``"2 KCC"``, ``"KCC KCC"``, ``"KCC and UP"``,
    ``"2x Kansas City Central"``."""
    tokens = [t for t in re.split(r"[\s,+]+", text) if t and t.lower() not in ("and", "&", "share", "shares", "of")]
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        m = re.fullmatch(r"(\d+)x?|x(\d+)", tok.lower())
        count = 1
        if m:
            count = int(m.group(1) or m.group(2))
            i += 1
            if i < len(tokens) and tokens[i].lower() == "x":
                i += 1
            if count < 1 or count > 20:
                raise OrderError(f"{count} is not a number of shares one can invest", line)
        abbr, used = _company_prefix(tokens[i:])
        if not abbr:
            raise OrderError(
                f"{' '.join(tokens[i:i + 3]) or 'nothing'!s} is not a company; use an abbreviation "
                "like KCC or UP, or a full name like Kansas City Central",
                line,
            )
        out += [abbr] * count
        i += used
    return out


@dataclass
class _Parts:
    build: tuple[str, str, str | None, str | None, str] | None = None  # company, section, card, space, line
    take: Take | None = None
    swap: str | None = None
    invest: list[str] | None = None
    discard: str | None = None
    passing: bool = False
    start: str | None = None


def _parse_part(part: str, board: Board, parts: _Parts, line: str) -> None:
    words = part.split()
    if not words:
        return
    verb = words[0].lower().rstrip(":")
    rest = part[len(words[0]):].strip()

    def once(field: str) -> None:
        if getattr(parts, field) not in (None, False):
            raise OrderError(f"a turn has only one {verb} order", line)

    if verb in _BUILD_WORDS:
        once("build")
        parts.build = _parse_build(rest, board, line)
    elif verb in _TAKE_WORDS:
        once("take")
        parts.take = _parse_take(rest, line)
    elif verb in _SWAP_WORDS:
        once("swap")
        what = re.sub(r"\s+(for|with)\s+(up|union pacific)\s*$", "", rest, flags=re.I).strip()
        shares = _companies(what, line)
        if len(shares) != 1:
            raise OrderError("swap returns exactly one share: e.g. 'swap MRR'", line)
        parts.swap = shares[0]
    elif verb in _INVEST_WORDS:
        once("invest")
        if not rest:
            raise OrderError("say which shares to invest: e.g. 'invest 2 KCC' or 'invest KCC UP'", line)
        parts.invest = _companies(rest, line)
    elif verb == "discard":
        once("discard")
        card = card_word(rest) if rest else None
        if card is None:
            raise OrderError(
                "say which track card to discard: plain, black-white, black, white or joker", line
            )
        parts.discard = card
    elif verb in ("pass", "skip"):
        once("passing")
        parts.passing = True
        if rest:
            _parse_part(rest, board, parts, line)
    elif verb in _START_WORDS:
        once("start")
        shares = _companies(rest, line)
        if len(shares) != 1:
            raise OrderError("the initial investment is one share: e.g. 'start KCC'", line)
        parts.start = shares[0]
    else:
        raise OrderError(
            f"I do not know the order {words[0]!r}; orders are build, take, swap, invest, "
            "discard, pass, start (and the commands help, status, history, rules)",
            line,
        )


def _parse_take(rest: str, line: str) -> Take:
    r = rest.lower().strip()
    r = re.sub(r"^(the|a|one)\s+", "", r)
    r = re.sub(r"\s+(share|card)s?$", "", r)
    if r in ("stack", "top", "deck", "pile", "blind", "top of stack", "from stack", "from the stack"):
        return Take("stack")
    if r in ("none", "nothing"):
        return Take("none")
    m = re.fullmatch(r"(?:display|face-?up|place|card|#)?\s*#?([1-4])", r)
    if m:
        return Take("display", place=int(m.group(1)))
    r = re.sub(r"^(from\s+)?(display|face-?up)\s+", "", r)
    abbr = company_abbr(r) if r else None
    if abbr == UP or r in ("up pile", "up share"):
        return Take("up")
    if abbr:
        return Take("display", abbr)
    raise OrderError(
        "say which share to take: 'take stack' (top card), 'take UP', a face-up company "
        "('take KCC') or a display place ('take display 2')",
        line,
    )


def _parse_build(rest: str, board: Board, line: str) -> tuple[str, str, str | None, str | None, str]:
    tokens = rest.split()
    company, used = _company_prefix(tokens)
    if not company:
        raise OrderError(
            "build needs a company first: e.g. 'build KCC DEN-KCY black'", line
        )
    tokens = tokens[used:]
    if tokens and tokens[0].lower() in ("on", "at"):
        tokens = tokens[1:]
    # trailing card words: [with] CARD [as TYPE]
    card = space = None
    if len(tokens) >= 3 and tokens[-2].lower() == "as" and card_word(tokens[-1]) in TRACK_TYPES:
        space = card_word(tokens[-1])
        tokens = tokens[:-2]
    if tokens and card_word(tokens[-1]) and len(tokens) > 1:
        card = card_word(tokens[-1])
        tokens = tokens[:-1]
        if tokens and tokens[-1].lower() in ("with", "using", "card"):
            tokens = tokens[:-1]
    if space is not None and card is None:
        card = JOKER
    section_text = " ".join(tokens)
    sid = board.find_section(section_text) if section_text else None
    if sid is None:
        raise OrderError(_section_help(section_text, board), line)
    return company, sid, card, space, line


def _section_help(text: str, board: Board) -> str:
    if not text:
        return "build needs a section as CITY-CITY: e.g. 'build KCC DEN-KCY black'"
    parts = [p.strip() for p in re.split(r"\s*-\s*|\s+to\s+", text) if p.strip()]
    if len(parts) == 2:
        unknown = [p for p in parts if board.find_city(p) is None]
        if unknown:
            return f"{unknown[0]!r} is not a city on the board (city ids like DEN, or names like Denver)"
        a, b = (board.find_city(p) for p in parts)
        return f"there is no section between {a} and {b}; sections from {a}: " + ", ".join(
            s.id for s in board.sections_at(a)  # type: ignore[arg-type]
        )
    return f"{text!r} is not a section; write it as CITY-CITY, e.g. DEN-KCY"


def split_orders(lines: list[str]) -> list[str]:
    """Order parts of the lines: split on ``;``, stripped, empty parts dropped."""
    return [p.strip() for line in lines for p in line.split(";") if p.strip()]


def parse_turn(lines: list[str], board: Board) -> Action:
    """Read the order lines of one mail into one action.

    ``lines`` are order lines (commands such as ``help`` already removed).  Raises
    OrderError naming the line and what would be understood when a line cannot be
    read or the lines do not make one turn (e.g. a build together with an invest)."""
    parts = _Parts()
    for line in lines:
        for part in line.split(";"):
            part = _normalise(part)
            if part:
                _parse_part(part, board, parts, line)
    all_lines = " / ".join(lines)
    if parts.start is not None:
        if parts.build or parts.invest or parts.take or parts.swap or parts.discard or parts.passing:
            raise OrderError("the initial investment mail carries only 'start SHARE'", all_lines)
        return Start(parts.start)
    if parts.build is not None:
        if parts.invest is not None or parts.passing:
            raise OrderError("a turn is either build or invest, not both", all_lines)
        if parts.discard is not None:
            raise OrderError(
                "a build plays its track card; 'discard' belongs to invest or pass", all_lines
            )
        company, sid, card, space, _ = parts.build
        return Build(company, sid, card, space, parts.take, parts.swap)
    if parts.take is not None or parts.swap is not None:
        raise OrderError("take and swap follow a build: e.g. 'build KCC DEN-KCY black; take stack'", all_lines)
    if parts.invest is not None:
        if parts.passing:
            raise OrderError("a turn is either invest or pass, not both", all_lines)
        return Invest(tuple(sorted(parts.invest)), parts.discard)
    if parts.passing or parts.discard is not None:
        return Pass(parts.discard)
    raise OrderError("no order found: write e.g. 'build KCC DEN-KCY black; take stack' or 'invest 2 KCC; discard plain'", all_lines)


def format_action(action: Action) -> str:
    """Canonical order text of an action (same as ``str(action)``)."""
    return str(action)
