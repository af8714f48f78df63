"""The engine's fast paths against their plain definitions, on random games
(hypothesis: seeds, 2-6 players, both rulesets, every option, both boards).

- ``random_action`` draws in one pass (``legal._random_turn``) exactly the action
  the counted plan gives for the same random number (``action_at(plan,
  randrange(plan.total))``), and ``_invest_at`` is ``invests(...)[v]``;
- an action ``random_action`` drew is pushed without being resolved again: the
  game after it equals a copy that resolved the same action, and a changed
  position (another action pushed, ``invalidate()``) resolves it again;
- the network's bit sets, the placements and the summary's kept builds equal a
  fresh computation (``test_properties.check_caches``) after every action;
- ``Build.trusted`` equals and hashes like ``Build(...)``;
- ``company_payout``'s path for one or two investors gives the rule's amounts.
"""
from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import HealthCheck, given, settings

from game_helpers import GAME_SETUPS, default_board, game_from
from moderator.rules import legal
from moderator.rules.actions import Build, Take
from moderator.rules.dividends import company_payout
from moderator.render.events import english
from moderator.rules.engine import Game, IllegalAction
from test_properties import check_caches



@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(GAME_SETUPS)
def test_fast_paths_equal_their_definitions(params):
    g = game_from(params)
    rng = random.Random(params["seed"])
    while g.phase != "over":
        player = g.waiting_for()[0]
        if g.phase == "play":
            p = legal.plan(g, player)
            state = rng.getstate()
            by_plan = legal.action_at(g, player, p, rng.randrange(p.total))
            rng.setstate(state)
            if not g.dead_cards(player):
                assert legal._random_turn(g, player, rng) == by_plan
                rng.setstate(state)
            hand = g.share_hands[player]
            assert [legal._invest_at(hand, v) for v in range(len(legal.invests(g, player)))] \
                == legal.invests(g, player)
        action = g.random_action(player, rng)
        resolved = g.copy()  # a copy does not know the drawn action: it resolves it
        assert resolved.push(player, action) == g.push(player, action)
        assert resolved.to_dict() == g.to_dict() and resolved.events == g.events
        check_caches(g)


def test_a_drawn_action_is_checked_again_after_a_change():
    g = Game.new(default_board(), ["Ann", "Bob", "Cy"], 5)
    rng = random.Random(2)
    for p in ["Ann", "Bob", "Cy"]:
        g.push(p, g.random_action(p, rng))
    player = g.to_move
    drawn = g.random_action(player, rng)
    assert isinstance(drawn, Build)  # seed 5, generator 2: a BUILD
    saved = list(g.track_hands[player])
    g.track_hands[player] = []  # a direct change: the card is gone ...
    g.invalidate()  # ... so the draw is forgotten and push checks the action again
    with pytest.raises(IllegalAction) as refused:
        g.push(player, drawn)
    assert refused.value.code == "no_track_card"
    g.track_hands[player] = saved
    assert english(g.push(player, drawn))[0].startswith(f"{player} built {drawn.company} on {drawn.section}")
    with pytest.raises(IllegalAction) as again:  # the same object once more: not their turn now
        g.push(player, drawn)
    assert again.value.code == "not_your_turn"


def test_build_trusted_is_a_build():
    take = Take("stack")
    fast = Build.trusted("KCC", "DEN-KCY", "joker", "plain", take, "UP", None)
    slow = Build("KCC", "DEN-KCY", "joker", "plain", take, "UP", None)
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert str(fast) == "build KCC DEN-KCY joker as plain; take stack; swap UP"
    with pytest.raises(AttributeError):
        fast.company = "DM"  # type: ignore[misc]


def plain_company_payout(holdings: dict[str, int], value: int) -> dict[str, int]:
    """Rules: Company dividends, by the letter: the investors grouped by equal
    holdings, largest first, names sorted in a group; the primary takes ``value``,
    the secondary ``value // 2``; a sole investor both; a tie for most splits both
    and nobody is secondary; a tie for second splits the secondary amount."""
    counts = sorted({n for n in holdings.values() if n > 0}, reverse=True)
    groups = [sorted(p for p, n in holdings.items() if n == c) for c in counts]
    if not groups:
        return {}
    secondary = value // 2
    if len(groups[0]) > 1:
        return {p: (value + secondary) // len(groups[0]) for p in groups[0]}
    if len(groups) == 1:
        return {groups[0][0]: value + secondary}
    out = {groups[0][0]: value}
    for p in groups[1]:
        out[p] = secondary // len(groups[1])
    return out


def test_company_payout_fast_path_is_the_rule():
    """``company_payout`` (one or two investors without grouping) gives the
    amounts of the rule and lists the players in the same order, for every
    holding of up to three players (names in any order, counts -1 to 3)."""
    checked = 0
    for k in range(4):
        for names in itertools.permutations(["Cy", "Ann", "Bob", "P1"], k):
            for counts in itertools.product(range(-1, 4), repeat=k):
                holdings = dict(zip(names, counts))
                for value in (1, 2, 5, 9, 24):
                    got = company_payout(holdings, value)
                    want = plain_company_payout(holdings, value)
                    assert got == want and list(got) == list(want), (holdings, value)
                    checked += 1
    assert checked == 5 * (1 + 4 * 5 + 12 * 25 + 24 * 125)
