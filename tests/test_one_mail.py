"""One mail per player per cycle, in the language the cycle ends with (issue 26).

A timeline of days, each cycle its own ``pbem run --now`` process on local
Maildirs (as from cron), the mails delivered with their arrival times: when a
deadline passes and the built-in player moves, each player gets exactly ONE
mail of the moderator's own news in that cycle, their status mail, and it says
what the built-in player did and why (which seat, which move, which deadline
passed), in the reader's language; observers get one public mail; the game
master's notices stay theirs.  A player's ``language es`` in a cycle makes
every mail of that cycle to them Spanish, also the status mail spooled before
the command was read.  A reply to a player's own mail (the answer to a
command, a refusal) is its own mail, in the thread of the mail it answers.
"""
from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import mailbox
import pytest

from moderator.moderation.cycle import Moderator
from moderator.render.orders import localize
from test_clock_spool import GM, Root
from test_deadlines import deliver

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
H = timedelta(hours=1)
PLAYERS = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.net")]
OBSERVER = "obs@example.com"


def text(msg: EmailMessage) -> str:
    return msg.get_body(preferencelist=("plain",)).get_content()


def html(msg: EmailMessage) -> str:
    return msg.get_body(preferencelist=("html",)).get_content()


class Timeline(Root):
    """A moderator's directory with one game ``one`` (deadline 48 hours, the
    built-in player moves for a silent player), its players' mails delivered
    at the times the test gives."""

    def __init__(self, path: Path, languages: dict[str, str] | None = None, **settings):
        super().__init__(path)
        mod = Moderator(self.config, clock=lambda: T0)
        mod.create_game("one", PLAYERS, seed=21, settings={"deadline": 48 * 3600, **settings}, gm=GM,
                        observers=[OBSERVER], languages=languages or {})
        mod.close()
        self.welcomes = self.sent()

    def send(self, name: str, body: str, at: datetime) -> str:
        """``name`` mails ``body`` (their secret in the Subject), reaching the
        mailbox at ``at``; returns its Message-ID."""
        p = self.store().load("one").player_by_name(name)
        msg = EmailMessage(policy=policy.default)
        msg["From"], msg["To"] = p.address, self.config.moderator_address
        msg["Subject"] = f"Re: [pbem:one:{p.secret}] Union Pacific one"
        msg["Message-ID"] = make_msgid(domain="example.org")
        msg.set_content(body + "\n")
        deliver(mailbox.Maildir(str(self.config.maildir_inbox), create=True), msg.as_bytes(), at)
        return str(msg["Message-ID"])

    def cycle(self, at: datetime) -> list[EmailMessage]:
        p = self.run(at)
        assert p.returncode == 0, p.stderr
        assert not self.spooled(), "every mail of the cycle sent"
        return self.sent()


def readers(mails: list[EmailMessage]) -> Counter:
    return Counter(str(m["To"]) for m in mails)


def news(msg: EmailMessage) -> list[str]:
    """The bullet lines of a status mail's WHAT HAPPENED section (text part)."""
    lines = text(msg).splitlines()
    heads = ("WHAT HAPPENED", "QUÉ HA PASADO", "WAS PASSIERT IST", "CO SE STALO", "发生了什么")
    at = next(i for i, line in enumerate(lines) if line.strip() in heads)
    out = []
    for line in lines[at + 1:]:
        if not line.startswith("  - "):
            break
        out.append(line[4:])
    return out


@pytest.fixture(scope="module")
def timeline(tmp_path_factory):
    """Days 0-4 of a game: Ann and Bob choose their initial investments, Cy
    (German) never does; Bob writes ``language es`` after Cy's deadline passed,
    in the cycle that finds it passed (``catch_up``: the automatic move is made
    at the mail's arrival); then Ann, on move, stays silent until her deadline
    passes with no mail at all (the clock stage)."""
    t = Timeline(tmp_path_factory.mktemp("one") / "root", languages={"Cy": "de"})
    cycles = {}
    t.send("Ann", "start " + sorted(t.store().load("one").game.share_hands["Ann"])[0], T0 + H)
    t.send("Bob", "start " + sorted(t.store().load("one").game.share_hands["Bob"])[0], T0 + timedelta(minutes=90))
    cycles["orders"] = t.cycle(T0 + 2 * H)
    cycles["reminder"] = t.cycle(T0 + 25 * H)  # 24 hours before Cy's deadline
    t.bob_language = t.send("Bob", "language es", T0 + 48 * H + timedelta(minutes=30))
    cycles["missed"] = t.cycle(T0 + 49 * H)
    t.after_missed = t.store().load("one")
    cycles["ann reminded"] = t.cycle(T0 + 49 * H + 24 * H)
    cycles["ann missed"] = t.cycle(T0 + 49 * H + 48 * H)
    t.after_ann = t.store().load("one")
    return t, cycles


def test_two_orders_of_one_cycle_make_one_status_mail_each(timeline):
    t, cycles = timeline
    assert readers(cycles["orders"]) == Counter({"ann@example.org": 1, "bob@example.org": 1,
                                                  "cy@example.net": 1, OBSERVER: 1})
    # a reminder alone is a mail of its own: nothing else is owed in that cycle
    [reminder] = cycles["reminder"]
    assert str(reminder["To"]) == "cy@example.net"
    assert text(reminder).startswith("Union Pacific, Partie one: Erinnerung: dein Spielzug ist fällig\n")


def test_the_missed_deadline_is_one_mail_per_player_naming_the_move_and_why(timeline):
    t, cycles = timeline
    mails = cycles["missed"]
    [cy_move] = [h for h in t.after_missed.history if h.get("by") == "bot"]
    assert cy_move["player"] == "Cy" and cy_move["due"] == "2026-12-03T12:00:00+00:00"
    # one mail per reader; Bob's second mail answers his own mail (In-Reply-To it), and the
    # game master hears nothing of a policy-bot move
    assert readers(mails) == Counter({"ann@example.org": 1, "bob@example.org": 2, "cy@example.net": 1,
                                      OBSERVER: 1})
    bob = [m for m in mails if str(m["To"]) == "bob@example.org"]
    [answer] = [m for m in bob if str(m["In-Reply-To"]) == t.bob_language]
    [bob_status] = [m for m in bob if m is not answer]
    assert text(answer).startswith("A partir de ahora recibes todos los correos de la partida one en este "
                                   "idioma: Español.")
    order = cy_move["order"]  # the initial investments are revealed by this very move: public
    assert t.after_missed.game.phase == "play"
    [ann] = [m for m in mails if str(m["To"]) == "ann@example.org"]
    [cy] = [m for m in mails if str(m["To"]) == "cy@example.net"]
    assert news(ann)[0] == ("Cy's deadline of 2026-12-03 12:00 UTC passed without an order, so the built-in "
                            f"player moved for them: {order}. The game history marks the move as automatic.")
    assert news(bob_status)[0] == (
        "El plazo de Cy del jue, 3 dic 2026, 12:00 UTC pasó sin una orden suya, así que el jugador "
        f"automático jugó en su lugar: {localize(order, 'es')}. El historial de la partida marca la jugada como "
        "automática.")
    assert news(cy)[0] == (
        "Deine Frist bis Do., 3. Dez. 2026, 12:00 UTC ist ohne einen Zug von dir abgelaufen, deshalb hat der "
        f"Computerspieler für dich gezogen: {localize(order, 'de')}. Im Verlauf ist der Spielzug als "
        "automatisch markiert.")
    # the line is in the HTML part too, and the status mail is the player's thread
    assert f"{localize(order, 'es')}" in html(bob_status) and "El plazo de Cy" in html(bob_status)
    for m in (ann, bob_status, cy):
        assert str(m["Subject"]).startswith("Union Pacific one (")
        assert str(m["In-Reply-To"]) == str(m["References"]).split()[0]  # the thread's root
    # the whole of Bob's status mail is Spanish: its heading and the part about whose move it is
    assert text(bob_status).startswith("Union Pacific, partida one: le toca a Ann (turno 1)\n")


def test_the_clock_stage_alone_also_sends_one_mail_per_player(timeline):
    t, cycles = timeline
    [reminder] = cycles["ann reminded"]
    assert str(reminder["To"]) == "ann@example.org"
    mails = cycles["ann missed"]
    assert readers(mails) == Counter({"ann@example.org": 1, "bob@example.org": 1, "cy@example.net": 1,
                                      OBSERVER: 1})
    [ann_move] = [h for h in t.after_ann.history if h.get("by") == "bot" and h["player"] == "Ann"]
    assert ann_move["due"] == "2026-12-05T13:00:00+00:00"  # 48 hours after the cycle that asked for it
    order = ann_move["order"]
    got = {str(m["To"]): news(m)[0] for m in mails if str(m["To"]) != OBSERVER}
    assert got == {
        "ann@example.org": "Your deadline of 2026-12-05 13:00 UTC passed without an order from you, so the "
                           f"built-in player moved for you: {order}. The game history marks the move as "
                           "automatic.",
        "bob@example.org": "El plazo de Ann del sáb, 5 dic 2026, 13:00 UTC pasó sin una orden suya, así que el "
                           f"jugador automático jugó en su lugar: {localize(order, 'es')}. El historial de la "
                           "partida marca la jugada como automática.",
        "cy@example.net": "Die Frist von Ann bis Sa., 5. Dez. 2026, 13:00 UTC ist ohne einen Zug abgelaufen, "
                          f"deshalb hat der Computerspieler übernommen: {localize(order, 'de')}. Im "
                          "Verlauf ist der Spielzug als automatisch markiert.",
    }
    # the observer's one public mail tells the move as the log does (no private news)
    [obs] = [m for m in mails if str(m["To"]) == OBSERVER]
    assert "deadline" not in text(obs).split("THE BOARD")[0].lower()


def test_a_language_change_words_the_status_mail_already_spooled_in_its_cycle(tmp_path):
    """Ann's order and then Cy's are read first and spool Cy's status mail in
    English (answering Cy's order mail); then Cy's ``language es`` in the same
    cycle: the one status mail Cy gets is Spanish (worded anew from the spool,
    ``clock.respeak``) and still answers Cy's order mail, beside the answer to
    the command; nothing else changes for the others."""
    t = Timeline(tmp_path / "root")
    hands = t.store().load("one").game.share_hands
    t.send("Ann", "start " + sorted(hands["Ann"])[0], T0 + H)
    order = t.send("Cy", "start " + sorted(hands["Cy"])[0], T0 + timedelta(minutes=90))
    asked = t.send("Cy", "language es", T0 + 2 * H)
    mails = t.cycle(T0 + 3 * H)
    assert readers(mails) == Counter({"ann@example.org": 1, "bob@example.org": 1, "cy@example.net": 2,
                                      OBSERVER: 1})
    cy = [m for m in mails if str(m["To"]) == "cy@example.net"]
    [answer] = [m for m in cy if str(m["In-Reply-To"]) == asked]
    [status] = [m for m in cy if m is not answer]
    assert text(status).startswith("Union Pacific, partida one: ")
    assert news(status)[0] == "Ann ya ha elegido su inversión inicial."
    assert str(status["In-Reply-To"]) == order and str(status["Auto-Submitted"]) == "auto-replied"
    assert "QUÉ HA PASADO" in html(status)
    [ann] = [m for m in mails if str(m["To"]) == "ann@example.org"]
    assert text(ann).startswith("Union Pacific, game one: ")
    assert t.store().load("one").player_by_name("Cy").language == "es"


def test_a_reminder_and_a_status_mail_of_one_cycle_are_one_mail(tmp_path):
    """Cy's reminder comes due in the cycle that reads Ann's order: Cy gets one
    mail, the status mail, which begins with the reminder (the clock's notice
    spooled alone is taken in, ``replaces``); the spool keeps no second mail."""
    t = Timeline(tmp_path / "root")
    t.send("Ann", "start " + sorted(t.store().load("one").game.share_hands["Ann"])[0],
           T0 + 24 * H + timedelta(seconds=60))
    mails = t.cycle(T0 + 24 * H + timedelta(seconds=120))
    assert readers(mails) == Counter({"ann@example.org": 1, "bob@example.org": 1, "cy@example.net": 1,
                                      OBSERVER: 1})
    [cy] = [m for m in mails if str(m["To"]) == "cy@example.net"]
    first = news(cy)
    assert first[0].startswith("Reminder: the game is waiting for your initial investment. It is due by "
                               "2026-12-03 12:00 UTC;")
    assert first[1:] == ["Ann has chosen an initial investment."]


# ------------------------------------------------------------------ kills
def _reminder_cycle(path: Path) -> tuple[Timeline, datetime]:
    """Ann's order read, then in the clock stage of the same cycle the
    reminders of Bob and Cy: each taken into their spooled status mail."""
    t = Timeline(path)
    t.send("Ann", "start " + sorted(t.store().load("one").game.share_hands["Ann"])[0],
           T0 + 24 * H + timedelta(seconds=60))
    return t, T0 + 24 * H + timedelta(seconds=120)


def _language_cycle(path: Path) -> tuple[Timeline, datetime]:
    """Ann's order read (Cy's status mail spooled in English), then Cy's
    ``language es``, then, after Bob's deadline passed, Bob's late order
    (``catch_up``: the automatic moves told in the status mails)."""
    t = Timeline(path, on_missed="bot")
    t.send("Ann", "start " + sorted(t.store().load("one").game.share_hands["Ann"])[0], T0 + 47 * H)
    t.send("Cy", "language es", T0 + 47 * H + timedelta(minutes=5))
    t.send("Bob", "start " + sorted(t.store().load("one").game.share_hands["Bob"])[0], T0 + 48 * H + H)
    return t, T0 + 48 * H + 2 * H


def what(msg: EmailMessage) -> tuple[str, str, str]:
    return str(msg["To"]), str(msg["Subject"]), text(msg)


@pytest.mark.parametrize("scenario,point", [
    (_reminder_cycle, p) for p in ("after-save", "clock-tick", "clock-spooled", "clock-saved", "clock-committed",
                                   "before-move")] + [
    (_language_cycle, p) for p in ("after-save", "before-move", "before-move:2", "before-move:3")])
def test_a_kill_at_any_step_loses_and_doubles_no_merged_mail(tmp_path, scenario, point):
    """The cycle killed (SIGKILL) at ``point``, then run again at the same
    time, delivers exactly the mails of the cycle run without a kill, each
    once, and leaves the same game file."""
    ref, at = scenario(tmp_path / "ref")
    faulted = ref.copy(tmp_path / "faulted")
    assert ref.run(at).returncode == 0
    owed = Counter(what(m) for m in ref.sent())
    assert owed and sum(1 for to, _, _ in owed.elements() if to == "cy@example.net") == 1 + (
        scenario is _language_cycle)  # Cy: the status mail (and the answer to their command)
    killed = faulted.run(at, fault=point)
    assert killed.returncode == -9, (point, killed.stderr[-2000:])
    got = [what(m) for m in faulted.sent()]
    again = faulted.run(at)
    assert again.returncode == 0, again.stderr
    got += [what(m) for m in faulted.sent()]
    assert Counter(got) == owed, point
    assert faulted.spooled() == []
    assert faulted.store().read_data("one") == ref.store().read_data("one")


def test_a_vacation_announced_in_the_cycle_of_an_order_is_a_line_of_the_status_mail(tmp_path):
    """Ann's order spools everyone's status mail; Cy's ``vacation 2d`` in the
    same cycle is announced to Ann and Bob inside that mail (worded anew,
    ``notify.restatus``), not as a second mail."""
    t = Timeline(tmp_path / "root", vacation_limit=14 * 86400)
    t.send("Ann", "start " + sorted(t.store().load("one").game.share_hands["Ann"])[0], T0 + H)
    t.send("Cy", "vacation 2d", T0 + 2 * H)
    mails = t.cycle(T0 + 3 * H)
    assert readers(mails) == Counter({"ann@example.org": 1, "bob@example.org": 1, "cy@example.net": 2,
                                      OBSERVER: 1})
    for address in ("ann@example.org", "bob@example.org"):
        [m] = [m for m in mails if str(m["To"]) == address]
        lines = news(m)
        assert lines[0] == ("Cy is on vacation until 2026-12-03 15:00 UTC: their clock stands still meanwhile. "
                            "Cy's move is now due by 2026-12-05 12:00 UTC."), lines  # 12-03 12:00 + 2 days
        assert lines[1:] == ["Ann has chosen an initial investment."]
