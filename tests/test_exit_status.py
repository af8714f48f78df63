"""Exit statuses that mean what they say (issue 23): every command that changes a
game or the spool exits 0 once its change is saved, also when its mails cannot
be sent now (they wait in the spool, one line on the standard error says how
many and that the next `pbem run` sends them), and 1 only when nothing changed.
One test per row of the table "Exit status of the commands that change a game"
in docs/operations.md.

Real parts: a real aiosmtpd server (``servers.SmtpSink``) scripted to answer
``421`` for a window, the game files, the spool and the SQLite bookkeeping of a
game played by real mails through the moderator (Maildir inbox).  The headline
fault test runs ``pbem`` as separate processes, as cron would.
"""
from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import pbem
from moderator.store.gamefile import GameStore
from moderator.store.spool import Spool
from servers import SmtpSink, _SinkHandler
from test_deadlines import H, T0, Clocked

REPO = Path(__file__).resolve().parent.parent
GID = "ridge"
ADDRESSES = {"Ann": "ann@example.org", "Bob": "bob@example.org", "Cy": "cy@example.net"}
LATER = T0 + 10 * H  # when the commands run (after the moves below)
WAITING = ("Game ridge: saved; {n} mail(s) of the game could not be sent now and wait in the spool: "
           "the next `pbem run` sends them.")


class Refusing(_SinkHandler):
    """The sink's handler, answering every DATA with ``421`` while ``refusing``."""

    refusing = False

    async def handle_DATA(self, server, session, envelope):
        if self.refusing:
            return "421 4.3.2 Service not available, try again later"
        return await super().handle_DATA(server, session, envelope)


@pytest.fixture
def sink():
    s = SmtpSink()
    s.handler = Refusing(s)
    s.controller.handler = s.handler
    with s:
        yield s


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """A 3-player game (72 h deadlines) after the three initial investments and
    two moves, each mailed by its player and applied by a cycle: 5 history entries."""
    root = tmp_path_factory.mktemp("played")
    h = Clocked(root, settings={"deadline": 72 * 3600})
    for name in ADDRESSES:
        h.move(name)
    h.run(T0 + H)
    for k in range(2):
        h.move(h.load().game.public_view()["to_move"])
        h.run(T0 + (2 + k) * H)
    assert len(h.load().history) == 5
    assert not any(root.joinpath("spool").glob("*.eml"))
    return root


@pytest.fixture
def table(played, tmp_path, sink, monkeypatch):
    """A copy of ``played`` in ``tmp_path`` whose ``pbem.yaml`` sends by SMTP to
    ``sink``; the current directory."""
    root = tmp_path / "t"
    shutil.copytree(played, root)
    (root / "pbem.yaml").write_text(yaml.safe_dump({
        "moderator": {"address": "moderator@up.example"},
        "operator": "gm@example.org",
        "games_dir": str(root / "games"),
        "spool_dir": str(root / "spool"),
        "maildir": {"inbox": str(root / "mail" / "inbox"), "outbox": str(root / "mail" / "outbox")},
        "smtp": {"host": "127.0.0.1", "port": sink.port, "security": "none", "timeout": 5},
    }))
    monkeypatch.chdir(root)
    return root


def game_file(root: Path) -> dict:
    return yaml.safe_load((root / "games" / f"{GID}.yaml").read_text(encoding="utf-8"))


def waiting(root: Path) -> list[dict]:
    return [e.meta for e in Spool(root / "spool").entries()]


def pbem_cli(*args: str):
    """``pbem ARGS`` in this process (click's runner; stdout and stderr apart)."""
    return CliRunner().invoke(pbem.main, list(args), catch_exceptions=False)


def at(when: datetime) -> str:
    return when.isoformat()


@contextmanager
def games_disk_full(root: Path, monkeypatch):
    """While it lasts, the file system of ``root/games`` is full: every fsync of
    a file there fails with ENOSPC (the game files are written atomically:
    a temporary file, fsync, rename)."""
    real_fsync = os.fsync

    def fsync(fd):
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(root / "games")):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    try:
        yield
    finally:
        monkeypatch.setattr(os, "fsync", real_fsync)


# ------------------------------------------------------------------ the fault test
def run_pbem(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "pbem.py"), *args], cwd=root, capture_output=True,
                          text=True, timeout=120)


def test_undo_in_a_421_window_exits_0_undoes_one_move_and_the_next_run_sends_its_mails_once(table, sink):
    """`pbem gm ridge undo 1` while the SMTP server answers 421: exit 0, the one
    line on stderr, exactly one move undone (5 history entries before, 4 after),
    its three status mails (one per player) in the spool; the next `pbem run`
    sends each of them exactly once, and a later run sends nothing more."""
    before = game_file(table)
    sink.handler.refusing = True
    r = run_pbem(table, "gm", GID, "undo", "1", "--now", at(LATER))
    assert r.returncode == 0, r.stderr
    assert WAITING.format(n=3) in r.stderr.splitlines()
    assert not any(line.startswith("Error") for line in r.stderr.splitlines())
    assert r.stdout.startswith(f"The game master took back the last 1 action ({before['history'][-1]['player']}: ")
    after = game_file(table)
    assert len(before["history"]) == 5 and after["history"] == before["history"][:4]
    assert [e["command"] for e in after["gm_log"]] == ["undo 1"]
    kept = waiting(table)
    assert sorted((m["kind"], m["player"]) for m in kept) == [("status", "Ann"), ("status", "Bob"),
                                                              ("status", "Cy")]
    assert all("421" in m["last_error"] for m in kept)
    assert sink.messages == []
    # a script that retries on exit 1 would not run it again; the window closes
    sink.handler.refusing = False
    r = run_pbem(table, "run", "--now", at(LATER + 2 * H))  # past the spool's retry time
    assert r.returncode == 0, r.stderr
    got = [(m.rcpt_tos, m.message["Message-ID"]) for m in sink.messages]
    assert sorted(rcpt for rcpt, _ in got) == [(ADDRESSES["Ann"],), (ADDRESSES["Bob"],), (ADDRESSES["Cy"],)]
    assert len({mid for _, mid in got}) == 3
    assert all("took back" in m.message.get_body(("plain",)).get_content() for m in sink.messages)
    assert waiting(table) == []
    r = run_pbem(table, "run", "--now", at(LATER + 3 * H))
    assert r.returncode == 0 and len(sink.messages) == 3
    assert game_file(table)["history"] == before["history"][:4]  # the next run undid nothing more


# ------------------------------------------------------------------ pbem gm, a row per command
def _paused(root: Path) -> None:
    r = pbem_cli("gm", GID, "pause", "--now", at(LATER - H))
    assert r.exit_code == 0, r.output
    assert r.stderr == ""  # every mail sent: nothing to say on the standard error
    for entry in Spool(root / "spool").entries():  # the pause's own mails, sent (the sink takes them)
        raise AssertionError(f"left in the spool: {entry.meta}")


A, B, C = ADDRESSES["Ann"], ADDRESSES["Bob"], ADDRESSES["Cy"]
SAVED = {  # command -> (set-up, what the saved game file shows, who is mailed: gm.py's tell_everyone
    # and _status_to_all mail every player who gets mail, an ejected one no more; replace welcomes
    # the newcomer and tells the others; observe welcomes the observer only)
    "pause Bob is ill": (None, lambda d: d["settings"]["paused"] == at(LATER), [A, B, C]),
    "resume": (_paused, lambda d: d["settings"]["paused"] is None and d["clock"]["shift"] == 3600, [A, B, C]),
    "deadline 48h": (None, lambda d: d["settings"]["deadline"] == 48 * 3600, [A, B, C]),
    "extend Cy 24h": (None, lambda d: d["clock"]["extended"] == {"Cy": 24 * 3600}, [A, B, C]),
    "eject Bob": (None, lambda d: "Bob" in d["resigned"] and d["players"][1]["bot"] is True, [A, C]),
    "replace Bob Dora=dora@example.org": (None, lambda d: d["players"][1]["address"] == "dora@example.org",
                                          [A, C, "dora@example.org"]),
    "undo 1": (None, lambda d: len(d["history"]) == 4, [A, B, C]),
    "end we stop here": (None, lambda d: d["ended"]["reason"] == "we stop here" and d["ended"]["at"] == at(LATER),
                         [A, B, C]),
    "message Dinner is at eight": (None, lambda d: d["gm_log"][-1]["command"] == "message Dinner is at eight",
                                   [A, B, C]),
    "observe watcher@example.com": (None, lambda d: d["observers"] == ["watcher@example.com"],
                                    ["watcher@example.com"]),
}

REFUSED = {  # command -> (set-up, the Error line): nothing may change
    "pause": (_paused, f"Error: The game is paused already (since {at(LATER - H)}); "),
    "resume": (None, "Error: The game is not paused."),
    "deadline soon": (None, "Error: "),
    "extend Ann 24h": (None, "Error: "),
    "eject Zed": (None, "Error: "),
    "replace Bob Ann2=ann@example.org": (None, "Error: "),
    "undo 9": (None, "Error: "),
    "end": (lambda root: pbem_cli("gm", GID, "end", "--now", at(LATER - H)), "Error: "),
    "message": (None, "Error: "),
    "observe not-an-address": (None, "Error: "),
}


@pytest.mark.parametrize("line", list(SAVED))
def test_pbem_gm_exits_0_once_saved_though_the_mails_wait(table, sink, line):
    """Each `pbem gm` command in a 421 window: exit 0, its change in the game file,
    the one stderr line naming the mails waiting; the next `pbem run` sends exactly
    those mails, once each."""
    setup, saved, mailed = SAVED[line]
    if setup:
        setup(table)
    sent_before = len(sink.messages)
    sink.handler.refusing = True
    r = pbem_cli("gm", GID, *line.split(), "--now", at(LATER))
    assert r.exit_code == 0, r.output
    assert saved(game_file(table))
    kept = waiting(table)
    assert kept and all(m["game"] == GID for m in kept)
    assert WAITING.format(n=len(kept)) in r.stderr.splitlines()
    assert WAITING.format(n=len(kept)) not in r.stdout and r.stdout.strip()  # the confirmation, on stdout
    assert len(sink.messages) == sent_before
    sink.handler.refusing = False
    r = pbem_cli("run", "--now", at(LATER + 2 * H))
    assert r.exit_code == 0, r.output
    got = sink.messages[sent_before:]
    assert sorted(r for m in got for r in m.rcpt_tos) == sorted(mailed) and len(kept) == len(mailed)
    assert len({m.message["Message-ID"] for m in got}) == len(mailed)  # each once
    assert waiting(table) == []


@pytest.mark.parametrize("line", list(REFUSED))
def test_pbem_gm_exits_1_only_when_nothing_changed(table, sink, line):
    setup, error = REFUSED[line]
    if setup:
        setup(table)
    path = table / "games" / f"{GID}.yaml"
    before, spool_before, sent_before = path.read_bytes(), waiting(table), len(sink.messages)
    r = pbem_cli("gm", GID, *line.split(), "--now", at(LATER))
    assert r.exit_code == 1, r.output
    assert r.stderr.startswith(error) and len(r.stderr.splitlines()) == 1, r.stderr
    assert path.read_bytes() == before
    assert waiting(table) == spool_before and len(sink.messages) == sent_before


def test_pbem_gm_on_a_locked_game_exits_1_and_changes_nothing(table, monkeypatch):
    from filelock import FileLock

    from moderator.store import gamefile

    original = gamefile.GameStore.lock
    monkeypatch.setattr(gamefile.GameStore, "lock", lambda self, gid, timeout=60: original(self, gid, 0.2))
    path = table / "games" / f"{GID}.yaml"
    before = path.read_bytes()
    with FileLock(str(path) + ".lock"):
        r = pbem_cli("gm", GID, "pause", "--now", at(LATER))
    assert r.exit_code == 1
    assert r.stderr == (f"Error: game {GID} is locked by a running cycle or command ({path}.lock); "
                        "nothing changed: try again\n")
    assert path.read_bytes() == before


def test_pbem_gm_secret_exits_0(table):
    r = pbem_cli("gm", GID, "secret")
    assert r.exit_code == 0 and r.stdout.startswith(f"Game {GID}: game master gm@example.org, secret ")
    assert pbem_cli("gm", "nosuch", "secret").exit_code == 1


# ------------------------------------------------------------------ the operator's commands
NEW = ["new", "g2", "--seed", "3", "--now", at(LATER), "--player", "Ann=ann@example.org",
       "--player", "Bob=bob@example.org"]


def test_pbem_new_exits_0_once_created_though_the_welcomes_wait(table, sink):
    sink.handler.refusing = True
    r = pbem_cli(*NEW)
    assert r.exit_code == 0, r.output
    assert (table / "games" / "g2.yaml").exists()
    assert ("Game g2: created; 2 mail(s) of the game could not be sent now and wait in the spool: "
            "the next `pbem run` sends them.") in r.stderr.splitlines()
    assert "Welcome mails waiting in the spool (the next `pbem run` sends them): Ann <ann@example.org>, " \
           "Bob <bob@example.org>" in r.stdout
    assert sorted(m["player"] for m in waiting(table)) == ["Ann", "Bob"]
    sink.handler.refusing = False
    assert pbem_cli("run", "--now", at(LATER + 2 * H)).exit_code == 0
    assert sorted(m.rcpt_tos for m in sink.messages) == [("ann@example.org",), ("bob@example.org",)]
    before = (table / "games" / "g2.yaml").read_bytes()
    r = pbem_cli(*NEW)  # the same id again: refused, nothing written or sent
    assert r.exit_code == 1 and r.stderr.startswith("Error: ") and "g2" in r.stderr
    assert (table / "games" / "g2.yaml").read_bytes() == before and waiting(table) == []
    r = pbem_cli("new", "g3", "--player", "Ann=ann@example.org")  # one player: no game
    assert r.exit_code == 1 and not (table / "games" / "g3.yaml").exists()


def test_player_set_address_exits_0_saved_and_1_unchanged(table, sink, monkeypatch):
    path = table / "games" / f"{GID}.yaml"
    before = path.read_bytes()
    r = pbem_cli("player", "set-address", GID, "Bob", "ann@example.org")  # Ann's address
    assert r.exit_code == 1 and r.stderr == f"Error: ann@example.org is the address of Ann in game {GID}\n"
    assert path.read_bytes() == before and waiting(table) == []
    with games_disk_full(table, monkeypatch):
        r = pbem_cli("player", "set-address", GID, "Bob", "bob@new.example")
    assert r.exit_code == 1
    assert r.stderr == f"Error: game {GID} could not be saved: No space left on device; nothing changed\n"
    assert path.read_bytes() == before and waiting(table) == []  # no mail about a change not saved
    r = pbem_cli("player", "set-address", GID, "Bob", "bob@new.example")
    assert r.exit_code == 0, r.output
    assert game_file(table)["players"][1]["address"] == "bob@new.example"
    assert [(m["kind"], m["player"]) for m in waiting(table)] == [("status", "Bob")]


def processed(root: Path) -> list[Path]:
    base = root / "mail" / "inbox" / ".processed"
    return sorted(p for sub in ("new", "cur") for p in (base / sub).iterdir())


def inbox(root: Path) -> list[Path]:
    base = root / "mail" / "inbox"
    return sorted(p for sub in ("new", "cur") for p in (base / sub).iterdir())


def test_restore_exits_0_when_all_are_back_1_when_it_stopped_and_again_puts_back_the_rest(table, monkeypatch):
    """The five order mails of the game are in the processed folder.  A restore
    that fails at the second mail (the disk) exits 1 naming the one put back,
    which the bookkeeping no longer counts as answered; running it again puts
    back the other four and exits 0; nothing is applied twice."""
    from moderator.moderation.interpret import mail_id
    from moderator.mail.read import read_mail
    from moderator.store.bookkeeping import Bookkeeping

    assert len(processed(table)) == 5 and inbox(table) == []
    r = pbem_cli("restore", "nosuch")
    assert r.exit_code == 1 and r.stderr.startswith("Error: ") and len(processed(table)) == 5
    renames = []
    original = Path.rename

    def full_disk(self, target):
        renames.append(self)
        if len(renames) == 2:
            raise OSError(28, "No space left on device", str(target))
        return original(self, target)

    monkeypatch.setattr(Path, "rename", full_disk)
    r = pbem_cli("restore", GID)
    monkeypatch.setattr(Path, "rename", original)
    assert r.exit_code == 1
    assert r.stderr.startswith(f"Error: 1 mail(s) of game {GID} were put back into the inbox, then it stopped: ")
    assert r.stderr.endswith(f"; run `pbem restore {GID}` again to put back the rest\n")
    (back,) = inbox(table)
    raw = back.read_bytes()
    with Bookkeeping.in_spool(table / "spool") as bk:
        assert not bk.answered(mail_id(read_mail(raw), raw))
    r = pbem_cli("restore", GID)
    assert r.exit_code == 0 and r.stdout.startswith(f"4 mail(s) of game {GID} put back into the inbox")
    assert len(inbox(table)) == 5 and processed(table) == []
    history = game_file(table)["history"]
    assert pbem_cli("run", "--now", at(LATER)).exit_code == 0
    assert game_file(table)["history"] == history  # every order recognised as applied


def test_repair_exits_0_when_written_1_when_the_history_does_not_replay(table):
    path = table / "games" / f"{GID}.yaml"
    data = game_file(table)
    data["state"]["money"]["Ann"] += 5
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    r = pbem_cli("repair", GID, "--from-history", "--yes")
    assert r.exit_code == 0 and f"Written: {GID}'s state rebuilt from its history." in r.stdout
    assert game_file(table)["state"]["money"]["Ann"] == data["state"]["money"]["Ann"] - 5
    data = game_file(table)
    data["history"][0]["order"] = "fly to the moon"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    before = path.read_bytes()
    r = pbem_cli("repair", GID, "--from-history", "--yes")
    assert r.exit_code == 1 and "does not apply" in r.stderr and path.read_bytes() == before


def test_forget_exits_1_while_the_file_is_there_and_0_once_forgotten(table):
    from moderator.store.bookkeeping import Bookkeeping

    r = pbem_cli("forget", GID)
    assert r.exit_code == 1 and r.stderr.startswith(f"Error: game {GID} still has its file ")
    with Bookkeeping.in_spool(table / "spool") as bk:
        assert GID in bk.game_ids()
    (table / "games" / f"{GID}.yaml").unlink()
    assert pbem_cli("forget", GID).exit_code == 0
    with Bookkeeping.in_spool(table / "spool") as bk:
        assert GID not in bk.game_ids()
    r = pbem_cli("forget", GID)
    assert r.exit_code == 1 and r.stderr == f"Error: the games index does not know a game {GID}\n"


def test_spool_retry_exits_1_while_a_mail_cannot_be_sent_and_0_once_all_are(table, sink):
    assert pbem_cli("player", "set-address", GID, "Bob", "bob@new.example").exit_code == 0
    sink.handler.refusing = True
    r = pbem_cli("spool", "retry")
    assert r.exit_code == 1 and r.stdout == "0 mail(s) sent, 1 still waiting.\n"
    assert len(waiting(table)) == 1 and sink.messages == []
    sink.handler.refusing = False
    r = pbem_cli("spool", "retry")
    assert r.exit_code == 0 and r.stdout == "1 mail(s) sent, 0 still waiting.\n"
    assert [m.rcpt_tos for m in sink.messages] == [("bob@new.example",)] and waiting(table) == []
    r = pbem_cli("spool", "retry", "nosuch")
    assert r.exit_code == 1 and r.stderr == "Error: not waiting in the spool: nosuch (see `pbem spool list`)\n"


def test_spool_clean_and_bounces_clear_exit_0_when_done_1_when_nothing_to_do(table):
    r = pbem_cli("spool", "clean")
    assert r.exit_code == 0 and r.stdout == "0 file(s) removed.\n"
    r = pbem_cli("bounces", "clear", "ann@example.org")
    assert r.exit_code == 1 and r.stderr == "Error: no bounce is remembered for ann@example.org\n"
    r = pbem_cli("bounces", "clear")
    assert r.exit_code == 0 and r.stdout == "Forgot 0 bounce(s).\n"


def test_pbem_gm_with_the_games_disk_full_exits_1_and_the_file_is_as_it_was(table, monkeypatch):
    """The game file cannot be written (ENOSPC at its fsync): exit 1 with one
    Error line, the file byte for byte as before, no temporary file left, and
    none of the command's announcements left in the spool."""
    path = table / "games" / f"{GID}.yaml"
    before = path.read_bytes()
    with games_disk_full(table, monkeypatch):
        r = pbem_cli("gm", GID, "deadline", "48h", "--now", at(LATER))
    assert r.exit_code == 1
    assert r.stderr.startswith(f"Error: game {GID} could not be saved: No space left on device")
    assert r.stderr.endswith("; nothing changed\n") and len(r.stderr.splitlines()) == 1
    assert path.read_bytes() == before
    assert [p.name for p in (table / "games").iterdir() if p.name.endswith(".tmp")] == []
    assert waiting(table) == []  # the players are not told of a change that was not saved


def test_pbem_gm_with_the_smtp_server_down_exits_0_and_the_mails_wait(table, sink):
    """Nothing listens on the SMTP port (connection refused): as for a 421."""
    from servers import free_port

    config = yaml.safe_load((table / "pbem.yaml").read_text())
    config["smtp"]["port"] = free_port()
    (table / "pbem.yaml").write_text(yaml.safe_dump(config))
    r = pbem_cli("gm", GID, "pause", "--now", at(LATER))
    assert r.exit_code == 0, r.output
    assert game_file(table)["settings"]["paused"] == at(LATER)
    assert WAITING.format(n=3) in r.stderr.splitlines()


def test_pbem_gm_while_a_cycle_runs_exits_0_and_leaves_the_sending_to_it(table, sink, monkeypatch):
    """A cycle holds the cycle lock (it sends what the spool holds when it
    flushes): the command saves, does not wait for it, and says the mails wait."""
    from filelock import FileLock

    import moderator.moderation.cycle as cycle

    real = FileLock.acquire

    def quick(self, timeout=None, *args, **kwargs):  # the 10-second wait for the lock, made short
        return real(self, 0.1 if timeout == 10 else timeout, *args, **kwargs)

    monkeypatch.setattr(cycle.FileLock, "acquire", quick)
    with FileLock(str(table / "spool" / "cycle.lock"), thread_local=False):
        r = pbem_cli("gm", GID, "undo", "1", "--now", at(LATER))
    assert r.exit_code == 0, r.output
    assert len(game_file(table)["history"]) == 4
    assert WAITING.format(n=3) in r.stderr.splitlines() and sink.messages == []
    assert pbem_cli("run", "--now", at(LATER)).exit_code == 0  # the next cycle sends them
    assert len(sink.messages) == 3 and waiting(table) == []


# ------------------------------------------------------------------ restore on a real IMAP server
def _mail(sender: str, n: int) -> bytes:
    return (f"From: {sender}\r\nTo: moderator@up.example\r\nSubject: my move\r\n"
            f"Message-ID: <m{n}@players.example>\r\n\r\npass\r\n").encode()


def test_restore_on_dovecot_puts_back_what_it_moved_before_an_error_and_then_the_rest(
        dovecot, tmp_path, monkeypatch):
    """The game's mails in Processed (two) and Ignored (one), a stranger's in
    Ignored.  The server's MOVE of the second folder fails: exit 1 naming the two
    put back, whose keys are no longer answered; the Ignored one still answered
    and in its folder.  Run again: exit 0, the third back; the stranger's stays."""
    from imapclient import IMAPClient
    from imapclient.exceptions import IMAPClientError

    from moderator.config import load_config
    from moderator.moderation.cycle import Moderator
    from moderator.store.bookkeeping import Bookkeeping

    monkeypatch.setenv("PBEM_EXIT_IMAP_PASSWORD", dovecot.password)
    (tmp_path / "pbem.yaml").write_text(yaml.safe_dump({
        "moderator": {"address": "moderator@up.example"}, "operator": "gm@example.org",
        "games_dir": str(tmp_path / "games"), "spool_dir": str(tmp_path / "spool"),
        "maildir": {"outbox": str(tmp_path / "outbox")},
        "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none", "username": dovecot.username,
                 "password_env": "PBEM_EXIT_IMAP_PASSWORD", "timeout": 10}}))
    monkeypatch.chdir(tmp_path)
    Moderator(load_config(tmp_path / "pbem.yaml")).create_game(GID, list(ADDRESSES.items()), seed=5)
    mails = {"Processed": [_mail(ADDRESSES["Ann"], 1), _mail(ADDRESSES["Bob"], 2)],
             "Ignored": [_mail(ADDRESSES["Cy"], 3), _mail("stranger@else.example", 4)]}
    for folder, raws in mails.items():
        for raw in raws:
            dovecot.append(raw, folder=folder)
    with Bookkeeping.in_spool(tmp_path / "spool") as bk:
        for n in (1, 2, 3, 4):
            bk.mark_answered(f"<m{n}@players.example>", GID, T0)
    moves = []
    real_move = IMAPClient.move

    def move(self, messages, folder):
        moves.append(messages)
        if len(moves) == 2:
            raise IMAPClientError("MOVE failed: [SERVERBUG] Internal error")
        return real_move(self, messages, folder)

    monkeypatch.setattr(IMAPClient, "move", move)
    r = pbem_cli("restore", GID)
    assert r.exit_code == 1
    assert r.stderr == (f"Error: 2 mail(s) of game {GID} were put back into the inbox, then it stopped: MOVE "
                        f"failed: [SERVERBUG] Internal error; run `pbem restore {GID}` again to put back the rest\n")
    assert sorted(m.raw for m in dovecot.messages("INBOX")) == sorted(mails["Processed"])
    with Bookkeeping.in_spool(tmp_path / "spool") as bk:
        assert [bk.answered(f"<m{n}@players.example>") for n in (1, 2, 3, 4)] == [False, False, True, True]
    monkeypatch.setattr(IMAPClient, "move", real_move)
    r = pbem_cli("restore", GID)
    assert r.exit_code == 0 and r.stdout.startswith(f"1 mail(s) of game {GID} put back into the inbox")
    assert sorted(m.raw for m in dovecot.messages("INBOX")) == sorted([*mails["Processed"], mails["Ignored"][0]])
    assert [m.raw for m in dovecot.messages("Ignored")] == [mails["Ignored"][1]]
    with Bookkeeping.in_spool(tmp_path / "spool") as bk:
        assert [bk.answered(f"<m{n}@players.example>") for n in (1, 2, 3, 4)] == [False, False, False, True]


def test_pbem_gm_whose_mail_is_refused_for_good_exits_0_and_says_so(table, sink):
    """Bob's address is refused with 550: the pause is saved (exit 0), Ann and Cy
    get their notices, Bob's goes to spool/failed and stderr names it; no mail of
    the game waits, so no line about waiting mails."""
    sink.reject_recipients[ADDRESSES["Bob"]] = "550 5.1.1 no such user"
    r = pbem_cli("gm", GID, "pause", "--now", at(LATER))
    assert r.exit_code == 0, r.output
    assert game_file(table)["settings"]["paused"] == at(LATER)
    assert any(f"ERROR mail to {ADDRESSES['Bob']} (game {GID}) refused permanently: " in line
               and line.endswith("550 5.1.1 no such user)") for line in r.stderr.splitlines()), r.stderr
    assert not any("wait in the spool" in line for line in r.stderr.splitlines())
    assert sorted(m.rcpt_tos for m in sink.messages) == [(ADDRESSES["Ann"],), (ADDRESSES["Cy"],)]
    # the operator's alert of the bounce waits for the next cycle (a mail of no game)
    assert [(m["kind"], m["game"]) for m in waiting(table)] == [("operator", None)]
    assert len(list((table / "spool" / "failed").glob("*.eml"))) == 1


@pytest.mark.parametrize("args", [
    ("new", "mesa", "--player", "Ann=ann@example.org", "--player", "Bob=bob@example.org", "--ruleset", "foo"),
    ("new", "mesa", "--player", "Ann=ann@example.org", "--player", "Bob=bob@example.org", "--deadline", "5x"),
    ("new", "mesa", "--player", "Ann=ann@example.org", "--player", "Bob=bob@example.org", "--grace", "-5m"),
    ("gm", GID, "pause", "--now", "notatime"),
])
def test_a_command_line_that_is_itself_wrong_exits_2_and_changes_nothing(table, sink, args):
    """click's usage error (exit 2, its "Usage:" and "Error:" lines): an option's
    value it does not take; nothing written, nothing spooled or sent (the table's
    exit 2 sentence in docs/operations.md)."""
    path = table / "games" / f"{GID}.yaml"
    before, spool_before, sent_before = path.read_bytes(), waiting(table), len(sink.messages)
    r = pbem_cli(*args)
    assert r.exit_code == 2, r.output
    assert "Error:" in r.output
    assert path.read_bytes() == before and not (table / "games" / "mesa.yaml").exists()
    assert waiting(table) == spool_before and len(sink.messages) == sent_before
