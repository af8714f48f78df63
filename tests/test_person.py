"""One person across games (issue 28): ``me``, the person thread, person-level
settings, the vacation bank and the record (moderation/people.py,
archive/records.py, bookkeeping schema 5)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

import pytest
import yaml

from moderator.config import load_config
from moderator.moderation.cycle import Moderator
from moderator.store.gamefile import GameStore

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)
ANN, BOB, ANN2 = "ann@a.example", "bob@b.example", "ann@c.example"


def _body(msg):
    return msg.get_body(preferencelist=("plain",)).get_content()


def _to(msg):
    return msg["To"].addresses[0].addr_spec


class Table:
    """Three games sharing Ann and Bob over a real Dovecot and aiosmtpd."""

    def __init__(self, tmp_path, dovecot, smtp_sink, monkeypatch):
        monkeypatch.setenv("E2E_IMAP_PASSWORD", dovecot.password)
        cfg = tmp_path / "pbem.yaml"
        cfg.write_text(yaml.safe_dump({
            "moderator": {"address": "moderator@up.example", "name": "UP moderator"},
            "games_dir": "games", "operator": "op@up.example",
            "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                     "username": dovecot.username, "password_env": "E2E_IMAP_PASSWORD"},
            "smtp": {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none"},
        }))
        (tmp_path / "games").mkdir()
        self.config = load_config(cfg)
        self.now = [T0]
        self.dovecot, self.sink = dovecot, smtp_sink
        self.seen = 0
        self.m = Moderator(self.config, clock=lambda: self.now[0])
        self.store = GameStore(self.config.games_dir)
        self.last: dict[tuple[str, str], EmailMessage] = {}

    def collect(self):
        new = self.sink.messages[self.seen:]
        self.seen += len(new)
        mails = [m.message for m in new]
        for msg in mails:
            mid = str(msg["Message-ID"])
            game = mid.rpartition(".pbem.")[2].partition("@")[0] if ".pbem." in mid else "me"
            self.last[(_to(msg), game)] = msg
        return mails

    def cycle(self):
        report = self.m.run_cycle()
        assert report.ok, report.errors
        return self.collect()

    def reply(self, original, sender, text):
        msg = EmailMessage(policy=policy.default)
        msg["From"] = sender
        msg["To"] = "moderator@up.example"
        msg["Subject"] = "Re: " + str(original["Subject"])
        msg["Date"] = format_datetime(self.now[0])
        msg["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2])
        msg["In-Reply-To"] = str(original["Message-ID"])
        msg["References"] = " ".join(str(original.get("References", "")).split() + [str(original["Message-ID"])])
        msg.set_content(text + "\n")
        self.dovecot.append(msg.as_bytes(), msg_time=self.now[0])


@pytest.fixture
def table(tmp_path, dovecot, smtp_sink, monkeypatch):
    t = Table(tmp_path, dovecot, smtp_sink, monkeypatch)
    day = {"deadline": 86400, "on_missed": "bot", "abandon_after": 9, "grace": 0, "language": "en"}
    t.m.create_game("ridge", [("Ann", ANN), ("Bob", BOB)], seed=1, settings=day)
    t.m.create_game("lake", [("Bob", BOB), ("Ann", ANN), ("Cy", "cy@d.example")], seed=2, settings=day)
    t.m.create_game("pass", [("Annie", ANN), ("Bob", BOB), ("Ann", ANN2)], seed=3, settings=day)
    t.collect()
    return t


def test_scratch(table):
    t = table
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "me")
    mails = t.cycle()
    for m in mails:
        print(m["To"], m["Subject"], m["Message-ID"])
        print(_body(m))
    assert 0
