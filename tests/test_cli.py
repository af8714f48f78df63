"""The command line: pbem new / run / replay / rules / board check / demo, on the
embedded default (games in ./games, Maildirs in ./mail) of a temp directory."""
from __future__ import annotations

import mailbox
from email import policy
from email.parser import BytesParser
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import pbem
from moderator.rules.board import DEFAULT_BOARD_PATH

THREE = ["--player", "Ann=ann@example.org", "--player", "Bob=bob@example.org",
         "--player", "Cy=cy@example.net"]


@pytest.fixture
def cli(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(pbem.main, list(args), catch_exceptions=False)

    return invoke


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_new_writes_game_and_welcomes(cli, tmp_path):
    r = cli("new", "ridge", *THREE, "--seed", "7", "--ruleset", "second-edition", "--hidden-money")
    assert r.exit_code == 0, r.output
    assert "Created game ridge (second-edition, seed 7)" in r.output
    data = yaml.safe_load((tmp_path / "games" / "ridge.yaml").read_text())
    assert data["seed"] == 7 and data["ruleset"] == "second-edition"
    assert data["options"] == {"spread_dividends": False, "up_only_by_swap": False,
                               "hidden_money": True, "dead_track_redraw": False, "hints": False}
    assert [p["name"] for p in data["players"]] == ["Ann", "Bob", "Cy"]
    assert all(len(p["secret"]) == 8 for p in data["players"])
    outbox = mailbox.Maildir(str(tmp_path / "mail" / "outbox"), create=False)
    assert len(outbox) == 3
    # the local inbox is there for the first order mails, before any `pbem run`
    assert len(mailbox.Maildir(str(tmp_path / "mail" / "inbox"), create=False)) == 0
    assert {"cur", "new", "tmp"} <= {p.name for p in (tmp_path / "mail" / "inbox").iterdir()}
    for key in outbox.keys():
        with outbox.get_file(key) as fh:
            msg = BytesParser(policy=policy.default).parse(fh)
        body = msg.get_body(preferencelist=("plain",)).get_content()
        assert "Options: spread_dividends off, up_only_by_swap off, hidden_money on, dead_track_redraw off, hints off." in body
        assert "Ruleset: second-edition." in body


@pytest.mark.parametrize(
    "args, message",
    [
        (["--ruleset", "third-edition", *THREE], "'third-edition'; choose first-edition or second-edition"),
        (["--player", "Ann=ann@example.org"], "Union Pacific is for 2-6 players, not 1"),
        ([arg for i in range(7) for arg in ("--player", f"P{i}=p{i}@example.org")],
         "Union Pacific is for 2-6 players, not 7"),
        (["--player", "Ann=ann@example.org", "--player", "Bob=ANN@example.org"],
         "two players have the same address ann@example.org"),
        (["--player", "Ann=ann@example.org", "--player", "Ann=bob@example.org"],
         "two players have the same name"),
        (["--player", "Ann", "--player", "Bob=bob@example.org"], "write a player as NAME=ADDRESS"),
        (["--player", "Ann=not-an-address", "--player", "Bob=bob@example.org"],
         "is not a mail address"),
    ],
)
def test_new_bad_arguments_write_nothing(cli, tmp_path, args, message):
    before = snapshot(tmp_path)
    r = cli("new", "ridge", *args)
    assert r.exit_code != 0
    assert message in r.output
    assert snapshot(tmp_path) == before


def test_new_existing_game_refused(cli, tmp_path):
    assert cli("new", "ridge", *THREE, "--seed", "1").exit_code == 0
    before = snapshot(tmp_path)
    r = cli("new", "ridge", *THREE, "--seed", "2")
    assert r.exit_code != 0
    assert "game 'ridge' already exists" in r.output
    assert snapshot(tmp_path) == before


def test_replay_ok_and_tampered(cli, tmp_path):
    assert cli("new", "ridge", *THREE, "--seed", "3").exit_code == 0
    r = cli("replay", "ridge")
    assert r.exit_code == 0 and "0 orders replayed; the state matches the file" in r.output
    path = tmp_path / "games" / "ridge.yaml"
    data = yaml.safe_load(path.read_text())
    data["state"]["up_pile"] += 1
    path.write_text(yaml.safe_dump(data))
    r = cli("replay", "ridge")
    assert r.exit_code != 0
    assert "replaying the history does not give the recorded state (differs in: up_pile)" in r.output


def test_rules_prints_options(cli):
    assert cli("new", "ridge", *THREE, "--seed", "3", "--spread-dividends").exit_code == 0
    r = cli("rules", "ridge")
    assert r.exit_code == 0
    assert "Ruleset: first-edition" in r.output
    assert "spread_dividends   on" in r.output
    assert "hidden_money       off" in r.output


def test_board_check(cli, tmp_path):
    r = cli("board", "check", str(DEFAULT_BOARD_PATH))
    assert r.exit_code == 0 and "the board is valid" in r.output
    bad = tmp_path / "bad.yaml"
    data = yaml.safe_load(DEFAULT_BOARD_PATH.read_text())
    data["companies"]["WW"]["types"] = ["plain", "black", "white", "black-white"]
    bad.write_text(yaml.safe_dump(data))
    r = cli("board", "check", str(bad))
    assert r.exit_code == 1
    assert "WW" in r.output and "1-3" in r.output


def test_run_without_games_dir_fails_clearly(cli, tmp_path):
    r = cli("run")
    assert r.exit_code == 1
    assert f"the games directory {tmp_path / 'games'} does not exist" in r.output


def test_run_on_empty_inbox(cli):
    assert cli("new", "ridge", *THREE, "--seed", "3").exit_code == 0
    r = cli("run")
    assert r.exit_code == 0
    assert "0 mail(s)" in r.output


def test_game_ids_differing_only_in_case_refused(cli):
    assert cli("new", "ridge", *THREE, "--seed", "3").exit_code == 0
    r = cli("new", "Ridge", *THREE, "--seed", "3")
    assert r.exit_code != 0
    assert "game 'ridge' already exists; choose an id that differs in more than case" in r.output
