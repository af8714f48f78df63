"""Helpers for the rules tests: games on the mini test board with positions set by hand.

The engine keeps derived caches of the board position (networks, placements); a test
that changes ``placed`` or ``box`` directly calls ``game.invalidate()`` (``place`` and
``set_box`` below do).
"""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

from hypothesis import strategies as st

from moderator.rules.actions import Start
from moderator.rules.board import Board
from moderator.rules.components import (
    COMPANIES,
    COMPANY_SHARES,
    DIVIDEND,
    DIVIDEND_CARDS,
    TRACK_CARD_COUNTS,
    UP,
    UP_SHARES,
)
from moderator.rules.engine import IMAGINARY, OPTIONS, RULESETS, Game

BOARDS = Path(__file__).parent / "boards"
MINI = BOARDS / "mini.yaml"

_BOARD_CACHE: dict[str, Board] = {}


def mini_board() -> Board:
    """The mini test board (tests/boards/mini.yaml), loaded once."""
    if "mini" not in _BOARD_CACHE:
        _BOARD_CACHE["mini"] = Board.load(MINI)
    return _BOARD_CACHE["mini"]


def default_board() -> Board:
    """The default board, loaded once."""
    if "default" not in _BOARD_CACHE:
        _BOARD_CACHE["default"] = Board.default()
    return _BOARD_CACHE["default"]


def new_game(players: Iterable[str] = ("Ann", "Bob", "Cy"), seed: int = 1,
             ruleset: str = "first-edition", board: Board | None = None, **options: bool) -> Game:
    """A new game (initial phase) on the mini board."""
    return Game.new(board or mini_board(), list(players), seed, ruleset, options)


def started(players: Iterable[str] = ("Ann", "Bob", "Cy"), seed: int = 1,
            ruleset: str = "first-edition", board: Board | None = None,
            choices: dict[str, str] | None = None, **options: bool) -> Game:
    """A game in the play phase: every player made the first legal initial
    investment (or the one in ``choices``)."""
    g = new_game(players, seed, ruleset, board, **options)
    for p in g.players:
        share = (choices or {}).get(p) or str(g.legal_actions(p)[0].share)  # type: ignore[union-attr]
        g.push(p, Start(share))
    return g


def place(g: Game, company: str, sid: str, space: str) -> None:
    """Put a train of ``company`` on an empty ``space``-type space of ``sid`` by hand
    (no rules check) and refresh the caches."""
    sec = g.board.sections[sid]
    row = g.placed[sid]
    i = next(i for i, (t, occ) in enumerate(zip(sec.spaces, row)) if t == space and occ is None)
    row[i] = company
    g.box[company] -= 1
    g.invalidate()


def set_box(g: Game, company: str, n: int) -> None:
    g.box[company] = n
    g.invalidate()


def hand(g: Game, player: str | None = None, *, track: list[str] | None = None,
         shares: list[str] | None = None) -> str:
    """Set the track cards and/or shares of ``player`` (default: on move)."""
    p = player or g.to_move
    assert p is not None
    if track is not None:
        g.track_hands[p] = sorted(track)
    if shares is not None:
        g.share_hands[p] = sorted(shares)
    return p


def play_random(g: Game, rng: random.Random, limit: int = 5000, check=None) -> int:
    """Play ``g`` to the end by uniformly random legal actions; ``check(g)`` after
    each action.  Returns the number of actions."""
    n = 0
    while g.phase != "over":
        p = g.waiting_for()[0]
        g.push(p, g.random_action(p, rng))
        n += 1
        if check:
            check(g)
        assert n < limit, "game did not end"
    return n


# ------------------------------------------------------------------ invariants
def played_until_end(players: Iterable[str], seed: int, actions: int) -> Game:
    """A game on the default board after up to ``actions`` random legal actions
    (``Game.random_action`` with ``random.Random(seed)``), stopped before the
    action that would end it."""
    g = Game.new(default_board(), list(players), seed)
    rng = random.Random(seed)
    for _ in range(actions):
        p = g.waiting_for()[0]
        nxt = g.copy()
        nxt.push(p, nxt.random_action(p, rng))
        if nxt.phase == "over":
            break
        g = nxt
    return g


def share_census(g: Game) -> Counter:
    """Every share card of the game by company, wherever it is (hands, invested,
    display, stack, four-of-a-kind removals, UP swap returns, UP pile)."""
    c: Counter = Counter()
    for p in g.players:
        c.update(g.share_hands[p])
        c.update(g.invested[p])  # type: ignore[arg-type]
        c.update(g.returned[p])
    c.update(x for x in g.display if x)
    c.update(x for x in g.stack if x != DIVIDEND)
    c.update(g.removed)
    c[UP] += g.up_pile
    return c


def check_invariants(g: Game) -> None:
    """The invariants that hold between any two actions (see test_properties)."""
    census = share_census(g)
    expected = Counter({abbr: c.shares for abbr, c in COMPANIES.items()})
    expected[UP] = UP_SHARES
    assert census == expected, (census - expected, expected - census)
    assert sum(v for k, v in census.items() if k != UP) == COMPANY_SHARES
    track: Counter = Counter(g.track_deck) + Counter(g.track_discards) + Counter(g.track_removed)
    for p in g.players:
        track.update(g.track_hands[p])
    assert track == Counter(TRACK_CARD_COUNTS), track
    # dividend cards: drawn from the stack or still in it (set aside until the
    # stack is built when the initial investments are revealed)
    if g.phase == "initial":
        assert DIVIDEND not in g.stack and g.dividends_drawn == 0
    else:
        assert g.dividends_drawn + g.stack.count(DIVIDEND) == DIVIDEND_CARDS
    assert g.dividends_pending == 0
    if g.phase == "play":
        assert g.dividends_paid == g.dividends_drawn < g.final_dividend
    if g.phase == "over":
        assert g.dividends_paid == g.final_dividend
    # trains
    for abbr, c in COMPANIES.items():
        on_board = sum(row.count(abbr) for row in g.placed.values())
        on_board += sum(s.starts.count(abbr) for s in g.board.sections.values())
        assert on_board + g.box[abbr] == c.trains, abbr
        assert g.box[abbr] >= 0
    # money = the sum of payouts received
    received: Counter = Counter()
    for pay in g.payouts:
        received.update(pay["totals"])
    for p, m in g.money.items():
        assert m == received.get(p, 0), (p, m, received)
    assert set(g.money) <= set(g.players) | {IMAGINARY}
    if IMAGINARY in g.money:
        assert len(g.players) == 2 and g.phase == "over"
    # hands
    for p in g.players:
        assert g.track_hands[p] == sorted(g.track_hands[p])
        assert len(g.track_hands[p]) <= 4


def freeze(value: Any) -> Any:
    """A comparable, hashable form of nested plain data."""
    if isinstance(value, dict):
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


GAME_SETUPS = st.fixed_dictionaries({
    "seed": st.integers(0, 2**32 - 1),
    "players": st.integers(2, 6),
    "ruleset": st.sampled_from(RULESETS),
    "options": st.fixed_dictionaries({k: st.booleans() for k in OPTIONS}),
    "board": st.sampled_from(["default", "mini"]),
})
"""Any game's setup, for hypothesis: ``{"seed", "players" (2-6), "ruleset",
"options" (each option on or off), "board" ("default" or "mini")}``; made by
``game_from``."""


def game_from(setup: dict[str, Any], cls: type[Game] = Game) -> Game:
    """A new game (of class ``cls``) from a ``GAME_SETUPS`` example: players
    ``P1``, ``P2``, ..."""
    board = default_board() if setup["board"] == "default" else mini_board()
    names = [f"P{i + 1}" for i in range(setup["players"])]
    return cls.new(board, names, setup["seed"], setup["ruleset"], setup["options"])

