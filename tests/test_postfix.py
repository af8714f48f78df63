"""A whole game through Postfix: a private Postfix on 127.0.0.1 takes every mail on
its submission port (STARTTLS required, then AUTH, checked by Dovecot's SASL
socket) and delivers it into the Maildirs that a private Dovecot serves. The
moderator submits its mails there and reads its inbox over IMAP with STARTTLS;
the built-in players read their Maildirs and submit their orders the same way."""
from __future__ import annotations

import random
import shutil

import pytest
import yaml

from moderator.config import load_config
from moderator.demo import Bot, MaildirReader, play
from moderator.moderation.cycle import Moderator
from moderator.store.gamefile import GameStore
from servers import Dovecot, Postfix
from test_e2e import PLAYERS, recompute_money

MODERATOR = "moderator@up.example"
ENV = "POSTFIX_GAME_PASSWORD"


@pytest.fixture
def mail_system(certificate):
    """Dovecot (IMAP, SASL for Postfix) and Postfix delivering into its Maildirs."""
    with Dovecot(tls=certificate, sasl_socket=True) as dovecot:
        users = {MODERATOR: "moderator"} | {address: address.split("@")[0] for _, address in PLAYERS}
        for user in users.values():  # the Maildirs the players' bots read
            for sub in ("cur", "new", "tmp"):
                (dovecot.home(user) / "Maildir" / sub).mkdir(parents=True, exist_ok=True)
            for path in [dovecot.home(user), *dovecot.home(user).rglob("*")]:
                shutil.chown(path, "dovecot", "dovecot")
        with Postfix(dovecot, certificate, users) as postfix:
            yield dovecot, postfix


def test_whole_game_through_postfix(mail_system, certificate, tmp_path, monkeypatch):
    dovecot, postfix = mail_system
    monkeypatch.setenv(ENV, dovecot.password)
    # the test certificate (for 127.0.0.1) is trusted as a private CA would be
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate.cert_path))
    (tmp_path / "games").mkdir()
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(yaml.safe_dump({
        "moderator": {"address": MODERATOR, "name": "UP moderator"},
        "games_dir": "games",
        "imap": {"host": dovecot.host, "port": dovecot.port, "security": "starttls",
                 "username": "moderator", "password_env": ENV, "timeout": 10},
        "smtp": {"host": postfix.host, "port": postfix.port, "security": "starttls",
                 "username": "moderator", "password_env": ENV, "timeout": 10},
    }))
    config = load_config(cfg)
    moderator = Moderator(config)
    moderator.create_game("postfix", PLAYERS, seed=2026)
    bots = [Bot(n, a, MODERATOR, random.Random(i)) for i, (n, a) in enumerate(PLAYERS)]
    readers = [MaildirReader(dovecot.home(a.split("@")[0]) / "Maildir") for _, a in PLAYERS]
    submitted = [0]

    def collect():
        postfix.wait_delivered()
        return [msg for read in readers for msg in read()]

    def deliver(order):
        postfix.submit(order, str(order["From"].addresses[0].username), dovecot.password)
        submitted[0] += 1
        postfix.wait_delivered()

    store = GameStore(config.games_dir)
    play(moderator, bots, deliver, collect,
         lambda: store.read_data("postfix")["state"]["phase"] == "over", max_cycles=1000)
    data = store.read_data("postfix")
    assert data["state"]["phase"] == "over"
    assert data["state"]["money"] == recompute_money(data)
    assert sum(b.refused for b in bots) == 0
    # every order went through Postfix into the moderator's Maildir and was handled
    assert dovecot.messages(username="moderator") == []
    processed = dovecot.messages("Processed", username="moderator")
    assert len(processed) == len(data["history"]) == submitted[0]
    assert all(b"by mail.test.example (Postfix) with ESMTPSA" in m.raw for m in processed)
    # the moderator's own mails went through the submission port with STARTTLS and AUTH
    log = postfix.log_text()
    assert "sasl_method=PLAIN, sasl_username=moderator" in log
    assert "status=deferred" not in log and "status=bounced" not in log
    for _, address in PLAYERS:
        box = dovecot.home(address.split("@")[0]) / "Maildir"
        finals = sorted((box / "new").iterdir(), key=lambda p: p.stat().st_mtime_ns)
        assert finals, address
        raw = finals[-1].read_bytes()
        assert b"with ESMTPSA" in raw and f"for <{address}>".encode() in raw
        assert b"THE GAME IS OVER." in raw
    store.load("postfix", check=True)
