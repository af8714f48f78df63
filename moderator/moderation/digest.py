"""The daily digest (issue 28): at most one mail a day with the news of a
person's games where no move of theirs is due.

A person sets it in their person thread (``moderation/people.py``):
``digest daily`` (at ``DEFAULT_HOUR``, 18:00 in their zone) or ``digest daily
7`` (07:00), ``digest off`` (every status mail at once, as before).  The
setting is stored as ``daily`` or ``daily H`` (``person_settings``).  In a game
where the person sent the game thread's own ``digest on|off``
(``moderation/seats.py``, recorded as a ``game_overrides`` row) that game's
setting wins: its status mails are not held.

What is held.  A status mail of a game (``notify._status_batch``) to a digest
reader is *held* (``holds``) unless it asks them to act or answers them: their
move now, an answer to their own order (the mail it replies to), a notice of
the moderator's own to them (the built-in player moved for them, a reminder, a
moved deadline), the end of the game.  Every other mail of theirs (answers to
commands, proposals to vote on, take-over offers, a resignation's warning) is
no status mail and goes at once anyway.  A held mail is an ordinary spool
entry with ``meta["digest"]`` = the reader's canonical address: written in the
same batch and with the same crash rules as any status mail (``notify``:
spooled, then the game file saved, ``sweep`` drops it if the save did not
happen), never sent by ``Spool.send_due``.  The next status mail of that game
to the same reader merges it as it merges any unsent status mail: when the
game asks them to move, the held news of that game are *folded into that
mail* (it tells every event since their last mail) and are not repeated in
the digest.

The digest (``run``, a stage of the cycle after ``notify_all``): for each
reader with held mails, at the first cycle at or after their hour in their
zone (person-level ``timezone``, else the seat's zone of their first game with
news, else UTC; ``zoneinfo``, so DST-correct) and not yet on that local day,
one mail lists each game's news (the events the held mails told, worded anew
in the person's language: ``people.person_language``), with the game's state
in short (who is on move, the deadline in the reader's zone).  It carries no
hand and nothing secret: the events are the public log (``event`` words);
the reader's own hand comes with the status mail of their move.  It is sent
in the person thread (a reply to it with ``digest off`` works) and carries
``List-Unsubscribe`` (``mail/unsubscribe.py``).  The order of the writes: (1)
the bookkeeping's ``digests`` row of the local day, committed; (2) the digest
spooled naming the held mails in ``replaces``; (3) the held mails removed.  A
crash after (1) leaves the news held for the next day's digest (late, not
lost); a crash after (2) leaves held mails that the spool drops as replaced
(not doubled).  The engine reads no clock: the time is ``post.clock()``.
"""
from __future__ import annotations

import logging
import secrets
from datetime import datetime, time
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .. import i18n
from ..mail.read import canonical_address
from ..mail.threads import person_message_id, person_token
from ..mail.unsubscribe import add_headers
from ..render.events import event_text
from ..render.when import format_when, zone_name
from ..render.words import word
from ..store.gamefile import GameRecord, GameStore, Player, StoreError
from . import faults
from .deadlines import due
from .report import CycleReport
from .send import Post

log = logging.getLogger("pbem")

DEFAULT_HOUR = 18
"""The hour (local, the person's zone) of the digest when ``digest daily`` names none."""


def hour_of(value: str | None) -> int | None:
    """The digest hour (0-23) of a stored person-level ``digest`` setting:
    ``"daily"`` -> ``DEFAULT_HOUR``, ``"daily 7"`` -> 7; None for ``off``,
    None or anything else."""
    parts = (value or "").split()
    if not parts or parts[0] != "daily" or len(parts) > 2:
        return None
    if len(parts) == 1:
        return DEFAULT_HOUR
    try:
        hour = int(parts[1])
    except ValueError:
        return None
    return hour if 0 <= hour <= 23 else None


def parse_hour(text: str) -> int | None:
    """An hour as a player writes it after ``digest daily``: ``7``, ``07``,
    ``18:00``, ``18h``; None when it is no whole hour 0-23."""
    t = text.strip().lower().removesuffix("h")
    if t.endswith(":00"):
        t = t[:-3]
    if not t.isdigit():
        return None
    hour = int(t)
    return hour if 0 <= hour <= 23 else None


def daily_hour(book: Any, address: str, game_id: str) -> int | None:
    """The digest hour of ``address`` for game ``game_id``, or None when that
    game's status mails are not held: no person-level ``digest daily``, or the
    game's own ``digest on|off`` (a ``game_overrides`` row) wins there."""
    if book.game_override(address, game_id, "digest") is not None:
        return None
    return hour_of(book.setting(address, "digest"))


def holds(book: Any, record: GameRecord, player: Player, answers_mail: str | None, news: list) -> bool:
    """Whether ``player``'s status mail of ``record``'s game now is held for
    their digest (see the module): they read a digest for this game
    (``daily_hour``) and the mail neither asks them to act (their move, the
    end of the game), nor answers their order (``answers_mail``), nor carries
    the moderator's notices to them (``news``)."""
    if not player.address or player.name in record.resigned:
        return False
    if daily_hour(book, canonical_address(player.address), record.id) is None:
        return False
    if record.game.phase == "over" or record.ended is not None:
        return False
    if player.name in record.game.waiting_for():
        return False
    return not answers_mail and not news


def held(spool: Any) -> dict[str, list[Any]]:
    """The held status mails in the spool by reader: ``{address: [SpoolEntry]}``,
    oldest first (entries another names in ``replaces`` left out)."""
    out: dict[str, list[Any]] = {}
    for e in spool.entries():
        who = e.meta.get("digest")
        if isinstance(who, str) and who:
            out.setdefault(who, []).append(e)
    return out


def release(spool: Any, address: str, game_id: str | None = None) -> int:
    """Send ``address``'s held status mails (of ``game_id`` only, when given)
    with the next flush, as mails of their own (``digest off``, the game
    thread's ``digest on|off``, an unsubscribe): their ``digest`` mark is
    cleared.  ``spool``: the ``Spool``.  Returns how many; raises OSError as
    ``Spool.update_meta``."""
    count = 0
    for e in held(spool).get(canonical_address(address), []):
        if game_id is not None and e.meta.get("game") != game_id:
            continue
        try:
            spool.update_meta(e.name, digest=None)
        except FileNotFoundError:
            continue
        count += 1
    return count


def _zone(book: Any, address: str, records: list[tuple[GameRecord, Player]]) -> str:
    """The reader's zone: the person-level ``timezone``, else their seat's in the
    first of ``records`` that has one, else ``UTC``."""
    zone = book.setting(address, "timezone")
    if not zone:
        zone = next((p.timezone for _, p in records if p.timezone), None)
    try:
        ZoneInfo(zone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return "UTC"
    return zone or "UTC"


def due_now(now: datetime, zone: str, hour: int, last_day: str | None) -> str | None:
    """The local date (ISO) of the digest due at ``now`` (aware) for a reader
    in ``zone`` with digest ``hour``, or None: not before ``hour`` o'clock local
    time, and once per local date (``last_day``, the last digest's).  On a day
    whose clocks skip ``hour`` (a DST change at that hour) it comes at the first
    cycle after the gap."""
    local = now.astimezone(ZoneInfo(zone))
    if local.timetz().replace(tzinfo=None) < time(hour):
        return None
    day = local.date().isoformat()
    return None if last_day == day else day


def section(record: GameRecord, player: Player, events: list, zone: str) -> list[str]:
    """The lines of one game in a digest to ``player`` (the language in
    force): the heading, each event, and the game's state in short (who is on
    move and by when, in ``zone``; or that it is over).  Public information
    only."""
    lines = [word("person", "digest_game", game_id=record.id, seat=player.name)]
    lines += ["  - " + event_text(e) for e in events]
    if record.game.phase == "over" or record.ended is not None:
        lines.append("  " + word("person", "digest_over"))
        return lines
    waiting = list(record.game.waiting_for())
    mine = player.name in waiting
    others = [n for n in waiting if n != player.name]
    dues = [d for d in (due(record, p) for p in record.players if p.name in waiting and not p.bot) if d]
    when = format_when(min(dues), zone) if dues else ""
    if mine:
        lines.append("  " + word("person", "digest_yours", due=when))
    elif others:
        lines.append("  " + word("person", "digest_waiting", names=", ".join(others), due=when))
    return lines


def digest_mail(post: Post, address: str, parts: list[tuple[GameRecord, Player, list]], zone: str,
                hour: int, language: str) -> Any:
    """The digest to ``address``: one section per game of ``parts`` (``(record,
    seat, events)``), in ``language``, in their person thread, with
    ``List-Unsubscribe`` (kind ``digest``).  Returns the ``EmailMessage``."""
    now = post.clock()
    with i18n.speaking(language):
        lines = [word("person", "digest_title"), "",
                 word("person", "digest_intro", hour=f"{hour:02d}:00", zone=zone_name(zone)), ""]
        for record, player, events in parts:
            lines += section(record, player, events, zone)
            lines.append("")
        lines.append(word("person", "digest_how"))
        text = "\n".join(lines) + "\n"
        subject = " ".join(word("person", "digest_subject").split())
    thread = post.bk.open_person_thread(address, secrets.token_hex(8), now)
    msg = post.message(None, address, subject, text, auto="auto-generated",
                       references=[thread["thread"]] if thread["thread"] else [])
    mid = person_message_id(person_token(thread["secret"]), post.domain)
    del msg["Message-ID"]
    msg.set_raw(*msg.policy.header_store_parse("Message-ID", mid))
    token = post.bk.unsubscribe_token(address, "digest", now)
    add_headers(msg, post.config.moderator_address, token, post.config.unsubscribe_url)
    return msg


def run(post: Post, store: GameStore, report: CycleReport, after_mark: Any = None,
        after_spool: Any = None) -> int:
    """The digest stage of the cycle at ``post.clock()``: every reader whose
    digest is due (``due_now``) gets one mail with the news of their held
    status mails (see the module for the order of the writes); held mails of
    a game whose digest no longer applies (``daily_hour`` None) are released.
    ``after_mark``, ``after_spool``: fault points (tests) after the day is
    committed and after the digest is spooled (``faults.fault``:
    ``digest-marked``, ``digest-spooled``).  Returns how many digests were
    spooled.  A game file that cannot be read keeps its held mails for the
    next cycle (``report.errors``)."""
    bk, now = post.bk, post.clock()
    sent = 0
    for address, entries in sorted(held(post.spool).items()):
        if hour_of(bk.setting(address, "digest")) is None or \
                any(daily_hour(bk, address, str(e.meta.get("game"))) is None for e in entries):
            for e in entries:
                if daily_hour(bk, address, str(e.meta.get("game"))) is None:
                    release(post.spool, address, str(e.meta.get("game")))
            entries = [e for e in entries if daily_hour(bk, address, str(e.meta.get("game"))) is not None]
            if not entries:
                continue
        hour = hour_of(bk.setting(address, "digest"))
        games: dict[str, list[Any]] = {}
        for e in entries:
            games.setdefault(str(e.meta.get("game")), []).append(e)
        parts, names, failed = [], [], False
        for gid in sorted(games):
            try:
                with store.lock(gid):
                    record = store.load(gid, trusted_digest=bk.trusted_digest(gid))
            except (StoreError, OSError) as exc:
                report.errors.append(f"game {gid}: the digest waits: {exc}")
                failed = True
                break
            player = record.player_by_address(address)
            starts = [e.meta.get("log_from") for e in games[gid]]
            ends = [e.meta.get("log_to") for e in games[gid]]
            if player is None or not all(isinstance(x, int) for x in starts + ends):
                release(post.spool, address, gid)  # no seat, or an entry of an older pbem: sent as it is
                continue
            parts.append((record, player, record.game.events[min(starts):max(ends)]))
            names += [e.name for e in games[gid]]
        if failed or not parts:
            continue
        zone = _zone(bk, address, [(r, p) for r, p, _ in parts])
        day = due_now(now, zone, hour, bk.digest_day(address))
        if day is None:
            continue
        here = parts[0][0].language_of(parts[0][1])  # as people.person_language (a later row)
        language = (bk.setting(address, "language") or here or (bk.person(address) or {}).get("language")
                    or i18n.DEFAULT)
        msg = digest_mail(post, address, parts, zone, hour, language)
        with bk.transaction():
            bk.set_digest_day(address, day, now)
        faults.fault("digest-marked")  # the day committed, the digest not spooled
        if after_mark is not None:
            after_mark()
        post.spool.add_many([(msg, {"kind": "digest", "game": None, "player": None, "events": [],
                                    "answers": None, "person": address, "replaces": names})], now)
        faults.fault("digest-spooled")  # the digest spooled, the held mails not yet removed
        if after_spool is not None:
            after_spool()
        for name in names:
            post.spool.remove(name)
        sent += 1
        log.info("digest: one mail with %d game(s) of news (%s) spooled for a reader", len(parts),
                 ", ".join(r.id for r, _, _ in parts))
    return sent
