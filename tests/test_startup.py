"""Start-up cost: ``pbem --help``, ``pbem --version`` and a Maildir ``pbem run`` import only what they use.

Each case runs ``pbem.py`` in a fresh interpreter (cwd = the repository root) with
``-X importtime`` and reads the names of the imported modules from its report.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent

#: Heavy or server-only modules that no ``--help`` needs.
NOT_FOR_HELP = (
    "imapclient", "aiosmtplib", "asyncio", "jinja2", "yaml",
    "moderator.moderation", "moderator.moderation.cycle", "moderator.rules.engine",
    "moderator.rules.board", "moderator.store.gamefile", "moderator.orders.parser",
    "moderator.render", "moderator.mail.read", "moderator.doctor",
)

#: What a cycle on local Maildirs never needs.
NOT_FOR_MAILDIR = ("imapclient", "aiosmtplib", "asyncio",
                   "moderator.mail.transport.imap", "moderator.mail.transport.smtp")

_LINE = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)\s*$")


def imported(*args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run ``python -X importtime pbem.py ARGS`` at the repository root: the
    finished process and the names of every module it imported."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "pbem.py", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    names = {m.group(1) for m in map(_LINE.match, proc.stderr.splitlines()) if m}
    assert "click" in names, proc.stderr[-2000:]  # the report was read
    return proc, names


@pytest.mark.parametrize("args", [["--help"], ["new", "--help"], ["run", "--help"],
                                  ["doctor", "--help"], ["board", "check", "--help"]],
                         ids=" ".join)
def test_help_imports_nothing_heavy(args):
    proc, names = imported(*args)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Usage:" in proc.stdout
    assert sorted(names & set(NOT_FOR_HELP)) == []


def test_version_imports_nothing_heavy():
    proc, names = imported("--version")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert re.fullmatch(r"pbem \d+\.\d+\S*\n", proc.stdout)
    assert sorted(names & set(NOT_FOR_HELP)) == []


def test_maildir_run_imports_no_server_library(tmp_path):
    (tmp_path / "games").mkdir()
    config = tmp_path / "pbem.yaml"
    config.write_text(yaml.safe_dump({
        "games_dir": "games", "spool_dir": "spool",
        "maildir": {"inbox": "mail/inbox", "outbox": "mail/outbox"},
    }))
    proc, names = imported("--config", str(config), "run")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "0 mail(s)" in proc.stdout
    assert "moderator.mail.transport.maildir" in names and "moderator.moderation.cycle" in names
    assert sorted(names & set(NOT_FOR_MAILDIR)) == []
