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

import shutil
import subprocess
import sys
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
