"""Reading the inbox: read every mail, a batch at a time, hand each to the moderator, move it.

A handled mail goes to the processed or ignored folder; a mail whose move
failed is remembered (the bookkeeping's ``pending_moves``) and only moved by the
next cycle, never handled twice.  The IMAP UIDVALIDITY (RFC 3501) and the highest
UID handled are remembered for the operator.  Each mail is handled and moved in
one bookkeeping transaction (``Bookkeeping.transaction``): a crash rolls back
what it recorded, and the mail, still in the inbox, is handled again and found
answered (its spooled reply) or applied (the game history).
"""
from __future__ import annotations

import logging
import sqlite3
import time
from datetime import datetime
from typing import Callable

from filelock import Timeout

from ..config import Config
from ..mail.transport import Inbox, TransportError
from ..mail.transport.base import InboundMail
from ..render.words import word
from ..store.gamefile import GameStore, StoreError
from ..store.bookkeeping import Bookkeeping
from . import faults
from .report import CycleReport
from .send import Post

log = logging.getLogger("pbem")


def poll(config: Config, store: GameStore, inbox: Inbox | None, post: Post, report: CycleReport,
         handle: Callable[[bytes, datetime | None], str]) -> None:
    """Read every mail of ``inbox`` (default: the configured one, opened and
    closed here), oldest first, one batch at a time (``Inbox.stream``: memory
    holds one batch of at most the size limit, never the inbox), ``handle``
    each (its bytes and ``InboundMail.arrived``, when it reached the mailbox →
    ``"processed"`` or ``"ignored"``) and move it to that folder.  A broken game file leaves its mail
    in the inbox and tells the operator; a full disk or a locked game leaves that
    mail and the later ones (their order matters).  Problems go to ``report``;
    when mails may be left unread, ``report.unread_from`` says since when (see
    ``CycleReport``): the clock stage judges no deadline after it."""
    bk = post.bk
    if not store.dir.is_dir():
        # a wrong games_dir would set every order aside as "for no game"
        report.errors.append(f"the games directory {store.dir} does not exist "
                             "(check games_dir in the configuration); no mail was read")
        report.inbox_ok = False  # no mail was read: no successful cycle
        _unread(report, bk, None)
        return
    try:
        box = inbox or config.open_inbox()
    except TransportError as exc:
        report.errors.append(f"cannot open the inbox: {exc}")
        report.inbox_ok = False
        _unread(report, bk, None)
        return
    try:
        try:
            mails = box.stream()  # the keys now, each mail read as its turn comes
            stream = iter(mails)
            mail = next(stream, None)  # the first batch read
        except TransportError as exc:
            report.errors.append(f"cannot fetch mail: {exc}")
            report.inbox_ok = False
            _unread(report, bk, None)
            return
        faults.fault("after-fetch")
        report.fetched = len(mails)
        _remember_uidvalidity(bk, box)
        # keys of mails no longer in the inbox (moved by hand, UIDVALIDITY changed)
        pending = set(bk.keep_pending_moves(set(mails.keys)))
        position = {key: i for i, key in enumerate(mails.keys)}
        try:
            while mail is not None:
                # one transaction per mail: what handling it recorded (answered keys,
                # bounces, alerts, the games index) is committed with its move, before
                # anything of it is sent (``Post.flush`` runs after the last mail)
                with bk.transaction():
                    if not _one(mail, len(mails) - position[mail.key] - 1, box, bk, pending,
                                post, report, handle):
                        _unread(report, bk, mail)
                        break
                mail = None  # not kept while the next one is read
                mail = next(stream, None)
        except TransportError as exc:  # reading the next mails failed: they wait
            report.errors.append(f"cannot fetch mail: {exc}")
            report.inbox_ok = False
            _unread(report, bk, None)
    finally:
        if inbox is None:
            box.close()


def _one(mail: InboundMail, later: int, box: Inbox, bk: Bookkeeping, pending: set[str],
         post: Post, report: CycleReport, handle: Callable[[bytes], str]) -> bool:
    """Handle and move one mail (inside its bookkeeping transaction; ``later``:
    how many mails come after it); False when this mail and the later ones are
    to stay in the inbox for the next cycle."""
    if mail.key in pending:
        outcome = "processed"  # handled in an earlier cycle; only the move failed
    else:
        try:
            outcome = handle(mail.raw, mail.arrived)
        except StoreError as exc:
            # the game file is broken: leave the mail for after the repair
            report.errors.append(str(exc))
            log.error("%s; the mail stays in the inbox", exc)
            post.tell_operator(word("notices", "alert_game_file", problem=exc))
            return True
        except (OSError, Timeout) as exc:
            # disk full, a game locked by someone else: leave this mail and
            # the later ones (their order matters) for the next cycle
            what = "a game is locked by another process" if isinstance(exc, Timeout) else exc
            report.errors.append(f"cannot handle a mail: {what}; it stays in the inbox")
            report.inbox_ok = False
            log.error("cannot handle a mail: %s; it and %d later mail(s) stay in the inbox",
                      what, later)
            return False
        except sqlite3.Error:
            raise  # the bookkeeping failed: roll this mail back, stop the cycle
        except Exception as exc:  # noqa: BLE001 - one bad mail (one game's error) must not stop the rest
            log.exception("unexpected error on a mail")
            report.errors.append(f"unexpected error on a mail: {exc!r}")
            post.tell_operator(word("notices", "alert_mail_error", problem=repr(exc)))
            outcome = "ignored"
    faults.fault("before-move")
    try:
        if outcome == "ignored":
            box.mark_ignored(mail.key)
        else:
            box.mark_processed(mail.key)
        _handled(bk, mail.key)
        if mail.key in pending:
            bk.remove_pending_move(mail.key)
            pending.discard(mail.key)
    except (TransportError, KeyError) as exc:
        report.errors.append(f"cannot move a handled mail: {exc!r}")
        report.inbox_ok = False
        bk.add_pending_move(mail.key)
        pending.add(mail.key)
    return True


def _unread(report: CycleReport, bk: Bookkeeping, mail: InboundMail | None) -> None:
    """Record in ``report.unread_from`` since when mails may wait unread in the
    inbox: the arrival of ``mail`` (the oldest left; mails are read oldest
    first), else (the inbox or the rest of it could not be read, or the store
    gives no arrival) the last successful cycle's time, when all mail before
    it was read (``Bookkeeping.last_success``; None before any)."""
    when = mail.arrived if mail is not None and mail.arrived is not None else bk.last_success()
    if when is not None and (report.unread_from is None or when < report.unread_from):
        report.unread_from = when


def _remember_uidvalidity(bk: Bookkeeping, inbox: Inbox) -> None:
    """Remember the IMAP mailbox's UIDVALIDITY; log when it changed (the mails
    then come back with new UIDs and are matched by Message-ID, so nothing is
    applied or answered twice)."""
    validity = getattr(inbox, "uidvalidity", None)
    if validity is None:
        return
    name = str(getattr(inbox, "mailbox", ""))
    old = bk.inbox()
    if old is not None and old.mailbox == name and old.uidvalidity != validity:
        log.warning("UIDVALIDITY of %s changed from %s to %s: mails are matched by Message-ID",
                    name, old.uidvalidity, validity)
    if old is None or old.mailbox != name or old.uidvalidity != validity:
        bk.set_inbox(name, int(validity), 0)


def _handled(bk: Bookkeeping, key: str) -> None:
    """Record the highest IMAP UID handled (keys ``UIDVALIDITY:UID``; only for
    the UIDVALIDITY remembered)."""
    v, _, u = key.partition(":")
    if u.isdigit() and v.isdigit():
        bk.advance_uid(int(v), int(u))


class MailWaiter:
    """The wait between two cycles of ``pbem run --loop`` (``Moderator.wait_for_mail``):
    ``config`` opens the IMAP inbox; ``idle``: whether IDLE is worth trying (an
    IMAP inbox of the configuration); ``connection``: the IMAP connection kept
    between waits (an ``ImapInbox``, or None)."""

    def __init__(self, config: Config, idle: bool):
        self.config = config
        self.idle = idle
        self.connection = None

    def close(self) -> None:
        """Close the IDLE connection (opened again when next needed)."""
        connection, self.connection = self.connection, None
        if connection is not None:
            connection.close()

    def wait(self, seconds: float, sleep: Callable[[float], None] = time.sleep) -> str:
        """Wait up to ``seconds`` between two cycles of ``pbem run --loop``.

        With an IMAP inbox on a server that offers IDLE (RFC 2177), the wait is
        an IDLE on a connection kept between calls (``ImapInbox.wait_for_mail``;
        sent again every 25 minutes): it ends as soon as new mail arrives
        (returns ``"mail"``) or when the time is up (``"timeout"``); a new
        connection returns ``"mail"`` at once when the inbox holds any mail (it
        may have come after the last cycle looked). Otherwise it
        ``sleep``s the whole time and returns ``"slept"`` (polling): a Maildir
        inbox, an inbox given to the constructor, a server without IDLE (not
        asked again), or an IDLE that failed (logged; sleeps the rest of the
        time, and the next call tries IDLE again on a new connection). Never
        raises TransportError."""
        started = time.monotonic()
        if self.idle:
            try:
                fresh = self.connection is None
                if fresh:
                    self.connection = self.config.open_inbox()  # an ImapInbox
                if not self.connection.offers_idle():
                    log.info("the IMAP server does not offer IDLE: checking for mail every %g s", seconds)
                    self.idle = False
                    self.close()
                elif fresh and self.connection.waiting():
                    # a new connection cannot tell mail that came since the last
                    # cycle from mail left in the inbox: one more cycle decides
                    log.info("mail is waiting in the inbox")
                    return "mail"
                elif self.connection.wait_for_mail(seconds):
                    log.info("new mail arrived (IMAP IDLE)")
                    return "mail"
                else:
                    return "timeout"
            except TransportError as exc:
                log.warning("waiting for mail with IMAP IDLE failed, checking again after the interval "
                            "instead: %s", exc)
                self.close()
        left = seconds - (time.monotonic() - started)
        if left > 0:
            sleep(left)
        return "slept"
