"""``pbem doctor`` against a real Dovecot and aiosmtpd: all well, and each problem
an operator meets (wrong port, wrong password, a game file that does not replay, a
stuck spool, bounced mail, a held lock, a long outage, a template or the board
missing from the installation) named in plain words."""
from __future__ import annotations

import json
import os
import re
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from filelock import FileLock

import pbem
from moderator.config import load_config
from moderator.moderation.cycle import Moderator
from moderator.store.bookkeeping import Bookkeeping
from servers import free_port

PLAYERS = [("Ann", "ann@example.org"), ("Bob", "bob@example.org")]
ENV = "DOCTOR_IMAP_PASSWORD"


@pytest.fixture
def setup(tmp_path, dovecot, smtp_sink, monkeypatch):
    """A configuration on the test servers with one game and one cycle run;
    ``write(**changes)`` rewrites the configuration."""
    monkeypatch.setenv(ENV, dovecot.password)
    cfg = tmp_path / "pbem.yaml"
    base = {
        "moderator": {"address": "moderator@up.example"},
        "operator": "op@up.example",
        "games_dir": "games",
        "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                 "username": dovecot.username, "password_env": ENV, "timeout": 5},
        "smtp": {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none", "timeout": 5},
    }

    def write(**changes):
        data = json.loads(json.dumps(base))
        for section, values in changes.items():
            data[section].update(values)
        cfg.write_text(yaml.safe_dump(data))
        return cfg

    write()
    mod = Moderator(load_config(cfg))
    mod.create_game("ridge", PLAYERS, seed=3)
    assert mod.run_cycle().ok
    return cfg, write


def doctor(cfg):
    result = CliRunner().invoke(pbem.main, ["--config", str(cfg), "doctor"], catch_exceptions=False)
    return result.exit_code, result.output


SECTION = re.compile(r"  \[docs/operations\.md: ([^\]]+)\]$")


def line(output: str, start: str) -> str:
    """The first line of ``output`` starting with ``start``, without the section
    of the guide it names."""
    hits = [l for l in output.splitlines() if l.startswith(start)]
    assert hits, f"no line starting with {start!r} in:\n{output}"
    return SECTION.sub("", hits[0])


def test_all_well(setup, smtp_sink, dovecot):
    cfg, _ = setup
    sent = len(smtp_sink.messages)
    code, out = doctor(cfg)
    assert code == 0, out
    assert out.rstrip().endswith("All checks passed.")
    assert "FAIL" not in out
    assert "problems are mailed to op@up.example" in line(out, "OK    configuration: ")
    assert "is writable" in line(out, "OK    games directory: ")
    assert "0 order(s) replay to the recorded state (phase initial, waiting for Ann, Bob)" in \
        line(out, "OK    game ridge: ")
    imap = line(out, f"OK    IMAP {dovecot.host}:{dovecot.port} (none): ")
    assert f"login as {dovecot.username!r} works; INBOX holds 0 mail(s) (UIDVALIDITY " in imap
    assert "MOVE offered" in line(out, "OK    IMAP capabilities: ")
    assert "UIDPLUS offered" in out
    smtp = line(out, f"OK    SMTP {smtp_sink.host}:{smtp_sink.port} (none): ")
    assert "EHLO answered 250" in smtp and smtp.endswith("no mail sent")
    assert "no mail waiting to be sent" in line(out, "OK    spool: ")
    assert "free" in line(out, "OK    cycle lock: ")
    assert "outage_after: 24 hours" in line(out, "OK    last successful cycle: ")
    assert len(smtp_sink.messages) == sent  # the doctor sent nothing
    assert dovecot.folders() == ["INBOX", "Ignored", "Processed"]


def test_wrong_smtp_port(setup):
    cfg, write = setup
    port = free_port()
    write(smtp={"port": port})
    code, out = doctor(cfg)
    assert code == 1
    assert "cannot talk to the server" in line(out, f"FAIL  SMTP 127.0.0.1:{port} (none): ")
    assert out.rstrip().endswith("1 problem(s) found; docs/operations.md says how to recover from each.")


def test_wrong_imap_port_and_password(setup, dovecot):
    cfg, write = setup
    port = free_port()
    write(imap={"port": port})
    code, out = doctor(cfg)
    assert code == 1
    assert "connect failed: ConnectionRefusedError" in line(out, f"FAIL  IMAP 127.0.0.1:{port} (none): ")
    write(imap={"password_env": "DOCTOR_WRONG"})
    os.environ["DOCTOR_WRONG"] = "not the password"
    try:
        code, out = doctor(cfg)
    finally:
        del os.environ["DOCTOR_WRONG"]
    assert code == 1
    assert "refused the login" in line(out, f"FAIL  IMAP 127.0.0.1:{dovecot.port} (none): ")


def test_configuration_missing(tmp_path):
    code, out = doctor(tmp_path / "nope.yaml")
    assert code == 1
    assert "configuration file not found" in line(out, "FAIL  configuration: ")


def test_problems_are_named(setup, tmp_path):
    cfg, _ = setup
    config = load_config(cfg)
    # a game file whose history does not give its state
    path = config.games_dir / "ridge.yaml"
    data = yaml.safe_load(path.read_text())
    data["state"]["money"]["Ann"] += 1
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    # a mail waiting for a retry for two days, and one refused for good
    now = datetime.now(timezone.utc)
    spool = config.spool_dir
    (spool / "00000000000000000001-00001-000001.eml").write_bytes(b"To: bob@example.org\r\n\r\nhi\r\n")
    (spool / "00000000000000000001-00001-000001.json").write_text(json.dumps({
        "created": (now - timedelta(days=2)).isoformat(), "attempts": 9,
        "last_error": "421 try later", "next_try": now.isoformat()}))
    (spool / "failed").mkdir()
    (spool / "failed" / "x.eml").write_bytes(b"To: gone@example.org\r\n\r\nhi\r\n")
    (spool / "failed" / "x.json").write_text(json.dumps({"error": "550 5.1.1 no such user"}))
    # the moderator's memory: no successful cycle for two days, SMTP failing
    with Bookkeeping.in_spool(spool) as bk:
        bk.set_last_success(now - timedelta(days=2))
        bk.set_smtp_failing_since(now - timedelta(days=2))
        bk.set_bounce("gone@example.org", "550 5.1.1 no such user")

    with FileLock(str(spool / "cycle.lock"), timeout=0):  # a cycle "running"
        code, out = doctor(cfg)
    assert code == 1
    assert "replaying the history does not give the recorded state (differs in: money)" in \
        line(out, "FAIL  game ridge: ")
    spooled = line(out, "FAIL  spool: ")
    assert "1 mail(s) waiting to be sent, the oldest spooled 2.0 days ago" in spooled
    assert "421 try later" in spooled
    assert "x.eml to gone@example.org: 550 5.1.1 no such user" in line(out, "FAIL  spool/failed: ")
    assert f"held by process {os.getpid()} (alive" in line(out, "NOTE  cycle lock: ")
    assert "2.0 days ago" in line(out, "FAIL  last successful cycle: ")
    assert "accepted nothing since" in line(out, "FAIL  outgoing mail: ")
    assert "gone@example.org: 550" in line(out, "NOTE  bounced addresses: ")
    assert "5 problem(s) found" in out


# ---------------------------------------------------------------- the installation
@pytest.fixture
def maildir_config(tmp_path, monkeypatch):
    """A configuration on local Maildirs (no server needed)."""
    monkeypatch.delenv("PBEM_TEMPLATES", raising=False)
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(yaml.safe_dump({"games_dir": "games", "spool_dir": "spool",
                                   "maildir": {"inbox": "mail/inbox", "outbox": "mail/outbox"}}))
    return cfg


def test_template_list_is_the_shipped_folder():
    from moderator.doctor import TEMPLATE_FILES
    from moderator.render import packaged_templates

    root = Path(str(packaged_templates()))
    shipped = [*root.rglob("*.txt"), *root.glob("mail/*.html")]
    assert sorted(TEMPLATE_FILES) == sorted(p.relative_to(root).as_posix() for p in shipped)


def test_installation_checked(maildir_config):
    code, out = doctor(maildir_config)
    assert code == 0, out
    templates = line(out, "OK    templates: ")
    assert "the 43 templates load from " in templates and "pbem is " in templates
    assert "North America (pbem): 44 cities" in line(out, "OK    default board: ")


def test_missing_template_and_board_are_named(maildir_config, tmp_path, monkeypatch):
    import moderator.render
    import moderator.rules.board
    from moderator.doctor import install_mode

    shipped = tmp_path / "shipped"
    shutil.copytree(str(moderator.render.packaged_templates()), shipped)
    (shipped / "words" / "notices.txt").unlink()
    (shipped / "status.txt").write_text("{% if %}\n")
    monkeypatch.setattr(moderator.render, "packaged_templates", lambda: shipped)
    monkeypatch.setattr(moderator.render.templates, "packaged_templates", lambda: shipped)  # the loader's
    monkeypatch.setattr(moderator.rules.board, "DEFAULT_BOARD_PATH", tmp_path / "gone.yaml")
    code, out = doctor(maildir_config)
    assert code == 1
    mode, fix = install_mode()
    templates = line(out, "FAIL  templates: ")
    assert "status.txt does not load: line 1: " in templates
    assert "words/notices.txt not found" in templates
    assert f"pbem is {mode}" in templates and templates.endswith(fix)
    board = line(out, "FAIL  default board: ")
    assert f"{tmp_path / 'gone.yaml'} not found" in board and board.endswith(fix)
    assert "2 problem(s) found" in out

    monkeypatch.setattr(moderator.render, "packaged_templates", lambda: None)
    monkeypatch.setattr(moderator.render.templates, "packaged_templates", lambda: None)
    code, out = doctor(maildir_config)
    assert "the shipped templates (package data moderator/templates/) are missing" in \
        line(out, "FAIL  templates: ")


def test_operator_templates(maildir_config, tmp_path, monkeypatch):
    own = tmp_path / "own"
    own.mkdir()
    (own / "help.txt").write_text("Our own help for {{ game_id }}.\n")
    monkeypatch.setenv("PBEM_TEMPLATES", str(own))
    code, out = doctor(maildir_config)
    assert code == 0, out
    assert f"1 of them from $PBEM_TEMPLATES ({own})" in line(out, "OK    templates: ")
    monkeypatch.setenv("PBEM_TEMPLATES", str(tmp_path / "nowhere"))
    code, out = doctor(maildir_config)
    assert code == 1
    assert "which is not a folder" in line(out, "FAIL  templates: ")

def test_state_is_read_from_an_old_moderator_yaml_not_yet_imported(tmp_path):
    from moderator.config import Config
    from moderator.doctor import check_state
    from moderator.store.state import ModeratorState

    config = Config(games_dir=tmp_path / "games", spool_dir=tmp_path / "spool")
    now = datetime(2031, 3, 1, 12, tzinfo=timezone.utc)
    assert [c.line() for c in check_state(config, now)] == [
        "NOTE  last successful cycle: none yet  [docs/operations.md: The last successful cycle]"]
    old = ModeratorState.load(tmp_path / "spool" / "moderator.yaml")
    old.last_success = (now - timedelta(hours=1)).isoformat(timespec="seconds")
    old.pending_moves = ["1:7"]
    old.save()
    lines = [c.line() for c in check_state(config, now)]
    assert lines[0].startswith("OK    last successful cycle: 2031-03-01T11:00:00+00:00, 60 minutes ago")
    assert "1 handled mail(s) could not be moved" in lines[1]
    assert (tmp_path / "spool" / "moderator.yaml").exists()  # the doctor changes nothing
    assert not (tmp_path / "spool" / "pbem.sqlite3").exists()


def test_a_damaged_bookkeeping_database_is_a_failure(tmp_path):
    from moderator.config import Config
    from moderator.doctor import check_state

    config = Config(games_dir=tmp_path / "games", spool_dir=tmp_path / "spool")
    (tmp_path / "spool").mkdir()
    (tmp_path / "spool" / "pbem.sqlite3").write_bytes(b"not a database at all" * 100)
    (check,) = check_state(config, datetime.now(timezone.utc))
    assert check.status == "FAIL" and "pbem.sqlite3" in check.text


# ---------------------------------------------------------------- disk, lock, orphans
def test_disk_space_fails_under_the_threshold_and_says_how_much_is_free(tmp_path):
    from moderator.config import Config
    from moderator.doctor import check_disk

    config = Config(games_dir=tmp_path / "games", spool_dir=tmp_path / "spool")
    (tmp_path / "games").mkdir()
    usage = shutil.disk_usage(tmp_path)
    (ok,) = check_disk(config)
    assert ok.status == "OK" and ok.section == "Disk space"
    assert re.fullmatch(rf"\d+\.\d (GB|MB|kB) free \(\d+\.\d%\) for games \({tmp_path / 'games'}\) "
                        rf"and spool and bookkeeping \({tmp_path / 'spool'}\)", ok.text), ok.text
    (full,) = check_disk(config, min_free=usage.total)  # more than there is: as good as full
    assert full.status == "FAIL" and full.text.startswith("only ") and "a cycle may fail to save" in full.text
    (share,) = check_disk(config, min_free=0, min_fraction=1.0)
    assert share.status == "FAIL" and "or 100%" in share.text


def test_a_lock_held_far_beyond_a_cycle_fails_with_its_age(tmp_path):
    from moderator.config import Config
    from moderator.doctor import LOCK_STUCK_AFTER, check_lock

    config = Config(games_dir=tmp_path / "games", spool_dir=tmp_path / "spool")
    spool = tmp_path / "spool"
    spool.mkdir()
    now = datetime.now(timezone.utc)
    with FileLock(str(spool / "cycle.lock"), timeout=0):
        (spool / "cycle.owner").write_text(json.dumps({"pid": os.getpid(), "at": (now - timedelta(seconds=40)).isoformat()}))
        check = check_lock(config, now)
        assert check.status == "NOTE" and f"held by process {os.getpid()} (alive" in check.text
        assert "for 40 seconds: a cycle is running now (it fails after 60 minutes)" in check.text
        stuck = now - timedelta(seconds=LOCK_STUCK_AFTER + 3600)
        (spool / "cycle.owner").write_text(json.dumps({"pid": os.getpid(), "at": stuck.isoformat()}))
        check = check_lock(config, now)
        assert check.status == "FAIL" and check.section == "The cycle lock"
        assert "for 2.0 hours, longer than 60 minutes: that cycle hangs" in check.text
        assert f"`kill {os.getpid()}`" in check.text
        # another process's note: the age is the holder's own (this process's) age
        (spool / "cycle.owner").write_text(json.dumps({"pid": 1, "at": stuck.isoformat()}))
        check = check_lock(config, now)
        assert check.status in ("NOTE", "FAIL") and " for " in check.text
    assert check_lock(config, now).text == "free (no cycle is running)"


def test_a_cycle_notes_when_it_took_the_lock(setup):
    cfg, _ = setup
    config = load_config(cfg)
    before = datetime.now(timezone.utc)
    assert Moderator(config).run_cycle().ok
    owner = json.loads((config.spool_dir / "cycle.owner").read_text())
    assert owner["pid"] == os.getpid()
    assert before <= datetime.fromisoformat(owner["at"]) <= datetime.now(timezone.utc)


def test_a_last_cycle_ahead_of_the_clock_is_said_so_not_zero_seconds_ago(tmp_path):
    """A cycle run with `pbem run --now` in the future, then `pbem doctor` on the real
    clock: the doctor says the cycle is ahead of its clock (not "0 seconds ago"), and
    with the same --now the check is the usual one (found by a new user)."""
    from moderator.config import Config
    from moderator.doctor import check_state
    from moderator.store.state import ModeratorState

    config = Config(games_dir=tmp_path / "games", spool_dir=tmp_path / "spool")
    ran = datetime(2031, 3, 20, 0, tzinfo=timezone.utc)
    old = ModeratorState.load(tmp_path / "spool" / "moderator.yaml")
    old.last_success = ran.isoformat(timespec="seconds")
    old.save()
    earlier = ran - timedelta(days=2, hours=12)
    assert [c.line() for c in check_state(config, earlier)][0] == (
        "NOTE  last successful cycle: 2031-03-20T00:00:00+00:00, 2.5 days after this check's clock "
        "(2031-03-17T12:00:00+00:00): a cycle was run with --now ahead of the real time; "
        "`pbem doctor --now TIMESTAMP` checks at that time  [docs/operations.md: The last successful cycle]")
    assert [c.line() for c in check_state(config, ran + timedelta(hours=1))][0].startswith(
        "OK    last successful cycle: 2031-03-20T00:00:00+00:00, 60 minutes ago")
