"""The game master (issue 10): commands by mail and with ``pbem gm``, undo by
replay, replacing a player, ending a game, observers, and the players' seat
commands (resign, digest), on the local Maildirs with real RFC 5322 messages."""
from __future__ import annotations

import random
import re
from datetime import datetime, timedelta, timezone

import pytest
import yaml
from click.testing import CliRunner

import pbem
from moderator.config import Config
from moderator.mail.threads import thread_token
from moderator.moderation import gm
from moderator.moderation.cycle import Moderator
from moderator.moderation.deadlines import due, game_master_address
from moderator.rules.engine import Game
from moderator.rules.notation import parse_action
from moderator.store.gamefile import GameStore
from test_cycle import PLAYERS, Harness, start_all, text_of, title_of

OPERATOR = "op@example.com"
OBSERVER = "watcher@example.com"


class GmHarness(Harness):
    """``Harness`` with an operator (the default game master) and one observer."""

    def __init__(self, tmp_path, gm_address=None):
        self.config = Config(
            games_dir=tmp_path / "games",
            maildir_inbox=tmp_path / "mail" / "inbox",
            maildir_outbox=tmp_path / "mail" / "outbox",
            spool_dir=tmp_path / "spool",
            operator=OPERATOR,
        )
        import mailbox

        self.mod = Moderator(self.config)
        self.record = self.mod.create_game("ridge", PLAYERS, seed=42, gm=gm_address, observers=[OBSERVER])
        self.inbox = mailbox.Maildir(str(self.config.maildir_inbox), create=True)
        self.outbox = mailbox.Maildir(str(self.config.maildir_outbox), create=True)
        self.seen: set[str] = set()
        self.gm_address = gm_address or OPERATOR

    def gm_mail(self, body, secret=None):
        rec = self.load()
        return self.mail(self.gm_address, body, secret=secret or rec.game_master["secret"])

    def play(self, n, seed=5):
        """``n`` turns by the players on move, each a legal order chosen at random."""
        rng = random.Random(seed)
        for _ in range(n):
            rec = self.load()
            who = rec.game.to_move
            action = rec.game.random_action(who, rng)
            self.order(who, str(action))
            report = self.run()
            assert report.applied == 1, report.summary()


@pytest.fixture
def g(tmp_path):
    return GmHarness(tmp_path)


def to(mails, address):
    return [m for m in mails if str(m["To"]).lower() == address.lower()]


def test_new_game_has_a_game_master_with_own_secret_and_observers_get_a_public_welcome(g):
    rec = g.load()
    assert rec.game_master["address"] is None  # the operator's
    assert game_master_address(rec, g.config) == OPERATOR
    assert re.fullmatch(r"[a-km-z2-9]{8}", rec.game_master["secret"])
    assert rec.game_master["secret"] not in {p.secret for p in rec.players}
    assert rec.observers == [OBSERVER]
    mails = g.sent()
    assert sorted(str(m["To"]) for m in mails) == sorted([a.lower() for _, a in PLAYERS] + [OBSERVER])
    (obs,) = to(mails, OBSERVER)
    body = text_of(obs)
    assert "You observe game ridge" in body and "YOUR HAND" not in body
    assert "[pbem:" not in str(obs["Subject"])


def test_new_refuses_an_observer_or_gm_address_of_a_player(tmp_path):
    mod = Moderator(Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "in",
                           maildir_outbox=tmp_path / "out", spool_dir=tmp_path / "spool"))
    with pytest.raises(ValueError, match="the address ann@example.org is given twice"):
        mod.create_game("ridge", PLAYERS, seed=1, observers=["Ann <ann@example.org>"])
    with pytest.raises(ValueError, match="the address bob@example.org is given twice"):
        mod.create_game("ridge", PLAYERS, seed=1, gm="bob@example.org")
    assert not mod.store.exists("ridge")


def test_game_master_command_from_a_player_is_refused_and_changes_nothing(g):
    start_all(g)
    g.sent()
    before = g.path.read_bytes()
    g.order("Ann", "undo 1")
    report = g.run()
    assert report.refused == 1 and report.applied == 0
    assert g.path.read_bytes() == before
    (reply,) = g.sent()
    assert str(reply["To"]) == "ann@example.org"
    assert str(reply["Subject"]) == "Union Pacific ridge (Ann)"  # the player's one thread
    assert title_of(reply).endswith("game-master command refused")
    assert "Only the game master can give that command." in text_of(reply)


def test_gm_mail_without_the_gm_secret_is_refused(g):
    g.sent()
    before = g.path.read_bytes()
    g.gm_mail("end", secret=g.secret("Ann"))
    g.run()
    assert g.path.read_bytes() == before
    (reply,) = g.sent()
    assert str(reply["To"]) == OPERATOR
    assert "did not carry the game master's secret" in text_of(reply)


def test_undo_500_is_refused_saying_how_many_can_be_undone(g):
    start_all(g)
    g.play(2)
    g.sent()
    before = g.path.read_bytes()
    g.gm_mail("undo 500")
    g.run()
    assert g.path.read_bytes() == before
    (reply,) = g.sent()
    assert str(reply["To"]) == OPERATOR
    body = text_of(reply)
    # 3 initial investments and 2 turns; no dividend paid yet
    assert "REFUSED: Cannot take back 500 actions: 5 can be undone in all, 5 without crossing a dividend." in body


def test_undo_2_replays_exactly_and_is_announced_with_its_reason(g):
    start_all(g)
    g.play(4)
    full = g.load()
    g.sent()
    g.gm_mail("undo 2 force Bob's order was misread")
    g.run()
    rec = GameStore(g.config.games_dir).load("ridge", check=True)  # pbem replay's full check
    # the game that never had the last two actions, built independently
    fresh = Game.new(full.game.board, [p for p, _ in PLAYERS], 42, full.game.ruleset, dict(full.game.options))
    for h in full.history[:-2]:
        fresh.push(h["player"], parse_action(h["order"]))
    assert rec.game.to_dict() == fresh.to_dict()
    assert rec.game.events == fresh.events
    assert rec.history == full.history[:-2]
    (entry,) = rec.gm_log
    assert entry["by"] == OPERATOR and entry["command"] == "undo 2 force"
    assert entry["reason"] == "Bob's order was misread"
    assert entry["undone"] == full.history[-2:]
    mails = g.sent()
    # everyone gets the new position with the reason; the gm gets the confirmation
    assert sorted(str(m["To"]) for m in mails) == sorted(
        [a.lower() for _, a in PLAYERS] + [OBSERVER, OPERATOR])
    for m in mails:
        assert "took back the last 2 actions" in text_of(m)
        assert "Bob's order was misread" in text_of(m)
    # the next order applies to the position before the undone actions
    to_move = rec.game.to_move
    assert to_move == full.history[-2]["player"]


def test_undo_never_crosses_a_dividend_without_force(g):
    start_all(g)
    rng = random.Random(3)
    # play until the first dividend is paid, then one more action
    while True:
        rec = g.load()
        if rec.game.dividends_paid >= 1:
            break
        g.order(rec.game.to_move, str(rec.game.random_action(rec.game.to_move, rng)))
        assert g.run().applied == 1
    total, safe = gm.undo_limits(g.load())
    assert safe == 0 and total == len(g.load().history)
    g.sent()
    before = g.path.read_bytes()
    g.gm_mail("undo 1")
    g.run()
    assert g.path.read_bytes() == before
    (reply,) = g.sent()
    assert "would cross a dividend that was paid: 0 can be undone without" in text_of(reply)
    g.gm_mail("undo 1 force")
    g.run()
    assert g.load().game.dividends_paid == 0


def test_replace_gives_a_new_secret_and_welcome_and_the_old_secret_stops_working(g):
    start_all(g)
    g.sent()
    old_secret = g.secret("Bob")
    g.gm_mail("replace Bob Dora=dora@example.org")
    g.run()
    rec = g.load()
    bob = rec.player_by_name("Bob")
    assert bob.address == "dora@example.org" and bob.secret != old_secret
    (entry,) = rec.gm_log
    assert entry == {"by": OPERATOR, "at": entry["at"], "command": "replace Bob Dora=dora@example.org",
                     "mail": entry["mail"], "line": 0, "player": "Bob", "name": "Dora",
                     "address": "dora@example.org", "old_address": "bob@example.org"}
    mails = g.sent()
    (welcome,) = to(mails, "dora@example.org")
    body = text_of(welcome)
    assert str(welcome["Subject"]) == "Union Pacific ridge (Bob)"  # the seat's thread, no secret
    assert f".{thread_token('ridge', bob.secret)}.pbem.ridge@" in str(welcome["Message-ID"])
    assert f"Your secret for this game is: {bob.secret}" in body
    assert "Track cards: " + ", ".join(sorted(rec.game.track_hands["Bob"])) in body
    assert "gave Bob's seat to Dora" in body
    assert len(to(mails, "ann@example.org")) == 1 and len(to(mails, OBSERVER)) == 1
    assert to(mails, "bob@example.org") == []
    # the old secret from the new address: refused; the old address: ignored
    g.mail("dora@example.org", "status", secret=old_secret)
    g.mail("bob@example.org", "status", secret=old_secret)
    report = g.run()
    assert report.refused == 1 and report.ignored == 1
    (refusal,) = g.sent()
    assert str(refusal["To"]) == "dora@example.org" and "secret missing or wrong" in title_of(refusal)
    # the new player carries on with the new secret
    rec = g.load()
    while rec.game.to_move != "Bob":
        g.play(1)
        rec = g.load()
    action = rec.game.random_action("Bob", random.Random(1))
    g.mail("dora@example.org", str(action), secret=bob.secret)
    assert g.run().applied == 1
    assert g.load().history[-1]["player"] == "Bob"


@pytest.mark.parametrize("address", ["ann@example.org", "ANN@example.org", OBSERVER, OPERATOR])
def test_replace_with_an_address_already_in_the_game_is_refused(g, address):
    g.sent()
    before = g.path.read_bytes()
    g.gm_mail(f"replace Bob Dora={address}")
    g.run()
    assert g.path.read_bytes() == before
    (reply,) = g.sent()
    assert f"REFUSED: {address.lower()} already has a part in this game" in text_of(reply)


def test_end_abandons_the_game_with_the_standings_and_takes_no_more_orders(g):
    start_all(g)
    g.play(2)
    money = g.load().game.standings()
    g.sent()
    g.gm_mail("end the players agreed to stop")
    g.run()
    rec = g.load()
    assert rec.ended["standings"] == [list(s) for s in money]
    mails = g.sent()
    assert len(mails) == 5
    standings = ", ".join(f"{pl}. {p} {m} million" for pl, p, m in money)
    for m in mails:
        assert standings in text_of(m)
    before = g.path.read_bytes()
    g.order(rec.game.to_move, str(rec.game.random_action(rec.game.to_move, random.Random(1))))
    g.run()
    assert g.path.read_bytes() == before
    (reply,) = g.sent()
    assert "ended this game; it takes no more orders" in text_of(reply)


def test_message_reaches_players_and_observers(g):
    g.sent()
    g.gm_mail("message Next turn deadline is Friday.")
    g.run()
    mails = g.sent()
    assert sorted(str(m["To"]) for m in mails) == sorted([a.lower() for _, a in PLAYERS] + [OBSERVER, OPERATOR])
    for m in mails:
        if str(m["To"]) != OPERATOR:
            assert "A message from the game master: Next turn deadline is Friday." in text_of(m)
    assert g.load().gm_log[0]["command"] == "message Next turn deadline is Friday."


def test_observers_never_see_a_hand_or_a_secret(g):
    start_all(g)
    g.gm_mail("observe late@example.net")
    g.run()
    g.play(6)
    g.gm_mail("undo 1\nmessage hello")
    g.run()
    rec = g.load()
    secrets = {p.secret for p in rec.players} | {rec.game_master["secret"]}
    seen = 0
    for key in g.outbox.keys():
        msg = g.outbox[key]
        if str(msg["To"]).lower() not in (OBSERVER, "late@example.net"):
            continue
        seen += 1
        raw = msg.as_bytes().decode("utf-8", "replace")
        for s in secrets:
            assert s not in raw
        assert "YOUR HAND" not in raw and "Your secret" not in raw and "[pbem:" not in raw
    assert seen >= 12
    # an observer's mail gets a clear answer and changes nothing
    before = g.path.read_bytes()
    g.sent()
    g.mail(OBSERVER, "pass; discard plain", subject="Re: Union Pacific ridge",
           In_Reply_To=" ".join(str(next(m for m in g.outbox if str(m["To"]) == OBSERVER)["Message-ID"]).split()))
    g.run()
    assert g.path.read_bytes() == before
    (reply,) = g.sent()
    assert "observers get its public status mails, but give no orders" in text_of(reply)


def test_resign_then_confirm_gives_up_the_seat_and_stops_the_mail(g):
    start_all(g)
    g.sent()
    g.order("Cy", "I resign from this game, sorry.")
    g.run()
    (asked,) = g.sent()
    asked_at = datetime.fromisoformat(g.load().resigning["Cy"]) + timedelta(days=1)
    assert f'send "resign confirm" by {asked_at:%Y-%m-%d %H:%M} UTC.' in text_of(asked)
    assert g.load().resigned == []
    g.order("Cy", "resign confirm")
    g.run()
    rec = g.load()
    assert rec.resigned == ["Cy"] and rec.resigning == {}
    mails = g.sent()
    assert "You resigned." in text_of(to(mails, "cy@example.net")[0])
    for a in ("ann@example.org", "bob@example.org", OBSERVER, OPERATOR):
        assert "Cy resigned from the game." in text_of(to(mails, a)[0])
    # Cy gets no more status mails
    g.play(2)
    assert to(g.sent(), "cy@example.net") == []


@pytest.mark.parametrize("line, command", [
    ("resign", "resign"), ("I resign from this game, sorry.", "resign"), ("Resign, confirmed.", "resign confirm"),
    ("resign confirm", "resign confirm"), ("Digest on", "digest on"), ("digest off.", "digest off"),
    ("I resign Bob", None), ("resignation", None), ("digest", None), ("build KCC DEN-KCY", None),
])
def test_seat_commands_are_read_from_short_lines(line, command):
    assert gm.seat_command(line) == command


def test_resign_confirm_without_resign_is_refused(g):
    g.sent()
    g.order("Ann", "resign confirm")
    g.run()
    (reply,) = g.sent()
    assert "counts only within a day" in text_of(reply)
    assert g.load().resigned == []


def test_digest_on_mails_only_what_concerns_the_player(g):
    start_all(g)
    g.order("Ann", "digest on")
    g.run()
    assert g.load().digest == ["Ann"]
    g.sent()
    got = []
    for _ in range(6):
        before = g.load()
        g.play(1, seed=len(got) + 11)
        after = g.load()
        mails = to(g.sent(), "ann@example.org")
        concerns = "Ann" in (before.game.to_move, after.game.to_move) or \
            after.game.dividends_paid > before.game.dividends_paid
        got.append(bool(mails))
        assert bool(mails) == concerns, (before.game.to_move, after.game.to_move)
    assert not all(got) and any(got)


# ---------------------------------------------------------------- the clock


T0 = datetime(2031, 5, 4, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def timed(tmp_path):
    """A game whose clock the test sets (``timed.now[0]``); the initial
    investments made at T0, so that the first turn's 72-hour wait starts then."""
    now = [T0]
    h = GmHarness.__new__(GmHarness)
    h.config = Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "mail" / "inbox",
                      maildir_outbox=tmp_path / "mail" / "outbox", spool_dir=tmp_path / "spool", operator=OPERATOR)
    import mailbox

    h.mod = Moderator(h.config, clock=lambda: now[0])
    h.record = h.mod.create_game("ridge", PLAYERS, seed=42, observers=[OBSERVER])
    h.inbox = mailbox.Maildir(str(h.config.maildir_inbox), create=True)
    h.outbox = mailbox.Maildir(str(h.config.maildir_outbox), create=True)
    h.seen, h.gm_address, h.now = set(), OPERATOR, now
    start_all(h)
    h.sent()
    return h


def test_pause_stops_the_clock_and_resume_moves_the_deadline_by_the_pause(timed):
    rec = timed.load()
    on_move = rec.player_by_name(rec.game.to_move)
    assert due(rec, on_move) == T0 + timedelta(hours=72)
    timed.now[0] = T0 + timedelta(hours=10)
    assert "paused the game (summer break)" in timed.mod.manage("ridge", "pause summer break")
    assert due(timed.load(), on_move) is None
    timed.now[0] = T0 + timedelta(hours=100)  # the deadline passed during the pause: nothing happens
    timed.run()
    assert len(timed.load().history) == 3
    with pytest.raises(gm.GmRefusal, match="gm_already_paused"):
        timed.mod.manage("ridge", "pause")
    timed.now[0] = T0 + timedelta(hours=110)
    timed.mod.manage("ridge", "resume")
    rec = timed.load()
    assert rec.settings["paused"] is None and rec.clock["shift"] == 100 * 3600
    assert due(rec, on_move) == T0 + timedelta(hours=172)
    timed.now[0] = T0 + timedelta(hours=171)
    timed.run()
    assert len(timed.load().history) == 3
    timed.now[0] = T0 + timedelta(hours=173)
    timed.run()
    rec = timed.load()
    assert len(rec.history) == 4 and rec.history[-1]["by"] == "bot"
    assert [e["command"] for e in rec.gm_log] == ["pause", "resume"]
    assert rec.gm_log[0]["at"] == (T0 + timedelta(hours=10)).isoformat()


def test_extend_gives_the_player_on_move_more_time_only(timed):
    rec = timed.load()
    on_move = rec.game.to_move
    other = next(p for p, _ in PLAYERS if p != on_move)
    with pytest.raises(gm.GmRefusal) as refused:
        timed.mod.manage("ridge", f"extend {other} 24h")
    assert refused.value.text() == (f"The game does not wait for {other} now (it waits for {on_move}): only the "
                                    "move the game waits for can be extended.")
    timed.mod.manage("ridge", f"extend {on_move.lower()} 24h")
    rec = timed.load()
    assert due(rec, rec.player_by_name(on_move)) == T0 + timedelta(hours=96)
    assert rec.gm_log[-1]["command"] == f"extend {on_move} 1d"
    mails = timed.sent()
    assert len(mails) == 4  # three players and the observer
    assert all(f"gave {on_move} 1 day more for the move under way" in text_of(m) for m in mails)
    # the next move's wait is a whole deadline again
    timed.now[0] = T0 + timedelta(hours=95)
    timed.run()
    assert len(timed.load().history) == 3
    timed.play(1)
    rec = timed.load()
    assert due(rec, rec.player_by_name(rec.game.to_move)) == T0 + timedelta(hours=95 + 72)


def test_deadline_banana_is_refused_and_deadline_48h_applies(timed):
    before = timed.path.read_bytes()
    timed.gm_mail("deadline banana")
    timed.run()
    assert timed.path.read_bytes() == before
    (reply,) = timed.sent()
    assert ('REFUSED: "banana" is not a duration: write minutes, hours or days, e.g. 90m, 48h, 3d, or none.'
            in text_of(reply))
    timed.gm_mail("deadline 48h")
    timed.run()
    rec = timed.load()
    assert rec.settings["deadline"] == 48 * 3600
    assert due(rec, rec.player_by_name(rec.game.to_move)) == T0 + timedelta(hours=48)


def test_eject_gives_the_seat_to_the_built_in_player(timed):
    rec = timed.load()
    on_move = rec.game.to_move
    address = rec.player_by_name(on_move).address
    timed.mod.manage("ridge", f"eject {on_move}")
    rec = timed.load()
    assert rec.player_by_name(on_move).bot and on_move in rec.resigned
    timed.sent()
    timed.run()  # the clock moves for the seat at once
    rec = timed.load()
    assert rec.history[-1]["player"] == on_move and rec.history[-1]["by"] == "bot"
    assert to(timed.sent(), address) == []  # no more mail to the ejected player
    with pytest.raises(gm.GmRefusal, match="gm_already_bot"):
        timed.mod.manage("ridge", f"eject {on_move}")
    # replace gives the seat to a person again
    timed.mod.manage("ridge", f"replace {on_move} Dora=dora@example.org")
    rec = timed.load()
    seat = rec.player_by_name(on_move)
    assert not seat.bot and seat.address == "dora@example.org" and on_move not in rec.resigned


# ---------------------------------------------------------------- pbem gm


@pytest.fixture
def cli(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pbem.yaml").write_text(yaml.safe_dump({"operator": OPERATOR}))
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(pbem.main, list(args), catch_exceptions=False)

    r = invoke("new", "ridge", "--seed", "42", "--observer", OBSERVER,
               *[x for n, a in PLAYERS for x in ("--player", f"{n}={a}")])
    assert r.exit_code == 0, r.output
    return invoke


def test_pbem_gm_cli_equivalents(cli, tmp_path):
    r = cli("gm", "ridge", "undo", "500")
    assert r.exit_code == 1
    assert "Cannot take back 500 actions: no action was played yet." in r.output
    r = cli("gm", "ridge", "replace", "Bob", "Dora=ann@example.org")
    assert r.exit_code == 1 and "ann@example.org already has a part in this game" in r.output
    r = cli("gm", "ridge", "adjourn")
    assert r.exit_code == 1 and '"adjourn" is no game-master command' in r.output
    r = cli("gm", "ridge", "deadline", "banana")
    assert r.exit_code == 1 and '"banana" is not a duration' in r.output
    r = cli("gm", "ridge", "deadline", "48h")
    assert r.exit_code == 0 and "set the deadline to 2 days per move" in r.output
    r = cli("gm", "ridge", "pause")
    assert r.exit_code == 0 and "paused the game" in r.output
    r = cli("gm", "ridge", "resume")
    assert r.exit_code == 0 and "resumed the game" in r.output
    r = cli("gm", "ridge", "secret")
    data = yaml.safe_load((tmp_path / "games" / "ridge.yaml").read_text())
    assert r.output.strip() == f"Game ridge: game master {OPERATOR}, secret {data['game_master']['secret']}"
    r = cli("gm", "ridge", "replace", "Bob", "Dora=dora@example.org")
    assert r.exit_code == 0 and "gave Bob's seat to Dora" in r.output
    r = cli("gm", "ridge", "message", "hello", "all")
    assert r.exit_code == 0 and "Message sent to 4 readers." in r.output
    r = cli("gm", "ridge", "end", "--reason", "we stop here")
    assert r.exit_code == 0 and "The game master ended the game (we stop here)." in r.output
    data = yaml.safe_load((tmp_path / "games" / "ridge.yaml").read_text())
    assert [e["command"] for e in data["gm_log"]] == ["deadline 2d", "pause", "resume",
                                                      "replace Bob Dora=dora@example.org", "message hello all",
                                                      "end"]
    assert data["settings"]["deadline"] == 48 * 3600 and data["settings"]["paused"] is None
    assert all(e["by"].startswith("command line (") for e in data["gm_log"])
    assert data["players"][1]["address"] == "dora@example.org"
    r = cli("replay", "ridge")
    assert r.exit_code == 0 and "game master:" in r.output and "Ended by the game master" in r.output
    r = cli("gm", "ridge", "help")
    assert "THE GAME MASTER'S GUIDE" in r.output


# ---------------------------------------------------------------- real servers


def test_replacement_through_dovecot_and_aiosmtpd(tmp_path, dovecot, smtp_sink, monkeypatch):
    """Orders and the game master's mail go into a real Dovecot inbox, the moderator
    polls it over IMAP and sends through a real aiosmtpd server: Bob's seat goes to
    Dora, who plays on with her new secret; Bob's old secret no longer works."""
    from email import policy
    from email.message import EmailMessage
    from email.utils import make_msgid

    from moderator.config import load_config

    monkeypatch.setenv("GM_IMAP_PASSWORD", dovecot.password)
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(yaml.safe_dump({
        "moderator": {"address": "moderator@up.example"},
        "operator": OPERATOR,
        "games_dir": "games",
        "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                 "username": dovecot.username, "password_env": "GM_IMAP_PASSWORD"},
        "smtp": {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none"},
    }))
    config = load_config(cfg)
    mod = Moderator(config)
    mod.create_game("rail", PLAYERS, seed=9, observers=[OBSERVER])
    store = GameStore(config.games_dir)
    seen = [0]

    def sent():
        new = smtp_sink.messages[seen[0]:]
        seen[0] += len(new)
        return [m.message for m in new]

    def send(sender, secret, body):
        msg = EmailMessage(policy=policy.default)
        msg["From"], msg["To"] = sender, "moderator@up.example"
        msg["Subject"] = f"Re: [pbem:rail:{secret}] Union Pacific rail"
        msg["Message-ID"] = make_msgid(domain="players.example")
        msg.set_content(body)
        dovecot.append(msg.as_bytes())

    assert len(sent()) == 4  # three welcomes, one observer's welcome
    rec = store.load("rail")
    for name, address in PLAYERS:
        send(address, rec.player_by_name(name).secret, f"start {sorted(rec.game.share_hands[name])[0]}")
    assert mod.run_cycle().applied == 3
    sent()
    old = rec.player_by_name("Bob").secret
    send(OPERATOR, rec.game_master["secret"], "replace Bob Dora=dora@example.org")
    mod.run_cycle()
    mails = sent()
    rec = store.load("rail")
    bob = rec.player_by_name("Bob")
    assert bob.address == "dora@example.org" and bob.secret != old
    (welcome,) = to(mails, "dora@example.org")
    assert f"Your secret for this game is: {bob.secret}" in text_of(welcome)
    (answer,) = to(mails, OPERATOR)
    assert "DONE: The game master gave Bob's seat to Dora" in text_of(answer)
    # the old secret, from the new address: refused, nothing applied
    who = rec.game.to_move
    while who != "Bob":
        address = dict(PLAYERS)[who]
        send(address, rec.player_by_name(who).secret, str(rec.game.random_action(who, random.Random(2))))
        assert mod.run_cycle().applied == 1
        rec = store.load("rail")
        who = rec.game.to_move
    sent()
    action = str(rec.game.random_action("Bob", random.Random(4)))
    send("dora@example.org", old, action)
    report = mod.run_cycle()
    assert report.applied == 0 and report.refused == 1
    (refusal,) = sent()
    assert "secret missing or wrong" in title_of(refusal)
    send("dora@example.org", bob.secret, action)
    assert mod.run_cycle().applied == 1
    rec = store.load("rail", check=True)
    assert rec.history[-1]["player"] == "Bob" and rec.history[-1]["order"] == action
    assert dovecot.messages("INBOX") == []


def test_an_ended_game_is_finished_in_the_games_index(g):
    g.mod.manage("ridge", "end")
    assert g.mod.bk.games_of("ann@example.org", active_only=True) == []
    assert [r.game_id for r in g.mod.bk.games_of("ann@example.org")] == ["ridge"]


def test_public_export_hides_the_game_master_and_the_observers(g):
    from moderator.archive.export import export_data

    start_all(g)
    g.mod.manage("ridge", "undo 1 oops")
    data = export_data(GameStore(g.config.games_dir).read_data("ridge"))
    assert data["game_master"] == {"address": "", "secret": ""}
    assert data["observers"] == [""]
    (entry,) = data["gm_log"]
    assert entry["by"] == "" and entry["undone"][0]["order"] == "start (secret initial investment)"
    assert entry["undone"][0]["message_id"] is None


def test_a_gm_mail_of_several_lines_answers_each_and_a_bad_line_changes_nothing(g):
    g.sent()
    g.gm_mail("pause\nadjourn the game\nresume")
    report = g.run()
    assert report.errors == []
    rec = g.load()
    assert [e["command"] for e in rec.gm_log] == ["pause", "resume"]
    assert [e["line"] for e in rec.gm_log] == [0, 2]
    (reply,) = to(g.sent(), OPERATOR)
    body = text_of(reply)
    assert body.index("DONE: The game master paused") < body.index('REFUSED: "adjourn the game" is no') \
        < body.index("DONE: The game master resumed")
    assert "THE GAME MASTER'S GUIDE" in body  # a refused line brings the guide


def test_missed_deadline_then_replacement_through_dovecot_and_aiosmtpd(tmp_path, dovecot, smtp_sink,
                                                                       monkeypatch):
    """Issue 10 through real servers: the orders come from a Dovecot inbox over IMAP
    and the mails leave through aiosmtpd; Bob stays silent past his deadline, the
    built-in player moves for him (marked in the history, every player told),
    then the game master gives the seat to Dora, who plays on; the file replays."""
    from email import policy
    from email.message import EmailMessage
    from email.utils import make_msgid

    from moderator.config import load_config

    monkeypatch.setenv("GM_IMAP_PASSWORD", dovecot.password)
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(yaml.safe_dump({
        "moderator": {"address": "moderator@up.example"},
        "operator": OPERATOR,
        "games_dir": str(tmp_path / "games"),
        "spool_dir": str(tmp_path / "spool"),
        "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                 "username": dovecot.username, "password_env": "GM_IMAP_PASSWORD"},
        "smtp": {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none"},
    }))
    # a time in the past: each mail's INTERNALDATE is set to the simulated time (Dovecot
    # takes no INTERNALDATE in its future), and lateness is judged by it
    now = [datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)]
    mod = Moderator(load_config(cfg), clock=lambda: now[0])
    mod.create_game("late", PLAYERS, seed=11, settings={"deadline": 24 * 3600})
    store = GameStore(tmp_path / "games")
    seen = [0]

    def sent():
        new = smtp_sink.messages[seen[0]:]
        seen[0] += len(new)
        return [m.message for m in new]

    def send(sender, secret, body):
        msg = EmailMessage(policy=policy.default)
        msg["From"], msg["To"] = sender, "moderator@up.example"
        msg["Subject"] = "orders"
        msg["Message-ID"] = make_msgid(domain="players.example")
        msg.set_content(f"game: late\nsecret: {secret}\n{body}\n")
        dovecot.append(msg.as_bytes(), msg_time=now[0])  # it arrives at the simulated time

    def cycle(hours=1):
        now[0] += timedelta(hours=hours)
        report = mod.run_cycle()
        assert report.ok, report.errors
        return report

    rec = store.load("late")
    for name, address in PLAYERS:
        send(address, rec.player_by_name(name).secret, f"start {sorted(rec.game.share_hands[name])[0]}")
    assert cycle().applied == 3
    rec = store.load("late")
    while rec.game.to_move != "Bob":  # the others play until Bob is on move
        who = rec.game.to_move
        send(dict(PLAYERS)[who], rec.player_by_name(who).secret,
             str(rec.game.random_action(who, random.Random(len(rec.history)))))
        assert cycle().applied == 1
        rec = store.load("late")
    sent()
    moves = len(rec.history)
    cycle(23)  # Bob's deadline: 24 hours after the mail that asked for his move
    assert len(store.load("late").history) == moves
    cycle(1)
    rec = store.load("late")
    assert rec.history[moves]["player"] == "Bob" and rec.history[moves]["by"] == "bot"
    assert rec.player_by_name("Bob").missed == 1
    told = [m for m in sent() if "the built-in player moved for" in text_of(m)]  # in each status mail
    assert sorted(str(m["To"]).lower() for m in told) == sorted(a.lower() for _, a in PLAYERS)
    # the game master gives the silent seat to Dora
    old = rec.player_by_name("Bob").secret
    send(OPERATOR, rec.game_master["secret"], "replace Bob Dora=dora@example.org")
    cycle()
    rec = store.load("late")
    bob = rec.player_by_name("Bob")
    assert bob.address == "dora@example.org" and bob.secret != old
    assert not bob.bot and bob.missed == 0
    (welcome,) = to(sent(), "dora@example.org")
    assert f"Your secret for this game is: {bob.secret}" in text_of(welcome)
    while rec.game.to_move != "Bob":
        who = rec.game.to_move
        send(dict(PLAYERS)[who], rec.player_by_name(who).secret,
             str(rec.game.random_action(who, random.Random(len(rec.history)))))
        assert cycle().applied == 1
        rec = store.load("late")
    action = str(rec.game.random_action("Bob", random.Random(5)))
    send("dora@example.org", bob.secret, action)
    arrived = now[0].isoformat(timespec="seconds")
    assert cycle().applied == 1
    rec = store.load("late", check=True)  # the whole file replays, the bot's move included
    assert rec.history[-1] == {"player": "Bob", "order": action, "message_id": rec.history[-1]["message_id"],
                               "received": now[0].isoformat(timespec="seconds"), "arrived": arrived}
    assert dovecot.messages("INBOX") == []


def test_a_command_naming_no_game_leaves_no_lock_file(cli, tmp_path):
    """`pbem gm nosuch ...`, `pbem gm nosuch secret` and `pbem player set-address
    nosuch ...` fail naming the missing file, and leave no nosuch.yaml.lock behind
    (found by a new user: the lock was taken before the file was looked for)."""
    games = tmp_path / "games"
    before = sorted(p.name for p in games.iterdir())
    for args in (("gm", "nosuch", "pause"), ("gm", "nosuch", "secret"),
                 ("player", "set-address", "nosuch", "Ann", "ann2@example.org")):
        r = cli(*args)
        assert r.exit_code == 1
        assert f"no game 'nosuch' (no file {games / 'nosuch.yaml'})" in r.output
    assert sorted(p.name for p in games.iterdir()) == before
    assert "nosuch.yaml.lock" not in before


def test_pbem_list_says_ended_and_sorts_the_game_as_finished(cli, tmp_path):
    """A game the game master ended waits for nobody: `pbem list` says "ended
    (REASON)" with no deadline, `--active` leaves it out and `--finished` lists it."""
    r = cli("gm", "ridge", "end", "--reason", "we stop here")
    assert r.exit_code == 0, r.output
    lines = cli("list").output.splitlines()
    assert lines[0].split() == ["GAME", "RULESET", "PLAYERS", "MOVE", "SINCE", "DEADLINE", "DIVIDENDS", "WINNER",
                                "STATUS", "SEATS"]
    cells = [c for c in lines[1].split("  ") if c.strip()]
    assert [c.strip() for c in cells][3] == "ended (we stop here)"
    # more than two players: the fourth dividend ends a game (rules: Game end)
    assert len(PLAYERS) > 2 and [c.strip() for c in cells][5:8] == ["-", "0/4", "-"]
    ended = cli("export", "ridge").output  # when and by whom, as the game file has it
    at = yaml.safe_load(ended)["ended"]["at"]
    assert [c.strip() for c in cells][8] == f"ended {at[:16].replace('T', ' ')} by {yaml.safe_load(ended)['ended']['by']} (we stop here)"
    assert cli("list", "--active").output == "No games.\n"
    assert cli("list", "--finished").output.splitlines()[1] == lines[1]


def test_a_public_export_holds_no_address_or_message_id_of_any_kind(g, tmp_path):
    """Every kind of game-master command (on the command line and by mail), an
    observer added, a seat replaced, an undo, a resignation, the end: the game
    file then holds addresses and Message-IDs in many places (players,
    observers, gm_log's commands, ``by``, ``mail``, history, threads); the
    public export (YAML and JSON) and the archive site hold none."""
    from moderator.archive.export import dump, export_data
    from moderator.archive.site import build_site

    start_all(g)
    g.play(2)
    for line in ("pause family dinner", "resume", "extend {} 1d", "deadline 2d",
                 "observe second.watcher@example.com", "replace Cy Dora=dora@example.org",
                 "message see you at ann@example.org", "undo 1 misread"):
        g.mod.manage("ridge", line.format(g.load().game.to_move))
    g.gm_mail(f"extend {g.load().game.to_move} 1d")
    assert g.run().errors == []
    g.mod.manage("ridge", "end players gone", by=OPERATOR)
    kept = GameStore(g.config.games_dir).read_data("ridge")
    raw = dump(kept)
    # the file itself has them all (so the test looks where they are)
    for needle in ("dora@example.org", "second.watcher@example.com", OPERATOR, "ann@example.org"):
        assert needle in raw
    assert any(e.get("mail") for e in kept["gm_log"]) and any(h.get("message_id") for h in kept["history"])
    public = export_data(kept)
    for fmt in ("yaml", "json"):
        assert "@" not in dump(public, fmt)
    commands = [e["command"] for e in public["gm_log"]]
    assert "replace Cy Dora=[address]" in commands and "observe [address]" in commands
    assert [e["mail"] for e in public["gm_log"] if "mail" in e] == [None]
    assert public["ended"]["by"] == ""
    assert "@" in dump(export_data(kept, with_secrets=True))  # --with-secrets: the file as kept
    out = tmp_path / "site"
    build_site(GameStore(g.config.games_dir), out)
    for f in out.rglob("*"):
        if f.is_file() and f.suffix in (".html", ".json"):
            assert "@" not in f.read_text(encoding="utf-8"), f
