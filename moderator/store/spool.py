"""The outgoing spool: every mail is written here before any attempt to send it.

Layout of the spool directory::

    spool/
      01732884131123456789-04711-000001.json   metadata: game, player, kind, events, attempts, next_try
      01732884131123456789-04711-000001.eml    the message, exactly as it will be sent
      failed/                        mails refused for good (for their recipient, or the mail itself), with their metadata
      pbem.sqlite3                   the moderator's bookkeeping (``moderator.store.bookkeeping``;
                                     with ``-wal`` and ``-shm`` while open)
      moderator.yaml.migrated        an older pbem's state, imported into pbem.sqlite3
      cycle.lock                     held by the running cycle (``filelock``)
      sending.names                  the entries whose sending is under way (JSON: ``at``, ``names``)
      cycle.owner                    the process holding cycle.lock and since when (JSON: ``pid``, ``at``)

Entry names are the creation time in nanoseconds, the process id and a counter, so
sorting them gives the order in which the mails were spooled, also across processes.
An entry exists once both its files exist: each is written to a temporary file that
is fsynced, the ``.json`` is renamed before the ``.eml``, and the directory is
fsynced once for both (``files.atomic_write_many``; ``add_many`` does the same for a
whole batch of entries).  An ``.eml`` without its ``.json`` (a power loss between
the renames on a file system that does not keep their order) is an entry not yet
added: ignored.  A mail leaves the spool as soon as the SMTP server accepted it,
before the next mail of the batch is sent (``Outbox.send_many``'s ``on_result``),
so a run killed part-way (a cron ``timeout`` with a slow relay) sends again at most
the one mail whose acceptance it had not yet recorded, with the same Message-ID:
before the attempt, the whole batch is marked ``sending`` with one durable write
of ``sending.names`` (``meta["sending"]`` of those entries; an older pbem wrote it
into each entry's ``.json``, still honoured), and such an entry is never merged
into a newer one.  When its next attempt is deferred it keeps ``maybe_sent`` (the
server may have it already) and is still never merged.  A removal is the ``.eml``
first, then the ``.json``: a kill in between leaves an orphan ``.json``, never sent,
reported by ``pbem doctor`` and removed by ``pbem spool clean``.  The directory
is fsynced once per batch.  A 4xx answer (or no connection, or a server refusing
everything: see ``_server_failure``) keeps the mail for a later cycle with
exponential backoff.  What an answer means is read by ``mail.answers`` (the
providers' texts and the enhanced status codes, not the first digit): the
server's sending limit (Gmail's ``550 5.4.5 Daily user sending quota
exceeded``, ...) keeps the mail and every later mail of the batch (not tried)
until the limit can have reset (``SendResult.limit_until``); an answer about
the recipient (``5.1.1``, ``5.2.1``, ...) moves it to ``failed/`` and reports
it as a bounce; another permanent refusal moves it to ``failed/`` without a
bounce (``SendResult.refused``).

A status mail held for its reader's daily digest (``meta["digest"]``, the
reader's address: ``moderation/digest.py``) is never sent by ``send_due``; the
digest names it in ``replaces``, or ``digest.release`` clears the mark.

Merging stale status mails is crash-safe: the newer entry names the entries it
``replaces`` and is written before they are removed; an entry named by another's
``replaces`` is dropped unsent.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path
from typing import Any

from .files import atomic_write, atomic_write_many, fsync_dir
from .state import ModeratorState  # noqa: F401 - re-exported: its old import path (legacy reader)
from ..mail.compose import flatten
from ..mail.transport import Outbox, StoredMail, TransportError
from ..mail import answers

BACKOFF_START = 60.0
"""Seconds before the first retry of a temporarily refused mail; doubled per try."""
BACKOFF_MAX = 6 * 3600.0
SENDING = "sending.names"
"""The spool's marker of the entries whose sending is under way."""
OWNER = "cycle.owner"
"""Written by the cycle that holds ``cycle.lock``: JSON ``pid`` and ``at`` (when it
took the lock), for ``pbem doctor`` to tell how long the lock has been held."""
GENERIC_LIMIT_TRIES = 3
"""A mail answered this many times in a row with a limit that only its status
class says is one (a generic ``X.7.x``/``X.4.x`` row of ``mail.answers``, not a
provider's documented text) is refused for good (``failed/``, no bounce): one
mail the server's filter refuses must not hold the spool for ever."""
NOT_TRIED = ("held", "stopped")
"""The ``step`` of an outbox's answer to a mail it did not try: held back by
``smtp.daily_limit`` (``moderation.send``), or after the server's limit
stopped the batch (``SmtpOutbox.send_many``)."""
ORPHAN_AGE = 60.0
"""Seconds before a metadata file without its mail counts as an orphan (a younger
one may be an entry being written right now)."""


def entry_names(directory: Path) -> list[str]:
    """The names of the entries in a spool ``directory`` (its ``NAME.eml``
    files, as ``directory.glob("*.eml")`` finds them; none when it is
    missing or unreadable), unsorted: one ``os.scandir``, no ``Path`` per file."""
    try:
        with os.scandir(directory) as found:
            return [e.name[:-4] for e in found if e.name.endswith(".eml")]
    except (FileNotFoundError, NotADirectoryError, PermissionError):  # as glob has it
        return []


KEPT_HEADERS = 512
"""How many spooled mails' header sections the process keeps for sending
(``SpoolEntry.stored``; dropped when the mail leaves the spool): the mails of
a cycle are sent at its end."""

_KEPT: OrderedDict[str, tuple[bytes, list[tuple[str, Any]]]] = OrderedDict()
"""``.eml`` path -> (SHA-256 of the bytes written, the header section of the
message they were flattened from: ``raw_items()``, the envelope's header
objects as they are (``compose`` shares them among mails), every other value
as its text, parsed only if read)."""
_ENVELOPE = {"from", "to", "cc"}


@dataclass
class SpoolEntry:
    """One spooled mail: its ``name`` (file stem), its ``meta`` (``game``,
    ``player``, ``kind``, ``events``, ``attempts``, ``next_try``) and its ``path``;
    ``message`` parses the mail on first use (most callers need only ``meta``),
    ``stored`` reads it for sending (its header section parsed only, or,
    for a mail this process spooled, taken from the message it was written
    from when the file holds those very bytes: ``_KEPT``).  Raises
    FileNotFoundError from ``message`` and ``stored`` if the entry was sent
    meanwhile."""

    name: str
    meta: dict[str, Any]
    path: Path

    @functools.cached_property
    def message(self) -> EmailMessage:
        """The spooled mail, parsed on first use (``email.policy.default``).  Raises
        FileNotFoundError when the entry was sent or removed meanwhile."""
        with open(self.path, "rb") as fh:
            return BytesParser(policy=policy.default).parse(fh)

    @functools.cached_property
    def stored(self) -> StoredMail:
        """The spooled mail as stored, for sending (``StoredMail``: its bytes,
        its header section parsed), read on first use.  Raises FileNotFoundError
        when the entry was sent or removed meanwhile."""
        with open(self.path, "rb") as fh:
            raw = fh.read()
        kept = _KEPT.get(str(self.path))
        if kept is not None and kept[0] == hashlib.sha256(raw).digest():
            return StoredMail.of(raw, headers=kept[1])  # as spooled: not parsed again
        return StoredMail.of(raw)


@dataclass
class SendResult:
    """What one ``Spool.send_due`` did: mails ``sent``, ``deferred`` (4xx, no
    connection, a server failure or the server's sending limit) and ``failed``
    (an answer about the recipient, ``mail.answers``: ``(recipient, game,
    reason, SMTP code or None)``); ``errors`` the deferrals worded for the log;
    ``server_failure`` why the server, not the recipients, failed (every entry
    then deferred), else None."""

    sent: int = 0
    deferred: int = 0
    failed: list[tuple[str, str | None, str, int | None]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    server_failure: str | None = None
    limit: "answers.Answer | None" = None
    """The server's sending limit met in this batch (``mail.answers``: a 5xx or
    4xx about the moderator's account, not the recipient), else None."""
    limit_until: datetime | None = None
    """When the limit can have reset (``now`` + the provider's window): every
    mail the limit kept waits until then."""
    held: int = 0
    """Mails kept by the limit (refused by it, or not tried after it)."""
    refused: list[tuple[str, str | None, str, int | None]] = field(default_factory=list)
    """Mails refused for good for another reason than their recipient (as
    ``failed``, moved to ``failed/``; no bounce)."""
    undelivered: list[tuple[str | None, str | None]] = field(default_factory=list)
    """``(game, player)`` of the mails kept because the server could not take
    any mail (its limit, no connection, a failure of the server)."""


class Spool:
    """The spool directory (created if missing; OSError if it cannot be).  Entries
    are ``NAME.json`` (metadata) + ``NAME.eml`` (the mail); see the module docstring."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._seq = 0

    def _new_name(self, now: datetime, existing: set[str] | None = None) -> str:
        # Wall-clock nanoseconds, not ``now`` (an injected clock may stand still):
        # names must sort in spooling order even across processes.  ``existing``:
        # the entry names, listed once by a caller naming a batch.
        if existing is None:
            existing = set(entry_names(self.dir))
        while True:
            self._seq += 1
            name = f"{time.time_ns():020d}-{os.getpid() % 100000:05d}-{self._seq:06d}"
            if name not in existing:
                return name

    def add(self, msg: EmailMessage, meta: dict[str, Any], now: datetime) -> str:
        """Spool ``msg`` durably with ``meta`` (a JSON-able dict: ``game``, ``player``,
        ``kind``, ``events``, maybe ``replaces``; ``attempts`` 0, ``next_try`` None and
        ``created`` = ``now`` are added).  Returns the entry name.  Raises OSError.
        Three fsyncs: the two files and the directory once."""
        return self.add_many([(msg, meta)], now)[0]

    def add_many(self, mails: list[tuple[EmailMessage, dict[str, Any]]], now: datetime) -> list[str]:
        """Spool every ``(msg, meta)`` of ``mails`` as ``add`` does, in that order,
        with one directory fsync for the whole batch (2 fsyncs per mail + 1).
        Returns the entry names, in order.  Durable when it returns; a process
        killed meanwhile leaves a prefix of the batch spooled (each entry whole or
        absent).  Raises OSError."""
        names, items, heads = [], [], []
        existing = set(entry_names(self.dir))  # listed once for the batch
        for msg, meta in mails:
            name = self._new_name(now, existing)
            existing.add(name)
            names.append(name)
            meta = {"attempts": 0, "next_try": None, **meta, "created": now.isoformat()}
            items.append((self.dir / f"{name}.json", json.dumps(meta, sort_keys=True).encode()))
            raw = flatten(msg)  # msg.as_bytes(policy=policy.SMTP)
            items.append((self.dir / f"{name}.eml", raw))
            heads.append((str(self.dir / f"{name}.eml"), hashlib.sha256(raw).digest(),
                          [(h, v if h.lower() in _ENVELOPE else str(v)) for h, v in msg.raw_items()]))
        if items:
            atomic_write_many(items)
        for path, digest, headers in heads:
            _KEPT[path] = (digest, headers)
            while len(_KEPT) > KEPT_HEADERS:
                _KEPT.popitem(last=False)
        return names

    def _sending(self) -> tuple[str | None, list[str]]:
        """The marker ``sending.names``: (when, entry names); (None, []) if absent
        or unreadable (then no entry is known to be under way)."""
        try:
            data = json.loads((self.dir / SENDING).read_text())
            return str(data["at"]), [str(n) for n in data["names"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None, []

    def entries(self) -> list[SpoolEntry]:
        """Every spooled mail, oldest first.  Entries replaced by a newer one (a merge
        interrupted between writing the new entry and removing the old) are removed."""
        out = []
        at, sending = self._sending()
        sending = set(sending)
        for eml in (self.dir / f"{name}.eml" for name in sorted(entry_names(self.dir))):
            meta_path = eml.with_suffix(".json")
            try:
                meta = json.loads(meta_path.read_text())
            except FileNotFoundError:
                continue  # not yet added (or being removed)
            except (OSError, ValueError):
                meta = {}
            if not isinstance(meta, dict):
                meta = {}
            if eml.stem in sending:
                meta.setdefault("sending", at)
            out.append(SpoolEntry(eml.stem, meta, eml))
        replaced = {n for e in out for n in e.meta.get("replaces") or []}
        if replaced:
            for e in out:
                if e.name in replaced:
                    self.remove(e.name)
            out = [e for e in out if e.name not in replaced]
        return out

    def remove(self, name: str) -> None:
        """Drop entry ``name`` (after the server accepted it, or when merged): both its
        files; a file already gone is no error.  Raises OSError for others."""
        _KEPT.pop(str(self.dir / f"{name}.eml"), None)
        for suffix in (".eml", ".json"):
            try:
                (self.dir / f"{name}{suffix}").unlink()
            except FileNotFoundError:
                pass

    def stale_status(self, game: str, player: str) -> list[SpoolEntry]:
        """The unsent status mails to ``player`` of ``game``, oldest first, that a
        newer status mail may replace: not those whose sending was attempted without
        a known outcome (``sending``, or ``maybe_sent`` after a later deferral:
        the server may have accepted them), nor those ``owed`` (telling events
        an undo took back since: sent as they are)."""
        return [e for e in self.entries()
                if e.meta.get("kind") == "status" and e.meta.get("game") == game
                and e.meta.get("player") == player and not e.meta.get("sending")
                and not e.meta.get("maybe_sent") and not e.meta.get("owed")]

    def update_meta(self, name: str, **changes: Any) -> dict[str, Any]:
        """Rewrite entry ``name``'s metadata with ``changes`` (one atomic, fsynced
        write; the mail is untouched) and return the new metadata.  Raises
        FileNotFoundError when the entry was sent or removed meanwhile, OSError,
        ValueError for metadata that is no JSON object."""
        meta = json.loads((self.dir / f"{name}.json").read_text())
        if not isinstance(meta, dict):
            raise ValueError(f"spool entry {name}: its metadata is no JSON object")
        meta.update(changes)
        self._write_meta(name, meta)
        return meta

    def mark_owner(self, now: datetime) -> None:
        """Note in ``cycle.owner`` that this process holds the cycle lock since
        ``now`` (not fsynced: only ``pbem doctor`` reads it).  Raises OSError."""
        (self.dir / OWNER).write_text(json.dumps({"pid": os.getpid(), "at": now.isoformat()}))

    def _write_meta(self, name: str, meta: dict[str, Any]) -> None:
        atomic_write(self.dir / f"{name}.json", json.dumps(meta, sort_keys=True).encode())

    def send_due(self, outbox: Outbox, now: datetime, after_send=None, after_accept=None,
                 only: set[str] | None = None, ignore_backoff: bool = False) -> SendResult:
        """Send every entry whose retry time has come (every entry with
        ``ignore_backoff``; only the names in ``only`` when given) over ``outbox``,
        oldest first.  Each mail leaves the spool as soon as the server accepted
        it, before the next one is sent (``after_accept``, for fault injection, is
        called between the acceptance and the removal); ``after_send`` after the
        last answer, before the refused entries are updated.

        A mail whose earlier sending was interrupted (the server may have accepted
        it) is marked ``maybe_sent`` for good: never merged into a newer status
        mail, resent with its own Message-ID.  A failure of the whole connection
        (connect, TLS, login; a TransportError from ``send_many``) and a server
        refusing everything (``server_failure``, see ``_server_failure``) defer
        every entry: no bounce is recorded.  The server's sending limit
        (``mail.answers``) stops the batch: that mail and the rest wait until
        ``SendResult.limit_until``.  An answer about the recipient moves the
        entry to ``failed/`` (``SendResult.failed``), another permanent refusal
        too (``SendResult.refused``).  Returns a ``SendResult``;
        never raises a TransportError; raises OSError when the spool cannot be
        written."""
        result = SendResult()
        due = [e for e in self.entries()
               if (only is None or e.name in only)
               and not e.meta.get("digest")  # held for the reader's daily digest (moderation/digest.py)
               and (ignore_backoff or not e.meta.get("next_try")
                    or datetime.fromisoformat(e.meta["next_try"]) <= now)]
        loaded = []
        for e in due:
            try:
                e.stored  # read now: a vanished entry is skipped
            except FileNotFoundError:
                continue
            loaded.append(e)
        due = loaded
        if not due:
            return result
        for entry in due:
            if entry.meta.get("sending"):  # an earlier attempt without a known outcome
                entry.meta["maybe_sent"] = entry.meta["sending"]
        # from here on the server may accept them: never merge them into another.
        # One durable write marks the batch (and keeps the marks of an earlier,
        # interrupted batch on entries not due now).
        at, earlier = self._sending()
        due_names = {e.name for e in due}
        kept = [n for n in earlier if n not in due_names and (self.dir / f"{n}.eml").exists()]
        marked = kept + [e.name for e in due]
        atomic_write(self.dir / SENDING, json.dumps({"at": now.isoformat(), "names": marked}).encode())
        for entry in due:
            entry.meta["sending"] = now.isoformat()

        meanings: dict[int, answers.Answer] = {}
        limit_at: list[int] = []  # the index of the first answer that is the server's limit

        def answered(index: int, outcome: Exception | None) -> bool:
            if outcome is None:  # accepted: it leaves the spool before the next is sent
                if after_accept is not None:
                    after_accept()
                self.remove(due[index].name)
                return False
            if isinstance(outcome, ValueError) or limit_at or getattr(outcome, "step", None) in NOT_TRIED:
                return False
            meanings[index] = answers.of_error(outcome)
            if meanings[index].limit:
                limit_at.append(index)
                return True  # the rest of the batch is not tried (``Outbox.send_many``)
            return False

        batch_error: TransportError | None = None
        try:
            outcomes: list = outbox.send_many([e.stored for e in due], on_result=answered)
        except TransportError as exc:
            batch_error = exc
            outcomes = [exc] * len(due)
        if after_send is not None:
            after_send()
        for i, err in enumerate(outcomes if batch_error is None else []):  # not via ``on_result``
            if err is not None and not isinstance(err, ValueError) and i not in meanings \
                    and getattr(err, "step", None) not in NOT_TRIED:
                meanings[i] = answers.of_error(err)
                if meanings[i].limit and not limit_at:
                    limit_at.append(i)
        if limit_at:
            result.limit = meanings[limit_at[0]]
            result.limit_until = now + timedelta(seconds=result.limit.window)
        elif batch_error is not None:
            result.server_failure = str(batch_error)
        else:
            result.server_failure = _server_failure(due, outcomes)
        for index, (entry, err) in enumerate(zip(due, outcomes)):
            entry.meta.pop("sending", None)
            if err is None:
                result.sent += 1
                continue
            code = getattr(err, "code", None)
            to = str(entry.stored.get("To", ""))
            meaning = meanings.get(index)
            kind = answers.RECIPIENT if isinstance(err, ValueError) else meaning.kind if meaning else answers.TEMPORARY
            step = getattr(err, "step", None)
            if limit_at and index == limit_at[0]:
                hits = int(entry.meta.get("limit_hits", 0)) + 1
                entry.meta["limit_hits"] = hits
                if hits >= GENERIC_LIMIT_TRIES and meaning is not None and meaning.provider == "any":
                    # no provider documents this answer as its limit, and it came back for this
                    # very mail each time: a refusal of the mail, not to block the spool with
                    kind = answers.REFUSED
            if limit_at and index >= limit_at[0] and kind not in (answers.RECIPIENT, answers.REFUSED) \
                    and step != "held":
                # the server's limit: kept, whatever the recipient; tried again once it can have reset
                attempts = int(entry.meta.get("attempts", 0)) + 1
                entry.meta.update(attempts=attempts, next_try=result.limit_until.isoformat(),
                                  last_error=str(err))
                self._write_meta(entry.name, entry.meta)
                result.deferred += 1
                result.held += 1
                result.undelivered.append((entry.meta.get("game"), entry.meta.get("player")))
                continue
            if kind in (answers.RECIPIENT, answers.REFUSED) and result.server_failure is None:
                failed = self.dir / "failed"
                failed.mkdir(exist_ok=True)
                entry.meta["error"] = str(err)
                entry.meta["code"] = code
                atomic_write(failed / f"{entry.name}.json", json.dumps(entry.meta, sort_keys=True).encode())
                os.replace(self.dir / f"{entry.name}.eml", failed / f"{entry.name}.eml")
                self.remove(entry.name)
                (result.failed if kind == answers.RECIPIENT else result.refused).append(
                    (to, entry.meta.get("game"), str(err), code))
            else:
                attempts = int(entry.meta.get("attempts", 0)) + 1
                delay = min(BACKOFF_START * 2 ** (attempts - 1), BACKOFF_MAX)
                entry.meta.update(attempts=attempts, next_try=(now + timedelta(seconds=delay)).isoformat(),
                                  last_error=str(err))
                self._write_meta(entry.name, entry.meta)
                result.deferred += 1
                if batch_error is not None or result.server_failure is not None or code is None \
                        or step in NOT_TRIED:
                    result.undelivered.append((entry.meta.get("game"), entry.meta.get("player")))
                if batch_error is None:
                    result.errors.append(f"sending to {to} deferred: {err}")
        if batch_error is not None:
            result.errors.append(f"{len(due)} mail(s) deferred: {batch_error}")
        # every entry of the batch is removed or rewritten without ``sending``
        if kept:
            atomic_write(self.dir / SENDING, json.dumps({"at": at, "names": kept}).encode())
        else:
            try:
                (self.dir / SENDING).unlink()
            except FileNotFoundError:
                pass
        fsync_dir(self.dir)  # the removals and the marker, once for the batch
        return result

    def orphans(self) -> list[Path]:
        """Metadata files without their mail: ``NAME.json`` with no ``NAME.eml``
        (a process killed between removing an entry's two files, or between
        writing them on a file system that does not keep the renames' order),
        in the spool and in ``failed/``.  Harmless (never sent); ``doctor``
        reports them and ``pbem spool clean`` removes them."""
        out = []
        for d in (self.dir, self.dir / "failed"):
            if d.is_dir():
                out += [j for j in sorted(d.glob("*.json")) if not j.with_suffix(".eml").exists()]
        return out


def _server_failure(due: list[SpoolEntry], outcomes: list) -> str | None:
    """Why the answers to a batch are a failure of the SMTP server rather than
    bounces of its recipients, else None: a 5xx to the envelope sender (``MAIL
    FROM``; the moderator's own address or the server's policy), or every mail
    of a batch to at least two different recipients refused with the same 5xx
    and none accepted (a misconfigured or broken relay, not that many players'
    mailboxes gone at once)."""
    codes = [getattr(err, "code", None) for err in outcomes]
    for err, code in zip(outcomes, codes):
        if getattr(err, "step", None) == "MAIL FROM" and code is not None and 500 <= code < 600:
            return f"the SMTP server refused the sender address (MAIL FROM): {err}"
    if not (all(err is not None for err in outcomes)
            and len(set(codes)) == 1 and codes[0] is not None and 500 <= codes[0] < 600):
        return None
    recipients = {str(e.stored.get("To", "")).lower() for e in due}  # parsed only then
    if len(recipients) >= 2:
        return (f"the SMTP server refused all {len(due)} mails to {len(recipients)} recipients with "
                f"{codes[0]}: {outcomes[-1]}")
    return None
