"""What a careful referee does that the moderator did not (the new user's
leftovers): a resignation confirmed only in a later mail, ``pbem show`` naming a
pause, the reminder saying what happens at the deadline, a refusal quoting the
player's words as written.  Real RFC 5322 mails through real moderator cycles on
local Maildirs (``test_newuser_finds.Table``)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import pbem

from test_newuser_finds import Table, start_all, text_of, to

ROOT = Path(__file__).resolve().parent.parent

ASKED_CY = ('To resign, send "resign confirm" by 2026-12-02 09:10 UTC. Your seat then goes to the built-in '
            'player, everyone is told, and you get no more mail but the final result.')
SAME_MAIL = ('Your mail says both "resign" and "resign confirm". A resignation counts only when it is '
             'confirmed in a later mail, after you have read this warning, so you are still in the game.')


@pytest.fixture
def t(tmp_path):
    return Table(tmp_path)


@pytest.mark.parametrize("body", [
    "resign\nresign confirm\n",
    "Resign, confirmed.\nI resign from this game, sorry.\n",  # the confirmation first
    "resign; resign confirm\n",  # ";" works like a new line
    "resign ; resign confirm  # sorry\n",
])
def test_resign_and_its_confirmation_in_one_mail_resign_no_one(t, body):
    """Cy's one mail says "resign" and "resign confirm": Cy stays in the game,
    gets one answer (the warning, saying the confirmation must come later), and
    the request stands; "resign confirm" in a later mail resigns."""
    start_all(t)
    t.reply("Cy", body)
    t.run()  # 09:10
    (answer,) = t.sent()
    assert str(answer["To"]) == "cy@example.net"
    assert text_of(answer).strip() == SAME_MAIL + "\n\n" + ASKED_CY
    rec = t.load()
    assert rec.resigned == [] and not rec.player_by_name("Cy").bot
    assert rec.resigning == {"Cy": "2026-12-01T09:10:00+00:00"}
    assert rec.gm_log == []
    t.reply("Cy", "resign confirm\n")
    t.run()
    rec = t.load()
    assert rec.resigned == ["Cy"] and rec.resigning == {} and rec.player_by_name("Cy").bot
    mails = t.sent()
    assert [text_of(m).strip() for m in to(mails, "cy@example.net")] == [
        "You resigned. Thank you for playing; you will get the final result."]
    assert "Cy resigned from the game." in text_of(to(mails, "ann@example.org")[0])


SAME_CYCLE = ('Your "resign confirm" came together with your "resign", before you could read the warning. '
              'A resignation counts only when it is confirmed in a later mail, after you have read the warning, '
              'so you are still in the game.')


def test_resign_and_its_confirmation_in_two_mails_of_one_cycle_resign_no_one(t):
    """Cy's "resign" and, in another mail, "resign confirm" are read in the same
    cycle: Cy never saw the warning, so Cy stays in the game; the confirmation
    is answered with the warning again and the request stands; "resign
    confirm" in a later cycle resigns."""
    start_all(t)
    t.reply("Cy", "resign\n")
    t.reply("Cy", "resign confirm\n")
    t.run()  # 09:10
    answers = [text_of(m).strip() for m in to(t.sent(), "cy@example.net")]
    assert answers == [ASKED_CY, SAME_CYCLE + "\n\n" + ASKED_CY]
    rec = t.load()
    assert rec.resigned == [] and not rec.player_by_name("Cy").bot
    assert rec.resigning == {"Cy": "2026-12-01T09:10:00+00:00"}
    assert rec.gm_log == []
    t.reply("Cy", "resign confirm\n")
    t.run()  # 09:15
    rec = t.load()
    assert rec.resigned == ["Cy"] and rec.resigning == {} and rec.player_by_name("Cy").bot
    assert [text_of(m).strip() for m in to(t.sent(), "cy@example.net")] == [
        "You resigned. Thank you for playing; you will get the final result."]


def test_resign_alone_still_answers_the_warning_alone(t):
    """Without "resign confirm" in the mail the answer is the warning only."""
    start_all(t)
    t.reply("Cy", "resign\n")
    t.run()
    (answer,) = t.sent()
    assert text_of(answer).strip() == ASKED_CY
    assert t.load().resigned == []


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """``pbem`` in ``tmp_path`` (its pbem.yaml: the operator), run by a user "carol"."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOGNAME", "carol")
    (tmp_path / "pbem.yaml").write_text(yaml.safe_dump({"operator": "op@example.com"}))
    runner = CliRunner()
    return lambda *args: runner.invoke(pbem.main, list(args), catch_exceptions=False)


def test_pbem_show_says_a_paused_game_is_paused_since_when_by_whom_and_how_to_resume(cli):
    r = cli("new", "ridge", "--seed", "7", "--deadline", "24h", "--now", "2026-03-01T12:00:00Z",
            "--player", "Ann=ann@example.org", "--player", "Bob=bob@example.org", "--player", "Cy=cy@example.org")
    assert r.exit_code == 0, r.output
    shown = cli("show", "ridge").output
    assert "aused" not in shown
    r = cli("gm", "ridge", "pause", "Bob", "is", "ill", "--now", "2026-03-01T18:00:00Z")
    assert r.exit_code == 0, r.output
    lines = cli("show", "ridge").output.splitlines()
    assert lines[0].startswith("Game ridge: phase initial")
    assert lines[1] == ("Paused since 2026-03-01 18:00 UTC by command line (carol) (Bob is ill): no deadline runs, "
                        "no reminder is sent and the built-in player does not move; orders are still taken. "
                        'To resume: pbem gm ridge resume (or "resume" in the game master\'s mail).')
    assert cli("gm", "ridge", "resume", "--now", "2026-03-01T19:00:00Z").exit_code == 0
    assert "aused" not in cli("show", "ridge").output
    # a pause without a reason (the game master's word is "pause" alone)
    assert cli("gm", "ridge", "pause", "--now", "2026-03-02T08:30:00Z").exit_code == 0
    assert cli("show", "ridge").output.splitlines()[1].startswith(
        "Paused since 2026-03-02 08:30 UTC by command line (carol): no deadline runs")


def test_pbem_gm_pause_keeps_the_reason_given_with_the_reason_option(cli):
    """``pbem gm ridge pause --reason "José on holiday"`` stores the reason as
    ``pause José on holiday`` does: ``pbem show`` names it, the game master's log
    keeps it."""
    r = cli("new", "ridge", "--seed", "7", "--deadline", "24h", "--now", "2026-03-01T12:00:00Z",
            "--player", "Ann=ann@example.org", "--player", "Bob=bob@example.org", "--player", "Cy=cy@example.org")
    assert r.exit_code == 0, r.output
    r = cli("gm", "ridge", "pause", "--reason", "José on holiday", "--now", "2026-03-01T18:00:00Z")
    assert r.exit_code == 0, r.output
    assert cli("show", "ridge").output.splitlines()[1].startswith(
        "Paused since 2026-03-01 18:00 UTC by command line (carol) (José on holiday): no deadline runs")


def test_the_referees_words_are_in_their_catalogues_and_used():
    """The words these fixes added: each macro in its catalogue (gm.txt for the
    players' seat commands, operator.txt for the operator's ``pbem show``) and
    named in the code (as a literal)."""
    code = "\n".join(p.read_text() for p in [*(ROOT / "moderator").rglob("*.py"), ROOT / "pbem.py"])
    for catalogue, names in [("gm.txt", ["resign_same_mail", "resign_same_cycle"]), ("operator.txt", ["show_paused"])]:
        macros = re.findall(r"\{% macro (\w+)\(", (ROOT / "templates" / "words" / catalogue).read_text())
        for name in names:
            assert name in macros, (catalogue, name)
            assert f'word("{catalogue[:-4]}", "{name}"' in code, name


# ------------------------------------------------------------------ the reminder
from test_deadlines import T0, H, Clocked, body  # noqa: E402

WAITING = "Reminder: the game is waiting for your initial investment. It is due by 2026-12-03 12:00 UTC; "
REPLY = " Reply to your latest status mail with your orders ('status' brings the position again)."


@pytest.mark.parametrize("settings, then", [
    ({}, "if nothing arrives by then, the built-in player moves for you and everyone is told."),
    ({"on_missed": "wait"}, "if nothing arrives by then, no move is made for you: the game keeps waiting, "
                            "the missed move is counted and the game master is told."),
    ({"abandon_after": 1}, "if nothing arrives by then, you have missed 1 move in a row and your seat is "
                           "abandoned: the built-in player moves for you and plays the seat until the game "
                           "master finds a replacement."),
    ({"abandon_after": 1, "on_missed": "wait"}, "if nothing arrives by then, you have missed 1 move in a row "
                                                "and your seat is abandoned: the built-in player moves for you "
                                                "and plays the seat until the game master finds a replacement."),
])
def test_the_reminder_says_what_happens_at_the_deadline_under_the_games_policy(tmp_path, settings, then):
    """Deadline 48 hours from T0: Cy's reminder, a day before it, says what the
    moderator will do at the deadline (the game's on_missed, or the seat
    abandoned when this miss makes abandon_after in a row), not "the game's
    missed-move policy applies"."""
    h = Clocked(tmp_path, settings={"deadline": 48 * 3600, **settings})
    h.sent()
    h.move("Ann")
    h.move("Bob")
    h.run(T0 + 2 * H)
    h.sent()
    h.run(T0 + 24 * H)
    (reminder,) = h.sent()
    assert str(reminder["To"]) == "cy@example.net"
    assert body(reminder).split("\n\n")[1].rstrip("\n") == WAITING + then + REPLY


def test_the_overdue_reminder_says_the_next_miss_abandons_the_seat(tmp_path):
    """Policy wait, seats abandoned after 2 misses: Cy missed the deadline of
    Dec 3, 12:00 (the wait starts again then, due Dec 5, 12:00); the daily
    reminder says the next miss is counted then and abandons the seat; with 3
    it says how many more misses do."""
    for after, tail in ((2, " Then your seat is abandoned: the built-in player plays it until the game master "
                            "finds a replacement."),
                        (3, " Your seat is abandoned after 2 more missed moves in a row.")):
        h = Clocked(tmp_path / str(after), settings={"deadline": 48 * 3600, "on_missed": "wait",
                                                     "abandon_after": after})
        h.move("Ann")
        h.move("Bob")
        h.run(T0 + 2 * H)
        h.run(T0 + 24 * H)
        h.sent()
        h.run(T0 + 48 * H)  # missed: the game waits, and Cy is told at once
        (at_once,) = [m for m in h.sent() if str(m["To"]) == "cy@example.net"]
        h.run(T0 + 72 * H)  # and a day later
        (reminder,) = [m for m in h.sent() if str(m["To"]) == "cy@example.net"]
        for mail in (at_once, reminder):
            assert body(mail).split("\n\n")[1].rstrip("\n") == (
                "The game is still waiting for your initial investment: the deadline passed (1 missed in a row), "
                "and the game waits for you. The next missed move is counted at 2026-12-05 12:00 UTC." + tail
                + REPLY)


# ------------------------------------------------------------------ quoting the player's words
@pytest.mark.parametrize("line, quoted", [
    ("take best move", "'best move'"),
    ("take José's best move", "\"José's best move\""),  # accents kept
    ("take the Reading Railroad", "'Reading Railroad'"),  # fillers at the edges are no part of it
])
def test_a_refusal_quotes_the_players_words_as_written(t, line, quoted):
    """Ann's reply whose take line names no share: the refusal quotes what she
    wrote after "take" (from its first word that is no company to the last),
    accents kept; the game is unchanged.  (A "#" comment is
    ignored: tests/test_order_comments.py.)"""
    start_all(t)
    before = t.path.read_bytes()
    t.reply("Ann", f"build KCC DEN-KCY plain; {line}\n")
    t.run()
    (refusal,) = t.sent()
    text = text_of(refusal)
    assert f"> FAILED  build KCC DEN-KCY plain; {line}\n" in text
    assert (f"Order not understood: {quoted} is not a company; say which share to take: 'take stack' "
            "(the top card), 'take UP', a face-up company ('take KCC') or a face-up place ('take display 2')\n") in text
    assert t.path.read_bytes() == before


# ------------------------------------------------------------------ automatic moves, one mail
def test_the_automatic_moves_of_one_cycle_come_in_one_mail_per_player(tmp_path):
    """Deadline 48 hours: Ann chooses her initial investment, Bob and Cy never do;
    at the deadline the built-in player moves for both in one cycle, and each
    player gets ONE mail naming both moves (their own in full, the other's
    initial investment still secret when it was made), not one mail per move:
    their status mail, whose WHAT HAPPENED begins with the moves and why."""
    h = Clocked(tmp_path, settings={"deadline": 48 * 3600})
    h.move("Ann")
    h.run(T0 + 2 * H)
    h.run(T0 + 24 * H)
    h.sent()
    h.run(T0 + 48 * H)
    rec = h.load()
    bob, cy = rec.history[1], rec.history[2]
    assert (bob["player"], bob["by"], cy["player"], cy["by"]) == ("Bob", "bot", "Cy", "bot")
    mails = h.sent()
    assert sorted(str(m["To"]) for m in mails) == ["ann@example.org", "bob@example.org", "cy@example.net"]
    text = {str(m["To"]): body(m) for m in mails}
    head = "WHAT HAPPENED\n  - "
    due = "deadline of 2026-12-03 12:00 UTC passed without an order"
    end = " The game history marks the moves as automatic.\n"
    assert head + (f"Your {due} from you, so the built-in player moved for you: {bob['order']}. "
                   f"Cy's {due}, so the built-in player moved for them: {cy['order']}." + end) in text["bob@example.org"]
    assert head + (f"Bob's {due}, so the built-in player moved for them: start (secret initial investment). "
                   f"Your {due} from you, so the built-in player moved for you: {cy['order']}." + end) \
        in text["cy@example.net"]
    assert head + (f"Bob's {due}, so the built-in player moved for them: start (secret initial investment). "
                   f"Cy's {due}, so the built-in player moved for them: {cy['order']}." + end) in text["ann@example.org"]
