"""Proposals over the real servers (issue 29): a four-player game whose mails go
through a real Dovecot inbox (IMAP, each mail appended with its arrival time as
INTERNALDATE) and a real aiosmtpd server, the moderator's clock set per cycle
(as ``pbem run --now``).  The players answer the proposal mails by reply (the
token of our Message-ID authenticates them and names the proposal): a takeback
accepted, a pause timed out, an end rejected and a deadline accepted; then
the game file replays exactly (``GameStore`` load with the full replay), and
no mail to a player carries another player's address or secret."""
from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid

import yaml

from moderator.config import load_config
from moderator.moderation import gm
from moderator.moderation.cycle import Moderator
from moderator.moderation.proposals import REVEALING
from moderator.store.gamefile import GameStore

PLAYERS = [("Ada", "ada@players.example"), ("Brunel", "brunel@players.example"),
           ("Crocker", "crocker@players.example"), ("Dora", "dora@players.example")]
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
H = timedelta(hours=1)


class Game:
    def __init__(self, tmp_path, dovecot, smtp_sink, monkeypatch):
        monkeypatch.setenv("PROP_IMAP_PASSWORD", dovecot.password)
        cfg = tmp_path / "pbem.yaml"
        cfg.write_text(yaml.safe_dump({
            "moderator": {"address": "moderator@up.example", "name": "UP moderator"},
            "games_dir": str(tmp_path / "games"), "spool_dir": str(tmp_path / "spool"),
            "operator": "gm@up.example",
            "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                     "username": dovecot.username, "password_env": "PROP_IMAP_PASSWORD"},
            "smtp": {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none"},
        }))
        self.config = load_config(cfg)
        self.now = T0
        self.mod = Moderator(self.config, clock=lambda: self.now)
        self.mod.create_game("vote", PLAYERS, seed=2029, settings={"deadline": 72 * 3600})
        self.dovecot, self.sink = dovecot, smtp_sink
        self.store = GameStore(self.config.games_dir)
        self.seen = 0
        self.all = []

    def load(self, check=False):
        return self.store.load("vote", check=check)

    def mails(self):
        new = [m.message for m in self.sink.messages[self.seen:]]
        self.seen += len(new)
        self.all += new
        return new

    def send(self, name, text, reply_to=None):
        rec = self.load()
        p = rec.player_by_name(name)
        msg = EmailMessage(policy=policy.default)
        msg["From"] = f"{name} <{p.address}>"
        msg["To"] = self.config.moderator_address
        msg["Message-ID"] = make_msgid(domain="players.example")
        if reply_to is None:
            msg["Subject"] = f"Re: Union Pacific vote ({name})"
            text = f"{text}\n\ngame: vote\nsecret: {p.secret}"
        else:
            msg["Subject"] = "Re: " + str(reply_to["Subject"])
            msg["In-Reply-To"] = str(reply_to["Message-ID"])
            msg["References"] = f"{rec.threads[name]} {reply_to['Message-ID']}"
        msg.set_content(text + "\n")
        self.dovecot.append(msg.as_bytes(), msg_time=self.now)

    def run(self, at):
        self.now = at
        report = self.mod.run_cycle()
        assert report.ok, report.errors
        return self.mails()


def to(mails, name):
    addr = dict(PLAYERS)[name]
    return [m for m in mails if m["To"].addresses[0].addr_spec == addr]


def text(m):
    return m.get_body(preferencelist=("plain",)).get_content()


def test_proposals_by_reply_over_imap_and_smtp(tmp_path, dovecot, smtp_sink, monkeypatch):
    g = Game(tmp_path, dovecot, smtp_sink, monkeypatch)
    g.mails()
    for name, _ in PLAYERS:
        g.send(name, f"start {sorted(g.load().game.share_hands[name])[0]}")
    g.run(T0 + H)
    rec = g.load()
    assert rec.game.phase == "play"
    # a move that shows nobody anything hidden, then its player proposes to take it back
    who = rec.game.to_move
    rng = random.Random(3)
    for _ in range(500):
        action = rec.game.random_action(who, rng)
        copy = gm.replay_prefix(rec, 0)
        start = len(copy.events)
        copy.push(who, action)
        if not any(isinstance(e, REVEALING) for e in copy.events[start:]):
            break
    g.send(who, str(action).replace("; ", "\n"))
    g.run(T0 + 2 * H)
    before = g.load()
    g.send(who, "propose takeback")
    mails = g.run(T0 + 3 * H)
    others = [n for n, _ in PLAYERS if n != who]
    asks = {n: [m for m in to(mails, n) if "makes a proposal: please answer" in text(m)] for n in others}
    assert all(len(v) == 1 for v in asks.values()), asks
    for n in others:  # each in the player's own thread, with the token of their secret
        (m,) = asks[n]
        assert str(m["Subject"]) == f"Union Pacific vote ({n})"
        assert str(m["Message-ID"]) == g.load().proposals[0]["asked"][n]
        assert g.load().threads[n] in str(m["References"])
    for n in others:
        g.send(n, "accept", reply_to=asks[n][0])
    mails = g.run(T0 + 4 * H)
    rec = g.load(check=True)
    assert rec.proposals[0]["outcome"] == "accepted"
    assert rec.history == before.history[:-1]
    assert rec.game.to_dict() == gm.replay_prefix(before, 1).to_dict()
    assert rec.game.waiting_for() == [who]
    for n, _ in PLAYERS:
        assert any(f"Every player agreed to proposal 1 of {who}: the last move (" in text(m) for m in to(mails, n))
    assert dovecot.messages("INBOX") == []
    # a pause nobody answers: timed out 48 hours later
    g.send(others[0], "propose pause 2")
    mails = g.run(T0 + 5 * H)
    assert g.load().proposals[1]["due"] == "2026-12-03T17:00:00+00:00"
    g.run(T0 + 5 * H + 48 * H)
    rec = g.load()
    assert rec.proposals[1]["outcome"] == "timed_out" and not rec.settings.get("paused")
    # an end rejected by one reply
    g.send(others[1], "propose end")
    mails = g.run(T0 + 54 * H)
    (ask,) = [m for m in to(mails, who) if "makes a proposal" in text(m)]
    g.send(who, "reject", reply_to=ask)
    mails = g.run(T0 + 55 * H)
    rec = g.load()
    assert rec.proposals[2]["outcome"] == "rejected" and rec.ended is None
    assert all(any(f"Rejected by {who}: nothing changes." in text(m) for m in to(mails, n)) for n, _ in PLAYERS)
    # a deadline accepted by everyone
    g.send(others[2], "propose deadline 24h")
    mails = g.run(T0 + 56 * H)
    for n, _ in PLAYERS:
        if n != others[2]:
            (ask,) = [m for m in to(mails, n) if "makes a proposal" in text(m)]
            g.send(n, "accept", reply_to=ask)
    g.run(T0 + 57 * H)
    rec = g.load(check=True)
    assert [p["outcome"] for p in rec.proposals] == ["accepted", "timed_out", "rejected", "accepted"]
    assert rec.settings["deadline"] == 24 * 3600
    assert [e["command"] for e in rec.gm_log] == ["undo 1", "deadline 1d"]
    # the file replays exactly, and no mail to a player names another's address or secret
    again = GameStore(g.config.games_dir).load("vote", check=True)
    assert again.game.to_dict() == rec.game.to_dict() and again.proposals == rec.proposals
    for m in g.all:
        raw = m.as_string()
        addressee = m["To"].addresses[0].addr_spec
        for p in rec.players:
            if p.address != addressee:
                assert p.address not in raw and f"secret: {p.secret}" not in raw
