"""The iCalendar part of a mail (RFC 5545 objects, iTIP methods of RFC 5546,
sent as iMIP, RFC 6047): a move's deadline as an event a phone's calendar shows.

Built with the ``icalendar`` library (never hand-written lines: its folding at
75 octets, escaping of ``,;\\`` and of line ends, and the ``Z`` form of UTC
times).  This module knows nothing of games: ``moderation/calendar.py`` decides
which event a mail carries and words it; see docs/operations.md, "Deadlines in
the calendar", for the choice of ``METHOD:REQUEST``/``CANCEL``, the ORGANIZER
and ATTENDEE and where the part goes in the mail.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import icalendar

__all__ = ["DeadlineEvent", "PRODID", "to_ical", "uid_of"]

PRODID = "-//pbem//Union Pacific play-by-email moderator//EN"
"""The calendar's PRODID (RFC 5545 section 3.7.3)."""


@dataclass(frozen=True)
class DeadlineEvent:
    """One deadline event as a mail carries it.

    ``method``: the iTIP method, ``REQUEST`` (the event as it is now: a new
    one, or the same ``uid`` with a higher ``sequence`` and a new ``start``)
    or ``CANCEL`` (the event is gone: the move was made, or no deadline runs);
    ``uid``: the event's stable UID (RFC 5545 section 3.8.4.7); ``sequence``:
    its revision (3.8.7.4), higher for every change of the same ``uid``;
    ``start``: the deadline (an aware ``datetime``, written in UTC with ``Z``);
    ``length``: the event's duration; ``stamp``: when the mail was made
    (DTSTAMP, UTC); ``summary``, ``description``: the player's words, in
    ``language`` (a code, the LANGUAGE parameter); ``organizer``: the
    moderator's address and ``organizer_name`` its name; ``attendee``: the
    player's own address (no one else's); ``alarm``: how long before ``start``
    the calendar alerts (VALARM, DISPLAY), None for none."""

    method: str
    uid: str
    sequence: int
    start: datetime
    length: timedelta
    stamp: datetime
    summary: str
    description: str
    organizer: str
    organizer_name: str
    attendee: str
    language: str = "en"
    alarm: timedelta | None = None

    def __post_init__(self) -> None:
        if self.method not in ("REQUEST", "CANCEL"):
            raise ValueError(f"method must be REQUEST or CANCEL, not {self.method!r}")
        if self.start.tzinfo is None or self.stamp.tzinfo is None:
            raise ValueError("start and stamp must be aware datetimes")
        if self.sequence < 0:
            raise ValueError(f"sequence must be >= 0, not {self.sequence}")


def to_ical(event: DeadlineEvent) -> str:
    """The VCALENDAR text of ``event`` (CRLF line ends, lines folded at 75
    octets): one VEVENT with UID, SEQUENCE, DTSTAMP, DTSTART and DURATION in
    UTC, SUMMARY and DESCRIPTION (LANGUAGE parameter), ORGANIZER (CN: the
    moderator's name), ATTENDEE (the player; ``RSVP=FALSE``, ``PARTSTAT=ACCEPTED``:
    nothing to answer), TRANSP transparent (a deadline does not make the player
    busy), STATUS ``CONFIRMED`` or, for ``CANCEL``, ``CANCELLED``; a VALARM
    ``alarm`` before the start for ``REQUEST``.  Raises ValueError as
    ``DeadlineEvent``."""
    cal = icalendar.Calendar()
    cal.add("prodid", PRODID)
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("method", event.method)
    ev = icalendar.Event()
    ev.add("uid", event.uid)
    ev.add("sequence", event.sequence)
    ev.add("dtstamp", event.stamp.astimezone(timezone.utc).replace(microsecond=0))
    ev.add("dtstart", event.start.astimezone(timezone.utc).replace(microsecond=0))
    ev.add("duration", event.length)
    ev.add("summary", event.summary, parameters={"LANGUAGE": event.language})
    ev.add("description", event.description, parameters={"LANGUAGE": event.language})
    organizer = icalendar.vCalAddress(f"mailto:{event.organizer}")
    if event.organizer_name:
        organizer.params["CN"] = icalendar.vText(event.organizer_name)
    ev.add("organizer", organizer)
    attendee = icalendar.vCalAddress(f"mailto:{event.attendee}")
    attendee.params["ROLE"] = icalendar.vText("REQ-PARTICIPANT")
    attendee.params["PARTSTAT"] = icalendar.vText("ACCEPTED")
    attendee.params["RSVP"] = icalendar.vText("FALSE")
    ev.add("attendee", attendee)
    ev.add("transp", "TRANSPARENT")
    ev.add("status", "CANCELLED" if event.method == "CANCEL" else "CONFIRMED")
    if event.method == "REQUEST" and event.alarm is not None:
        alarm = icalendar.Alarm()
        alarm.add("action", "DISPLAY")
        alarm.add("description", event.summary)
        alarm.add("trigger", -event.alarm)
        ev.add_component(alarm)
    cal.add_component(ev)
    return cal.to_ical().decode("utf-8")


def uid_of(ics: str) -> str:
    """The UID of the one VEVENT of the VCALENDAR text ``ics`` (as ``to_ical``
    writes it; read back with ``icalendar``, so a folded line reads whole).
    Raises ValueError for a text without exactly one VEVENT."""
    events = icalendar.Calendar.from_ical(ics).walk("VEVENT")
    if len(events) != 1:
        raise ValueError(f"{len(events)} VEVENTs, not one")
    return str(events[0]["UID"])
