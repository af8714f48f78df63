"""Game files: one YAML file per game in the games directory.

A game file holds everything needed to replay and check the game::

    format: 6
    game: ridge
    created: '2026-11-29T14:02:11+00:00'
    board: default                 # or the whole board mapping for a custom board
    board_sha256: 3f2a...
    seed: 12345
    ruleset: first-edition
    options: {spread_dividends: false, ...}
    players:
      - {name: Ann, address: ann@example.org, secret: k3x9p2qa, timezone: null, bot: false,
         abandoned: false, missed: 0, vacation_used: 0, vacation_from: null,
         vacation_until: null, language: null}      # format 2: the seat's clock;
                                                    # format 3: their language (null: the game's)
    settings: {deadline: 259200, on_missed: bot, abandon_after: 3,
               vacation_limit: 1209600, language: en}  # format 2: the game's clock settings;
                                                    # format 3: the game's language
    clock: {since: '...', shift: 0, reminded: false, reminded_at: null,
            overdue_told: false}                     # format 2: the wait for the move
    threads: {Ann: '<...@pbem.localhost>'}   # our first mail to each player
    notified: 12                     # game log entries already sent in status mails
    log_length: 14                   # game log entries in all (notified < log_length:
                                     #   status mails are still to be spooled)
    reply_to: {Ann: '<...>'}         # order mails the next status mails answer
    history:
      - {player: Ann, order: start KCC, message_id: '<...>', received: '...'}
    log:                             # the public events (Game.events; pbem 0.2 and later;
      - {kind: set_up, players: [Ann, Bob], ruleset: first-edition}  # format 4: mappings,
      - ...                                          # before: English sentences
    state: {...}                     # Game.to_dict() after the last order

Each ``order`` is in the strict notation (``moderator.rules.notation``: exactly
``str(action)``).  Loading migrates an older format (``MIGRATIONS``, ``migrate``),
checks the board digest, replays ``seed`` + ``history`` through the engine with the
strict notation and compares the result with ``state`` (and with ``log`` when the
file keeps it): a mismatch raises ``StoreError`` (never a guess).  A file the
moderator itself wrote, unchanged since (its digest is trusted), is restored from
``state`` and ``log`` without a replay (``restore_game``; its orders are read
on first use), and without a YAML parse when the snapshot ``write`` left
(``games/.snapshots/GAME.snap``, a cache keyed by the file's digest, to which a
save appends what changed) matches; a
save reuses the text of the entries of ``history``,
``log`` and the growing parts of ``state`` that did not change, writing exactly
the bytes of a whole dump.  Only the safe YAML loader is used (libyaml's
``CSafeLoader`` when present).  Writes are atomic (``moderator.store.files``) under
a per-game file lock (``filelock``).  The format is documented for other tools in
``docs/game-file.md``.
"""
from __future__ import annotations

import copy
import hashlib
import marshal
import operator
import os
import re
import secrets
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from itertools import accumulate
from operator import itemgetter
from pathlib import Path
from typing import Any, Callable

import yaml
from filelock import FileLock

from . import GAME_ID_PATTERN
from ..rules.actions import Action
from ..rules.board import DEFAULT_BOARD_PATH, Board
from ..rules.engine import Game
from ..rules.events import events_from_data, to_data as event_to_data
from ..rules.history import History
from ..rules.notation import parse_action
from .files import atomic_write, fsync_dir  # noqa: F401 - re-exported: their old import path

FORMAT = 7
"""The format version this pbem writes and the newest it reads (the ``format`` key)."""

Migration = Callable[[dict[str, Any]], dict[str, Any]]

DEFAULT_DEADLINE = 72 * 3600
"""Seconds one move may take in a new game unless ``pbem new --deadline`` says
otherwise (72 hours)."""
ON_MISSED = ("bot", "wait")
"""The missed-move policies: the built-in player moves, or the game waits."""
DEFAULT_ABANDON_AFTER = 3
DEFAULT_VACATION_LIMIT = 14 * 86400
"""Seconds of vacation each player may take in one game, in all (14 days)."""
DEFAULT_LANGUAGE = "en"
"""A game's language unless ``pbem new --language`` says otherwise, and the
language a format-2 game gets (``moderator.i18n.DEFAULT``)."""

PLAYER_CLOCK: dict[str, Any] = {
    "timezone": None, "bot": False, "abandoned": False, "missed": 0,
    "vacation_used": 0, "vacation_from": None, "vacation_until": None,
}
"""The per-player keys of format 2 beside ``name``, ``address``, ``secret``, with the
value a format-1 player gets: ``timezone`` (IANA name or None), ``bot`` (the seat
is played by the built-in player), ``abandoned`` (missed ``abandon_after`` moves in
a row), ``missed`` (moves missed in a row), ``vacation_used`` (seconds of vacation
taken, counting one under way in full), ``vacation_from``/``vacation_until`` (ISO
8601, the vacation under way or last taken, or None)."""


def default_settings(deadline: int | None = DEFAULT_DEADLINE) -> dict[str, Any]:
    """A new game's settings (the ``settings`` key): ``deadline`` (seconds one
    move may take, None: no deadline), ``on_missed`` (``bot`` or ``wait``),
    ``abandon_after`` (missed moves in a row that abandon a seat), ``vacation_limit``
    (seconds of vacation per player and game), ``paused`` (when the game master
    paused the game, ISO 8601, or None: while paused no deadline runs and the
    built-in player does not move), ``language`` (format 3: the game's language, a
    code of ``moderator.i18n.LANGUAGES``; players without their own read it)."""
    return {"deadline": deadline, "on_missed": "bot", "abandon_after": DEFAULT_ABANDON_AFTER,
            "vacation_limit": DEFAULT_VACATION_LIMIT, "paused": None, "language": DEFAULT_LANGUAGE}


def default_clock(since: str | None = None) -> dict[str, Any]:
    """The clock of a wait that started at ``since`` (ISO 8601; the ``clock`` key):
    ``since`` (when the mail asking for the move was sent; for the initial
    investment, the welcome mails), ``shift`` (seconds the deadline moved: outages
    of the moderator), ``reminded`` (the reminder before the deadline was sent),
    ``reminded_at`` (the last reminder sent, ISO 8601 or None), ``overdue_told``
    (the game master was told the deadline passed, policy ``wait``)."""
    return {"since": since, "shift": 0, "reminded": False, "reminded_at": None, "overdue_told": False}


SEATS_DEFAULTS: dict[str, Any] = {
    "game_master": {"address": None, "secret": None}, "observers": [], "digest": [], "resigned": [],
    "resigning": {}, "ended": None, "gm_log": [],
}
"""The game master's and seats' keys of format 2 with the value a format-1 game
gets (docs/game-file.md; ``GameRecord`` has them as fields)."""


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Format 1 → 2: every player gets the clock keys (``PLAYER_CLOCK``), the game
    ``settings`` without a deadline (a game created before deadlines existed keeps
    waiting as it was promised), a ``clock`` whose wait started at ``created``,
    the option ``hints`` off, and the game master's keys (``SEATS_DEFAULTS``:
    the operator as game master, no secret yet, no observers, no resignations)."""
    for p in data.get("players") or []:
        if isinstance(p, dict):
            for k, v in PLAYER_CLOCK.items():
                p.setdefault(k, v)
    data.setdefault("settings", default_settings(None))
    for k, v in SEATS_DEFAULTS.items():  # the game master's keys (issue 10)
        data.setdefault(k, copy.deepcopy(v))
    data.setdefault("clock", default_clock(str(data.get("created") or "") or None))
    if isinstance(data.get("options"), dict):
        data["options"].setdefault("hints", False)
    keys = ["settings", "clock"]
    tail = [k for k in ("threads", "notified", "log_length", "reply_to", *SEATS_DEFAULTS, "history", "log",
                        "state") if k in data]
    head = [k for k in data if k not in keys and k not in tail]
    return {k: data[k] for k in [*head, *keys, *tail]}


def _v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """Format 2 → 3: the game's language (``settings.language``, English: every
    game before format 3 was played in English) and each player's own
    (``language`` null: the game's)."""
    for p in data.get("players") or []:
        if isinstance(p, dict):
            p.setdefault("language", None)
    if isinstance(data.get("settings"), dict):
        data["settings"].setdefault("language", DEFAULT_LANGUAGE)
    return data


def _v3_to_v4(data: dict[str, Any]) -> dict[str, Any]:
    """Format 3 → 4: the public log's English sentences become event mappings
    (``moderator.rules.events.to_data``), read once by ``moderator.store.v3_log``.
    A log that does not read whole (a line of other wording, names that are not
    the players') is left out, with ``log_length``: the loader then replays the
    history, which gives the events anew (as for a file older than pbem 0.2)."""
    from .v3_log import read_log

    if "log" not in data:
        return data
    players = [p.get("name") for p in data.get("players") or [] if isinstance(p, dict)]
    events = read_log(data["log"], players)
    if events is None:
        data.pop("log")
        data.pop("log_length", None)
    else:
        data["log"] = events
    return data


def _v4_to_v5(data: dict[str, Any]) -> dict[str, Any]:
    """Format 4 → 5: nothing to convert.  Format 5 adds keys a format-4 file has
    none of, every one optional with its default when absent: sign-up
    (``signup``, ``players[i].joined``), press (``press``, ``muted``,
    ``settings.press``/``press_archive``), the players' proposals (``proposals``)
    and orders in advance (``queued``, ``standing``; history ``queued``,
    ``alternatives``).  The number was raised so that a pbem reading format 4 at
    most refuses a format-5 file instead of loading it and dropping those keys at
    its next save (a queued order, the press, an open vote would be lost)."""
    return data


def _v5_to_v6(data: dict[str, Any]) -> dict[str, Any]:
    """Format 5 → 6: nothing to convert.  Format 6 adds keys a format-5 file has
    none of, each optional with its default when absent: the substitute pool's
    ``settings.substitutes`` (``auto`` when absent; a game opened for sign-up
    without it reads ``signup.substitutes``) and the deadlines in the calendar
    (``calendar_off``, ``calendar``).  The number was raised so that a pbem
    reading format 5 at most refuses a format-6 file instead of loading it and
    dropping those keys at its next save (a game master's ``--substitutes
    none`` would become ``auto``; the calendar's SEQUENCE would start again
    below what the players' calendars hold, and they would ignore the update)."""
    return data


def _v6_to_v7(data: dict[str, Any]) -> dict[str, Any]:
    """Format 6 → 7: nothing to convert.  Format 7 adds one optional key a
    format-6 file has none of: ``calendar.SEAT.cancelled``, the last
    cancellation of a seat's earlier deadline event, carried again by a mail
    made in place of unsent ones (absent: nothing to carry again).  The number
    was raised so that a pbem reading format 6 at most refuses a format-7 file
    instead of loading it and dropping the key at its next save (a player's
    calendar would keep a cancelled deadline)."""
    return data


MIGRATIONS: dict[int, Migration] = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4, 4: _v4_to_v5, 5: _v5_to_v6,
                                    6: _v6_to_v7}
"""``{N: function}``: the function turns the mapping of a format-N game file into
the mapping of format N+1 (it may change the given mapping and return it; ``migrate``
then sets ``format`` to N+1).  A format change raises ``FORMAT``, adds the step
here, and adds frozen example files in ``tests/fixtures/games/vN/``; old files are
never rewritten on read (a save writes the current format)."""

# libyaml's safe loader and dumper when PyYAML was built with it (10-20x faster),
# else the pure-Python ones; both only build plain data (no arbitrary objects).
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SafeDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
GAME_ID_RE = re.compile(GAME_ID_PATTERN)
SECRET_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"


class StoreError(Exception):
    """A game file that is missing, unreadable, of an unknown or newer format, or
    whose history does not give its recorded state."""


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """The mapping of a game file of any known format, brought to format ``FORMAT``
    by applying ``MIGRATIONS[N]`` for N = its format, ..., FORMAT - 1 in turn.

    ``data`` is the parsed file (a dict; it may be changed).  Returns the migrated
    mapping, whose ``format`` is ``FORMAT``.  Raises StoreError when ``format`` is
    missing or not a whole number, is newer than ``FORMAT`` ("written by a newer
    pbem"), is older than 1, or has no migration step."""
    version = data.get("format")
    if version is None:
        raise StoreError("no format version (the key 'format' is missing): not a pbem game file")
    if isinstance(version, bool) or not isinstance(version, int):
        raise StoreError(f"unknown format version {version!r}: not a pbem game file")
    if version > FORMAT:
        raise StoreError(
            f"written by a newer pbem (format {version}); this version reads up to format {FORMAT}"
        )
    if version < 1:
        raise StoreError(f"unknown format version {version}: formats start at 1")
    while version < FORMAT:
        step = MIGRATIONS.get(version)
        if step is None:
            raise StoreError(f"no migration from format {version} to format {version + 1}")
        data = step(data)
        version += 1
        data["format"] = version
    return data


def new_secret() -> str:
    """A fresh player secret: 8 characters from ``SECRET_ALPHABET`` (``a-z`` and
    ``2-9`` without the look-alikes ``l``, ``o``, ``0``, ``1``), from ``secrets``."""
    return "".join(secrets.choice(SECRET_ALPHABET) for _ in range(8))


@dataclass
class Player:
    """A registered player: ``name`` (as in the game), mail ``address`` (compared
    canonically; ``""`` for a seat the built-in player plays from the start), and
    ``secret`` (8 characters, proves the mail is theirs); the seat's clock (see
    ``PLAYER_CLOCK``): ``timezone``, ``bot``, ``abandoned``, ``missed``,
    ``vacation_used`` (seconds), ``vacation_from``, ``vacation_until`` (ISO 8601);
    ``language`` (format 3: a code of ``moderator.i18n.LANGUAGES``, or None: the
    game's, ``GameRecord.language_of``)."""

    name: str
    address: str
    secret: str
    timezone: str | None = None
    bot: bool = False
    abandoned: bool = False
    missed: int = 0
    vacation_used: int = 0
    vacation_from: str | None = None
    vacation_until: str | None = None
    language: str | None = None
    joined: str | None = None  # format 5 (signup): when the seat was confirmed by mail, ISO 8601

    def to_data(self) -> dict[str, Any]:
        """The player's mapping in a game file (``players`` entry); ``joined``
        only when set (a seat taken by sign-up, ``moderation/signup.py``)."""
        return {"name": self.name, "address": self.address, "secret": self.secret,
                "timezone": self.timezone, "bot": self.bot, "abandoned": self.abandoned,
                "missed": self.missed, "vacation_used": self.vacation_used,
                "vacation_from": self.vacation_from, "vacation_until": self.vacation_until,
                "language": self.language, **({"joined": self.joined} if self.joined else {})}

    @classmethod
    def from_data(cls, d: dict[str, Any]) -> "Player":
        """The player of a ``players`` entry (current format).  KeyError/TypeError
        for a malformed entry."""
        return cls(str(d["name"]), str(d["address"] or ""), str(d["secret"]),
                   timezone=d.get("timezone"), bot=bool(d.get("bot")), abandoned=bool(d.get("abandoned")),
                   missed=int(d.get("missed") or 0), vacation_used=int(d.get("vacation_used") or 0),
                   vacation_from=d.get("vacation_from"), vacation_until=d.get("vacation_until"),
                   language=d.get("language") or None, joined=d.get("joined") or None)


@dataclass
class GameRecord:
    """A game with its players and mail history: what one game file holds.

    ``history`` entries are dicts ``{player, order, message_id, received}``, one per
    action in ``game.history``, in the same order; an order from mail has
    ``arrived`` too (when it reached the mailbox, ISO 8601), a move the built-in
    player made has ``by: bot`` (and ``message_id`` None; ``due``: the deadline
    it was made for, when missed).  ``settings`` and ``clock`` are
    the game's clock (``default_settings``, ``default_clock``)."""

    id: str
    game: Game
    players: list[Player]
    board_ref: Any  # "default" or the board mapping
    created: str = ""
    threads: dict[str, str] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    notified: int = 0  # events (game.events entries) already put in spooled status mails
    reply_to: dict[str, str] = field(default_factory=dict)  # player -> order mail to answer
    settings: dict[str, Any] = field(default_factory=default_settings)
    clock: dict[str, Any] = field(default_factory=default_clock)
    # the game master and the moderator's seats bookkeeping (issue 10; docs/game-file.md):
    # {address: None (the operator's) or an address, secret}; observers' addresses;
    # players who asked for digests, who resigned (no more mail but the result), who
    # asked to resign {player: when}; the end a game master called {by, at, standings};
    # and the game master's actions, oldest first ({by, at, command, ...})
    game_master: dict[str, Any] = field(default_factory=lambda: {"address": None, "secret": None})
    observers: list[str] = field(default_factory=list)
    digest: list[str] = field(default_factory=list)
    resigned: list[str] = field(default_factory=list)
    resigning: dict[str, str] = field(default_factory=dict)
    ended: dict[str, Any] | None = None
    gm_log: list[dict[str, Any]] = field(default_factory=list)
    # the number of the last batch of mails without log entries to tell (the
    # clock's notices, an undo's mails) spooled with a save of this file
    # (``notify.spool_status``, ``notify.sweep``); 0: none yet, the key is absent
    mail_batch: int = 0
    # the players' proposals (``moderation/proposals.py``; docs/game-file.md, "Format 5:
    # proposals"): one mapping each, oldest first; the key is absent while there is none
    proposals: list[dict[str, Any]] = field(default_factory=list)
    # orders in advance and standing choices (issue 30; moderation/advance.py):
    # name -> queued orders [{turn, order, language, at}], name -> ["take stack", ...]
    queued: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    standing: dict[str, list[str]] = field(default_factory=dict)
    # what the last change did with them, for its status mails (not part of the file)
    advance_notes: dict[str, list[dict[str, Any]]] = field(default_factory=dict, compare=False, repr=False)
    # format 5 (signup): the settings the game was opened with (``pbem open``), or None
    signup: dict[str, Any] | None = None
    # press (issue 29, docs/game-file.md "Format 5: press"): the players' messages
    # relayed by the moderator, oldest first ({key, from, to, at, text, ...}; the
    # rules engine never sees them), and the seats the game master muted
    press: list[dict[str, Any]] = field(default_factory=list)
    muted: list[str] = field(default_factory=list)
    # deadlines in the calendar (issue 28, docs/game-file.md "Format 6: deadlines in the
    # calendar"; moderation/calendar.py): the seats that said ``calendar off``, and per
    # seat the last deadline event its mails carried ({move, due, sequence, open, high});
    # each key absent while empty
    calendar_off: list[str] = field(default_factory=list)
    calendar: dict[str, dict[str, Any]] = field(default_factory=dict)
    # how it was loaded (not part of the file): the sha256 of the bytes read, and
    # whether the history was replayed and compared with ``state`` (False when a
    # trusted digest let ``GameStore.load`` skip the comparison); None/False for a
    # record not loaded from a file
    source_digest: str | None = field(default=None, compare=False, repr=False)
    checked: bool = field(default=False, compare=False, repr=False)
    # ``(events, mappings)``: the game's events the file's ``log`` mappings were
    # last made from (or read as), so that a save converts only the events added
    # since (``_log_data``); not part of the file
    log_memo: tuple[list[Any], list[dict[str, Any]]] | None = field(default=None, compare=False, repr=False)

    def player_by_name(self, name: str) -> Player:
        """The ``Player`` called ``name``; KeyError if none."""
        for p in self.players:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def language(self) -> str:
        """The game's language (``settings.language``; English when unset): what
        observers and players without their own read, and the archive pages."""
        return str(self.settings.get("language") or DEFAULT_LANGUAGE)

    def language_of(self, player: Player | str | None) -> str:
        """The language ``player`` (a ``Player``, a name, or None for an observer)
        reads: their own (``Player.language``), else the game's (``language``).
        A name not in the game gets the game's."""
        if isinstance(player, str):
            try:
                player = self.player_by_name(player)
            except KeyError:
                player = None
        return (player.language if player is not None and player.language else None) or self.language

    def language_for_address(self, address: str) -> str:
        """The language of the mail of ``address``: a player's (``language_of``),
        else the game's (an observer, a stranger writing to the game); the game
        master's mail (``gm.py``) is answered in English by its caller."""
        return self.language_of(self.player_by_address(address))

    def player_by_address(self, address: str) -> Player | None:
        """The player whose address equals ``address`` (canonical, case-insensitive),
        or None."""
        address = address.strip().lower()
        for p in self.players:
            if p.address.strip().lower() == address:
                return p
        return None

    def has_message(self, message_id: str | None) -> bool:
        """Whether an order from the mail ``message_id`` is already applied, or
        was applied and then taken back by the game master (an ``undone`` entry
        of ``gm_log``): a mail left in the inbox by a cycle killed after its
        save is never applied again after an undo."""
        if not message_id:
            return False
        return any(h.get("message_id") == message_id for h in self.history) or any(
            isinstance(h, dict) and h.get("message_id") == message_id
            for e in self.gm_log for h in (e.get("undone") or []))

    def apply(self, player: str, action: Action, message_id: str | None, received: str = "",
              by: str | None = None) -> list[str]:
        """Push ``action`` for ``player`` and record it with the mail's Message-ID
        (None for a move without mail) and ``received`` (ISO 8601: when the
        moderator read or made it); ``by="bot"`` marks a move the built-in player
        made.  The seat's run of missed moves ends with a move of its own.  When
        the game now waits for another move (not a further initial investment),
        the clock restarts at ``received``.  Returns the public events.  Raises
        IllegalAction with the game unchanged."""
        before = len(self.game.history)
        initial = self.game.phase == "initial"
        events = self.game.push(player, action)
        done = self.game.history[before][1]
        entry = {"player": player, "order": str(done), "message_id": message_id, "received": received}
        if by is not None:
            entry["by"] = by
        self.history.append(entry)
        if message_id:
            self.reply_to[player] = message_id
        if by is None:
            try:
                self.player_by_name(player).missed = 0
            except KeyError:
                pass
        if not (initial and self.game.phase == "initial"):
            self.clock = default_clock(received or None)
        return events

    @property
    def unnotified(self) -> list[Any]:
        """Public events (``moderator.rules.events`` values) not yet sent to the
        players in a status mail."""
        return self.game.events[self.notified:]

    def _log_data(self) -> list[dict[str, Any]]:
        """The game's events as the file's ``log`` mappings (``to_data`` of each),
        those of the events unchanged since the last call or the load taken from
        ``log_memo`` (the same objects, never changed), the others made anew."""
        events = self.game.events
        memo = self.log_memo
        n = 0
        if memo is not None:
            old, done = memo
            n = len(old)
            if n > len(events) or not all(map(operator.is_, old, events)):
                n = 0
        out = (memo[1][:n] if n else []) + [event_to_data(e) for e in events[n:]]  # type: ignore[index]
        self.log_memo = (list(events), out)
        return list(out)

    def to_data(self) -> dict[str, Any]:
        """The game file's mapping in the current ``FORMAT``: the keys ``format``,
        ``game``, ``created``, ``board``, ``board_sha256``, ``seed``, ``ruleset``,
        ``options``, ``players``, ``settings``, ``clock``, ``threads``,
        ``notified``, ``log_length``,
        ``reply_to``, the game master's and seats' keys, ``mail_batch`` (only
        when not 0), ``history``, ``log`` (the public events, ``game.events``, as
        mappings: ``moderator.rules.events.to_data``; since pbem 0.2, mappings
        since format 4), ``state`` in this order (see docs/game-file.md).
        Plain data, independent of the record."""
        g = self.game
        return {
            "format": FORMAT,
            "game": self.id,
            "created": self.created,
            "board": self.board_ref,
            "board_sha256": board_digest(g.board),
            "seed": g.seed,
            "ruleset": g.ruleset,
            "options": dict(g.options),
            "players": [p.to_data() for p in self.players],
            "settings": dict(self.settings),
            "clock": dict(self.clock),
            "threads": dict(self.threads),
            "notified": self.notified,
            "log_length": len(g.events),
            "reply_to": dict(self.reply_to),
            "game_master": dict(self.game_master),
            "observers": list(self.observers),
            "digest": list(self.digest),
            "resigned": list(self.resigned),
            "resigning": dict(self.resigning),
            "ended": dict(self.ended) if self.ended is not None else None,
            "gm_log": [dict(e) for e in self.gm_log],
            **({"mail_batch": self.mail_batch} if self.mail_batch else {}),
            **({"proposals": copy.deepcopy(self.proposals)} if self.proposals else {}),
            **({"queued": copy.deepcopy(self.queued)} if self.queued else {}),
            **({"standing": copy.deepcopy(self.standing)} if self.standing else {}),
            **({"signup": dict(self.signup)} if self.signup else {}),
            **({"press": [dict(e) for e in self.press]} if self.press else {}),
            **({"muted": list(self.muted)} if self.muted else {}),
            **({"calendar_off": list(self.calendar_off)} if self.calendar_off else {}),
            **({"calendar": copy.deepcopy(self.calendar)} if self.calendar else {}),
            "history": list(map(dict, self.history)),
            "log": self._log_data(),
            "state": g.to_dict(),
        }


_DIGESTS: dict[int, tuple[Board, str]] = {}


def board_digest(board: Board) -> str:
    """SHA-256 (64 lower-case hex digits) of the board's canonical YAML dump
    (``board.source`` with sorted keys): the file's ``board_sha256``, which detects a
    changed board.  Computed once per board object; never raises for a loaded board."""
    cached = _DIGESTS.get(id(board))
    if cached is not None and cached[0] is board:
        return cached[1]
    text = yaml.dump(board.source, Dumper=SafeDumper, sort_keys=True, allow_unicode=True)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    _DIGESTS[id(board)] = (board, digest)
    return digest


def _dump(data: dict[str, Any]) -> str:
    return yaml.dump(data, Dumper=SafeDumper, sort_keys=False, allow_unicode=True, width=100)


DUMP_ID = f"pyyaml {yaml.__version__} {SafeDumper.__name__} width=100"
"""What made a file's text (``_dump``): a snapshot (``GameStore.SNAPSHOTS``) names
it, and a file's items are reused by ``write`` only when their text was made by
this very dumper."""

_LISTS = ("history", "log")
_LIST_END = re.compile(r"\n(?![- ])")
_SEQ_START = {i: re.compile("\n" + " " * i + "- ") for i in (0, 2)}
_MAP_START = {i: re.compile("\n" + " " * i + r"[^ \-#\n]") for i in (2, 4)}
"""The game file's growing lists: dumped item by item, unchanged items reused."""


def _item_text(key: str, item: Any) -> str:
    """The text of ``item`` as one entry of the top-level list ``key`` in a dump
    (``- ...`` lines, without the ``key:`` line)."""
    return _dump({key: [item]})[len(key) + 2:]


def _split_block(text: str, indent: int, keys: list | None, n: int) -> list[str] | None:
    """Split ``text`` (whole lines of a block collection at ``indent`` spaces) into
    its ``n`` entries: a sequence (``keys`` None; entries start ``- ``) or a mapping
    with these ``keys`` (entries start ``KEY:``).  None when it has another shape."""
    pad = " " * indent
    pattern = _SEQ_START[indent] if keys is None else _MAP_START[indent]
    starts = [m.start() for m in pattern.finditer("\n" + text)]  # "\n" + line: the line's start
    if n == 0 or len(starts) != n or starts[0] != 0 or not text.endswith("\n"):
        return None
    out = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)])]
    if keys is not None and any(not t.startswith(f"{pad}{k}:") for t, k in zip(out, keys)):
        return None
    return out


def _state_text(state: dict[str, Any], old: dict[str, Any]
                ) -> tuple[str, dict[str, Any], list[Any], list[Any]]:
    """The ``state:`` part of a dump of ``state``, with the texts remembered in
    ``old`` (from a previous ``_state_text`` or a snapshot, ``_state_memo``) reused
    for equal values; the growing values (a non-empty list or mapping) entry by
    entry.  Returns the text, what to remember, the values dumped anew and the
    keys whose text is not all reused from ``old`` (what a snapshot's delta
    frame carries)."""
    if not state or not isinstance(state, dict):
        return _dump({"state": state}), {}, [state], list(state) if isinstance(state, dict) else []
    parts, memo = ["state:\n"], {}
    fresh: list[Any] = []
    changed: list[Any] = []
    run: list[str] = []  # changed keys, dumped together

    def flush() -> None:
        if not run:
            return
        text = _dump({"state": {k: state[k] for k in run}})[len("state:\n"):]
        split = _split_block(text, 2, run, len(run)) if len(run) > 1 else [text]
        if split is None:
            split = [_dump({"state": {k: state[k]}})[len("state:\n"):] for k in run]
        for k, t in zip(run, split):
            memo[k] = ("whole", state[k], t)
            fresh.append(state[k])
        parts.extend(split)
        changed.extend(run)
        run.clear()

    for k, v in state.items():
        o = old.get(k)
        if o is not None and o[0] == "whole" and o[1] == v:
            flush()
            parts.append(o[2])
            memo[k] = o
            continue
        if _by_entries(k, v):
            flush()
            head = f"  {k}:\n"
            cut = len("state:\n") + len(head)
            is_list = isinstance(v, list)
            keys = None if is_list else list(v)
            values = list(v) if is_list else list(v.values())
            if o is not None and o[0] == "entries" and (o[1] is None) == is_list:
                old_keys, old_values, old_texts = o[1], o[2], o[3]
            else:
                old_keys, old_values, old_texts = (None if is_list else []), [], []
            same = keys == old_keys and len(values) == len(old_values)
            at: dict[int, int] | None = None  # where each entry was, when not at its place
            if keys == old_keys:  # entry by entry at the same places, compared in C
                equal = list(map(operator.eq, values, old_values))
            else:  # keys added or gone: by key
                where = {kk: i for i, kk in enumerate(old_keys)}
                at = {i: where[kk] for i, kk in enumerate(keys) if kk in where}
                equal = [i in at and old_values[at[i]] == x for i, x in enumerate(values)]
            if same and all(equal):
                texts = old_texts
            else:
                texts = []
                for i, x in enumerate(values):
                    if i < len(equal) and equal[i]:
                        texts.append(old_texts[i if at is None else at[i]])
                    elif is_list:
                        texts.append(_dump({"state": {k: [x]}})[cut:])
                        fresh.append(x)
                    else:
                        texts.append(_dump({"state": {k: {keys[i]: x}}})[cut:])
                        fresh.append({keys[i]: x})  # the key too
                changed.append(k)
            memo[k] = ("entries", keys, values, texts)
            parts.append(head)
            parts.extend(texts)
            continue
        run.append(k)
    flush()
    return "".join(parts), memo, fresh, changed


def _by_entries(key: Any, value: Any) -> bool:
    """Whether ``_state_text`` dumps this state value entry by entry: a mapping of
    many entries (``placed``) or a list of many mappings (``payouts``), which grow
    with the game and change an entry at a time."""
    if not isinstance(key, str):
        return False
    if isinstance(value, dict):
        return len(value) > 8
    return isinstance(value, list) and len(value) > 2 and all(isinstance(x, dict) for x in value)


def _split_items(text: str, key: str, n: int) -> list[str] | None:
    """The texts of the ``n`` entries of the top-level block list ``key`` in a
    dumped game file ``text`` (each ``- ...`` up to the next entry or key), or None
    when the text does not have exactly that shape."""
    start = text.find(f"\n{key}:\n")
    if start < 0:
        return None
    start += len(key) + 3
    # the list ends before the next line that starts with neither "- " nor a space
    m = _LIST_END.search(text, start - 1)
    end = m.start() + 1 if m else len(text)
    if not text.endswith("\n", start, end):
        return None
    return _split_block(text[start:end], 0, None, n)


def replay(data: dict[str, Any], board: Board) -> Game:
    """Replay a game file's seed + history through the engine.

    ``data`` is a game file's mapping (current format: ``players``, ``seed``,
    ``ruleset``, ``options``, ``history``); ``board`` the board it names.  Each
    ``order`` is read with the strict notation (``moderator.rules.notation``), never
    with the forgiving mail parser.  Returns the replayed ``Game``.  Raises
    StoreError naming the first history entry that cannot be read or does not apply,
    ValueError/KeyError for malformed setup data."""
    names = [p["name"] for p in data["players"]]
    game = Game.new(board, names, data["seed"], data["ruleset"], data.get("options") or {})
    for i, h in enumerate(data.get("history") or []):
        try:
            action = parse_action(h["order"])
            game.push(h["player"], action)
        except Exception as exc:  # noqa: BLE001 - any failure is a corrupt history
            raise StoreError(
                f"history entry {i + 1} ({h.get('player')}: {h.get('order')!r}) does not apply: {exc}"
            ) from exc
    return game


def restore_game(data: dict[str, Any], board: Board, owned: bool = False) -> Game:
    """The ``Game`` recorded in a game file, for a file the moderator itself wrote
    (its bytes hash to the digest recorded at the save): no comparison is needed.

    ``data`` is the file's mapping in the current format (as ``read_data`` gives
    it), ``board`` the board it names (already checked against ``board_sha256``).
    When the file keeps its public ``log`` (files written by pbem 0.2 and later),
    the game is rebuilt from ``state`` with ``Game.from_dict``, without running
    the engine over the history, and its history is a ``History`` of the orders'
    strict notation, read on first use (the moderator wrote them as ``str(action)``
    of actions it applied): a load costs about the same at turn 150 as at turn 1.
    An older file (no ``log``) is replayed (``replay``): the log exists nowhere
    else.  ``owned``: ``data`` is the caller's own fresh mapping (``read_file``
    gives one), which nothing changes afterwards: the game keeps the records of
    ``state`` the engine never changes instead of copying them
    (``Game.from_dict(owned=True)``).

    Raises StoreError for a ``log`` whose length is not ``log_length`` and (by
    replay) for a history entry that cannot be read or does not apply;
    ValueError/KeyError/TypeError for a malformed state, setup data or history
    entry (reading an order later raises ``NotationError``, see ``History``)."""
    log = data.get("log")
    if log is None:
        return replay(data, board)
    if "log_length" in data and data["log_length"] != len(log):
        raise StoreError(f"the file's log has {len(log)} entries, but log_length says {data['log_length']}")
    history = History(list(map(itemgetter("player", "order"), data.get("history") or [])))
    return Game.from_dict(
        data["state"], board=board, players=[p["name"] for p in data["players"]], seed=data["seed"],
        ruleset=data["ruleset"], options=data.get("options") or {}, events=events_from_data(log),
        history=history,
        owned=owned,
    )


def check_log(recorded: Any, events: list[Any]) -> None:
    """Raise StoreError unless a game file's recorded ``log`` (event mappings)
    equals the events of the replayed game, naming the first entry that differs
    (1-based)."""
    replayed = list(map(event_to_data, events))
    if recorded == replayed:
        return
    if not isinstance(recorded, list):
        raise StoreError(f"the recorded log is not a list but {type(recorded).__name__}")
    for i, (a, b) in enumerate(zip(recorded, replayed)):
        if a != b:
            raise StoreError(
                f"the recorded log differs from the replayed log at entry {i + 1}: "
                f"recorded {a!r}, replayed {b!r}"
            )
    n = min(len(recorded), len(replayed))
    raise StoreError(
        f"the recorded log differs from the replayed log at entry {n + 1}: it has "
        f"{len(recorded)} entries, the replay gives {len(replayed)}"
    )


@dataclass(frozen=True)
class FileStamp:
    """What ``os.stat`` says of a game file, enough to notice a change without
    reading it: ``size`` (bytes), ``mtime_ns``, ``inode``.  A rename over the file
    (every save, most editors, a restore) changes the inode; an edit in place
    changes the size or the modification time."""

    size: int
    mtime_ns: int
    inode: int

    @classmethod
    def of(cls, st: os.stat_result) -> "FileStamp":
        """The stamp of an ``os.stat_result`` (``os.stat``, ``os.fstat``, ``DirEntry.stat``)."""
        return cls(st.st_size, st.st_mtime_ns, st.st_ino)


@dataclass(frozen=True)
class GameFile:
    """One game file as read from disk (``GameStore.read_file``): its mapping,
    migrated to the current format (a fresh copy the caller may change), the
    sha256 (64 hex digits) of its bytes, and its ``FileStamp``."""

    game_id: str
    data: dict[str, Any]
    digest: str
    stamp: FileStamp


@dataclass(frozen=True)
class SavedGame:
    """What ``GameStore.write`` wrote: the file's ``path``, the mapping written
    (``GameRecord.to_data()``), the sha256 of the bytes written and the file's
    ``FileStamp`` just after the rename.  ``moderator.store.bookkeeping`` records
    it (``Bookkeeping.record_saved``) so that a later load can trust the file."""

    game_id: str
    path: Path
    data: dict[str, Any]
    digest: str
    stamp: FileStamp


class GameStore:
    """The games directory: ``DIR/GAME.yaml`` per game, ``DIR/GAME.yaml.lock`` locks.

    ``DIR/archive/`` is not used for finished games: they stay in place as the
    archive of game histories (``list_ids(active_only=True)`` filters them).

    ``on_save`` (optional) is called with the ``SavedGame`` after every successful
    ``save``/``write`` (for example ``Bookkeeping.record_saved``, so that the games
    index and the trusted digest follow every save without each caller doing it);
    an exception it raises propagates from ``save`` after the file was written."""

    SNAPSHOT_DELTAS = 8
    """Delta frames a snapshot takes after its whole snapshot (each save appends one
    while its size stays within the whole snapshot's); then the next save writes
    a whole snapshot again: a trusted load reads at most this many deltas."""

    PARSE_CACHE = 32
    """Parsed files kept (least recently used dropped): memory does not grow with
    the number of game files."""

    SNAPSHOTS = ".snapshots"
    """``DIR/.snapshots/GAME.snap``: what ``write`` wrote, in Python's ``marshal``
    format (``_snapshot_blob``: the ``digest`` of the game file's bytes,
    ``DUMP_ID``, the mapping, the length of each list entry's YAML text and the
    texts of ``state``'s entries), so that a trusted load
    (``load(trusted_digest=...)`` of the bytes the moderator wrote) skips the YAML
    parse and the next ``write`` reuses the text of the unchanged entries.  A
    whole snapshot, then the delta frames of the saves since (``_delta_payload``:
    the entries added, the state keys changed), each frame with its CRC-32: a
    save appends a delta to the snapshot this store read or wrote while the file
    is still that one and the deltas stay few (``SNAPSHOT_DELTAS``) and smaller
    than the whole snapshot, else writes a whole snapshot over it, so that a
    save's snapshot does not grow with the game.  Its
    ``marshal`` is read only from this file, which this process or another pbem
    wrote (never data from mail).  A cache, never the record: written after the game file, without
    fsync; used only when the game file's bytes hash to both the trusted digest
    and the snapshot's digest (its last frame's; a file edited by hand, restored or written by
    another tool is parsed, and fully checked by ``load``); a missing, torn or
    stale snapshot is ignored."""

    def __init__(self, directory: str | os.PathLike[str],
                 on_save: Callable[[SavedGame], None] | None = None):
        self.dir = Path(directory)
        self.on_save = on_save
        # parsed game files by path, valid while (inode, size, mtime) are unchanged:
        # one cycle reads a file several times (routing, loading, status mails)
        self._parsed: OrderedDict[Path, tuple[tuple[int, int, int], dict[str, Any], str]] = OrderedDict()
        # the text of each entry of the growing lists of the files this store
        # wrote or read from a snapshot, by path: (digest, {key: (items, texts)});
        # ``write`` reuses the text of the entries that did not change
        self._texts: OrderedDict[Path, tuple[str, dict[str, tuple[list, list[str]]]]] = OrderedDict()
        # the digest ``load`` trusts, by game id, while it reads the file
        self._trusting: dict[str, str] = {}

    def snapshot_path(self, game_id: str) -> Path:
        """The snapshot of game ``game_id`` (see ``SNAPSHOTS``)."""
        return self.dir / self.SNAPSHOTS / f"{game_id}.snap"

    def path(self, game_id: str) -> Path:
        """File of game ``game_id``; ValueError for an id that is not
        ``[A-Za-z0-9][A-Za-z0-9_.-]{0,39}``."""
        if not GAME_ID_RE.fullmatch(game_id):
            raise ValueError(
                f"game id {game_id!r} must be 1-40 letters, digits, '_', '.' or '-', starting with a letter or digit"
            )
        return self.dir / f"{game_id}.yaml"

    def exists(self, game_id: str) -> bool:
        """Whether game ``game_id`` has a file (False for an invalid id; never raises)."""
        try:
            return self.path(game_id).exists()
        except ValueError:
            return False

    def require(self, game_id: str) -> None:
        """Raise StoreError (``no game 'ID' (no file PATH)``, as ``load`` would)
        when game ``game_id`` has no file: checked before taking its lock, so a
        command naming no game leaves no ``GAME.yaml.lock`` behind.  ValueError
        for an invalid id."""
        path = self.path(game_id)
        if not path.exists():
            raise StoreError(f"no game {game_id!r} (no file {path})")

    def ids(self) -> list[str]:
        """Ids of every game file (``*.yaml`` named by a valid id) in the directory,
        sorted; ``[]`` when the directory does not exist."""
        if not self.dir.is_dir():
            return []
        return sorted(p.stem for p in self.dir.glob("*.yaml") if GAME_ID_RE.fullmatch(p.stem))

    def lock(self, game_id: str, timeout: float = 60) -> FileLock:
        """The per-game lock (``filelock.FileLock`` on ``GAME.yaml.lock``), to hold
        while loading, applying and saving; acquiring it raises ``filelock.Timeout``
        after ``timeout`` seconds.  Creates the directory; raises ValueError for an
        invalid id, OSError when the directory cannot be made."""
        self.dir.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.path(game_id)) + ".lock", timeout=timeout)

    def read_data(self, game_id: str) -> dict[str, Any]:
        """The mapping of a game file, migrated to the current ``FORMAT`` (``migrate``),
        not yet checked: a fresh deep copy the caller may change (parsed once while
        the file is unchanged).  Raises StoreError for a missing or unreadable file,
        invalid YAML, a top level that is not a mapping, an unknown, missing or newer
        format, or a failing migration; ValueError for an invalid id."""
        return self.read_file(game_id).data

    def read_file(self, game_id: str) -> GameFile:
        """The game file as ``GameFile``: the mapping as ``read_data`` gives it (a
        fresh copy), the sha256 of the bytes it was parsed from and the file's
        ``FileStamp`` (of the open file: the bytes, digest and stamp belong together
        even if the file is replaced meanwhile).  The bytes are read once; the parse
        is cached while (inode, size, mtime) are unchanged.  Inside ``load`` with a
        trusted digest (what the moderator last wrote), when the bytes hash to it
        and the snapshot ``write`` left has that digest, the mapping is the
        snapshot's (no YAML parse; see ``SNAPSHOTS``).  Raises as ``read_data``."""
        path = self.path(game_id)
        trusted_digest = self._trusting.get(game_id)
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
                cached = self._parsed.get(path)
                if cached is not None and cached[0] == stamp:
                    self._parsed.move_to_end(path)
                    return GameFile(game_id, copy.deepcopy(cached[1]), cached[2], FileStamp.of(st))
                raw = fh.read()
            digest = hashlib.sha256(raw).hexdigest()
            if trusted_digest is not None and digest == trusted_digest:
                data = self._snapshot(game_id, digest, raw)
                if data is not None and data.get("format") == FORMAT:  # a fresh mapping: no copy needed
                    return GameFile(game_id, data, digest, FileStamp.of(st))
                # a snapshot of a file of an older format (written before an upgrade): parsed and migrated
            data = yaml.load(raw.decode("utf-8"), Loader=SafeLoader)
        except FileNotFoundError as exc:
            raise StoreError(f"no game {game_id!r} (no file {path})") from exc
        except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
            raise StoreError(f"game file {path} cannot be read: {exc}") from exc
        if not isinstance(data, dict):
            raise StoreError(f"game file {path} is not a pbem game file (not a mapping)")
        try:
            data = migrate(data)
        except StoreError as exc:
            raise StoreError(f"game file {path}: {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - a migration failing on a malformed file
            raise StoreError(f"game file {path} cannot be migrated to format {FORMAT}: {exc!r}") from exc
        self._parsed[path] = (stamp, data, digest)
        self._parsed.move_to_end(path)
        while len(self._parsed) > self.PARSE_CACHE:
            self._parsed.popitem(last=False)
        return GameFile(game_id, copy.deepcopy(data), digest, FileStamp.of(st))

    def load(self, game_id: str, check: bool = True, trusted_digest: str | None = None) -> GameRecord:
        """Load a game as a ``GameRecord``: read and migrate the file (``read_file``),
        check the board digest, replay ``seed`` + ``history`` with the strict notation
        (``replay``) and, with ``check``, compare the replayed state with ``state``
        and the replayed log with ``log`` (when the file keeps one).

        ``trusted_digest`` (64 hex digits, or None) is the sha256 of the bytes the
        moderator itself last wrote to this file (``SavedGame.digest``, as the
        bookkeeping recorded it: ``Bookkeeping.trusted_digest``).  When the file's
        bytes hash to it, the file is what the moderator wrote after a checked
        game: the game is rebuilt by ``restore_game`` and the comparison is skipped
        (``record.checked`` is False).  Any other file (changed outside the
        moderator, restored, unknown) gets the full replay and comparison as
        without it.  The board digest is checked in both cases.  ``pbem replay``
        and ``pbem doctor`` pass no digest.

        The record's ``source_digest`` is the sha256 of the bytes read.  Never
        changes the file.  Raises StoreError for anything wrong (unreadable, newer
        format, changed board, an order that cannot be read or applied, a malformed
        file, a state mismatch naming the differing keys, a log mismatch naming the
        first differing entry); ValueError for an invalid id."""
        if trusted_digest is not None:
            self._trusting[game_id] = trusted_digest
        try:
            gf = self.read_file(game_id)
        finally:
            self._trusting.pop(game_id, None)
        data = gf.data
        trusted = trusted_digest is not None and trusted_digest == gf.digest
        try:
            board = load_board_ref(data["board"])
            if board_digest(board) != data.get("board_sha256"):
                raise StoreError(
                    f"game {game_id}: the board has changed since the game was created "
                    "(board_sha256 differs)"
                )
            # ``read_file`` gave a fresh mapping, used only here: the game may keep its records
            game = restore_game(data, board, owned=True) if trusted else replay(data, board)
            players = [Player.from_data(p) for p in data["players"]]
            settings = {**default_settings(None), **dict(data["settings"])}
            clock = {**default_clock(), **dict(data["clock"])}
        except StoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - malformed file
            raise StoreError(f"game file {self.path(game_id)} is malformed: {exc!r}") from exc
        checked = check and not trusted
        if checked:
            recorded = data.get("state")
            replayed = game.to_dict()
            if recorded != replayed:
                keys = sorted(k for k in set(recorded or {}) | set(replayed)
                              if (recorded or {}).get(k) != replayed.get(k))
                raise StoreError(
                    f"game {game_id}: replaying the history does not give the recorded state "
                    f"(differs in: {', '.join(keys)})"
                )
            if "log" in data:
                try:
                    check_log(data["log"], game.events)
                except StoreError as exc:
                    raise StoreError(f"game {game_id}: {exc}") from None
        return GameRecord(
            id=game_id,
            game=game,
            players=players,
            board_ref=data["board"],
            created=str(data.get("created", "")),
            threads=dict(data.get("threads") or {}),
            history=list(map(dict, data.get("history") or [])),
            notified=int(data.get("notified", len(game.events))),
            reply_to=dict(data.get("reply_to") or {}),
            settings=settings,
            clock=clock,
            **_seats(data),
            mail_batch=_mail_batch(data),
            proposals=_proposals(data),
            **_advance(data),
            signup=dict(data["signup"]) if isinstance(data.get("signup"), dict) else None,
            **_press(data),
            **_calendar(data),
            source_digest=gf.digest,
            checked=checked,
            # the mappings of a trusted file are those its events were made from
            log_memo=(list(game.events), data["log"]) if trusted and isinstance(data.get("log"), list) and
            len(data["log"]) == len(game.events) else None,
        )

    def save(self, record: GameRecord) -> Path:
        """Write the game file atomically: a temporary file in the same directory,
        flushed and fsynced, then renamed over the old one (the old file survives any
        failure before the rename).  Writes the current ``FORMAT``; returns the path.
        ``write`` does the same and returns the digest of the bytes written too.
        Raises OSError, ValueError for an invalid id."""
        return self.write(record).path

    def write(self, record: GameRecord) -> SavedGame:
        """Save ``record`` as ``save`` does and return the ``SavedGame``: the path,
        the mapping written, the sha256 of the bytes written and the file's stamp
        after the rename (hold the game's lock, so that the stamp is this write's).
        Sets ``record.source_digest`` to that digest and calls ``on_save`` (if set)
        with the ``SavedGame``.  Raises OSError, ValueError for an invalid id, and
        whatever ``on_save`` raises (the file is written then)."""
        path = self.path(record.id)
        self.dir.mkdir(parents=True, exist_ok=True)
        data = record.to_data()
        text, texts = self._dump_reusing(path, data, record.source_digest)
        raw = text.encode("utf-8")
        atomic_write(path, raw)
        saved = SavedGame(record.id, path, data, hashlib.sha256(raw).hexdigest(),
                          FileStamp.of(os.stat(path)))
        if texts is not None:
            self._remember_texts(path, saved.digest, texts)
        self._write_snapshot(record.id, saved.digest, data, texts)
        record.source_digest = saved.digest
        if self.on_save is not None:
            self.on_save(saved)
        return saved


    # -- flat cost: item texts reused, parses skipped ---------------------------
    def _remember_texts(self, path: Path, digest: str, texts: dict[str, Any]) -> None:
        self._texts[path] = (digest, texts)
        self._texts.move_to_end(path)
        while len(self._texts) > self.PARSE_CACHE:
            self._texts.popitem(last=False)

    def _dump_reusing(self, path: Path, data: dict[str, Any], source_digest: str | None
                      ) -> tuple[str, dict[str, Any] | None]:
        """``_dump(data)``, byte for byte, made from the dump of the keys other
        than ``history`` and ``log`` and the text of each of their entries: an
        entry equal to the one at the same place in the file the record was loaded
        from (``source_digest``; texts remembered by this store) keeps its text,
        the others are dumped (the usual case, entries added at the end, reuses
        the unchanged prefix as one slice).  Returns the text and what to
        remember: for each list ``(items, the length of each entry's YAML text,
        the YAML text of all entries)``, the memo of ``state`` (``_state_text``)
        and ``plain`` (whether ``data`` is plain data a snapshot gives back
        exactly, ``_plain``: checked for the parts dumped anew only), and
        ``delta`` (what ``_write_snapshot`` appends to the snapshot the old texts
        came with, ``snap``: the head, per list the entries kept and added, the
        keys of ``state`` whose text changed; None when an entry changed in place
        or there is no such snapshot); None when
        ``data`` does not have the usual key order: then a plain ``_dump``."""
        keys = list(data)
        if keys[-3:] != ["history", "log", "state"] or not all(isinstance(data[k], list) for k in _LISTS):
            return _dump(data), None
        known = self._texts.get(path)
        old = known[1] if known is not None and known[0] == source_digest else {}
        head = {k: data[k] for k in keys[:-3]}
        plain = _plain(head)
        parts = [_dump(head)]
        texts: dict[str, Any] = {"starts": {}}
        # what changed since the snapshot the old texts belong to (None: a whole
        # snapshot is written): the head, the entries kept and added, state's keys
        delta: dict[str, Any] | None = {"on": old["snap"], "head": head, "lists": {}} \
            if old.get("snap") else None
        at = len(parts[0])  # where the text of each list's entries starts
        for key in _LISTS:
            items = data[key]
            if not items:
                parts.append(f"{key}: []\n")
                texts[key] = ([], [], "")
                at += len(parts[-1])
                if delta is not None:
                    delta["lists"][key] = (0, [], [])
                continue
            old_items, old_lens, old_block = old.get(key, ([], [], ""))
            n = min(len(old_items), len(items))
            if n and items[:n] == old_items[:n]:  # the usual case: entries added at the end
                lens = old_lens[:n]
                out = [old_block if n == len(old_items) else old_block[:sum(lens)]]
            else:
                if old_items:
                    delta = None  # an entry changed in place: a whole snapshot
                lens, out, n = [], [], 0
            ends: list[int] = []
            for i in range(n, len(items)):
                item = items[i]
                if i < len(old_items) and old_items[i] == item:
                    if not ends:
                        ends = list(accumulate(old_lens, initial=0))
                    text = old_block[ends[i]:ends[i + 1]]
                else:
                    text = _item_text(key, item)
                    plain = plain and _plain(item)
                out.append(text)
                lens.append(len(text))
            block = "".join(out)
            parts.append(f"{key}:\n")
            parts.append(block)
            texts[key] = (items, lens, block)
            texts["starts"][key] = at + len(key) + 2
            at += len(key) + 2 + len(block)
            if delta is not None:
                delta["lists"][key] = (n, items[n:], lens[n:])
        old_state = old.get("state") or {}
        state_text, texts["state"], fresh, changed = _state_text(data["state"], old_state)
        if delta is not None and isinstance(data["state"], dict) and list(data["state"]) == list(old_state):
            delta["state"] = changed
        else:
            delta = None
        texts["delta"] = delta
        parts.append(state_text)
        plain = plain and all(_plain(v) for v in fresh) and all(type(k) is str for k in data["state"])
        if old and not old.get("plain"):
            plain = _plain(data)  # texts reused from data a snapshot could not hold
        texts["plain"] = plain
        return "".join(parts), texts

    def _write_snapshot(self, game_id: str, digest: str, data: dict[str, Any],
                        texts: dict[str, Any] | None = None) -> None:
        """Write the snapshot of what was just written (best effort: a cache; see
        ``SNAPSHOTS``) with the texts ``_dump_reusing`` made (``texts``): its
        delta frame appended to the snapshot file when it may (``_append``),
        else a whole snapshot over it; ``texts["snap"]`` then says what the file
        holds (its stamp, the deltas after the whole snapshot, the whole one's
        size), for the next save's delta.  Only
        when the snapshot gives back exactly ``data``, as the YAML parse of the
        file would (``texts["plain"]``); else (and without ``texts``) the
        snapshot is removed."""
        path = self.snapshot_path(game_id)
        delta = texts.pop("delta", None) if texts is not None else None
        try:
            if texts is None or not texts.get("plain"):
                path.unlink(missing_ok=True)
                return
            texts["snap"] = None  # what the snapshot file holds, once written
            if delta is not None:
                on = delta["on"]
                frame = _snapshot_frame(_delta_payload(digest, data, texts, delta))
                if on["frames"] < self.SNAPSHOT_DELTAS and \
                        on["stamp"][1] - on["base"] + len(frame) <= on["base"]:
                    stamp = _append(path, frame, on["stamp"], on["last"])
                    if stamp is not None:
                        texts["snap"] = {"stamp": stamp, "frames": on["frames"] + 1, "base": on["base"],
                                         "last": (on["stamp"][1], frame[:_SNAPSHOT_CHECK])}
                        return
            # in place, under the game's lock: a torn or zero-filled snapshot does
            # not read back (its checksum), and one of another file has another digest
            blob = _snapshot_blob(digest, data, texts)
            stamp = _overwrite(path, blob)
            head = len(_SNAPSHOT_MAGIC)
            texts["snap"] = {"stamp": stamp, "frames": 0, "base": len(blob),
                             "last": (head, blob[head:head + _SNAPSHOT_CHECK])}
        except (OSError, TypeError, ValueError):
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass

    def _snapshot(self, game_id: str, digest: str, raw: bytes) -> dict[str, Any] | None:
        """The mapping of the game file whose bytes ``raw`` hash to ``digest``, from
        its snapshot, or None (no snapshot, another digest or dumper, torn,
        unreadable).  Remembers the texts of the file's list entries and of its
        ``state`` for ``write``.  Called by ``load`` only, which copies what it
        keeps of the lists and of ``state`` (the remembered values are the
        mapping's own)."""
        try:
            with open(self.snapshot_path(game_id), "rb") as fh:
                st = os.fstat(fh.fileno())
                blob = fh.read()
        except OSError:
            return None
        frames: list[int] = []
        snap = _read_frames(blob, frames)
        if snap is None or snap[0] != digest:
            return None
        data, lens, starts, layout = snap[1], snap[2], snap[3], snap[4]
        if data.get("format") != FORMAT:
            return None
        text = raw.decode("utf-8")
        last = frames[-2] if len(frames) > 1 else len(_SNAPSHOT_MAGIC)  # where the last frame starts
        texts: dict[str, Any] = {"plain": True, "starts": starts, "snap": {
            "stamp": (st.st_ino, len(blob), st.st_mtime_ns), "frames": len(frames) - 1, "base": frames[0],
            "last": (last, blob[last:last + _SNAPSHOT_CHECK])}}
        for key, follows in zip(_LISTS, (*_LISTS[1:], "state")):
            items = data[key]
            if not items:
                texts[key] = ([], [], "")
                continue
            pos = starts.get(key)
            if type(pos) is not int or len(lens[key]) != len(items) or \
                    not text.startswith(f"\n{key}:\n", pos - len(key) - 3):
                return None
            end = pos + sum(lens[key])
            if not text.startswith(f"{follows}:", end):
                return None  # not the texts this snapshot was made with
            texts[key] = (items, lens[key], text[pos:end])
        memo = _state_memo(data.get("state"), layout)
        if memo is not None:
            texts["state"] = memo
        self._remember_texts(self.path(game_id), digest, texts)
        return data


def _overwrite(path: Path, blob: bytes) -> tuple[int, int, int]:
    """Write ``blob`` over the file ``path`` in place (made, with its directory,
    when missing): its bytes written over the old ones, then the file cut to their
    length; returns the file's ``(inode, size, mtime_ns)`` after the write.
    Neither truncated first nor replaced, so that the file system keeps the
    file's blocks instead of freeing and allocating them at every save.  Not
    atomic: a crash meanwhile leaves a mix of old and new bytes, which a snapshot's
    checksum rejects.  Raises OSError."""
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except FileNotFoundError:
        path.parent.mkdir(exist_ok=True)
        fd = os.open(path, flags, 0o644)
    try:
        view = memoryview(blob)
        while view:
            view = view[os.write(fd, view):]
        os.ftruncate(fd, len(blob))
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _append(path: Path, frame: bytes, stamp: tuple[int, int, int], last: tuple[int, bytes]
            ) -> tuple[int, int, int] | None:
    """Append ``frame`` to the snapshot ``path`` when the file is still the one
    this store last read or wrote there: its ``(inode, size, mtime_ns)`` is
    ``stamp`` and its last frame, at ``last[0]``, still starts with the checksum
    ``last[1]`` (a file rewritten in place to the same size within one tick of a
    coarse clock is told apart too).  Returns the file's new stamp, or None
    (nothing written) when the file is another or missing.  A crash meanwhile
    leaves a torn last frame, which its checksum rejects.  Raises OSError."""
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        if (st.st_ino, st.st_size, st.st_mtime_ns) != stamp:
            return None
        os.lseek(fd, last[0], os.SEEK_SET)
        if os.read(fd, len(last[1])) != last[1]:
            return None
        os.lseek(fd, st.st_size, os.SEEK_SET)
        view = memoryview(frame)
        while view:
            view = view[os.write(fd, view):]
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return (st.st_ino, st.st_size, st.st_mtime_ns)


_KEY_TYPES = (str, int, bool, float, type(None))


def _plain(value: Any) -> bool:
    """Whether ``value`` is plain data that a snapshot (``marshal``) and the YAML
    parse of its dump give back alike: exactly ``dict``, ``list``, ``str``,
    ``int``, ``bool``, ``float`` or None, nested (a tuple, which the dump
    writes as a list, or any subclass is not)."""
    t = type(value)
    if t is str or t is int or value is None or t is bool or t is float:
        return True
    if t is list:
        return all(map(_plain, value))
    if t is dict:
        return all(type(k) in _KEY_TYPES for k in value) and all(map(_plain, value.values()))
    return False


SNAPSHOT_FORMAT = 5
"""The version of the snapshot's layout (``_snapshot_blob``); 1 was JSON lines, 2
``marshal`` without its own checksum, 3 one ``marshal`` payload with a BLAKE2b-128
checksum; 4 frames with a CRC-32 each, a whole snapshot and the deltas of the
saves since; 5 the same layout holding a format-4 file (its ``log`` entries are
event mappings): an older snapshot is not read, the game file is (and the
snapshot written anew at the next save)."""

_SNAPSHOT_MAGIC = b"pbem-snapshot\x00"
_SNAPSHOT_CHECK = 4
"""Bytes of each frame's checksum: the CRC-32 of its payload (``zlib.crc32``,
big-endian), so that a snapshot whose bytes changed after they were written (a
crash that left zeros inside a file of the right length, a torn last frame, a
flipped bit) does not read back.  CRC-32 detects every change of up to 32 bits in
a row and misses other accidental damage once in 4 billion times; a snapshot is
a cache, only ever read back when the game file's bytes hash (sha256) to the
digest the moderator recorded, so a checksum against accidents suffices, at a
quarter of BLAKE2b's time."""


def _snapshot_frame(payload: bytes) -> bytes:
    """One frame of a snapshot file: the CRC-32 of ``payload`` and its length
    (4 bytes each, big-endian), then ``payload``."""
    return zlib.crc32(payload).to_bytes(_SNAPSHOT_CHECK, "big") + len(payload).to_bytes(4, "big") + payload


def _layout_entry(memo: tuple[Any, ...]) -> tuple[str, Any]:
    """The snapshot's texts of one ``state`` entry from its ``_state_text`` memo:
    ``("whole", text)`` or ``("entries", [text of each entry])``."""
    if memo[0] == "whole":
        return ("whole", memo[2])
    return ("entries", memo[3])


def _snapshot_blob(digest: str, data: dict[str, Any], texts: dict[str, Any]) -> bytes:
    """A whole snapshot of a game file (``GameStore.SNAPSHOTS``): the magic, then
    one frame (``_snapshot_frame``) whose payload is the ``marshal`` (format
    version 4; an object that occurs twice in ``data`` is shared again, as the
    YAML anchor its dump would have) of ``(SNAPSHOT_FORMAT, DUMP_ID, digest,
    data, lengths, starts, layout)``: ``lengths`` the length in characters of
    each entry's YAML text in the game file, by list; ``starts`` where (in
    characters) the text of each non-empty list's entries starts; ``layout`` the
    texts of ``state``'s entries as ``_state_text`` cut them (``_layout_entry``).
    Later saves append delta frames (``_delta_payload``).  Raises ValueError for
    data ``marshal`` cannot hold."""
    layout = {k: _layout_entry(m) for k, m in texts["state"].items()}
    lens = {k: texts[k][1] for k in _LISTS}
    payload = marshal.dumps((SNAPSHOT_FORMAT, DUMP_ID, digest, data, lens, texts["starts"], layout), 4)
    return _SNAPSHOT_MAGIC + _snapshot_frame(payload)


def _delta_payload(digest: str, data: dict[str, Any], texts: dict[str, Any], delta: dict[str, Any]) -> bytes:
    """The payload of a delta frame: what turns the snapshot the file holds into
    the snapshot of ``data`` (just written, its bytes hashing to ``digest``), as
    ``_dump_reusing`` found it (``delta``): the ``marshal`` of ``("delta",
    digest, head, lists, starts, keys, changes)`` where ``head`` is the
    ``marshal`` (bytes) of the keys before ``history`` (only the last frame's is
    read), ``lists`` ``{key: (entries kept, entries added, their YAML text
    lengths)}`` for ``history`` and ``log``, ``starts`` as in the whole snapshot,
    ``keys`` the keys of ``state`` in order and ``changes`` ``{key: (value,
    layout entry)}`` for the keys of ``state`` whose text changed.  Raises
    ValueError for data ``marshal`` cannot hold."""
    state = data["state"]
    changes = {k: (state[k], _layout_entry(texts["state"][k])) for k in delta["state"]}
    return marshal.dumps(("delta", digest, marshal.dumps(delta["head"], 4), delta["lists"], texts["starts"],
                          list(state), changes), 4)


def read_snapshot(blob: bytes) -> tuple[str, dict[str, Any], dict[str, list[int]], dict[str, int],
                                         dict[str, Any]] | None:
    """A snapshot's ``(digest, data, YAML text lengths, starts, state layout)`` (see
    ``_snapshot_blob``), its delta frames applied, or None when it is not a
    complete snapshot of this layout made by this dumper (``DUMP_ID``), or a
    frame's checksum does not match its bytes."""
    return _read_frames(blob, [])


def _read_frames(blob: bytes, sizes: list[int]) -> tuple[str, dict[str, Any], dict[str, list[int]],
                                                          dict[str, int], dict[str, Any]] | None:
    """``read_snapshot``, appending to ``sizes`` the end of each frame (the first:
    the size of the whole snapshot before any delta)."""
    if not blob.startswith(_SNAPSHOT_MAGIC):
        return None
    view = memoryview(blob)  # the payloads are not copied
    pos, frames = len(_SNAPSHOT_MAGIC), []
    try:
        while pos < len(blob):
            size = int.from_bytes(view[pos + _SNAPSHOT_CHECK:pos + _SNAPSHOT_CHECK + 4], "big")
            start = pos + _SNAPSHOT_CHECK + 4
            payload = view[start:start + size]
            if start > len(blob) or not size or len(payload) != size or \
                    zlib.crc32(payload).to_bytes(_SNAPSHOT_CHECK, "big") != blob[pos:pos + _SNAPSHOT_CHECK]:
                return None
            frames.append(marshal.loads(payload))
            pos = start + size
            sizes.append(pos)
        if not frames:
            return None
        snap = frames[0]
        if type(snap) is not tuple or len(snap) != 7 or snap[0] != SNAPSHOT_FORMAT or snap[1] != DUMP_ID:
            return None
        _, _, digest, data, lens, starts, layout = snap
        if type(digest) is not str or not all(type(x) is dict for x in (data, lens, starts, layout)):
            return None
        if not all(type(data.get(k)) is list and type(lens.get(k)) is list for k in _LISTS):
            return None
        head = None
        state = data.get("state")
        for frame in frames[1:]:
            if type(frame) is not tuple or len(frame) != 7 or frame[0] != "delta" or type(state) is not dict:
                return None
            _, digest, head, lists, starts, keys, changes = frame
            for key in _LISTS:
                keep, items, added = lists[key]
                entries, lengths = data[key], lens[key]
                if type(keep) is not int or not 0 <= keep <= len(entries) or type(items) is not list or \
                        type(added) is not list or len(items) != len(added):
                    return None
                del entries[keep:], lengths[keep:]
                entries.extend(items)
                lengths.extend(added)
            for k, (value, entry) in changes.items():
                if k not in state:
                    return None
                state[k] = value
                layout[k] = entry
            if list(state) != keys:
                return None
        if head is not None:
            head = marshal.loads(head)
            if type(head) is not dict or any(k in head for k in (*_LISTS, "state")):
                return None
            data = {**head, "history": data["history"], "log": data["log"], "state": state}
        if type(digest) is not str or type(starts) is not dict:
            return None
    except (ValueError, EOFError, TypeError, KeyError, IndexError):
        return None
    return digest, data, lens, starts, layout


def _state_memo(state: Any, layout: dict[str, Any]) -> dict[str, Any] | None:
    """What ``_state_text`` remembers of ``state`` (its values, not copies), from
    the texts of a snapshot's ``layout``; None when they do not fit."""
    if not isinstance(state, dict) or list(state) != list(layout):
        return None
    memo: dict[str, Any] = {}
    for k, v in state.items():
        how = layout[k]
        if how[0] == "whole":
            memo[k] = ("whole", v, how[1])
        elif isinstance(v, list) and len(v) == len(how[1]):
            memo[k] = ("entries", None, list(v), how[1])
        elif isinstance(v, dict) and len(v) == len(how[1]):
            memo[k] = ("entries", list(v), list(v.values()), how[1])
        else:
            return None
    return memo


def _seats(data: dict[str, Any]) -> dict[str, Any]:
    """The game master's and seats' keys of a game file as ``GameRecord`` fields
    (``game_master``, ``observers``, ``digest``, ``resigned``, ``resigning``,
    ``ended``, ``gm_log``); a file without them (written before issue 10) gets
    their defaults: the operator as game master without a secret yet (``pbem gm
    GAME secret`` gives one), nothing else.
    Raises StoreError for a key of the wrong shape."""
    gm = data.get("game_master")
    if gm is None:
        gm = {"address": None, "secret": None}
    if not isinstance(gm, dict) or not (gm.get("secret") is None or isinstance(gm.get("secret"), str)) or \
            not (gm.get("address") is None or isinstance(gm.get("address"), str)):
        raise StoreError(f"game_master must be a mapping {{address, secret}}, not {gm!r}")
    out: dict[str, Any] = {"game_master": {"address": gm.get("address"), "secret": gm["secret"]}}
    for key, kind in (("observers", list), ("digest", list), ("resigned", list), ("resigning", dict),
                      ("gm_log", list)):
        value = data.get(key)
        value = kind() if value is None else value
        if not isinstance(value, kind):
            raise StoreError(f"{key} must be a {kind.__name__}, not {value!r}")
        out[key] = copy.deepcopy(value)
    ended = data.get("ended")
    if ended is not None and not isinstance(ended, dict):
        raise StoreError(f"ended must be a mapping or null, not {ended!r}")
    out["ended"] = dict(ended) if ended is not None else None
    return out


def _advance(data: dict[str, Any]) -> dict[str, Any]:
    """The game file's optional ``queued`` (name -> list of mappings) and
    ``standing`` (name -> list of texts) as ``GameRecord`` fields; absent or null:
    empty.  Raises StoreError for a value of the wrong shape (issue 30)."""
    out: dict[str, Any] = {}
    for key, item in (("queued", dict), ("standing", str)):
        value = data.get(key) or {}
        if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, list) and all(isinstance(e, item) for e in v)
                for k, v in value.items()):
            raise StoreError(f"{key} must map player names to lists, not {value!r}")
        out[key] = copy.deepcopy(value)
    return out
def _press(data: dict[str, Any]) -> dict[str, Any]:
    """The press keys of a game file (``press``: a list of mappings, ``muted``: a
    list of seat names) as ``GameRecord`` fields; absent (every file before
    issue 29) means none.  Raises StoreError for a key of the wrong shape."""
    press = data.get("press") or []
    if not isinstance(press, list) or not all(isinstance(e, dict) for e in press):
        raise StoreError(f"press must be a list of mappings, not {press!r}")
    muted = data.get("muted") or []
    if not isinstance(muted, list) or not all(isinstance(n, str) for n in muted):
        raise StoreError(f"muted must be a list of seat names, not {muted!r}")
    return {"press": copy.deepcopy(press), "muted": list(muted)}


def _calendar(data: dict[str, Any]) -> dict[str, Any]:
    """The calendar keys of a game file (``calendar_off``: a list of seat names;
    ``calendar``: seat name -> the last deadline event sent, a mapping with
    ``move`` and ``sequence`` whole numbers; docs/game-file.md "Format 6:
    deadlines in the calendar") as ``GameRecord`` fields; absent (every file
    before issue 28) means none.  Raises StoreError for a key of the wrong shape."""
    off = data.get("calendar_off") or []
    if not isinstance(off, list) or not all(isinstance(n, str) for n in off):
        raise StoreError(f"calendar_off must be a list of seat names, not {off!r}")
    sent = data.get("calendar") or {}
    if not isinstance(sent, dict) or not all(
            isinstance(k, str) and isinstance(v, dict)
            and all(isinstance(v.get(n), int) and not isinstance(v.get(n), bool) for n in ("move", "sequence"))
            for k, v in sent.items()):
        raise StoreError(f"calendar must map seat names to mappings with move and sequence, not {sent!r}")
    return {"calendar_off": list(off), "calendar": copy.deepcopy(sent)}


def _mail_batch(data: dict[str, Any]) -> int:
    """The game file's ``mail_batch`` (0 when absent: no batch of notices spooled
    with a save yet).  Raises StoreError for anything but a whole number >= 0."""
    value = data.get("mail_batch", 0)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise StoreError(f"mail_batch must be a whole number >= 0, not {value!r}")
    return value


def _proposals(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The game file's ``proposals`` (``[]`` when absent: none was ever made;
    docs/game-file.md, "Format 5: proposals"), each a mapping, copied.  Raises
    StoreError for anything but a list of mappings."""
    value = data.get("proposals")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        raise StoreError(f"proposals must be a list of mappings, not {value!r}")
    return copy.deepcopy(value)


def load_board_ref(ref: Any) -> Board:
    """The ``Board`` a game file's ``board`` names: ``"default"`` (the shipped board)
    or an embedded board mapping.  Raises StoreError for anything else, BoardError for
    an unusable mapping."""
    if ref == "default":
        return Board.default()
    if isinstance(ref, dict):
        return Board.from_dict(ref)
    raise StoreError(f"unknown board reference {ref!r}")


def board_ref_for(path: str | os.PathLike[str] | None) -> tuple[Any, Board]:
    """``(board_ref, board)`` for ``pbem new --board``: ``"default"`` for the shipped
    board, else the file's mapping, embedded in the game file so the game stays
    replayable if the file changes.  Raises BoardError, OSError for an unreadable
    board file."""
    if path is None or Path(path).resolve() == DEFAULT_BOARD_PATH.resolve():
        return "default", Board.default()
    board = Board.load(path)
    return board.source, board
