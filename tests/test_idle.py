"""``pbem run --loop`` waits for mail with IMAP IDLE (RFC 2177) where the server
offers it, against a real Dovecot: a mail delivered during the wait starts the next
cycle within a second or two; without IDLE (Dovecot's ``imap_capability`` without
it), or when the IDLE connection breaks, the loop sleeps the interval (polling)."""
from __future__ import annotations

import threading
import time

import pytest
import yaml

import moderator.mail.transport.imap as imap
from moderator.config import load_config
from moderator.moderation.cycle import Moderator
from servers import Dovecot

ENV = "IDLE_IMAP_PASSWORD"
ORDER = (b"From: Ann <ann@example.org>\r\nTo: moderator@up.example\r\nSubject: status\r\n"
         b"Message-ID: <idle-1@example.org>\r\n\r\nstatus\r\n")


def moderator_on(server, tmp_path, monkeypatch) -> Moderator:
    monkeypatch.setenv(ENV, server.password)
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(yaml.safe_dump({
        "moderator": {"address": "moderator@up.example"},
        "games_dir": "games",
        "imap": {"host": server.host, "port": server.port, "security": "none",
                 "username": server.username, "password_env": ENV, "timeout": 5},
    }))
    return Moderator(load_config(cfg))


def deliver_after(server, seconds: float) -> threading.Thread:
    thread = threading.Thread(target=lambda: (time.sleep(seconds), server.append(ORDER)))
    thread.start()
    return thread


def timed(call):
    started = time.monotonic()
    result = call()
    return result, time.monotonic() - started


def test_mail_during_idle_wakes_the_loop(dovecot, tmp_path, monkeypatch):
    mod = moderator_on(dovecot, tmp_path, monkeypatch)
    try:
        thread = deliver_after(dovecot, 0.5)
        result, took = timed(lambda: mod.wait_for_mail(60))
        thread.join()
        assert result == "mail"
        assert 0.5 <= took < 2.5
        # the next wait does not wake for the same mail again
        result, took = timed(lambda: mod.wait_for_mail(1.0))
        assert (result, took >= 1.0) == ("timeout", True)
        # a new IDLE connection (the moderator restarted) finds the mail at once:
        # it may have come after the last cycle
        mod.close()
        result, took = timed(lambda: mod.wait_for_mail(60))
        assert result == "mail" and took < 1.5
    finally:
        mod.close()


def test_mail_between_waits_is_seen_at_once(dovecot, tmp_path, monkeypatch):
    mod = moderator_on(dovecot, tmp_path, monkeypatch)
    try:
        assert mod.wait_for_mail(0.2) == "timeout"  # the IDLE connection is open now
        dovecot.append(ORDER)  # arrives while no IDLE runs (as during a cycle)
        result, took = timed(lambda: mod.wait_for_mail(60))
        assert result == "mail" and took < 1.5
    finally:
        mod.close()


def test_idle_is_sent_again_before_the_renewal_time(dovecot, tmp_path, monkeypatch):
    monkeypatch.setattr(imap, "IDLE_RENEW", 0.4)
    mod = moderator_on(dovecot, tmp_path, monkeypatch)
    try:
        result, took = timed(lambda: mod.wait_for_mail(1.0))
        assert result == "timeout" and 1.0 <= took < 2.0
        thread = deliver_after(dovecot, 1.0)  # after two renewals
        result, took = timed(lambda: mod.wait_for_mail(30))
        thread.join()
        assert result == "mail" and 1.0 <= took < 3.0
    finally:
        mod.close()


def test_broken_idle_connection_falls_back_to_sleeping(dovecot, tmp_path, monkeypatch):
    mod = moderator_on(dovecot, tmp_path, monkeypatch)
    try:
        assert mod.wait_for_mail(0.1) == "timeout"
        kick = threading.Thread(target=lambda: (time.sleep(0.5), dovecot.kick()))
        kick.start()
        slept = []
        result, took = timed(lambda: mod.wait_for_mail(3.0, sleep=slept.append))
        kick.join()
        # the server closed the connection during IDLE: the rest of the time is slept
        assert result == "slept"
        assert 0.5 <= took < 2.0
        assert len(slept) == 1 and slept[0] == pytest.approx(3.0 - took, abs=0.1)
        # the next wait logs in again and uses IDLE
        thread = deliver_after(dovecot, 0.3)
        result, took = timed(lambda: mod.wait_for_mail(30))
        thread.join()
        assert result == "mail" and took < 2.5
    finally:
        mod.close()


@pytest.fixture
def dovecot_without_idle():
    with Dovecot(imap_capability="IMAP4rev1 LITERAL+ UIDPLUS MOVE") as server:
        yield server


def test_server_without_idle_is_polled(dovecot_without_idle, tmp_path, monkeypatch):
    server = dovecot_without_idle
    client = server.connect()
    assert b"IDLE" not in client.capabilities()
    client.logout()
    mod = moderator_on(server, tmp_path, monkeypatch)
    try:
        thread = deliver_after(server, 0.2)
        result, took = timed(lambda: mod.wait_for_mail(1.5))
        thread.join()
        assert result == "slept" and took >= 1.5  # the mail did not cut the wait short
        slept = []
        assert mod.wait_for_mail(3.0, sleep=slept.append) == "slept"
        assert slept == [pytest.approx(3.0, abs=0.05)]  # not asked again: no login
    finally:
        mod.close()


def test_maildir_inbox_sleeps(tmp_path):
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(yaml.safe_dump({"moderator": {"address": "moderator@up.example"},
                                   "games_dir": "games"}))
    mod = Moderator(load_config(cfg))
    slept = []
    assert mod.wait_for_mail(7.0, sleep=slept.append) == "slept"
    assert slept == [pytest.approx(7.0, abs=0.05)]


def test_doctor_says_whether_idle_is_offered(dovecot, dovecot_without_idle, tmp_path, monkeypatch):
    from click.testing import CliRunner

    import pbem

    for server, expected in ((dovecot, "OK    IMAP IDLE: offered: `pbem run --loop` starts a cycle as "
                                       "soon as mail arrives"),
                             (dovecot_without_idle, "NOTE  IMAP IDLE: not offered: `pbem run --loop` "
                                                    "checks for mail every --interval seconds")):
        moderator_on(server, tmp_path, monkeypatch)
        (tmp_path / "games").mkdir(exist_ok=True)
        result = CliRunner().invoke(pbem.main, ["--config", str(tmp_path / "pbem.yaml"), "doctor"],
                                    catch_exceptions=False)
        assert expected + "  [docs/operations.md: Mail servers]" in result.output.splitlines(), result.output
