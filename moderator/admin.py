"""The operator's commands instead of hand edits (``pbem spool``, ``pbem bounces``,
``pbem player set-address``, ``pbem restore``, ``pbem repair``).

Each works on the configured files (games, spool, bookkeeping, mail folders)
under the same locks as a cycle: the cycle lock (``spool/cycle.lock``) for what a
cycle would change, a game's lock for its file.  A command that finds a cycle
running waits up to ``LOCK_WAIT`` seconds, then gives up with ``Busy`` (nothing
changed).  The functions return what they did as data; ``pbem.py`` prints it.
See "Commands instead of hand edits" in ``docs/operations.md``.
"""
from __future__ import annotations

import difflib
import json
import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email import policy
from email.parser import BytesParser
from pathlib import Path
from typing import Callable, Iterator

import yaml
from filelock import FileLock, Timeout

from .config import Config
from .mail.read import canonical_address, player_address
from .render.words import word
from .store.bookkeeping import Bookkeeping
from .rules.events import to_data as event_to_data
from .store.gamefile import GameStore, StoreError, load_board_ref, replay
from .store.spool import ORPHAN_AGE, Spool

log = logging.getLogger("pbem")

LOCK_WAIT = 30.0
"""Seconds an operator command waits for a running cycle to finish."""


class Busy(Exception):
    """A cycle (or another command) holds the cycle lock for longer than ``LOCK_WAIT``."""


class Incomplete(Exception):
    """``restore`` stopped part way (a disk or IMAP error): ``done`` (the keys of
    the mails put back, each already made unanswered, so the next cycle reads
    it) and ``cause`` (the error).  Running the command again puts back the rest:
    a mail put back is no longer in the processed or ignored folder."""

    def __init__(self, message: str, done: list[str], cause: Exception):
        super().__init__(message)
        self.done, self.cause = done, cause


def _utc() -> datetime:
    return datetime.now(timezone.utc)


@contextmanager
def cycle_lock(config: Config, wait: float = LOCK_WAIT) -> Iterator[None]:
    """Hold the cycle lock (``SPOOL/cycle.lock``); raises Busy after ``wait`` seconds."""
    Path(config.spool_dir).mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(Path(config.spool_dir) / "cycle.lock"))
    try:
        lock.acquire(timeout=wait)
    except Timeout:
        raise Busy(f"a cycle holds {Path(config.spool_dir) / 'cycle.lock'}; try again later "
                   "(`pbem doctor` shows which process and for how long)") from None
    try:
        yield
    finally:
        lock.release()


# ---------------------------------------------------------------- the spool
@dataclass
class SpooledMail:
    """One mail of the spool, for ``pbem spool list``: ``name``, ``where``
    (``waiting``, ``failed`` or ``orphan``), recipient ``to``, ``kind``, ``game``,
    ``player``, ``attempts``, ``next_try``, ``error`` (the last one) and
    ``note`` (``sending interrupted``/``may have been sent``)."""

    name: str
    where: str
    to: str = ""
    kind: str = ""
    game: str = ""
    player: str = ""
    attempts: int = 0
    next_try: str = ""
    error: str = ""
    note: str = ""

    def line(self) -> str:
        """One line of ``pbem spool list``."""
        parts = [f"{self.where:<7}", self.name, f"to {self.to or '?'}", self.kind or "?"]
        if self.game:
            parts.append(f"game {self.game}" + (f" ({self.player})" if self.player else ""))
        if self.attempts:
            parts.append(f"{self.attempts} attempt(s), next {self.next_try or 'now'}")
        if self.note:
            parts.append(self.note)
        if self.error:
            parts.append(f"last error: {self.error}")
        return "  ".join(parts)


def _to(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            return str(BytesParser(policy=policy.default).parse(fh, headersonly=True).get("To", ""))
    except (OSError, ValueError):
        return ""


def spool_list(config: Config) -> list[SpooledMail]:
    """Every mail waiting in the spool (oldest first), then those refused for good
    (``spool/failed``), then orphan metadata files.  Reads only."""
    spool = Spool(config.spool_dir)
    out = []
    for e in spool.entries():
        m = e.meta
        note = ("may have been sent (interrupted, then deferred)" if m.get("maybe_sent")
                else "sending was interrupted" if m.get("sending") else "")
        out.append(SpooledMail(e.name, "waiting", _to(e.path), str(m.get("kind") or ""), str(m.get("game") or ""),
                               str(m.get("player") or ""), int(m.get("attempts") or 0),
                               str(m.get("next_try") or ""), str(m.get("last_error") or ""), note))
    failed = spool.dir / "failed"
    for eml in sorted(failed.glob("*.eml")) if failed.is_dir() else []:
        try:
            m = json.loads(eml.with_suffix(".json").read_text())
        except (OSError, ValueError):
            m = {}
        out.append(SpooledMail(eml.stem, "failed", _to(eml), str(m.get("kind") or ""), str(m.get("game") or ""),
                               str(m.get("player") or ""), error=str(m.get("error") or "")))
    for orphan in spool.orphans():
        out.append(SpooledMail(orphan.stem, "orphan", note=f"{orphan} has no mail: harmless, "
                                                          "`pbem spool clean` removes it"))
    return out


def spool_retry(config: Config, names: tuple[str, ...] = (), outbox=None,
                clock: Callable[[], datetime] = _utc):
    """Send the waiting mails now (``names``: only those), ignoring their retry
    times, under the cycle lock.  Returns the ``CycleReport`` (``sent``,
    ``deferred``, ``errors``).  Raises Busy, KeyError for a name not waiting."""
    from .moderation.report import CycleReport
    from .moderation.send import Post

    with cycle_lock(config):
        spool = Spool(config.spool_dir)
        waiting = {e.name for e in spool.entries()}
        unknown = [n for n in names if n not in waiting]
        if unknown:
            raise KeyError(f"not waiting in the spool: {', '.join(unknown)} (see `pbem spool list`)")
        report = CycleReport()
        with Bookkeeping.in_spool(spool.dir) as bk:
            Post(config, spool, bk, clock).flush(report, outbox, ignore_backoff=True,
                                                 only=set(names) if names else None)
        return report


def spool_clean(config: Config, failed: bool = False, now: float | None = None) -> list[Path]:
    """Remove the orphan metadata files older than ``ORPHAN_AGE``, and with
    ``failed`` every mail refused for good (``spool/failed/``: once the operator
    has dealt with them), under the cycle lock; returns the files removed.
    Raises Busy, OSError."""
    now = time.time() if now is None else now
    with cycle_lock(config):
        gone = []
        folder = Path(config.spool_dir) / "failed"
        if failed and folder.is_dir():
            for f in sorted(folder.iterdir()):
                if f.suffix in (".eml", ".json"):
                    f.unlink()
                    gone.append(f)
        for orphan in Spool(config.spool_dir).orphans():
            if now - orphan.stat().st_mtime >= ORPHAN_AGE:
                orphan.unlink()
                gone.append(orphan)
        return gone


# ---------------------------------------------------------------- cycle times
def last_cycle(config: Config):
    """When the last successful cycle ended (``Bookkeeping.last_success``, an aware
    ``datetime``), or None before any.  Reads only."""
    db = Path(config.spool_dir) / "pbem.sqlite3"
    if not db.exists():
        return None
    with Bookkeeping(db, readonly=True, legacy=None) as bk:
        return bk.last_success()


# ---------------------------------------------------------------- bounces
def bounces_list(config: Config) -> dict[str, str]:
    """The addresses remembered as bounced, with why (reads only)."""
    db = Path(config.spool_dir) / "pbem.sqlite3"
    if not db.exists():
        return {}
    with Bookkeeping(db, readonly=True, legacy=None) as bk:
        return bk.bounces()


def bounced_seats(config: Config) -> dict[str, str]:
    """For every bounced address, who plays there, as ``pbem bounces list`` and
    doctor show it: ``{address: 'Ann in game ridge'}`` (several seats joined
    with ``', '``; addresses of no indexed game left out).  Reads only."""
    db = Path(config.spool_dir) / "pbem.sqlite3"
    if not db.exists():
        return {}
    with Bookkeeping(db, readonly=True, legacy=None) as bk:
        return bk.bounced_seats()


def unsubscribe(config: Config, token: str, now: datetime | None = None) -> str:
    """``pbem unsubscribe TOKEN``: carry out a List-Unsubscribe token as its
    mail would (``moderation.unsubscribe.apply_token``; the operator's RFC 8058
    one-click web hook calls it), under the cycle lock.  Returns ``digest`` or
    ``pool`` (what was turned off); KeyError for an unknown token (nothing
    changed).  No address is printed or returned."""
    from .moderation.unsubscribe import apply_token
    from .store.spool import Spool

    when = now or datetime.now(timezone.utc)
    with cycle_lock(config), Bookkeeping.in_spool(config.spool_dir) as bk, bk.transaction():
        owner = apply_token(bk, Spool(config.spool_dir), token.strip(), when)
    if owner is None:
        raise KeyError("unknown unsubscribe token: nothing changed")
    return owner[1]


def bounces_clear(config: Config, address: str | None = None) -> list[str]:
    """Forget the bounce of ``address`` (every bounce when None); returns the
    addresses forgotten.  KeyError when ``address`` has none."""
    with cycle_lock(config), Bookkeeping.in_spool(config.spool_dir) as bk, bk.transaction():
        known = bk.bounces()
        if address is None:
            for a in known:
                bk.clear_bounce(a)
            return sorted(known)
        a = canonical_address(address)
        if a not in known:
            raise KeyError(f"no bounce is remembered for {a}")
        bk.clear_bounce(a)
        return [a]


# ---------------------------------------------------------------- players
def set_address(config: Config, game_id: str, player: str, address: str,
                clock: Callable[[], datetime] = _utc) -> tuple[str, str, str]:
    """Give ``player`` of ``game_id`` (named in any case, accents or width:
    ``names.find``) the new ``address`` (checked like ``pbem
    new``: exactly one valid address, not another player's of the game), forget the
    bounces of the old and the new address, and spool a status mail to the new one
    saying so (sent by the next cycle).  Returns ``(player's name, old address,
    new address)``.  Raises
    ValueError (bad address, unknown player, the address the player has
    already: "nothing changed", no mail), StoreError (the game does not load),
    Busy; StoreError too when the file cannot be saved (a full disk), OSError when
    the mail cannot be spooled: then nothing changed (the status mail removed
    again, the bookkeeping rolled back)."""
    from .moderation.notify import status_mail
    from .moderation.send import Post
    from .orders.names import find, nearest

    new = player_address(address)
    with cycle_lock(config), Bookkeeping.in_spool(config.spool_dir) as bk:
        store = GameStore(config.games_dir, on_save=bk.record_saved)
        store.require(game_id)
        with store.lock(game_id):
            record = store.load(game_id)
            names = {x.name: x for x in record.players}  # any case, accents, width: zoe is Zoë
            p = names.get(find(player, list(names)) or "")
            if p is None:
                near = nearest(player, list(names))
                raise ValueError(f"game {game_id} has no player {player!r}; its players are "
                                 + ", ".join(near + [n for n in names if n not in near]))
            if canonical_address(p.address) == new:  # no change: no mail, no bounce forgotten
                raise ValueError(f"nothing changed: {p.name} already plays as {new}")
            others = [x for x in record.players if x is not p and canonical_address(x.address) == new]
            if others:
                raise ValueError(f"{new} is the address of {others[0].name} in game {game_id}")
            old = p.address
            with bk.transaction():
                p.address = new
                post = Post(config, Spool(config.spool_dir), bk, clock,  # worded in the player's language
                            notice=lambda: word("operator", "address_changed", address=new))
                # spooled before the save, removed when the save fails: exit 1 then means nothing changed
                told = post.put(status_mail(post, record, p, []), kind="status", game=record.id,
                                player=p.name, events=[], log_from=len(record.game.events), address_change=True)
                try:
                    store.save(record)
                except BaseException as exc:
                    post.spool.remove(told)
                    if isinstance(exc, OSError):  # a full disk: the file is as it was (written atomically)
                        raise StoreError(f"game {game_id} could not be saved: {exc.strerror or exc}; "
                                         "nothing changed") from exc
                    raise
                bk.clear_bounce(canonical_address(old))
                bk.clear_bounce(new)
        return p.name, old, new


def forget(config: Config, game_id: str) -> None:
    """Drop ``game_id`` from the games index once its file was removed on purpose:
    its mail is then treated as mail for no game.  Raises ValueError while the
    file exists or when the index does not know the game, Busy."""
    store = GameStore(config.games_dir)
    with cycle_lock(config), Bookkeeping.in_spool(config.spool_dir) as bk:
        if store.exists(game_id):
            raise ValueError(f"game {game_id} still has its file {store.path(game_id)}; remove the file first")
        if game_id not in bk.game_ids():
            raise ValueError(f"the games index does not know a game {game_id}")
        bk.forget_game(game_id)


# ---------------------------------------------------------------- repair
@dataclass
class Repair:
    """What ``pbem repair GAME --from-history`` would change: ``diff`` (unified,
    of the file's ``state`` and ``log`` against those rebuilt from ``seed`` +
    ``history``; empty when they agree), ``parts`` (the top-level keys that
    differ: which part of the file was edited) and whether it was ``written``."""

    game: str
    diff: list[str] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)
    written: bool = False


def repair(config: Config, game_id: str, write: bool = False) -> Repair:
    """Rebuild ``game_id``'s ``state`` and ``log`` from its seed and history and
    show how the file differs; with ``write``, save the rebuilt game (the history,
    players and everything else kept).  Raises StoreError when the history itself
    does not replay (then only a backup helps), Busy."""
    def text(value) -> list[str]:
        return yaml.safe_dump(value, sort_keys=True, allow_unicode=True, width=100).splitlines(keepends=True)

    with cycle_lock(config), Bookkeeping.in_spool(config.spool_dir) as bk:
        store = GameStore(config.games_dir, on_save=bk.record_saved)
        store.require(game_id)
        with store.lock(game_id):
            data = store.read_data(game_id)
            try:
                game = replay(data, load_board_ref(data["board"]))
            except (KeyError, ValueError, TypeError) as exc:
                raise StoreError(f"game {game_id}: the file is malformed: {exc!r}") from None
            rebuilt = {"state": game.to_dict(), "log": [event_to_data(e) for e in game.events]}
            result = Repair(game_id)
            for part, value in rebuilt.items():
                if part == "log" and "log" not in data:
                    continue
                if data.get(part) != value:
                    result.parts.append(part)
                    result.diff += difflib.unified_diff(
                        text({part: data.get(part)}), text({part: value}),
                        f"{store.path(game_id)} ({part}, as the file has it)",
                        f"{part} rebuilt from seed + history")
            if write and result.parts:
                record = store.load(game_id, check=False)
                store.save(record)
                result.written = True
        return result


# ---------------------------------------------------------------- restore
def _belongs(raw: bytes, game_id: str, addresses: set[str]) -> bool:
    """Whether a handled mail was for ``game_id``: its Subject tag or ``game:``
    line names it, it answers one of the game's mails, or its sender plays it."""
    from .mail.read import read_mail

    om = read_mail(raw)
    if om.game_id:
        return om.game_id.lower() == game_id.lower()
    for ref in om.thread_refs:
        if f".pbem.{game_id}@" in (ref or ""):
            return True
    return om.sender in addresses


def restore(config: Config, game_id: str) -> list[str]:
    """Put the handled and ignored mails of ``game_id`` back into the inbox and
    forget that they were answered, so that the next cycle reads them again
    (after a game file was restored from an older backup: the orders it lacks
    are applied again; those it has are recognised as applied).  Returns the
    Message-IDs (or keys) put back.  Raises StoreError when the game does not
    load, TransportError (the IMAP server, before any mail was moved), Busy;
    ``Incomplete`` when it stopped after putting back some of them (those are
    read again by the next cycle; running it again puts back the rest)."""
    import imaplib

    from .mail.transport import TransportError
    from .mail.transport.maildir import MaildirInbox
    from .moderation.interpret import mail_id
    from .mail.read import read_mail

    with cycle_lock(config), Bookkeeping.in_spool(config.spool_dir) as bk:
        record = GameStore(config.games_dir).load(game_id)
        addresses = {canonical_address(p.address) for p in record.players}
        restored: list[str] = []
        failed: Exception | None = None
        try:
            if config.imap is None:
                inbox = MaildirInbox(config.maildir_inbox)
                target = Path(config.maildir_inbox) / "new"
                for folder in (inbox.processed_path, inbox.ignored_path):
                    for sub in ("new", "cur"):
                        for f in sorted((folder / sub).glob("*")) if (folder / sub).is_dir() else []:
                            raw = f.read_bytes()
                            if _belongs(raw, game_id, addresses):
                                f.rename(target / f.name.split(":", 1)[0])
                                restored.append(mail_id(read_mail(raw), raw))
            else:
                _restore_imap(config, game_id, addresses, restored)
        except (OSError, TransportError, imaplib.IMAP4.error) as exc:
            if not restored:
                raise
            failed = exc
        finally:  # every mail put back is read again, also when the rest could not be
            with bk.transaction():
                for key in restored:
                    bk.forget_answered(key)
        if failed is not None:
            raise Incomplete(f"{len(restored)} mail(s) of game {game_id} were put back into the inbox, then "
                             f"it stopped: {failed}; run `pbem restore {game_id}` again to put back the rest",
                             restored, failed)
        return restored


def _restore_imap(config: Config, game_id: str, addresses: set[str], restored: list[str]) -> list[str]:
    """``restore`` on the IMAP server: the game's mails in the processed and
    ignored folders are moved (MOVE, else COPY + \\Deleted + EXPUNGE of those
    UIDs) back to the inbox folder.  The keys of the mails moved are appended to
    ``restored`` a folder at a time, once the server has moved them (an error part
    way leaves it holding what was put back); returns it."""
    from .mail.read import read_mail
    from .mail.transport.imap import ImapInbox
    from .moderation.interpret import mail_id

    i = config.imap
    box = ImapInbox(i.host, i.port, i.username, i.password, security=i.security, mailbox=i.mailbox,
                    processed=i.processed, ignored=i.ignored, timeout=i.timeout)
    try:
        client = box._connected()
        for folder in (i.processed, i.ignored):
            if not client.folder_exists(folder):
                continue
            client.select_folder(folder)
            uids = client.search("ALL")
            mine, keys = [], []
            for uid, data in client.fetch(uids, ["BODY.PEEK[]"]).items() if uids else []:
                raw = data[b"BODY[]"]
                if _belongs(raw, game_id, addresses):
                    mine.append(uid)
                    keys.append(mail_id(read_mail(raw), raw))
            if not mine:
                continue
            if client.has_capability("MOVE"):
                client.move(mine, i.mailbox)
            else:
                client.copy(mine, i.mailbox)
                client.delete_messages(mine)
                if client.has_capability("UIDPLUS"):
                    client.uid_expunge(mine)
                else:
                    client.expunge()
            restored.extend(keys)
    finally:
        box.close()
    return restored
