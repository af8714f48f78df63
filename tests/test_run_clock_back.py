"""`pbem run --now` never runs the game clocks back: a time before the last
successful cycle is refused (exit status 2, click's usage error, one line that
names both times) and changes nothing; the same time again, or a later one, runs.
Found by a new user's check: a cycle "in the past" was accepted and printed
deadlines that were not true."""
from __future__ import annotations

import hashlib

import yaml
from click.testing import CliRunner

import pbem
from test_deadlines import H, T0, Clocked


def _files(root):
    return {p.relative_to(root): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_cycle_before_the_last_one_is_refused(tmp_path, monkeypatch):
    h = Clocked(tmp_path, settings={"deadline": 48 * 3600})
    for name in ("Ann", "Bob", "Cy"):
        h.move(name)
    h.run(T0 + 2 * H)  # the last successful cycle: T0 + 2 h
    (tmp_path / "pbem.yaml").write_text(yaml.safe_dump({
        "moderator": {"address": "moderator@up.example"}, "operator": "gm@example.org",
        "games_dir": str(tmp_path / "games"), "spool_dir": str(tmp_path / "spool"),
        "maildir": {"inbox": str(tmp_path / "mail" / "inbox"), "outbox": str(tmp_path / "mail" / "outbox")}}))
    monkeypatch.chdir(tmp_path)
    before = _files(tmp_path / "games")
    result = CliRunner().invoke(pbem.main, ["run", "--now", "2026-12-01T13:00:00Z"])
    assert result.exit_code == 2
    assert ("Error: Invalid value for --now: 2026-12-01T13:00:00+00:00 is before the last cycle "
            "(2026-12-01T14:00:00+00:00); the game clocks never run back: give a time at or "
            "after it") in result.output
    assert _files(tmp_path / "games") == before
    same = CliRunner().invoke(pbem.main, ["run", "--now", "2026-12-01T14:00:00Z"])
    assert same.exit_code in (0, 1), same.output  # runs (1: nothing changed)
    later = CliRunner().invoke(pbem.main, ["run", "--now", "2026-12-01T15:00:00+01:00"])
    assert later.exit_code in (0, 1), later.output  # 14:00 UTC: the same instant
