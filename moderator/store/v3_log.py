"""The English log sentences of game files of format 3 and earlier, read once.

Until format 3 a game file kept its public log (``log``) as the English
sentences the engine wrote.  Format 4 keeps the events as mappings
(``moderator.rules.events.to_data``).  The migration ``_v3_to_v4``
(``moderator.store.gamefile``) reads each old sentence here into that mapping:
the only place pbem ever parses a log sentence.  The patterns are the sentences
of every pbem that wrote format 1-3 files (``self.log.append`` in
``moderator/rules/engine.py`` before format 4); ``tests/test_events.py`` checks
that the events of random games, worded in English, read back to themselves, and
that every frozen fixture's migrated log equals the events of its replay.

``read_log`` returns None for a log it cannot read whole (a line no pattern
reads, names that do not fit the game's players): the migration then leaves the
log out and the loader replays the history, which gives the events anew.
"""
from __future__ import annotations

import re
from typing import Any

_P = r"(?P<player>.+)"
_CARD = r"(?P<card>[a-z]+(?:-[a-z]+)?)"

PATTERNS: tuple[tuple[str, str], ...] = (
    ("set_up", r"Game set up: (?P<count>\d+) players \((?P<players>.+)\), ruleset (?P<ruleset>[\w-]+)\."),
    ("four_of_a_kind", r"Four (?P<company>\w+) shares face up: removed from the game and replaced\."),
    ("face_up", r"Face-up shares: (?P<shares>.+)\."),
    ("initial_chosen", _P + r" has chosen an initial investment\."),
    ("passes_discarding", _P + r" can neither build nor invest and passes, discarding a " + _CARD + r" track card\."),
    ("passes", _P + r" can neither build nor invest and passes\."),
    ("initial_revealed", r"Initial investments revealed: (?P<choices>.+)\."),
    ("starts", _P + r" starts\."),
    ("reshuffled", r"The track deck was empty: the (?P<count>\d+) discards were shuffled into a new deck\."),
    ("no_track_left", r"No track card is left for " + _P + r" to draw \(deck and discards are empty\)\."),
    ("dead_card", _P + r" shows a dead " + _CARD + r" track card \(every (?P=card) space is full\), "
                  r"removes it from the game and draws a replacement\."),
    ("dividend_unused", r"The (?P<number>\d+)(?:st|nd|rd|th)? dividend card is drawn; it is not used "
                        r"\(the game ends with dividend (?P<final>\d+)\)\."),
    ("dividend_announced", r"A dividend card is drawn: dividend (?P<number>\d+) is announced\."),
    ("built_joker", _P + r" built (?P<company>\w+) on (?P<section>\S+) \(joker as " + _CARD + r" track\); "
                    r"(?P=company) is worth (?P<value>\d+)\."),
    ("built", _P + r" built (?P<company>\w+) on (?P<section>\S+) \(" + _CARD + r" track\); "
              r"(?P=company) is worth (?P<value>\d+)\."),
    ("took_face_up", _P + r" took the face-up (?P<share>\w+) share\."),
    ("place_empty", r"Its place stays empty: the stack holds no more share\."),
    ("replaced_by", r"It is replaced by (?P<share>\w+)\."),
    ("took_stack", _P + r" took the top share of the stack\."),
    ("stack_empty", r"The stack held no more share: nothing was drawn\."),
    ("swapped_unseen", _P + r" returned a share to the box unseen and took a UP share\."),
    ("took_up", _P + r" took a UP share\."),
    ("drew_none", _P + r" could draw no share\."),
    ("swap_not_made", r"The game is over: " + _P + r"'s UP swap is not made\."),
    ("invested_discarding", _P + r" invested (?P<shares>\d+ \w+(?: and \d+ \w+)*) and discarded a "
                            + _CARD + r" track card\."),
    ("invested", _P + r" invested (?P<shares>\d+ \w+(?: and \d+ \w+)*)\."),
    ("double_dividend", r"Double dividend: (?P<count>2) dividends are paid one after the other\."),
    ("several_dividends", r"(?P<cards>\d+) dividend cards in one draw: (?P<count>\d+) dividends are paid "
                          r"one after the other\."),
    ("game_over", r"The game is over\. (?P<standings>.*)"),
    ("stalled", r"No company can build any more and nobody holds a share: the remaining dividends are "
                r"paid now\."),
    ("imaginary_takes", r"The imaginary third player takes the display, the stack and the UP pile: "
                        r"(?P<shares>.+)\."),
    ("dividend_hidden", r"Dividend (?P<number>\d+) paid \(amounts hidden: option hidden_money\)\."),
    ("dividend_paid", r"Dividend (?P<number>\d+) paid: (?P<paid>.+) \(millions\)\."),
)
"""(kind, pattern) per sentence of the old log, tried in order (a more specific
pattern before a more general one); a pattern must match the whole line."""

_COMPILED = tuple((kind, re.compile(pattern + r"\Z", re.S)) for kind, pattern in PATTERNS)
_COUNT = re.compile(r"(\d+) (\w+)")
_STANDING = re.compile(r"(\d+)\. (.+?) (-?\d+)(?:, (?=\d+\. )|\Z)", re.S)
_PAID = re.compile(r"(.+?) \+(-?\d+)(?:, |\Z)", re.S)


class _Unread(ValueError):
    """A sentence or a part of one that does not read."""


def _whole(pattern: re.Pattern[str], text: str) -> list[tuple[str, ...]]:
    """The matches of ``pattern`` that cover ``text`` end to end, or _Unread."""
    out, at = [], 0
    for m in pattern.finditer(text):
        if m.start() != at:
            raise _Unread(text)
        out.append(m.groups())
        at = m.end()
    if at != len(text) or not out:
        raise _Unread(text)
    return out


def _pairs_of(text: str, first: list[str]) -> list[list[Any]]:
    """``"Ann KCC, Bob UP"`` read with the names ``first`` known: ``[[name, word], ...]``."""
    out, rest = [], text
    for name in first:
        if not rest.startswith(name + " "):
            raise _Unread(text)
        rest = rest[len(name) + 1:]
        word, sep, rest = rest.partition(", ")
        if not re.fullmatch(r"\w+", word):
            raise _Unread(text)
        out.append([name, word])
    if rest:
        raise _Unread(text)
    return out


def read_line(line: str, players: list[str]) -> dict[str, Any]:
    """The event mapping (``moderator.rules.events.to_data``'s shape) of one old
    log sentence of a game with ``players`` (turn order).  Raises ValueError when
    no pattern reads it or its names are not the game's."""
    for kind, pattern in _COMPILED:
        m = pattern.match(line)
        if m is None:
            continue
        v: dict[str, Any] = {k: x for k, x in m.groupdict().items()}
        for key in ("count", "number", "value", "final"):
            if key in v:
                v[key] = int(v[key])
        if "player" in v and v["player"] not in players:
            raise _Unread(line)
        if kind == "set_up":
            names = v.pop("players")
            if names != ", ".join(players) or v.pop("count") != len(players):
                raise _Unread(line)
            v = {"players": list(players), "ruleset": v["ruleset"]}
        elif kind == "face_up":
            v["shares"] = [None if s == "-" else s for s in v["shares"].split(", ")]
        elif kind == "initial_revealed":
            v["choices"] = _pairs_of(v["choices"], players)
        elif kind.startswith("invested"):
            v["shares"] = [[int(n), c] for n, c in _COUNT.findall(v["shares"])]
        elif kind == "several_dividends":
            if int(v.pop("cards")) != v["count"]:
                raise _Unread(line)
        elif kind == "game_over":
            v["standings"] = [[int(a), p, int(b)] for a, p, b in _whole(_STANDING, v["standings"])]
        elif kind == "imaginary_takes":
            v["shares"] = [] if v["shares"] == "nothing" else \
                [[int(n), c] for n, c in _whole(re.compile(r"(\d+) (\w+)(?:, |\Z)"), v["shares"])]
        elif kind == "dividend_paid":
            v["paid"] = [[p, int(n)] for p, n in _whole(_PAID, v["paid"])]
        return {"kind": kind, **v}
    raise _Unread(line)


def read_log(log: Any, players: list[str]) -> list[dict[str, Any]] | None:
    """The event mappings of a whole old ``log`` (a list of sentences), or None
    when any line does not read (see the module)."""
    if not isinstance(log, list) or not all(isinstance(x, str) for x in log):
        return None
    try:
        return [read_line(line, players) for line in log]
    except ValueError:
        return None
