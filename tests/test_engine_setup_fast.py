"""The engine's once-per-game parts against their plain definitions.

- ``_Shuffler`` gives exactly ``random.Random(f"{seed}/{purpose}/{n}").shuffle``,
  for one list or several in turn (lengths 0-255, words drawn again when the first
  ones are used up), and refuses longer lists;
- ``Game.new`` deals what the rules' setup gives with ``random.Random`` from the
  components (rules: Setup 2-4), and its rows of ``placed`` belong to it alone;
- ``_pay_dividend``'s record and money equal a plain payout from the invested
  shares through ``company_payout`` and ``up_payout`` (rules: Company dividends;
  Union Pacific dividends; Two players), on random games.
"""
from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings

from game_helpers import GAME_SETUPS, default_board, game_from
from moderator.rules.components import COMPANIES, DIVIDEND, TRACK_CARD_COUNTS, UP
from moderator.rules.dividends import company_payout, up_payout
from moderator.rules.engine import IMAGINARY, Game, _Shuffler
from moderator.rules.options import ruleset


@pytest.mark.parametrize("lengths", [
    (0,), (1,), (2,), (3, 2), (40,), (98,), (6, 19, 49), (127, 128, 129), (255,), (255, 254, 3), (1, 200, 0, 7),
])
def test_shuffler_is_random_shuffle(lengths):
    for seed in range(60):
        reference = random.Random(f"{seed}/stack/{len(lengths)}")
        fast = _Shuffler(seed, "stack", len(lengths))
        for n in lengths:
            expected = list(range(n))
            reference.shuffle(expected)
            got = list(range(n))
            fast.shuffle(got)
            assert got == expected, (seed, lengths, n)


def test_shuffler_refuses_more_than_255_items():
    with pytest.raises(ValueError, match="256"):
        _Shuffler(1, "track").shuffle(list(range(256)))


@pytest.mark.parametrize("players,seed,rules", [
    (["Ann", "Bob"], 3, "first-edition"), (["a", "b", "c", "d"], 77, "first-edition"),
    (list("abcdef"), 2**31 + 5, "second-edition"), (["x", "y", "z"], 0, "second-edition"),
])
def test_new_deals_the_shuffled_components(players, seed, rules):
    g = Game.new(default_board(), players, seed, rules)
    deck = [kind for kind, count in TRACK_CARD_COUNTS.items() for _ in range(count)]
    random.Random(f"{seed}/track/0").shuffle(deck)
    shares = [c.abbr for c in COMPANIES.values() for _ in range(c.shares)]
    random.Random(f"{seed}/shares/0").shuffle(shares)
    n = ruleset(rules).shares_dealt
    assert g.track_hands == {p: sorted(deck[3 * i: 3 * i + 3]) for i, p in enumerate(players)}
    assert g.track_deck == deck[3 * len(players):]
    assert g.share_hands == {p: sorted(shares[n * i: n * i + n] + [UP]) for i, p in enumerate(players)}
    assert g.stack == shares[n * len(players):]
    assert g.up_pile == 20 - len(players)
    assert g.invested == {p: {} for p in players} and g.money == {p: 0 for p in players}
    assert g.returned == {p: [] for p in players}
    assert g.box == {"WW": 6, "MRR": 7, "KCC": 8, "ESL": 9, "UMR": 10, "SFRB": 12, "DM": 13,
                     "MS": 16, "BNL": 18, "EPRG": 21}  # EPRG: two starting spaces
    assert set(g.placed) == set(default_board().sections)
    assert all(row == [None] * len(default_board().sections[s].spaces) for s, row in g.placed.items())


def test_new_games_share_no_rows():
    board = default_board()
    a = Game.new(board, ["a", "b"], 1)
    sid = next(iter(a.placed))
    a.placed[sid][0] = "KCC"
    a.box["KCC"] -= 1
    b = Game.new(board, ["a", "b"], 1)
    assert b.placed[sid][0] is None and b.box["KCC"] == 8
    assert not any(a.placed[s] is b.placed[s] for s in a.placed)


def plain_dividend(g: Game, number: int) -> tuple[dict, dict]:
    """The payout record and money after dividend ``number``, from the rules alone."""
    holdings = {p: dict(g.invested[p]) for p in g.players}
    money = dict(g.money)
    if len(g.players) == 2 and number == g.final_dividend:
        held = Counter(c for c in g.display if c)
        held.update(c for c in g.stack if c != DIVIDEND)
        held[UP] += g.up_pile
        holdings[IMAGINARY] = {c: n for c, n in held.items() if n}
        money.setdefault(IMAGINARY, 0)
    values = {c: 1 + COMPANIES[c].trains - g.box[c] for c in COMPANIES}
    paid = {}
    for c in [*COMPANIES, UP]:
        h = {p: hs[c] for p, hs in holdings.items() if hs.get(c, 0) > 0}
        if h:
            paid[c] = company_payout(h, values[c]) if c != UP else up_payout(h, number)
    totals = Counter()
    for pay in paid.values():
        totals.update(pay)
    for p, amount in totals.items():
        money[p] = money.get(p, 0) + amount
    record = {"dividend": number, "values": values,
              "holdings": {p: dict(sorted(h.items())) for p, h in holdings.items()},
              "paid": paid, "totals": dict(sorted(totals.items()))}
    return record, money



class Checked(Game):
    """A game whose every dividend is checked against ``plain_dividend`` (the
    record's keys in the same order: the game file keeps them so)."""

    def _pay_dividend(self, number: int) -> None:
        record, money = plain_dividend(self, number)
        super()._pay_dividend(number)
        assert json.dumps(self.payouts[-1]) == json.dumps(record)
        assert json.dumps(self.money) == json.dumps(money)
        self.checked = getattr(self, "checked", 0) + 1


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(GAME_SETUPS)
def test_dividends_equal_a_plain_payout(params):
    g = game_from(params, Checked)
    rng = random.Random(params["seed"])
    while g.phase != "over":
        player = g.waiting_for()[0]
        g.push(player, g.random_action(player, rng))
    assert g.checked == len(g.payouts) == g.final_dividend
