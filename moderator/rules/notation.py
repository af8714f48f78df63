"""The strict order notation: exactly the text ``str(action)`` writes, and nothing else.

Game files record every order in this notation and replay it with ``parse_action``,
never with the forgiving mail parser (``moderator.orders.parse_turn``), so making the
mail language friendlier (new aliases, new ambiguity rules) can never stop an
archived game from loading.  python-chess's UCI (``Move.uci()`` /
``Move.from_uci()``) beside SAN is the model.

The notation is the text of a *complete* action, as the engine records it
(``Game.push`` stores the action ``Game.resolve`` returns): ``parse_action(str(a)) == a``
for every such action, and ``str(parse_action(t)) == t`` for every text accepted.
It depends on no board: a section is written by its id ``AAA-BBB`` (two city ids of
2-5 capital letters or digits, the first a letter, as ``check_board`` requires, in
sorted order, as ``section_id`` writes them).

Grammar (exact: lower-case words, single spaces, parts separated by ``"; "``, no
leading, trailing or doubled spaces, no final ``;``)::

    action   := start | [redraw "; "] (build | invest | pass)
    start    := "start " SHARE
    redraw   := "redraw " TYPE
    build    := "build " COMPANY " " SECTION " " CARD "; " take ["; swap " (SHARE | "drawn")]
    CARD     := TYPE | "joker as " TYPE
    take     := "take " (COMPANY | "UP" | "stack" | "none" | "display " PLACE)
    invest   := "invest " (SHARE | COUNT " " SHARE | SHARE " " SHARE) ["; discard " KIND]
                (two shares: different, in sorted order)
    pass     := "pass" ["; discard " KIND]
    SECTION  := CITY "-" CITY          (first < second)
    CITY     := [A-Z][A-Z0-9]{1,4}
    COMPANY  := WW | MRR | KCC | ESL | UMR | SFRB | DM | MS | BNL | EPRG
    SHARE    := COMPANY | UP
    TYPE     := plain | black-white | black | white
    KIND     := TYPE | joker           (a track card)
    COUNT    := 2, 3, ... (no leading zero)
    PLACE    := 1 | 2 | 3 | 4

``take COMPANY`` is a face-up card of the display, ``take UP`` the UP pile, ``take
stack`` the top card of the share stack, ``take none`` no draw (no share left), and
``take display N`` the N-th face-up card (the engine records the company instead).
``swap drawn`` (after ``take stack`` only) returns the share that take drew, unseen
when the order was written: the game file records ``drawn``, which the seeded
stack makes exact on replay (older files never hold it).

Examples::

    start KCC
    build KCC DEN-KCY black; take stack
    build KCC DEN-KCY black; take stack; swap drawn
    redraw white; build EPRG ELP-PHX joker as plain; take MS; swap DM
    invest 2 KCC; discard plain
    invest KCC UP
    pass; discard white
"""
from __future__ import annotations

import re

from .actions import DRAWN, Action, Build, Invest, Pass, Start, Take
from .components import COMPANIES, JOKER, TRACK_TYPES, UP

__all__ = ["NotationError", "parse_action", "CITY_ID_PATTERN", "SECTION_PATTERN"]

CITY_ID_PATTERN = r"[A-Z][A-Z0-9]{1,4}"
"""A city id in the notation: the short ids ``check_board`` requires."""

SECTION_PATTERN = rf"({CITY_ID_PATTERN})-({CITY_ID_PATTERN})"
"""A section id ``AAA-BBB`` (the two city ids as groups; sorted order is checked
separately)."""

_SECTION_RE = re.compile(SECTION_PATTERN)
_COMPANIES = frozenset(COMPANIES)
_SHARES = _COMPANIES | {UP}
_TYPES = frozenset(TRACK_TYPES)
_KINDS = _TYPES | {JOKER}
_COUNT_RE = re.compile(r"[1-9][0-9]*")
_PLACE_RE = re.compile(r"[1-4]")


class NotationError(ValueError):
    """A text that is not the strict notation of an action.  The message says which
    part is wrong and what was expected."""


def parse_action(text: str) -> Action:
    """The action whose ``str()`` is exactly ``text``.

    ``text`` is one line of strict notation (see the module docstring); returns a
    ``Start``, ``Build``, ``Invest`` or ``Pass`` (a ``Build`` always with its
    ``Take``).  Pure: no board, no game.  Raises ``NotationError`` for anything that
    is not exactly such a text: other case, extra or missing spaces, aliases, city or
    company names, a section not in ``AAA-BBB`` sorted form, missing parts, unknown
    companies, track types or cards, a trailing ``;``."""
    if not isinstance(text, str):
        raise NotationError(f"an order must be text, not {type(text).__name__}")
    parts = text.split("; ")
    redraw: str | None = None
    verb, _, rest = parts[0].partition(" ")
    if verb == "redraw":
        redraw = _one_of(rest, _TYPES, "a track type after 'redraw'", text)
        parts = parts[1:]
        if not parts:
            raise NotationError(f"{text!r}: 'redraw' must be followed by '; ' and a turn")
        verb, _, rest = parts[0].partition(" ")
    if verb == "start":
        if redraw is not None:
            raise NotationError(f"{text!r}: 'start' cannot follow a redraw")
        _no_more(parts, 1, text)
        action: Action = Start(_one_of(rest, _SHARES, "a share after 'start'", text))
    elif verb == "build":
        action = _build(rest, parts, redraw, text)
    elif verb == "invest":
        action = Invest(_shares(rest, text), _discard(parts, text), redraw)
    elif parts[0] == "pass":
        action = Pass(_discard(parts, text), redraw)
    else:
        raise NotationError(
            f"{text!r}: expected 'start', 'build', 'invest', 'pass' or 'redraw', got {parts[0]!r}"
        )
    if str(action) != text:  # the grammar above is exact; this keeps it honest
        raise NotationError(f"{text!r} is not the canonical text {str(action)!r}")
    return action


def _one_of(word: str, allowed: frozenset[str], what: str, text: str) -> str:
    if word not in allowed:
        raise NotationError(f"{text!r}: expected {what} ({', '.join(sorted(allowed))}), got {word!r}")
    return word


def _no_more(parts: list[str], n: int, text: str) -> None:
    if len(parts) > n:
        raise NotationError(f"{text!r}: unexpected part {parts[n]!r}")


def _build(rest: str, parts: list[str], redraw: str | None, text: str) -> Build:
    words = rest.split(" ")
    if len(words) not in (3, 5):
        raise NotationError(
            f"{text!r}: expected 'build COMPANY AAA-BBB CARD' (CARD a track type or 'joker as TYPE')"
        )
    company = _one_of(words[0], _COMPANIES, "a company", text)
    m = _SECTION_RE.fullmatch(words[1])
    if not m:
        raise NotationError(f"{text!r}: expected a section id AAA-BBB, got {words[1]!r}")
    if not m.group(1) < m.group(2):
        raise NotationError(
            f"{text!r}: a section id names its cities in sorted order ({m.group(2)}-{m.group(1)})"
        )
    if len(words) == 3:
        card = _one_of(words[2], _TYPES, "a track type or 'joker as TYPE'", text)
        space = None
    else:
        if words[2:4] != [JOKER, "as"]:
            raise NotationError(f"{text!r}: expected 'joker as TYPE', got {' '.join(words[2:])!r}")
        card, space = JOKER, _one_of(words[4], _TYPES, "a track type after 'joker as'", text)
    if len(parts) < 2:
        raise NotationError(f"{text!r}: a build is followed by '; take ...'")
    take = _take(parts[1], text)
    swap = None
    if len(parts) > 2:
        verb, _, what = parts[2].partition(" ")
        if verb != "swap":
            raise NotationError(f"{text!r}: expected '; swap SHARE', got {parts[2]!r}")
        swap = DRAWN if what == DRAWN else _one_of(what, _SHARES, "a share or 'drawn' after 'swap'", text)
        _no_more(parts, 3, text)
    return Build(company, m.group(0), card, space, take, swap, redraw)


def _take(part: str, text: str) -> Take:
    verb, _, what = part.partition(" ")
    if verb != "take":
        raise NotationError(f"{text!r}: expected '; take ...' after the build, got {part!r}")
    if what == "stack":
        return Take("stack")
    if what == UP:
        return Take("up")
    if what == "none":
        return Take("none")
    if what in _COMPANIES:
        return Take("display", what)
    kw, _, place = what.partition(" ")
    if kw == "display" and _PLACE_RE.fullmatch(place):
        return Take("display", None, int(place))
    raise NotationError(
        f"{text!r}: expected 'take' with a company, 'UP', 'stack', 'none' or 'display 1'-'display 4', "
        f"got {part!r}"
    )


def _shares(rest: str, text: str) -> tuple[str, ...]:
    words = rest.split(" ")
    if len(words) == 1:
        return (_one_of(words[0], _SHARES, "a share after 'invest'", text),)
    if len(words) == 2 and _COUNT_RE.fullmatch(words[0]):
        n = int(words[0])
        if n < 2:
            raise NotationError(f"{text!r}: one share is written without a count")
        return (_one_of(words[1], _SHARES, "a share after the count", text),) * n
    if len(words) == 2:
        a = _one_of(words[0], _SHARES, "a share after 'invest'", text)
        b = _one_of(words[1], _SHARES, "a second share", text)
        if not a < b:
            raise NotationError(f"{text!r}: two shares are two companies in sorted order")
        return (a, b)
    raise NotationError(f"{text!r}: expected 'invest SHARE', 'invest N SHARE' or 'invest SHARE SHARE'")


def _discard(parts: list[str], text: str) -> str | None:
    if len(parts) == 1:
        return None
    _no_more(parts, 2, text)
    verb, _, kind = parts[1].partition(" ")
    if verb != "discard":
        raise NotationError(f"{text!r}: expected '; discard CARD', got {parts[1]!r}")
    return _one_of(kind, _KINDS, "a track card after 'discard'", text)


def public_order(order: str, initial_open: bool) -> str:
    """An order text (the strict notation) as every player may read it: the share
    returned in an UP swap is secret (``swap (a share) for UP``), and so is an
    initial investment while the game is still in its initial phase
    (``initial_open`` False: ``start (secret initial investment)``).
    Rules: What each player may know."""
    if order.startswith("start ") and not initial_open:
        return "start (secret initial investment)"
    return re.sub(r"; swap \S+", "; swap (a share) for UP", order)
