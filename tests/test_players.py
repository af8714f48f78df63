"""The built-in player (moderator/players): legal, deterministic, blind to what its
seat cannot see, cheap, and stronger than random play."""
from __future__ import annotations

import itertools
import random

import pytest

from moderator.players import choose, demo_rule, determinise, dividend_outlook, random_rule, stack_segments
from moderator.rules.actions import Start
from moderator.rules.components import DIVIDEND, DIVIDEND_CARDS
from moderator.rules.engine import RULESETS, Game
from moderator.rules.options import OPTIONS

from game_helpers import check_invariants, default_board

OPTION_SETS = [{}, {name: True for name in OPTIONS}] + [{name: True} for name in OPTIONS]


def _positions(n_players: int, ruleset: str, options: dict, seed: int, every: int = 3):
    """Positions along a game played by random legal players: every ``every``-th
    action, yielding ``(game, player on move)`` (the caller must not change it)."""
    players = [f"P{i + 1}" for i in range(n_players)]
    game = Game.new(default_board(), players, seed, ruleset, options)
    rng = random.Random(seed)
    k = 0
    while game.phase != "over":
        player = game.waiting_for()[0]
        if k % every == 0:
            yield game, player
        game.push(player, game.random_action(player, rng))
        k += 1


# ------------------------------------------------------------------ legality
@pytest.mark.parametrize("n_players", [2, 3, 4, 5, 6])
def test_always_legal(n_players):
    """Every choice is one of the legal actions (complete, as resolve returns it),
    in positions of both editions with every option set, from the initial
    investment to the last turn."""
    checked = 0
    for k, (ruleset, options) in enumerate(itertools.product(RULESETS, OPTION_SETS)):
        for game, player in _positions(n_players, ruleset, options, seed=100 * n_players + k, every=7):
            action = choose(game, player, random.Random(k))
            assert action in game.legal_actions(player), (str(action), ruleset, options)
            assert game.resolve(player, action) == action
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("ruleset", RULESETS)
def test_whole_games_legal(ruleset):
    """Whole games with the built-in player in every seat, every option on: every
    action legal, the game ends."""
    options = {name: True for name in OPTIONS}
    for seed in range(2):
        game = Game.new(default_board(), ["Ann", "Bob", "Cy", "Di"], seed, ruleset, options)
        rng = random.Random(seed)
        for _ in range(1000):
            if game.phase == "over":
                break
            player = game.waiting_for()[0]
            action = choose(game, player, rng)
            assert action in game.legal_actions(player)
            game.push(player, action)
        assert game.phase == "over"


def test_no_move_to_make():
    game = Game.new(default_board(), ["Ann", "Bob"], 1)
    game.push("Ann", Start(game.share_hands["Ann"][0]))
    with pytest.raises(ValueError):
        choose(game, "Ann", random.Random(1))


# ------------------------------------------------------------------ determinism
def test_deterministic_for_a_seed():
    """The same position and rng seed give the same action; whole games too."""
    def game_with(seed: int) -> list[str]:
        game = Game.new(default_board(), ["A", "B", "C"], seed, "second-edition")
        rngs = {p: random.Random(f"{seed}/{p}") for p in game.players}
        while game.phase != "over":
            p = game.waiting_for()[0]
            game.push(p, choose(game, p, rngs[p]) if p == "A" else random_rule(game, p, rngs[p]))
        return [f"{p}: {a}" for p, a in game.history]

    assert game_with(3) == game_with(3)
    for game, player in _positions(4, "first-edition", {}, seed=5, every=11):
        assert choose(game, player, random.Random(9)) == choose(game, player, random.Random(9))


# ------------------------------------------------------------------ hidden information
def _scrambled(game: Game, player: str, seed: int) -> Game:
    """A game that differs from ``game`` only in what ``player`` cannot see: the
    other hands, the pending initial choices, the returned shares, the deck and
    the stack order all drawn again."""
    return determinise(game, player, random.Random(f"scramble/{seed}"))


@pytest.mark.parametrize("ruleset", RULESETS)
def test_never_reads_hidden_information(ruleset):
    """Two games that differ only in information the seat cannot see give the same
    choice with the same rng; the seat's view of both is the same, and they do
    differ (stack, deck or the other hands)."""
    differ = 0
    for k, options in enumerate(OPTION_SETS):
        for n, (game, player) in enumerate(_positions(3 + k % 2, ruleset, options, seed=40 + k, every=9)):
            other = _scrambled(game, player, n)
            assert other.view(player) == game.view(player)
            differ += (other.stack != game.stack or other.track_deck != game.track_deck
                       or any(other.share_hands[p] != game.share_hands[p] for p in game.players))
            assert choose(game, player, random.Random(n)) == choose(other, player, random.Random(n))
    assert differ > 20


def test_hidden_information_by_hand():
    """The other players' hands exchanged and the stack and deck reversed: the
    seat's choice stays the same."""
    for game, player in _positions(4, "first-edition", {}, seed=77, every=13):
        if game.phase != "play":
            continue
        other = game.copy()
        others = [p for p in game.players if p != player]
        a, b = others[0], others[1]
        if len(game.share_hands[a]) == len(game.share_hands[b]):
            other.share_hands[a], other.share_hands[b] = other.share_hands[b], other.share_hands[a]
        if len(game.track_hands[a]) == len(game.track_hands[b]):
            other.track_hands[a], other.track_hands[b] = other.track_hands[b], other.track_hands[a]
        other.stack.reverse()
        other.track_deck.reverse()
        assert other.view(player) == game.view(player)
        assert choose(game, player, random.Random(1)) == choose(other, player, random.Random(1))


def test_hidden_money_is_not_read():
    """With the option hidden_money the others' money (and the payouts' amounts)
    do not change the seat's choice."""
    seen = 0
    for game, player in _positions(3, "first-edition", {"hidden_money": True}, seed=8, every=4):
        if game.phase != "play" or not game.dividends_paid:
            continue
        other = game.copy()
        for p in game.players:
            if p != player:
                other.money[p] += 50
        other.payouts = []
        assert other.view(player) == game.view(player)
        assert choose(game, player, random.Random(2)) == choose(other, player, random.Random(2))
        seen += 1
    assert seen > 5


@pytest.mark.parametrize("n_players", [2, 3, 4, 5, 6])
def test_determinised_games_are_consistent(n_players):
    """A determinised game is a possible game: the same view for the seat, every
    card and train accounted for, the dividend cards where the stack's structure
    allows them."""
    for k, (ruleset, options) in enumerate(itertools.product(RULESETS, OPTION_SETS[:3])):
        for n, (game, player) in enumerate(_positions(n_players, ruleset, options, seed=k, every=5)):
            det = determinise(game, player, random.Random(n))
            assert det.view(player) == game.view(player)
            check_invariants(det)
            if game.phase == "play":
                assert det.stack.count(DIVIDEND) == game.stack.count(DIVIDEND)
                assert sum(n for n, _ in stack_segments(game)) >= len(game.stack)


def test_dividend_outlook():
    game = Game.new(default_board(), ["A", "B", "C"], 1)
    for p in game.players:
        game.push(p, game.random_action(p, random.Random(1)))
    # first edition: 6 shares without a dividend card on top of the stack
    assert dividend_outlook(game, 6) == 0
    assert 0 < dividend_outlook(game, 10) < 1
    assert dividend_outlook(game, 10_000) == pytest.approx(DIVIDEND_CARDS)


# ------------------------------------------------------------------ budget
def test_work_per_move_is_bounded():
    """The work per move (positions scored) stays small; a generous time bound on
    top (not a timing test: 1 s against a few ms measured)."""
    import time

    for game, player in _positions(4, "second-edition", {}, seed=3, every=2):
        stats: dict = {}
        t = time.process_time()
        choose(game, player, random.Random(0), budget_ms=1, stats=stats)
        assert time.process_time() - t < 1.0
        assert stats["evaluations"] <= 1000


# ------------------------------------------------------------------ strength
def _tournament(opponent, games: int) -> int:
    board = default_board()
    wins = 0
    for i in range(games):
        n = 3 + i % 2
        players = [f"P{k + 1}" for k in range(n)]
        me = players[(i // 2) % n]
        game = Game.new(board, players, 1000 + i, RULESETS[(i // 4) % 2])
        rngs = {p: random.Random(f"{i}/{p}") for p in players}
        while game.phase != "over":
            p = game.waiting_for()[0]
            game.push(p, choose(game, p, rngs[p]) if p == me else opponent(game, p, rngs[p]))
        wins += me in game.winners()
    return wins


def test_tournament_against_random():
    """40 seeded games against random legal players: the benchmark wins about 100%
    (benchmarks/bench_players.py); the floor is far below, it cannot flake."""
    assert _tournament(random_rule, 40) >= 30


def test_tournament_against_the_demo_rule():
    """12 seeded games against the demo's rule: the benchmark wins about 99%."""
    assert _tournament(demo_rule, 12) >= 8
