"""The moderator's clock on every command that starts a wait, and the game
master's commands once a game is over.

- ``pbem new --now`` and ``pbem gm --now`` act at the given time, as ``pbem run
  --now`` does: a game created with ``--now`` has its first deadline counted from
  then, not from the wall clock (a new user simulating a game over weeks found
  the first deadline weeks away from every later ``--now``).
- Once the final dividend is paid, the commands on seats and on the clock
  (eject, replace, pause, resume, deadline, extend, end) are refused with what
  still works; ``message``, ``observe`` and ``undo`` still act.
"""
from __future__ import annotations

import shutil
from datetime import datetime, timezone
from email import message_from_bytes, policy
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import pbem
from moderator.config import Config
from moderator.moderation import gm
from moderator.moderation.cycle import Moderator
from moderator.moderation.deadlines import due

FINISHED = Path(__file__).parent / "fixtures" / "games" / "v3" / "v3-spanish-bots-finished.yaml"
PLAYERS = (("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.org"))


@pytest.fixture
def cli(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pbem.yaml").write_text(yaml.safe_dump({"operator": "op@example.com"}))
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(pbem.main, list(args), catch_exceptions=False)

    return invoke


def _config(tmp_path) -> Config:
    return Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "mail" / "inbox",
                  maildir_outbox=tmp_path / "mail" / "outbox", spool_dir=tmp_path / "spool",
                  operator="op@example.com")


def test_pbem_new_now_counts_the_first_deadline_from_then(cli, tmp_path):
    r = cli("new", "ridge", "--seed", "7", "--deadline", "48h", "--now", "2026-03-01T12:00:00Z",
            *[x for n, a in PLAYERS for x in ("--player", f"{n}={a}")])
    assert r.exit_code == 0, r.output
    record = Moderator(_config(tmp_path)).store.load("ridge")
    assert record.clock["since"] == "2026-03-01T12:00:00+00:00"
    ann = record.player_by_name("Ann")
    assert due(record, ann) == datetime(2026, 3, 3, 12, 0, tzinfo=timezone.utc)
    # the welcome mails tell that deadline (their Date header stays the real time
    # of sending, as with ``pbem run --now``)
    outbox = tmp_path / "mail" / "outbox"
    welcomes = [message_from_bytes(p.read_bytes(), policy=policy.default) for p in (outbox / "new").iterdir()]
    assert len(welcomes) == 3
    for mail in welcomes:
        assert "2026-03-03 12:00 UTC" in mail.get_body(("plain",)).get_content()


def test_pbem_new_now_refuses_a_time_that_is_no_timestamp(cli, tmp_path):
    r = cli("new", "ridge", "--now", "next tuesday", *[x for n, a in PLAYERS for x in ("--player", f"{n}={a}")])
    assert r.exit_code == 2
    assert "'next tuesday' is not an ISO 8601 time" in r.output
    assert not (tmp_path / "games" / "ridge.yaml").exists()


def test_pbem_gm_now_acts_at_the_given_time(cli, tmp_path):
    r = cli("new", "ridge", "--seed", "7", "--deadline", "24h", "--now", "2026-03-01T12:00:00Z",
            *[x for n, a in PLAYERS for x in ("--player", f"{n}={a}")])
    assert r.exit_code == 0, r.output
    r = cli("gm", "ridge", "pause", "--now", "2026-03-01T18:00:00Z")
    assert r.exit_code == 0, r.output
    record = Moderator(_config(tmp_path)).store.load("ridge")
    assert record.settings["paused"] == "2026-03-01T18:00:00+00:00"
    assert record.gm_log[-1]["at"] == "2026-03-01T18:00:00+00:00"


@pytest.fixture
def finished(tmp_path):
    config = _config(tmp_path)
    config.games_dir.mkdir(parents=True)
    shutil.copy(FINISHED, config.games_dir / "fin.yaml")
    return Moderator(config)


@pytest.mark.parametrize("line", ["eject Ana", "replace Ana Dora=dora@example.org", "pause",
                                  "resume", "deadline 24h", "extend Ana 24h", "end"])
def test_a_seat_or_clock_command_after_the_final_dividend_is_refused(finished, line):
    path = finished.store.path("fin")
    before = path.read_bytes()
    assert finished.store.load("fin").game.phase == "over"
    with pytest.raises(gm.GmRefusal) as caught:
        finished.manage("fin", line)
    command = line.split()[0]
    assert caught.value.code == "gm_game_over"
    assert caught.value.text() == (
        f'The game is over (the final dividend is paid): "{command}" would change nothing now. '
        "What still works: undo N force [reason] (to take back the last orders), message TEXT, "
        "observe ADDRESS.")
    assert path.read_bytes() == before


def test_message_and_observe_still_act_after_the_final_dividend(finished):
    done = finished.manage("fin", "observe watcher@example.com")
    assert "watcher@example.com" in done
    record = finished.store.load("fin")
    assert record.observers == ["watcher@example.com"]
    assert [e["command"] for e in record.gm_log][-1] == "observe watcher@example.com"
    finished.manage("fin", "message Thanks for playing!")
    assert finished.store.load("fin").gm_log[-1]["command"] == "message Thanks for playing!"


def test_pbem_list_says_a_paused_game_is_paused_and_since_when(cli, tmp_path):
    """A paused game has no deadline while the pause lasts: `pbem list` says
    "paused" with the time of the pause in the DEADLINE column, and the deadline
    again once the game master resumes (moved by the pause's length, 6 hours)."""
    r = cli("new", "ridge", "--seed", "7", "--deadline", "24h", "--now", "2026-03-01T12:00:00Z",
            *[x for n, a in PLAYERS for x in ("--player", f"{n}={a}")])
    assert r.exit_code == 0, r.output

    def deadline_cell():
        lines = cli("list").output.splitlines()
        assert lines[0].split()[5] == "DEADLINE"
        return [c.strip() for c in lines[1].split("  ") if c.strip()][5]

    assert deadline_cell() == "2026-03-02 12:00"
    assert cli("gm", "ridge", "pause", "--now", "2026-03-01T18:00:00Z").exit_code == 0
    assert deadline_cell() == "paused 2026-03-01 18:00"
    assert cli("gm", "ridge", "resume", "--now", "2026-03-02T00:00:00Z").exit_code == 0
    assert deadline_cell() == "2026-03-02 18:00"
