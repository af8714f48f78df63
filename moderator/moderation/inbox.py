"""Reading the inbox: fetch every mail, hand each to the moderator, move it.

A handled mail goes to the processed or ignored folder; a mail whose move
failed is remembered (``state.pending_moves``) and only moved by the next cycle,
never handled twice.  The IMAP UIDVALIDITY (RFC 3501) and the highest UID
handled are remembered for the operator.
"""
from __future__ import annotations

import logging
from typing import Callable

from filelock import Timeout

from ..config import Config
from ..mail.transport import Inbox, TransportError
from ..render.words import word
from ..store.gamefile import GameStore, StoreError
from ..store.spool import ModeratorState
from . import faults
from .report import CycleReport
from .send import Post

log = logging.getLogger("pbem")


def poll(config: Config, store: GameStore, inbox: Inbox | None, post: Post, report: CycleReport,
         handle: Callable[[bytes], str]) -> None:
    """Fetch every mail of ``inbox`` (default: the configured one, opened and
    closed here), oldest first, ``handle`` each (bytes → ``"processed"`` or
    ``"ignored"``) and move it to that folder.  A broken game file leaves its mail
    in the inbox and tells the operator; a full disk or a locked game leaves that
    mail and the later ones (their order matters).  Problems go to ``report``."""
    state = post.state
    if not store.dir.is_dir():
        # a wrong games_dir would set every order aside as "for no game"
        report.errors.append(f"the games directory {store.dir} does not exist "
                             "(check games_dir in the configuration); no mail was read")
        return
    try:
        box = inbox or config.open_inbox()
    except TransportError as exc:
        report.errors.append(f"cannot open the inbox: {exc}")
        report.inbox_ok = False
        return
    try:
        try:
            mails = box.fetch()
        except TransportError as exc:
            report.errors.append(f"cannot fetch mail: {exc}")
            report.inbox_ok = False
            return
        faults.fault("after-fetch")
        report.fetched = len(mails)
        _remember_uidvalidity(state, box)
        # keys of mails no longer in the inbox (moved by hand, UIDVALIDITY changed)
        keys = {m.key for m in mails}
        state.pending_moves = [k for k in state.pending_moves if k in keys]
        for mail in mails:
            if mail.key in state.pending_moves:
                outcome = "processed"  # handled in an earlier cycle; only the move failed
            else:
                try:
                    outcome = handle(mail.raw)
                except StoreError as exc:
                    # the game file is broken: leave the mail for after the repair
                    report.errors.append(str(exc))
                    log.error("%s; the mail stays in the inbox", exc)
                    post.tell_operator(word("notices", "alert_game_file", problem=exc))
                    continue
                except (OSError, Timeout) as exc:
                    # disk full, a game locked by someone else: leave this mail and
                    # the later ones (their order matters) for the next cycle
                    what = "a game is locked by another process" if isinstance(exc, Timeout) else exc
                    report.errors.append(f"cannot handle a mail: {what}; it stays in the inbox")
                    report.inbox_ok = False
                    log.error("cannot handle a mail: %s; it and %d later mail(s) stay in the inbox",
                              what, len(mails) - mails.index(mail) - 1)
                    break
                except Exception as exc:  # noqa: BLE001 - one bad mail must not stop the rest
                    log.exception("unexpected error on a mail")
                    report.errors.append(f"unexpected error on a mail: {exc!r}")
                    outcome = "ignored"
            faults.fault("before-move")
            try:
                if outcome == "ignored":
                    box.mark_ignored(mail.key)
                else:
                    box.mark_processed(mail.key)
                _handled(state, mail.key)
                if mail.key in state.pending_moves:
                    state.pending_moves.remove(mail.key)
            except (TransportError, KeyError) as exc:
                report.errors.append(f"cannot move a handled mail: {exc!r}")
                report.inbox_ok = False
                if mail.key not in state.pending_moves:
                    state.pending_moves.append(mail.key)
            state.save()
    finally:
        if inbox is None:
            box.close()


def _remember_uidvalidity(state: ModeratorState, inbox: Inbox) -> None:
    """Remember the IMAP mailbox's UIDVALIDITY; log when it changed (the mails
    then come back with new UIDs and are matched by Message-ID, so nothing is
    applied or answered twice)."""
    validity = getattr(inbox, "uidvalidity", None)
    if validity is None:
        return
    name = str(getattr(inbox, "mailbox", ""))
    old = state.inbox
    if old.get("mailbox") == name and old.get("uidvalidity") not in (None, validity):
        log.warning("UIDVALIDITY of %s changed from %s to %s: mails are matched by Message-ID",
                    name, old["uidvalidity"], validity)
        old = {}
    if old.get("mailbox") != name or old.get("uidvalidity") != validity:
        state.inbox = {"mailbox": name, "uidvalidity": validity, "last_uid": 0}


def _handled(state: ModeratorState, key: str) -> None:
    """Record the highest IMAP UID handled (keys ``UIDVALIDITY:UID``)."""
    v, _, u = key.partition(":")
    if u.isdigit() and v.isdigit() and state.inbox.get("uidvalidity") == int(v):
        state.inbox["last_uid"] = max(int(state.inbox.get("last_uid", 0)), int(u))
