"""The order language (moderator/orders.py).

The golden cases live in tests/orders_golden.yaml (input lines -> canonical action
text or exact error reason); the round-trip test plays whole random games on the
default board and checks that every legal action's text reads back to that action.
"""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
import yaml

from moderator.rules.actions import Build, Invest, Pass, Start, Take
from moderator.rules.board import Board
from moderator.rules.engine import Game
from moderator.orders.parser import COMMANDS, OrderError, command, parse_turn

GOLDEN = Path(__file__).with_name("orders_golden.yaml")
MINI = Path(__file__).with_name("boards") / "mini.yaml"


def _golden() -> list[dict]:
    cases = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))
    assert isinstance(cases, list) and cases
    return cases


def _case_id(case: dict) -> str:
    text = " / ".join(case["lines"]) or "(no lines)"
    return text if len(text) <= 60 else text[:57] + "..."


@pytest.fixture(scope="module")
def board() -> Board:
    return Board.default()


def test_golden_file_is_well_formed():
    cases = _golden()
    assert len(cases) >= 80
    for case in cases:
        assert set(case) in ({"lines", "action"}, {"lines", "error"}), case
        assert isinstance(case["lines"], list)
        assert all(isinstance(line, str) for line in case["lines"]), case


@pytest.mark.parametrize("case", _golden(), ids=_case_id)
def test_golden(case, board):
    lines = case["lines"]
    if "action" in case:
        action = parse_turn(lines, board)
        assert str(action) == case["action"]
        # the canonical text reads back to the same action
        assert parse_turn([case["action"]], board) == action
    else:
        with pytest.raises(OrderError) as info:
            parse_turn(lines, board)
        assert info.value.reason == case["error"]
        # a named refusal (templates/words/orders.txt words it; tests/test_order_words.py)
        assert re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", info.value.code)
        # the error names the line it is about
        assert info.value.line in lines + [" / ".join(lines)]
        assert info.value.reason in str(info.value)


def _check_all_legal(game: Game, player: str, board: Board, seen: dict) -> None:
    for action in game.legal_actions(player):
        text = str(action)
        if text not in seen:
            seen[text] = parse_turn([text], board)
        assert seen[text] == action, f"{text!r} reads as {seen[text]!r}, not {action!r}"


@pytest.mark.parametrize("seed, players", [(1, 2), (2, 3), (3, 4)])
def test_round_trip_whole_games(seed, players, board):
    """Every legal action of every position of a random game reads back from its
    canonical text: parse_turn([str(a)], board) == a."""
    rng = random.Random(seed)
    game = Game.new(board, [f"P{i}" for i in range(players)], seed=seed)
    seen: dict = {}
    turns = 0
    while game.phase != "over":
        turns += 1
        assert turns < 2000, "the game does not end"
        for player in game.waiting_for():
            _check_all_legal(game, player, board, seen)
            game.push(player, rng.choice(game.legal_actions(player)))
    assert {Start, Build, Invest} <= {type(a) for a in seen.values()}


@pytest.mark.parametrize(
    "action",
    [
        Start("UP"),
        Build("KCC", "DEN-KCY"),
        Build("KCC", "DEN-KCY", "white"),
        Build("EPRG", "ELP-PHX", "joker"),
        Build("EPRG", "ELP-PHX", "joker", "black-white", Take("display", place=4), "UP"),
        Build("KCC", "DEN-KCY", "plain", None, Take("none")),
        Build("KCC", "DEN-KCY", "black", None, Take("display", "EPRG"), "WW"),
        Build("KCC", "DEN-KCY", None, None, Take("up"), "SFRB"),
        Invest(("UP",)),
        Invest(("KCC", "KCC", "KCC")),
        Invest(("DM", "MS"), "black"),
        Pass(),
        Pass("joker"),
    ],
    ids=str,
)
def test_round_trip_every_form(action, board):
    """Forms a game may not reach by chance, partial ones included."""
    assert parse_turn([str(action)], board) == action


def test_lines_and_parts_combine(board):
    one = parse_turn(["build KCC DEN-KCY black; take stack; swap MRR"], board)
    many = parse_turn(["swap MRR", "take stack", "build KCC DEN-KCY black"], board)
    assert one == many == Build("KCC", "DEN-KCY", "black", None, Take("stack"), "MRR")


def test_error_names_the_offending_line(board):
    with pytest.raises(OrderError) as info:
        parse_turn(["build KCC DEN-KCY black", "take pile", "swap MRR"], board)
    assert info.value.line == "take pile"
    assert info.value.code == "pile_is_ambiguous"
    assert "'take stack' or 'take UP'" in info.value.reason


@pytest.mark.parametrize(
    "line, expected",
    [
        ("help", "help"),
        ("HELP!", "help"),
        ("?", "help"),
        ("status please", "status"),
        ("- history", "history"),
        ("send the rules", "rules"),
        ("new secret", "secret new"),
        ("secret new", "secret new"),
        ("take stack", None),
        ("help me build KCC DEN-KCY", None),
        ("", None),
    ],
)
def test_command(line, expected):
    assert command(line) == expected
    assert expected is None or expected in COMMANDS + ("secret new",)


def test_other_board_cities():
    """Cities come from the board: the mini board calls Marquette MAR."""
    mini = Board.load(MINI)
    assert parse_turn(["build KCC kansas city - denver black", "take UP"], mini) == Build(
        "KCC", "DEN-KCY", "black", None, Take("up")
    )
    assert parse_turn(["build Marquette Marquette - Chicago white; take stack"], mini) == Build(
        "MRR", "CHI-MAR", "white", None, Take("stack")
    )
    with pytest.raises(OrderError) as info:
        parse_turn(["build KCC DEN-NYC black"], mini)
    assert "'NYC' is not a city on the board" in info.value.reason


# ---------------------------------------------------------------- templates/help.txt

HELP = Path(__file__).resolve().parent.parent / "templates" / "help.txt"


def _render_help(**context) -> str:
    """help.txt rendered by the moderator's own environment (its i18n extension:
    English here)."""
    from moderator.render import environment

    return environment().get_template(HELP.name).render(**context)


@pytest.mark.parametrize(
    "context",
    [{}, {"game_id": "ridge", "moderator_address": "up@example.org"},
     {"game_id": None, "moderator_address": None}],
    ids=["no variables", "variables", "None"],
)
def test_help_renders(context):
    text = _render_help(**context)
    assert "{{" not in text and "{%" not in text and "None" not in text
    assert "game: " + (context.get("game_id") or "GAME") + "\n" in text
    assert "[pbem:" not in text  # no secret in a subject any more (issue 11)
    for line in text.splitlines():
        assert len(line) <= 80, line


def test_help_tables_match_components():
    import re

    from moderator.rules.components import COMPANIES, TRACK_CARD_COUNTS, UP_SHARES

    text = _render_help()
    for c in COMPANIES.values():
        row = rf"\b{c.abbr}\s+{re.escape(c.name)}\s+{c.trains}\s+{c.shares}\s*$"
        assert re.search(row, text, re.M), f"no table row for {c.abbr}"
    assert re.search(rf"\bUP\s+Union Pacific\s+none\s+{UP_SHARES}\s*$", text, re.M)
    for card, count in TRACK_CARD_COUNTS.items():
        assert re.search(rf"^(TRACK CARDS)?\s+{card}\s+.*\s{count} cards$", text, re.M), card
    for word in COMMANDS:
        assert re.search(rf"^\s+{word}\s", text, re.M), word


def _help_examples() -> list[list[str]]:
    """The example mails of help.txt: blocks of lines indented 6 spaces in the
    EXAMPLES section."""
    text = _render_help()
    section = text[text.index("\nEXAMPLES"):]
    blocks, current = [], []
    for line in section.splitlines()[1:]:
        if line.startswith("      "):
            current.append(line.strip())
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


def test_help_examples_parse(board):
    examples = _help_examples()
    assert len(examples) >= 6
    for lines in examples:
        action = parse_turn(lines, board)
        assert parse_turn([str(action)], board) == action


def test_help_one_line_orders_parse(board):
    """The single orders shown outside the examples read as documented."""
    build = "build KCC DEN-KCY white"
    for take, expected in [
        ("take stack", Take("stack")),
        ("take UP", Take("up")),
        ("take KCC", Take("display", "KCC")),
        ("take display 2", Take("display", place=2)),
        ("take none", Take("none")),
    ]:
        assert parse_turn([build, take], board).take == expected
    assert parse_turn(["start KCC"], board) == Start("KCC")
    assert parse_turn(["invest 2 KCC", "discard plain"], board) == Invest(("KCC", "KCC"), "plain")
    assert parse_turn(["invest KCC UP"], board) == Invest(("KCC", "UP"))
    assert parse_turn(["pass; discard white"], board) == Pass("white")
    assert parse_turn(["game: ridge", "secret: k3x9p2qa", "secret new", "pass"], board) == Pass()


def test_overlong_line_refused_unread():
    """A 240,000-character line (e.g. a pasted separator) is refused at once,
    not parsed: one mail must not stall the cycle."""
    board = Board.default()
    with pytest.raises(OrderError) as err:
        parse_turn(["-" * 240000], board)
    assert err.value.reason == (
        "this line is too long (240000 characters); write one order per line, "
        "e.g. 'build KCC DEN-KCY white'"
    )
