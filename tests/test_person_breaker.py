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
import pytest

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


def test_a_zone_set_in_the_same_cycle_reaches_the_vacation_notice(tmp_path):
    """Find (the brief's gap c): Ann's ``vacation 2d`` and Bob's ``timezone
    Europe/Berlin`` read in one cycle, Ann's first: the notice to Bob, spooled
    before his zone was known, said 2026-12-03 13:00 UTC only.  Now a zone set
    in a game's thread words the cycle's unsent mails to the player again, as
    ``language`` does (``clock.respeak``), the deadline it moved included:
    Ann's end at T0+1h+2d in CET, her deadline T0+72h+2d in UTC and CET."""
    t = Games(tmp_path)
    t.run(T0)
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "vacation 2d")
    t.now = T0 + H
    t.reply(t.last[(BOB, "ridge")], f"Bob <{BOB}>", "timezone Europe/Berlin")
    mails = to(t.run(T0 + H), BOB)
    (notice,) = [m for m in mails if "Ann on vacation" in body(m)]
    assert body(notice) == (
        "Union Pacific, game ridge: Ann on vacation\n\nAnn is on vacation until 2026-12-03 14:00 CET: their clock "
        "stands still meanwhile. Ann's move is now due by 2026-12-06 12:00 UTC (2026-12-06 13:00 CET, "
        "Europe/Berlin).\n")


def test_a_person_level_zone_reaches_the_cycles_mails_and_the_vacations_end_is_in_the_seats_zone(tmp_path):
    """Find: the person-level ``timezone`` and ``language`` set the seats of
    every game but left the cycle's unsent mails as they were (a game's own
    ``language`` words them again); now both do.  And a person who set their
    zone in one game's thread only (ridge: America/New_York) read the end of
    a person-level vacation in UTC: now in that zone (the seats name no other)."""
    t = Games(tmp_path)
    t.run(T0)
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "timezone America/New_York\nme")
    mails = t.run(T0 + H)
    (me,) = [m for m in mails if ".pbem-me@" in str(m["Message-ID"])]
    t.reply(me, f"Ann <{ANN}>", "vacation 2d")
    (answer,) = to(t.run(T0 + 2 * H), ANN)
    assert body(answer).startswith("Your vacation has begun in your running games: your clock stands still "
                                   "until 2026-12-03 09:00 EST (2 days).")
    # Cy's vacation in lake, then Bob's person-level language in the same cycle: his notice in German
    t.reply(t.last[(CY, "lake")], f"Cy <{CY}>", "vacation 1d")
    t.reply(t.last[(BOB, "ridge")], f"Bob <{BOB}>", "me")
    t.run(T0 + 3 * H)
    t.now = T0 + 4 * H
    t.reply(t.last[(CY, "lake")], f"Cy <{CY}>", "vacation off")
    t.reply(t.last[(BOB, "me")], f"Bob <{BOB}>", "sprache de")
    mails = to(t.run(T0 + 4 * H), BOB)
    (notice,) = [m for m in mails if "lake" in str(m["Subject"])]
    assert body(notice).startswith("Union Pacific, Partie lake: Cy ist aus dem Urlaub zurück\n"), body(notice)


def test_two_vacations_in_one_mail_and_a_bad_length_in_the_person_thread(tmp_path):
    """Finds: the second ``vacation 3d`` of a mail was refused as more than
    the bank holds (2 days left after 5), where every game was on vacation
    already; a bad length was answered with "Vacation left in this game" in
    the person's thread, which is no game's.  Now: "On vacation there already"
    with the games, and the bank's figure."""
    t = Games(tmp_path)
    t.run(T0)
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "me")
    (me,) = t.run(T0 + H)
    t.reply(me, f"Ann <{ANN}>", "vacation 5d\nvacation 3d\nvacation 0d")
    (answer,) = to(t.run(T0 + 2 * H), ANN)
    parts = body(answer).split("\n\n")
    assert parts[1] == "On vacation there already, unchanged: lake, pass, ridge."
    assert parts[2] == ("'0d' is not a length of vacation: write days, hours or minutes, e.g. 'vacation 5d', or "
                        "'vacation off'. Left in your vacation bank: 2 days. Nothing was changed.\n")
    assert [e["seconds"] for e in t.mod.bk.vacation_ledger(ANN)] == [5 * 86400]


VACATION_OFF_HERE = {
    "en": "Your vacation is over in ridge: your clock runs again here. Your vacation for all your games goes on "
          "in lake, pass; to end it there too, write 'vacation off' in reply to your 'me' answer.",
    "es": "Tus vacaciones han terminado en ridge: tu reloj vuelve a correr aquí. Tus vacaciones para todas tus "
          "partidas siguen en lake, pass; para terminarlas también allí, escribe 'vacation off' en respuesta a tu "
          "respuesta de 'me'.",
    "de": "Dein Urlaub in ridge ist vorbei: deine Uhr läuft hier wieder. Dein Urlaub für all deine Partien geht "
          "weiter in lake, pass; um ihn auch dort zu beenden, schreib 'vacation off' als Antwort auf deine "
          "'me'-Antwort.",
    "cs": "Vaše dovolená v ridge skončila: vaše lhůty zde opět běží. Vaše dovolená pro všechny vaše hry pokračuje "
          "v lake, pass; chcete-li ji ukončit i tam, napište 'vacation off' v odpovědi na svou odpověď na 'me'.",
    "zh": "你在 ridge 的休假结束了：这里的计时恢复。 你为所有对局设的休假在 lake, pass 中继续；如也要在那里结束，"
          "请回复你的 'me' 答复邮件，写 'vacation off'。",
}



@pytest.mark.parametrize("language", sorted(VACATION_OFF_HERE))
def test_vacation_off_in_a_games_thread_ends_a_person_level_vacation_there_only(tmp_path, language):
    """Find (the brief's gap d): ``vacation off`` in ridge's thread, the
    vacation being a person-level one, answered "Vacation left in this game:
    14 days" (the game's own limit, which paid nothing) and did not say that
    the vacation went on in lake and pass.  Now, in each of the five
    languages (ridge's seat in it): over here, going on there, and how to end
    it there; the deadline news follows (not compared: the words of the
    clock, tested elsewhere)."""
    t = Games(tmp_path)
    t.run(T0)
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", f"language {language}\nme")
    mails = t.run(T0 + H)
    (me,) = [m for m in mails if ".pbem-me@" in str(m["Message-ID"])]
    t.reply(me, f"Ann <{ANN}>", "vacation 2d")
    t.run(T0 + 2 * H)
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "vacation off")
    (answer,) = to(t.run(T0 + 3 * H), ANN)
    assert body(answer).startswith(VACATION_OFF_HERE[language]), body(answer)
    assert t.seat("ridge", ANN)["vacation_until"] == "2026-12-01T15:00:00+00:00"
    assert t.seat("lake", ANN)["vacation_until"] == t.seat("pass", ANN)["vacation_until"] == \
        "2026-12-03T14:00:00+00:00"


def test_a_person_level_calendar_off_cancels_every_games_event_at_once(tmp_path):
    """Find: ``calendar off`` in the person thread said "for all your games"
    and cancelled nothing: each game's event stayed in the calendar until that
    game's next mail.  Now the answer carries the three cancellations (SEQUENCE
    1), and ``calendar on`` the three requests again above them (SEQUENCE 2);
    a game's status mail in between carries nothing."""
    t = Games(tmp_path)
    t.run(T0)
    t.reply(t.last[(ANN, "lake")], f"Ann <{ANN}>", "me")
    (me,) = t.run(T0 + H)
    t.reply(me, f"Ann <{ANN}>", "calendar off")
    (answer,) = to(t.run(T0 + 2 * H), ANN)
    assert body(answer) == "Your calendar setting is now 'off', for all your games.\n"
    seats = (("lake", "Ann"), ("pass", "Annie"), ("ridge", "Ann"))
    assert events(answer) == [("CANCEL", uid(g, s), 1, DUE, f"mailto:{ANN}") for g, s in seats]
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "status")
    (status,) = to(t.run(T0 + 3 * H), ANN)
    assert events(status) == []
    t.reply(answer, f"Ann <{ANN}>", "calendar on")
    (answer,) = to(t.run(T0 + 4 * H), ANN)
    assert events(answer) == [("REQUEST", uid(g, s), 2, DUE, f"mailto:{ANN}") for g, s in seats]


def test_me_in_the_thread_of_a_game_that_ended_is_answered(tmp_path):
    """Find: ``me`` in the thread of a game the game master ended was declined
    ("it takes no more orders"), though ``me`` is the person's, not the game's.
    Now answered as in a running game (ridge finished, the others due); a
    person-level vacation then leaves the ended game alone."""
    t = Games(tmp_path)
    t.run(T0)
    t.now = T0 + H
    t.mod.manage("ridge", "end")
    t.sent()
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "Me")
    (me,) = t.run(T0 + 2 * H)
    assert ".pbem-me@" in str(me["Message-ID"])
    assert "- lake (as Ann): your move, due by 2026-12-04 12:00 UTC.\n" \
           "- pass (as Annie): your move, due by 2026-12-04 12:00 UTC.\n- ridge (as Ann): finished.\n" in body(me)
    t.reply(me, f"Ann <{ANN}>", "vacation 1d")
    (answer,) = to(t.run(T0 + 3 * H), ANN)
    assert "It now applies in: lake, pass.\n" in body(answer)
    assert t.seat("ridge", ANN)["vacation_until"] is None


def test_vacation_then_calendar_off_in_one_mail_carries_each_event_once(tmp_path):
    """Finds: a mail of ``vacation 1d`` then ``calendar off`` carried each
    game's request (SEQUENCE 1) and its cancellation (SEQUENCE 2): six objects
    for three events; now the last of each UID only, the three cancellations.
    And a command word alone (``timezone``) was answered "Did you mean
    'timezone'?": now the list of commands only."""
    t = Games(tmp_path)
    t.run(T0)
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "me")
    (me,) = t.run(T0 + H)
    t.reply(me, f"Ann <{ANN}>", "vacation 1d\ncalendar off\ntimezone")
    (answer,) = to(t.run(T0 + 2 * H), ANN)
    assert events(answer) == [("CANCEL", uid(g, s), 2, DUE + DAY, f"mailto:{ANN}")
                              for g, s in (("lake", "Ann"), ("pass", "Annie"), ("ridge", "Ann"))]
    assert body(answer).endswith(
        "\n\n'timezone' is no command of your person thread; nothing was changed for it. Write one of: me, "
        "timezone ZONE, language CODE, digest daily|off, calendar on|off, substitute on|off, vacation 5d|off.\n")


def test_me_from_a_resigned_seat_is_answered_and_a_stranger_gets_nothing(tmp_path):
    """``me`` from the thread of a seat its player resigned is answered (the
    game goes on without them: "resigned" there is no refusal of ``me``); a
    stranger's ``me`` (a new mail) gets no answer at all, and no ``me``
    answer goes to anyone."""
    t = Games(tmp_path)
    t.run(T0)
    t.reply(t.last[(CY, "lake")], f"Cy <{CY}>", "resign")
    t.run(T0 + H)
    t.reply(t.last[(CY, "lake")], f"Cy <{CY}>", "resign confirm")
    t.run(T0 + 2 * H)
    t.reply(t.last[(CY, "lake")], f"Cy <{CY}>", "me")
    (me,) = t.run(T0 + 3 * H)
    assert ".pbem-me@" in str(me["Message-ID"]) and "- pass (as Cy): your move, due by" in body(me)
    stranger = EmailMessage(policy=policy.default)
    stranger["From"] = "Eve <eve@elsewhere.example>"
    stranger["To"] = t.config.moderator_address
    stranger["Subject"] = "me"
    stranger["Message-ID"] = make_msgid(domain="elsewhere.example")
    stranger.set_content("me\n")
    deliver(t.inbox, stranger.as_bytes(), T0 + 4 * H)
    mails = t.run(T0 + 4 * H)
    assert [m for m in mails if "eve@" in str(m["To"])] == []
    assert all(".pbem-me@" not in str(m["Message-ID"]) for m in mails)


def _checked(mails, seen, bad):
    """Record every calendar object of ``mails`` per (attendee, UID) in
    ``seen``; add to ``bad`` each that breaks RFC 5546 section 2.1.4 against
    the one before it for the same event: a lower SEQUENCE, or the same
    SEQUENCE with another method or DTSTART."""
    for m in mails:
        for method, event_id, sequence, start, attendee in events(m):
            key = (attendee, event_id)
            before = seen.get(key)
            if before is not None and (sequence < before[1]
                                       or sequence == before[1] and (method, start) != (before[0], before[2])):
                bad.append((key, before, (method, sequence, start)))
            seen[key] = (method, sequence, start)


SEATS = {"ridge": ("Ann", "Bob"), "lake": ("Bob", "Ann", "Cy"), "pass": ("Annie", "Cy")}


@pytest.mark.parametrize("seed", [2, 7, 35])
def test_every_players_calendar_ends_as_the_games_deadlines_are(tmp_path, seed):
    """Find (by this scenario): a status mail that replaced the built-in
    player's move notice of the same cycle lost the cancellation that notice
    carried when it also asked for the seat's next move (the game file
    remembered the last event only): Bob's calendar kept his first move's
    deadline, cancelled nowhere, for the rest of the game (seeds 2 and 7).
    Now the entry keeps the last cancellation (``cancelled``) and a mail made
    again in place of others carries it again; also after a ``calendar off``
    in the same cycle closed the next move's event (seed 35: Ann's first
    deadline stayed).

    Sixty seeded steps over the three games: orders, illegal orders,
    vacations, ``calendar off|on`` (in a game's thread and the person's),
    ``status``, the game master's ``extend``, ``pause``/``resume`` and
    ``replace``, the clock between.  Every calendar part parsed; for each
    (attendee, UID) no SEQUENCE goes down and none repeats with other content;
    at the end each player's calendar (the last object of each UID to their
    address) holds exactly the event in force (``calendar.event_in_force``:
    the UID of the move and its deadline), or nothing."""
    import random

    from moderator.moderation.calendar import event_in_force
    from moderator.moderation.gm import GmRefusal
    from moderator.players.heuristic import choose

    rng = random.Random(seed)
    t = Games(tmp_path)
    seen, bad = {}, []
    _checked(t.run(T0), seen, bad)
    now = T0
    for step in range(60):
        now += timedelta(hours=rng.choice([1, 2, 5, 11]))
        t.now = now
        game = rng.choice(sorted(SEATS))
        record = t.store.load(game)
        seat = rng.choice(SEATS[game])
        player = record.player_by_name(seat)
        op = rng.choice(["move", "move", "move", "bad", "vacation 1d", "vacation off", "calendar off",
                         "calendar on", "extend", "status", "me vacation 1d", "me calendar off", "me calendar on",
                         "replace", "pause"])
        if record.game.phase == "over" or player.bot or seat in record.resigned:
            continue
        if op in ("extend", "pause", "replace"):
            try:  # a command the game master may not give now (not on move, paused) is refused
                if op == "extend":
                    t.mod.manage(game, f"extend {seat} 24h")
                elif op == "pause":
                    t.mod.manage(game, "pause")
                    _checked(t.sent(), seen, bad)
                    t.now = now + H
                    t.mod.manage(game, "resume")
                elif step > 30:
                    t.mod.manage(game, f"replace {seat} N{step}=n{step}@example.org")
            except GmRefusal:
                pass
        elif (player.address, game) in t.last:
            last = t.last[(player.address, game)]
            if op.startswith("me "):
                if (player.address, "me") not in t.last:
                    t.reply(last, player.address, "me")
                else:
                    t.reply(t.last[(player.address, "me")], player.address, op[3:])
            elif op == "move" and seat in record.game.waiting_for():
                action = choose(record.game, seat, random.Random(step))
                t.reply(last, player.address, str(action).replace("; ", "\n"))
            else:
                t.reply(last, player.address, "build ZZZ" if op == "bad" else "status" if op == "move" else op)
            _checked(t.run(now), seen, bad)
            continue
        _checked(t.sent(), seen, bad)
    assert bad == []
    for game in SEATS:
        record = t.store.load(game)
        for p in record.players:
            if not p.address:
                continue
            due = event_in_force(record, p, t.mod.bk.setting(p.address, "calendar"))
            wanted = [] if due is None else [(uid(game, p.name, due[0]), due[1])]
            mine = uid(game, p.name, 1).partition(".")[2]  # the seat's key and the game: any move of it
            shown = [(event_id, start) for (attendee, event_id), (method, _, start) in seen.items()
                     if attendee == f"mailto:{p.address}" and event_id.partition(".")[2] == mine
                     and method == "REQUEST"]
            assert shown == wanted, (game, p.name)
