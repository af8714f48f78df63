"""The strict order notation (moderator.rules.notation): exactly ``str(action)``.

Round trips over every legal action of many positions of seeded random games (2-6
players, both rulesets, every option), refusals of near-misses that the forgiving
mail parser would read, and every order line of the frozen game files.
"""
from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moderator.rules.actions import Build, Invest, Pass, Start, Take
from moderator.rules.components import COMPANIES, TRACK_TYPES, UP
from moderator.rules.engine import Game
from moderator.rules.notation import NotationError, parse_action
from moderator.rules.options import OPTIONS, RULESETS
from moderator.orders.parser import parse_turn

from game_helpers import default_board, mini_board

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "games").glob("v*/*.yaml"))
OPTION_NAMES = sorted(OPTIONS)


def _form(action) -> str:
    """A coarse kind of an action, to show the round trips cover every form."""
    if isinstance(action, Start):
        return "start"
    redraw = "redraw+" if action.redraw else ""
    if isinstance(action, Build):
        card = "joker" if action.space else "card"
        swap = "+swap" if action.swap else ""
        return f"{redraw}build-{card}-take-{action.take.source}{swap}"
    if isinstance(action, Invest):
        n = "two" if len(set(action.shares)) == 2 else ("many" if len(action.shares) > 1 else "one")
        return f"{redraw}invest-{n}" + ("-discard" if action.discard else "")
    return f"{redraw}pass" + ("-discard" if action.discard else "")


def _round_trip_game(board, n_players: int, seed: int, ruleset: str, options: dict[str, bool],
                     every: int = 1, forms: set[str] | None = None) -> int:
    """Play a seeded random game; at every ``every``-th position check every legal
    action's round trip, and every recorded action's.  Returns the actions checked."""
    game = Game.new(board, [f"P{i}" for i in range(n_players)], seed, ruleset, options)
    rng = random.Random(seed)
    checked = 0
    step = 0
    while game.phase != "over":
        for player in game.waiting_for():
            if step % every == 0:
                for action in game.legal_actions(player):
                    text = str(action)
                    assert parse_action(text) == action, text
                    checked += 1
                    if forms is not None:
                        forms.add(_form(action))
            step += 1
            game.push(player, game.random_action(player, rng))
    for _player, action in game.history:
        assert parse_action(str(action)) == action
        assert str(parse_action(str(action))) == str(action)
    return checked


GAMES = [
    # (players, ruleset, options switched on)
    (n, ruleset, opts)
    for i, (n, ruleset) in enumerate(itertools.product(range(2, 7), RULESETS))
    for opts in [tuple(OPTION_NAMES) if i % 2 else (OPTION_NAMES[i % len(OPTION_NAMES)],)]
]


@pytest.mark.parametrize("n_players,ruleset,opts", GAMES)
def test_every_legal_action_round_trips_default_board(n_players, ruleset, opts):
    options = {k: k in opts for k in OPTION_NAMES}
    forms: set[str] = set()
    checked = _round_trip_game(default_board(), n_players, 100 + n_players, ruleset, options,
                               every=3, forms=forms)
    assert checked > 1000
    assert {"start", "build-card-take-display", "build-joker-take-display"} <= {
        f.removeprefix("redraw+") for f in forms} | forms


def test_round_trips_cover_every_form():
    """Over several games with every option, each form of action occurs: the round
    trip tests are not vacuous."""
    forms: set[str] = set()
    for seed in range(6):
        for options in ({k: True for k in OPTION_NAMES}, {k: False for k in OPTION_NAMES}):
            _round_trip_game(mini_board(), 2 + seed % 5, seed, RULESETS[seed % 2], options,
                             forms=forms)
            _round_trip_game(default_board(), 2 + seed % 5, seed, RULESETS[seed % 2], options,
                             every=7, forms=forms)
    expected = {
        "start",
        "build-card-take-display", "build-card-take-stack", "build-card-take-up",
        "build-card-take-display+swap", "build-joker-take-display",
        "invest-one-discard", "invest-many-discard", "invest-two-discard",
        "redraw+build-card-take-display", "redraw+invest-one-discard",
    }  # "take none", an invest or pass without a discard: rare; see EXAMPLES
    assert expected <= forms, sorted(expected - forms)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_players=st.integers(2, 6),
    seed=st.integers(0, 2**31),
    ruleset=st.sampled_from(RULESETS),
    options=st.fixed_dictionaries({k: st.booleans() for k in OPTION_NAMES}),
)
def test_round_trip_random_games_mini_board(n_players, seed, ruleset, options):
    _round_trip_game(mini_board(), n_players, seed, ruleset, options)


EXAMPLES = [
    (Start("KCC"), "start KCC"),
    (Start(UP), "start UP"),
    (Build("KCC", "DEN-KCY", "black", None, Take("stack")), "build KCC DEN-KCY black; take stack"),
    (Build("KCC", "DEN-KCY", "black-white", None, Take("up"), "MS"),
     "build KCC DEN-KCY black-white; take UP; swap MS"),
    (Build("EPRG", "ELP-PHX", "joker", "white", Take("display", "MS"), UP, "plain"),
     "redraw plain; build EPRG ELP-PHX joker as white; take MS; swap UP"),
    (Build("WW", "CHY-DEN", "plain", None, Take("none")), "build WW CHY-DEN plain; take none"),
    (Build("WW", "CHY-DEN", "plain", None, Take("display", None, 2)),
     "build WW CHY-DEN plain; take display 2"),
    (Build("SFRB", "C2-SF4", "plain", None, Take("display", None, 4)),
     "build SFRB C2-SF4 plain; take display 4"),
    (Invest(("KCC",), "plain"), "invest KCC; discard plain"),
    (Invest(("KCC",) * 3), "invest 3 KCC"),
    (Invest((UP,) * 12, "joker"), "invest 12 UP; discard joker"),
    (Invest(("KCC", UP), "black", "white"), "redraw white; invest KCC UP; discard black"),
    (Pass(), "pass"),
    (Pass("white"), "pass; discard white"),
    (Pass("joker", "black"), "redraw black; pass; discard joker"),
    (Pass(None, "black"), "redraw black; pass"),
]


@pytest.mark.parametrize("action,text", EXAMPLES, ids=[t for _a, t in EXAMPLES])
def test_examples(action, text):
    assert str(action) == text
    assert parse_action(text) == action
    assert str(parse_action(text)) == text


NEAR_MISSES = [
    "",
    " ",
    "Start KCC",
    "START KCC",
    "start  KCC",
    " start KCC",
    "start KCC ",
    "start kcc",
    "start Kansas City Central",
    "start K.C.C.",
    "start XYZ",
    "start",
    "start KCC;",
    "start KCC; take stack",
    "initial KCC",
    "choose KCC",
    "redraw white; start KCC",
    "build kcc DEN-KCY black; take stack",
    "build KCC Denver-KCY black; take stack",
    "build KCC DEN-Kansas City black; take stack",
    "build KCC den-kcy black; take stack",
    "build KCC KCY-DEN black; take stack",
    "build KCC DEN/KCY black; take stack",
    "build KCC DEN KCY black; take stack",
    "build KCC DEN-DEN black; take stack",
    "build KCC D-KCY black; take stack",
    "build KCC DEN-KCY black",
    "build KCC DEN-KCY; take stack",
    "build KCC DEN-KCY Black; take stack",
    "build KCC DEN-KCY bw; take stack",
    "build KCC DEN-KCY b/w; take stack",
    "build KCC DEN-KCY black white; take stack",
    "build KCC DEN-KCY blue; take stack",
    "build KCC DEN-KCY joker; take stack",
    "build KCC DEN-KCY joker as joker; take stack",
    "build KCC DEN-KCY joker as  white; take stack",
    "build KCC DEN-KCY white joker; take stack",
    "build KCC DEN-KCY black; take stack;",
    "build KCC DEN-KCY black; take stack; ",
    "build KCC DEN-KCY black;take stack",
    "build KCC DEN-KCY black;  take stack",
    "build KCC DEN-KCY black ; take stack",
    "build KCC DEN-KCY black, take stack",
    "build KCC DEN-KCY black; draw stack",
    "build KCC DEN-KCY black; take top card",
    "build KCC DEN-KCY black; take up",
    "build KCC DEN-KCY black; take Union Pacific",
    "build KCC DEN-KCY black; take #2",
    "build KCC DEN-KCY black; take 2",
    "build KCC DEN-KCY black; take display 5",
    "build KCC DEN-KCY black; take display 0",
    "build KCC DEN-KCY black; take display 02",
    "build KCC DEN-KCY black; take display",
    "build KCC DEN-KCY black; take kcc",
    "build KCC DEN-KCY black; take",
    "build KCC DEN-KCY black; take stack; swap",
    "build KCC DEN-KCY black; take stack; swap ms",
    "build KCC DEN-KCY black; take stack; swap MS for UP",
    "build KCC DEN-KCY black; take stack; no swap",
    "build KCC DEN-KCY black; take stack; swap MS; swap DM",
    "build KCC DEN-KCY black; swap MS; take stack",
    "build UP DEN-KCY black; take stack",
    "place KCC DEN-KCY black; take stack",
    "build KCC black DEN-KCY; take stack",
    "take stack",
    "take KCC",
    "swap MS",
    "discard plain",
    "invest",
    "invest 1 KCC",
    "invest 01 KCC",
    "invest 2 KCC; discard plain;",
    "invest 2x KCC",
    "invest KCC x2",
    "invest KCC KCC",
    "invest UP KCC",
    "invest KCC, UP",
    "invest KCC and UP",
    "invest KCC MS UP",
    "invest kcc",
    "inv KCC",
    "invest KCC; discard",
    "invest KCC; discard Plain",
    "invest KCC; drop plain",
    "invest KCC; discard plain; discard white",
    "pass; discard",
    "pass white",
    "pass;discard white",
    "Pass",
    "skip",
    "pass;",
    "redraw joker; pass",
    "redraw white",
    "redraw white;",
    "redraw white; redraw black; pass",
    "redraw  white; pass",
    "build KCC DEN-KCY black; take stack\n",
    "build KCC DEN-KCY black;\ttake stack",
    "build KCC DEN-KCY black; take stack # comment",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_refused(text):
    with pytest.raises(NotationError):
        parse_action(text)


def test_some_near_misses_are_read_by_the_mail_parser():
    """The refused texts include orders the forgiving parser reads: the notation is
    strictly narrower."""
    board = mini_board()
    for text in ("Start KCC", "start  KCC", "build kcc DEN-KCY black", "build KCC Denver-KCY black",
                 "invest 2x KCC"):
        parse_turn([text], board)
        with pytest.raises(NotationError):
            parse_action(text)


def test_notation_error_is_a_value_error_and_says_what_is_wrong():
    with pytest.raises(ValueError, match="sorted order"):
        parse_action("build KCC KCY-DEN black; take stack")
    with pytest.raises(NotationError, match="expected a company"):
        parse_action("build Kansas DEN-KCY black; take stack")


@pytest.mark.parametrize("value", [None, 3, b"start KCC", ["start KCC"]])
def test_non_text_is_refused(value):
    with pytest.raises(NotationError):
        parse_action(value)


@given(st.text(alphabet="abcdefghijklmnopstuvwxyzABCDEKLMNPRSUWY0123456789 -;#", max_size=40))
@settings(max_examples=300, deadline=None)
def test_any_accepted_text_is_canonical(text):
    """Whatever text is accepted, it is exactly the ``str`` of what it gives."""
    try:
        action = parse_action(text)
    except NotationError:
        return
    assert str(action) == text


@given(st.sampled_from([t for _a, t in EXAMPLES]), st.data())
@settings(max_examples=200, deadline=None)
def test_mutated_examples_are_refused_or_canonical(text, data):
    """One character of a valid text changed, dropped or doubled: refused, or a
    different valid text (e.g. another company)."""
    i = data.draw(st.integers(0, len(text) - 1))
    how = data.draw(st.sampled_from(["drop", "double", "upper", "space"]))
    mutated = {
        "drop": text[:i] + text[i + 1:],
        "double": text[:i] + text[i] + text[i:],
        "upper": text[:i] + text[i].swapcase() + text[i + 1:],
        "space": text[:i] + " " + text[i:],
    }[how]
    try:
        action = parse_action(mutated)
    except NotationError:
        return
    assert str(action) == mutated


def test_company_and_type_vocabulary_is_the_components():
    for abbr in COMPANIES:
        assert parse_action(f"start {abbr}") == Start(abbr)
    for t in TRACK_TYPES:
        assert parse_action(f"build KCC DEN-KCY {t}; take stack").card == t


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_every_history_line_of_the_frozen_fixtures(path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    lines = [h["order"] for h in data["history"]]
    assert lines
    for text in lines:
        assert str(parse_action(text)) == text
