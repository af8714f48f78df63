"""Deadlines in the calendar (issue 28): which iCalendar event a mail to a
player carries, so that a phone's calendar shows by when their move is due.

One event per move: its UID is derived from the game, the seat and the number
of the seat's move (``event_uid``), never random, so that every mail about the
same move names the same event.  The game file keeps, per seat, the last event
its mails carried (``GameRecord.calendar``: ``move``, ``due``, ``sequence``,
``open``, ``high``; docs/game-file.md, "Format 6: deadlines in the calendar";
``cancelled``, the last cancellation of an earlier move, "Format 7"),
and ``calendar_parts`` compares it with the deadline in force
(``deadlines.in_force``, the one rule for it and its changes) whenever a mail
to the player is made:

- the player is on move with a deadline and wants the calendar: a
  ``REQUEST`` of the move's event; the same ``SEQUENCE`` while the deadline
  stays, one higher (and the new DTSTART) when it moved (a vacation,
  ``extend``, ``deadline``, pause and resume, the outage shift, held mail);
- the event sent is no longer the one in force (the move was made, by the
  player, by the built-in player, or undone; the deadline ended: ``deadline
  none``, a pause, ``--on-missed wait`` after the deadline; ``calendar off``;
  the seat resigned): a ``CANCEL`` of it, ``SEQUENCE`` one higher;
- else nothing.

The status mail (``notify``), the clock's notices (``clock``), the game
master's notices (``announce``) and the answers to a player's commands carry
what it gives, in the player's language (``templates/words/clock.txt``:
``calendar_summary``, ``calendar_how``, ``calendar_cancelled``).  The rules
engine never sees any of it.  Above ``deadlines``; below ``notify``, ``clock``.
"""
from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

from .. import i18n
from ..mail.calendar import DeadlineEvent, to_ical
from ..render.words import word
from ..store.gamefile import GameRecord, Player
from .deadlines import in_force, iso, parse_time

EVENT_LENGTH = timedelta(minutes=15)
"""How long the deadline's event lasts in the calendar (it marks an instant)."""
ALARM_BEFORE = timedelta(hours=3)
"""How long before the deadline the calendar alerts (VALARM; Apple Calendar,
Thunderbird and Outlook honour it, Gmail keeps its own reminders)."""


def calendar_wanted(record: GameRecord, seat: str, person: str | None = None) -> bool:
    """Whether the mails to ``seat`` of ``record``'s game carry the deadline
    event: True unless the player said ``calendar off`` in this game
    (``GameRecord.calendar_off``) or in their person thread (``person``: the
    person-level setting ``calendar``, ``on``/``off``/None, issue 28's
    ``moderation/people.py``).  The one place that decides it."""
    return seat not in record.calendar_off and person != "off"


def move_number(record: GameRecord, seat: str) -> int:
    """The number of ``seat``'s move the game waits for or would wait for
    next: 1 + the moves the seat made (``record.history`` entries of it, by
    mail or by the built-in player; an undo takes one back)."""
    return 1 + sum(1 for h in record.history if h.get("player") == seat)


def event_uid(record: GameRecord, seat: str, move: int, domain: str) -> str:
    """The UID of the deadline event of ``seat``'s ``move`` in ``record``'s
    game: ``move-N.KEY.GAME.pbem@DOMAIN`` (``KEY``: 12 hex digits of the
    SHA-256 of the game id and seat name, so any seat name gives a UID of
    safe characters and no address is in it).  Derived, never random: a mail
    made again gives the same one."""
    key = hashlib.sha256(f"{record.id}\0{seat}".encode("utf-8")).hexdigest()[:12]
    return f"move-{move}.{key}.{record.id}.pbem@{domain}"


def event_in_force(record: GameRecord, player: Player, person: str | None = None) -> tuple[int, datetime] | None:
    """``(move number, deadline UTC)`` of the event ``player``'s mails should
    show now, or None: the game waits for them (not a seat of the built-in
    player, not resigned, with an address), a deadline runs for them
    (``deadlines.in_force``: not paused, not ``deadline none``), it is not the
    open-ended wait of ``on_missed: wait`` after a missed deadline
    (``clock.overdue_told``), and ``calendar_wanted``."""
    if not player.address or player.bot or player.name in record.resigned:
        return None
    if not calendar_wanted(record, player.name, person):
        return None
    when = in_force(record).get(player.name)
    if when is None:
        return None
    if record.clock.get("overdue_told") and record.settings.get("on_missed", "bot") == "wait":
        return None
    return move_number(record, player.name), when


def calendar_parts(record: GameRecord, player: Player, *, stamp: datetime, organizer: str,
                   organizer_name: str, domain: str, again: bool = False,
                   person: str | None = None) -> list[tuple[str, str]]:
    """The iCalendar objects ``[(method, VCALENDAR text)]`` a mail made now
    (``stamp``: DTSTAMP) to ``player`` carries, the ``REQUEST`` first; records
    what it gives in ``record.calendar`` (saved with the mail's save).
    ``organizer``/``organizer_name``: the moderator's address and name,
    ``domain``: the right-hand side of the UIDs.  ``again``: the mail replaces
    unsent mails to the player (a merged status mail), so it carries the last
    cancellation once more in case the mail it replaces was the one carrying
    it.  Worded in ``player``'s language.  See the module's docstring for the
    rules; ``[]`` when nothing is in force and nothing was sent.  ``person``:
    the player's person-level ``calendar`` setting (``calendar_wanted``)."""
    now = event_in_force(record, player, person)
    sent = record.calendar.get(player.name)
    out: list[tuple[str, str]] = []
    with i18n.speaking(record.language_of(player)):
        if sent is not None and sent.get("open") and (now is None or now[0] != sent["move"]):
            sent.update(open=False, sequence=sent["sequence"] + 1)
            sent["high"] = max(int(sent.get("high") or 0), sent["sequence"])
            out.append(("CANCEL", _ical(record, player, "CANCEL", sent, stamp, organizer, organizer_name, domain)))
        elif sent is not None and again:
            # the mail replaces unsent ones: one of them may have carried the last cancellation
            # (the built-in player's move notice, before the status mail that asks for the next
            # move; a status mail asking for it, made again): carried again, the same SEQUENCE
            if not sent.get("open") and (now is None or now[0] != sent["move"]):
                out.append(("CANCEL", _ical(record, player, "CANCEL", sent, stamp, organizer, organizer_name,
                                            domain)))
            if isinstance(sent.get("cancelled"), dict) and sent["cancelled"].get("move") != sent["move"]:
                out.append(("CANCEL", _ical(record, player, "CANCEL", sent["cancelled"], stamp, organizer,
                                            organizer_name, domain)))
        if now is not None:
            move, when = now
            if sent is not None and sent.get("open") and sent["move"] == move:
                if parse_time(sent.get("due")) != when:
                    sent.update(due=iso(when), sequence=sent["sequence"] + 1)
            else:
                # a new move starts at 0; a move taken back and asked again goes on above all sent
                high = int(sent.get("high") or 0) if sent is not None else 0
                first = 0 if sent is None or move > sent["move"] else high + 1
                old = sent
                sent = {"move": move, "due": iso(when), "sequence": first, "open": True, "high": max(high, first)}
                if old is not None and not old.get("open") and old["move"] != move:
                    # the last cancellation, for a mail made again in its place (``again``)
                    sent["cancelled"] = {"move": old["move"], "due": old.get("due"), "sequence": old["sequence"]}
                elif old is not None and isinstance(old.get("cancelled"), dict):
                    sent["cancelled"] = old["cancelled"]  # the same move asked again: the earlier one's stays
            sent["high"] = max(int(sent.get("high") or 0), sent["sequence"])
            record.calendar[player.name] = sent
            out.insert(0, ("REQUEST", _ical(record, player, "REQUEST", sent, stamp, organizer, organizer_name,
                                            domain)))
    return out


def _ical(record: GameRecord, player: Player, method: str, sent: dict, stamp: datetime, organizer: str,
          organizer_name: str, domain: str) -> str:
    """The VCALENDAR text of the event ``sent`` (a ``record.calendar`` entry)
    with ``method``, in the language in force."""
    from ..render.when import format_when, zone_of

    when = parse_time(sent.get("due")) or stamp
    due_utc = format_when(when, None)
    local = {"due_local": format_when(when, player.timezone), "zone": player.timezone} \
        if zone_of(player.timezone) is not None else {}
    summary = word("clock", "calendar_summary", game_id=record.id)
    if method == "CANCEL":
        description = word("clock", "calendar_cancelled", game_id=record.id)
    else:
        description = word("clock", "deadline", due_utc=due_utc, **local) + "\n\n" + \
            word("clock", "calendar_how", game_id=record.id)
    return to_ical(DeadlineEvent(
        method=method, uid=event_uid(record, player.name, int(sent["move"]), domain),
        sequence=int(sent["sequence"]), start=when, length=EVENT_LENGTH, stamp=stamp,
        summary=summary, description=description, organizer=organizer, organizer_name=organizer_name,
        attendee=player.address, language=i18n.current(), alarm=ALARM_BEFORE))


def cancel_sent(record: GameRecord, player: Player, *, stamp: datetime, organizer: str, organizer_name: str,
                domain: str) -> list[tuple[str, str]]:
    """The cancellation ``[("CANCEL", VCALENDAR text)]`` of the event last
    sent to ``player`` when it is still open, whatever is in force now, for a
    mail to the seat's player as they are now (their address, zone and
    language) before the seat changes hands (``gm replace``, the substitute
    pool's take-over: the old player's calendar would keep the deadline of a
    move no longer theirs).  Marks it closed with ``SEQUENCE`` one higher in
    ``record.calendar`` and keeps the seat's highest ``SEQUENCE`` there, so that
    the newcomer's event of the same move (same UID) goes above it (RFC 5546
    section 2.1.4).  ``[]`` when no event is open."""
    sent = record.calendar.get(player.name)
    if not player.address or sent is None or not sent.get("open"):
        return []
    sent.update(open=False, sequence=sent["sequence"] + 1)
    sent["high"] = max(int(sent.get("high") or 0), sent["sequence"])
    with i18n.speaking(record.language_of(player)):
        return [("CANCEL", _ical(record, player, "CANCEL", sent, stamp, organizer, organizer_name, domain))]


def mail_cancel(post: Any, record: GameRecord, player: Player) -> list[tuple[str, str]]:
    """``cancel_sent`` for a mail of ``post`` (as ``mail_parts``)."""
    return cancel_sent(record, player, stamp=post.clock(), organizer=post.config.moderator_address,
                       organizer_name=post.config.moderator_name, domain=post.domain)


def mail_parts(post: Any, record: GameRecord, player: Player, again: bool = False) -> list[tuple[str, str]]:
    """``calendar_parts`` for a mail of ``post`` (``send.Post``: its clock
    gives DTSTAMP, its configuration the ORGANIZER, its domain the UIDs's, its
    bookkeeping the player's person-level ``calendar`` setting)."""
    person = post.bk.setting(player.address, "calendar") if player.address else None
    return calendar_parts(record, player, stamp=post.clock(), organizer=post.config.moderator_address,
                          organizer_name=post.config.moderator_name, domain=post.domain, again=again,
                          person=person)
