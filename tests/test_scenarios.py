"""Hand-computed dividend scenarios from tests/scenarios.yaml, one parametrized test.

``company_payouts`` and ``up_payouts`` check the payout functions; ``dividends``
play a whole payout in a game on the mini board (the player on move builds KCC on
DEN-KCY and draws the dividend card from the stack), including the two-player final
dividend with the imaginary third player.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from game_helpers import hand, started
from moderator.rules.actions import Build, Take
from moderator.rules.components import COMPANIES, DIVIDEND
from moderator.rules.dividends import company_payout, up_payout
from moderator.rules.engine import IMAGINARY

DATA = yaml.safe_load((Path(__file__).parent / "scenarios.yaml").read_text(encoding="utf-8"))

CASES = [
    pytest.param(kind, case, id=f"{kind}: {case['name']}")
    for kind in ("company_payouts", "up_payouts", "dividends")
    for case in DATA[kind]
]


def test_scenario_file_is_complete():
    assert len(DATA["company_payouts"]) >= 15
    assert {c["dividend"] for c in DATA["up_payouts"]} == {1, 2, 3, 4}
    assert any(len(c["players"]) == 2 for c in DATA["dividends"])
    assert IMAGINARY == "(imaginary player)"


@pytest.mark.parametrize("kind, case", CASES)
def test_scenario(kind, case):
    if kind == "company_payouts":
        assert company_payout(case["holdings"], case["value"]) == case["expected"]
    elif kind == "up_payouts":
        assert up_payout(case["holdings"], case["dividend"]) == case["expected"]
    else:
        run_dividend(case)


def run_dividend(case: dict) -> None:
    players = case["players"]
    g = started(players=players)
    mover = g.to_move
    hand(g, track=["plain"] * 4, shares=[])
    n = case["dividend"]
    g.dividends_paid = g.dividends_drawn = n - 1
    g.invested = {p: dict(case["invested"].get(p, {})) for p in players}
    g.money = dict(case["money_before"])
    g.display = list(case["display"])
    g.stack = [DIVIDEND] + [DIVIDEND if c == "DIV" else c for c in case["stack_after"]]
    g.up_pile = case["up_pile"]
    values = {c: (3 if c == "EPRG" else 2) for c in COMPANIES}
    values.update(case["values"])
    for c, v in values.items():
        g.box[c] = COMPANIES[c].trains - (v - 1) + (1 if c == "KCC" else 0)  # KCC builds one
    g.invalidate()
    g.push(mover, Build("KCC", "DEN-KCY", "plain", take=Take("stack")))
    pay = g.payouts[-1]
    assert pay["dividend"] == n
    assert pay["values"] == values
    assert g.share_hands[mover] == [case["stack_after"][0]]
    if "imaginary" in case:
        assert pay["holdings"][IMAGINARY] == case["imaginary"]
    else:
        assert IMAGINARY not in pay["holdings"]
    assert pay["paid"] == case["paid"]
    assert pay["totals"] == case["totals"]
    assert g.money == case["money"]
    assert (g.phase == "over") == case["over"]
    if case["over"]:
        assert g.winners() == case["winners"]
        assert g.standings()[0][1] in case["winners"]
