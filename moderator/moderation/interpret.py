"""Interpret a mail: its identity, and its lines as commands and one order.

``mail_id`` names a mail (RFC 5322 Message-ID, else ``OrderMail.delivery_key``);
``interpret`` splits the order lines of an ``OrderMail`` into commands (``help``,
``status``, ``history``, ``rules``, ``secret new``; the seat commands
``resign``, ``resign confirm``, ``digest on|off`` of ``seats.seat_command``) and order lines, and parses
the order lines into one action with the board's names (``parse_turn``).
Nothing here reads or writes a file.
"""
from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable

from ..mail.read import OrderMail, is_reply_header
from .. import i18n
from ..orders.languages import WORDS
from ..orders.parser import NoOrderFound, OrderError, _verb_last, command, english, parse_turn, uncommented
from ..orders.lexicon import fold
from ..orders.vocabulary import (
    BUILD_FILLERS,
    FILLERS,
    NEGATIONS,
    NUMBER_WORDS,
    ORDER_WORDS,
    ORDINALS,
    POLITE,
    PREAMBLE,
    VERBS,
    card_word,
    city_index,
    company_of,
)
from ..rules.actions import Action
from ..rules.board import Board


def mail_id(om: OrderMail, raw: bytes) -> str:
    """The identity of a mail: its Message-ID, else its ``delivery_key`` (a hash
    that ignores transport headers, so that one mail delivered twice through two
    servers is one mail), else ``sha256:`` + hash of the bytes."""
    return om.message_id or om.delivery_key or "sha256:" + hashlib.sha256(raw).hexdigest()


KIND_TEXT = "text"
"""``OrderMail.kinds`` of a line the reader cannot tell from an order."""


@dataclass(frozen=True)
class Orders:
    """What a mail asks: ``commands`` (each once, in order of appearance), the
    other ``lines`` (``kinds``: what the mail reader made of each, see
    ``OrderMail.kinds``), and those lines parsed: ``action`` when they are one
    valid turn, else ``error`` (an ``OrderError``; ``NoOrderFound`` when no line
    looks like an order).  Both None when there are no order lines.

    ``used``: when all the lines together are no turn but some of them are (see
    ``interpret``), the lines ``action`` was read from; ``error`` then keeps why
    the whole set failed.  ``unread`` lists the other lines with their kind."""

    commands: tuple[str, ...]
    lines: tuple[str, ...]
    action: Action | None = None
    error: OrderError | None = None
    kinds: tuple[str, ...] = ()
    used: tuple[str, ...] | None = None
    alternatives: tuple[Action, ...] = ()  # the choices of an order with "or", best first (issue 30)

    @property
    def has_order(self) -> bool:
        """Whether some line is an order (valid or not): then it is applied or
        refused, and the commands are answered after it."""
        return self.action is not None or (self.error is not None and not isinstance(self.error, NoOrderFound))

    @property
    def unread(self) -> tuple[tuple[str, str], ...]:
        """``(line, kind)`` of the order lines the action was not read from (only
        when ``used``)."""
        if self.used is None:
            return ()
        used = list(self.used)
        out = []
        for line, kind in zip(self.lines, self.kinds or (KIND_TEXT,) * len(self.lines)):
            if used and used[0] == line:
                used.pop(0)
            else:
                out.append((line, kind))
        return tuple(out)


def interpret(lines: Iterable[str], board: Board, kinds: Iterable[str] = ()) -> Orders:
    """Split ``lines`` into commands and order lines and parse the order lines
    with ``board``'s names.  Never raises: a parse error is kept in ``error``.

    ``kinds`` (``OrderMail.kinds``, one per line) lets a complete turn be read
    when the whole set of lines is none: first from the lines of kind ``text``
    (no signature, sign-off, greeting or gateway notice), then from the longest
    run of those lines from the top (at most ``MAX_TURN_LINES``) whose dropped
    lines do not look like orders
    (``looks_like_order``: a mistyped order is never dropped).  The caller
    applies such a turn only when it is legal, and tells the player which lines
    were not read (``Orders.unread``)."""
    lines = list(lines)
    kinds = list(kinds)
    if len(kinds) != len(lines):
        kinds = [KIND_TEXT] * len(lines)
    from .seats import seat_command  # resign, digest (the players' seat commands)
    from .ballot import proposal_command  # propose ..., accept, reject (proposals.py)

    from .seats import daily_command, me_command, privacy_command  # me, export me, forget me, digest daily:
    # the person's (people.py, privacy.py)

    def seat_or_vote(line: str) -> str | None:
        return seat_command(line) or proposal_command(line) or ("me" if me_command(line) else None) \
            or privacy_command(line) or daily_command(line)

    found = [_line_commands(l, seat_or_vote) for l in lines]  # the command check once per line
    commands = tuple(dict.fromkeys(c for cs in found if cs for c in cs))
    pairs = [(l, k) for l, k, c in zip(lines, kinds, found) if c is None]
    orders = tuple(l for l, _ in pairs)
    order_kinds = tuple(k for _, k in pairs)
    if not orders:
        return Orders(commands, orders)
    try:
        from ..orders.alternatives import candidates, has_alternatives

        if has_alternatives(orders):  # "take KCC or stack": the choices, the first legal one played
            found = tuple(candidates(list(orders), board))
            return Orders(commands, orders, action=found[0], kinds=order_kinds, alternatives=found)
        return Orders(commands, orders, action=parse_turn(list(orders), board), kinds=order_kinds)
    except OrderError as exc:
        first = exc
    for used in _fallbacks(pairs, board):
        try:
            action = parse_turn(list(used), board)
        except OrderError:
            continue
        return Orders(commands, orders, action=action, error=first, kinds=order_kinds, used=tuple(used))
    return Orders(commands, orders, error=first, kinds=order_kinds)


def _line_commands(line: str, seat_command: Callable[[str], str | None]) -> tuple[str, ...] | None:
    """The commands on ``line`` (mail commands, seat commands), or None when it is
    no command line: the line as a whole (its ``#`` comment left out), or each of
    its parts separated by ``;`` when every part is a command (``resign; resign
    confirm`` is the two lines ``resign`` and ``resign confirm``).  A line of a
    reply header block in any language (``Objet : status``, ``Message du :
    ...``; ``read.is_reply_header``) is no command."""
    if is_reply_header(line):
        return None
    line = uncommented(line)
    parts = [p for p in (p.strip() for p in line.split(";")) if p] if ";" in line else []
    if len(parts) > 1:  # before the whole line: "resign; resign confirm" is no one "resign confirm"
        each = [command(p) or seat_command(p) for p in parts]
        if all(each):
            return tuple(c for c in each if c)
    from .advance import advance_command  # next: ORDER, next?, auto ... (issue 30)

    found = command(line) or seat_command(line) or advance_command(line)
    return (found,) if found else None


MAX_ORDER_LINES = 300
"""The most order lines (``OrderMail.lines``: not blank, not quoted, no
signature) a player's mail may have: a turn is a few lines, and every line costs
the command check and the parser's work, so that a 256 kB mail of 64,000 lines
"hi" took a minute of CPU while every other game waited.  A longer mail is
refused unread (``decide.in_game``, notice ``too_many_lines`` of
``templates/words/limits.txt``)."""

MAX_TURN_LINES = 50
"""The longest run of lines from the top that ``interpret`` reads a turn from when
the whole mail is none: a turn is a few lines, and each try parses its lines, so
that trying every run of a mail of 100,000 short lines ("2", "Denver") took
minutes of CPU (the square of the lines)."""


def _fallbacks(pairs: list[tuple[str, str]], board: Board | None = None) -> Iterable[list[str]]:
    """Smaller sets of order lines to read a turn from, best first (see
    ``interpret``); ``board``'s cities count as what an order names
    (``looks_like_order``)."""
    # a sign-off or greeting matched the reader's table as a whole line ("Take
    # care,"); any other line left out must not look like an order
    if any(k not in _TRUSTED and k != KIND_TEXT and looks_like_order(l, board) for l, k in pairs):
        return
    text = [l for l, k in pairs if k == KIND_TEXT]
    if text and len(text) < len(pairs):
        yield text
    longest = min(len(text) - 1, MAX_TURN_LINES)
    if any(looks_like_order(line, board) for line in text[longest + 1:]):
        return  # a mistyped order far below: never read the turn without it
    for n in range(longest, 0, -1):
        if looks_like_order(text[n], board):
            break  # a mistyped order below: never read the turn without it
        yield text[:n]


_TRUSTED = ("signoff", "greeting")


def looks_like_order(line: str, board: Board | None = None) -> bool:
    """Whether ``line`` reads as an order in the grammar of the game, perhaps
    mistyped: such a line is never left out of a turn.  It starts with an order
    verb or a word close to one (``'biuld'``, ``'Invets'``), and either the first
    word after the verb and its fillers (``the``, ``a``, ``on``, ``in`` ...) is
    something an order names (a company, track card, number, ``stack``, ``UP``
    ..., or a city of ``board`` when given: ``buidl WW CHY-DEN``, ``take the
    stack``, ``invest in KCC``), or the line is the verb alone (``pass``).  An
    order word in prose is not enough (``put the keys in the box``, ``return
    mailer.send(message)``, Danish ``Tak``, ``In this regards``): such a line
    below a complete turn is left out and named in the note.

    In the language in force (:func:`moderator.i18n.current`, the player's), its
    order words count as well, read as the parser reads them, verb last too
    (``baeu KCC DEN-KCY weiß``, ``2 KCC investieren``, ``postavt KCC ...``)."""
    if _reads_as_order(line, board, VERBS):
        return True
    lang = i18n.current()
    if lang == i18n.DEFAULT:
        return False
    tokens = english(line, lang).split()
    return bool(tokens) and _reads_as_order(" ".join(_verb_last(tokens)), board, _verbs_of(lang))


@lru_cache(maxsize=None)
def _verbs_of(language: str) -> frozenset[str]:
    """The English order verbs and the folded verbs of ``language``
    (``languages.WORDS``): what a mistyped verb is compared with."""
    words = WORDS.get(language, {}).get("verbs", {})
    return frozenset(VERBS) | {fold(w) for ws in words.values() for w in ws if " " not in w}


def _reads_as_order(line: str, board: Board | None, verbs: frozenset[str] | set[str]) -> bool:
    """``looks_like_order`` of one reading of ``line``, its verbs ``verbs``."""
    words = re.findall(r"[\w&#'/+-]+", fold(line))
    if not words:
        return False
    first = re.sub(r"[\d_#&/+'-]+", "", words[0])
    if not first:
        return False
    exact = first in VERBS
    if not exact and not _close_to_verb(first, verbs if verbs is not VERBS else None):
        return False
    rest = [w.strip("'-") for w in words[1:]]
    rest = [w for w in rest if w and w not in _ORDER_FILLERS]
    if not rest:
        return exact  # "pass", "pass, thanks", "take the": the verb alone
    return _order_argument(rest[0], board)


_ORDER_FILLERS = (FILLERS | BUILD_FILLERS | PREAMBLE | POLITE | {"in", "initial", "investment", "x"}) - {"one"}
"""Words between an order verb and what it names ("take the stack", "invest in
KCC"), or after a whole order ("pass, thanks")."""


def _order_argument(word: str, board: Board | None) -> bool:
    """Whether ``word`` (folded) is something an order names: a number, a
    company, a track card, an order word (``stack``, ``display``, ``none``), a
    count or place, or a city (id, name or short name) of ``board``; a section
    (``DEN-KCY``) by either of its cities."""
    if any(c.isdigit() for c in word) or word in NUMBER_WORDS or word in ORDINALS:
        return True
    if word in ORDER_WORDS or word in NEGATIONS or card_word(word) or company_of(word):
        return True
    if board is None:
        return False
    cities = city_index(board)
    return any(p and (cities.find(p, short=False)[0] or p in cities.aliases or p in cities.prefix)
               for p in re.split(r"[-/]", word))


@lru_cache(maxsize=4096)
def _close_to_verb(word: str, verbs: frozenset[str] | None = None) -> bool:
    """Whether ``word`` is close to an order word (difflib, ratio 0.8; of
    ``verbs``, default the English ``VERBS``): asked once per distinct word, not
    once per line."""
    return bool(difflib.get_close_matches(word, verbs or VERBS, n=1, cutoff=0.8))


def switched_language(lines: list[str]) -> str | None:
    """The language code the last valid ``language CODE`` command among a mail's
    ``lines`` names (any tag ``check_language`` reads), or None.  The mail's
    other lines are read in it first, then, when they cannot be, in the
    language in force before (``cycle.Moderator``): a player's first mail
    ``language es`` with an order in Spanish is read as Spanish, as its answers
    are (a new user's check)."""
    found = None
    for line in lines:
        cmd = command(line)
        if cmd and cmd.startswith("language "):
            code = i18n.normalize(cmd[9:].strip())
            if code is not None:
                found = code
    return found
