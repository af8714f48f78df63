"""The SMTP server's answers read by what they mean (moderator/mail/answers.py and
its data file smtp_answers.json), not by their first digit: a provider's sending
limit met in the middle of a batch holds the batch (no bounce) until the limit can
have reset, the daily limit is learned, the operator is told; only an answer about
the recipient marks an address as bouncing.  Real aiosmtpd servers on loopback
answer with the providers' own texts; the whole game runs its clock with the time
set per cycle (as ``pbem run --now`` does)."""
from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import make_msgid
import mailbox

import icalendar
import pytest

from moderator.config import Config, SmtpConfig
from moderator.mail import answers
from moderator.mail.transport.smtp import SmtpOutbox
from moderator.moderation.cycle import Moderator
from moderator.moderation.report import CycleReport
from moderator.moderation.send import DAILY_SENT, Post
from moderator.players.heuristic import choose
from moderator.store.bookkeeping import Bookkeeping
from moderator.store.gamefile import GameStore
from moderator.store.spool import Spool
from servers import SmtpSink, _SinkHandler

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
H = timedelta(hours=1)
ROWS = answers.rows()


# ------------------------------------------------------------------ the data file, a test per row
@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_each_row_reads_its_own_example(row):
    host = sorted(row.hosts)[0] if row.hosts else None
    got = answers.classify(None, row.example, host)
    assert (got.row, got.kind) == (row.id, row.kind)
    assert got.window == row.window and got.source == row.source and row.source
    if row.kind == answers.LIMIT:
        assert row.window >= 3600


# What each answer means, decided by hand from the providers' pages and RFC 3463
# (independently of the rows' order): (reply, configured smtp.host, kind, window).
BY_HAND = [
    ("550-5.4.5 Daily user sending quota exceeded. l12sm1234567wrb.54 - gsmtp", None, "limit", 86400),
    ("550 5.4.5 Daily user sending limit exceeded. For more information on Gmail sending limits go to "
     "https://support.google.com/a/answer/166852 - gsmtp", "smtp.gmail.com", "limit", 86400),
    ("554 5.2.0 STOREDRV.Submission.Exception:OutboundSpamException; Failed to process message due to a "
     "permanent exception with message WASCL UserAction verdict is not None. Actual verdict is RefuseQuota, "
     "ShowTierUpgrade.", "smtp-mail.outlook.com", "limit", 86400),
    ("550 5.7.705 Access denied, tenant has exceeded threshold.", "smtp.office365.com", "limit", 86400),
    ("550 5.7.708 Access denied, traffic not accepted from this IP.", None, "limit", 86400),
    ("451 4.7.500 Server busy. Please try again later from [203.0.113.5]. (AS77712344)", None, "limit", 3600),
    ("421 4.7.0 [TSS04] Messages from 203.0.113.5 temporarily deferred due to unexpected volume or user "
     "complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes", None, "limit", 14400),
    ("554 5.7.9 Message not accepted for policy reasons.", "smtp.mail.yahoo.com", "limit", 86400),
    ("550 5.1.8 Access denied, bad outbound sender. AS(42041)", None, "limit", 86400),
    ("421 4.7.0 mail.gmx.net too many messages, please try again later", "mail.gmx.net", "limit", 3600),
    ("550 5.7.1 Sending limits exceeded", "smtp.fastmail.com", "limit", 3600),
    ("451 4.4.5 System congestion", None, "limit", 3600),
    ("550 5.7.1 Service unavailable", None, "limit", 3600),
    # about the recipient
    ("550 5.1.1 The email account that you tried to reach does not exist.", None, "recipient", 0),
    ("550 5.2.1 The email account that you tried to reach is disabled.", None, "recipient", 0),
    ("550 5.4.1 Recipient address rejected: Access denied. AS(201806281)", None, "recipient", 0),
    ("553 5.1.3 Bad recipient address syntax", None, "recipient", 0),
    ("550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup", None,
     "recipient", 0),
    ("550 No such user here", None, "recipient", 0),
    ("551 User not local; please try <other@example.org>", None, "recipient", 0),
    # the server's configuration: kept and tried again, never a bounce
    ("550 5.7.1 Relaying denied", None, "server", 0),
    ("554 5.7.1 <x@example.org>: Relay access denied", None, "server", 0),
    ("553 5.7.1 <moderator@up.example>: Sender address rejected: not owned by user up", None, "server", 0),
    ("553 5.1.7 The sender address is not valid", None, "server", 0),
    # neither: tried again, or refused for the mail itself
    ("452 4.2.2 The email account that you tried to reach is over quota.", None, "temporary", 0),
    ("450 4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional "
     "messages from being delivered.", None, "temporary", 0),
    ("421 4.3.2 Service not available, try again later", None, "temporary", 0),
    ("451 Requested action aborted: local error in processing", None, "temporary", 0),
    ("552 5.3.4 Message size exceeds fixed maximum message size", None, "refused", 0),
    ("554 5.6.0 Message content rejected", None, "refused", 0),
    ("554 Transaction failed", None, "refused", 0),
]


@pytest.mark.parametrize("reply,host,kind,window", BY_HAND)
def test_answers_by_their_meaning(reply, host, kind, window):
    got = answers.classify(None, reply, host)
    assert (got.kind, got.window) == (kind, window), got


def test_an_ip_address_is_no_status_code_and_the_class_must_agree():
    assert answers.enhanced_status("421 4.7.0 [TSS04] deferred - 4.16.55.1; see x", 421) == "4.7.0"
    assert answers.enhanced_status("deferred - 4.16.55.1", 421) is None
    assert answers.enhanced_status("550 see 4.7.0 then 5.1.1", 550) == "5.1.1"
    # no code at all: nothing the server answered (a lost connection)
    assert answers.classify(None, "connection lost").kind == "temporary"


# ------------------------------------------------------------------ real servers, mid-batch
class ScriptedLimit(_SinkHandler):
    """The sink's handler answering DATA with ``reply`` once ``accept`` mails were
    taken, until ``lift()``; every DATA counted."""

    def __init__(self, sink, accept: int | None = None, reply: str = ""):
        super().__init__(sink)
        self.accept, self.reply, self.data = accept, reply, 0

    def lift(self):
        self.accept = None

    async def handle_DATA(self, server, session, envelope):
        self.data += 1
        if self.accept is not None and len(self.sink.messages) >= self.accept:
            return self.reply
        return await super().handle_DATA(server, session, envelope)


@pytest.fixture
def scripted():
    sink = SmtpSink()
    sink.handler = ScriptedLimit(sink)
    sink.controller.handler = sink.handler
    with sink:
        yield sink


def _config(tmp_path, port, daily_limit=None) -> Config:
    return Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "mail" / "inbox",
                  maildir_outbox=tmp_path / "mail" / "outbox", spool_dir=tmp_path / "spool",
                  operator="op@example.org",
                  smtp=SmtpConfig(host="127.0.0.1", port=port, security="none", timeout=5,
                                  daily_limit=daily_limit))


def _mail(to: str, n: int) -> EmailMessage:
    msg = EmailMessage(policy=policy.default)
    msg["From"] = "moderator@up.example"
    msg["To"] = to
    msg["Subject"] = f"Union Pacific g (P{n})"
    msg["Message-ID"] = make_msgid(domain="up.example")
    msg.set_content(f"mail {n}\n")
    return msg


PLAYERS = ["ann@example.org", "bob@example.org", "cy@example.net", "di@example.net"]
LIMIT_ROWS = [r for r in ROWS if r.kind == answers.LIMIT and r.hosts is None]


@pytest.mark.parametrize("row", LIMIT_ROWS, ids=[r.id for r in LIMIT_ROWS])
def test_a_providers_limit_in_the_middle_of_a_batch_holds_it_without_a_bounce(row, scripted, tmp_path):
    config = _config(tmp_path, scripted.port)
    spool = Spool(config.spool_dir)
    now = NOW
    with Bookkeeping.in_spool(spool.dir) as bk:
        post = Post(config, spool, bk, lambda: now)
        spool.add_many([(_mail(a, i), {"kind": "status", "game": "g", "player": f"P{i}"})
                        for i, a in enumerate(PLAYERS)], now)
        ids = [str(e.message["Message-ID"]) for e in spool.entries()]
        scripted.handler.accept, scripted.handler.reply = 2, row.example
        report = CycleReport()
        post.flush(report)
        # two taken, the third answered with the limit, the fourth not tried
        assert [m.rcpt_tos for m in scripted.messages] == [(PLAYERS[0],), (PLAYERS[1],)]
        assert scripted.handler.data == 3
        assert (report.sent, report.deferred, report.held, report.errors) == (2, 0, 2, [])
        assert bk.bounces() == {} and not (spool.dir / "failed").exists()
        until = now + timedelta(seconds=row.window)
        waiting = [e for e in spool.entries() if e.meta.get("kind") == "status"]
        assert [e.meta["player"] for e in waiting] == ["P2", "P3"]
        assert all(e.meta["next_try"] == until.isoformat() for e in waiting)
        limit = bk.smtp_limit()
        assert (limit["row"], limit["until"], limit["accepted"], limit["held"]) == \
            (row.id, until.isoformat(), 2, 2)
        assert bk.learned_daily_limit() == (2 if row.window >= 86400 else None)
        assert set(bk.mail_held()) == {"g"} and bk.mail_held()["g"]["players"] == ["P2", "P3"]
        [alert] = [e for e in spool.entries() if e.meta.get("kind") == "operator"]
        text = alert.message.get_body(preferencelist=("plain",)).get_content()
        said = " ".join(row.example.split())
        assert f"pbem: the SMTP server's sending limit was reached at {now.isoformat(timespec='seconds')}: " \
               f"{said}\n" in text
        assert f"no bounce was recorded, and 2 mail(s) wait in the spool. Sending resumes at " \
               f"{until.isoformat(timespec='seconds')};" in text

        # before the window has passed nothing is tried, even after the limit is lifted
        scripted.handler.lift()
        now = until - timedelta(seconds=1)
        report = CycleReport()
        post.flush(report)
        assert scripted.handler.data == 3 and (report.sent, report.held) == (0, 3)
        now = until
        report = CycleReport()
        post.flush(report)
        if row.window >= 86400:  # the learned limit: 2 a day, the third mail the next day
            assert (report.sent, report.held) == (2, 1)
            assert bk.smtp_limit() is None  # the server takes mail again
            now = until + timedelta(days=1)
            report = CycleReport()
            post.flush(report)
            assert (report.sent, report.held) == (1, 0)
        else:
            assert (report.sent, report.held) == (3, 0)
        assert spool.entries() == []
        got = [str(m.message["Message-ID"]) for m in scripted.messages]
        assert sorted(got[:4]) == sorted(ids) and len(set(got)) == 5  # each once, and the alert
        assert bk.smtp_limit() is None and bk.bounces() == {}


RECIPIENT_ROWS = [r for r in ROWS if r.kind == answers.RECIPIENT and r.hosts is None]


@pytest.mark.parametrize("row", RECIPIENT_ROWS, ids=[r.id for r in RECIPIENT_ROWS])
def test_only_an_answer_about_the_recipient_marks_the_address(row, scripted, tmp_path):
    config = _config(tmp_path, scripted.port)
    spool = Spool(config.spool_dir)
    scripted.reject_recipients["bob@example.org"] = row.example
    with Bookkeeping.in_spool(spool.dir) as bk:
        post = Post(config, spool, bk, lambda: NOW)
        spool.add_many([(_mail(a, i), {"kind": "status", "game": "g", "player": f"P{i}"})
                        for i, a in enumerate(PLAYERS)], NOW)
        report = CycleReport()
        post.flush(report)
        assert [m.rcpt_tos[0] for m in scripted.messages] == [a for a in PLAYERS if a != "bob@example.org"]
        assert list(bk.bounces()) == ["bob@example.org"]
        assert len(list((spool.dir / "failed").glob("*.eml"))) == 1
        assert bk.smtp_limit() is None and bk.mail_held() == {}


def test_a_refusal_of_the_mail_itself_is_kept_without_a_bounce(scripted, tmp_path):
    config = _config(tmp_path, scripted.port)
    spool = Spool(config.spool_dir)
    scripted.reject_recipients["bob@example.org"] = "554 5.6.0 Message content rejected"
    with Bookkeeping.in_spool(spool.dir) as bk:
        post = Post(config, spool, bk, lambda: NOW)
        spool.add_many([(_mail(a, i), {"kind": "status", "game": "g", "player": f"P{i}"})
                        for i, a in enumerate(PLAYERS[:2])], NOW)
        report = CycleReport()
        post.flush(report)
        assert report.sent == 1 and bk.bounces() == {}
        assert len(list((spool.dir / "failed").glob("*.eml"))) == 1
        [alert] = [e for e in spool.entries() if e.meta.get("kind") == "operator"]
        assert "refused for good by the mail server, for the mail itself rather than its address" in \
            alert.message.get_body(preferencelist=("plain",)).get_content()


def test_the_learned_limit_holds_the_next_days_mails_beyond_it(scripted, tmp_path):
    """Gmail took 2 mails, then answered its daily quota: from then on at most 2 a
    UTC day go out (the rest wait for the next day), under smtp.daily_limit 500
    (the next day: the held mail, the operator's alert and 2 new ones wait)."""
    config = _config(tmp_path, scripted.port, daily_limit=500)
    spool = Spool(config.spool_dir)
    now = NOW
    with Bookkeeping.in_spool(spool.dir) as bk:
        post = Post(config, spool, bk, lambda: now)
        spool.add_many([(_mail(a, i), {"kind": "status", "game": "g", "player": f"P{i}"})
                        for i, a in enumerate(PLAYERS[:3])], now)
        scripted.handler.accept = 2
        scripted.handler.reply = ROWS[0].example
        post.flush(CycleReport())
        assert bk.learned_daily_limit() == 2 and post.daily_limit() == (2, "learned from the SMTP server's answer")
        scripted.handler.lift()
        now = NOW + timedelta(days=1)  # the next day: 1 mail waits, 2 more come
        spool.add_many([(_mail(a, i), {"kind": "status", "game": "h", "player": f"Q{i}"})
                        for i, a in enumerate(PLAYERS[:2])], now)
        report = CycleReport()
        post.flush(report)
        assert (report.sent, report.held) == (2, 2) and bk.count_today(DAILY_SENT, now) == 2
        # a week after it was met the learned limit is forgotten (the provider may have raised it)
        assert bk.learned_daily_limit(NOW + timedelta(days=7)) == 2
        assert bk.learned_daily_limit(NOW + timedelta(days=7, seconds=1)) is None
        now = NOW + timedelta(days=8)
        assert post.daily_limit() == (500, "smtp.daily_limit")


# ------------------------------------------------------------------ a whole game
def _received(sink, start: int) -> list:
    return sink.messages[start:]


def test_a_whole_game_through_a_daily_limit_loses_nothing_and_no_seat_moves_for_it(scripted, tmp_path):
    """Three players who answer every mail that tells them it is their move (deadline
    12 hours, cycles every 2 hours).  Gmail's daily quota hits in the middle of a
    batch and is lifted 24 hours later: no player is marked bouncing, every mail
    arrives once, the deadlines do not run while the players' mails wait (the
    built-in player never moves), and the players are told the new deadline."""
    config = _config(tmp_path, scripted.port)
    names = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.net")]
    address = dict(names)
    now = [NOW]
    mod = Moderator(config, clock=lambda: now[0])
    mod.create_game("ridge", names, seed=3, settings={"deadline": 12 * 3600})
    store = GameStore(config.games_dir)
    config.maildir_inbox.parent.mkdir(parents=True, exist_ok=True)
    inbox = mailbox.Maildir(str(config.maildir_inbox), create=True)
    seen = {a: 0 for a in address.values()}  # the mails each player has read
    limit_hit = lifted = None
    delayed = []
    cycles = 0
    while store.load("ridge").game.phase != "over" and cycles < 3000:
        rec = store.load("ridge")
        for name in rec.game.waiting_for():
            mine = [m for m in scripted.messages if m.rcpt_tos == (address[name],)]
            if len(mine) > seen[address[name]]:  # a new mail: they answer it
                seen[address[name]] = len(mine)
                action = choose(rec.game, name, random.Random(len(rec.history)))
                msg = EmailMessage(policy=policy.default)
                msg["From"] = address[name]
                msg["To"] = config.moderator_address
                msg["Subject"] = f"Re: [pbem:ridge:{rec.player_by_name(name).secret}] Union Pacific ridge"
                msg["Message-ID"] = make_msgid(domain="example.org")
                msg.set_content(str(action).replace("; ", "\n") + "\n")
                inbox.add(msg.as_bytes())
        if limit_hit is None and len(rec.history) >= 12:
            # the quota: the next mail is the last the server takes today
            scripted.handler.accept = len(scripted.messages) + 1
            scripted.handler.reply = ("550-5.4.5 Daily user sending quota exceeded.\r\n"  # Gmail's two lines
                                      "550 5.4.5  https://support.google.com/mail/?p=DailyLimitExceeded "
                                      "d2e1a72fcca58-7b9f1c2b2d1sm1234567b3a.23 - gsmtp")
            limit_hit = now[0]
        if limit_hit is not None and lifted is None and now[0] >= limit_hit + 24 * H:
            scripted.handler.lift()
            lifted = now[0]
        now[0] += 2 * H
        report = mod.run_cycle()
        assert report.ok, report.errors
        cycles += 1
        with Bookkeeping.in_spool(config.spool_dir, readonly=True, legacy=None) as bk:
            assert bk.bounces() == {}
        delayed += [m for m in _received(scripted, 0)
                    if "That time does not count against you, so your deadline moved."  # its own mail or
                    in m.message.get_body(("plain",)).get_content()  # a line of the status mail
                    and m not in delayed]
    rec = store.load("ridge", check=True)
    assert rec.game.phase == "over"
    assert limit_hit is not None and lifted is not None
    assert [e for e in rec.history if e.get("by") == "bot"] == []  # the built-in player never moved
    assert all(p.missed == 0 for p in rec.players)
    ids = [str(m.message["Message-ID"]) for m in scripted.messages]
    assert len(ids) == len(set(ids))  # every mail once
    assert list(config.spool_dir.glob("*.eml")) == [] and not (config.spool_dir / "failed").exists()
    # the server refused in the middle of a batch, and the refused mails went out after the reset
    assert scripted.handler.data > len(scripted.messages)
    # the player(s) whose mail waited were told the new deadline, in force then
    assert delayed, "nobody was told of the moved deadline"
    text = delayed[0].message.get_body(("plain",)).get_content()
    assert "That time does not count against you, so your deadline moved. Your move is due by " in text
    with Bookkeeping.in_spool(config.spool_dir, readonly=True, legacy=None) as bk:
        assert bk.mail_held() == {} and bk.smtp_limit() is None


def test_doctor_shows_the_limit_when_sending_resumes_and_what_was_learned(scripted, tmp_path):
    from moderator.doctor import check_smtp_limit

    config = _config(tmp_path, scripted.port, daily_limit=500)
    spool = Spool(config.spool_dir)
    assert check_smtp_limit(config, NOW) is None  # no database yet
    with Bookkeeping.in_spool(spool.dir) as bk:
        post = Post(config, spool, bk, lambda: NOW)
        spool.add_many([(_mail(a, i), {"kind": "status", "game": "g", "player": f"P{i}"})
                        for i, a in enumerate(PLAYERS[:3])], NOW)
        scripted.handler.accept, scripted.handler.reply = 1, ROWS[0].example
        post.flush(CycleReport())
    check = check_smtp_limit(config, NOW + H)
    assert (check.status, check.subject, check.section) == \
        ("NOTE", "SMTP sending limit", "Outgoing mail")
    assert check.text == (
        "Gmail answered at 2026-12-01T12:00:00+00:00: 550 5.4.5 Daily user sending quota exceeded. "
        "https://support.google.com/mail/?p=DailyLimitExceeded (after 1 mail(s) that UTC day); sending "
        "resumes at 2026-12-02T12:00:00+00:00; 3 mail(s) wait in the spool; learned daily limit: 1 mails "
        "a day (what the server took before its daily limit; smtp.daily_limit: 500); deadlines held for "
        "the waiting mails of game(s) g")


def test_an_smtp_outage_stops_the_players_clock_until_their_mail_goes_out(tmp_path):
    """The SMTP server is down for 30 hours (deadline 12 hours, cycles every 2
    hours): Bob's deadline moves by the time his mails waited, the built-in player
    does not move for him, and once the mail goes out he is told the deadline in
    force, which then runs as usual."""
    import dataclasses

    first = SmtpSink()
    first.start()
    config = _config(tmp_path, first.port)
    now = [NOW]
    mod = Moderator(config, clock=lambda: now[0])
    mod.create_game("ridge", [("Ann", "ann@example.org"), ("Bob", "bob@example.org")], seed=3,
                    settings={"deadline": 12 * 3600})
    assert len(first.messages) == 2
    first.stop()  # the server goes down
    store = GameStore(config.games_dir)
    config.maildir_inbox.parent.mkdir(parents=True, exist_ok=True)
    inbox = mailbox.Maildir(str(config.maildir_inbox), create=True)
    rec = store.load("ridge")
    msg = EmailMessage(policy=policy.default)
    msg["From"] = "ann@example.org"
    msg["To"] = config.moderator_address
    msg["Subject"] = f"Re: [pbem:ridge:{rec.player_by_name('Ann').secret}] Union Pacific ridge"
    msg["Message-ID"] = make_msgid(domain="example.org")
    msg.set_content(str(choose(rec.game, "Ann", random.Random(0))).replace("; ", "\n") + "\n")
    inbox.add(msg.as_bytes())
    for hours in range(2, 32, 2):  # T0+2h .. T0+30h: every attempt fails
        now[0] = NOW + hours * H
        mod.run_cycle()
    rec = store.load("ridge")
    assert [e["player"] for e in rec.history] == ["Ann"] and rec.player_by_name("Bob").missed == 0
    # every clock event of Bob's wait (his reminder, 6 hours before the deadline of
    # T0+12h) moved it by the time his mail had waited so far, from the first failed
    # attempt at T0+2h: 4 hours at T0+6h, 10h, 14h, ..., 30h, so 28 hours in all
    assert rec.clock["shift"] == 28 * 3600
    with Bookkeeping.in_spool(config.spool_dir, readonly=True, legacy=None) as bk:
        assert bk.bounces() == {} and set(bk.mail_held()) == {"ridge"}
    with SmtpSink() as back:  # the server is back (at another port)
        mod.config.smtp = dataclasses.replace(config.smtp, port=back.port)
        mod.close()
        now[0] = NOW + 36 * H  # the mails' next try (6 hours, the longest backoff, after the last)
        assert mod.run_cycle().ok
        assert sorted(m.rcpt_tos[0] for m in back.messages if m.rcpt_tos[0] != "op@example.org") == \
            ["ann@example.org", "bob@example.org"]
        # Bob's held status mail was made anew as his deadline moved: as it finally goes, its
        # text and its calendar event say the deadline in force then, T0+12h+34h (issue 28)
        [held] = [m.message for m in back.messages if m.rcpt_tos == ("bob@example.org",)]
        assert "Your move is due by 2026-12-03 10:00 UTC." in " ".join(
            held.get_body(("plain",)).get_content().split())
        [part] = [p for p in held.walk() if p.get_content_type() == "text/calendar"]
        event = icalendar.Calendar.from_ical(part.get_content()).walk("VEVENT")[0]
        assert event.decoded("DTSTART") == NOW + 46 * H and part.get_param("method") == "REQUEST"
        sequence = int(event["SEQUENCE"])
        assert sequence >= 1
        now[0] = NOW + 36 * H + timedelta(minutes=5)
        assert mod.run_cycle().ok
        rec = store.load("ridge")
        # the whole wait, T0+2h to T0+36h (the reminder at T0+34h came first), no
        # longer counts: due at T0+12h+34h
        assert rec.clock["shift"] == 34 * 3600
        [told] = [m for m in back.messages if "mail delayed" in m.message.get_body(("plain",)).get_content()]
        assert told.rcpt_tos == ("bob@example.org",)
        text = " ".join(told.message.get_body(("plain",)).get_content().split())
        assert ("The moderator's mail to you was held up for 1 day, 10 hours: its mail server would not send "
                "more for a while (a sending limit) or could not be reached. That time does not count against "
                "you, so your deadline moved. Your move is due by 2026-12-03 10:00 UTC.") in text
        # the notice's event: the same deadline, so the same SEQUENCE
        [part] = [p for p in told.message.walk() if p.get_content_type() == "text/calendar"]
        event = icalendar.Calendar.from_ical(part.get_content()).walk("VEVENT")[0]
        assert (event.decoded("DTSTART"), int(event["SEQUENCE"])) == (NOW + 46 * H, sequence)
        now[0] = NOW + 46 * H - timedelta(seconds=1)
        mod.run_cycle()
        assert len(store.load("ridge").history) == 1
        now[0] = NOW + 46 * H  # the deadline in force, told: now the built-in player moves
        mod.run_cycle()
        rec = store.load("ridge")
        assert rec.history[-1]["player"] == "Bob" and rec.history[-1]["by"] == "bot"
    mod.close()


def test_a_generic_limit_for_one_mail_three_times_is_a_refusal_and_told_once(scripted, tmp_path):
    """``550 5.7.1`` that no provider documents as its limit, for the same (first)
    mail at every try: held an hour each time, the operator told once, and the third
    time the mail goes to failed/ (no bounce) so that the others go out."""
    config = _config(tmp_path, scripted.port)
    spool = Spool(config.spool_dir)
    now = NOW
    reply = "550 5.7.1 Message rejected by the sending policy of this server"
    with Bookkeeping.in_spool(spool.dir) as bk:
        post = Post(config, spool, bk, lambda: now)
        spool.add_many([(_mail(a, i), {"kind": "status", "game": "g", "player": f"P{i}"})
                        for i, a in enumerate(PLAYERS[:2])], now)
        scripted.reject_recipients[PLAYERS[0]] = reply
        for attempt in range(2):
            report = CycleReport()
            post.flush(report)
            assert (report.sent, report.held, bk.bounces()) == (0, 2 + attempt, {})
            assert bk.smtp_limit()["row"] == "rfc3463-security"
            now += H
        alerts = [e for e in spool.entries() if e.meta.get("kind") == "operator"]
        assert len(alerts) == 1  # the same limit again within a day: not told again
        report = CycleReport()
        post.flush(report)
        assert bk.bounces() == {} and len(list((spool.dir / "failed").glob("*.eml"))) == 1
        assert report.sent == 0 and report.held == 2  # P1 and the alert wait for the window
        now += H
        report = CycleReport()
        post.flush(report)
        assert [m.rcpt_tos[0] for m in scripted.messages] == [PLAYERS[1], "op@example.org", "op@example.org"]


@pytest.mark.parametrize("where", ["RCPT", "MAIL"])
def test_a_limit_answered_to_rcpt_or_mail_from_holds_the_batch_too(where, scripted, tmp_path, monkeypatch):
    """Gmail's quota answered to RCPT TO for the second mail; Yahoo's deferral
    answered to MAIL FROM (as Yahoo does) for every mail: no bounce, held."""
    config = _config(tmp_path, scripted.port)
    spool = Spool(config.spool_dir)
    if where == "RCPT":
        scripted.reject_recipients[PLAYERS[1]] = ROWS[0].example
        row, sent = "gmail-daily-quota", 1
    else:
        yahoo = next(r for r in ROWS if r.id == "yahoo-deferred")

        async def handle_MAIL(server, session, envelope, address, mail_options):
            return yahoo.example

        monkeypatch.setattr(scripted.handler, "handle_MAIL", handle_MAIL, raising=False)
        row, sent = "yahoo-deferred", 0
    with Bookkeeping.in_spool(spool.dir) as bk:
        post = Post(config, spool, bk, lambda: NOW)
        spool.add_many([(_mail(a, i), {"kind": "status", "game": "g", "player": f"P{i}"})
                        for i, a in enumerate(PLAYERS)], NOW)
        report = CycleReport()
        post.flush(report)
        assert (report.sent, report.held, report.errors) == (sent, 4 - sent, [])
        assert bk.bounces() == {} and bk.smtp_limit()["row"] == row
        assert not (spool.dir / "failed").exists()


def test_pbem_doctor_prints_the_limit(scripted, tmp_path):
    """``pbem doctor`` (the command line) names the limit and its section of
    docs/operations.md, which explains it under "The SMTP server's sending limit"."""
    from test_doctor_providers import OPERATIONS, doctor, line, write_config

    from moderator.config import load_config

    cfg = write_config(tmp_path, smtp={"host": scripted.host, "port": scripted.port, "security": "none"})
    now = datetime.now(timezone.utc)
    mod = Moderator(load_config(cfg), clock=lambda: now)
    scripted.handler.accept, scripted.handler.reply = 1, ROWS[0].example
    mod.create_game("g", [("Ann", "ann@example.org"), ("Bob", "bob@example.org")], seed=1)
    mod.close()
    _, lines = doctor(cfg)
    until = (now + timedelta(days=1)).isoformat()
    assert line(lines, "NOTE  SMTP sending limit") == (
        f"NOTE  SMTP sending limit: Gmail answered at {now.isoformat()}: {ROWS[0].example} (after 1 mail(s) "
        f"that UTC day); sending resumes at {until}; 1 mail(s) wait in the spool; learned daily limit: 1 "
        "mails a day (what the server took before its daily limit; smtp.daily_limit: none); deadlines held "
        "for the waiting mails of game(s) g")
    assert "\n### The SMTP server's sending limit\n" in OPERATIONS
