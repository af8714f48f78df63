"""Press over the real servers (issue 29): a four-player game whose mails come
from Dovecot over IMAP and leave through SMTP (aiosmtpd): a private and a public
message with an order above them, the observer's copy, and a reply to a relayed
message that goes back to its sender only.  Every mail sent is scanned: no
player's address is in a mail to another player, and every envelope sender is
the moderator's."""
from __future__ import annotations

import random
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid, parseaddr

import yaml

from moderator.config import load_config
from moderator.moderation.cycle import Moderator
from moderator.players.heuristic import choose
from moderator.store.gamefile import GameStore

FOUR = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.net"),
        ("Dee", "dee@example.com")]


def body(msg) -> str:
    return msg.get_body(preferencelist=("plain",)).get_content()


def test_press_over_imap_and_smtp(tmp_path, dovecot, smtp_sink, monkeypatch):
    monkeypatch.setenv("PRESS_IMAP_PASSWORD", dovecot.password)
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(yaml.safe_dump({
        "moderator": {"address": "moderator@up.example", "name": "UP moderator"},
        "games_dir": "games",
        "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                 "username": dovecot.username, "password_env": "PRESS_IMAP_PASSWORD"},
        "smtp": {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none"},
    }))
    config = load_config(cfg)
    moderator = Moderator(config)
    moderator.create_game("talk", FOUR, seed=2029, settings={"press": "private", "press_archive": "after-end"},
                          observers=["watch@example.org"])
    store = GameStore(config.games_dir)
    seen = [0]

    def collect():
        new = smtp_sink.messages[seen[0]:]
        seen[0] += len(new)
        for m in new:
            assert m.mail_from == "moderator@up.example"
        return [m.message for m in new]

    def mail(name, text, reply_to=None):
        rec = store.load("talk")
        msg = EmailMessage(policy=policy.default)
        msg["From"] = dict(FOUR)[name]
        msg["To"] = "moderator@up.example"
        msg["Subject"] = f"Re: [pbem:talk:{rec.player_by_name(name).secret}] Union Pacific talk"
        msg["Message-ID"] = make_msgid(domain="example.org")
        if reply_to is not None:
            msg["In-Reply-To"] = msg["References"] = reply_to["Message-ID"]
        msg.set_content(text + "\n")
        dovecot.append(msg.as_bytes())

    moderator.run_cycle()
    everything = collect()
    rec = store.load("talk")
    order = str(choose(rec.game, "Ann", random.Random(3))).replace("; ", "\n")
    mail("Ann", order + "\n\nto Bob: let us share the west\nto all: have fun")
    assert moderator.run_cycle().ok
    got = collect()
    everything += got

    def to(address, needle):
        return [m for m in got if m["To"].addresses[0].addr_spec == address and needle in body(m)]

    assert len(store.load("talk").history) == 1
    bob = to("bob@example.org", "let us share the west")
    assert len(bob) == 1 and bob[0]["From"].addresses[0].display_name == "Ann (game talk)"
    assert to("cy@example.net", "let us share the west") == []
    assert [len(to(a, "have fun")) for a in ("bob@example.org", "cy@example.net", "dee@example.com",
                                             "watch@example.org")] == [1, 1, 1, 1]
    assert len(to("ann@example.org", "Relayed to Bob.")) == 1
    # Bob's reply to the relayed mail goes back to Ann only
    mail("Bob", "Agreed, west it is.", reply_to=bob[0])
    assert moderator.run_cycle().ok
    got = collect()
    everything += got
    assert len(to("ann@example.org", "Agreed, west it is.")) == 1
    assert [to(a, "Agreed") for a in ("cy@example.net", "dee@example.com", "watch@example.org")] == [[], [], []]
    assert [(e["from"], e["to"]) for e in store.load("talk").press] == [("Ann", ["Bob"]), ("Ann", "all"),
                                                                       ("Bob", ["Ann"])]
    for m in everything:
        raw = m.as_bytes().decode("utf-8", "replace").lower()
        rcpt = m["To"].addresses[0].addr_spec.lower()
        for _, address in FOUR:
            if address != rcpt:
                assert address not in raw, (address, rcpt)
