"""A mail the SMTP server does not take for now stays in the spool: the run summary
counts the mails waiting there, and each deferral is logged once for its cause, in
words (the server and its answer), not as a Python exception's text. Real aiosmtpd
servers; the inbox is a local Maildir."""
from __future__ import annotations

import json
import logging

import pytest
import yaml

from moderator.config import load_config
from moderator.mail.transport import TransportError
from moderator.moderation.cycle import Moderator
from servers import SmtpSink, free_port

PLAYERS = [("Ann", "ann@example.org"), ("Bob", "bob@example.org")]


def moderator(tmp_path, port: int) -> Moderator:
    cfg = tmp_path / "pbem.yaml"
    (tmp_path / "games").mkdir(exist_ok=True)
    cfg.write_text(yaml.safe_dump({
        "moderator": {"address": "moderator@up.example"},
        "games_dir": "games",
        "maildir": {"inbox": str(tmp_path / "inbox"), "outbox": str(tmp_path / "outbox")},
        "smtp": {"host": "127.0.0.1", "port": port, "security": "none", "timeout": 5},
    }))
    return Moderator(load_config(cfg))


def warnings_of(caplog) -> list[str]:
    """The log lines (warnings, and errors for a failure of the server) about mails
    kept in the spool."""
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING
            and "kept in the spool" in r.getMessage()]


def due_now(spool) -> None:
    """Make every waiting mail due (as if its retry time had come)."""
    for path in spool.glob("*.json"):
        meta = json.loads(path.read_text())
        meta["next_try"] = "2000-01-01T00:00:00+00:00"
        path.write_text(json.dumps(meta))


def test_server_down_one_line_for_all_mails(tmp_path, caplog):
    port = free_port()  # nothing listens here
    mod = moderator(tmp_path, port)
    # nothing answers at all: a failure of the server (the operator is told), in words
    expected = (f"SMTP server failure: the SMTP server 127.0.0.1:{port} could not be reached: "
                "connection refused; 2 mail(s) kept in the spool")
    with caplog.at_level(logging.WARNING, logger="pbem"):
        with pytest.raises(TransportError) as info:
            mod.create_game("ridge", PLAYERS, seed=3)
    assert str(info.value) == expected
    assert warnings_of(caplog) == [expected]
    caplog.clear()
    report = mod.run_cycle()  # not due yet: nothing tried, both still waiting
    assert (report.sent, report.deferred, report.waiting, report.errors) == (0, 0, 2, [])
    assert report.summary().endswith("0 mail(s) sent, 0 deferred, 2 waiting in the spool; 0 error(s)")
    due_now(tmp_path / "spool")
    with caplog.at_level(logging.WARNING, logger="pbem"):
        report = mod.run_cycle()
    assert (report.sent, report.deferred, report.waiting) == (0, 2, 2)
    assert report.errors == [expected]
    assert warnings_of(caplog) == [expected]  # once, not once per mail
    assert report.summary().endswith("0 mail(s) sent, 2 deferred, 2 waiting in the spool; 1 error(s)")


def test_421_for_one_player_words_the_server_answer(tmp_path, caplog):
    with SmtpSink() as sink:
        sink.reject_recipients["bob@example.org"] = "421 4.3.0 Mailbox busy, try again later"
        mod = moderator(tmp_path, sink.port)
        expected = (f"1 mail(s) kept in the spool for a later cycle (to bob@example.org): the SMTP "
                    f"server 127.0.0.1:{sink.port} answered 421: all recipients refused (bob@example.org: "
                    "421 4.3.0 Mailbox busy, try again later)")
        with pytest.raises(TransportError) as info:
            mod.create_game("ridge", PLAYERS, seed=3)
        assert str(info.value) == expected
        assert [m.rcpt_tos for m in sink.messages] == [("ann@example.org",)]
        due_now(tmp_path / "spool")
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="pbem"):
            report = mod.run_cycle()
        assert (report.sent, report.deferred, report.waiting) == (0, 1, 1)
        assert report.errors == [expected]
        assert warnings_of(caplog) == [expected]
        assert not any("Error" in e or "Exception" in e for e in report.errors)
        del sink.reject_recipients["bob@example.org"]
        due_now(tmp_path / "spool")
        report = mod.run_cycle()
        assert (report.sent, report.deferred, report.waiting, report.errors) == (1, 0, 0, [])
        assert [m.rcpt_tos for m in sink.messages][-1] == ("bob@example.org",)
