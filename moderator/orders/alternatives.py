"""Orders with alternatives: ``or`` between choices, the first legal one played.

A player may give choices in any part of a turn, best first (issue 30)::

    build KCC DEN-KCY plain; take KCC or ESL or stack
    invest KCC or DM; discard plain or white
    build KCC DEN-KCY plain; take stack or build DM DEN-OMA black; take stack

The rules of reading, on the order's words read as English (the player's
language first, ``or`` in it: ``OR_WORDS``):

- ``or`` inside one order part separates choices of that part; a choice without
  an order word of its own takes the part's (``take KCC or ESL or stack`` is
  ``take KCC``, ``take ESL``, ``take stack``);
- ``or`` before an order of the same kind is a choice of that part too
  (``take KCC or take stack``, ``build KCC DEN-KCY plain or build DM DEN-OMA
  black; take stack``);
- ``or`` before an order that starts another kind of turn (build, invest, pass,
  start) begins a whole other turn, which runs to the end of the mail
  (``...; take stack or build DM DEN-OMA black; take stack``).

The whole turns are the products of the parts' choices, in the order written
(first part's first choice with the second part's first choice, then its second
...); at most ``MAX_ALTERNATIVES``.  ``candidates`` returns them as actions,
each read by the forgiving parser (``parser.parse_turn``); the caller plays the
first the rules engine finds legal at the moment the order is applied
(``moderation/advance.first_legal``).  The game file records the action played,
in the strict notation, and the text given (history ``alternatives``).
"""
from __future__ import annotations

import itertools
import re
from typing import Any

from ..rules.actions import Action
from ..rules.board import Board
from .lexicon import language_of, lexicon
from .parser import (_PIECE_RE, NoOrderFound, OrderError, _clean, _is_chatter, _is_prose, _low,
                     _split_verbs, _tokens, _verb_last, command, parse_turn, uncommented)
from .vocabulary import (BUILD_VERBS, DISCARD_VERBS, INVEST_VERBS, NEGATIONS, PASS_VERBS, PREAMBLE,
                         REDRAW_VERBS, START_VERBS, SWAP_VERBS, TAKE_VERBS, city_index)

__all__ = ["MAX_ALTERNATIVES", "OR_WORDS", "AlternativesError", "has_alternatives", "candidates"]

MAX_ALTERNATIVES = 24
"""Whole turns one order may name at most (the product of its parts' choices)."""

OR_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("or",),
    "es": ("o", "u"),
    "de": ("oder",),
    "cs": ("nebo", "ci"),  # "či", accents folded as every order word
    "zh": ("或者", "或", "还是"),
}
"""The word ``or`` in each language, folded as the parser folds words (no
accents); English ``or`` is understood in every language.  Chinese words are found
anywhere (no spaces), the others as whole words."""

_KINDS = (("build", BUILD_VERBS), ("take", TAKE_VERBS), ("swap", SWAP_VERBS | NEGATIONS),
          ("invest", INVEST_VERBS), ("discard", DISCARD_VERBS), ("pass", PASS_VERBS),
          ("start", START_VERBS), ("redraw", REDRAW_VERBS))
_TURN_KINDS = {"build", "invest", "pass", "start"}
"""Kinds of order that begin a turn: ``or`` before one of another kind begins a
whole other turn."""


class AlternativesError(OrderError):
    """An order with ``or`` that cannot be read as choices: ``or_empty`` (nothing
    on one side of an ``or``), ``too_many_alternatives`` (values ``count``,
    ``most``).  Worded by ``templates/words/advance.txt``."""

    @property
    def reason(self) -> str:
        from ..render.words import word

        return word("advance", self.code, **self.values)


def _or_pattern(language: str) -> re.Pattern:
    words = set(OR_WORDS["en"]) | set(OR_WORDS.get(language, ()))
    spaced = sorted((w for w in words if w.isascii()), key=len, reverse=True)
    anywhere = sorted((w for w in words if not w.isascii()), key=len, reverse=True)
    parts = [r"(?<![\w'-])(?:" + "|".join(map(re.escape, spaced)) + r")(?![\w'-])"]
    if anywhere:
        parts.append("|".join(map(re.escape, anywhere)))
    return re.compile("|".join(parts), re.IGNORECASE)


_PATTERNS: dict[str, re.Pattern] = {}


def _pattern(language: str) -> re.Pattern:
    if language not in _PATTERNS:
        _PATTERNS[language] = _or_pattern(language)
    return _PATTERNS[language]


def has_alternatives(lines: list[str] | tuple[str, ...], language: str | None = None) -> bool:
    """Whether an order line of ``lines`` holds the word ``or`` (English, or of
    ``language``: default the language in force) outside a comment and a mail
    command line."""
    lang = language_of(language)
    pattern = _pattern(lang)
    if not any(pattern.search(str(raw)) for raw in lines):  # the usual case: no "or" at all
        return False
    for raw in lines:
        for line in str(raw).splitlines():
            line = uncommented(line)
            if command(line, lang):
                continue
            if pattern.search(_clean(line)):
                return True
    return False


def _kind(part: list[str]) -> str | None:
    """The kind of order a part is (``build``, ``take`` ...) by its first word
    that is not a polite preamble; None when it has no order word."""
    for tok in part:
        low = _low(tok)
        if low in PREAMBLE:
            continue
        for name, verbs in _KINDS:
            if low in verbs:
                return name
        return None
    return None


def _verb(part: list[str]) -> list[str]:
    """The words of ``part`` up to and including its order word (``please take``)."""
    for i, tok in enumerate(part):
        if _low(tok) not in PREAMBLE:
            return part[:i + 1]
    return []


def _parts(lines: list[str], board: Board, lang: str) -> list[list[str]]:
    """The order parts of ``lines`` as English words, in order, ``or`` kept as a
    word of its own (the parser's cleaning, reading of the language and splitting
    before verbs); greetings, sign-offs and prose left out."""
    lex = lexicon(lang)
    cities = city_index(board)
    pattern = _pattern(lang)
    out: list[list[str]] = []
    for raw in lines:
        for line in str(raw).splitlines() or [""]:
            line = uncommented(line)
            if command(line, lang):
                continue
            text = pattern.sub(" or ", _clean(line))
            if lex.pattern is not None:
                text = _clean(lex.translate(text, cities))
            for piece in _PIECE_RE.split(text):
                tokens = _tokens(piece.strip(" .!?:"))
                if lex.pattern is not None:
                    tokens = _verb_last(tokens)
                for part in _split_verbs(tokens):
                    if _is_chatter(part) or _prose(part, board):
                        continue
                    out.append(part)
    return out


def _prose(part: list[str], board: Board) -> bool:
    """Whether every side of the ``or`` words of ``part`` is prose (``Let me know
    if it works or not``): a line the parser skips."""
    sides: list[list[str]] = [[]]
    for tok in part:
        if _low(tok) == "or":
            sides.append([])
        else:
            sides[-1].append(tok)
    said = [side for side in sides if side]
    return bool(said) and all(_is_prose(side, board) for side in said)


def _choices(part: list[str], line: str) -> list[list[str]]:
    """One part's choices: its words split at ``or``, each choice without an
    order word of its own given the part's (``take KCC or ESL`` -> ``take KCC``,
    ``take ESL``)."""
    segments: list[list[str]] = [[]]
    for tok in part:
        if _low(tok) == "or":
            segments.append([])
        else:
            segments[-1].append(tok)
    verb = _verb(segments[0]) if _kind(segments[0]) else []
    out = []
    for seg in segments:
        if not seg:
            raise AlternativesError("or_empty", line)
        out.append(seg if _kind(seg) or not verb else verb + seg)
    return out


def _turns(parts: list[list[str]], line: str) -> list[list[list[list[str]]]]:
    """The whole turns ``parts`` name: each a list of slots, each slot the list
    of its choices (token lists)."""
    turns: list[list[list[list[str]]]] = [[]]
    joined = False  # the last part ended with "or": the next one is a choice of it (or a new turn)
    for part in parts:
        if [_low(t) for t in part] == ["or"]:  # "... or pass": the parser split before the verb
            if joined or not turns[-1]:
                raise AlternativesError("or_empty", line)
            joined = True
            continue
        lead = bool(part) and _low(part[0]) == "or"
        trail = bool(part) and _low(part[-1]) == "or"
        body = part[1 if lead else 0:len(part) - (1 if trail else 0)]
        if not body:
            raise AlternativesError("or_empty", line)
        choices = _choices(body, line)
        slots = turns[-1]
        if (joined or lead) and slots:
            prev = slots[-1]
            kind, prev_kind = _kind(choices[0]), _kind(prev[0])
            if kind in _TURN_KINDS and kind != prev_kind:
                turns.append([choices])  # another whole turn
            else:
                if not _kind(choices[0]) and _kind(prev[0]):
                    choices = [_verb(prev[0]) + c if not _kind(c) else c for c in choices]
                prev.extend(choices)
        elif lead:
            raise AlternativesError("or_empty", line)
        else:
            slots.append(choices)
        joined = trail
    if joined:
        raise AlternativesError("or_empty", line)
    return turns


def candidates(lines: list[str] | tuple[str, ...], board: Board, language: str | None = None) -> list[Action]:
    """The whole turns that the order ``lines`` (a mail's order lines, in the
    player's ``language``; default the language in force) names, best first,
    each an ``Action`` as the forgiving parser reads it (fields a turn left out
    are filled in when it is resolved).  Lines without ``or``: the one action
    ``parse_turn`` reads.  Raises ``OrderError`` (``NoOrderFound`` for no order
    at all) when a choice cannot be read, ``AlternativesError`` for an ``or``
    with nothing on one side (``or_empty``) or more than ``MAX_ALTERNATIVES``
    whole turns (``too_many_alternatives``).  Duplicates are named once."""
    lang = language_of(language)
    lines = [str(x) for x in lines]
    if not has_alternatives(lines, lang):
        return [parse_turn(lines, board, language=lang)]
    line = " / ".join(lines)
    parts = _parts(lines, board, lang)
    if not any(_low(t) == "or" for part in parts for t in part):  # "or" only in prose
        return [parse_turn(lines, board, language=lang)]
    turns = _turns(parts, line)
    count = 0
    for slots in turns:
        n = 1
        for slot in slots:
            n *= len(slot)
        count += n
    if count > MAX_ALTERNATIVES:
        raise AlternativesError("too_many_alternatives", line, count=count, most=MAX_ALTERNATIVES)
    out: list[Action] = []
    for slots in turns:
        if not slots:
            raise NoOrderFound("no_order", line)
        for combo in itertools.product(*slots):
            action = parse_turn([" ".join(words) for words in combo], board, language="en")
            if action not in out:
                out.append(action)
    return out


def given(lines: list[str] | tuple[str, ...]) -> str:
    """The text of an order as given, for the history's ``alternatives``: its
    lines joined by `` / ``."""
    return " / ".join(str(x).strip() for x in lines if str(x).strip())


def choice_values(tried: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """``[(order text, IllegalAction or None)]`` as plain values: ``order`` and
    the engine's ``code``/``values`` (None for the one played)."""
    return [{"order": order, "code": getattr(exc, "code", None), "values": dict(getattr(exc, "values", {}) or {})}
            for order, exc in tried]
