"""``pbem run --loop`` keeps what a cycle need not make again (issue 31,
``benchmarks/bench_load.py``): the inbox's IMAP connection is opened once and
kept from one cycle to the next (a real Dovecot counts the logins), opened again
after the server dropped it; and the archive site is brought up to date off the
path of an order (``SiteSchedule``)."""
from __future__ import annotations

import re

import yaml

from moderator.cli import games as cli_games
from moderator.config import load_config
from moderator.moderation.cycle import Moderator

ENV = "LOOP_IMAP_PASSWORD"


def mail(n: int) -> bytes:
    return (f"From: Stranger <stranger{n}@elsewhere.example>\r\nTo: moderator@up.example\r\n"
            f"Subject: hello\r\nMessage-ID: <loop-{n}@elsewhere.example>\r\n\r\nhow do I join?\r\n").encode()


def moderator_on(server, tmp_path, monkeypatch, keep_open: bool) -> Moderator:
    monkeypatch.setenv(ENV, server.password)
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(yaml.safe_dump({
        "moderator": {"address": "moderator@up.example"},
        "games_dir": "games",
        "imap": {"host": server.host, "port": server.port, "security": "none",
                 "username": server.username, "password_env": ENV, "timeout": 5},
    }))
    (tmp_path / "games").mkdir()
    return Moderator(load_config(cfg), keep_open=keep_open)


def logins(server) -> int:
    """Successful IMAP logins of the test's account in Dovecot's log (the test's
    own APPENDs log in too, once each)."""
    return len(re.findall(rf"imap-login: Info: Login: user=<{re.escape(server.username)}>", server.log_text()))


def cycles(mod: Moderator, server, n: int) -> list[int]:
    fetched = []
    for i in range(n):
        server.append(mail(i))
        report = mod.run_cycle()
        assert report.ok, report.errors
        fetched.append(report.fetched)
    return fetched


def test_the_loop_logs_in_once_for_many_cycles(dovecot, tmp_path, monkeypatch):
    mod = moderator_on(dovecot, tmp_path, monkeypatch, keep_open=True)
    before = logins(dovecot)
    try:
        assert cycles(mod, dovecot, 3) == [1, 1, 1]
    finally:
        mod.close()
    assert logins(dovecot) - before - 3 == 1  # 3 APPENDs, 1 login of the moderator
    assert [m.subject for m in dovecot.messages()] == []  # every mail handled and moved


def test_one_cycle_at_a_time_logs_in_each_time(dovecot, tmp_path, monkeypatch):
    mod = moderator_on(dovecot, tmp_path, monkeypatch, keep_open=False)
    before = logins(dovecot)
    try:
        assert cycles(mod, dovecot, 3) == [1, 1, 1]
    finally:
        mod.close()
    assert logins(dovecot) - before - 3 == 3


def test_a_kept_connection_the_server_dropped_is_opened_again(dovecot, tmp_path, monkeypatch):
    mod = moderator_on(dovecot, tmp_path, monkeypatch, keep_open=True)
    before = logins(dovecot)
    try:
        assert cycles(mod, dovecot, 1) == [1]
        dovecot.kick()  # the server closes the kept connection between two cycles
        assert cycles(mod, dovecot, 2) == [1, 1]
    finally:
        mod.close()
    assert logins(dovecot) - before - 3 == 2
    assert dovecot.messages() == []


def test_the_site_waits_while_mail_comes_and_not_longer_than_latest(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(cli_games.time, "monotonic", lambda: clock[0])
    site = cli_games.SiteSchedule()
    assert site.due(0) and site.overdue()  # not built yet: at once
    site.built(0)
    assert not site.due(0)  # nothing saved since
    assert site.due(1) and not site.overdue()  # a save: built once the mail stops
    clock[0] += cli_games.SiteSchedule.LATEST - 1
    assert not site.overdue()
    clock[0] += 1
    assert site.overdue() and site.due(0)  # 300 s on: built even with mail waiting
    site.built(1)
    assert not site.due(1) and not site.overdue()


def test_the_loop_sends_over_one_smtp_connection_for_many_cycles(dovecot, smtp_sink, tmp_path, monkeypatch):
    cfg_mod = moderator_on(dovecot, tmp_path, monkeypatch, keep_open=True)
    data = yaml.safe_load((tmp_path / "pbem.yaml").read_text())
    data["smtp"] = {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none"}
    (tmp_path / "pbem.yaml").write_text(yaml.safe_dump(data))
    cfg_mod.close()
    mod = Moderator(load_config(tmp_path / "pbem.yaml"), keep_open=True)
    try:
        mod.create_game("kept", [("Ann", "ann@example.org"), ("Bob", "bob@example.org")], seed=1)
        welcomes = len(smtp_sink.messages)
        for i in range(3):
            dovecot.append(f"From: Ann <ann@example.org>\r\nTo: moderator@up.example\r\nSubject: [kept]\r\n"
                           f"Message-ID: <kept-{i}@example.org>\r\n\r\nhelp\r\n".encode())
            report = mod.run_cycle()
            assert report.ok and report.sent == 1, (report.errors, report.sent)
        answers = smtp_sink.messages[welcomes:]
        assert [m.message["In-Reply-To"] for m in answers] == [f"<kept-{i}@example.org>" for i in range(3)]
        assert len({m.peer for m in answers}) == 1  # one connection (the same client port) for the 3 cycles
        # the server drops it between two cycles: the next cycle opens a new one
        mod._kept_outbox._kept.close()
        dovecot.append(b"From: Ann <ann@example.org>\r\nTo: moderator@up.example\r\nSubject: [kept]\r\n"
                       b"Message-ID: <kept-9@example.org>\r\n\r\nhelp\r\n")
        report = mod.run_cycle()
        assert report.ok and report.sent == 1, report.errors
        assert smtp_sink.messages[-1].message["In-Reply-To"] == "<kept-9@example.org>"
        assert smtp_sink.messages[-1].peer != answers[0].peer
    finally:
        mod.close()


def test_one_cycle_at_a_time_sends_over_a_connection_each(dovecot, smtp_sink, tmp_path, monkeypatch):
    first = moderator_on(dovecot, tmp_path, monkeypatch, keep_open=False)
    first.close()
    data = yaml.safe_load((tmp_path / "pbem.yaml").read_text())
    data["smtp"] = {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none"}
    (tmp_path / "pbem.yaml").write_text(yaml.safe_dump(data))
    mod = Moderator(load_config(tmp_path / "pbem.yaml"))
    try:
        mod.create_game("each", [("Ann", "ann@example.org"), ("Bob", "bob@example.org")], seed=1)
        welcomes = len(smtp_sink.messages)
        for i in range(2):
            dovecot.append(f"From: Ann <ann@example.org>\r\nTo: moderator@up.example\r\nSubject: [each]\r\n"
                           f"Message-ID: <each-{i}@example.org>\r\n\r\nhelp\r\n".encode())
            assert mod.run_cycle().sent == 1
        answers = smtp_sink.messages[welcomes:]
        assert len({m.peer for m in answers}) == 2
    finally:
        mod.close()


def test_an_unchanged_game_is_not_parsed_when_the_site_is_brought_up_to_date(tmp_path, monkeypatch):
    import shutil
    from pathlib import Path

    from moderator.archive.site import build_site
    from moderator.store.gamefile import GameStore

    fixtures = Path(__file__).parent / "fixtures" / "games" / "v1"
    games = tmp_path / "games"
    shutil.copytree(fixtures, games)
    first = build_site(GameStore(games), tmp_path / "site")
    assert len(first.rendered) == 5 and not first.errors
    parsed = []
    original = GameStore.read_file
    monkeypatch.setattr(GameStore, "read_file", lambda self, gid: parsed.append(gid) or original(self, gid))
    again = build_site(GameStore(games), tmp_path / "site")
    assert (parsed, len(again.unchanged), again.rendered) == ([], 5, [])
    # one file's bytes changed: that game alone is read (and rendered again)
    one = sorted(games.glob("*.yaml"))[0]
    one.write_text(one.read_text() + "\n")
    third = build_site(GameStore(games), tmp_path / "site")
    assert parsed == [one.stem] and third.rendered == [one.stem]


def test_the_site_is_built_by_a_child_process_at_a_lower_priority(tmp_path):
    import os
    import time as _time

    site = cli_games.SiteSchedule()
    mark = tmp_path / "built"
    parent = os.getpid(), os.getpriority(os.PRIO_PROCESS, 0)

    def make():
        mark.write_text(f"{os.getpid()} {os.getpriority(os.PRIO_PROCESS, 0)}")

    site.build(make, 7)
    assert site.saves == 7 and not site.due(7)
    end = _time.monotonic() + 30
    while site.building() and _time.monotonic() < end:
        _time.sleep(0.05)
    assert not site.building()
    pid, nice = map(int, mark.read_text().split())
    assert pid != parent[0]  # not in the moderator's process
    assert nice == min(19, parent[1] + cli_games.SiteSchedule.NICE)
