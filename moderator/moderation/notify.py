"""Status mails: each player's own view of a game after it changed.

``spool_status`` mails every player of one game the events not yet mailed
(merged with any older unsent status mail to them); ``notify_all`` catches up on
every game the bookkeeping's games index says owes mail (``notified <
log_length``: this cycle's orders, or an earlier cycle's that crashed before
mailing), without opening the other game files.
"""
from __future__ import annotations

import logging
import sqlite3
from email.message import EmailMessage
from email.utils import make_msgid

from filelock import Timeout

from ..mail.read import canonical_address
from ..render import MAP_HERE, render, status_context, status_subject
from ..render.words import word
from ..rules.options import OPTION_HELP
from ..store.gamefile import GameRecord, GameStore, Player, StoreError
from .report import CycleReport
from .send import Post

log = logging.getLogger("pbem")

MAP_ALT = "Map of the board (in words: THE BOARD, at the end of the text)"
"""The alt text of the map in a status mail (shown where pictures are off)."""


def status_mail(post: Post, record: GameRecord, player: Player, events: list[str],
                in_reply_to: str | None = None, template: str = "status.txt") -> EmailMessage:
    """The status mail (or with ``template="welcome.txt"`` the welcome mail) to
    ``player``: their view of ``record``'s game only, with ``events``, the post's
    outage notice and their bounce note.  It answers ``in_reply_to`` if given, else
    continues the player's thread.  The mail shows the board as ``player`` sees
    it (``render_map``: their own shares in the legend, never another's): in the
    HTML part an inline PNG below the position, in the text part its text twin
    (``board_text``, section "THE BOARD")."""
    from ..render.board_map import board_text, render_map  # Pillow: only where a map is drawn

    ctx = status_context(record, player.name, events)
    ctx["option_help"] = OPTION_HELP
    ctx["notice"] = post.notice
    ctx["bounce"] = post.bk.bounce(canonical_address(player.address))
    ctx["map_here"] = MAP_HERE
    ctx["board_lines"] = board_text(record.game)
    ctx["deadline"] = _deadline_line(record, player)
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
        images=[(make_msgid(idstring=f"map.{record.id}", domain=post.domain)[1:-1],
                 render_map(record.game, player.name), MAP_ALT)],
    )


def _deadline_line(record: GameRecord, player: Player) -> str:
    """The status mail's line saying by when ``player``'s move is due (UTC, and in
    their time zone when set), or ``""`` when the game does not wait for them or
    has no deadline."""
    from .deadlines import deadline_values

    values = deadline_values(record, player)
    if not values["due_utc"]:
        return ""
    return word("clock", "deadline", due_utc=values["due_utc"], due_local=values["due_local"],
                zone=values["zone"])


def spool_status(post: Post, store: GameStore, record: GameRecord) -> bool:
    """Spool one status mail per player with the events since the last status
    mails (merged with any older unsent status mail to the same player), then
    mark them notified and save.  Returns False when there was nothing new.
    A player who resigned gets none until the end; one with ``digest on`` only
    when the events concern them (``gm.receives_status``); every observer gets
    the public status mail (``gm.observer_mail``)."""
    from .gm import observer_mail, receives_status

    events = record.unnotified
    if not events:
        return False
    # who was on move before these events (a digest reader hears of their own move)
    waiting_before = {h["player"] for h in record.history[len(record.history) - 1:]} if record.history else set()
    for p in record.players:
        if not p.address:  # a seat of the built-in player gets no mail
            continue
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
        if not older and not receives_status(record, p, mine, waiting_before):
            continue  # resigned, or digest on and nothing concerns them
        post.put(status_mail(post, record, p, mine, record.reply_to.get(p.name)),
                 kind="status", game=record.id, player=p.name, events=mine,
                 log_from=start, replaces=[e.name for e in older])
        for e in older:
            post.spool.remove(e.name)
    for address in record.observers:
        post.put(observer_mail(post, record, address, events), kind="observer", game=record.id)
    for p in record.players:
        if not p.address:
            continue
        post.bk.clear_bounce(canonical_address(p.address))
    record.notified = len(record.game.log)
    record.reply_to = {}
    store.save(record)
    return True


def load(post: Post, store: GameStore, game_id: str) -> GameRecord:
    """Load ``game_id`` (hold its lock): trusted (no comparison) when its file is
    the one the moderator last wrote, else replayed and compared in full, and then
    trusted from now on (``Bookkeeping.mark_checked``).  Raises as
    ``GameStore.load``."""
    record = store.load(game_id, trusted_digest=post.bk.trusted_digest(game_id))
    if record.checked and record.source_digest:
        post.bk.mark_checked(game_id, record.source_digest)
    return record


def _reindex(post: Post, store: GameStore, record: GameRecord) -> None:
    """The index said ``record``'s game owes mail, its file says not (the file
    changed outside the moderator since it was indexed): index the file as it is,
    so that later cycles do not load it again for nothing."""
    gf = store.read_file(record.id)
    if gf.digest == record.source_digest:  # the bytes just loaded and accepted
        post.bk.record_game(record.id, gf.data, gf.stamp, gf.digest)


def notify_all(post: Post, store: GameStore, report: CycleReport) -> None:
    """Spool status mails for every game the games index says owes them
    (``Bookkeeping.games_owing_mail``), each game in one bookkeeping transaction;
    a broken or locked game, or any error while building one game's mails, is
    reported in ``report.errors`` (and to the operator) and retried by the next
    cycle: the other games go on."""
    for gid in post.bk.games_owing_mail():
        try:
            with store.lock(gid), post.bk.transaction():
                record = load(post, store, gid)
                if not spool_status(post, store, record):
                    _reindex(post, store, record)
        except StoreError as exc:
            report.errors.append(str(exc))
        except (OSError, Timeout) as exc:
            report.errors.append(f"game {gid}: cannot spool the status mails: {exc or 'game locked'}")
            log.error("game %s: cannot spool the status mails: %s", gid, exc or "game locked")
        except sqlite3.Error:
            raise  # the bookkeeping failed: the cycle stops (its transaction rolled back)
        except Exception as exc:  # noqa: BLE001 - one game's error must never stop the others
            log.exception("game %s: cannot build the status mails", gid)
            report.errors.append(f"game {gid}: cannot build the status mails: {exc!r}")
            post.tell_operator(word("notices", "alert_game_error", game=gid, problem=repr(exc)))
