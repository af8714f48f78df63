"""A whole 3-player game by real mail: order mails appended to a real Dovecot inbox,
the moderator polling over IMAP, its mails captured by a real aiosmtpd server, and
built-in players reading those mails and answering them.  The final money of every
player is recomputed independently from the game file's history."""
from __future__ import annotations

import random
import re
from collections import Counter

import yaml

from moderator.config import load_config
from moderator.moderation.cycle import Moderator
from moderator.demo import Bot, play
from moderator.mail.threads import thread_token
from moderator.orders.parser import parse_turn
from moderator.store.gamefile import GameStore
from moderator.rules.engine import Game
from moderator.rules.board import Board

PLAYERS = [("Ada", "ada@players.example"), ("Brunel", "brunel@players.example"),
           ("Crocker", "crocker@players.example")]

# Rules tables written out again here, independently of moderator.components/dividends.
TRAINS = {"WW": 7, "MRR": 8, "KCC": 9, "ESL": 10, "UMR": 11, "SFRB": 13, "DM": 14,
          "MS": 17, "BNL": 19, "EPRG": 23}
UP_PAY = {1: [0, 0, 0, 0, 0], 2: [10, 8, 6, 4, 2], 3: [15, 12, 9, 6, 3], 4: [20, 16, 12, 8, 4]}


def pay_company(held: dict[str, int], value: int) -> dict[str, int]:
    """Rules: Company dividends, from the rule text."""
    ranked = sorted(((n, p) for p, n in held.items() if n > 0), reverse=True)
    if not ranked:
        return {}
    top = [p for n, p in ranked if n == ranked[0][0]]
    if len(top) > 1:
        return {p: (value + value // 2) // len(top) for p in top}
    rest = [(n, p) for n, p in ranked if n < ranked[0][0]]
    if not rest:
        return {top[0]: value + value // 2}
    second = [p for n, p in rest if n == rest[0][0]]
    out = {top[0]: value}
    for p in second:
        out[p] = (value // 2) // len(second)
    return out


def pay_up(held: dict[str, int], k: int) -> dict[str, int]:
    """Rules: Union Pacific dividends, from the rule text."""
    ranked = sorted(((n, p) for p, n in held.items() if n > 0), reverse=True)
    out, rank, i = {}, 0, 0
    while i < len(ranked):
        group = [p for n, p in ranked if n == ranked[i][0]]
        amounts = [UP_PAY[k][r] if r < 5 else 0 for r in range(rank, rank + len(group))]
        for p in group:
            out[p] = sum(amounts) // len(group)
        rank += len(group)
        i += len(group)
    return out


def recompute_money(data: dict) -> dict[str, int]:
    """Money from the history alone: invested shares and trains counted from the
    orders; the engine is used only to tell after which order each dividend came."""
    board = Board.default()
    names = [p["name"] for p in data["players"]]
    game = Game.new(board, names, data["seed"], data["ruleset"], data["options"])
    invested = {n: Counter() for n in names}
    pending_starts = {}
    trains = {c: (2 if c == "EPRG" else 1) for c in TRAINS}
    money = Counter()
    for h in data["history"]:
        order, player = h["order"], h["player"]
        m = re.match(r"start (\w+)$", order)
        if m:
            pending_starts[player] = m.group(1)
            if len(pending_starts) == len(names):
                for p, s in pending_starts.items():
                    invested[p][s] += 1
        m = re.match(r"invest ([^;]+)", order)
        if m:
            words = m.group(1).split()
            if words[0].isdigit():
                invested[player][words[1]] += int(words[0])
            else:
                for w in words:
                    invested[player][w] += 1
        m = re.match(r"build (\w+) ", order)
        if m:
            trains[m.group(1)] += 1
        before = game.dividends_paid
        game.push(player, parse_turn([order], board))
        for k in range(before + 1, game.dividends_paid + 1):
            for c in TRAINS:
                for p, amount in pay_company({p: invested[p][c] for p in names}, 1 + trains[c]).items():
                    money[p] += amount
            for p, amount in pay_up({p: invested[p]["UP"] for p in names}, k).items():
                money[p] += amount
    return {n: money[n] for n in names}


def test_whole_game_over_imap_and_smtp(tmp_path, dovecot, smtp_sink, monkeypatch):
    monkeypatch.setenv("E2E_IMAP_PASSWORD", dovecot.password)
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(yaml.safe_dump({
        "moderator": {"address": "moderator@up.example", "name": "UP moderator"},
        "games_dir": "games",
        "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                 "username": dovecot.username, "password_env": "E2E_IMAP_PASSWORD"},
        "smtp": {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none"},
    }))
    config = load_config(cfg)
    moderator = Moderator(config)
    moderator.create_game("e2e", PLAYERS, seed=2026)
    bots = [Bot(n, a, config.moderator_address, random.Random(i)) for i, (n, a) in enumerate(PLAYERS)]
    seen = [0]

    def collect():
        new = smtp_sink.messages[seen[0]:]
        seen[0] += len(new)
        for m in new:
            assert m.mail_from == "moderator@up.example"
        return [m.message for m in new]

    def deliver(msg):
        dovecot.append(msg.as_bytes())

    store = GameStore(config.games_dir)
    cycles = play(moderator, bots, deliver, collect,
                  lambda: store.read_data("e2e")["state"]["phase"] == "over", max_cycles=1000)
    data = store.read_data("e2e")
    state = data["state"]
    # the game ended exactly after the 4th dividend
    assert state["phase"] == "over"
    assert state["dividends_paid"] == 4
    assert [p["dividend"] for p in state["payouts"]] == [1, 2, 3, 4]
    # every player's money equals an independent recomputation from the history
    assert state["money"] == recompute_money(data)
    assert sum(b.refused for b in bots) == 0
    # every order mail was handled and moved out of INBOX
    assert dovecot.messages("INBOX") == []
    assert len(dovecot.messages("Processed")) == len(data["history"])
    # the last status mails announce the end to everyone
    finals = {m.message["To"].addresses[0].addr_spec: m.message for m in smtp_sink.messages[-3:]}
    assert set(finals) == {a for _, a in PLAYERS}
    for msg in finals.values():
        body = msg.get_body(preferencelist=("plain",)).get_content()
        assert "THE GAME IS OVER." in body
    assert cycles < 1000
    # replay of seed + history gives the recorded state
    record = store.load("e2e", check=True)
    # one thread per player (issue 11), scanned over every mail of the game: one
    # Subject for all mails to a player, without the turn or any secret; every
    # Message-ID carries the player's token, every later mail names the thread's
    # first mail; the bots replied without a subject tag or secret line, so the
    # token authenticated every order
    secrets = [p.secret for p in record.players]
    for p in record.players:
        mails = [m.message for m in smtp_sink.messages if m.message["To"].addresses[0].addr_spec == p.address]
        assert len(mails) > 10
        assert {str(m["Subject"]) for m in mails} == {f"Union Pacific e2e ({p.name})"}
        token = thread_token("e2e", p.secret)
        assert all(str(m["Message-ID"]).endswith(f".{token}.pbem.e2e@up.example>") for m in mails)
        assert str(mails[0]["Message-ID"]).strip() == record.threads[p.name]
        assert all(record.threads[p.name] in str(m["References"]) for m in mails[1:])
    for m in smtp_sink.messages:
        assert not any(s in str(m.message["Subject"]) for s in secrets)
