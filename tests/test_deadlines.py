"""The game clock through the real Moderator on local Maildirs, over weeks of
simulated time (the clock set per cycle, as ``pbem run --now`` does): deadlines,
reminders, the built-in player's moves for silent players and its own seats,
abandoned seats, the policy ``wait``, outages, vacations, time zones and hints.

Times are derived by hand from the game's creation time T0 and the settings; the
moves the built-in player made are checked against ``heuristic.choose`` run again
on the replayed position with the documented generator (``bot_rng``)."""
from __future__ import annotations

import mailbox
import os
import random
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import make_msgid
from pathlib import Path

import pytest
from click.testing import CliRunner

import pbem
from moderator.config import Config
from moderator.moderation.cycle import Moderator
from moderator.moderation.deadlines import (bot_rng, check_timezone, format_duration, next_event,
                                            parse_duration, reminder_lead)
from moderator.players.heuristic import choose
from moderator.render.words import names
from moderator.rules.board import Board
from moderator.rules.engine import Game
from moderator.rules.notation import parse_action
from moderator.store.gamefile import GameStore
from moderator.mail.threads import thread_token
from outbox import unseen_mails

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
H = timedelta(hours=1)
THREE = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.net")]
SOURCES = Path(__file__).resolve().parent.parent / "moderator"


class Clocked:
    """A moderator on Maildirs whose clock the test sets (``now``)."""

    def __init__(self, tmp_path, players=THREE, bots=(), settings=None, options=None, seed=5,
                 operator="gm@example.org", game_id="ridge"):
        self.config = Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "mail" / "inbox",
                             maildir_outbox=tmp_path / "mail" / "outbox", spool_dir=tmp_path / "spool",
                             operator=operator)
        self.now = T0
        self.gid = game_id
        self.addr = dict(players)
        self.mod = Moderator(self.config, clock=lambda: self.now)
        self.mod.create_game(game_id, list(players), seed=seed, bots=list(bots), settings=settings,
                             options=options)
        self.inbox = mailbox.Maildir(str(self.config.maildir_inbox), create=True)
        self.outbox = mailbox.Maildir(str(self.config.maildir_outbox), create=True)
        self.seen: set[str] = set()

    def load(self, check=False):
        return GameStore(self.config.games_dir).load(self.gid, check=check)

    def mail(self, name, body):
        rec = self.load()
        msg = EmailMessage(policy=policy.default)
        msg["From"] = self.addr[name]
        msg["To"] = self.config.moderator_address
        msg["Subject"] = f"Re: [pbem:{self.gid}:{rec.player_by_name(name).secret}] Union Pacific {self.gid}"
        msg["Message-ID"] = make_msgid(domain="example.org")
        msg.set_content(body + "\n")
        deliver(self.inbox, msg.as_bytes(), self.now)


    def move(self, name, seed=0):
        """``name`` mails a legal move (the built-in player's choice, in the notation)."""
        rec = self.load()
        action = choose(rec.game, name, random.Random(seed + len(rec.history)))
        self.mail(name, str(action).replace("; ", "\n"))

    def run(self, at=None):
        if at is not None:
            self.now = at
        report = self.mod.run_cycle()
        assert report.ok, report.errors
        return report

    def sent(self):
        return unseen_mails(self.outbox, self.seen)


_DELIVERED = iter(range(1, 1 << 30))


def deliver(inbox: mailbox.Maildir, raw: bytes, when: datetime) -> str:
    """Drop ``raw`` into the Maildir ``inbox`` as a delivery agent does at
    ``when``: written in ``tmp/`` under a unique name of that time
    (``SECONDS.MmicrosPpidQn.HOST``), its modification time that time too, then
    moved into ``new/``.  The moderator reads that time as the mail's arrival."""
    key = f"{int(when.timestamp())}.M{when.microsecond}P{os.getpid()}Q{next(_DELIVERED)}.test"
    tmp, new = Path(inbox._path) / "tmp" / key, Path(inbox._path) / "new" / key
    tmp.write_bytes(raw)
    os.utime(tmp, (when.timestamp(), when.timestamp()))
    os.rename(tmp, new)
    return key


def body(msg) -> str:
    return msg.get_body(preferencelist=("plain",)).get_content()


def to(msgs, address):
    return [m for m in msgs if str(m["To"]) == address]


def first_line(msg) -> str:
    """What a mail is about: to a player every mail of a game has one Subject, so the
    title is the text's first line; to the game master it is the Subject."""
    return body(msg).partition("\n")[0] + " | " + str(msg["Subject"])


def titled(msgs, text):
    return [m for m in msgs if text in first_line(m)]


# ------------------------------------------------------------------ pure parts
@pytest.mark.parametrize("text,seconds", [("90m", 5400), ("48h", 172800), ("3d", 259200),
                                          ("72 hours", 259200), ("2 days", 172800), ("1D", 86400)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["banana", "", "0h", "5", "3w", "h48", "-3d"])
def test_bad_durations_are_refused_with_examples(text):
    with pytest.raises(ValueError, match=r"e\.g\. 90m, 48h, 3d"):
        parse_duration(text)


def test_none_only_where_allowed():
    assert parse_duration("none", allow_none=True) is None
    with pytest.raises(ValueError):
        parse_duration("none")
    assert format_duration(259200) == "3d" and format_duration(5400) == "90m" and format_duration(7200) == "2h"


def test_reminder_lead_is_a_day_or_half_a_short_deadline():
    assert reminder_lead(72 * 3600) == 24 * 3600
    assert reminder_lead(48 * 3600) == 24 * 3600
    assert reminder_lead(40 * 3600) == 20 * 3600
    assert reminder_lead(90 * 60) == 45 * 60


def test_time_zones():
    assert check_timezone("Europe/Madrid") == "Europe/Madrid"
    for bad in ["Mars/Base", "", "../etc/passwd", "/etc/localtime"]:
        with pytest.raises(ValueError):
            check_timezone(bad)


def test_every_clock_word_is_used():
    """Each macro of templates/words/clock.txt is named in the code (as a literal)."""
    code = "\n".join(p.read_text() for p in (SOURCES / "moderation").glob("*.py"))
    for name in names("clock"):
        base = name[:-len("_title")] if name.endswith("_title") else name
        assert f'"{name}"' in code or f'"{base}"' in code or name == "when", name


# ------------------------------------------------------------------ a whole game
def test_silent_player_is_reminded_then_the_bot_moves_until_abandoned(tmp_path):
    """Ann and Bob answer within hours, Cy never: deadline 48h, policy bot."""
    h = Clocked(tmp_path, settings={"deadline": 48 * 3600})
    welcome = h.sent()
    assert len(welcome) == 3
    for m in welcome:
        assert "Your move is due by 2026-12-03 12:00 UTC." in body(m)
    assert next_event(h.load().to_data()) == T0 + 24 * H  # Cy's (everyone's) reminder
    h.move("Ann")
    h.move("Bob")
    h.run(T0 + 2 * H)
    assert h.load().game.waiting_for() == ["Cy"]
    h.sent()
    h.run(T0 + 23 * H)  # nothing due yet
    assert h.sent() == []
    h.run(T0 + 24 * H)
    mails = h.sent()
    assert [str(m["To"]) for m in mails] == ["cy@example.net"]
    assert str(mails[0]["Subject"]) == "Union Pacific ridge (Cy)"  # the player's one thread
    assert body(mails[0]).startswith("Union Pacific, game ridge: reminder: your move is due\n")
    assert "waiting for your initial investment. It is due by 2026-12-03 12:00 UTC" in body(mails[0])
    h.run(T0 + 30 * H)
    assert h.sent() == []  # one reminder per wait
    # and no game is due again before the deadline: idle cycles open no game file
    assert h.mod.bk.games_due(T0 + 48 * H - timedelta(seconds=1)) == []
    assert h.mod.bk.games_due(T0 + 48 * H) == ["ridge"]
    h.run(T0 + 48 * H)
    rec = h.load()
    assert rec.game.phase == "play"
    last = rec.history[-1]
    assert last == {"player": "Cy", "order": last["order"], "message_id": None,
                    "received": "2026-12-03T12:00:00+00:00", "by": "bot", "due": "2026-12-03T12:00:00+00:00"}
    assert rec.player_by_name("Cy").missed == 1
    mails = h.sent()
    # one mail per player: the status mail, which tells the automatic move and why
    assert sorted(str(m["To"]) for m in mails) == ["ann@example.org", "bob@example.org", "cy@example.net"]
    assert ("  - Your deadline of 2026-12-03 12:00 UTC passed without an order from you, so the built-in "
            f"player moved for you: {last['order']}. The game history marks the move as automatic.\n"
            ) in body(to(mails, "cy@example.net")[0])
    assert ("  - Cy's deadline of 2026-12-03 12:00 UTC passed without an order, so the built-in player moved "
            "for them: ") in body(to(mails, "ann@example.org")[0])
    # the clock restarted with the move: the next wait starts at the bot's move
    assert rec.clock["since"] == "2026-12-03T12:00:00+00:00"

    # weeks of play: Ann and Bob answer each cycle, Cy never; 6-hour cycles
    gm_mails, ann_mails = [], []
    for _ in range(600):
        rec = h.load()
        if rec.game.phase == "over":
            break
        for name in rec.game.waiting_for():
            if name != "Cy":
                h.move(name)
        h.run(h.now + 6 * H)
        mails = h.sent()
        gm_mails += to(mails, "gm@example.org")
        ann_mails += to(mails, "ann@example.org")
    rec = h.load(check=True)
    assert rec.game.phase == "over"
    assert h.now - T0 > timedelta(days=14)
    cy = rec.player_by_name("Cy")
    assert cy.abandoned and cy.bot and cy.missed == 3
    # to the game master with the token of their secret, so that their reply is a
    # game master's mail; no secret in the Subject
    assert [str(m["Subject"]) for m in gm_mails] == ["Union Pacific ridge: Cy's seat is offered to the substitute pool"]
    token = thread_token("ridge", rec.game_master["secret"])
    assert f".{token}.pbem.ridge@" in str(gm_mails[0]["Message-ID"])
    assert "Cy missed 3 moves in a row, and the seat is marked abandoned" in body(gm_mails[0])
    by_bot = [e for e in rec.history if e.get("by") == "bot"]
    assert {e["player"] for e in by_bot} == {"Cy"}
    assert all(e["message_id"] for e in rec.history if e.get("by") != "bot")
    # Cy's moves after the abandonment came at once (same cycle as the move before)
    cy_turns = [i for i, e in enumerate(rec.history) if e["player"] == "Cy"]
    late = cy_turns[-1]
    assert rec.history[late]["received"] == rec.history[late - 1]["received"]
    # and each such move is told, with why, in the other players' status mails
    from moderator.rules.notation import public_order

    shown = public_order(rec.history[late]["order"], True)
    told = f"  - Cy's seat is abandoned, so the built-in player played it: {shown}.\n"
    assert sum(told in body(m) for m in ann_mails) == 1
    _replays_exactly(h)


def _replays_exactly(h: Clocked) -> None:
    """The file replays (full comparison, ``pbem replay``), and every move marked
    ``by: bot`` is what the built-in player chooses again on the replayed
    position with ``bot_rng``."""
    rec = h.load(check=True)
    game = Game.new(Board.default(), [p.name for p in rec.players], rec.game.seed, rec.game.ruleset,
                    rec.game.options)
    from moderator.store.gamefile import GameRecord

    shadow = GameRecord(id=rec.id, game=game, players=rec.players, board_ref="default")
    bots = 0
    for e in rec.history:
        if e.get("by") == "bot":
            assert str(choose(game, e["player"], bot_rng(shadow))) == e["order"]
            bots += 1
        game.push(e["player"], parse_action(e["order"]))
    assert bots > 0 and game.to_dict() == rec.game.to_dict()


def test_solo_game_by_command_line_with_bots_finishes(tmp_path, monkeypatch):
    """``pbem new --bot`` twice and ``pbem run --now``: Ann plays by mail against two
    seats of the built-in player, which move at once (also the initial investment)."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    r = runner.invoke(pbem.main, ["new", "solo", "--player", "Ann=ann@example.org", "--bot", "Bella",
                                  "--bot", "Bert", "--seed", "9", "--deadline", "3d"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "Played by the built-in player: Bella, Bert" in r.output
    store = GameStore(tmp_path / "games")
    rec = store.load("solo")
    assert [(p.name, p.address, p.bot) for p in rec.players] == [
        ("Ann", "ann@example.org", False), ("Bella", "", True), ("Bert", "", True)]
    assert rec.settings["deadline"] == 3 * 86400
    inbox = mailbox.Maildir(str(tmp_path / "mail" / "inbox"), create=True)
    now = T0
    for _ in range(400):
        rec = store.load("solo")
        if rec.game.phase == "over":
            break
        if rec.game.waiting_for() == ["Ann"]:
            action = choose(rec.game, "Ann", random.Random(len(rec.history)))
            msg = EmailMessage(policy=policy.default)
            msg["From"] = "ann@example.org"
            msg["To"] = "pbem@pbem.localhost"
            msg["Subject"] = f"Re: [pbem:solo:{rec.players[0].secret}] Union Pacific solo"
            msg["Message-ID"] = make_msgid(domain="example.org")
            msg.set_content(str(action).replace("; ", "\n") + "\n")
            inbox.add(msg.as_bytes())
        now += H
        r = runner.invoke(pbem.main, ["run", "--now", now.isoformat()], catch_exceptions=False)
        assert r.exit_code == 0, r.output
    rec = store.load("solo", check=True)
    assert rec.game.phase == "over"
    assert {e["player"] for e in rec.history if e.get("by") == "bot"} == {"Bella", "Bert"}
    assert all(e.get("by") is None for e in rec.history if e["player"] == "Ann")
    outbox = mailbox.Maildir(str(tmp_path / "mail" / "outbox"), create=False)
    recipients = set()
    for key in outbox.keys():
        with outbox.get_file(key) as fh:
            recipients.add(str(BytesParser(policy=policy.default).parse(fh)["To"]))
    assert recipients == {"ann@example.org"}  # the bots' seats get no mail
    r = runner.invoke(pbem.main, ["replay", "solo"], catch_exceptions=False)
    assert r.exit_code == 0 and "the state matches the file" in r.output


def test_run_now_refuses_a_bad_time_and_loop(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(pbem.main, ["run", "--now", "next tuesday"])
    assert r.exit_code == 2 and "is not an ISO 8601 time, e.g. 2026-12-24T18:00:00+00:00" in r.output
    r = CliRunner().invoke(pbem.main, ["run", "--now", "2026-12-24T18:00:00", "--loop"])
    assert r.exit_code == 2 and "leave out --loop" in r.output


def test_new_refuses_a_bad_deadline_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(pbem.main, ["new", "ridge", "--player", "Ann=ann@example.org", "--player",
                                       "Bob=bob@example.org", "--deadline", "banana"])
    assert r.exit_code == 2
    assert "'banana' is not a duration: write minutes, hours or days, e.g. 90m, 48h, 3d, or none" in r.output
    assert not (tmp_path / "games" / "ridge.yaml").exists()
    r = CliRunner().invoke(pbem.main, ["new", "ridge", "--bot", "Bella", "--bot", "Bert", "--player",
                                       "Ann=ann@example.org", "--deadline", "none", "--on-missed", "wait"])
    assert r.exit_code == 0, r.output
    rec = GameStore(tmp_path / "games").load("ridge")
    assert rec.settings == {"deadline": None, "on_missed": "wait", "abandon_after": 3,
                            "vacation_limit": 14 * 86400, "paused": None, "language": "en", "grace": 0,
                            "press": "private", "press_archive": "never"}  # pbem new writes the press rule


# ------------------------------------------------------------------ policy wait
def test_policy_wait_tells_the_game_master_and_reminds_daily(tmp_path):
    h = Clocked(tmp_path, players=THREE[:2], settings={"deadline": 24 * 3600, "on_missed": "wait",
                                                       "abandon_after": 2})
    h.sent()
    h.move("Ann")
    h.run(T0 + H)
    h.sent()
    h.run(T0 + 12 * H)  # half of a 24h deadline: the reminder
    assert [str(m["To"]) for m in h.sent()] == ["bob@example.org"]
    h.run(T0 + 24 * H)
    rec = h.load()
    assert rec.game.phase == "initial" and len(rec.history) == 1  # no move was made
    assert rec.player_by_name("Bob").missed == 1
    mails = h.sent()
    # the game master is told, and Bob at once (the wait restarts: a new deadline)
    assert [(str(m["To"]), str(m["Subject"])) for m in mails] == [
        ("gm@example.org", "Union Pacific ridge: Bob missed a deadline"),
        ("bob@example.org", "Union Pacific ridge (Bob)")]
    assert "Bob missed the deadline of 2026-12-02 12:00 UTC (1 in a row)" in body(mails[0])
    assert "the deadline passed (1 missed in a row)" in body(mails[1])
    assert "The next missed move is counted at 2026-12-03 12:00 UTC" in body(mails[1])
    assert rec.clock["since"] == "2026-12-02T12:00:00+00:00" and rec.clock["overdue_told"]
    h.run(T0 + 36 * H)  # once a day: the next reminder would be at the next missed move
    assert h.sent() == []
    h.run(T0 + 48 * H)  # the second deadline: abandoned, the built-in player moves
    rec = h.load()
    bob = rec.player_by_name("Bob")
    assert bob.abandoned and bob.bot and bob.missed == 2
    assert rec.game.phase == "play" and rec.history[-1]["by"] == "bot"
    mails = h.sent()
    assert [str(m["Subject"]) for m in to(mails, "gm@example.org")] == [
        "Union Pacific ridge: Bob's seat is offered to the substitute pool"]
    [ann] = to(mails, "ann@example.org")  # one mail: the status mail, which tells the abandoned seat
    assert first_line(ann) == "Union Pacific, game ridge: your turn (turn 1) | Union Pacific ridge (Ann)"
    assert ("  - Bob missed 2 moves in a row: the seat is abandoned. The built-in player plays it until the "
            "game master finds a replacement.\n") in body(ann)


def test_policy_wait_without_a_game_master_promises_no_telling(tmp_path, monkeypatch):
    """No --gm and no operator: the reminder says no one is told, and at the deadline
    nothing is mailed; `pbem new` warns the operator so."""
    def reminded(path, abandon_after):
        """A game without a game master, Bob on move, and the mails of the cycle
        12 h into his 24 h deadline (his reminder)."""
        g = Clocked(path, players=THREE[:2], operator=None,
                    settings={"deadline": 24 * 3600, "on_missed": "wait", "abandon_after": abandon_after})
        g.sent()
        g.move("Ann")
        g.run(T0 + H)
        g.sent()
        g.run(T0 + 12 * H)
        return g, g.sent()

    h, mails = reminded(tmp_path, 2)
    assert [str(m["To"]) for m in mails] == ["bob@example.org"]
    assert ("It is due by 2026-12-02 12:00 UTC; if nothing arrives by then, no move is made for you: "
            "the game keeps waiting and the missed move is counted. Reply") in " ".join(body(mails[0]).split())
    assert "game master" not in body(mails[0])
    h.run(T0 + 24 * H)  # the overdue reminder: the next miss abandons the seat, no one finds a replacement
    assert h.load().player_by_name("Bob").missed == 1
    (mail,) = h.sent()
    assert " ".join(body(mail).split()).endswith(
        "The next missed move is counted at 2026-12-03 12:00 UTC. Then your seat is abandoned: the built-in "
        "player plays it. Reply to your latest status mail with your orders ('status' brings the position "
        "again).")
    _one, (mail,) = reminded(tmp_path / "one", 1)
    assert ("you have missed 1 move in a row and your seat is abandoned: the built-in player moves for you "
            "and plays the seat. Reply") in " ".join(body(mail).split())
    monkeypatch.chdir(tmp_path)
    args = ["new", "plain", "--player", "Ann=ann@example.org", "--player", "Bob=bob@example.org"]
    r = CliRunner().invoke(pbem.main, args + ["--on-missed", "wait"])
    assert r.exit_code == 0, r.output
    assert ("warning: --on-missed wait, but the game has no game master to tell of a missed move (no --gm, "
            "no operator in the configuration): a missed move is only counted, and the game waits. Set "
            "'operator: ADDRESS' in pbem.yaml to be told.") in r.output
    r = CliRunner().invoke(pbem.main, ["new", "withgm", "--player", "Ann=ann@example.org", "--player",
                                       "Bob=bob@example.org", "--on-missed", "wait", "--gm", "gm@example.org"])
    assert r.exit_code == 0 and "warning" not in r.output, r.output


# ------------------------------------------------------------------ outage
def test_a_deadline_in_an_outage_moves_by_its_length(tmp_path):
    h = Clocked(tmp_path, players=THREE[:2], settings={"deadline": 48 * 3600})
    h.move("Ann")
    h.run(T0 + H)  # a successful cycle: the last success
    h.sent()
    # the moderator is down from T0+1h to T0+100h; Bob's deadline (T0+48h) fell in it
    h.run(T0 + 100 * H)
    rec = h.load()
    assert len(rec.history) == 1 and rec.player_by_name("Bob").missed == 0
    assert rec.clock["shift"] == 99 * 3600
    h.sent()
    h.run(T0 + 146 * H)  # 48 + 99 - 1: not yet
    assert len(h.load().history) == 1
    h.run(T0 + 147 * H)
    rec = h.load()
    assert rec.history[-1]["player"] == "Bob" and rec.history[-1]["by"] == "bot"
    assert rec.history[-1]["received"] == "2026-12-07T15:00:00+00:00"


def test_the_zh_deadline_names_the_time_zone_once(tmp_path):
    """zh has no short name for Europe/Madrid: the local time names the zone in
    brackets, and the deadline line does not add it a second time."""
    h = Clocked(tmp_path, players=THREE[:2], settings={"deadline": 72 * 3600, "language": "zh"})
    h.sent()
    h.mail("Bob", "timezone Europe/Madrid")
    h.run(T0 + H)
    h.sent()
    h.mail("Bob", "status")
    h.run(T0 + 2 * H)
    text = body(to(h.sent(), "bob@example.org")[0])
    assert "2026年12月4日周五 12:00 UTC（2026年12月4日周五 13:00 (Europe/Madrid)）" in text
    assert text.count("Europe/Madrid") == 1


# ------------------------------------------------------------------ mail commands
def test_vacation_and_timezone_by_mail(tmp_path):
    h = Clocked(tmp_path, settings={"deadline": 72 * 3600})
    h.sent()
    before = h.load()
    h.mail("Cy", "vacation 400d")
    h.mail("Bob", "timezone Mars/Base")
    h.run(T0 + H)
    mails = h.sent()
    assert [str(m["To"]) for m in mails] == ["cy@example.net", "bob@example.org"] or \
        sorted(str(m["To"]) for m in mails) == ["bob@example.org", "cy@example.net"]
    cy = body(to(mails, "cy@example.net")[0])
    assert ("A vacation of 400 days is more than you have left in this game (14 days of 14 days in all); "
            "nothing was changed. Ask for at most 14 days, e.g. 'vacation 14d'.") in cy
    bob = body(to(mails, "bob@example.org")[0])
    assert "'Mars/Base' is no time zone the moderator knows; nothing was changed." in bob
    assert "e.g. 'timezone Europe/Madrid'" in bob
    after = h.load()
    assert [p.to_data() for p in after.players] == [p.to_data() for p in before.players]
    assert after.clock == before.clock

    h.mail("Cy", "vacation 5d")
    h.mail("Bob", "timezone Europe/Madrid")
    h.run(T0 + 2 * H)
    mails = h.sent()
    cy = body(to(mails, "cy@example.net")[0])
    assert "Your vacation has begun: your clock stands still until 2026-12-06 14:00 UTC (5 days)." in cy
    assert "Vacation left in this game: 9 days." in cy
    announced = titled(mails, "Cy on vacation")
    assert sorted(str(m["To"]) for m in announced) == ["ann@example.org", "bob@example.org"]
    assert "(it is 2026-12-01 15:00 CET there)" in body(to(mails, "bob@example.org")[0]) or \
        "Your time zone is now Europe/Madrid (it is 2026-12-01 15:00 CET there)" in \
        " ".join(body(m) for m in to(mails, "bob@example.org"))
    rec = h.load()
    cyp = rec.player_by_name("Cy")
    assert (cyp.vacation_from, cyp.vacation_until, cyp.vacation_used) == (
        "2026-12-01T14:00:00+00:00", "2026-12-06T14:00:00+00:00", 5 * 86400)
    assert rec.player_by_name("Bob").timezone == "Europe/Madrid"

    # the status mails: Bob's deadline in UTC and Madrid time; Cy's moved by the vacation
    h.mail("Ann", "status")
    h.mail("Bob", "status")
    h.mail("Cy", "status")
    h.run(T0 + 3 * H)
    mails = h.sent()
    assert "Your move is due by 2026-12-04 12:00 UTC (2026-12-04 13:00 CET, Europe/Madrid)." in \
        body(to(mails, "bob@example.org")[0])
    assert "Your move is due by 2026-12-04 12:00 UTC." in body(to(mails, "ann@example.org")[0])
    # Cy: 72h from T0 plus the 5 days of vacation after T0+2h
    assert "Your move is due by 2026-12-09 12:00 UTC." in body(to(mails, "cy@example.net")[0])

    h.mail("Cy", "vacation 2d")  # one under way already
    h.run(T0 + 4 * H)
    assert "You are on vacation until 2026-12-06 14:00 UTC already" in body(h.sent()[0])
    h.mail("Cy", "vacation off")  # back after 1 day: 4 days given back
    h.run(T0 + 26 * H)
    mails = h.sent()
    assert "Vacation left in this game: 13 days." in body(to(mails, "cy@example.net")[0])
    assert len(titled(mails, "Cy back from vacation")) == 2
    cyp = h.load().player_by_name("Cy")
    assert cyp.vacation_used == 86400 and cyp.vacation_until == "2026-12-02T14:00:00+00:00"


def test_hint_only_with_the_option_and_only_to_the_sender(tmp_path):
    h = Clocked(tmp_path, players=THREE[:2], options={"hints": True})
    h.sent()
    h.mail("Ann", "hint")
    h.run(T0 + H)
    mails = h.sent()
    assert [str(m["To"]) for m in mails] == ["ann@example.org"]
    text = body(mails[0])
    rec = h.load()
    assert text.startswith("The built-in player suggests: start ")
    share = text.split("suggests: start ")[1].split(".")[0]
    assert share in rec.game.share_hands["Ann"]
    assert rec.history == []  # a hint is no move
    h.move("Ann")
    h.run(T0 + 2 * H)
    h.sent()
    h.mail("Ann", "hint")
    h.run(T0 + 3 * H)
    assert "the game is not waiting for a move of yours" in body(h.sent()[0])

    off = Clocked(tmp_path / "off", players=THREE[:2])
    off.sent()
    off.mail("Ann", "hint")
    off.run(T0 + H)
    assert "Hints are off in this game (the option hints)" in body(off.sent()[0])


def test_local_deadline_across_a_daylight_saving_change(tmp_path):
    """Deadlines are counted in UTC; the local time is each instant's own offset
    (Europe/Madrid goes from CET to CEST on 2027-03-28)."""
    h = Clocked(tmp_path, players=THREE[:2], settings={"deadline": 48 * 3600})
    h.now = datetime(2027, 3, 27, 12, 0, tzinfo=timezone.utc)
    rec = h.load()
    rec.clock["since"] = "2027-03-27T12:00:00+00:00"  # as if created then
    GameStore(h.config.games_dir).save(rec)
    h.sent()
    h.mail("Bob", "timezone Europe/Madrid")
    h.run(datetime(2027, 3, 27, 13, 0, tzinfo=timezone.utc))
    assert "(it is 2027-03-27 14:00 CET there)" in body(h.sent()[0])
    h.run(datetime(2027, 3, 28, 12, 0, tzinfo=timezone.utc))
    reminders = {str(m["To"]): body(m) for m in h.sent()}
    assert "due by 2027-03-29 12:00 UTC (2027-03-29 14:00 CEST, Europe/Madrid)" in reminders["bob@example.org"]
    assert "due by 2027-03-29 12:00 UTC;" in reminders["ann@example.org"]


def test_pbem_list_shows_the_deadline_of_the_move_awaited(tmp_path, monkeypatch):
    """v2-deadlines-3p waits since 2026-12-11T06:00 (clock.since) with a 24h
    deadline: due 2026-12-12 06:00 UTC; the finished game has none."""
    import shutil

    shutil.copytree(Path(__file__).parent / "fixtures" / "games" / "v2", tmp_path / "games")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(pbem.main, ["list"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    rows = {line.split()[0]: line.split("  ") for line in r.output.splitlines()[1:]}
    cells = lambda gid: [c.strip() for c in rows[gid] if c.strip()]  # noqa: E731
    assert cells("v2-deadlines-3p")[4:7] == ["2026-12-11 06:00", "2026-12-12 06:00", "1/4"]
    assert cells("v2-solo-bots-finished")[3:7] == ["over", "2026-12-06 12:00", "-", "4/4"]


def test_an_automatic_initial_investment_stays_secret_while_others_choose(tmp_path):
    """The built-in player's initial investment for a silent player is told to the
    others only as a secret choice while the initial phase lasts (rules: What each
    player may know); the silent player reads their own share."""
    h = Clocked(tmp_path, players=THREE, settings={"deadline": 24 * 3600})
    h.move("Ann")
    h.run(T0 + H)
    h.sent()
    h.run(T0 + 24 * H)  # Bob and Cy missed: the built-in player chooses for both
    rec = h.load()
    starts = {e["player"]: e["order"] for e in rec.history if e.get("by") == "bot"}
    assert sorted(starts) == ["Bob", "Cy"] and rec.game.phase == "play"
    mails = h.sent()
    about_bob = [m for m in mails if "The game history marks the moves as automatic." in body(m)]  # one mail each
    assert about_bob == mails
    assert sorted(str(m["To"]) for m in about_bob) == ["ann@example.org", "bob@example.org", "cy@example.net"]
    # when Bob's share was chosen, Cy had not chosen: nobody else may read it
    for m in about_bob:
        text = body(m)
        if str(m["To"]) == "bob@example.org":
            assert f"moved for you: {starts['Bob']}." in text
        else:
            assert "Bob's deadline of 2026-12-02 12:00 UTC passed without an order, so the built-in player " \
                "moved for them: start (secret initial investment). " in text
