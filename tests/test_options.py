"""The ruleset and option tables are the one source: the engine, the CLI flags, the
rules mail and docs/rules.md all name what the tables hold."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import pbem
from moderator.rules.board import Board
from moderator.rules.engine import Game
from moderator.rules.options import OPTION_TABLE, OPTIONS, RULESET_TABLE, RULESETS, check_setup
from moderator.moderation.cycle import rules_text

DOCS = (Path(__file__).resolve().parent.parent / "docs" / "rules.md").read_text()


def test_every_option_has_a_flag_and_help():
    result = CliRunner().invoke(pbem.main, ["new", "--help"])
    assert result.exit_code == 0
    for opt in OPTION_TABLE:
        assert opt.flag in result.output
        assert opt.help in " ".join(result.output.split())


@pytest.mark.parametrize("name", [o.name for o in OPTION_TABLE] + [r.name for r in RULESET_TABLE])
def test_docs_name_every_option_and_ruleset(name):
    assert f"`{name}`" in DOCS


def test_engine_defaults_come_from_the_table():
    game = Game.new(Board.default(), ["Ann", "Bob", "Cy"], seed=1)
    assert game.options == {"spread_dividends": False, "up_only_by_swap": False,
                            "hidden_money": False, "dead_track_redraw": False,
                            "hints": False}
    assert RULESETS == ("first-edition", "second-edition")


@pytest.mark.parametrize("ruleset,dealt", [("first-edition", 4), ("second-edition", 5)])
def test_shares_dealt_per_ruleset(ruleset, dealt):
    game = Game.new(Board.default(), ["Ann", "Bob", "Cy"], seed=3, ruleset=ruleset)
    # the company shares dealt plus the one UP share (rules: Setup, steps 3-4)
    assert all(len(hand) == dealt + 1 for hand in game.share_hands.values())


def test_rules_mail_lists_every_option_from_the_table():
    game = Game.new(Board.default(), ["Ann", "Bob"], seed=1, ruleset="second-edition",
                    options={"hidden_money": True})
    text = rules_text("ridge", game)
    assert "Each player is dealt 5 company shares and 1 UP share; the UP share may not be" in text
    for opt in OPTION_TABLE:
        on = "on " if opt.name == "hidden_money" else "off"
        assert f"  {opt.name:<18} {on}  {opt.help}" in text


@pytest.mark.parametrize("players,ruleset,options,message", [
    (["Ann"], "first-edition", {}, "Union Pacific is for 2-6 players, not 1"),
    (["A", "B", "C", "D", "E", "F", "G"], "first-edition", {}, "Union Pacific is for 2-6 players, not 7"),
    (["Ann", "ann"], "first-edition", {}, "two players have the same name"),
    (["Ann", " "], "first-edition", {}, "a player needs a name"),
    (["Ann", "(imaginary player)"], "first-edition", {}, "'(imaginary player)' is reserved"),
    (["Ann", "Bob"], "third-edition", {}, "unknown ruleset 'third-edition'; choose first-edition or second-edition"),
    (["Ann", "Bob"], "first-edition", {"fast": True}, "unknown option 'fast'"),
])
def test_one_validation_of_a_setup(players, ruleset, options, message):
    with pytest.raises(ValueError) as info:
        check_setup(players, ruleset, options)
    assert str(info.value).startswith(message)
    with pytest.raises(ValueError):
        Game.new(Board.default(), players, seed=1, ruleset=ruleset, options=options)


def test_check_setup_fills_defaults():
    assert check_setup(["Ann", "Bob"], "first-edition", {"hidden_money": 1}) == {**OPTIONS, "hidden_money": True}


@pytest.mark.parametrize("name,message", [
    ("Ann\nBcc", "the player name 'Ann\\nBcc' has control characters"),
    ("Ann\x00", "the player name 'Ann\\x00' has control characters"),
    ("A" * 41, f"the player name '{'A' * 41}' is longer than 40 characters"),
])
def test_player_names_refused(name, message):
    with pytest.raises(ValueError) as info:
        check_setup([name, "Bob"], "first-edition")
    assert str(info.value) == message


def test_forty_characters_and_spaces_and_quotes_are_fine():
    assert check_setup(["A" * 40, "Bob O'Neil \"the rail\""], "first-edition")["hidden_money"] is False
