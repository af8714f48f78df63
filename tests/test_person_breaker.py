"""A breaker's check of issue 28 as built (one person across games): the
finds of a new user's session, each as a test.  Two and three games sharing
Ann and Bob on local Maildirs through the real ``Moderator``; every mail a
real RFC 5322 reply (In-Reply-To and References of the moderator's mail, the
quoted text below, as Thunderbird and Gmail write it); every calendar part
parsed with ``icalendar``; the times derived by hand from the creation time
T0 (2026-12-01 12:00 UTC) and the 72-hour deadline."""
from __future__ import annotations

import mailbox
from datetime import timedelta
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

import icalendar

from moderator.config import Config
from moderator.moderation.calendar import event_uid
from moderator.moderation.cycle import Moderator
from moderator.store.gamefile import GameStore
from outbox import unseen_mails
from test_deadlines import H, T0, body, deliver, to

ANN, BOB, CY, DORA = "ann@example.org", "bob@example.org", "cy@example.net", "dora@example.org"
DAY = timedelta(days=1)
DUE = T0 + 72 * H  # every first deadline: 2026-12-04 12:00 UTC


class Games:
    """ridge (Ann, Bob), lake (Bob, Ann, Cy) and pass (Annie = Ann's address,
    Cy), one moderator on Maildirs whose clock the test sets."""

    def __init__(self, tmp_path):
        (tmp_path / "mail").mkdir()
        self.config = Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "mail" / "inbox",
                             maildir_outbox=tmp_path / "mail" / "outbox", spool_dir=tmp_path / "spool",
                             operator="gm@example.org")
        self.now = T0
        self.mod = Moderator(self.config, clock=lambda: self.now)
        self.inbox = mailbox.Maildir(str(self.config.maildir_inbox), create=True)
        self.outbox = mailbox.Maildir(str(self.config.maildir_outbox), create=True)
        self.store = GameStore(self.config.games_dir)
        self.seen: set[str] = set()
        self.last: dict[tuple[str, str], EmailMessage] = {}
        settings = {"deadline": 72 * 3600, "on_missed": "bot", "abandon_after": 9, "grace": 0}
        self.mod.create_game("ridge", [("Ann", ANN), ("Bob", BOB)], seed=1, settings=settings)
        self.mod.create_game("lake", [("Bob", BOB), ("Ann", ANN), ("Cy", CY)], seed=2, settings=settings)
        self.mod.create_game("pass", [("Annie", ANN), ("Cy", CY)], seed=3, settings=settings)
        self.sent()

    def sent(self):
        mails = unseen_mails(self.outbox, self.seen)
        for m in mails:
            mid = str(m["Message-ID"])
            game = "me" if ".pbem-me@" in mid else mid.rpartition(".pbem.")[2].partition("@")[0]
            self.last[(str(m["To"]), game)] = m
        return mails

    def reply(self, original, sender, text):
        """``sender`` hits Reply to ``original`` and writes ``text`` on top."""
        msg = EmailMessage(policy=policy.default)
        msg["From"] = sender
        msg["To"] = self.config.moderator_address
        msg["Subject"] = "Re: " + str(original["Subject"])
        msg["Date"] = format_datetime(self.now)
        msg["Message-ID"] = make_msgid(domain="mail.example")
        msg["In-Reply-To"] = str(original["Message-ID"])
        msg["References"] = " ".join(str(original.get("References", "")).split() + [str(original["Message-ID"])])
        quoted = "\n".join("> " + line for line in body(original).splitlines())
        msg.set_content(f"{text}\n\nOn {original['Date']}, Union Pacific moderator wrote:\n{quoted}\n")
        deliver(self.inbox, msg.as_bytes(), self.now)

    def run(self, at):
        self.now = at
        report = self.mod.run_cycle()
        assert report.ok, report.errors
        return self.sent()

    def seat(self, game, address):
        return [p for p in self.store.read_data(game)["players"] if p["address"] == address][0]


def events(msg):
    """``(METHOD, UID, SEQUENCE, DTSTART, ATTENDEE)`` of every calendar part of
    ``msg``, in order, parsed with ``icalendar``."""
    out = []
    for part in msg.walk():
        if part.get_content_type() == "text/calendar":
            cal = icalendar.Calendar.from_ical(part.get_content())
            (ev,) = cal.walk("VEVENT")
            assert part.get_param("method") == str(cal["METHOD"])
            out.append((str(cal["METHOD"]), str(ev["UID"]), int(ev["SEQUENCE"]), ev.decoded("DTSTART"),
                        str(ev["ATTENDEE"])))
    return out


def uid(game, seat, move=1):
    return event_uid(type("R", (), {"id": game})(), seat, move, "pbem.localhost")


def test_a_replaced_seats_old_player_gets_the_cancellation_and_the_newcomer_goes_above(tmp_path):
    """Find: ``replace`` (the game master's, or the substitute pool's take-over,
    which is one) gave the seat away and nobody ever cancelled the old
    player's event: their calendar kept the deadline of a move no longer
    theirs.  Now the old player gets one notice at their old address, in their
    old thread, carrying ``CANCEL`` of their event (same UID, SEQUENCE 0 -> 1);
    the newcomer's welcome asks for the same move (same UID: seat and move are
    the same) at SEQUENCE 2, above the cancellation, so that a calendar that
    sees both (an address forwarded to the other) keeps the request.  The
    newcomer's deadline is a whole one from the replace (T0+1h+72h)."""
    t = Games(tmp_path)
    t.run(T0)
    t.now = T0 + H
    t.mod.manage("lake", f"replace Cy Dora={DORA}")
    mails = t.sent()
    (old,) = to(mails, CY)
    assert body(old).startswith("Union Pacific, game lake: Cy's seat has a new player\n\n"
                                "The game master gave Cy's seat to Dora; the seat keeps its name Cy in the game.\n")
    assert "secret" not in body(old).lower()
    assert events(old) == [("CANCEL", uid("lake", "Cy"), 1, DUE, f"mailto:{CY}")]
    assert str(old["Subject"]) == "Union Pacific lake (Cy)"
    (welcome,) = to(mails, DORA)
    assert events(welcome) == [("REQUEST", uid("lake", "Cy"), 2, T0 + 73 * H, f"mailto:{DORA}")]
    assert t.store.load("lake").calendar["Cy"] == {"move": 1, "due": "2026-12-04T13:00:00+00:00", "sequence": 2,
                                                   "open": True, "high": 2}
    # Cy's reply to the farewell is no longer Cy's: refused, nothing changed
    t.reply(old, f"Cy <{CY}>", "start UP")
    t.run(T0 + 2 * H)
    assert t.store.read_data("lake")["history"] == []


def test_an_ejected_players_event_is_cancelled(tmp_path):
    """Find: ``eject Bob`` gave the seat to the built-in player and, Bob getting
    no more mail, his calendar kept his deadline.  Now he gets the notice of
    the ejection with the cancellation (SEQUENCE 1); the others are told as
    before."""
    t = Games(tmp_path)
    t.run(T0)
    t.now = T0 + H
    t.mod.manage("lake", "eject Bob")
    (bob,) = to(t.sent(), BOB)
    assert "The game master gave Bob's seat to the built-in player." in body(bob)
    assert events(bob) == [("CANCEL", uid("lake", "Bob"), 1, DUE, f"mailto:{BOB}")]


def test_a_refusal_to_the_player_on_move_carries_their_event(tmp_path):
    """Find (the brief's gap b): the refusal of an illegal order restated the
    deadline in words but carried no event, while every other mail to a
    player on move carries it (docs: "While it stays, every mail to them
    carries it unchanged").  Now it carries the REQUEST unchanged (SEQUENCE
    0, the game file unchanged); after ``extend Ann 24h`` moved the deadline
    (its notice carries SEQUENCE 1), the next refusal carries that one."""
    t = Games(tmp_path)
    t.run(T0)
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "start ZZZ")
    (refusal,) = t.run(T0 + H)
    assert "Order not understood" in body(refusal) and "Your move is due by 2026-12-04 12:00 UTC." in body(refusal)
    assert events(refusal) == [("REQUEST", uid("ridge", "Ann"), 0, DUE, f"mailto:{ANN}")]
    before = t.store.read_data("ridge")
    t.reply(refusal, f"Ann <{ANN}>", "start ZZZ")
    (again,) = t.run(T0 + 2 * H)
    assert events(again) == [("REQUEST", uid("ridge", "Ann"), 0, DUE, f"mailto:{ANN}")]
    assert t.store.read_data("ridge")["calendar"] == before["calendar"]  # nothing to record
    # the game master moves her deadline (his notice carries it); her next refusal keeps it
    t.now = T0 + 3 * H
    t.mod.manage("ridge", "extend Ann 24h")
    (notice,) = to(t.sent(), ANN)
    assert events(notice) == [("REQUEST", uid("ridge", "Ann"), 1, DUE + DAY, f"mailto:{ANN}")]
    t.reply(notice, f"Ann <{ANN}>", "start ZZZ")
    (refusal,) = t.run(T0 + 4 * H)
    assert events(refusal) == [("REQUEST", uid("ridge", "Ann"), 1, DUE + DAY, f"mailto:{ANN}")]


def test_a_person_level_vacation_moves_the_event_in_every_game(tmp_path):
    """Find: a person-level ``vacation 5d`` moved Ann's deadline in her three
    games, said so in words, and carried no event: her calendar kept the three
    old deadlines (T0+72h) until some later mail of each game.  Now the answer
    carries the three requests, same UIDs, SEQUENCE 1, DTSTART T0+72h+5d (the
    first the mail's alternative, the others attached as invite.ics); no mail
    of the games repeats them (no change since), and ``vacation off`` two
    hours later carries the three again at T0+72h+2h (SEQUENCE 2)."""
    t = Games(tmp_path)
    t.run(T0)
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "me")
    (me,) = t.run(T0 + H)
    assert events(me) == []
    t.reply(me, f"Ann <{ANN}>", "vacation 5d")
    mails = t.run(T0 + 2 * H)
    (answer,) = to(mails, ANN)
    assert ".pbem-me@" in str(answer["Message-ID"])
    assert events(answer) == [("REQUEST", uid(g, s), 1, DUE + 5 * DAY, f"mailto:{ANN}")
                              for g, s in (("lake", "Ann"), ("pass", "Annie"), ("ridge", "Ann"))]
    assert [p.get_filename() for p in answer.walk() if p.get_content_type() == "text/calendar"] == \
        [None, "invite.ics", "invite.ics"]
    for game, seat in (("lake", "Ann"), ("pass", "Annie"), ("ridge", "Ann")):
        assert t.store.load(game).calendar[seat]["sequence"] == 1
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "status")
    (status,) = to(t.run(T0 + 3 * H), ANN)
    assert events(status) == [("REQUEST", uid("ridge", "Ann"), 1, DUE + 5 * DAY, f"mailto:{ANN}")]
    t.reply(answer, f"Ann <{ANN}>", "vacation off")
    (back,) = to(t.run(T0 + 4 * H), ANN)
    # the clock stood still from T0+2h to T0+4h: two hours later than before
    assert events(back) == [("REQUEST", uid(g, s), 2, DUE + 2 * H, f"mailto:{ANN}")
                            for g, s in (("lake", "Ann"), ("pass", "Annie"), ("ridge", "Ann"))]
