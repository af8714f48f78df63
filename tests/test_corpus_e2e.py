"""The mail corpus (tests/mail/) end to end: each mail appended to a real Dovecot
inbox, one moderator cycle over IMAP, answers captured by aiosmtpd.

Machine mail (auto-replies, bounces, lists, no-reply senders, our own mail) gets no
answer and goes to the Ignored folder; a registered player's mail gets exactly one
answer addressed to them and goes to Processed; a mail from an unregistered address
changes nothing and gets no answer to that address."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from moderator.config import load_config
from moderator.moderation.cycle import Moderator
from moderator.mail.read import read_mail
from moderator.store.gamefile import GameStore

MAIL = Path(__file__).parent / "mail"
EXPECTED = yaml.safe_load((MAIL / "expected.yaml").read_text(encoding="utf-8"))
SECRET = "k3x9p2qa"
OWN = "moderator@up.example.org"
REGISTERED = ["ben.carter@gmail.com", "joerg.haeussler@gmail.com", "maria.lopez@outlook.example.es",
              "anna.novakova@gmail.com", "sam@okafor.example.net", "pieter.devries@example.org"]


def corpus():
    for name, exp in sorted(EXPECTED.items()):
        opts = exp.get("read") or {}
        if "max_size" in opts:
            continue  # read with a test-only size limit
        raw = (MAIL / name).read_bytes()
        yield name, raw, read_mail(raw, own_address=OWN)


@pytest.fixture
def moderator(tmp_path, dovecot, smtp_sink, monkeypatch):
    monkeypatch.setenv("CORPUS_IMAP_PASSWORD", dovecot.password)
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(yaml.safe_dump({
        "moderator": {"address": OWN, "name": "Union Pacific (ridge)"},
        "max_replies_per_sender": 100,
        "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                 "username": dovecot.username, "password_env": "CORPUS_IMAP_PASSWORD"},
        "smtp": {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none"},
    }))
    config = load_config(cfg)
    mod = Moderator(config)
    mod.create_game("ridge", [(f"P{i}", a) for i, a in enumerate(REGISTERED)], seed=5)
    store = GameStore(config.games_dir)
    record = store.load("ridge")
    for p in record.players:
        p.secret = SECRET  # the corpus answers mails carrying this secret
    store.save(record)
    smtp_sink.messages.clear()
    return mod


def test_corpus_through_dovecot(moderator, dovecot, smtp_sink):
    cases = list(corpus())
    assert len(cases) >= 40
    for _, raw, _ in cases:
        dovecot.append(raw)
    before = moderator.store.path("ridge").read_bytes()
    report = moderator.run_cycle()
    assert report.fetched == len(cases)
    assert dovecot.messages("INBOX") == []
    answers: dict[str, int] = {}
    for m in smtp_sink.messages:
        for rcpt in m.rcpt_tos:
            answers[rcpt.lower()] = answers.get(rcpt.lower(), 0) + 1
    machine = [om for _, _, om in cases if om.machine]
    human_registered = [om for _, _, om in cases
                        if not om.machine and om.sender in REGISTERED]
    strangers = [om for _, _, om in cases
                 if not om.machine and om.sender not in REGISTERED and om.sender]
    assert len(machine) >= 10 and len(human_registered) >= 10 and strangers
    # no answer ever goes to a machine sender or to a stranger
    for om in machine + strangers:
        if om.sender not in REGISTERED:
            assert om.sender not in answers, (om.sender, om.machine)
    # every registered player's human mail got exactly one answer
    expected_counts: dict[str, int] = {}
    for om in human_registered:
        expected_counts[om.sender] = expected_counts.get(om.sender, 0) + 1
    notices = len([m for m in smtp_sink.messages if "a mail in your name was refused" in
                    m.message.get_body(preferencelist=("plain",)).get_content().partition("\n")[0]])
    for addr, n in expected_counts.items():
        got = answers.get(addr, 0)
        # a player may also be told of a stranger using their game's secret
        assert n <= got <= n + notices, (addr, n, got)
    processed = dovecot.messages("Processed")
    ignored = dovecot.messages("Ignored")
    assert len(processed) + len(ignored) == len(cases)
    assert len(ignored) >= len(machine)
    # the game is still waiting for initial investments: orders were refused, or a
    # start was applied; the file changed only by applied orders
    record = moderator.store.load("ridge")
    applied = {h["message_id"] for h in record.history}
    if not applied:
        assert moderator.store.path("ridge").read_bytes() == before
    assert all(h["order"].startswith("start ") for h in record.history)
