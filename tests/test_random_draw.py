"""The random draw path (``Game.random_action``, ``legal._random_turn``) against its
plain definition, the counted plan (``legal.plan`` + ``legal.action_at``).

- For every index (or a sample of boundaries and random ones when there are
  many), the action the draw path gives equals ``action_at(plan, index)``, and the
  number it asks ``randrange`` for is ``plan.total``: so its count is the legal
  actions' count and its order the plan's, in seeded games (every option, both
  rulesets, both boards) and in positions set by hand around the UP swap (UP pile
  0, 1 or more; display full, partial or empty; stack empty or not; option
  up_only_by_swap).
- ``_swap_at`` names every (draw, swap) pair of ``take_swaps`` in its order and
  nothing more.
- The random numbers: the draw path consumes exactly those of
  ``randrange(plan.total)`` (the generator's state after it is the same).
- The kept tables stay bounded and true: ``_DISPLAY_DRAWS`` (per set of face-up
  kinds) and ``_FITS`` (per track hand) equal a fresh computation; so does
  ``Game.share_options`` (its draws kept per set of face-up kinds too).
- ``Invest.trusted`` equals, hashes and prints like ``Invest(...)``; an initial
  investment drawn is ``starts(...)[randrange(len(starts))]``.
"""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from game_helpers import GAME_SETUPS, default_board, game_from, mini_board, started
from moderator.rules import legal
from moderator.rules.actions import Invest, Take
from moderator.rules.components import JOKER, SHARE_COMPANIES, TRACK_TYPES, UP
from moderator.rules.engine import RULESETS, Game


class Index:
    """A stand-in generator whose ``randrange(n)`` returns a chosen index and
    records ``n`` (the draw path asks it, not ``getrandbits``, as it is not a
    ``random.Random``)."""

    def __init__(self, i: int) -> None:
        self.i = i
        self.asked: list[int] = []

    def randrange(self, n: int) -> int:
        self.asked.append(n)
        return self.i


def indices(total: int, r: random.Random, k: int = 60) -> list[int]:
    """Every index below ``total`` when few, else the ends and ``k`` random ones."""
    if total <= 2 * k:
        return list(range(total))
    return sorted({0, 1, total - 2, total - 1, *(r.randrange(total) for _ in range(k))})


def check_position(g: Game, player: str, r: random.Random) -> int:
    """The draw path equals the plan at sampled indices of this position; returns
    how many were checked."""
    p = legal.plan(g, player)
    checked = 0
    for i in indices(p.total, r):
        fixed = Index(i)
        assert legal._random_turn(g, player, fixed) == legal.action_at(g, player, p, i), i
        assert fixed.asked == [p.total]
        checked += 1
    return checked



@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(GAME_SETUPS)
def test_the_draw_path_is_the_plan_in_seeded_games(params):
    g = game_from(params)
    rng = random.Random(params["seed"])
    r = random.Random(params["seed"] + 1)
    while g.phase != "over":
        player = g.waiting_for()[0]
        if g.phase == "play" and not g.dead_cards(player):
            check_position(g, player, r)
            p = legal.plan(g, player)
            state = rng.getstate()
            want = legal.action_at(g, player, p, rng.randrange(p.total))
            after = rng.getstate()
            rng.setstate(state)
            assert g.random_action(player, rng) == want
            assert rng.getstate() == after  # the same random numbers, no more
            rng.setstate(state)
        g.push(player, g.random_action(player, rng))


kinds = st.sampled_from(SHARE_COMPANIES)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    display=st.lists(st.one_of(st.none(), kinds), min_size=4, max_size=4),
    stack=st.booleans(),
    up=st.sampled_from([0, 1, 2, 5]),
    up_only_by_swap=st.booleans(),
    shares=st.lists(kinds, max_size=9).map(sorted),
    hand=st.lists(st.sampled_from([*TRACK_TYPES, JOKER]), max_size=4).map(sorted),
    seed=st.integers(0, 2**16),
)
@example(display=[None] * 4, stack=False, up=2, up_only_by_swap=True, shares=["KCC", "UP"], hand=["plain"], seed=1)
@example(display=[None] * 4, stack=False, up=1, up_only_by_swap=False, shares=[], hand=[JOKER], seed=2)
@example(display=["DM", "DM", "UP", None], stack=True, up=1, up_only_by_swap=False, shares=["DM", "UP"],
         hand=["black", JOKER], seed=3)
def test_the_draw_path_is_the_plan_around_the_up_swap(display, stack, up, up_only_by_swap, shares, hand, seed):
    g = started(seed=seed, up_only_by_swap=up_only_by_swap)
    player = g.to_move
    g.display = display
    if not stack:
        g.stack = []
    g.up_pile = up
    g.share_hands[player] = shares
    g.track_hands[player] = hand
    plain = [Take("display", c) for c in sorted({c for c in display if c})]  # rules: BUILD, step 3
    plain += [Take("stack")] * stack + [Take("up")] * (up > 0 and not up_only_by_swap)
    assert g.share_options(player) == (plain or [Take("none")])
    if g.dead_cards(player):
        return
    assert check_position(g, player, random.Random(seed)) > 0
    # every (draw, swap) pair after a BUILD, as ``take_swaps`` lists them
    if up > 0:
        draws = legal._display_draws(frozenset(display))[0]
        pairs = [(t, s) for t, swaps in legal.take_swaps(g, player) for s in swaps]
        got = [legal._swap_at(draws, 1 if g.stack else 0, up, up_only_by_swap, set(shares), j)
               for j in range(len(pairs))]
        assert got == pairs
        with pytest.raises(IndexError):
            legal._swap_at(draws, 1 if g.stack else 0, up, up_only_by_swap, set(shares), len(pairs))


def test_the_random_numbers_are_randranges():
    """The numbers drawn inline are ``randrange``'s for totals of every kind (1,
    powers of two and their neighbours, larger ones), and so is the generator
    after: positions without a track card, where the INVESTs are all."""
    hands = [["KCC"] * n for n in range(1, 70)]
    hands += [sorted(SHARE_COMPANIES * m) for m in (1, 7, 18, 93)]  # 11 * m + 55 INVESTs
    for seed, shares in enumerate(hands):
        g = started(seed=seed)
        player = g.to_move
        g.track_hands[player], g.share_hands[player] = [], shares
        choices = legal.invests(g, player)
        a, b = random.Random(seed), random.Random(seed)
        assert g.random_action(player, a) == Invest(choices[b.randrange(len(choices))], None)
        assert a.getstate() == b.getstate()
    assert len(choices) == 11 * 93 + 55


def test_the_kept_tables_are_bounded_and_true():
    legal._DISPLAY_DRAWS.clear()
    legal._FITS.clear()
    for seed in range(40):
        g = Game.new(default_board(), ["A", "B", "C", "D"], seed)
        rng = random.Random(seed)
        while g.phase != "over":
            p = g.waiting_for()[0]
            g.push(p, g.random_action(p, rng))
    assert 0 < len(legal._DISPLAY_DRAWS) <= 2 * (11 + 55 + 165 + 330)
    for shown, draws in legal._DISPLAY_DRAWS.items():
        assert len(shown - {None}) <= 4
        want = tuple(Take("display", c) for c in sorted(shown - {None}))
        assert draws == (want, want or (Take("none"),), want + (Take("stack"),))
    assert 0 < len(legal._FITS) <= 4096
    for hand, (fits, discards) in legal._FITS.items():
        assert discards == (tuple(sorted(set(hand))) or (None,))
        want = []
        for t in TRACK_TYPES:
            cards = [c for c in (t, JOKER) if c in hand]
            if cards:
                want.append((t, tuple((c, t if c == JOKER else None) for c in cards), len(cards)))
        assert fits == tuple(want)


def test_invest_trusted_is_an_invest():
    fast = Invest.trusted(("DM", "KCC"), "plain", "black")
    slow = Invest(("DM", "KCC"), "plain", "black")
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert str(fast) == "redraw black; invest DM KCC; discard plain"
    with pytest.raises(AttributeError):
        fast.discard = "white"  # type: ignore[misc]


@pytest.mark.parametrize("ruleset", RULESETS)
def test_an_initial_investment_drawn_is_one_of_the_starts(ruleset):
    for seed in range(30):
        g = Game.new(mini_board(), ["Ann", "Bob", "Cy"], seed, ruleset)
        for p in g.players:
            a, b = random.Random(seed), random.Random(seed)
            choices = legal.starts(g, p)
            assert g.random_action(p, a) == choices[b.randrange(len(choices))]
            assert a.getstate() == b.getstate()
            if ruleset != "first-edition":
                assert all(c.share != UP for c in choices)
