"""Status mails: each player's own view of a game after it changed.

``spool_status`` mails every player of one game the events not yet mailed
(merged with any older unsent status mail to them); ``notify_all`` catches up on
every game whose file says events are unmailed (this cycle's orders, or an
earlier cycle's that crashed before mailing).
"""
from __future__ import annotations

import logging
from email.message import EmailMessage

from filelock import Timeout

from ..mail.read import canonical_address
from ..render import render, status_context, status_subject
from ..render.words import word
from ..rules.options import OPTION_HELP
from ..store.gamefile import GameRecord, GameStore, Player, StoreError
from .report import CycleReport
from .send import Post

log = logging.getLogger("pbem")


def status_mail(post: Post, record: GameRecord, player: Player, events: list[str],
                in_reply_to: str | None = None, template: str = "status.txt") -> EmailMessage:
    """The status mail (or with ``template="welcome.txt"`` the welcome mail) to
    ``player``: their view of ``record``'s game only, with ``events``, the post's
    outage notice and their bounce note.  It answers ``in_reply_to`` if given, else
    continues the player's thread."""
    ctx = status_context(record, player.name, events)
    ctx["option_help"] = OPTION_HELP
    ctx["notice"] = post.notice
    ctx["bounce"] = post.state.bounces.get(canonical_address(player.address))
    text = render(template, **ctx)
    subject = status_subject(ctx)
    if template == "welcome.txt":
        subject = word("notices", "subject", tag=ctx["tag"], game_id=record.id,
                       title=word("notices", "welcome_title", headline=ctx["headline"]))
    root = record.threads.get(player.name)
    return post.message(
        record.id, player.address, subject, text,
        in_reply_to=in_reply_to or root, references=[root] if root else [],
        auto="auto-replied" if in_reply_to else "auto-generated",
    )


def spool_status(post: Post, store: GameStore, record: GameRecord) -> bool:
    """Spool one status mail per player with the events since the last status
    mails (merged with any older unsent status mail to the same player), then
    mark them notified and save.  Returns False when there was nothing new."""
    events = record.unnotified
    if not events:
        return False
    for p in record.players:
        # Merge: the new mail names the stale ones it replaces and is written
        # before they are removed (a crash in between drops them unsent).  Events
        # are taken from the game log by position, so a status spooled twice
        # (a crash before ``notified`` was saved) does not repeat them.
        older = post.spool.stale_status(record.id, p.name)
        starts = [e.meta.get("log_from") for e in older]
        if all(isinstance(x, int) for x in starts):
            start = min([*starts, record.notified])
            mine = record.game.log[start:]
        else:  # entries spooled by an older version
            start = record.notified
            mine = [ev for e in older for ev in e.meta.get("events") or []] + events
        post.put(status_mail(post, record, p, mine, record.reply_to.get(p.name)),
                 kind="status", game=record.id, player=p.name, events=mine,
                 log_from=start, replaces=[e.name for e in older])
        for e in older:
            post.spool.remove(e.name)
    for p in record.players:
        post.state.bounces.pop(canonical_address(p.address), None)
    record.notified = len(record.game.log)
    record.reply_to = {}
    store.save(record)
    return True


def notify_all(post: Post, store: GameStore, report: CycleReport) -> None:
    """Spool status mails for every game with events not yet mailed; a broken or
    locked game is reported in ``report.errors`` and retried by the next cycle."""
    for gid in store.ids():
        try:
            data = store.read_data(gid)
        except StoreError:
            continue
        if int(data.get("notified", 0)) >= int(data.get("log_length", 0)):
            continue
        try:
            with store.lock(gid):
                spool_status(post, store, store.load(gid))
        except StoreError as exc:
            report.errors.append(str(exc))
        except (OSError, Timeout) as exc:
            report.errors.append(f"game {gid}: cannot spool the status mails: {exc or 'game locked'}")
            log.error("game %s: cannot spool the status mails: %s", gid, exc or "game locked")
