"""The game log in the reader's language.

The rules engine writes each public event as one English sentence (``Game.log``),
and game files keep those sentences (``log``: the archive's text, compared entry by
entry on replay).  A reader of another language gets each sentence worded by
``templates/words/events.txt``: every sentence the engine writes has a pattern here,
read back into ``(name, values)`` and rendered with ``word("events", name,
**values)`` in the language in force (``moderator.i18n.speaking``).  English gets
the line unchanged; so does a line no pattern reads (a file of an older pbem with
other wording), in every language.

The patterns are the engine's own sentences (``moderator/rules/engine.py``, every
``self.log.append``); ``tests/test_events.py`` plays random games and checks that
every line the engine writes is read, and that the English macro of each name gives
the line back character for character.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from .. import i18n

_P = r"(?P<player>.+)"
_CARD = r"(?P<card>[a-z]+(?:-[a-z]+)?)"

PATTERNS: tuple[tuple[str, str], ...] = (
    ("set_up", r"Game set up: (?P<count>\d+) players \((?P<players>.+)\), ruleset (?P<ruleset>[\w-]+)\."),
    ("four_of_a_kind", r"Four (?P<company>\w+) shares face up: removed from the game and replaced\."),
    ("face_up", r"Face-up shares: (?P<shares>.+)\."),
    ("initial_chosen", _P + r" has chosen an initial investment\."),
    ("passes_discarding", _P + r" can neither build nor invest and passes, discarding a " + _CARD + r" track card\."),
    ("passes", _P + r" can neither build nor invest and passes\."),
    ("initial_revealed", r"Initial investments revealed: (?P<shown>.+)\."),
    ("starts", _P + r" starts\."),
    ("reshuffled", r"The track deck was empty: the (?P<count>\d+) discards were shuffled into a new deck\."),
    ("no_track_left", r"No track card is left for " + _P + r" to draw \(deck and discards are empty\)\."),
    ("dead_card", _P + r" shows a dead " + _CARD + r" track card \(every (?P=card) space is full\), "
                  r"removes it from the game and draws a replacement\."),
    ("dividend_unused", r"The (?P<ordinal>\d+(?:st|nd|rd|th)?) dividend card is drawn; it is not used "
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
                        r"(?P<shown>.+)\."),
    ("dividend_hidden", r"Dividend (?P<number>\d+) paid \(amounts hidden: option hidden_money\)\."),
    ("dividend_paid", r"Dividend (?P<number>\d+) paid: (?P<parts>.+) \(millions\)\."),
)
"""(name, pattern) per sentence of the engine's log, tried in order (a more
specific pattern before a more general one); a pattern must match the whole line."""

_COMPILED = tuple((name, re.compile(pattern + r"\Z")) for name, pattern in PATTERNS)
_COUNT = re.compile(r"(\d+) (\w+)")


def read(line: str) -> tuple[str, dict[str, Any]] | None:
    """``(name, values)`` of a log sentence, or None when no pattern reads it.
    Values are strings, except ``count``/``number``/``value``/``final``/``cards``
    (integers), ``ordinal`` (the dividend's number, an integer), ``shares`` of an
    investment (a list of ``(count, company)``) and ``players`` (a list of names)."""
    for name, pattern in _COMPILED:
        m = pattern.match(line)
        if m is None:
            continue
        values: dict[str, Any] = m.groupdict()
        for key in ("count", "number", "value", "final", "cards"):
            if key in values:
                values[key] = int(values[key])
        if "ordinal" in values:
            values["ordinal"] = int(re.match(r"\d+", values["ordinal"]).group())
        if name.startswith("invested"):
            values["shares"] = [(int(n), c) for n, c in _COUNT.findall(values["shares"])]
        if "players" in values:
            values["players"] = values["players"].split(", ")
        return name, values
    return None


@lru_cache(maxsize=4096)
def _worded(language: str, line: str) -> str:
    from .words import word

    found = read(line)
    if found is None:
        return line
    name, values = found
    return word("events", name, **values)


def event_text(line: str) -> str:
    """The log sentence ``line`` in the language in force: the line itself in
    English or when no pattern reads it, else ``templates/words/events.txt``'s
    wording.  Used as the Jinja filter ``event``."""
    language = i18n.current()
    if language == i18n.DEFAULT:
        return line
    return _worded(language, str(line))
