"""The moderator's own bookkeeping in SQLite: ``spool/pbem.sqlite3``.

Game files stay YAML: they are the archive and the record of every game.  This
database holds only what the moderator remembers *about* its mail and its games,
so that one cycle need not rewrite a 5,000-entry YAML list per mail nor open every
game file per poll:

=================  ===========================================================
table              what
=================  ===========================================================
``answered``       keys of mails (or parts of mails, ``MID#commands``) already
                   answered: ``key``, ``game``, ``at``; bounded (``prune``)
``alerts``         operator alerts: ``text`` → ``at`` (last mailed); newest 200
``bounces``        ``address`` (canonical) → ``reason``
``inbox``          the IMAP inbox memory: one row ``mailbox``, ``uidvalidity``,
                   ``last_uid``
``pending_moves``  inbox keys handled but not yet moved out of the inbox
``meta``           ``key`` → ``value``: ``last_success``, ``smtp_failing_since``,
                   ``smtp_limit``, ``smtp_learned_limit``, ``mail_held`` (JSON),
                   ``migrated_from``, ...
``games``          the games index: per game id the file's ``size``,
                   ``mtime_ns``, ``inode``; ``digest`` (sha256 of the bytes the
                   moderator last wrote, or that a full check accepted);
                   ``needs_check``; ``phase``, ``notified``, ``log_length``
                   (status mails owed while ``notified < log_length``);
                   ``deadline`` (nullable, for a later feature); ``error``
                   (why the file could not be read)
``game_players``   ``game``, ``address`` (canonical), ``name``: routing a
                   sender to their games without opening the game files
``daily_counts``   ``name``, ``day`` (UTC date) → ``n``: answers counted per
                   day for the moderation's daily limits (schema 2); days
                   before yesterday are dropped (``prune_counts``)
``people``         the registry of people (schema 3): each address confirmed
                   by a reply, its display name, language, first and last
                   confirmation; their games are ``signups`` and
                   ``game_players`` (``person_games``)
``open_games``     games opened by ``pbem open`` and not yet started (schema
                   3): ``id``, ``setup`` (JSON), ``state``, ``opened``,
                   ``expires``, ``closed``; kept after the start or close
``signups``        who asked to join an open game (schema 3): ``game``,
                   ``address``, ``name``, ``state``, ``pending``, ``secret``,
                   ``asked``, ``joined``, in the order asked (``seq``)
``pool``           the substitute pool (schema 4): ``address``, ``game`` (an
                   id or ``*``), ``since``; ``people.used`` is when a person
                   last took a seat from it
``pool_asks``      ``substitute on|off`` waiting for the confirmation by reply
``vacancies``      abandoned seats offered to the pool: ``game``, ``seat``,
                   ``why``, ``state``, ``round``, ``round_ends``
``offers``         each offer of a vacancy to a volunteer: ``game``, ``seat``,
                   ``address``, ``round``, ``state``, ``secret``,
                   ``gm_secret``, ``sent``, ``expires``
``person_settings`` a person's settings across their games (schema 5):
                   ``address``, ``key`` (``timezone``, ``language``,
                   ``digest``, ``calendar``, ``substitute``), ``value``,
                   ``set_at`` (``moderation/people.py``)
``game_overrides`` a setting a person set in one game's own thread (schema
                   5): ``address``, ``game``, ``key``, ``value``: it wins
                   over the person's in that game
``vacation_ledger`` the vacation bank's ledger (schema 5): ``address``,
                   ``at``, ``seconds`` (spent > 0, given back < 0), ``games``
``unsubscribe_tokens`` the List-Unsubscribe tokens (schema 6): ``token``,
                   ``address``, ``kind`` (``digest`` or ``pool``), ``created``
                   (``moderation/unsubscribe.py``)
``digests``        the local day of each person's last daily digest (schema
                   6): ``address``, ``day``, ``sent_at`` (``moderation/digest.py``)
``person_threads`` the person thread (schema 5): ``address``, ``secret``
                   (keys the token of its Message-IDs), ``thread``, ``opened``
=================  ===========================================================

The open-game, people and pool tables (schemas 3 and 4) and all of schema 5 are
not rebuilt from the game files: an open game lives here until it starts (its
game file is written then); a person's settings, vacation ledger and thread
secret, and the substitute pool, live only here (the seats' own zone and
language are in the game files).  Back the database up with the
games (docs/operations.md, "Open games").

Times are stored as ISO 8601 text in UTC with microseconds
(``2026-11-29T14:02:11.000000+00:00``: fixed width, so text order is time order);
the API takes and gives timezone-aware ``datetime`` objects (a naive one is taken
as UTC).

Durability: WAL journal, ``synchronous=FULL`` (every commit is fsynced, as the
fsynced YAML was), every method is one transaction unless called inside
``transaction()``, which groups the writes of a whole cycle into one commit (one
fsync).  A process killed at any moment leaves every committed transaction and
none of the uncommitted one.  Another process (``pbem new``, ``pbem doctor``) may
read meanwhile; writers wait up to ``busy_timeout`` seconds for each other.

Schema: ``PRAGMA user_version`` is the schema version; ``MIGRATIONS[i]`` brings a
database of version ``i`` to ``i + 1``; opening applies the missing ones in order,
in one transaction.  A database of a newer version raises ``BookkeepingError``.

On the first open next to an old ``moderator.yaml`` (``ModeratorState``), its
content is imported in one transaction and the file is renamed
``moderator.yaml.migrated`` (kept, so that a downgrade still finds it: rename it
back).  The import is idempotent; a crash between the commit and the rename
imports the same file again on the next open.

Everything here can be lost without losing a game: the games index is rebuilt from
the game files (``sync_games``); what is lost is the answered keys (a mail read
again could be answered a second time; an order is never applied twice, the game
history knows its mails), the alerts (the operator may be mailed again), the
bounces and the inbox position.  See docs/operations.md, "The bookkeeping database".
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import yaml

from . import GAME_ID_PATTERN
from .gamefile import FileStamp, GameStore, SavedGame, StoreError

__all__ = ["Bookkeeping", "BookkeepingError", "GameRef", "GameIndexEntry", "InboxMemory",
           "SyncReport", "DB_NAME", "LEGACY_NAME", "MIGRATIONS", "SCHEMA_VERSION"]

DB_NAME = "pbem.sqlite3"
"""The database's file name in the spool directory."""
LEGACY_NAME = "moderator.yaml"
"""The file of the old bookkeeping (``ModeratorState``) imported on first open."""

_GAME_FILE_RE = re.compile(rf"({GAME_ID_PATTERN})\.yaml")


MISSING = "file missing:"
"""The start of a games-index ``error`` of a game whose file is gone."""


class BookkeepingError(Exception):
    """The database cannot be used: not an SQLite database (damaged), written by a
    newer pbem (schema version), missing when opened read-only, or a failed
    migration.  The message says which and what to do."""


# ------------------------------------------------------------------ schema
_V1 = """
CREATE TABLE answered (
    seq  INTEGER PRIMARY KEY,          -- insertion order: retention by count
    key  TEXT NOT NULL UNIQUE,         -- Message-ID, 'sha256:...', or 'MID#commands'
    game TEXT,                         -- the game it was about, if any
    at   TEXT NOT NULL                 -- when it was answered (UTC ISO)
);
CREATE INDEX answered_at ON answered(at);
CREATE TABLE alerts (
    text TEXT PRIMARY KEY,
    at   TEXT NOT NULL                 -- last mailed to the operator (UTC ISO)
);
CREATE TABLE bounces (
    address TEXT PRIMARY KEY,          -- canonical address
    reason  TEXT NOT NULL
);
CREATE TABLE inbox (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    mailbox     TEXT NOT NULL,
    uidvalidity INTEGER NOT NULL,
    last_uid    INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE pending_moves (
    seq INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE           -- inbox key (IMAP 'UIDVALIDITY:UID', a Maildir name)
);
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT
);
CREATE TABLE games (
    id          TEXT PRIMARY KEY,      -- game id (file games/ID.yaml)
    size        INTEGER NOT NULL,      -- the file as last seen: os.stat st_size,
    mtime_ns    INTEGER NOT NULL,      --   st_mtime_ns,
    inode       INTEGER NOT NULL,      --   st_ino
    digest      TEXT,                  -- sha256 of the bytes the moderator wrote (or a full check accepted)
    needs_check INTEGER NOT NULL DEFAULT 0,  -- 1: changed outside the moderator, replay fully
    phase       TEXT,                  -- state.phase ('initial', ..., 'over'); NULL if unreadable
    notified    INTEGER NOT NULL DEFAULT 0,
    log_length  INTEGER NOT NULL DEFAULT 0,
    deadline    TEXT,                  -- next deadline (UTC ISO) or NULL
    error       TEXT,                  -- why the file cannot be read, or NULL
    updated     TEXT NOT NULL          -- when this row was written (UTC ISO)
);
CREATE INDEX games_owing ON games(id) WHERE notified < log_length;
CREATE INDEX games_deadline ON games(deadline) WHERE deadline IS NOT NULL;
CREATE TABLE game_players (
    game    TEXT NOT NULL,
    address TEXT NOT NULL,             -- canonical address
    name    TEXT NOT NULL,
    PRIMARY KEY (address, game, name)
) WITHOUT ROWID;
CREATE INDEX game_players_game ON game_players(game);
"""

_V2 = """
CREATE TABLE daily_counts (
    name TEXT NOT NULL,                -- what is counted, e.g. 'orderless:GAME:ADDRESS'
    day  TEXT NOT NULL,                -- UTC date, YYYY-MM-DD
    n    INTEGER NOT NULL,
    PRIMARY KEY (name, day)
) WITHOUT ROWID;
"""

_V3 = """
CREATE TABLE people (
    address   TEXT PRIMARY KEY,        -- canonical address, confirmed by a reply from it
    name      TEXT NOT NULL,           -- the display name last chosen (a seat name)
    language  TEXT,                    -- the language they wrote in, or NULL
    confirmed TEXT NOT NULL,           -- first confirmation (UTC ISO)
    seen      TEXT NOT NULL            -- last confirmation (UTC ISO)
);
CREATE TABLE open_games (
    id       TEXT PRIMARY KEY,         -- the game id the started game's file gets
    setup    TEXT NOT NULL,            -- JSON: the settings of `pbem open` (moderation/signup.py)
    state    TEXT NOT NULL,            -- open, extend (start date passed, short of seats), started,
                                       --   expired, cancelled
    opened   TEXT NOT NULL,            -- UTC ISO
    expires  TEXT NOT NULL,            -- UTC ISO: closed unless started by then
    closed   TEXT                      -- when it left 'open' (UTC ISO)
);
CREATE TABLE signups (
    seq      INTEGER PRIMARY KEY,      -- the order people asked in (the waiting list's order)
    game     TEXT NOT NULL,
    address  TEXT NOT NULL,            -- canonical address
    name     TEXT NOT NULL,            -- the seat name asked for
    state    TEXT NOT NULL,            -- asked, seated, waiting, offered, left, lapsed
    pending  TEXT,                     -- what a confirmation does: join, leave, offer; NULL: nothing
    secret   TEXT NOT NULL,            -- keys the token in the confirmation's Message-ID
    asked    TEXT NOT NULL,            -- when the confirmation was sent (UTC ISO)
    joined   TEXT,                     -- when the seat (or waiting place) was confirmed
    language TEXT
);
CREATE INDEX signups_game ON signups(game, seq);
CREATE INDEX signups_address ON signups(address);
"""

_V4 = """
ALTER TABLE people ADD COLUMN used TEXT;   -- when they last took a seat from the substitute pool (UTC ISO)
CREATE TABLE pool (
    address TEXT NOT NULL,             -- canonical address of a person of the registry
    game    TEXT NOT NULL,             -- a game id, or '*': every game
    since   TEXT NOT NULL,             -- when the membership was confirmed (UTC ISO)
    PRIMARY KEY (address, game)
) WITHOUT ROWID;
CREATE TABLE pool_asks (
    address  TEXT PRIMARY KEY,         -- canonical: 'substitute on|off' waiting for the reply
    what     TEXT NOT NULL,            -- on, off
    game     TEXT,                     -- on: a game id or '*'
    name     TEXT NOT NULL,            -- the display name the registry gets
    secret   TEXT NOT NULL,            -- keys the token in the confirmation's Message-ID
    asked    TEXT NOT NULL,
    language TEXT
);
CREATE TABLE vacancies (
    game       TEXT NOT NULL,
    seat       TEXT NOT NULL,          -- the seat name (the built-in player keeps it meanwhile)
    why        TEXT NOT NULL,          -- abandoned, ejected, resigned
    state      TEXT NOT NULL,          -- open, gm (a taker waits for the game master), filled, closed
    opened     TEXT NOT NULL,
    round      INTEGER NOT NULL,       -- rounds of offers sent
    round_ends TEXT,                   -- when the offers of the last round lapse (UTC ISO)
    PRIMARY KEY (game, seat)
) WITHOUT ROWID;
CREATE TABLE offers (
    seq      INTEGER PRIMARY KEY,
    game     TEXT NOT NULL,
    seat     TEXT NOT NULL,
    address  TEXT NOT NULL,            -- canonical: the volunteer offered the seat
    round    INTEGER NOT NULL,
    state    TEXT NOT NULL,            -- offered, gm (taken, the game master asked), taken, vetoed,
                                       --   lapsed, lost (the seat went to another)
    secret   TEXT NOT NULL,            -- keys the token of the offer's Message-ID
    gm_secret TEXT,                    -- keys the token of the game master's question
    sent     TEXT NOT NULL,
    expires  TEXT NOT NULL
);
CREATE INDEX offers_game ON offers(game, seat);
CREATE INDEX offers_address ON offers(address);
"""

_V5 = """
CREATE TABLE person_settings (
    address TEXT NOT NULL,             -- canonical address
    key     TEXT NOT NULL,             -- timezone, language, digest, calendar, substitute
    value   TEXT NOT NULL,
    set_at  TEXT NOT NULL,             -- UTC ISO
    PRIMARY KEY (address, key)
) WITHOUT ROWID;
CREATE TABLE game_overrides (
    address TEXT NOT NULL,             -- canonical address
    game    TEXT NOT NULL,
    key     TEXT NOT NULL,             -- a setting set in the game's own thread: it wins there
    value   TEXT NOT NULL,
    set_at  TEXT NOT NULL,
    PRIMARY KEY (address, game, key)
) WITHOUT ROWID;
CREATE TABLE vacation_ledger (
    seq     INTEGER PRIMARY KEY,
    address TEXT NOT NULL,             -- canonical address
    at      TEXT NOT NULL,             -- when it was spent or given back (UTC ISO)
    seconds INTEGER NOT NULL,          -- spent (> 0) or given back by 'vacation off' (< 0)
    games   TEXT NOT NULL              -- JSON list of the game ids whose clock it stopped
);
CREATE INDEX vacation_ledger_address ON vacation_ledger(address, seq);
CREATE TABLE person_threads (
    address TEXT PRIMARY KEY,          -- canonical address
    secret  TEXT NOT NULL,             -- keys the token of the person thread's Message-IDs
    thread  TEXT,                      -- the Message-ID of the first answer (References)
    opened  TEXT NOT NULL              -- UTC ISO
);
"""

_V6 = """
CREATE TABLE unsubscribe_tokens (
    token   TEXT PRIMARY KEY,          -- secrets.token_urlsafe: the List-Unsubscribe URI's
    address TEXT NOT NULL,             -- canonical address
    kind    TEXT NOT NULL,             -- digest (the daily digest) or pool (the substitute pool's offers)
    created TEXT NOT NULL,             -- UTC ISO
    UNIQUE (address, kind)
);
CREATE TABLE digests (
    address TEXT PRIMARY KEY,          -- canonical address
    day     TEXT NOT NULL,             -- the local date (the person's zone) of the last digest
    sent_at TEXT NOT NULL              -- UTC ISO
) WITHOUT ROWID;
"""

MIGRATIONS: list[Callable[[sqlite3.Connection], None] | str] = [_V1, _V2, _V3, _V4, _V5, _V6]
"""``MIGRATIONS[i]`` brings the schema from version ``i`` to ``i + 1``: an SQL
script (run statement by statement) or a function of the connection.  Append only;
never change a released step.  Each runs inside the opening transaction."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this pbem writes (``PRAGMA user_version``)."""


def _statements(script: str) -> list[str]:
    """The statements of an SQL script, split at the ``;`` that end one
    (``sqlite3.complete_statement``: not those in comments or strings).
    (``executescript`` cannot be used: it commits the open transaction.)"""
    out, buf = [], ""
    for piece in script.split(";"):
        buf += piece + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \n\t;"):
                out.append(buf)
            buf = ""
    if buf.strip(" \n\t;"):
        out.append(buf)  # incomplete: let SQLite say what is wrong
    return out


# ------------------------------------------------------------------ values
@dataclass(frozen=True)
class GameRef:
    """A game a sender plays in (``Bookkeeping.games_of``): ``game_id``, ``phase``
    (``'over'`` for a finished game; None for an unreadable file), the ``names`` of
    the sender's players in it, and ``needs_check``."""

    game_id: str
    phase: str | None
    names: tuple[str, ...]
    needs_check: bool


@dataclass(frozen=True)
class GameIndexEntry:
    """One row of the games index (``Bookkeeping.game``)."""

    game_id: str
    stamp: FileStamp
    digest: str | None
    needs_check: bool
    phase: str | None
    notified: int
    log_length: int
    deadline: datetime | None
    error: str | None
    addresses: tuple[str, ...]

    @property
    def owes_mail(self) -> bool:
        """Whether status mails are still to be spooled (``notified < log_length``)."""
        return self.notified < self.log_length


@dataclass(frozen=True)
class InboxMemory:
    """The IMAP inbox memory: the ``mailbox`` name, its ``uidvalidity`` and the
    highest UID handled (``last_uid``, 0 before any)."""

    mailbox: str
    uidvalidity: int
    last_uid: int


@dataclass
class SyncReport:
    """What ``Bookkeeping.sync_games`` did, as lists of game ids: ``added`` (files
    not in the index: new games, files copied in by hand), ``changed`` (files whose
    bytes differ from what the moderator wrote: flagged ``needs_check``),
    ``touched`` (stamp changed, bytes the same: only the stamp updated),
    ``removed`` (files gone: their rows dropped), ``unreadable`` ({id: error})."""

    added: list[str]
    changed: list[str]
    touched: list[str]
    removed: list[str]
    unreadable: dict[str, str]

    @property
    def flagged(self) -> list[str]:
        """Games whose next load must replay fully: ``added`` + ``changed``."""
        return sorted(self.added + self.changed)


def _utc(when: datetime) -> datetime:
    if when.tzinfo is None:
        return when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc)


def _iso(when: datetime | None) -> str | None:
    """Fixed-width UTC ISO text of ``when`` (None stays None)."""
    if when is None:
        return None
    return _utc(when).isoformat(timespec="microseconds")


def _json_meta(value: str | None) -> Any:
    """A meta value written as JSON; None when absent or unreadable."""
    if not value:
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def _dt(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def _legacy_time(value: Any) -> str | None:
    """An ISO time from the old YAML (a string, or a datetime YAML parsed) as
    stored here; None for anything unreadable."""
    if isinstance(value, datetime):
        return _iso(value)
    if isinstance(value, str):
        try:
            return _iso(datetime.fromisoformat(value))
        except ValueError:
            return None
    return None


def _canonical(address: str) -> str:
    """The canonical form of a player address, as ``canonical_address`` (imported
    late: the mail package is not needed to open the database)."""
    from ..mail.read import canonical_address
    return canonical_address(address)


# ------------------------------------------------------------------ the database
class Bookkeeping:
    """The bookkeeping database at ``path`` (created with its directory if missing).

    ``legacy`` is the old ``moderator.yaml`` to import on open (default: the file
    ``moderator.yaml`` beside ``path``; None: no import).  ``busy_timeout`` is how
    many seconds a write waits for another process's transaction.  ``readonly``
    opens an existing database without writing anything (no migration, no import:
    for ``pbem doctor``).  ``clock`` gives the time for the ``updated`` column and
    the import (default: now, UTC).

    Raises BookkeepingError when the file is not a database, is of a newer schema,
    is missing while ``readonly``, or a migration fails; OSError when the directory
    cannot be made.  Close with ``close()`` or use as a context manager.
    """

    ANSWERED_KEEP = 100_000
    """Answered keys kept by ``prune`` (the newest); today's YAML kept 5,000."""
    ANSWERED_MAX_AGE = timedelta(days=730)
    """Answered keys older than this are dropped by ``prune``."""
    ALERTS_KEEP = 200
    """Alerts kept (the most recently mailed), as the YAML state did."""

    def __init__(self, path: str | os.PathLike[str], *, legacy: str | os.PathLike[str] | None | bool = True,
                 busy_timeout: float = 30.0, readonly: bool = False,
                 clock: Callable[[], datetime] | None = None):
        self.path = Path(path)
        self.clock = clock or (lambda: datetime.now(timezone.utc))
        self.readonly = readonly
        self._depth = 0
        if legacy is True:
            legacy = self.path.parent / LEGACY_NAME
        self.legacy = Path(legacy) if legacy else None
        try:
            if readonly:
                if not self.path.exists():
                    raise BookkeepingError(f"no bookkeeping database {self.path}")
                self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True,
                                           isolation_level=None, timeout=busy_timeout)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(self.path, isolation_level=None, timeout=busy_timeout)
        except sqlite3.Error as exc:
            raise BookkeepingError(f"cannot open the bookkeeping database {self.path}: {exc}") from exc
        try:
            self._setup(busy_timeout)
        except BaseException:
            self._db.close()
            raise

    @classmethod
    def in_spool(cls, spool_dir: str | os.PathLike[str], **kwargs: Any) -> "Bookkeeping":
        """The database of a spool directory: ``SPOOL/pbem.sqlite3``, importing
        ``SPOOL/moderator.yaml`` if present.  Keyword arguments as the constructor."""
        return cls(Path(spool_dir) / DB_NAME, **kwargs)

    def _setup(self, busy_timeout: float) -> None:
        db = self._db
        try:
            db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if not self.readonly:
                mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":  # pragma: no cover - a file system without shared memory
                    raise BookkeepingError(f"{self.path}: cannot use WAL mode (journal mode {mode})")
            db.execute("PRAGMA synchronous = FULL")
        except sqlite3.DatabaseError as exc:
            raise BookkeepingError(
                f"{self.path} is not a usable SQLite database ({exc}); move it aside: "
                "a new one is rebuilt from the game files (see docs/operations.md)") from exc
        if version > SCHEMA_VERSION:
            raise BookkeepingError(
                f"{self.path} was written by a newer pbem (schema {version}); "
                f"this version knows up to schema {SCHEMA_VERSION}")
        if self.readonly:
            if version < SCHEMA_VERSION:
                raise BookkeepingError(f"{self.path} has schema {version}; open it read-write to migrate")
            return
        if version < SCHEMA_VERSION:
            self._migrate()
        if self.legacy is not None and self.legacy.exists():
            self.import_legacy(self.legacy)

    def _migrate(self) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            # re-read under the write lock: another process may have migrated meanwhile
            version = db.execute("PRAGMA user_version").fetchone()[0]
            for i in range(version, SCHEMA_VERSION):
                step = MIGRATIONS[i]
                if isinstance(step, str):
                    for stmt in _statements(step):
                        db.execute(stmt)
                else:
                    step(db)
                db.execute(f"PRAGMA user_version = {i + 1}")
            db.execute("COMMIT")
        except BaseException as exc:
            db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise BookkeepingError(f"{self.path}: schema migration failed: {exc}") from exc
            raise

    # -------------------------------------------------------------- plumbing
    def close(self) -> None:
        """Close the connection (an open ``transaction()`` is rolled back)."""
        self._db.close()

    def __enter__(self) -> "Bookkeeping":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        """The database's schema version (``PRAGMA user_version``)."""
        return self._db.execute("PRAGMA user_version").fetchone()[0]

    @contextlib.contextmanager
    def transaction(self) -> Iterator["Bookkeeping"]:
        """Group writes into one transaction: committed (one fsync) when the
        outermost ``with`` block ends normally, rolled back entirely when it raises
        (the exception propagates).  Nested blocks are savepoints: an exception
        leaving a nested block undoes that block's writes only.  Every method
        called outside any block is its own transaction.  The write lock is taken
        at the start (``BEGIN IMMEDIATE``): while another process holds it, this
        waits up to ``busy_timeout`` seconds, then raises sqlite3.OperationalError
        (``database is locked``).  Every method raises sqlite3.Error for a failing
        write (disk full: ``sqlite3.OperationalError``), the transaction rolled
        back."""
        db = self._db
        if self._depth == 0:
            db.execute("BEGIN IMMEDIATE")
        else:
            db.execute(f"SAVEPOINT sp{self._depth}")
        self._depth += 1
        try:
            yield self
        except BaseException:
            self._depth -= 1
            if self._depth == 0:
                db.execute("ROLLBACK")
            else:
                db.execute(f"ROLLBACK TO sp{self._depth}")
                db.execute(f"RELEASE sp{self._depth}")
            raise
        self._depth -= 1
        if self._depth == 0:
            db.execute("COMMIT")
        else:
            db.execute(f"RELEASE sp{self._depth}")

    @property
    def in_transaction(self) -> bool:
        """Whether a ``transaction()`` block is open."""
        return self._depth > 0

    def _write(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        if self._depth:
            return self._db.execute(sql, params)
        with self.transaction():
            return self._db.execute(sql, params)

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def _set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self._write("DELETE FROM meta WHERE key = ?", (key,))
        else:
            self._write("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # -------------------------------------------------------------- daily counts
    def count_today(self, name: str, when: datetime) -> int:
        """How often ``name`` was counted on ``when``'s UTC day."""
        row = self._db.execute("SELECT n FROM daily_counts WHERE name = ? AND day = ?",
                               (name, _utc(when).date().isoformat())).fetchone()
        return 0 if row is None else row[0]

    def bump_count(self, name: str, when: datetime) -> int:
        """Count ``name`` once more on ``when``'s UTC day; returns the new count."""
        day = _utc(when).date().isoformat()
        self._write("INSERT INTO daily_counts(name, day, n) VALUES (?, ?, 1) "
                    "ON CONFLICT(name, day) DO UPDATE SET n = n + 1", (name, day))
        return self.count_today(name, when)

    def prune_counts(self, now: datetime) -> int:
        """Drop the counts of days before yesterday (UTC); returns how many."""
        cut = (_utc(now) - timedelta(days=1)).date().isoformat()
        return self._write("DELETE FROM daily_counts WHERE day < ?", (cut,)).rowcount

    # -------------------------------------------------------------- answered mails
    def answered(self, key: str) -> bool:
        """Whether the mail (or part of a mail) ``key`` was answered: an indexed
        lookup.  (The cycle also counts a mail answered by an entry still in the
        spool: ``SpoolEntry.meta["answers"]``.)"""
        return self._db.execute("SELECT 1 FROM answered WHERE key = ?", (key,)).fetchone() is not None

    def mark_answered(self, key: str, game: str | None, when: datetime) -> bool:
        """Record ``key`` as answered at ``when`` (about ``game``, or None).  Returns
        False when it was recorded already (the first time is kept)."""
        cur = self._write("INSERT OR IGNORE INTO answered(key, game, at) VALUES (?, ?, ?)",
                          (key, game, _iso(when)))
        return cur.rowcount == 1

    def forget_answered(self, key: str) -> bool:
        """Forget that the mail ``key`` was answered (``pbem restore``: the mail is
        read again); its commands stay answered (``key#commands``).  Returns
        whether it was recorded."""
        return self._write("DELETE FROM answered WHERE key = ?", (key,)).rowcount == 1

    def answered_count(self) -> int:
        """How many answered keys are kept."""
        return self._db.execute("SELECT COUNT(*) FROM answered").fetchone()[0]

    def prune(self, now: datetime, keep: int | None = None, max_age: timedelta | None = None) -> int:
        """Bound the answered keys: drop those older than ``max_age`` (default
        ``ANSWERED_MAX_AGE``) before ``now`` and all but the newest ``keep``
        (default ``ANSWERED_KEEP``); alerts are cut to ``ALERTS_KEEP`` as they are
        written.  Call once per cycle.  Returns the number of keys dropped."""
        keep = self.ANSWERED_KEEP if keep is None else keep
        max_age = self.ANSWERED_MAX_AGE if max_age is None else max_age
        with self.transaction():
            n = self._db.execute("DELETE FROM answered WHERE at < ?", (_iso(now - max_age),)).rowcount
            n += self._db.execute(
                "DELETE FROM answered WHERE seq <= (SELECT MAX(seq) FROM answered) - ?", (keep,)).rowcount
        return n

    # -------------------------------------------------------------- alerts
    def alert_sent(self, text: str) -> datetime | None:
        """When the operator was last mailed about ``text``, or None."""
        row = self._db.execute("SELECT at FROM alerts WHERE text = ?", (text,)).fetchone()
        return None if row is None else _dt(row[0])

    def mark_alert(self, text: str, when: datetime) -> None:
        """Record that the operator was mailed about ``text`` at ``when``; keeps
        the ``ALERTS_KEEP`` most recent alerts."""
        with self.transaction():
            self._db.execute("INSERT OR REPLACE INTO alerts(text, at) VALUES (?, ?)", (text, _iso(when)))
            self._db.execute("DELETE FROM alerts WHERE text NOT IN "
                             "(SELECT text FROM alerts ORDER BY at DESC, text LIMIT ?)", (self.ALERTS_KEEP,))

    def alerts(self) -> dict[str, datetime]:
        """Every alert kept: ``{text: last mailed}``."""
        return {t: _dt(a) for t, a in self._db.execute("SELECT text, at FROM alerts ORDER BY at")}

    # -------------------------------------------------------------- bounces
    def bounces(self) -> dict[str, str]:
        """Every bounced address: ``{canonical address: reason}``, sorted by address."""
        return dict(self._db.execute("SELECT address, reason FROM bounces ORDER BY address"))

    def bounced_seats(self) -> dict[str, str]:
        """Who plays at each bounced address, from the games index: ``{canonical
        address: 'Ann in game ridge'}`` (several seats joined with ``', '``);
        an address that plays in no indexed game is left out."""
        out = {}
        for address in self.bounces():
            seats = [f"{n} in game {g.game_id}" for g in self.games_of(address) for n in g.names]
            if seats:
                out[address] = ", ".join(seats)
        return out

    def bounce(self, address: str) -> str | None:
        """Why mail to ``address`` (canonical) bounced, or None."""
        row = self._db.execute("SELECT reason FROM bounces WHERE address = ?", (address,)).fetchone()
        return None if row is None else row[0]

    def set_bounce(self, address: str, reason: str) -> None:
        """Record that mail to ``address`` (canonical) bounced for ``reason``."""
        self._write("INSERT OR REPLACE INTO bounces(address, reason) VALUES (?, ?)", (address, reason))

    def clear_bounce(self, address: str) -> None:
        """Forget the bounce of ``address`` (none recorded: no error)."""
        self._write("DELETE FROM bounces WHERE address = ?", (address,))

    # -------------------------------------------------------------- the inbox
    def inbox(self) -> InboxMemory | None:
        """The inbox memory, or None before the first IMAP cycle."""
        row = self._db.execute("SELECT mailbox, uidvalidity, last_uid FROM inbox WHERE id = 1").fetchone()
        return None if row is None else InboxMemory(*row)

    def set_inbox(self, mailbox: str, uidvalidity: int, last_uid: int = 0) -> None:
        """Remember ``mailbox`` with ``uidvalidity`` and ``last_uid`` (replacing
        what was remembered: a new mailbox, or a changed UIDVALIDITY)."""
        self._write("INSERT OR REPLACE INTO inbox(id, mailbox, uidvalidity, last_uid) VALUES (1, ?, ?, ?)",
                    (mailbox, int(uidvalidity), int(last_uid)))

    def advance_uid(self, uidvalidity: int, uid: int) -> bool:
        """Raise ``last_uid`` to ``uid`` when the remembered UIDVALIDITY is
        ``uidvalidity`` and ``uid`` is higher.  Returns whether it changed."""
        cur = self._write("UPDATE inbox SET last_uid = ? WHERE id = 1 AND uidvalidity = ? AND last_uid < ?",
                          (int(uid), int(uidvalidity), int(uid)))
        return cur.rowcount == 1

    # -------------------------------------------------------------- pending moves
    def pending_moves(self) -> list[str]:
        """Inbox keys handled but not yet moved out of the inbox, oldest first."""
        return [k for (k,) in self._db.execute("SELECT key FROM pending_moves ORDER BY seq")]

    def add_pending_move(self, key: str) -> None:
        """Remember that the handled mail ``key`` could not be moved (kept once)."""
        self._write("INSERT OR IGNORE INTO pending_moves(key) VALUES (?)", (key,))

    def remove_pending_move(self, key: str) -> None:
        """Forget ``key`` (moved now); an unknown key is no error."""
        self._write("DELETE FROM pending_moves WHERE key = ?", (key,))

    def keep_pending_moves(self, present: set[str] | frozenset[str]) -> list[str]:
        """Forget the pending moves whose key is not in ``present`` (the keys now in
        the inbox: moved by hand, or renumbered); returns those kept, oldest first."""
        with self.transaction():
            kept = []
            for key in self.pending_moves():
                if key in present:
                    kept.append(key)
                else:
                    self._db.execute("DELETE FROM pending_moves WHERE key = ?", (key,))
        return kept

    # -------------------------------------------------------------- cycle times
    def last_success(self) -> datetime | None:
        """When the last successful cycle ended, or None."""
        return _dt(self._meta("last_success"))

    def set_last_success(self, when: datetime) -> None:
        """Record a successful cycle at ``when``."""
        self._set_meta("last_success", _iso(when))

    def smtp_failing_since(self) -> datetime | None:
        """Since when the SMTP server accepts nothing, or None when it accepts."""
        return _dt(self._meta("smtp_failing_since"))

    def set_smtp_failing_since(self, when: datetime | None) -> None:
        """Record since when the SMTP server accepts nothing (None: it accepts)."""
        self._set_meta("smtp_failing_since", _iso(when))

    def smtp_limit(self) -> dict[str, Any] | None:
        """The SMTP server's sending limit last met (``moderation.send``), or
        None: ``{"since", "until"`` (ISO times: when it was met, when it can
        have reset), ``"row", "provider", "answer", "source"`` (``mail.answers``),
        ``"accepted"`` (mails the server took that UTC day before it),
        ``"held"`` (mails it kept)``}``."""
        return _json_meta(self._meta("smtp_limit"))

    def set_smtp_limit(self, value: dict[str, Any] | None) -> None:
        """Record the sending limit met (a JSON-able dict as ``smtp_limit``
        gives), or None once the server takes mail again."""
        self._set_meta("smtp_limit", None if value is None else json.dumps(value, sort_keys=True))

    LEARNED_FOR = 7 * 86400
    """Seconds a learned daily limit is kept after the day it was last met (a
    provider may raise an account's limit: then it is learned anew, if ever)."""

    def learned_daily_limit(self, now: datetime | None = None) -> int | None:
        """How many mails the SMTP server took in a UTC day before it answered
        with a daily sending limit (the lowest such count since it was first
        met), or None; None too once ``LEARNED_FOR`` seconds have passed at
        ``now`` since it was last met."""
        value, _, at = (self._meta("smtp_learned_limit") or "").partition(" ")
        if not value.isdigit():
            return None
        when = _dt(at) if at else None
        if now is not None and when is not None and (now - when).total_seconds() > self.LEARNED_FOR:
            return None
        return int(value)

    def set_learned_daily_limit(self, value: int, when: datetime) -> None:
        """Record ``value`` mails a day as what the server really takes, met at ``when``."""
        self._set_meta("smtp_learned_limit", f"{int(value)} {_iso(when)}")

    def mail_held(self) -> dict[str, dict[str, Any]]:
        """The games whose mails to players the server could not take (its
        sending limit, an outage): ``{game id: {"since": ISO time from which
        the time is not yet counted for the players, "players": [names],
        "delivered": ISO time when the last of them went out, or absent}}``."""
        return _json_meta(self._meta("mail_held")) or {}

    def set_mail_held(self, value: dict[str, dict[str, Any]]) -> None:
        """Record ``mail_held`` (an empty dict removes it)."""
        self._set_meta("mail_held", json.dumps(value, sort_keys=True) if value else None)

    # -------------------------------------------------------------- the games index
    def record_game(self, game_id: str, data: dict[str, Any], file_stat: FileStamp | os.stat_result,
                    digest: str | None, needs_check: bool = False) -> None:
        """Index game ``game_id`` from its file's mapping ``data`` (a game file's
        mapping in the current format: ``players``, ``notified``, ``log_length``,
        ``state.phase``; ``over`` when its game master ended it), the file's stamp (a ``FileStamp`` or ``os.stat_result``)
        and ``digest``: the sha256 of the bytes the moderator wrote (trusted by
        later loads), or None.  ``needs_check`` flags the game for a full replay.
        Replaces the game's row and players; keeps its ``deadline``.  Raises
        KeyError/TypeError/ValueError for a malformed ``data``."""
        stamp = file_stat if isinstance(file_stat, FileStamp) else FileStamp.of(file_stat)
        state = data.get("state") or {}
        players = [(_canonical(str(p["address"])), str(p["name"])) for p in data.get("players") or []
                   if p.get("address")]  # a seat of the built-in player has no address
        notified = int(data.get("notified", 0))
        log_length = int(data.get("log_length", 0))
        phase = state.get("phase") if isinstance(state, dict) else None
        if data.get("ended"):
            phase = "over"  # ended by its game master: finished for routing and listing
        self._put_game(game_id, stamp, digest, needs_check, phase, notified, log_length, None, players)

    def record_saved(self, saved: SavedGame) -> None:
        """``record_game`` for what ``GameStore.write`` wrote (usable as the
        store's ``on_save``): the digest becomes trusted, ``needs_check`` is cleared."""
        self.record_game(saved.game_id, saved.data, saved.stamp, saved.digest)

    def _put_game(self, game_id: str, stamp: FileStamp, digest: str | None, needs_check: bool,
                  phase: str | None, notified: int, log_length: int, error: str | None,
                  players: list[tuple[str, str]]) -> None:
        with self.transaction():
            db = self._db
            db.execute(
                "INSERT INTO games(id, size, mtime_ns, inode, digest, needs_check, phase, notified,"
                " log_length, error, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,"
                " inode = excluded.inode, digest = excluded.digest, needs_check = excluded.needs_check,"
                " phase = excluded.phase, notified = excluded.notified, log_length = excluded.log_length,"
                " error = excluded.error, updated = excluded.updated",
                (game_id, stamp.size, stamp.mtime_ns, stamp.inode, digest, int(needs_check), phase,
                 notified, log_length, error, _iso(self.clock())))
            db.execute("DELETE FROM game_players WHERE game = ?", (game_id,))
            db.executemany("INSERT OR IGNORE INTO game_players(game, address, name) VALUES (?, ?, ?)",
                           [(game_id, a, n) for a, n in players])

    def mark_missing(self, game_id: str, path: str) -> bool:
        """Mark indexed game ``game_id`` as missing (its file ``path`` is gone):
        its row and players stay (mail for it is still routed to it and then left
        in the inbox), its ``error`` starts with ``MISSING``.  Returns False when
        it was marked already or is not indexed."""
        cur = self._write("UPDATE games SET error = ?, needs_check = 1, updated = ? WHERE id = ?"
                          " AND (error IS NULL OR error NOT LIKE ?)",
                          (f"{MISSING} {path} is gone", _iso(self.clock()), game_id, MISSING + "%"))
        return cur.rowcount == 1

    def missing_games(self) -> list[str]:
        """The indexed games whose file is gone (``mark_missing``), sorted."""
        return [g for (g,) in self._db.execute("SELECT id FROM games WHERE error LIKE ? ORDER BY id",
                                               (MISSING + "%",))]

    def forget_game(self, game_id: str) -> None:
        """Drop game ``game_id`` from the index (its file is gone: ``pbem forget``)."""
        with self.transaction():
            self._db.execute("DELETE FROM games WHERE id = ?", (game_id,))
            self._db.execute("DELETE FROM game_players WHERE game = ?", (game_id,))

    def game(self, game_id: str) -> GameIndexEntry | None:
        """The index entry of ``game_id``, or None when it is not indexed."""
        row = self._db.execute(
            "SELECT id, size, mtime_ns, inode, digest, needs_check, phase, notified, log_length,"
            " deadline, error FROM games WHERE id = ?", (game_id,)).fetchone()
        if row is None:
            return None
        addresses = tuple(a for (a,) in self._db.execute(
            "SELECT DISTINCT address FROM game_players WHERE game = ? ORDER BY address", (game_id,)))
        return GameIndexEntry(row[0], FileStamp(row[1], row[2], row[3]), row[4], bool(row[5]), row[6],
                              row[7], row[8], _dt(row[9]), row[10], addresses)

    def game_ids(self) -> list[str]:
        """Every indexed game id, sorted."""
        return [g for (g,) in self._db.execute("SELECT id FROM games ORDER BY id")]

    def games_of(self, address: str, active_only: bool = False) -> list[GameRef]:
        """The games in which ``address`` (canonical, as ``canonical_address``
        gives it) plays, sorted by id; ``active_only`` leaves out finished games
        (phase ``over``) and unreadable ones.  An indexed lookup: no game file is
        opened.  (Secrets are not kept here: to pick a game by the sender's secret,
        read the few files returned.)"""
        sql = ("SELECT g.id, g.phase, group_concat(p.name, char(10)), g.needs_check"
               " FROM game_players p JOIN games g ON g.id = p.game WHERE p.address = ?")
        if active_only:
            sql += " AND g.phase IS NOT NULL AND g.phase != 'over'"
        sql += " GROUP BY g.id ORDER BY g.id"
        return [GameRef(gid, phase, tuple(sorted(names.split("\n"))), bool(nc))
                for gid, phase, names, nc in self._db.execute(sql, (address,))]

    def is_player(self, address: str) -> bool:
        """Whether ``address`` (canonical) plays in any indexed game."""
        return self._db.execute("SELECT 1 FROM game_players WHERE address = ? LIMIT 1",
                                (address,)).fetchone() is not None

    def games_owing_mail(self) -> list[str]:
        """Ids of the games whose status mails are not all spooled
        (``notified < log_length``), sorted.  Uses a partial index."""
        return [g for (g,) in self._db.execute(
            "SELECT id FROM games WHERE notified < log_length ORDER BY id")]

    def trusted_digest(self, game_id: str) -> str | None:
        """The digest to pass to ``GameStore.load(trusted_digest=...)``: the sha256
        of the bytes the moderator last wrote to the game's file, or None when the
        game is flagged ``needs_check`` or not indexed (then the load replays and
        compares fully)."""
        row = self._db.execute("SELECT digest, needs_check FROM games WHERE id = ?", (game_id,)).fetchone()
        return row[0] if row is not None and not row[1] else None

    def mark_checked(self, game_id: str, digest: str) -> bool:
        """After a full replay and comparison succeeded (``record.checked``) on the
        bytes of sha256 ``digest`` (``record.source_digest``): trust them from now
        on and clear ``needs_check``.  Returns False when the game is not indexed."""
        cur = self._write("UPDATE games SET digest = ?, needs_check = 0 WHERE id = ?", (digest, game_id))
        return cur.rowcount == 1

    def flag_all(self) -> int:
        """Flag every game ``needs_check`` (after an upgrade of the rules engine,
        so that each game is replayed fully once).  Returns the number flagged."""
        return self._write("UPDATE games SET needs_check = 1 WHERE needs_check = 0").rowcount

    def games_to_check(self) -> list[str]:
        """Ids of the games flagged ``needs_check``, sorted."""
        return [g for (g,) in self._db.execute("SELECT id FROM games WHERE needs_check ORDER BY id")]

    def broken_games(self) -> dict[str, str]:
        """``{game id: error}`` for the indexed files that could not be read."""
        return dict(self._db.execute("SELECT id, error FROM games WHERE error IS NOT NULL ORDER BY id"))

    def set_deadline(self, game_id: str, when: datetime | None) -> bool:
        """Set (or clear, with None) the next deadline of ``game_id``.  Returns
        False when the game is not indexed."""
        return self._write("UPDATE games SET deadline = ? WHERE id = ?", (_iso(when), game_id)).rowcount == 1

    def games_due(self, now: datetime) -> list[str]:
        """Ids of the games whose deadline is at or before ``now``, earliest first."""
        return [g for (g,) in self._db.execute(
            "SELECT id FROM games WHERE deadline IS NOT NULL AND deadline <= ? ORDER BY deadline, id",
            (_iso(now),))]

    def next_deadline(self) -> datetime | None:
        """The earliest deadline of any game, or None."""
        return _dt(self._db.execute("SELECT MIN(deadline) FROM games").fetchone()[0])

    # -------------------------------------------------------------- the games directory
    FULL_SCAN_EVERY = 3600.0
    """Seconds after which ``stale_games`` scans the whole directory again even
    when the directory itself is unchanged (to see edits made in place)."""
    RACY = 2.0
    """A directory modified less than this many seconds before a scan is scanned
    again next time (its modification time may not show a change made in the same
    clock tick)."""

    def stale_games(self, games_dir: str | os.PathLike[str], full: bool = False) -> list[str]:
        """Ids whose file was added, removed or changed on disk since it was
        indexed, sorted: one ``os.scandir`` of ``games_dir`` comparing each
        ``GAME.yaml``'s (size, mtime_ns, inode) with the index; no file is opened.

        Quick path (unless ``full``): when the directory's own (mtime_ns, inode)
        are those recorded after the last full scan that left the index complete,
        and that scan is less than ``FULL_SCAN_EVERY`` seconds old, no file was
        added, removed or replaced (every save, copy-in, ``mv``, ``rm`` and most
        editors change the directory), so ``[]`` is returned after one ``stat``.  A
        file edited *in place* (``nano``, ``echo >>``) is seen by the next full
        scan; its load is never trusted meanwhile (the digest of its bytes
        differs, so ``GameStore.load`` replays and compares it fully).

        A full scan that finds nothing stale records the directory's stamp, one
        that finds some forgets it, so that the quick path is taken again only
        after ``sync_games`` indexed them (small commits; not for a read-only
        database).  A missing directory counts
        as empty (every indexed game is stale).  Raises OSError for a directory
        that cannot be listed."""
        stale, dir_stamp = self._scan(games_dir, full)
        if not stale and dir_stamp is not None:
            self._remember_dir(games_dir, dir_stamp)
        elif stale and not self.readonly and self._meta(self._dir_key(games_dir)) is not None:
            # until they are indexed (``sync_games``), later calls scan fully
            self._set_meta(self._dir_key(games_dir), None)
        return stale

    def _dir_key(self, games_dir: str | os.PathLike[str]) -> str:
        return "games_dir:" + os.path.abspath(games_dir)

    def _scan(self, games_dir: str | os.PathLike[str], full: bool) -> tuple[list[str], str | None]:
        """``(stale ids, directory stamp to remember once they are indexed)``; the
        stamp is None when nothing needs remembering (quick path, racy, missing)."""
        try:
            dst = os.stat(games_dir)
        except FileNotFoundError:
            return self.game_ids(), None
        now_ns = time.time_ns()
        stamp = f"{dst.st_mtime_ns} {dst.st_ino}"
        if not full:
            known = self._meta(self._dir_key(games_dir))
            if known is not None:
                rec_stamp, _, scanned = known.rpartition(" ")
                if rec_stamp == stamp and now_ns - int(scanned) < self.FULL_SCAN_EVERY * 1e9:
                    return [], None
        # racy: a change in the same clock tick as dst would not move the mtime
        remember = None if now_ns - dst.st_mtime_ns < self.RACY * 1e9 else f"{stamp} {now_ns}"
        known_rows = {gid: (size, mtime, inode) for gid, size, mtime, inode
                      in self._db.execute("SELECT id, size, mtime_ns, inode FROM games")}
        stale = []
        with os.scandir(games_dir) as entries:
            for entry in entries:
                name = entry.name
                if not name.endswith(".yaml"):
                    continue
                gid = name[:-5]
                rec = known_rows.pop(gid, None)
                if rec is None:
                    if _GAME_FILE_RE.fullmatch(name) and entry.is_file():
                        stale.append(gid)
                    continue
                try:
                    st = entry.stat()
                except FileNotFoundError:  # removed meanwhile
                    stale.append(gid)
                    continue
                if (st.st_size, st.st_mtime_ns, st.st_ino) != rec:
                    stale.append(gid)
        stale.extend(known_rows)  # indexed, no longer on disk
        return sorted(stale), remember

    def _remember_dir(self, games_dir: str | os.PathLike[str], value: str) -> None:
        if not self.readonly:
            self._set_meta(self._dir_key(games_dir), value)

    def sync_games(self, store: GameStore, full: bool = False) -> SyncReport:
        """Bring the games index up to date with ``store``'s directory, parsing
        only the files ``stale_games`` reports, in one transaction.  A file not
        indexed (a new game, a file copied in by hand) is added and flagged
        ``needs_check``; a file whose bytes differ from the digest the moderator
        wrote is re-indexed and flagged ``needs_check`` (the next load replays it
        fully; ``mark_checked`` clears it); a file with the same bytes (touched,
        copied back) only gets its new stamp; an unreadable file is indexed with
        its error (and flagged) so that it is not read again until it changes; a
        file gone stays indexed as missing (``mark_missing``: its mail stays in the
        inbox, ``doctor`` fails) until it is back or ``forget_game`` drops it.  Call at the start of every cycle (idle: one
        ``stat`` of the directory, see ``stale_games``; ``full`` forces the scan).  Returns a
        ``SyncReport``.  Raises OSError when the directory cannot be listed."""
        report = SyncReport([], [], [], [], {})
        stale, dir_stamp = self._scan(store.dir, full)
        if not stale:
            if dir_stamp is not None:
                self._remember_dir(store.dir, dir_stamp)
            return report
        with self.transaction():
            if dir_stamp is not None:
                self._remember_dir(store.dir, dir_stamp)
            for gid in stale:
                row = self._db.execute("SELECT digest, needs_check FROM games WHERE id = ?", (gid,)).fetchone()
                try:
                    gf = store.read_file(gid)
                except StoreError as exc:
                    path = store.path(gid)
                    try:
                        st = os.stat(path)
                    except FileNotFoundError:
                        if row is not None and self.mark_missing(gid, str(path)):
                            report.removed.append(gid)
                        continue
                    self._put_game(gid, FileStamp.of(st), row[0] if row else None, True, None, 0, 0,
                                   str(exc), [])
                    report.unreadable[gid] = str(exc)
                    continue
                if row is not None and row[0] == gf.digest:
                    # the same bytes: keep trust, index from the data (cheap: parsed already)
                    self.record_game(gid, gf.data, gf.stamp, gf.digest, needs_check=bool(row[1]))
                    report.touched.append(gid)
                    continue
                try:
                    self.record_game(gid, gf.data, gf.stamp, row[0] if row else None, needs_check=True)
                except (KeyError, TypeError, ValueError, AttributeError) as exc:
                    msg = f"game file {store.path(gid)} is malformed: {exc!r}"
                    self._put_game(gid, gf.stamp, row[0] if row else None, True, None, 0, 0, msg, [])
                    report.unreadable[gid] = msg
                    continue
                (report.changed if row is not None else report.added).append(gid)
        return report

    # -------------------------------------------------------------- the old YAML state
    # -------------------------------------------------------------- open games, people (schema 3)
    def put_open_game(self, game_id: str, setup: dict[str, Any], opened: datetime, expires: datetime) -> None:
        """Record the open game ``game_id`` (state ``open``) with its ``setup``
        (JSON-able mapping).  sqlite3.IntegrityError when it exists."""
        self._write("INSERT INTO open_games(id, setup, state, opened, expires) VALUES (?, ?, 'open', ?, ?)",
                    (game_id, json.dumps(setup, sort_keys=True), _iso(opened), _iso(expires)))

    def open_game(self, game_id: str) -> dict[str, Any] | None:
        """The open game ``game_id`` as ``{id, setup, state, opened, expires,
        closed}`` (times as datetimes), or None; the id matched ignoring case."""
        row = self._db.execute("SELECT id, setup, state, opened, expires, closed FROM open_games "
                               "WHERE id = ? COLLATE NOCASE", (game_id,)).fetchone()
        return None if row is None else self._open_row(row)

    def open_games(self, states: Sequence[str] = ("open", "extend")) -> list[dict[str, Any]]:
        """The open games in ``states`` (as ``open_game``), oldest first."""
        marks = ",".join("?" * len(states))
        rows = self._db.execute("SELECT id, setup, state, opened, expires, closed FROM open_games "
                                f"WHERE state IN ({marks}) ORDER BY opened, id", tuple(states)).fetchall()
        return [self._open_row(r) for r in rows]

    @staticmethod
    def _open_row(row: Sequence[Any]) -> dict[str, Any]:
        return {"id": row[0], "setup": json.loads(row[1]), "state": row[2], "opened": _dt(row[3]),
                "expires": _dt(row[4]), "closed": _dt(row[5])}

    def set_open_game(self, game_id: str, *, state: str | None = None, setup: dict[str, Any] | None = None,
                      expires: datetime | None = None, closed: datetime | None = None) -> None:
        """Change the open game ``game_id``'s ``state``, ``setup``, ``expires`` or ``closed``."""
        if state is not None:
            self._write("UPDATE open_games SET state = ? WHERE id = ?", (state, game_id))
        if setup is not None:
            self._write("UPDATE open_games SET setup = ? WHERE id = ?", (json.dumps(setup, sort_keys=True), game_id))
        if expires is not None:
            self._write("UPDATE open_games SET expires = ? WHERE id = ?", (_iso(expires), game_id))
        if closed is not None:
            self._write("UPDATE open_games SET closed = ? WHERE id = ?", (_iso(closed), game_id))

    _SIGNUP = "seq, game, address, name, state, pending, secret, asked, joined, language"

    def _signup_row(self, row: Sequence[Any]) -> dict[str, Any]:
        keys = [k.strip() for k in self._SIGNUP.split(",")]
        d = dict(zip(keys, row))
        d["asked"], d["joined"] = _dt(d["asked"]), _dt(d["joined"])
        return d

    def signups(self, game_id: str, states: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The sign-ups of ``game_id`` (``{seq, game, address, name, state,
        pending, secret, asked, joined, language}``) in the order asked, only
        those in ``states`` when given."""
        rows = self._db.execute(f"SELECT {self._SIGNUP} FROM signups WHERE game = ? ORDER BY seq",
                                (game_id,)).fetchall()
        found = [self._signup_row(r) for r in rows]
        return [d for d in found if states is None or d["state"] in states]

    def signups_of(self, address: str) -> list[dict[str, Any]]:
        """Every sign-up of ``address`` (canonical), in the order asked."""
        rows = self._db.execute(f"SELECT {self._SIGNUP} FROM signups WHERE address = ? ORDER BY seq",
                                (_canonical(address),)).fetchall()
        return [self._signup_row(r) for r in rows]

    def add_signup(self, game_id: str, address: str, name: str, state: str, pending: str | None,
                   secret: str, asked: datetime, language: str | None = None) -> int:
        """Add a sign-up; returns its ``seq``."""
        cur = self._write("INSERT INTO signups(game, address, name, state, pending, secret, asked, language) "
                          "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                          (game_id, _canonical(address), name, state, pending, secret, _iso(asked), language))
        return int(cur.lastrowid)

    def set_signup(self, seq: int, **changes: Any) -> None:
        """Change columns of sign-up ``seq`` (``state``, ``pending``, ``secret``,
        ``name``, ``asked``, ``joined``, ``language``; datetimes stored as UTC ISO)."""
        allowed = {"state", "pending", "secret", "name", "asked", "joined", "language"}
        for key, value in changes.items():
            if key not in allowed:
                raise ValueError(f"no sign-up column {key!r}")
            self._write(f"UPDATE signups SET {key} = ? WHERE seq = ?",
                        (_iso(value) if isinstance(value, datetime) else value, seq))

    def register_person(self, address: str, name: str, when: datetime, language: str | None = None) -> None:
        """Record in the registry that ``address`` confirmed (as ``name``) at ``when``."""
        self._write("INSERT INTO people(address, name, language, confirmed, seen) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT(address) DO UPDATE SET name = excluded.name, seen = excluded.seen, "
                    "language = COALESCE(excluded.language, people.language)",
                    (_canonical(address), name, language, _iso(when), _iso(when)))

    def person(self, address: str) -> dict[str, Any] | None:
        """The registry's entry of ``address``: ``{address, name, language,
        confirmed, seen, games, pool, used}`` (``games``: the ids of the open
        games they signed up for and the running or ended games they play, from
        ``signups`` and the games index; ``pool``: the games they volunteer for
        as a substitute, ``*`` for every game, schema 4; ``used``: when they last
        took a seat from the pool, or None), or None."""
        row = self._db.execute("SELECT address, name, language, confirmed, seen, used FROM people "
                               "WHERE address = ?", (_canonical(address),)).fetchone()
        if row is None:
            return None
        return {"address": row[0], "name": row[1], "language": row[2], "confirmed": _dt(row[3]),
                "seen": _dt(row[4]), "games": self.person_games(row[0]), "pool": self.pool_of(row[0]),
                "used": _dt(row[5])}

    def person_games(self, address: str) -> list[str]:
        """The games of ``address``: open games it holds a seat or waiting place
        in, then the games of the games index it plays."""
        open_ = [d["game"] for d in self.signups_of(address) if d["state"] in ("seated", "waiting", "offered")]
        playing = [g.game_id for g in self.games_of(address)]
        return list(dict.fromkeys(open_ + playing))

    def people(self) -> list[dict[str, Any]]:
        """Every registered person (as ``person`` without ``games``), by address."""
        rows = self._db.execute("SELECT address, name, language, confirmed, seen FROM people "
                                "ORDER BY address").fetchall()
        return [{"address": r[0], "name": r[1], "language": r[2], "confirmed": _dt(r[3]), "seen": _dt(r[4])}
                for r in rows]

    # -------------------------------------------------------------- the substitute pool (schema 4)
    def pool_of(self, address: str) -> list[str]:
        """The games ``address`` volunteers for as a substitute (ids, ``*``: every
        game), sorted; [] when not in the pool."""
        rows = self._db.execute("SELECT game FROM pool WHERE address = ? ORDER BY game",
                                (_canonical(address),)).fetchall()
        return [r[0] for r in rows]

    def pool_addresses(self) -> list[str]:
        """Every address of the substitute pool, sorted."""
        return [r[0] for r in self._db.execute("SELECT DISTINCT address FROM pool ORDER BY address").fetchall()]

    def pool_join(self, address: str, game: str, when: datetime) -> None:
        """Put ``address`` in the pool for ``game`` (an id, or ``*``); ``*``
        replaces the single games (it holds them)."""
        address = _canonical(address)
        if game == "*":
            self._write("DELETE FROM pool WHERE address = ?", (address,))
        elif "*" in self.pool_of(address):
            return
        self._write("INSERT OR IGNORE INTO pool(address, game, since) VALUES (?, ?, ?)", (address, game, _iso(when)))

    def pool_leave(self, address: str) -> int:
        """Take ``address`` out of the pool (every game); returns how many rows went."""
        return self._write("DELETE FROM pool WHERE address = ?", (_canonical(address),)).rowcount

    def volunteers(self, game: str) -> list[dict[str, Any]]:
        """The pool's volunteers for ``game`` (for it or ``*``): ``{address, name,
        language, used}`` (``used``: when they last took a seat, None: never),
        the longest unused first (never used first), then by address."""
        rows = self._db.execute(
            "SELECT DISTINCT p.address, p.name, p.language, p.used FROM pool q JOIN people p ON p.address = q.address "
            "WHERE q.game IN (?, '*') ORDER BY p.used IS NOT NULL, p.used, p.address", (game,)).fetchall()
        return [{"address": r[0], "name": r[1], "language": r[2], "used": _dt(r[3])} for r in rows]

    def mark_used(self, address: str, when: datetime) -> None:
        """Note that ``address`` took a seat from the pool at ``when`` (``people.used``)."""
        self._write("UPDATE people SET used = ? WHERE address = ?", (_iso(when), _canonical(address)))

    def pool_ask(self, address: str, what: str, game: str | None, name: str, secret: str, when: datetime,
                 language: str | None) -> None:
        """Record ``substitute on|off`` (``what``) of ``address`` waiting for its
        confirmation (one per address: a new one replaces the old)."""
        self._write("INSERT OR REPLACE INTO pool_asks(address, what, game, name, secret, asked, language) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (_canonical(address), what, game, name, secret, _iso(when), language))

    def pool_asked(self, address: str) -> dict[str, Any] | None:
        """The pool request of ``address`` waiting for its confirmation
        (``{address, what, game, name, secret, asked, language}``), or None."""
        r = self._db.execute("SELECT address, what, game, name, secret, asked, language FROM pool_asks "
                             "WHERE address = ?", (_canonical(address),)).fetchone()
        return None if r is None else {"address": r[0], "what": r[1], "game": r[2], "name": r[3], "secret": r[4],
                                       "asked": _dt(r[5]), "language": r[6]}

    def pool_ask_done(self, address: str) -> None:
        """Drop the waiting pool request of ``address``."""
        self._write("DELETE FROM pool_asks WHERE address = ?", (_canonical(address),))

    _VACANCY = "game, seat, why, state, opened, round, round_ends"

    def _vacancy_row(self, r: Sequence[Any]) -> dict[str, Any]:
        return {"game": r[0], "seat": r[1], "why": r[2], "state": r[3], "opened": _dt(r[4]), "round": r[5],
                "round_ends": _dt(r[6])}

    def add_vacancy(self, game: str, seat: str, why: str, when: datetime) -> bool:
        """Record that seat ``seat`` of ``game`` needs a substitute (``why``:
        ``abandoned``, ``ejected``, ``resigned``), state ``open``, no round yet;
        a vacancy of that seat already open is kept (False)."""
        old = self.vacancy(game, seat)
        if old is not None and old["state"] in ("open", "gm"):
            return False
        self._write("INSERT OR REPLACE INTO vacancies(game, seat, why, state, opened, round, round_ends) "
                    "VALUES (?, ?, ?, 'open', ?, 0, NULL)", (game, seat, why, _iso(when)))
        return True

    def vacancy(self, game: str, seat: str) -> dict[str, Any] | None:
        """The vacancy of seat ``seat`` in ``game`` (``{game, seat, why, state,
        opened, round, round_ends}``), or None."""
        r = self._db.execute(f"SELECT {self._VACANCY} FROM vacancies WHERE game = ? AND seat = ?",
                             (game, seat)).fetchone()
        return None if r is None else self._vacancy_row(r)

    def vacancies(self, states: Sequence[str] = ("open",)) -> list[dict[str, Any]]:
        """The vacancies in ``states``, oldest first."""
        marks = ",".join("?" * len(states))
        rows = self._db.execute(f"SELECT {self._VACANCY} FROM vacancies WHERE state IN ({marks}) "
                                "ORDER BY opened, game, seat", tuple(states)).fetchall()
        return [self._vacancy_row(r) for r in rows]

    def set_vacancy(self, game: str, seat: str, *, state: str | None = None, round: int | None = None,
                    round_ends: datetime | None = None) -> None:
        """Change the vacancy's ``state``, ``round`` or ``round_ends``."""
        if state is not None:
            self._write("UPDATE vacancies SET state = ? WHERE game = ? AND seat = ?", (state, game, seat))
        if round is not None:
            self._write("UPDATE vacancies SET round = ? WHERE game = ? AND seat = ?", (round, game, seat))
        if round_ends is not None:
            self._write("UPDATE vacancies SET round_ends = ? WHERE game = ? AND seat = ?",
                        (_iso(round_ends), game, seat))

    _OFFER = "seq, game, seat, address, round, state, secret, gm_secret, sent, expires"

    def _offer_row(self, r: Sequence[Any]) -> dict[str, Any]:
        d = dict(zip([k.strip() for k in self._OFFER.split(",")], r))
        d["sent"], d["expires"] = _dt(d["sent"]), _dt(d["expires"])
        return d

    def add_offer(self, game: str, seat: str, address: str, round: int, secret: str, sent: datetime,
                  expires: datetime) -> int:
        """Record an offer of seat ``seat`` of ``game`` to ``address`` (state
        ``offered``) lapsing at ``expires``; returns its ``seq``."""
        cur = self._write("INSERT INTO offers(game, seat, address, round, state, secret, sent, expires) "
                          "VALUES (?, ?, ?, ?, 'offered', ?, ?, ?)",
                          (game, seat, _canonical(address), round, secret, _iso(sent), _iso(expires)))
        return int(cur.lastrowid)

    def offers(self, game: str, seat: str | None = None, states: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The offers of ``game`` (of one ``seat`` when given; only ``states``
        when given): ``{seq, game, seat, address, round, state, secret,
        gm_secret, sent, expires}``, in the order sent."""
        sql, args = f"SELECT {self._OFFER} FROM offers WHERE game = ?", [game]
        if seat is not None:
            sql, args = sql + " AND seat = ?", args + [seat]
        found = [self._offer_row(r) for r in self._db.execute(sql + " ORDER BY seq", args).fetchall()]
        return [o for o in found if states is None or o["state"] in states]

    def offers_of(self, address: str) -> list[dict[str, Any]]:
        """Every offer made to ``address`` (as ``offers``), in the order sent."""
        rows = self._db.execute(f"SELECT {self._OFFER} FROM offers WHERE address = ? ORDER BY seq",
                                (_canonical(address),)).fetchall()
        return [self._offer_row(r) for r in rows]

    def set_offer(self, seq: int, *, state: str | None = None, gm_secret: str | None = None) -> None:
        """Change offer ``seq``'s ``state`` or ``gm_secret``."""
        if state is not None:
            self._write("UPDATE offers SET state = ? WHERE seq = ?", (state, seq))
        if gm_secret is not None:
            self._write("UPDATE offers SET gm_secret = ? WHERE seq = ?", (gm_secret, seq))

    # -------------------------------------------------------------- a person across games (schema 5)
    def setting(self, address: str, key: str) -> str | None:
        """The person-level setting ``key`` of ``address`` (``person_settings``), or None."""
        row = self._db.execute("SELECT value FROM person_settings WHERE address = ? AND key = ?",
                               (_canonical(address), key)).fetchone()
        return None if row is None else row[0]

    def settings_of(self, address: str) -> dict[str, str]:
        """Every person-level setting of ``address``: ``{key: value}``."""
        rows = self._db.execute("SELECT key, value FROM person_settings WHERE address = ? ORDER BY key",
                                (_canonical(address),)).fetchall()
        return {k: v for k, v in rows}

    def set_setting(self, address: str, key: str, value: str | None, when: datetime) -> None:
        """Set (``value`` None: remove) the person-level setting ``key`` of ``address``."""
        if value is None:
            self._write("DELETE FROM person_settings WHERE address = ? AND key = ?", (_canonical(address), key))
        else:
            self._write("INSERT OR REPLACE INTO person_settings(address, key, value, set_at) VALUES (?, ?, ?, ?)",
                        (_canonical(address), key, value, _iso(when)))

    def game_override(self, address: str, game_id: str, key: str) -> str | None:
        """The value of ``key`` that ``address`` set in game ``game_id``'s own thread, or None."""
        row = self._db.execute("SELECT value FROM game_overrides WHERE address = ? AND game = ? AND key = ?",
                               (_canonical(address), game_id, key)).fetchone()
        return None if row is None else row[0]

    def set_game_override(self, address: str, game_id: str, key: str, value: str | None, when: datetime) -> None:
        """Record that ``address`` set ``key`` to ``value`` in game ``game_id``'s
        thread (None: forget it, the person's setting applies there again)."""
        if value is None:
            self._write("DELETE FROM game_overrides WHERE address = ? AND game = ? AND key = ?",
                        (_canonical(address), game_id, key))
        else:
            self._write("INSERT OR REPLACE INTO game_overrides(address, game, key, value, set_at) "
                        "VALUES (?, ?, ?, ?, ?)", (_canonical(address), game_id, key, value, _iso(when)))

    def add_vacation(self, address: str, seconds: int, games: Sequence[str], when: datetime) -> None:
        """Write a line of ``address``'s vacation ledger: ``seconds`` spent (> 0)
        or given back (< 0) at ``when`` for ``games``."""
        self._write("INSERT INTO vacation_ledger(address, at, seconds, games) VALUES (?, ?, ?, ?)",
                    (_canonical(address), _iso(when), int(seconds), json.dumps(list(games))))

    def vacation_ledger(self, address: str) -> list[dict[str, Any]]:
        """``address``'s vacation ledger, oldest first: ``{at, seconds, games}``."""
        rows = self._db.execute("SELECT at, seconds, games FROM vacation_ledger WHERE address = ? ORDER BY seq",
                                (_canonical(address),)).fetchall()
        return [{"at": _dt(r[0]), "seconds": int(r[1]), "games": json.loads(r[2])} for r in rows]

    # -------------------------------------------------------------- digest and List-Unsubscribe (schema 6)
    def unsubscribe_token(self, address: str, kind: str, when: datetime) -> str:
        """The List-Unsubscribe token of ``address`` for ``kind`` (``digest``,
        ``pool``): made (``secrets.token_urlsafe(18)``, 24 characters of
        ``[A-Za-z0-9_-]``, 144 random bits) and stored the first time, the same
        one after.  RFC 2369, RFC 8058."""
        import secrets

        row = self._db.execute("SELECT token FROM unsubscribe_tokens WHERE address = ? AND kind = ?",
                               (_canonical(address), kind)).fetchone()
        if row is not None:
            return row[0]
        token = secrets.token_urlsafe(18)
        self._write("INSERT INTO unsubscribe_tokens(token, address, kind, created) VALUES (?, ?, ?, ?)",
                    (token, _canonical(address), kind, _iso(when)))
        return token

    def unsubscribe_owner(self, token: str) -> tuple[str, str] | None:
        """``(address, kind)`` of List-Unsubscribe ``token``, or None for a token
        never given."""
        row = self._db.execute("SELECT address, kind FROM unsubscribe_tokens WHERE token = ?",
                               (token,)).fetchone()
        return None if row is None else (row[0], row[1])

    def digest_day(self, address: str) -> str | None:
        """The local date (ISO ``YYYY-MM-DD``, the person's zone) of the last
        daily digest to ``address``, or None."""
        row = self._db.execute("SELECT day FROM digests WHERE address = ?", (_canonical(address),)).fetchone()
        return None if row is None else row[0]

    def set_digest_day(self, address: str, day: str, when: datetime) -> None:
        """Record that ``address``'s daily digest of local date ``day`` went to the spool at ``when``."""
        self._write("INSERT OR REPLACE INTO digests(address, day, sent_at) VALUES (?, ?, ?)",
                    (_canonical(address), day, _iso(when)))

    def person_thread(self, address: str) -> dict[str, Any] | None:
        """The person thread of ``address``: ``{address, secret, thread, opened}``, or None."""
        row = self._db.execute("SELECT address, secret, thread, opened FROM person_threads WHERE address = ?",
                               (_canonical(address),)).fetchone()
        return None if row is None else {"address": row[0], "secret": row[1], "thread": row[2],
                                         "opened": _dt(row[3])}

    def open_person_thread(self, address: str, secret: str, when: datetime) -> dict[str, Any]:
        """The person thread of ``address``, opened with ``secret`` when it has none."""
        self._write("INSERT OR IGNORE INTO person_threads(address, secret, thread, opened) VALUES (?, ?, NULL, ?)",
                    (_canonical(address), secret, _iso(when)))
        return self.person_thread(address)  # type: ignore[return-value]

    def set_person_thread_id(self, address: str, message_id: str) -> None:
        """Remember the Message-ID that started ``address``'s person thread (kept once set)."""
        self._write("UPDATE person_threads SET thread = ? WHERE address = ? AND thread IS NULL",
                    (message_id, _canonical(address)))

    def import_legacy(self, path: str | os.PathLike[str], rename: bool = True) -> bool:
        """Import an old ``moderator.yaml`` (``ModeratorState``) in one transaction:
        the answered ids (in their order, stamped with the import time), pending
        moves, bounces, alerts, the inbox memory, ``last_success`` and
        ``smtp_failing_since``.  The file was written after this database was last
        used (else it would have been renamed), so its values replace the
        database's; answered keys and pending moves are added to those kept.
        Idempotent.  Then, with ``rename``, renames it ``NAME.migrated`` (replacing
        an older one).  An unreadable or invalid file is renamed unimported, as
        ``ModeratorState.load`` would have ignored it.  Returns whether anything was
        imported.  Raises OSError when the rename fails (the import is committed;
        the next open imports the file again, to the same result)."""
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except FileNotFoundError:
            return False
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            data = {}
        if not isinstance(data, dict):
            data = {}
        now = _iso(self.clock())
        imported = bool(data)
        with self.transaction():
            db = self._db
            db.executemany("INSERT OR IGNORE INTO answered(key, game, at) VALUES (?, NULL, ?)",
                           [(str(k), now) for k in data.get("answered") or [] if k is not None])
            db.executemany("INSERT OR IGNORE INTO pending_moves(key) VALUES (?)",
                           [(str(k),) for k in data.get("pending_moves") or [] if k is not None])
            bounces = data.get("bounces") or {}
            if isinstance(bounces, dict):
                db.executemany("INSERT OR REPLACE INTO bounces(address, reason) VALUES (?, ?)",
                               [(str(a), str(r)) for a, r in bounces.items()])
            alerts = data.get("alerts") or {}
            if isinstance(alerts, dict):
                db.executemany("INSERT OR REPLACE INTO alerts(text, at) VALUES (?, ?)",
                               [(str(t), _legacy_time(a) or now) for t, a in alerts.items()])
            inbox = data.get("inbox") or {}
            if isinstance(inbox, dict) and inbox.get("uidvalidity") is not None:
                try:
                    db.execute("INSERT OR REPLACE INTO inbox(id, mailbox, uidvalidity, last_uid)"
                               " VALUES (1, ?, ?, ?)", (str(inbox.get("mailbox", "")),
                                                       int(inbox["uidvalidity"]), int(inbox.get("last_uid") or 0)))
                except (TypeError, ValueError):
                    pass
            for key in ("last_success", "smtp_failing_since"):
                if key in data:
                    value = _legacy_time(data.get(key))
                    if value is None:
                        db.execute("DELETE FROM meta WHERE key = ?", (key,))
                    else:
                        db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('migrated_from', ?)",
                       (f"{path} at {now}",))
        if rename:
            target = path.with_name(path.name + ".migrated")
            os.replace(path, target)
            from .files import fsync_dir
            fsync_dir(path.parent)
        return imported

    def migrated_from(self) -> str | None:
        """``'PATH at TIME'`` of the last ``moderator.yaml`` imported, or None."""
        return self._meta("migrated_from")

