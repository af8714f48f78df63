"""The operator's commands instead of hand edits, and what the guide promises
(docs/operations.md): a missing game file, ``pbem spool``, ``pbem bounces``,
``pbem player set-address``, ``pbem repair``, ``pbem restore``, the exit codes,
``--log-file``/``--log-level``, and the commands that need no mail password.

Real files throughout: games and spool in a temp directory, Maildir inboxes, the
aiosmtpd sink of ``tests/servers.py`` for SMTP."""
from __future__ import annotations

import json
import mailbox
import os
import random
import re
import shutil
import time
from email import policy
from email.parser import BytesParser
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import pbem
from moderator.config import DEFAULT_ADDRESS
from moderator.demo import Bot
from moderator.mail.read import canonical_address

PLAYERS = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.net")]
NEW = ["new", "ridge", "--seed", "7", *[a for n, addr in PLAYERS for a in ("--player", f"{n}={addr}")]]
SECTION = re.compile(r"  \[docs/operations\.md: ([^\]]+)\]$")


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """``cli(*args)`` runs pbem in ``tmp_path`` (games, spool and Maildirs there;
    with ``pbem.yaml`` when a test writes one)."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(pbem.main, list(args), catch_exceptions=False)

    return invoke


def smtp_config(tmp_path: Path, sink) -> None:
    (tmp_path / "pbem.yaml").write_text(yaml.safe_dump({
        "games_dir": "games", "spool_dir": "spool", "operator": "op@example.org",
        "maildir": {"inbox": "mail/inbox", "outbox": "mail/outbox"},
        "smtp": {"host": sink.host, "port": sink.port, "security": "none", "timeout": 5},
    }))


def outbox(tmp_path: Path) -> list:
    box = mailbox.Maildir(str(tmp_path / "mail" / "outbox"), create=False)
    mails = []
    for key in box.keys():
        with box.get_file(key) as fh:
            mails.append(BytesParser(policy=policy.default).parse(fh))
    return sorted(mails, key=lambda m: str(m["Date"]))


def body(msg) -> str:
    return msg.get_body(preferencelist=("plain",)).get_content()


def folder(tmp_path: Path, name: str = "") -> list[Path]:
    """The mail files of the inbox (``name`` "") or of its folder ``.name``."""
    base = tmp_path / "mail" / "inbox" / (f".{name}" if name else "")
    return sorted(p for sub in ("new", "cur") if (base / sub).is_dir() for p in (base / sub).iterdir())


def order_of(tmp_path: Path, name: str, mails) -> bytes:
    """The order mail ``name``'s bot writes from the newest of ``mails`` to it."""
    address = dict(PLAYERS)[name]
    bot = Bot(name, address, DEFAULT_ADDRESS, random.Random(1))
    mine = [m for m in mails if canonical_address(str(m["To"])) == address]
    order = bot.receive(mine)
    assert order is not None, f"{name} has nothing to order"
    return order.as_bytes()


def deliver(tmp_path: Path, raw: bytes) -> None:
    mailbox.Maildir(str(tmp_path / "mail" / "inbox")).add(raw)


def lines(output: str) -> list[str]:
    return [SECTION.sub("", l) for l in output.splitlines()]


# ---------------------------------------------------------------- a missing game file
def test_a_missing_game_file_keeps_its_mail_in_the_inbox_and_fails_run_and_doctor(cli, tmp_path):
    assert cli(*NEW).exit_code == 0
    order = order_of(tmp_path, "Ann", outbox(tmp_path))
    game = tmp_path / "games" / "ridge.yaml"
    backup = game.read_bytes()
    assert cli("run").exit_code == 0  # the games index knows ridge
    game.unlink()
    deliver(tmp_path, order)

    r = cli("run")
    assert r.exit_code == 1
    assert f"error: game ridge: its file {game} is missing (the games index knows the game); its mails " \
           "stay in the inbox until the file is back" in r.output
    assert len(folder(tmp_path)) == 1 and folder(tmp_path, "ignored") == []
    r = cli("doctor")
    assert r.exit_code == 1
    assert f"FAIL  game ridge: its file {game} is missing" in r.output
    assert "`pbem forget ridge` if the game was removed on purpose" in r.output
    assert cli("run").exit_code == 1 and len(folder(tmp_path)) == 1  # again: still waiting

    game.write_bytes(backup)  # back from the backup
    r = cli("run")
    assert r.exit_code == 0, r.output
    assert "1 order(s) applied" in r.output
    assert folder(tmp_path) == [] and len(folder(tmp_path, "processed")) == 1
    assert [h["player"] for h in yaml.safe_load(game.read_text())["history"]] == ["Ann"]
    assert cli("doctor").exit_code == 0


def test_forget_drops_a_game_removed_on_purpose(cli, tmp_path):
    assert cli(*NEW).exit_code == 0 and cli("run").exit_code == 0
    assert cli("forget", "ridge").exit_code == 1  # its file is still there
    (tmp_path / "games" / "ridge.yaml").unlink()
    r = cli("forget", "ridge")
    assert r.exit_code == 0 and "Game ridge forgotten" in r.output
    deliver(tmp_path, order_of(tmp_path, "Ann", outbox(tmp_path)))
    assert cli("run").exit_code == 0  # a mail for no game from no player: set aside
    assert folder(tmp_path) == [] and len(folder(tmp_path, "ignored")) == 1


# ---------------------------------------------------------------- the spool
def test_spool_list_retry_and_clean(cli, tmp_path, smtp_sink):
    smtp_config(tmp_path, smtp_sink)
    smtp_sink.reject_recipients["bob@example.org"] = "450 4.2.1 Mailbox busy"
    r = cli(*NEW)  # the game is created (exit 0): Bob's welcome waits in the spool
    assert r.exit_code == 0 and ("Game ridge: created; 1 mail(s) of the game could not be sent now and wait "
                                 "in the spool: the next `pbem run` sends them.") in r.stderr.splitlines()
    assert "Welcome mails waiting in the spool (the next `pbem run` sends them): Bob <bob@example.org>" in r.stdout
    assert sorted(canonical_address(str(m.message["To"])) for m in smtp_sink.messages) == \
        ["ann@example.org", "cy@example.net"]
    r = cli("spool", "list")
    assert r.exit_code == 0
    (waiting,) = r.output.splitlines()
    name = waiting.split()[1]
    assert waiting.startswith(f"waiting  {name}  to bob@example.org  welcome  game ridge (Bob)  "
                              "1 attempt(s), next 20")
    assert "last error: " in waiting and "450 4.2.1 Mailbox busy" in waiting

    smtp_sink.reject_recipients.clear()
    assert cli("run").exit_code == 0 and len(smtp_sink.messages) == 2  # its retry time has not come
    assert cli("spool", "retry", "nosuchname").exit_code == 1
    r = cli("spool", "retry")
    assert r.exit_code == 0 and "1 mail(s) sent, 0 still waiting." in r.output
    assert canonical_address(str(smtp_sink.messages[-1].message["To"])) == "bob@example.org"
    assert cli("spool", "list").output == "The spool is empty.\n"

    # a run killed between removing a sent mail's two files left its metadata
    orphan = tmp_path / "spool" / "00000000000000000001-00001-000001.json"
    orphan.write_text(json.dumps({"kind": "status"}))
    old = time.time() - 120
    os.utime(orphan, (old, old))
    young = tmp_path / "spool" / "00000000000000000002-00001-000001.json"
    young.write_text("{}")  # maybe being written right now: left alone
    assert "orphan   00000000000000000001-00001-000001" in cli("spool", "list").output
    doctor = lines(cli("doctor").output)
    assert "NOTE  spool: 1 metadata file(s) without their mail (00000000000000000001-00001-000001.json): " \
           "left by a run killed while removing a sent mail; harmless, never sent; `pbem spool clean` " \
           "removes them" in doctor
    r = cli("spool", "clean")
    assert r.exit_code == 0 and f"removed {orphan}" in r.output and "1 file(s) removed." in r.output
    assert not orphan.exists() and young.exists()


# ---------------------------------------------------------------- bounces and addresses
def test_bounce_then_set_address_tells_the_player_at_the_new_address(cli, tmp_path, smtp_sink):
    smtp_config(tmp_path, smtp_sink)
    smtp_sink.reject_recipients["bob@example.org"] = "550 5.1.1 <bob@example.org>: no such user"
    r = cli(*NEW)  # the game is created (exit 0); Bob's welcome was refused for good
    assert r.exit_code == 0
    assert "Welcome mails sent to: Ann <ann@example.org>, Cy <cy@example.net>" in r.stdout
    assert ("error: game ridge: the welcome to Bob <bob@example.org> was refused for good (see `pbem bounces "
            "list`); give the player another address with `pbem player set-address ridge Bob ADDRESS`.") \
        in r.stderr.splitlines()
    r = cli("bounces", "list")
    assert r.output == "bob@example.org (Bob in game ridge): refused by the mail server with code 550\n"

    for address, why in [("bob@a.org, eve@b.org", "2 addresses"),
                         ("ann@example.org", "ann@example.org is the address of Ann in game ridge")]:
        r = cli("player", "set-address", "ridge", "Bob", address)
        assert r.exit_code == 1 and why in r.output, r.output
    r = cli("player", "set-address", "ridge", "Zed", "zed@example.org")
    assert r.exit_code == 1 and "game ridge has no player 'Zed'; its players are Ann, Bob, Cy" in r.output
    before = len(smtp_sink.messages)
    r = cli("player", "set-address", "ridge", "bob", "Bob B <Bob@New.example>")
    assert r.exit_code == 0, r.output
    assert r.output == ("Game ridge: Bob now plays as bob@new.example (was bob@example.org); a status mail to "
                        "bob@new.example waits in the spool for the next `pbem run`.\n")
    spooled = sorted((tmp_path / "spool").glob("*.eml"))
    # the address the seat has already (any case): nothing changed, no second mail
    r = cli("player", "set-address", "ridge", "Bob", "BOB@new.example")
    assert r.exit_code == 1 and r.output == "Error: nothing changed: Bob already plays as bob@new.example\n"
    assert sorted((tmp_path / "spool").glob("*.eml")) == spooled
    players = yaml.safe_load((tmp_path / "games" / "ridge.yaml").read_text())["players"]
    assert [p["address"] for p in players] == ["ann@example.org", "bob@new.example", "cy@example.net"]
    assert cli("bounces", "list").output == "No bounced addresses.\n"
    assert cli("replay", "ridge").exit_code == 0

    assert cli("run").exit_code == 0
    sent = smtp_sink.messages[before:]
    assert sorted(m.rcpt_tos for m in sent) == [("bob@new.example",), ("op@example.org",)]
    told = next(m for m in sent if m.rcpt_tos == ("bob@new.example",))
    alert = next(m for m in sent if m.rcpt_tos == ("op@example.org",))
    assert "A mail to bob@example.org (game ridge) was refused permanently" in body(alert.message)
    text = body(told.message)
    assert "Note: the moderator now writes to you at bob@new.example; send your orders from this " \
           "address." in text
    # the player answers from the new address: the order is taken
    (welcome,) = (tmp_path / "spool" / "failed").glob("*.eml")  # the welcome that bounced
    with open(welcome, "rb") as fh:
        welcome_mail = BytesParser(policy=policy.default).parse(fh)
    deliver(tmp_path, order_of(tmp_path, "Bob", [welcome_mail]).replace(b"bob@example.org", b"bob@new.example"))
    r = cli("run")
    assert r.exit_code == 0 and "1 order(s) applied" in r.output, r.output


def test_bounces_clear(cli, tmp_path, smtp_sink):
    smtp_config(tmp_path, smtp_sink)
    for address in ("bob@example.org", "cy@example.net"):
        smtp_sink.reject_recipients[address] = "550 5.1.1 no such user"
    assert cli(*NEW).exit_code == 0  # created; the two welcomes refused for good
    assert len(cli("bounces", "list").output.splitlines()) == 2
    r = cli("bounces", "clear", "nobody@example.org")
    assert r.exit_code == 1 and "no bounce is remembered for nobody@example.org" in r.output
    r = cli("bounces", "clear", "Bob@Example.org")
    assert r.exit_code == 0 and r.output == "Forgot 1 bounce(s): bob@example.org.\n"
    assert cli("bounces", "list").output == "cy@example.net (Cy in game ridge): refused by the mail server with code 550\n"
    assert cli("bounces", "clear").output == "Forgot 1 bounce(s): cy@example.net.\n"
    assert cli("bounces", "list").output == "No bounced addresses.\n"
    assert "FAIL  spool/failed: 2 mail(s) refused permanently" in cli("doctor").output
    r = cli("spool", "clean", "--failed")
    assert r.exit_code == 0 and "4 file(s) removed." in r.output
    assert "spool/failed" not in cli("doctor").output


# ---------------------------------------------------------------- repair
def test_repair_from_history_shows_the_edit_then_writes_with_yes(cli, tmp_path):
    assert cli(*NEW).exit_code == 0
    deliver(tmp_path, order_of(tmp_path, "Ann", outbox(tmp_path)))
    assert cli("run").exit_code == 0
    path = tmp_path / "games" / "ridge.yaml"
    good = yaml.safe_load(path.read_text())
    assert cli("repair", "ridge", "--from-history").output == \
        "Game ridge: the state and log agree with the history; nothing to repair.\n"

    edited = yaml.safe_load(path.read_text())
    money = edited["state"]["money"]["Ann"]
    edited["state"]["money"]["Ann"] = money + 5
    path.write_text(yaml.safe_dump(edited, sort_keys=False))
    assert cli("replay", "ridge").exit_code == 1
    raw = path.read_bytes()
    r = cli("repair", "ridge", "--from-history")
    assert r.exit_code == 0
    assert f"--- {path} (state, as the file has it)\n+++ state rebuilt from seed + history\n" in r.output
    changed = [l for l in r.output.splitlines() if l[:1] in "+-" and l[:3] not in ("+++", "---")]
    assert changed == [f"-    Ann: {money + 5}", f"+    Ann: {money}"]  # state: money: Ann
    assert "Game ridge: edited outside the moderator in: state." in r.output
    assert "Nothing written; `pbem repair ridge --from-history --yes` writes the rebuilt game." in r.output
    assert path.read_bytes() == raw

    r = cli("repair", "ridge", "--from-history", "--yes")
    assert r.exit_code == 0 and "Written: ridge's state rebuilt from its history." in r.output
    assert cli("replay", "ridge").exit_code == 0
    assert yaml.safe_load(path.read_text())["state"] == good["state"]
    assert yaml.safe_load(path.read_text())["history"] == good["history"]

    # a history that does not replay: nothing to rebuild from
    edited = yaml.safe_load(path.read_text())
    edited["history"][0]["order"] = "fly to the moon"
    path.write_text(yaml.safe_dump(edited, sort_keys=False))
    r = cli("repair", "ridge", "--from-history", "--yes")
    assert r.exit_code == 1 and "history entry 1 (Ann: 'fly to the moon') does not apply" in r.output


# ---------------------------------------------------------------- restore
def test_restore_puts_the_games_mail_back_and_the_orders_are_applied_again(cli, tmp_path):
    assert cli(*NEW).exit_code == 0
    path = tmp_path / "games" / "ridge.yaml"
    backup = path.read_bytes()
    welcomes = outbox(tmp_path)
    for name in ("Ann", "Bob"):
        deliver(tmp_path, order_of(tmp_path, name, welcomes))
    deliver(tmp_path, b"From: stranger@else.org\r\nTo: x@y.org\r\nSubject: hello\r\n"
                      b"Message-ID: <s1@else.org>\r\n\r\nhi\r\n")
    assert cli("run").exit_code == 0
    history = yaml.safe_load(path.read_text())["history"]
    assert [h["player"] for h in history] == ["Ann", "Bob"]
    assert len(folder(tmp_path, "processed")) == 2 and len(folder(tmp_path, "ignored")) == 1

    path.write_bytes(backup)  # the file restored from a backup older than both orders
    r = cli("restore", "ridge")
    assert r.exit_code == 0 and "2 mail(s) of game ridge put back into the inbox" in r.output
    assert len(folder(tmp_path)) == 2 and folder(tmp_path, "processed") == []
    assert len(folder(tmp_path, "ignored")) == 1  # the stranger's mail is no mail of ridge
    r = cli("run")
    assert r.exit_code == 0 and "2 order(s) applied" in r.output, r.output
    again = yaml.safe_load(path.read_text())["history"]
    assert [(h["player"], h["order"], h["message_id"]) for h in again] == \
        [(h["player"], h["order"], h["message_id"]) for h in history]
    assert cli("replay", "ridge").exit_code == 0


# ---------------------------------------------------------------- exit codes, logging, passwords
def test_exit_codes(cli, tmp_path):
    assert cli("run").exit_code == 1  # no games directory: no mail read
    assert cli(*NEW).exit_code == 0
    assert cli("run").exit_code == 0
    assert cli("doctor").exit_code == 0
    assert cli("run", "--no-such-option").exit_code == 2
    assert cli("replay", "nosuchgame").exit_code == 1
    (tmp_path / "games" / "ridge.yaml").unlink()
    assert cli("doctor").exit_code == 1


def test_log_file_and_level(cli, tmp_path):
    assert cli(*NEW).exit_code == 0
    log = tmp_path / "pbem.log"
    assert cli("--log-file", str(log), "--log-level", "info", "run").exit_code == 0
    text = log.read_text()
    assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO cycle: ", text, re.M), text
    assert cli("--log-file", str(log), "--log-level", "error", "run").exit_code == 0
    assert log.read_text() == text  # nothing at level error
    r = cli("--log-file", str(tmp_path / "no" / "such" / "dir.log"), "run")
    assert r.exit_code == 1 and "cannot open the log file" in r.output


def test_doctor_show_and_replay_work_without_the_mail_passwords(cli, tmp_path, monkeypatch):
    assert cli(*NEW).exit_code == 0
    monkeypatch.delenv("OPERATOR_TEST_IMAP", raising=False)
    (tmp_path / "pbem.yaml").write_text(yaml.safe_dump({
        "games_dir": "games", "spool_dir": "spool",
        "imap": {"host": "127.0.0.1", "port": 1, "security": "none", "username": "up",
                 "password_env": "OPERATOR_TEST_IMAP"},
        "maildir": {"outbox": "mail/outbox"},
    }))
    r = cli("doctor")
    assert r.exit_code == 1
    out = lines(r.output)
    assert any(l.startswith("FAIL  configuration: ") and "the password variable(s) $OPERATOR_TEST_IMAP are "
               "not set" in l for l in out), r.output
    assert "NOTE  IMAP 127.0.0.1:1 (none): not checked: $OPERATOR_TEST_IMAP is not set" in out
    assert any(l.startswith("OK    game ridge: 0 order(s) replay") for l in out)
    assert cli("show", "ridge").exit_code == 0
    assert cli("replay", "ridge").exit_code == 0
    assert cli("list").exit_code == 0
    r = cli("run")
    assert r.exit_code == 1 and "environment variable OPERATOR_TEST_IMAP is not set" in r.output


def test_every_doctor_line_names_a_section_of_the_guide(cli, tmp_path):
    headings = {m.group(1) for m in re.finditer(r"^#{2,4} (.+)$",
                (Path(pbem.__file__).parent / "docs" / "operations.md").read_text(), re.M)}
    assert cli(*NEW).exit_code == 0 and cli("run").exit_code == 0
    (tmp_path / "spool" / "failed").mkdir()
    (tmp_path / "spool" / "failed" / "x.eml").write_bytes(b"To: gone@example.org\r\n\r\nhi\r\n")
    out = cli("doctor").output.splitlines()
    named = [SECTION.search(l) for l in out[:-1]]
    assert all(named), out
    assert {m.group(1) for m in named} <= headings, {m.group(1) for m in named} - headings
    assert len({m.group(1) for m in named}) >= 7


# ---------------------------------------------------------------- running as a service
DOCS = Path(pbem.__file__).parent / "docs"


def test_the_systemd_units_run_pbem_and_verify(tmp_path):
    service, timer, loop = ((DOCS / n).read_text() for n in ("pbem.service", "pbem.timer", "pbem-loop.service"))
    assert "Type=oneshot" in service and re.search(r"^ExecStart=/\S+/pbem .* run$", service, re.M)
    assert "OnUnitInactiveSec=5min" in timer and "WantedBy=timers.target" in timer
    assert re.search(r"^ExecStart=/\S+/pbem .* run --loop --interval 300$", loop, re.M)
    for unit in (service, loop):  # the journal: nothing sends the log elsewhere
        assert "--log-file" not in unit and "StandardOutput" not in unit
        assert "EnvironmentFile=/etc/pbem/env" in unit
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    import subprocess
    import sys
    for name, text in (("pbem.service", service), ("pbem.timer", timer), ("pbem-loop.service", loop)):
        # the example paths do not exist here: a real executable, an optional env file
        text = text.replace("/srv/pbem/venv/bin/pbem", sys.executable).replace(
            "EnvironmentFile=/etc/pbem/env", "EnvironmentFile=-/etc/pbem/env")
        (tmp_path / name).write_text(text)
    p = subprocess.run(["systemd-analyze", "verify", "pbem.service", "pbem.timer", "pbem-loop.service"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr


def test_the_cron_line_of_the_guide_names_pbem_by_its_absolute_path():
    guide = (DOCS / "operations.md").read_text()
    crons = re.findall(r"^\*/5 \* \* \* \* .*$", guide, re.M)
    assert crons
    for line in crons:
        command = line.split("&&", 1)[1].split()
        program = next(w for w in command if "=" not in w)
        assert program.startswith("/") and program.endswith("/pbem"), line
