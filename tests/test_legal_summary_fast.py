"""``LegalSummary.of`` builds its ``builds`` from the network's placement cache by
type; it must equal the plain definition (every placement, sorted, with the card
that fits it) on many positions of random games, with and without a hand given."""
from __future__ import annotations

import random

import pytest

from moderator.rules.board import Board
from moderator.rules.components import COMPANIES, JOKER
from moderator.rules.engine import Game


def reference_builds(game: Game, player: str, cards=None) -> dict:
    held = set(game.track_hands[player] if cards is None else cards)
    joker = JOKER in held
    builds = {}
    for company in COMPANIES:
        sections: dict = {}
        for sid, t in game.network.placements(company):
            card = t if t in held else (JOKER if joker else None)
            if card:
                sections.setdefault(sid, []).append((t, card))
        if sections:
            builds[company] = {sid: tuple(v) for sid, v in sections.items()}
    return builds


@pytest.mark.parametrize("ruleset,players", [("first-edition", 4), ("second-edition", 3), ("first-edition", 6)])
def test_summary_builds_equal_the_definition(ruleset, players):
    board = Board.default()
    names = [f"P{i}" for i in range(players)]
    checked = 0
    for seed in range(12):
        game = Game.new(board, names, seed, ruleset)
        rng = random.Random(seed)
        while game.phase != "over":
            player = game.waiting_for()[0]
            if game.phase == "play":
                summary = game.legal_summary(player)
                assert summary.builds == reference_builds(game, player)
                assert list(summary.builds) == [c for c in COMPANIES if c in summary.builds]
                for company, secs in summary.builds.items():
                    assert list(secs) == sorted(secs)
                hand = game.track_hands[player]
                if hand:
                    fewer = hand[1:]
                    assert game.legal_summary(player, fewer).builds == reference_builds(game, player, fewer)
                checked += 1
            game.push(player, game.random_action(player, rng))
    assert checked > 100
