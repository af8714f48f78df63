"""Deadlines in the calendar (issue 28): every mail asking for a move carries
its deadline as an iCalendar event (one ``text/calendar`` part, a stable UID
per move), carried again with the same UID, a higher SEQUENCE and the new
time when the deadline moves, cancelled when the move is made; ``calendar
off`` for those who do not want it.

Timelines through the real Moderator on Maildirs (``test_deadlines.Clocked``),
each calendar part parsed with ``icalendar``; the times are derived by hand
from the creation time T0 and the settings."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from email import policy
from email.parser import BytesParser

import icalendar
import pytest
import yaml

from moderator.mail.calendar import DeadlineEvent, to_ical
from moderator.mail.compose import build_message, flatten, seven_bit
from moderator.moderation.calendar import calendar_wanted, event_uid, move_number
from moderator.store.gamefile import GameStore, StoreError
from test_deadlines import H, T0, Clocked, body, to

DAY = timedelta(days=1)
ANN, BOB, CY = "ann@example.org", "bob@example.org", "cy@example.net"


def calendars(msg):
    """The ``text/calendar`` parts of ``msg`` as ``(method parameter, parsed
    Calendar, the part)``, in the order of the mail."""
    out = []
    for part in msg.walk():
        if part.get_content_type() == "text/calendar":
            out.append((part.get_param("method"), icalendar.Calendar.from_ical(part.get_content()), part))
    return out


def event(cal):
    events = cal.walk("VEVENT")
    assert len(events) == 1
    return events[0]


def only(msg):
    """The one calendar of ``msg``: ``(METHOD, UID, SEQUENCE, DTSTART, STATUS)``."""
    found = calendars(msg)
    assert len(found) == 1, [m for m, _, _ in found]
    method, cal, _ = found[0]
    assert method == str(cal["METHOD"])
    ev = event(cal)
    return (str(cal["METHOD"]), str(ev["UID"]), int(ev["SEQUENCE"]), ev.decoded("DTSTART"), str(ev["STATUS"]))


def uid(gid, seat, move):
    record = type("R", (), {"id": gid})()
    return event_uid(record, seat, move, "pbem.localhost")


def test_the_event_is_rfc_5545_as_icalendar_reads_it():
    """The builder's VCALENDAR: every property a client needs, in UTC with Z."""
    ev = DeadlineEvent(method="REQUEST", uid="move-1.x.g.pbem@example.org", sequence=2,
                       start=datetime(2026, 12, 4, 12, 0, tzinfo=timezone.utc), length=timedelta(minutes=15),
                       stamp=datetime(2026, 12, 1, 12, 0, 7, 123, tzinfo=timezone.utc),
                       summary="Union Pacific g: tu turno; ya", description="Línea uno,\ndos",
                       organizer="pbem@example.org", organizer_name="Moderador", attendee="ann@example.org",
                       language="es", alarm=timedelta(hours=3))
    text = to_ical(ev)
    assert "\r\nDTSTART:20261204T120000Z\r\n" in text
    assert "\r\nDTSTAMP:20261201T120007Z\r\n" in text
    assert "\r\nMETHOD:REQUEST\r\n" in text and "\r\nSEQUENCE:2\r\n" in text
    assert "SUMMARY;LANGUAGE=es:Union Pacific g: tu turno\\; ya" in text
    assert all(len(line.encode()) <= 75 for line in text.split("\r\n"))
    cal = icalendar.Calendar.from_ical(text)
    e = event(cal)
    assert str(e["SUMMARY"]) == "Union Pacific g: tu turno; ya"
    assert str(e["DESCRIPTION"]) == "Línea uno,\ndos"
    assert e.decoded("DURATION") == timedelta(minutes=15)
    assert str(e["ORGANIZER"]) == "mailto:pbem@example.org" and e["ORGANIZER"].params["CN"] == "Moderador"
    assert str(e["ATTENDEE"]) == "mailto:ann@example.org" and e["ATTENDEE"].params["RSVP"] == "FALSE"
    assert str(e["STATUS"]) == "CONFIRMED" and str(e["TRANSP"]) == "TRANSPARENT"
    (alarm,) = e.walk("VALARM")
    assert alarm.decoded("TRIGGER") == -timedelta(hours=3)
    cancel = to_ical(DeadlineEvent(**{**ev.__dict__, "method": "CANCEL", "sequence": 3}))
    c = icalendar.Calendar.from_ical(cancel)
    assert str(c["METHOD"]) == "CANCEL" and str(event(c)["STATUS"]) == "CANCELLED"
    assert not event(c).walk("VALARM")
    with pytest.raises(ValueError):
        DeadlineEvent(**{**ev.__dict__, "method": "PUBLISH"})
    with pytest.raises(ValueError):
        DeadlineEvent(**{**ev.__dict__, "start": datetime(2026, 12, 4, 12, 0)})


def test_the_part_is_the_last_alternative_and_survives_seven_bit():
    """iMIP: text/calendar with method= inside multipart/alternative, after the
    HTML; a second object (a cancellation beside a request) is an attachment;
    re-encoded for a server without 8BITMIME it keeps its method."""
    ics = to_ical(DeadlineEvent(method="REQUEST", uid="u@x", sequence=0,
                                start=datetime(2026, 12, 4, 12, 0, tzinfo=timezone.utc),
                                length=timedelta(minutes=15), stamp=T0, summary="Union Pacific g：轮到你了",
                                description="中文", organizer="m@x.org", organizer_name="", attendee="a@x.org",
                                language="zh"))
    cancel = ics.replace("METHOD:REQUEST", "METHOD:CANCEL")
    msg = build_message(from_addr="m@x.org", from_name=None, to="a@x.org", subject="s", text="hi",
                        html="<p>hi</p>", domain="x.org", calendar=[("REQUEST", ics)])
    assert msg.get_content_type() == "multipart/alternative"
    kinds = [p.get_content_type() for p in msg.iter_parts()]
    assert kinds == ["text/plain", "text/html", "text/calendar"]
    part = msg.get_payload()[2]
    assert part.get_param("method") == "REQUEST" and part["Content-Transfer-Encoding"] == "8bit"
    assert part.get_content_disposition() is None
    assert "MIME-Version" not in part
    seven_bit(msg)
    part = msg.get_payload()[2]
    assert part.get_param("method") == "REQUEST" and part["Content-Transfer-Encoding"] in ("base64", "quoted-printable")
    again = BytesParser(policy=policy.default).parsebytes(flatten(msg))
    assert [(m, str(event(c)["SUMMARY"])) for m, c, _ in calendars(again)] == [("REQUEST", "Union Pacific g：轮到你了")]

    both = build_message(from_addr="m@x.org", from_name=None, to="a@x.org", subject="s", text="hi",
                         html="<p>hi</p>", domain="x.org", calendar=[("REQUEST", ics), ("CANCEL", cancel)])
    assert both.get_content_type() == "multipart/mixed"
    alt, attached = both.get_payload()
    assert alt.get_content_type() == "multipart/alternative" and alt.get_payload()[2].get_param("method") == "REQUEST"
    assert attached.get_param("method") == "CANCEL" and attached.get_filename() == "cancel.ics"
    assert attached.get_content_disposition() == "attachment"


def test_a_timeline_of_requests_moves_and_cancellations(tmp_path):
    """Three players, a 72-hour deadline.  The welcome mails ask for the
    initial investment: each carries the event of move 1 at T0+72h, SEQUENCE
    0.  Cy's vacation of 5 days at T0+2h moves Cy's deadline by the 5 days
    after the wait's start: same UID, SEQUENCE 1, DTSTART T0+72h+5d-... (the
    vacation counts from T0+2h: T0+72h+5d).  Ann's investment at T0+3h: her
    next mail cancels her event (SEQUENCE 1); Bob's and Cy's status mails
    carry theirs unchanged."""
    h = Clocked(tmp_path, settings={"deadline": 72 * 3600})
    gid = h.gid
    h.run(T0)
    welcome = h.sent()
    due = T0 + 72 * H  # 2026-12-04 12:00 UTC
    for address, seat in ((ANN, "Ann"), (BOB, "Bob"), (CY, "Cy")):
        (mail,) = to(welcome, address)
        assert only(mail) == ("REQUEST", uid(gid, seat, 1), 0, due, "CONFIRMED")
        cal = calendars(mail)[0][1]
        ev = event(cal)
        assert str(ev["SUMMARY"]) == f"Union Pacific {gid}: your move"
        assert "Your move is due by 2026-12-04 12:00 UTC." in str(ev["DESCRIPTION"])
        assert str(ev["ATTENDEE"]) == f"mailto:{address}"  # their own address only
        assert ev.decoded("DTSTAMP") == T0
    assert uid(gid, "Ann", 1) == uid(gid, "Ann", 1) != uid(gid, "Bob", 1) != uid(gid, "Ann", 2)

    h.mail("Cy", "vacation 5d")
    h.run(T0 + 2 * H)
    mails = h.sent()
    (cy,) = to(mails, CY)
    assert only(cy) == ("REQUEST", uid(gid, "Cy", 1), 1, due + 5 * DAY, "CONFIRMED")
    assert "Your move is due by 2026-12-09 12:00 UTC." in str(event(calendars(cy)[0][1])["DESCRIPTION"])
    (ann,) = to(mails, ANN)  # told of Cy's vacation: her own event as it was
    assert only(ann) == ("REQUEST", uid(gid, "Ann", 1), 0, due, "CONFIRMED")
    assert h.load().calendar["Cy"] == {"move": 1, "due": "2026-12-09T12:00:00+00:00", "sequence": 1,
                                       "open": True, "high": 1}

    h.move("Ann")
    h.run(T0 + 3 * H)
    mails = h.sent()
    (ann,) = to(mails, ANN)
    assert only(ann) == ("CANCEL", uid(gid, "Ann", 1), 1, due, "CANCELLED")
    assert only(to(mails, BOB)[0]) == ("REQUEST", uid(gid, "Bob", 1), 0, due, "CONFIRMED")
    assert only(to(mails, CY)[0]) == ("REQUEST", uid(gid, "Cy", 1), 1, due + 5 * DAY, "CONFIRMED")

    # Ann is not on move: a later mail to her carries nothing; Bob says calendar off
    h.mail("Ann", "status")
    h.mail("Bob", "calendar off")
    h.run(T0 + 4 * H)
    mails = h.sent()
    assert calendars(to(mails, ANN)[0]) == []
    (bob,) = to(mails, BOB)
    assert "Calendar off: your mails carry no calendar event" in body(bob)
    assert only(bob) == ("CANCEL", uid(gid, "Bob", 1), 1, due, "CANCELLED")
    assert str(event(calendars(bob)[0][1])["DESCRIPTION"]) == (
        f"This deadline of game {gid} no longer applies: your move was made, no deadline runs for it now, "
        "or you turned the calendar off.")
    record = h.load()
    assert record.calendar_off == ["Bob"] and not calendar_wanted(record, "Bob")
    h.mail("Bob", "status")
    h.run(T0 + 5 * H)
    assert calendars(to(h.sent(), BOB)[0]) == []

    # calendar on again: the same move's event comes back above every SEQUENCE sent
    h.mail("Bob", "calendar on")
    h.run(T0 + 6 * H)
    (bob,) = to(h.sent(), BOB)
    assert "Calendar on:" in body(bob)
    assert only(bob) == ("REQUEST", uid(gid, "Bob", 1), 2, due, "CONFIRMED")
    assert move_number(h.load(), "Bob") == 1 and move_number(h.load(), "Ann") == 2


def test_no_deadline_no_event_and_the_file_keeps_no_key(tmp_path):
    """A game without a deadline: no calendar part in any mail, and the game
    file has neither calendar key (a save writes them only when not empty)."""
    h = Clocked(tmp_path, settings={"deadline": None})
    h.run(T0)
    mails = h.sent()
    assert len(mails) == 3 and all(calendars(m) == [] for m in mails)
    data = GameStore(h.config.games_dir).read_data(h.gid)
    assert "calendar" not in data and "calendar_off" not in data


def test_a_spanish_player_reads_the_event_in_spanish(tmp_path):
    h = Clocked(tmp_path, settings={"deadline": 72 * 3600, "language": "es"})
    h.run(T0)
    (ann,) = to(h.sent(), ANN)
    cal = calendars(ann)[0][1]
    ev = event(cal)
    assert str(ev["SUMMARY"]) == f"Union Pacific {h.gid}: te toca jugar"
    assert ev["SUMMARY"].params["LANGUAGE"] == "es"
    assert "Tienes hasta el" in str(ev["DESCRIPTION"]) and "\"ayuda\"" in str(ev["DESCRIPTION"])
    h.mail("Ann", "calendario desactivar")
    h.run(T0 + H)
    (ann,) = to(h.sent(), ANN)
    assert "Calendario desactivado" in body(ann)
    assert only(ann)[0] == "CANCEL"
    assert h.load().calendar_off == ["Ann"]


def test_a_malformed_calendar_key_is_refused_by_the_store(tmp_path):
    h = Clocked(tmp_path, settings={"deadline": 72 * 3600})
    store = GameStore(h.config.games_dir)
    path = store.path(h.gid)
    data = yaml.safe_load(path.read_text())
    assert data["calendar"]["Ann"]["move"] == 1  # the welcome mails' events, recorded at the creation
    for key, value, problem in (("calendar", {"Ann": {"move": "one", "sequence": 0}}, "calendar must map"),
                                ("calendar", ["Ann"], "calendar must map"),
                                ("calendar_off", "Ann", "calendar_off must be a list")):
        path.write_text(yaml.safe_dump({**data, key: value}, sort_keys=False))
        with pytest.raises(StoreError, match=problem):
            store.load(h.gid)


def test_over_imap_and_smtp_the_event_moves_and_is_cancelled(tmp_path, dovecot, smtp_sink, monkeypatch):
    """The real path: orders read from the private Dovecot, mails sent to the
    aiosmtpd sink and parsed from the bytes it received.  The welcome mail
    asks Cy for move 1 by T0+72h (SEQUENCE 0); Cy's vacation moves it by 5
    days (the answer: same UID, SEQUENCE 1, DTSTART T0+72h+5d); Ann's
    investment cancels hers."""
    import random

    from moderator.config import load_config
    from moderator.moderation.cycle import Moderator
    from moderator.players.heuristic import choose
    from email.message import EmailMessage
    from email.utils import make_msgid

    monkeypatch.setenv("CAL_IMAP_PASSWORD", dovecot.password)
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(yaml.safe_dump({
        "moderator": {"address": "moderator@up.example", "name": "UP moderator"},
        "games_dir": "games",
        "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                 "username": dovecot.username, "password_env": "CAL_IMAP_PASSWORD"},
        "smtp": {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none"},
    }))
    config = load_config(cfg)
    clock = [T0]
    moderator = Moderator(config, clock=lambda: clock[0])
    moderator.create_game("cal", [("Ann", ANN), ("Bob", BOB), ("Cy", CY)], seed=7,
                          settings={"deadline": 72 * 3600})
    store = GameStore(config.games_dir)
    seen = [0]

    def cycle(at):
        clock[0] = at
        report = moderator.run_cycle()
        assert report.ok, report.errors
        new = smtp_sink.messages[seen[0]:]
        seen[0] += len(new)
        return {m.message["To"].addresses[0].addr_spec: m.message for m in new}

    def reply(name, address, answered, text, at):
        msg = EmailMessage(policy=policy.default)
        msg["From"], msg["To"] = address, "moderator@up.example"
        msg["Subject"] = "Re: " + str(answered["Subject"])
        msg["Message-ID"] = make_msgid(domain="example.org")
        msg["In-Reply-To"] = msg["References"] = str(answered["Message-ID"])
        msg.set_content(text + "\n")
        dovecot.append(msg.as_bytes(), msg_time=at)

    welcome = cycle(T0)
    due = T0 + 72 * H
    assert only(welcome[CY]) == ("REQUEST", event_uid(store.load("cal"), "Cy", 1, "up.example"), 0, due, "CONFIRMED")
    assert str(event(calendars(welcome[CY])[0][1])["ORGANIZER"]) == "mailto:moderator@up.example"

    reply("Cy", CY, welcome[CY], "vacation 5d", T0 + H)
    mails = cycle(T0 + 2 * H)
    record = store.load("cal")
    assert only(mails[CY]) == ("REQUEST", event_uid(record, "Cy", 1, "up.example"), 1, due + 5 * DAY, "CONFIRMED")

    rec = store.load("cal")
    order = str(choose(rec.game, "Ann", random.Random(1))).replace("; ", "\n")
    reply("Ann", ANN, welcome[ANN], order, T0 + 2 * H + timedelta(minutes=30))
    mails = cycle(T0 + 3 * H)
    assert only(mails[ANN]) == ("CANCEL", event_uid(record, "Ann", 1, "up.example"), 1, due, "CANCELLED")
    assert only(mails[BOB])[:3] == ("REQUEST", event_uid(record, "Bob", 1, "up.example"), 0)
    assert dovecot.messages("INBOX") == []


@pytest.mark.parametrize("with_param", [True, False])
def test_a_calendars_accept_is_not_answered(tmp_path, with_param):
    """A player's calendar may mail back an iTIP REPLY ("Accepted: ...") to
    the event's ORGANIZER, the moderator: machine mail, set aside unanswered,
    the game unchanged; the method read from the Content-Type or, without
    it, from the VCALENDAR's METHOD line."""
    from email.message import EmailMessage
    from email.utils import make_msgid

    from test_deadlines import deliver

    h = Clocked(tmp_path, settings={"deadline": 72 * 3600})
    h.run(T0)
    welcome = to(h.sent(), ANN)[0]
    before = h.load().to_data()
    reply = event(calendars(welcome)[0][1])
    cal = icalendar.Calendar()
    cal.add("prodid", "-//Google Inc//Google Calendar 70.9054//EN")
    cal.add("version", "2.0")
    cal.add("method", "REPLY")
    ev = icalendar.Event()
    for key in ("UID", "SEQUENCE", "DTSTART", "DTSTAMP", "ORGANIZER"):
        ev[key] = reply[key]
    ev.add("attendee", "mailto:" + ANN, parameters={"PARTSTAT": "ACCEPTED"})
    cal.add_component(ev)
    msg = EmailMessage(policy=policy.default)
    msg["From"], msg["To"] = ANN, h.config.moderator_address
    msg["Subject"] = f"Accepted: Union Pacific {h.gid}: your move @ Fri Dec 4, 2026 12pm (UTC)"
    msg["Message-ID"] = make_msgid(domain="example.org")
    msg.set_content("Ann has accepted this invitation.\n")
    msg.add_attachment(cal.to_ical().decode(), subtype="calendar", filename="invite.ics",
                       params={"method": "REPLY"} if with_param else {})
    deliver(h.inbox, msg.as_bytes(), T0 + H)
    h.run(T0 + 2 * H)
    assert h.sent() == []
    after = h.load().to_data()
    assert after == before



def test_the_game_masters_commands_move_and_cancel_the_event(tmp_path):
    """``extend``, ``deadline none``, ``deadline 48h``, ``pause``, ``resume``
    (``pbem gm``): each notice to a player carries their event as the command
    left it.  Derived by hand: the wait started at T0 with 72 hours; ``extend
    Ann 24h`` moves Ann's alone (T0+96h, SEQUENCE 1), Bob's notice carries his
    unchanged (T0+72h, SEQUENCE 0); ``deadline none`` cancels both (SEQUENCE
    one higher); ``deadline 48h`` at T0+3h asks again with the same UIDs above
    every SEQUENCE sent (Bob: 2, Ann: 3), both at T0+3h+48h (the new deadline
    counts from the command); ``pause`` cancels again; ``resume`` asks again
    at the deadline in force."""
    h = Clocked(tmp_path, settings={"deadline": 72 * 3600})
    gid = h.gid
    h.run(T0)
    h.sent()
    h.now = T0 + H
    h.mod.manage(gid, "extend Ann 24h")
    mails = h.sent()
    assert only(to(mails, ANN)[0]) == ("REQUEST", uid(gid, "Ann", 1), 1, T0 + 96 * H, "CONFIRMED")
    assert only(to(mails, BOB)[0]) == ("REQUEST", uid(gid, "Bob", 1), 0, T0 + 72 * H, "CONFIRMED")
    h.now = T0 + 2 * H
    h.mod.manage(gid, "deadline none")
    mails = h.sent()
    assert only(to(mails, ANN)[0]) == ("CANCEL", uid(gid, "Ann", 1), 2, T0 + 96 * H, "CANCELLED")
    assert only(to(mails, BOB)[0]) == ("CANCEL", uid(gid, "Bob", 1), 1, T0 + 72 * H, "CANCELLED")
    h.now = T0 + 3 * H
    h.mod.manage(gid, "deadline 48h")
    mails = h.sent()
    # the new deadline counts from the command (T0+3h): both at T0+51h, the extension gone
    assert only(to(mails, BOB)[0]) == ("REQUEST", uid(gid, "Bob", 1), 2, T0 + 51 * H, "CONFIRMED")
    assert only(to(mails, ANN)[0]) == ("REQUEST", uid(gid, "Ann", 1), 3, T0 + 51 * H, "CONFIRMED")
    h.now = T0 + 4 * H
    h.mod.manage(gid, "pause")
    mails = h.sent()
    assert only(to(mails, BOB)[0]) == ("CANCEL", uid(gid, "Bob", 1), 3, T0 + 51 * H, "CANCELLED")
    h.now = T0 + 5 * H
    h.mod.manage(gid, "resume")
    mails = h.sent()
    method, bob_uid, sequence, start, _ = only(to(mails, BOB)[0])
    assert (method, bob_uid, sequence) == ("REQUEST", uid(gid, "Bob", 1), 4)
    assert start == T0 + 52 * H  # the hour of the pause added to T0+51h


def test_the_built_in_players_move_cancels_and_the_next_move_is_asked(tmp_path):
    """Nobody invests by the deadline (T0+72h; cycles every 6 hours, the
    last at T0+78h): the built-in player moves for all three; each status mail cancels move 1's event, and the one to the
    player then on move asks for move 2 in the same mail (the request the
    alternative, the cancellation attached beside it), due 72 hours from the
    cycle that asks (the wait starts when the mail asking for it goes)."""
    h = Clocked(tmp_path, settings={"deadline": 72 * 3600})
    gid = h.gid
    h.run(T0)
    for hours in range(6, 72, 6):  # cycles every 6 hours: no outage moves the deadline
        h.run(T0 + hours * H)
    h.sent()  # the reminders
    at = T0 + 78 * H
    h.run(at)
    mails = h.sent()
    record = h.load()
    assert [e.get("by") for e in record.history] == ["bot"] * 3
    on_move = record.game.waiting_for()
    assert len(on_move) == 1
    for seat, address in (("Ann", ANN), ("Bob", BOB), ("Cy", CY)):
        (mail,) = to(mails, address)
        found = calendars(mail)
        if seat in on_move:
            assert mail.get_content_type() == "multipart/mixed"
            assert [m for m, _, _ in found] == ["REQUEST", "CANCEL"]
            request, cancel = (event(c) for _, c, _ in found)
            assert (str(request["UID"]), int(request["SEQUENCE"])) == (uid(gid, seat, 2), 0)
            assert request.decoded("DTSTART") == at + 72 * H
            assert found[1][2].get_filename() == "cancel.ics"
        else:
            assert [m for m, _, _ in found] == ["CANCEL"]
            cancel = event(found[0][1])
        assert (str(cancel["UID"]), int(cancel["SEQUENCE"]), str(cancel["STATUS"])) == \
            (uid(gid, seat, 1), 1, "CANCELLED")


def test_after_a_missed_deadline_with_policy_wait_no_event_runs(tmp_path):
    """``on_missed: wait``: once the deadline passed the game waits without an
    end; the reminder at once cancels the event (and no later mail asks)."""
    h = Clocked(tmp_path, players=[("Ann", ANN), ("Bob", BOB)],
                settings={"deadline": 72 * 3600, "on_missed": "wait"})
    h.run(T0)
    for hours in range(6, 72, 6):
        h.run(T0 + hours * H)
    h.sent()
    h.run(T0 + 78 * H)
    mails = h.sent()
    for seat, address in (("Ann", ANN), ("Bob", BOB)):
        sent = [only(m) for m in to(mails, address)]
        assert sent == [("CANCEL", uid(h.gid, seat, 1), 1, T0 + 72 * H, "CANCELLED")]
    h.mail("Ann", "status")
    h.run(T0 + 79 * H)
    assert calendars(to(h.sent(), ANN)[0]) == []


def test_an_undo_asks_for_the_move_again_above_its_cancellation(tmp_path):
    """Ann invests (her event of move 1 cancelled, SEQUENCE 1); the game
    master's ``undo 1`` takes it back: she is asked for move 1 again, the
    same UID with SEQUENCE 2 (above the cancellation, so a calendar takes
    it), a whole deadline after the undo."""
    h = Clocked(tmp_path, settings={"deadline": 72 * 3600})
    h.run(T0)
    h.sent()
    h.move("Ann")
    h.run(T0 + H)
    assert only(to(h.sent(), ANN)[0])[:3] == ("CANCEL", uid(h.gid, "Ann", 1), 1)
    h.now = T0 + 2 * H
    h.mod.manage(h.gid, "undo 1")
    mails = to(h.sent(), ANN)
    assert mails and all(calendars(m) for m in mails)
    method, ann_uid, sequence, start, status = only(mails[-1])
    assert (method, ann_uid, sequence, status) == ("REQUEST", uid(h.gid, "Ann", 1), 2, "CONFIRMED")
    assert start == T0 + 74 * H  # the undo at T0+2h gives the move a whole deadline
    assert h.load().calendar["Ann"]["high"] == 2


def test_a_resignation_cancels_the_event_in_its_answer(tmp_path):
    """``resign`` then ``resign confirm``: the seat goes to the built-in player
    and its player gets no more status mail, so the answer to the
    confirmation carries the cancellation of their event."""
    h = Clocked(tmp_path, settings={"deadline": 72 * 3600})
    h.run(T0)
    h.sent()
    h.mail("Cy", "resign")
    h.run(T0 + H)
    assert only(to(h.sent(), CY)[0])[:3] == ("REQUEST", uid(h.gid, "Cy", 1), 0)  # asked, not yet gone
    h.mail("Cy", "resign confirm")
    h.run(T0 + 2 * H)
    (answer,) = [m for m in to(h.sent(), CY) if "You resigned." in body(m)]
    assert only(answer) == ("CANCEL", uid(h.gid, "Cy", 1), 1, T0 + 72 * H, "CANCELLED")


def test_a_person_level_calendar_off_applies_in_every_game(tmp_path):
    """The person-level setting ``calendar off`` (set in the person's own
    thread, ``moderation/people.py``; here written to the bookkeeping as that
    thread does): the next mail to Bob cancels his event and later ones carry
    none, in this game without a game-level ``calendar off``; ``calendar on``
    at person level brings it back above every SEQUENCE sent."""
    h = Clocked(tmp_path, settings={"deadline": 72 * 3600})
    gid = h.gid
    h.run(T0)
    h.sent()
    due = T0 + 72 * H
    h.mod.bk.set_setting(BOB, "calendar", "off", T0 + H)
    assert not calendar_wanted(h.load(), "Bob", "off") and calendar_wanted(h.load(), "Bob", "on")
    h.mail("Bob", "status")
    h.run(T0 + 2 * H)
    (bob,) = to(h.sent(), BOB)
    assert only(bob) == ("CANCEL", uid(gid, "Bob", 1), 1, due, "CANCELLED")
    assert h.load().calendar_off == []  # the game's own setting is untouched
    h.mail("Bob", "status")
    h.run(T0 + 3 * H)
    assert calendars(to(h.sent(), BOB)[0]) == []
    h.mod.bk.set_setting(BOB, "calendar", "on", T0 + 4 * H)
    h.mail("Bob", "status")
    h.run(T0 + 5 * H)
    (bob,) = to(h.sent(), BOB)
    assert only(bob) == ("REQUEST", uid(gid, "Bob", 1), 2, due, "CONFIRMED")
