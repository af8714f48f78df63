"""Exact rule tests of the engine on the mini test board (tests/boards/mini.yaml).

Each test sets up a position by hand (hands, display, stack, trains) and checks that
the engine accepts or refuses an action with the reason the rules give
(docs/rules.md lists the PBEM decisions; the rules section is named in each test's
docstring).

Mini board (neutral spaces by type; starts):  CHY-DEN plain (WW), DEN-KCY plain black
(DM), DEN-OMA plain white, CHI-OMA black-white, KCY-OMA plain (KCC), CHI-MAR white
(MRR), ALB-CHI plain black (ESL), ELP-MTY plain (UMR, EPRG), DEN-ELP black (EPRG),
OMA-SFA plain black-white (SFRB), ATL-MIA plain (MS), ATL-CHI plain black, BIL-CHY
plain white (BNL), ELP-KCY black-white white, ATL-KCY plain plain black-white.
KCC: home KCY, plain+black; its network at the start is KCY and OMA.
"""
from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from game_helpers import (
    check_invariants,
    hand,
    mini_board,
    new_game,
    place,
    set_box,
    started,
)
from moderator.rules.actions import DRAWN, Build, Invest, Pass, Start, Take
from moderator.rules.board import Board
from moderator.rules.components import COMPANIES, DIVIDEND, JOKER, UP
from moderator.rules.dividends import company_payout, up_payout
from moderator.render.words import reason
from moderator.render.events import english
from moderator.rules.legal import action_at, plan as legal_plan
from moderator.rules.engine import IMAGINARY, OPTIONS, RULESETS, Game, IllegalAction, turn_order

STACK = Take("stack")
UPT = Take("up")


def refused(g: Game, action, player: str | None = None) -> IllegalAction:
    """The IllegalAction raised for ``action``; the game must be unchanged."""
    before = g.to_dict()
    p = player or g.to_move
    with pytest.raises(IllegalAction) as exc:
        g.push(p, action)
    assert reason(exc.value)
    assert g.to_dict() == before
    return exc.value


def kcc_game(**kw) -> Game:
    """Ann on move, holding plain, black, joker and white cards and no special shares."""
    g = started(**kw)
    hand(g, track=["black", "joker", "plain", "white"], shares=["MS"])
    return g


# ====================================================================== BUILD placement
class TestBuildPlacement:
    """rules: A turn, BUILD, step 2 (each condition accepted and refused)."""

    def test_placements_of_kcc_at_start(self):
        g = kcc_game()
        assert g.placements("KCC") == [
            ("ATL-KCY", "plain"), ("DEN-KCY", "black"), ("DEN-KCY", "plain"),
            ("DEN-OMA", "plain"), ("OMA-SFA", "plain"),
        ]
        assert g.network.network_cities("KCC") == {"KCY", "OMA"}

    def test_accepted_build_places_train_discards_card(self):
        g = kcc_game()
        g.push("Ann", Build("KCC", "DEN-KCY", "black", take=STACK))
        assert g.placed["DEN-KCY"] == [None, "KCC"]
        assert g.box["KCC"] == COMPANIES["KCC"].trains - 2
        assert g.value("KCC") == 3
        assert g.track_discards[0] == "black"
        assert g.track_hands["Ann"] == ["joker", "plain", "white"]
        assert g.network.network_cities("KCC") == {"KCY", "OMA", "DEN"}

    def test_space_must_be_empty(self):
        g = kcc_game()
        place(g, "DM", "DEN-OMA", "plain")
        e = refused(g, Build("KCC", "DEN-OMA", "plain", take=STACK))
        assert reason(e) == ("you cannot build KCC on DEN-OMA: every plain space on DEN-OMA "
                            "(Denver-Omaha) is taken")

    def test_space_must_be_neutral(self):
        """A section whose only space is a starting space has no neutral space."""
        src = dict(mini_board().source)
        src["sections"] = list(src["sections"]) + [{"between": ["KCY", "MIA"], "spaces": [], "starts": ["MS"]}]
        board = Board.from_dict(src)
        g = started(board=board)
        hand(g, track=["plain", "black", "joker", "white"], shares=[])
        e = refused(g, Build("KCC", "KCY-MIA", "plain", take=STACK))
        assert reason(e) == ("you cannot build KCC on KCY-MIA: KCY-MIA (Kansas City-Miami) has no "
                            "neutral space (only starting spaces)")

    def test_space_must_have_the_card_track_type(self):
        g = kcc_game()
        e = refused(g, Build("KCC", "OMA-SFA", "black", take=STACK))
        assert reason(e) == ("you cannot build KCC on OMA-SFA: OMA-SFA (Omaha-Sioux Falls) has no "
                            "black space (its neutral spaces are: black-white, plain)")
        e = refused(g, Build("KCC", "OMA-SFA", "plain", "black", take=STACK))
        assert reason(e) == "a plain card builds only on plain track; only a joker builds on black track"

    def test_card_must_be_in_hand(self):
        g = kcc_game()
        hand(g, track=["plain", "plain", "white", "white"])
        e = refused(g, Build("KCC", "DEN-KCY", "black", take=STACK))
        assert reason(e) == "you hold no black track card (you hold: plain, plain, white, white)"

    def test_company_must_use_the_track_type(self):
        g = kcc_game()
        hand(g, track=["black-white", "plain", "plain", "plain"])
        e = refused(g, Build("KCC", "ATL-KCY", "black-white", take=STACK))
        assert reason(e) == ("you cannot build KCC on ATL-KCY: KCC may not use black-white track "
                            "(it may use black, plain)")
        g.push("Ann", Build("EPRG", "ELP-KCY", "black-white", take=STACK))  # EPRG uses all four

    def test_one_train_per_company_and_section(self):
        g = kcc_game()
        e = refused(g, Build("KCC", "KCY-OMA", "plain", take=STACK))
        assert reason(e) == "you cannot build KCC on KCY-OMA: KCC already has a train on KCY-OMA (Kansas City-Omaha)"
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK))
        g.current = 0
        hand(g, track=["black", "plain", "plain", "plain"])
        e = refused(g, Build("KCC", "DEN-KCY", "black", take=STACK))
        assert reason(e) == "you cannot build KCC on DEN-KCY: KCC already has a train on DEN-KCY (Denver-Kansas City)"
        g.push("Ann", Build("DM", "DEN-OMA", "plain", take=STACK))  # another company may

    def test_section_must_touch_the_network(self):
        g = kcc_game()
        e = refused(g, Build("KCC", "ATL-CHI", "plain", take=STACK))
        assert reason(e) == ("you cannot build KCC on ATL-CHI: ATL-CHI (Atlanta-Chicago) does not "
                            "touch KCC's network (home station KCY; network cities KCY, OMA)")

    def test_network_grows_through_connected_sections(self):
        g = kcc_game()
        g.push("Ann", Build("KCC", "ATL-KCY", "plain", take=STACK))
        g.current = 0
        hand(g, track=["plain", "plain", "plain", "plain"])
        assert ("ATL-CHI", "plain") in g.placements("KCC")
        g.push("Ann", Build("KCC", "ATL-CHI", "plain", take=STACK))
        assert g.network.network_cities("KCC") == {"KCY", "OMA", "ATL", "CHI"}
        # via a city reached through two sections: CHI-OMA is black-white (not KCC),
        # ALB-CHI plain now touches the network at CHI
        assert ("ALB-CHI", "plain") in g.placements("KCC")

    def test_network_through_home_station_only(self):
        """A train on a section not connected to the home station does not extend the
        network (board where MS's start does not touch Miami)."""
        src = dict(mini_board().source)
        src["sections"] = [dict(s) for s in src["sections"]]
        for s in src["sections"]:
            if s["between"] == ["MIA", "ATL"]:
                s["starts"] = []
            if s["between"] == ["ATL", "CHI"]:
                s["starts"] = ["MS"]
        g = started(board=Board.from_dict(src))
        assert g.network.network_cities("MS") == {"MIA"}
        assert ("ATL-MIA", "plain") in g.placements("MS")
        assert ("ATL-KCY", "plain") not in g.placements("MS")
        hand(g, track=["plain", "plain", "plain", "plain"], shares=[])
        g.push("Ann", Build("MS", "ATL-MIA", "plain", take=STACK))
        # now ATL is reached, and through ATL-CHI (MS start) CHI too
        assert g.network.network_cities("MS") == {"MIA", "ATL", "CHI"}
        assert ("ALB-CHI", "plain") in g.placements("MS")

    def test_trains_left_in_box(self):
        g = kcc_game()
        set_box(g, "KCC", 0)
        assert g.placements("KCC") == []
        e = refused(g, Build("KCC", "DEN-KCY", "plain", take=STACK))
        assert reason(e) == ("you cannot build KCC on DEN-KCY: KCC has no trains left in the box "
                            "(all 9 are on the board)")

    def test_last_train_then_company_cannot_grow(self):
        g = kcc_game()
        set_box(g, "KCC", 1)
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK))
        assert g.box["KCC"] == 0
        assert g.placements("KCC") == []
        assert g.value("KCC") == 1 + COMPANIES["KCC"].trains
        assert not any(isinstance(a, Build) and a.company == "KCC" for a in g.legal_actions(g.to_move))

    def test_joker_matches_any_type_and_must_say_which(self):
        g = kcc_game()
        hand(g, track=["joker", "white", "white", "white"])
        e = refused(g, Build("KCC", "DEN-KCY", JOKER, take=STACK))
        assert reason(e) == "say which track card to play for KCC on DEN-KCY"
        assert e.legal == ["build KCC DEN-KCY joker as plain", "build KCC DEN-KCY joker as black"]
        done = g.resolve("Ann", Build("KCC", "DEN-KCY", JOKER, "black", take=STACK))
        assert done == Build("KCC", "DEN-KCY", JOKER, "black", STACK)
        g.push("Ann", done)
        assert g.placed["DEN-KCY"] == [None, "KCC"]
        assert g.track_discards[0] == JOKER

    def test_joker_only_where_company_may_build(self):
        g = kcc_game()
        hand(g, track=["joker", "white", "white", "white"])
        e = refused(g, Build("KCC", "CHI-OMA", JOKER, "black-white", take=STACK))
        assert "KCC may not use black-white track" in reason(e)

    def test_space_named_without_a_card_for_it(self):
        # "build KCC DEN-KCY as black" with neither a black card nor a joker: the
        # space is free, so the refusal names the card that is missing (it once
        # read "...: None")
        g = kcc_game()
        hand(g, track=["white", "white", "white", "white"])
        e = refused(g, Build("KCC", "DEN-KCY", None, "black", take=STACK))
        assert e.code == "build_needs_card"
        assert reason(e) == ("you cannot build KCC on DEN-KCY: it needs a black track card "
                             "(or a joker) and you hold white, white, white, white")

    def test_forgiving_build_fills_the_card(self):
        g = kcc_game()
        hand(g, track=["black", "white", "white", "white"])
        assert g.resolve("Ann", Build("KCC", "DEN-KCY", take=STACK)) == Build("KCC", "DEN-KCY", "black", take=STACK)
        hand(g, track=["white", "white", "white", "white"])
        e = refused(g, Build("KCC", "DEN-KCY", take=STACK))
        assert reason(e) == ("you cannot build KCC on DEN-KCY: it needs a plain or black track card "
                            "(or a joker) and you hold white, white, white, white")

    def test_union_pacific_builds_nothing_and_unknown_section(self):
        g = kcc_game()
        assert reason(refused(g, Build(UP, "DEN-KCY", "plain", take=STACK))) == (
            "Union Pacific has no trains and builds no track")
        assert reason(refused(g, Build("KCC", "DEN-MIA", "plain", take=STACK))) == (
            "there is no section DEN-MIA on this board")

    def test_owning_shares_not_required(self):
        g = kcc_game()
        hand(g, shares=[])
        g.push("Ann", Build("WW", "BIL-CHY", "white", take=STACK))
        assert g.placed["BIL-CHY"] == [None, "WW"]


# ====================================================================== share draw
class TestShareDraw:
    """rules: A turn, BUILD, step 3; Four of a kind; Dividends."""

    def test_take_face_up_refills_from_stack(self):
        g = kcc_game()
        g.display = ["MRR", "UMR", "EPRG", "DM"]
        g.stack = ["BNL", "MS", "WW"] + g.stack[3:]
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=Take("display", "UMR")))
        assert g.display == ["MRR", "BNL", "EPRG", "DM"]
        assert g.share_hands["Ann"] == ["MS", "UMR"]
        assert g.stack[:2] == ["MS", "WW"]

    def test_take_display_place_number(self):
        g = kcc_game()
        g.display = ["MRR", "UMR", "EPRG", "DM"]
        done = g.resolve("Ann", Build("KCC", "DEN-KCY", "plain", take=Take("display", place=3)))
        assert done.take == Take("display", "EPRG")
        assert reason(refused(g, Build("KCC", "DEN-KCY", "plain", take=Take("display", "KCC")))) == (
            "no KCC share is face up (the display shows MRR, UMR, EPRG, DM)")

    def test_take_stack_top_unseen(self):
        g = kcc_game()
        g.stack = ["WW"] + g.stack[1:]
        n = len(g.stack)
        events = english(g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK)))
        assert g.share_hands["Ann"] == ["MS", "WW"]
        assert len(g.stack) == n - 1
        assert not any("WW" in e for e in events)  # the drawn card stays secret

    def test_take_up_while_it_lasts(self):
        g = kcc_game()
        g.up_pile = 1
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=UPT))
        assert g.share_hands["Ann"] == ["MS", UP]
        assert g.up_pile == 0
        g.current = 0
        hand(g, track=["plain"] * 4)
        e = refused(g, Build("KCC", "ATL-KCY", "plain", take=UPT))
        assert reason(e) == "the UP pile is empty: no UP share can be taken"
        assert "take UP" not in e.legal

    def test_a_share_must_be_drawn(self):
        g = kcc_game()
        e = refused(g, Build("KCC", "DEN-KCY", "plain"))
        assert reason(e) == "after building, say which share to take"
        e = refused(g, Build("KCC", "DEN-KCY", "plain", take=Take("none")))
        assert reason(e) == "a share must be drawn while one can be"

    def test_take_none_only_when_nothing_left(self):
        g = kcc_game()
        g.display = [None, None, None, None]
        g.stack = []
        g.up_pile = 0
        assert g.share_options() == [Take("none")]
        done = g.resolve("Ann", Build("KCC", "DEN-KCY", "plain"))
        assert done.take == Take("none")
        g.push("Ann", done)
        assert g.share_hands["Ann"] == ["MS"]

    def test_up_only_by_swap_option(self):
        g = kcc_game(up_only_by_swap=True)
        assert Take("up") not in g.share_options()
        e = refused(g, Build("KCC", "DEN-KCY", "plain", take=UPT))
        assert reason(e) == "with the option up_only_by_swap, UP shares come only by the swap"
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK, swap="MS"))
        assert UP in g.share_hands["Ann"]

    def test_empty_stack(self):
        g = kcc_game()
        g.stack = []
        assert Take("stack") not in g.share_options()
        assert reason(refused(g, Build("KCC", "DEN-KCY", "plain", take=STACK))) == "the share stack is empty"

    def test_face_up_place_stays_empty_when_stack_is_empty(self):
        g = kcc_game()
        g.display = ["MRR", "UMR", "EPRG", "DM"]
        g.stack = []
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=Take("display", "DM")))
        assert g.display == ["MRR", "UMR", "EPRG", None]
        g.current = 0
        hand(g, track=["plain"] * 4)
        assert reason(refused(g, Build("KCC", "ATL-KCY", "plain", take=Take("display", place=4)))) == (
            "face-up place 4 is empty")


class TestFourOfAKind:
    """rules: Four of a kind (removed face down, replaced, repeated)."""

    def test_four_of_a_kind_after_refill(self):
        g = kcc_game()
        g.display = ["KCC", "KCC", "KCC", "DM"]
        g.stack = ["KCC", "MS", "WW", "BNL", "ESL", "SFRB"] + [c for c in g.stack if c != DIVIDEND][:10] + g.stack[-40:]
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=Take("display", "DM")))
        assert g.removed == ["KCC"] * 4
        assert g.display == ["MS", "WW", "BNL", "ESL"]
        assert g.stack[0] == "SFRB"
        assert any("Four KCC shares face up" in e for e in english(g.events))

    def test_four_of_a_kind_repeated(self):
        g = kcc_game()
        g.display = ["KCC", "KCC", "KCC", "DM"]
        g.stack = ["KCC", "MS", "MS", "MS", "MS", "WW", "WW", "WW", "WW", "ESL", "BNL", "UMR", "SFRB", "EPRG"]
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=Take("display", "DM")))
        assert g.removed == ["KCC"] * 4 + ["MS"] * 4 + ["WW"] * 4
        assert g.display == ["ESL", "BNL", "UMR", "SFRB"]
        assert g.stack == ["EPRG"]

    def test_dividend_drawn_while_replacing_four_of_a_kind(self):
        g = kcc_game()
        g.invested = {"Ann": {"KCC": 1}, "Bob": {}, "Cy": {}}
        g.display = ["KCC", "KCC", "KCC", "DM"]
        g.stack = ["KCC", "MS", DIVIDEND, "MS", "MS", "MS", "WW", "ESL", "BNL", "UMR", "SFRB", DIVIDEND, DIVIDEND, DIVIDEND]
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=Take("display", "DM")))
        # the dividend card is laid open and replaced; the replacements make four MS
        assert g.removed == ["KCC"] * 4 + ["MS"] * 4
        assert g.display == ["WW", "ESL", "BNL", "UMR"]
        assert g.dividends_paid == 1
        assert g.money["Ann"] == 3 + 1  # KCC worth 3 (sole investor: 3 + 1)
        assert g.to_move == "Bob"  # play goes on after the one who drew

    def test_four_of_a_kind_at_setup_replaced_before_the_dividends(self):
        """rules: Setup 6-7: the display is turned up (four of a kind replaced) before
        the stack gets its dividend cards.  Seed 1158 turns up four EPRG."""
        g = new_game(seed=1158)
        rest = list(g.stack)
        assert rest[:5] == ["EPRG"] * 5
        for p in g.players:
            g.push(p, g.legal_actions(p)[0])
        assert g.removed == ["EPRG"] * 4
        assert g.display == ["EPRG", "BNL", "MRR", "MS"] == rest[4:8]
        assert sorted(c for c in g.stack if c != DIVIDEND) == sorted(rest[8:])
        assert g.stack[:6] == rest[8:14]
        assert "Four EPRG shares face up: removed from the game and replaced." in english(g.events)
        check_invariants(g)


# ====================================================================== UP swap
class TestUpSwap:
    """rules: A turn, BUILD, step 4."""

    def test_swap_any_held_share_even_the_one_drawn(self):
        g = kcc_game()
        g.display = ["MRR", "UMR", "EPRG", "DM"]
        n = g.up_pile
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=Take("display", "UMR"), swap="UMR"))
        assert g.share_hands["Ann"] == ["MS", UP]
        assert g.returned["Ann"] == ["UMR"]
        assert g.up_pile == n - 1
        assert not any("UMR" in e and "return" in e for e in english(g.events))  # returned unseen

    def test_swap_a_up_share(self):
        g = kcc_game()
        hand(g, shares=[UP])
        n = g.up_pile
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=UPT, swap=UP))
        assert g.share_hands["Ann"] == [UP, UP]
        assert g.returned["Ann"] == [UP]
        assert g.up_pile == n - 2

    def test_swap_needs_the_share(self):
        g = kcc_game()
        e = refused(g, Build("KCC", "DEN-KCY", "plain", take=STACK, swap="KCC"))
        assert reason(e) == ("you will hold no KCC share to return in the swap (you will hold: MS) "
                            "(a share drawn unseen from the stack cannot be named in advance: write "
                            "'swap drawn' to return it)")

    def test_swap_refused_when_pile_empty(self):
        g = kcc_game()
        g.up_pile = 0
        e = refused(g, Build("KCC", "DEN-KCY", "plain", take=STACK, swap="MS"))
        assert reason(e) == "the UP pile is empty: no UP swap is possible"
        g.up_pile = 1
        e = refused(g, Build("KCC", "DEN-KCY", "plain", take=UPT, swap="MS"))
        assert reason(e) == "you take the last UP share: the UP pile is then empty and no UP swap is possible"
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK, swap="MS"))
        assert g.up_pile == 0

    def test_legal_swaps(self):
        g = kcc_game()
        g.display = ["MRR", "UMR", "EPRG", "DM"]
        legal = g.legal_actions("Ann")
        swaps = {a.swap for a in legal if isinstance(a, Build) and a.take == Take("display", "UMR")}
        assert swaps == {None, "MS", "UMR"}
        swaps = {a.swap for a in legal if isinstance(a, Build) and a.take == STACK}
        assert swaps == {None, "MS"}

    # 'swap drawn' (issue 11): rules BUILD step 4, "even the one just drawn"
    def test_swap_drawn_returns_the_share_just_drawn(self):
        g = kcc_game()
        g.stack = ["KCC", "WW"] + g.stack
        n = g.up_pile
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK, swap=DRAWN))
        assert g.share_hands["Ann"] == ["MS", UP]
        assert g.returned["Ann"] == ["KCC"]
        assert g.up_pile == n - 1 and g.stack[0] == "WW"
        # recorded as written: 'drawn' (the seeded stack makes it exact on replay)
        assert str(g.history[-1][1]) == "build KCC DEN-KCY plain; take stack; swap drawn"
        assert not any("KCC" in e and "return" in e for e in english(g.events))  # returned unseen

    def test_swap_drawn_after_a_dividend_card_returns_the_card_drawn_in_its_place(self):
        g = kcc_game()
        g.stack = [DIVIDEND, "WW", "KCC"] + [c for c in g.stack if c != DIVIDEND]
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK, swap=DRAWN))
        assert g.returned["Ann"] == ["WW"] and g.share_hands["Ann"] == ["MS", UP]
        assert g.dividends_paid == 1

    def test_swap_drawn_only_after_a_take_from_the_stack(self):
        g = kcc_game()
        g.display = ["MRR", "UMR", "EPRG", "DM"]
        e = refused(g, Build("KCC", "DEN-KCY", "plain", take=Take("display", "UMR"), swap=DRAWN))
        assert e.code == "swap_drawn_needs_stack"
        assert reason(e) == ("'swap drawn' returns the share just drawn from the stack; with 'take UMR' "
                             "nothing is drawn unseen: name the share to return, or write "
                             "'take stack; swap drawn'")
        assert refused(g, Build("KCC", "DEN-KCY", "plain", take=UPT, swap=DRAWN)).code == "swap_drawn_needs_stack"

    def test_swap_drawn_needs_a_share_in_the_stack_and_a_up_share(self):
        g = kcc_game()
        g.stack = [DIVIDEND]
        e = refused(g, Build("KCC", "DEN-KCY", "plain", take=STACK, swap=DRAWN))
        assert reason(e) == "the stack holds no more share: nothing is drawn from it to swap"
        g = kcc_game()
        g.up_pile = 0
        e = refused(g, Build("KCC", "DEN-KCY", "plain", take=STACK, swap=DRAWN))
        assert e.code == "up_pile_empty_no_swap"

    def test_swap_drawn_with_up_only_by_swap(self):
        """Option up_only_by_swap: UP comes only by the swap; 'take stack; swap
        drawn' is such a swap (rules: BUILD, step 3, variant 002)."""
        g = kcc_game(up_only_by_swap=True)
        assert refused(g, Build("KCC", "DEN-KCY", "plain", take=UPT)).code == "up_only_by_swap"
        g.stack = ["DM"] + g.stack
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK, swap=DRAWN))
        assert g.share_hands["Ann"] == ["MS", UP] and g.returned["Ann"] == ["DM"]

    def test_stack_draws_names_each_players_draws_by_replay(self):
        g = started()
        drawn, starts = [], []
        for _ in range(4):
            p = g.to_move
            build = next((a for a in g.legal_actions(p) if isinstance(a, Build) and a.take == STACK
                          and a.swap is None and a.redraw is None), None)
            if build is None:
                break
            drawn.append((p, g.stack_share()))
            starts.append(len(g.events))
            g.push(p, Build(build.company, build.section, build.card, build.space, STACK,
                            DRAWN if len(drawn) == 2 else None))
        assert len(drawn) == 4
        before = g.to_dict()
        want = [(s, p, share, i == 1) for i, (s, (p, share)) in enumerate(zip(starts, drawn))]
        assert g.stack_draws() == want
        assert g.stack_draws(starts[2]) == want[2:]
        assert g.to_dict() == before  # the game is unchanged


# ====================================================================== INVEST
class TestInvest:
    """rules: A turn, INVEST."""

    def test_any_number_of_one_company(self):
        g = kcc_game()
        hand(g, shares=["KCC", "KCC", "KCC", "MS"])
        g.push("Ann", Invest(("KCC", "KCC", "KCC"), "white"))
        assert g.invested["Ann"]["KCC"] == 3
        assert g.share_hands["Ann"] == ["MS"]
        assert g.track_hands["Ann"] == ["black", "joker", "plain"]
        assert g.track_discards[0] == "white"

    def test_one_each_of_two_companies_up_counts(self):
        g = kcc_game()
        hand(g, shares=["KCC", "KCC", UP])
        g.push("Ann", Invest(("KCC", UP), "plain"))
        assert g.invested["Ann"].get("KCC") == 1 and g.invested["Ann"].get(UP) == 1

    def test_two_companies_only_one_each(self):
        g = kcc_game()
        hand(g, shares=["KCC", "KCC", "MS"])
        e = refused(g, Invest(("KCC", "KCC", "MS"), "plain"))
        assert reason(e) == "invest any number of shares of ONE company, or exactly one share each of TWO companies"
        e = refused(g, Invest(("DM", "KCC", "MS"), "plain"))
        assert reason(e).startswith("invest any number")

    def test_shares_must_be_held(self):
        g = kcc_game()
        hand(g, shares=["KCC"])
        assert reason(refused(g, Invest(("KCC", "KCC"), "plain"))) == "you hold 1 KCC share, not 2"
        assert reason(refused(g, Invest(("DM",), "plain"))) == "you hold no DM share: you can invest only the shares in your hand"

    def test_discard_required_and_held(self):
        g = kcc_game()
        hand(g, shares=["KCC"])
        e = refused(g, Invest(("KCC",)))
        assert reason(e) == "say which track card to discard after investing"
        assert reason(refused(g, Invest(("KCC",), "black-white"))) == "you hold no black-white track card"
        hand(g, track=["plain", "plain", "plain", "plain"])
        assert g.resolve("Ann", Invest(("KCC",))) == Invest(("KCC",), "plain")

    def test_invest_draws_nothing(self):
        g = kcc_game()
        hand(g, shares=["KCC"])
        stack, display, up = list(g.stack), list(g.display), g.up_pile
        g.push("Ann", Invest(("KCC",), "plain"))
        assert (g.stack, g.display, g.up_pile) == (stack, display, up)
        assert g.placed == started().placed


# ====================================================================== pass
class TestPass:
    """rules: No legal action (open / PBEM decision)."""

    def test_pass_only_without_build_or_invest(self):
        g = kcc_game()
        e = refused(g, Pass("plain"))
        assert reason(e) == ("you may pass only when you can neither build nor invest, and you hold "
                            "shares to invest (MS)")
        hand(g, shares=[])
        e = refused(g, Pass("plain"))
        assert reason(e) == "you may pass only when you can neither build nor invest, and you can build"

    def test_pass_discards(self):
        g = kcc_game()
        hand(g, shares=[])
        for c in COMPANIES:
            set_box(g, c, 0)
        assert not g.has_legal_build("Ann")
        legal = g.legal_actions("Ann")
        assert legal == [Pass(k) for k in ["black", "joker", "plain", "white"]]
        assert reason(refused(g, Pass())) == "say which track card to discard to pass"
        g.push("Ann", Pass("white"))
        assert g.track_discards[0] == "white"
        assert g.to_move == "Bob"

    def test_pass_with_no_card(self):
        g = kcc_game()
        hand(g, track=[], shares=[])
        assert g.legal_actions("Ann") == [Pass(None)]
        g.push("Ann", Pass())
        assert g.to_move == "Bob"

    def test_no_playable_card(self):
        g = kcc_game()
        hand(g, track=["white"] * 4, shares=[])
        for c in COMPANIES:
            if c != "KCC":
                set_box(g, c, 0)
        assert not g.has_legal_build("Ann")  # KCC has no white track
        g.push("Ann", Pass("white"))


# ====================================================================== turn and track deck
class TestTurn:
    """rules: A turn (track draw), Setup 2 (reshuffle), Setup 8 (order)."""

    def test_turn_order_follows_players_list(self):
        g = started(players=("Cy", "Ann", "Bob"))
        order = []
        rng = random.Random(4)
        for _ in range(7):
            order.append(g.to_move)
            g.push(g.to_move, g.random_action(g.to_move, rng))
        assert order == ["Cy", "Ann", "Bob", "Cy", "Ann", "Bob", "Cy"]

    def test_random_turn_order_from_seed(self):
        assert sorted(turn_order(["a", "b", "c", "d"], 5)) == ["a", "b", "c", "d"]
        assert turn_order(["a", "b", "c", "d"], 5) == turn_order(["a", "b", "c", "d"], 5)
        assert len({tuple(turn_order(["a", "b", "c", "d"], s)) for s in range(30)}) > 5

    def test_track_card_drawn_at_turn_start(self):
        g = new_game()
        assert all(len(v) == 3 for v in g.track_hands.values())
        top = g.track_deck[0]
        for p in g.players:
            g.push(p, g.legal_actions(p)[0])
        assert len(g.track_hands["Ann"]) == 4 and top in g.track_hands["Ann"]
        assert len(g.track_hands["Bob"]) == 3
        nxt = g.track_deck[0]
        hand(g, shares=["MS"])
        g.push("Ann", Invest(("MS",), g.track_hands["Ann"][0]))
        assert len(g.track_hands["Ann"]) == 3
        assert len(g.track_hands["Bob"]) == 4 and nxt in g.track_hands["Bob"]

    def test_reshuffle_discards_when_deck_empty(self):
        g = kcc_game()
        hand(g, shares=["MS"])
        g.track_deck = []
        g.track_discards = ["white", "plain"]
        g.push("Ann", Invest(("MS",), "black"))
        assert g.reshuffles == 1
        assert sorted(g.track_hands["Bob"] + g.track_deck) == sorted(
            started().track_hands["Bob"] + ["white", "plain", "black"])
        assert g.track_discards == []
        assert len(g.track_deck) == 2
        assert any("discards were shuffled" in e for e in english(g.events))

    def test_no_card_to_draw_when_deck_and_discards_empty(self):
        g = kcc_game()
        hand(g, shares=["MS"])
        g.track_deck, g.track_discards = [], []
        bob = list(g.track_hands["Bob"])
        g.push("Ann", Invest(("MS",), "black"))
        # the discard of this turn is on the pile: it is shuffled and drawn
        assert sorted(g.track_hands["Bob"]) == sorted(bob + ["black"])
        hand(g, "Bob", shares=["DM"])
        g.track_deck, g.track_discards = [], []
        g.push("Bob", Invest(("DM",), g.track_hands["Bob"][0]))
        assert len(g.track_hands["Cy"]) == 4  # Bob's discard reshuffled for Cy
        hand(g, "Cy", shares=["DM"])
        g.track_deck, g.track_discards = [], []
        cy_card = g.track_hands["Cy"][0]
        ann = list(g.track_hands["Ann"])
        g.push("Cy", Invest(("DM",), cy_card))
        assert g.track_hands["Ann"] == sorted(ann + [cy_card])
        # truly nothing left: neither deck nor discards
        hand(g, "Ann", shares=["DM"])
        g.track_deck, g.track_discards = [], []
        g.track_hands["Ann"] = []
        g.push("Ann", Invest(("DM",)))
        assert g.track_discards == [] and g.track_deck == []
        # Bob drew nothing: the deck and the discards were empty
        assert any("No track card is left for Bob" in e for e in english(g.events))

    def test_not_your_turn(self):
        g = kcc_game()
        e = refused(g, Invest(("MS",), "plain"), player="Bob")
        assert reason(e) == "it is not your turn; it is Ann's turn"


# ====================================================================== initial investment
class TestInitialInvestment:
    """rules: Setup 3-5."""

    @pytest.mark.parametrize("ruleset, n", [("first-edition", 4), ("second-edition", 5)])
    def test_hands_dealt(self, ruleset, n):
        g = new_game(ruleset=ruleset, players=("a", "b", "c", "d"))
        for p in g.players:
            assert len(g.share_hands[p]) == n + 1 and g.share_hands[p].count(UP) >= 1
            assert len(g.track_hands[p]) == 3
        assert g.up_pile == 20 - 4
        assert len(g.track_deck) == 40 - 12

    def test_first_edition_allows_up(self):
        g = new_game()
        assert Start(UP) in g.legal_actions("Ann")
        g.push("Ann", Start(UP))
        assert g.initial_choice["Ann"] == UP

    def test_second_edition_refuses_up(self):
        g = new_game(ruleset="second-edition")
        assert Start(UP) not in g.legal_actions("Ann")
        e = refused(g, Start(UP), player="Ann")
        assert reason(e) == ("in the second edition the UP share may not be the initial investment; "
                            "choose one of the five company shares dealt")

    def test_choices_secret_until_all_revealed(self):
        g = new_game()
        share = g.legal_actions("Bob")[-1].share  # type: ignore[union-attr]
        held = g.share_hands["Bob"].count(share)
        g.push("Bob", Start(share))
        assert g.waiting_for() == ["Ann", "Cy"]
        assert g.invested["Bob"] == {}
        for v in (g.public_view(), g.view("Ann"), g.view("Cy")):
            assert all(share not in line for line in english(v["log"]))
            assert v["players"][1]["invested"] == {} and v["players"][1]["chosen"] is True
            assert v["display"] == []
        assert g.view("Bob")["you"]["initial_choice"] == share
        assert g.view("Ann")["you"]["initial_choice"] is None
        assert reason(refused(g, Start(share), player="Bob")) == (
            f"you have already chosen your initial investment ({share})")
        g.push("Ann", g.legal_actions("Ann")[0])
        g.push("Cy", g.legal_actions("Cy")[0])
        assert g.phase == "play"
        assert g.invested["Bob"] == {share: 1}
        assert g.share_hands["Bob"].count(share) == held - 1
        assert len(g.display) == 4
        assert g.view("Bob")["you"]["initial_choice"] is None

    def test_only_start_accepted_in_initial_phase(self):
        g = new_game()
        assert reason(refused(g, Build("KCC", "DEN-KCY", "plain"), player="Ann")) == (
            "the game is waiting for the initial investments: choose one share from your hand")
        missing = next(c for c in COMPANIES if c not in g.share_hands["Ann"])
        e = refused(g, Start(missing), player="Ann")
        assert reason(e) == f"you hold no {missing} share"
        assert e.legal == [str(Start(s)) for s in sorted(set(g.share_hands["Ann"]))]

    def test_invest_one_share_reads_as_start(self):
        g = new_game()
        share = g.share_hands["Ann"][0]
        assert g.resolve("Ann", Invest((share,))) == Start(share)


# ====================================================================== stack build
def stack_of(ruleset: str, spread: bool, seed: int = 11, players: int = 4) -> tuple[Game, list[str]]:
    g = new_game(players=[f"p{i}" for i in range(players)], seed=seed, ruleset=ruleset,
                 spread_dividends=spread)
    rest = list(g.stack)
    for p in g.players:
        g.push(p, g.legal_actions(p)[0])
    assert len(set(rest[:4])) > 1, "pick a seed without a four of a kind at setup"
    return g, rest[4:]


def div_positions(stack: list[str]) -> list[int]:
    return [i for i, c in enumerate(stack) if c == DIVIDEND]


class TestStackBuild:
    """rules: Setup 7, both rulesets and both wordings of spread_dividends."""

    def test_first_edition(self):
        g, rest = stack_of("first-edition", False)
        n = len(rest)  # 98 - 16 - 4 = 78
        assert n == 78 and len(g.stack) == 82
        assert g.stack[:6] == rest[:6]
        pos = div_positions(g.stack)
        assert len(pos) == 4
        assert 6 <= pos[0] < 6 + 19  # the 18-pile + 1
        assert all(6 + 19 <= p < 82 for p in pos[1:])  # the rest + 3
        assert sorted(c for c in g.stack[6:25] if c != DIVIDEND) == sorted(rest[6:24])
        assert sorted(c for c in g.stack[25:] if c != DIVIDEND) == sorted(rest[24:])

    def test_second_edition(self):
        g, rest = stack_of("second-edition", False)
        n = len(rest)  # 98 - 20 - 4 = 74
        assert n == 74 and len(g.stack) == 78
        assert g.stack[:6] == rest[:6]  # first 6
        assert g.stack[-6:] == rest[6:12]  # second 6 at the bottom: a card is always left
        pos = div_positions(g.stack)
        assert 6 <= pos[0] < 25
        assert all(25 <= p < 78 - 6 for p in pos[1:])
        assert sorted(c for c in g.stack[6:25] if c != DIVIDEND) == sorted(rest[12:30])
        assert sorted(c for c in g.stack[25:-6] if c != DIVIDEND) == sorted(rest[30:])

    def test_spread_first_edition_wording(self):
        """000: from the bottom: dividend pile, 6-pile, ...; a 6-pile ends on top."""
        g, rest = stack_of("first-edition", True)
        bigs = [14, 14, 13, 13]  # 78 - 24 = 54 in four roughly equal piles
        i = 0
        expected_div_ranges = []
        for k in range(4):
            assert g.stack[i : i + 6] == rest[6 * k : 6 * k + 6]  # a 6-pile, no dividend
            i += 6
            expected_div_ranges.append(range(i, i + bigs[k] + 1))
            i += bigs[k] + 1
        assert i == len(g.stack) == 82
        pos = div_positions(g.stack)
        assert len(pos) == 4
        for p, r in zip(pos, expected_div_ranges):
            assert p in r

    def test_spread_second_edition_wording(self):
        """002: a dividend card in each 6-pile; each larger pile lies on one; a larger
        pile ends on top."""
        g, rest = stack_of("second-edition", True)
        bigs = [13, 13, 12, 12]  # 74 - 24 = 50
        i = 0
        ranges = []
        off = 24
        for k in range(4):
            assert g.stack[i : i + bigs[k]] == rest[off : off + bigs[k]]  # larger pile, no dividend
            off += bigs[k]
            i += bigs[k]
            ranges.append(range(i, i + 7))
            assert sorted(c for c in g.stack[i : i + 7] if c != DIVIDEND) == sorted(rest[6 * k : 6 * k + 6])
            i += 7
        assert i == len(g.stack) == 78
        for p, r in zip(div_positions(g.stack), ranges):
            assert p in r

    @pytest.mark.parametrize("ruleset", RULESETS)
    @pytest.mark.parametrize("spread", [False, True])
    @pytest.mark.parametrize("players", [2, 6])
    def test_every_share_in_stack_or_display(self, ruleset, spread, players):
        g, rest = stack_of(ruleset, spread, seed=12, players=players)
        assert sorted(c for c in g.stack if c != DIVIDEND) == sorted(rest)
        assert g.stack.count(DIVIDEND) == 4


# ====================================================================== dividends in play
def dividend_game(players=("Ann", "Bob", "Cy"), **kw) -> Game:
    g = started(players=players, **kw)
    hand(g, track=["plain", "plain", "plain", "plain"], shares=["MS"])
    for p in g.players:
        g.invested[p] = {}
    return g


class TestDividends:
    """rules: Dividends; Company dividends; Union Pacific dividends; Game end."""

    def test_dividend_drawn_from_stack_pays_and_replaces(self):
        g = dividend_game()
        g.invested["Ann"] = {"KCC": 2}
        g.invested["Bob"] = {"KCC": 1, UP: 3}
        g.stack = [DIVIDEND, "WW", "MS"] + [DIVIDEND] * 3
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK))
        assert g.share_hands["Ann"] == ["MS", "WW"]  # the next card drawn in its place
        assert g.dividends_paid == 1
        # KCC worth 3: Ann primary 3, Bob secondary 1; UP pays nothing at dividend 1
        assert g.money == {"Ann": 3, "Bob": 1, "Cy": 0}
        assert g.payouts[0]["paid"]["KCC"] == {"Ann": 3, "Bob": 1}
        assert g.payouts[0]["paid"][UP] == {"Bob": 0}
        assert g.to_move == "Bob"

    def test_dividend_on_display_refill(self):
        g = dividend_game()
        g.invested["Cy"] = {"DM": 1}
        g.display = ["MRR", "UMR", "EPRG", "DM"]
        g.stack = [DIVIDEND, "WW"] + [DIVIDEND] * 3
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=Take("display", "MRR")))
        assert g.display == ["WW", "UMR", "EPRG", "DM"]
        assert g.money["Cy"] == 3  # DM worth 2, sole investor 2 + 1

    def test_double_dividend(self):
        g = dividend_game()
        g.invested["Ann"] = {UP: 2}
        g.invested["Bob"] = {UP: 1}
        g.stack = [DIVIDEND, DIVIDEND, "WW", "MS", DIVIDEND, DIVIDEND]
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK))
        assert g.dividends_paid == 2
        assert [p["dividend"] for p in g.payouts] == [1, 2]
        assert g.money == {"Ann": 0 + 10, "Bob": 0 + 8, "Cy": 0}
        assert g.share_hands["Ann"] == ["MS", "WW"]
        assert any("Double dividend" in e for e in english(g.events))

    def test_double_dividend_third_and_fourth_ends_the_game(self):
        g = dividend_game(players=("Ann", "Bob", "Cy", "Di"))
        g.dividends_paid = g.dividends_drawn = 2
        g.invested["Ann"] = {UP: 1}
        g.stack = [DIVIDEND, DIVIDEND, "WW", "MS"]
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK))
        assert g.phase == "over"
        assert [p["dividend"] for p in g.payouts] == [3, 4]
        assert g.money["Ann"] == 15 + 20
        assert g.winners() == ["Ann"]
        assert g.waiting_for() == [] and g.to_move is None
        assert reason(refused(g, Pass(), player="Ann")) == "the game is over; no more orders are accepted"

    def test_game_ends_after_fourth_dividend(self):
        g = dividend_game(players=("Ann", "Bob", "Cy", "Di"))
        g.dividends_paid = g.dividends_drawn = 3
        g.stack = ["WW", DIVIDEND, "MS", "DM"]
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK))
        assert g.phase == "play" and g.to_move == "Bob"
        hand(g, "Bob", track=["plain"] * 4)
        g.push("Bob", Build("KCC", "ATL-KCY", "plain", take=STACK))
        assert g.phase == "over" and g.dividends_paid == 4
        assert IMAGINARY not in g.money
        assert g.standings()[0][0] == 1

    def test_swap_not_made_after_the_game_ended(self):
        g = dividend_game(players=("Ann", "Bob", "Cy", "Di"))
        g.dividends_paid = g.dividends_drawn = 3
        g.stack = [DIVIDEND, "MS", "DM"]
        n = g.up_pile
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK, swap="MS"))
        assert g.phase == "over"
        assert g.up_pile == n and g.returned["Ann"] == []
        assert any("swap is not made" in e for e in english(g.events))

    def test_dividend_as_last_card_of_the_stack(self):
        """open point: nothing is drawn in its place; the face-up place stays empty."""
        g = dividend_game(players=("Ann", "Bob", "Cy", "Di"))
        g.dividends_paid = g.dividends_drawn = 2
        g.display = ["MRR", "UMR", "EPRG", "DM"]
        g.stack = [DIVIDEND]
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=Take("display", "DM")))
        assert g.display == ["MRR", "UMR", "EPRG", None]
        assert g.dividends_paid == 3 and g.stack == []
        g2 = dividend_game(players=("Ann", "Bob", "Cy", "Di"))
        g2.dividends_paid = g2.dividends_drawn = 2
        g2.stack = [DIVIDEND]
        g2.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK))
        assert g2.share_hands["Ann"] == ["MS"]
        assert any("nothing was drawn" in e for e in english(g2.events))

    def test_company_values(self):
        g = dividend_game()
        assert {c: g.value(c) for c in COMPANIES} == {c: (3 if c == "EPRG" else 2) for c in COMPANIES}

    def test_up_table_example(self):
        """2nd dividend, A and B tie for most UP shares, C third: 9, 9, 6."""
        g = dividend_game()
        g.dividends_paid = g.dividends_drawn = 1
        g.invested = {"Ann": {UP: 3}, "Bob": {UP: 3}, "Cy": {UP: 1}}
        g.stack = [DIVIDEND, "WW"] + [DIVIDEND] * 2
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK))
        assert g.payouts[-1]["paid"][UP] == {"Ann": 9, "Bob": 9, "Cy": 6}

    def test_shares_in_hand_count_for_nothing(self):
        g = dividend_game()
        hand(g, shares=["KCC"] * 5 + [UP] * 5)
        g.invested["Bob"] = {"KCC": 1}
        g.stack = [DIVIDEND, "WW"] + [DIVIDEND] * 3
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK))
        assert g.money == {"Ann": 0, "Bob": 3 + 1, "Cy": 0}

    def test_payout_uses_values_at_payment(self):
        g = dividend_game()
        g.invested["Ann"] = {"KCC": 1}
        g.stack = [DIVIDEND, "WW"] + [DIVIDEND] * 3
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK))  # the new train counts
        assert g.payouts[0]["values"]["KCC"] == 3
        assert g.money["Ann"] == 3 + 1


class TestTwoPlayers:
    """rules: Two players (3rd dividend ends; imaginary third player)."""

    def test_third_dividend_ends_with_imaginary_player(self):
        g = dividend_game(players=("Ann", "Bob"))
        g.dividends_paid = g.dividends_drawn = 2
        g.invested = {"Ann": {"KCC": 2, UP: 1}, "Bob": {"DM": 1, UP: 2}}
        g.display = ["KCC", "KCC", "DM", "MS"]
        g.stack = [DIVIDEND, "WW", "KCC", DIVIDEND, "DM"]
        g.up_pile = 3
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK))
        assert g.phase == "over" and g.dividends_paid == 3
        pay = g.payouts[-1]
        assert pay["holdings"][IMAGINARY] == {"DM": 2, "KCC": 3, "MS": 1, UP: 3}
        # KCC worth 3: imaginary 3 shares primary (3), Ann 2 secondary (1)
        assert pay["paid"]["KCC"] == {IMAGINARY: 3, "Ann": 1}
        # DM worth 2: imaginary 2, Bob 1
        assert pay["paid"]["DM"] == {IMAGINARY: 2, "Bob": 1}
        # MS worth 2: imaginary sole investor 3
        assert pay["paid"]["MS"] == {IMAGINARY: 3}
        # UP at dividend 3: imaginary 3 shares 15, Bob 2 shares 12, Ann 1 share 9
        assert pay["paid"][UP] == {IMAGINARY: 15, "Bob": 12, "Ann": 9}
        assert g.money == {"Ann": 10, "Bob": 13, IMAGINARY: 23}
        assert g.standings() == [(1, IMAGINARY, 23), (2, "Bob", 13), (3, "Ann", 10)]
        assert g.winners() == [IMAGINARY]
        assert g.stack == ["KCC", DIVIDEND, "DM"]  # the 4th card stays unused

    def test_second_and_third_double_ends(self):
        g = dividend_game(players=("Ann", "Bob"))
        g.dividends_paid = g.dividends_drawn = 1
        g.stack = [DIVIDEND, DIVIDEND, "WW", DIVIDEND]
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK))
        assert g.phase == "over" and [p["dividend"] for p in g.payouts] == [2, 3]
        assert IMAGINARY not in g.payouts[0]["holdings"] and IMAGINARY in g.payouts[1]["holdings"]

    def test_fourth_card_drawn_after_third_is_unused(self):
        g = dividend_game(players=("Ann", "Bob"))
        g.dividends_paid = g.dividends_drawn = 2
        g.stack = [DIVIDEND, DIVIDEND, "WW"]
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK))
        assert g.phase == "over" and g.dividends_paid == 3 and g.dividends_drawn == 4
        assert any("not used" in e for e in english(g.events))
        assert g.share_hands["Ann"] == ["MS", "WW"]


class TestWinner:
    """rules: Game end (open: equal money is a shared win)."""

    def test_tie_is_shared_win(self):
        g = dividend_game()
        g.dividends_paid = g.dividends_drawn = 3
        g.invested = {"Ann": {"KCC": 1}, "Bob": {"KCC": 1}, "Cy": {}}
        g.stack = [DIVIDEND, "WW"]
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK))
        assert g.phase == "over"
        assert g.money == {"Ann": 2, "Bob": 2, "Cy": 0}  # (3 + 1) / 2 each
        assert g.winners() == ["Ann", "Bob"]
        assert g.standings() == [(1, "Ann", 2), (1, "Bob", 2), (3, "Cy", 0)]

    def test_no_winners_before_the_end(self):
        assert started().winners() == []


# ====================================================================== company payout ties
class TestCompanyPayout:
    """rules: Company dividends (every tie case)."""

    @pytest.mark.parametrize("holdings, value, expected", [
        ({"A": 3, "B": 1}, 5, {"A": 5, "B": 2}),  # primary and secondary
        ({"A": 2}, 5, {"A": 7}),  # sole investor: both amounts
        ({"A": 2, "B": 2, "C": 1}, 5, {"A": 3, "B": 3}),  # tie for most: (5 + 2) / 2
        ({"A": 1, "B": 1, "C": 1}, 6, {"A": 3, "B": 3, "C": 3}),  # three tie: 9 / 3
        ({"A": 3, "B": 1, "C": 1}, 5, {"A": 5, "B": 1, "C": 1}),  # tie for second: 2 / 2
        ({"A": 3, "B": 1, "C": 1, "D": 1}, 5, {"A": 5, "B": 0, "C": 0, "D": 0}),  # 2 / 3 -> 0
        ({"A": 4, "B": 2, "C": 1}, 7, {"A": 7, "B": 3}),  # third gets nothing; 7 // 2 = 3
        ({}, 5, {}),
        ({"A": 0}, 5, {}),
    ])
    def test_company_payout(self, holdings, value, expected):
        assert company_payout(holdings, value) == expected


# ====================================================================== option: dead track redraw
class TestDeadTrackRedraw:
    """rules: No legal action, option dead_track_redraw."""

    def fill_white(self, g: Game) -> None:
        for sid, sec in g.board.sections.items():
            for t, occ in zip(sec.spaces, g.placed[sid]):
                if t == "white" and occ is None:
                    place(g, "EPRG", sid, "white") if "EPRG" not in g.network.companies_on(sid) else place(g, "WW", sid, "white")

    def test_redraw_needs_the_option(self):
        g = kcc_game()
        self.fill_white(g)
        e = refused(g, Invest(("MS",), "plain", redraw="white"))
        assert reason(e) == "redrawing a dead track card is the option dead_track_redraw, not used in this game"

    def test_redraw_only_when_every_space_is_full(self):
        g = kcc_game(dead_track_redraw=True)
        assert g.network.free_spaces("white") == 4
        e = refused(g, Invest(("MS",), "plain", redraw="white"))
        assert reason(e) == ("4 white spaces are still free: a card can be redrawn only when every "
                            "space of its track type is full")
        assert reason(refused(g, Invest(("MS",), "plain", redraw=JOKER))) == (
            "a joker is never dead: it matches any track type")

    def test_redraw_shows_removes_and_replaces(self):
        g = kcc_game(dead_track_redraw=True)
        self.fill_white(g)
        assert g.network.full_track_types() == ["white"]
        assert g.dead_cards("Ann") == ["white"]
        top = g.track_deck[0]
        legal = g.legal_actions("Ann")
        assert Invest(("MS",), "plain", "white") in legal
        assert Invest(("MS",), "white", "white") not in legal  # only one white card
        assert reason(refused(g, Invest(("MS",), "white", redraw="white"))) == (
            "your only white track card is the one you redraw; discard another")
        assert reason(refused(g, Build("KCC", "DEN-KCY", "white", take=STACK, redraw="white"))).startswith(
            "your only white track card is the one you redraw")
        events = english(g.push("Ann", Invest(("MS",), "plain", redraw="white")))
        assert g.track_removed == ["white"]
        assert g.track_hands["Ann"] == sorted(["black", "joker", top])
        assert "Ann shows a dead white track card" in events[0]
        check_counts = Counter(g.track_deck) + Counter(g.track_discards) + Counter(g.track_removed)
        for p in g.players:
            check_counts.update(g.track_hands[p])
        assert sum(check_counts.values()) == 40

    def test_legal_actions_with_redraw(self):
        g = kcc_game(dead_track_redraw=True)
        self.fill_white(g)
        legal = g.legal_actions("Ann")
        with_redraw = [a for a in legal if a.redraw == "white"]
        without = [a for a in legal if a.redraw is None]
        assert len(with_redraw) + len(without) == len(legal) == g.action_count("Ann")
        # the hand without the white card builds the same; the white discard is gone
        assert {(a.company, a.section, a.card) for a in with_redraw if isinstance(a, Build)} == \
            {(a.company, a.section, a.card) for a in without if isinstance(a, Build)}
        assert {a.discard for a in with_redraw if isinstance(a, Invest)} == {"black", "joker", "plain"}
        plan = legal_plan(g, "Ann")
        assert {action_at(g, "Ann", plan, i) for i in range(plan.total)} == set(legal)
        for a in legal:
            assert g.resolve("Ann", a) == a

    def test_redraw_then_build(self):
        g = kcc_game(dead_track_redraw=True)
        self.fill_white(g)
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK, redraw="white"))
        assert g.track_removed == ["white"] and g.placed["DEN-KCY"][0] == "KCC"

    def test_redraw_then_pass(self):
        g = kcc_game(dead_track_redraw=True)
        self.fill_white(g)
        hand(g, track=["white", "white", "black-white", "black-white"], shares=[])
        for c in COMPANIES:
            set_box(g, c, 0)
        legal = g.legal_actions("Ann")
        assert Pass("white", "white") in legal and Pass("black-white", "white") in legal
        g.push("Ann", Pass("white", "white"))
        assert g.track_removed == ["white"]

    def test_action_text(self):
        assert str(Invest(("KCC",), "plain", "white")) == "redraw white; invest KCC; discard plain"
        assert str(Build("KCC", "DEN-KCY", "plain", None, Take("stack"), None, "white")) == (
            "redraw white; build KCC DEN-KCY plain; take stack")
        assert str(Pass("plain", "white")) == "redraw white; pass; discard plain"


# ====================================================================== stalled game
class TestStalledGame:
    """PBEM decision: nobody can ever build or invest: remaining dividends at once."""

    def test_stalled_game_pays_remaining_dividends(self):
        g = dividend_game()
        g.invested["Ann"] = {UP: 1}
        for p in g.players:
            g.share_hands[p] = []
        for c in COMPANIES:
            if c != "KCC":
                set_box(g, c, 0)
        set_box(g, "KCC", 1)
        g.push("Ann", Build("KCC", "DEN-KCY", "plain", take=STACK, swap=None))
        # Ann drew a share: not stalled yet
        assert g.phase == "play"
        g.current = 0
        hand(g, track=["plain"] * 4)
        g.push("Ann", Invest((g.share_hands["Ann"][0],), "plain"))
        assert g.phase == "over"
        assert [p["dividend"] for p in g.payouts] == [1, 2, 3, 4]
        assert any("remaining dividends are paid now" in e for e in english(g.events))
        assert not any("Double dividend" in e for e in english(g.events))


# ====================================================================== views
class TestViews:
    """rules: What each player may know."""

    def test_view_has_only_own_secrets(self):
        g = kcc_game()
        v = g.view("Bob")
        assert v["you"]["name"] == "Bob"
        assert v["you"]["track_cards"] == g.track_hands["Bob"]
        text = str(g.public_view())
        assert "track_hands" not in text and "share_hands" not in text
        assert "stack" not in g.public_view() and g.public_view()["stack_size"] == len(g.stack)

    def test_hidden_money(self):
        g = kcc_game(hidden_money=True)
        g.money["Bob"] = 7
        assert all(p["money"] is None for p in g.public_view()["players"])
        assert g.view("Bob")["you"]["money"] == 7

    def test_unknown_option_ruleset_players(self):
        with pytest.raises(ValueError):
            new_game(nonsense=True)
        with pytest.raises(ValueError):
            new_game(ruleset="third-edition")
        with pytest.raises(ValueError):
            new_game(players=["a"])
        with pytest.raises(ValueError):
            new_game(players=list("abcdefg"))
        with pytest.raises(ValueError):
            new_game(players=["a", "a"])
        assert set(OPTIONS) == {"spread_dividends", "up_only_by_swap", "hidden_money", "dead_track_redraw",
                                "hints"}


def test_up_payout_table_and_errors():
    assert up_payout({"A": 1}, 1) == {"A": 0}
    with pytest.raises(ValueError):
        up_payout({"A": 1}, 5)


def test_board_adjacency_sorted_and_cached():
    board = mini_board()
    assert [s.id for s in board.sections_at("KCY")] == ["ATL-KCY", "DEN-KCY", "ELP-KCY", "KCY-OMA"]
    assert board.adjacency() is board.adjacency()
    for city in board.cities:
        assert board.sections_at(city) == sorted(
            (s for s in board.sections.values() if city in s.cities), key=lambda s: s.id)


def test_random_action_is_legal_and_reproducible():
    g = started(players=("Ann", "Bob", "Cy", "Di"), board=None)
    a = g.random_action("Ann", random.Random(5))
    assert a == g.random_action("Ann", random.Random(5))
    assert a in g.legal_actions("Ann")
    assert g.action_count("Ann") == len(g.legal_actions("Ann"))
    assert g.random_action("Bob", random.Random(5)) is None and g.action_count("Bob") == 0


def test_hidden_money_hides_dividend_amounts_until_the_last():
    """Option hidden_money: the public log announces dividends without amounts (else
    anyone could add up the others' money); the final one, at the end, shows them."""
    import random as _random

    from moderator.rules.board import Board as _Board

    game = Game.new(_Board.default(), ["A", "B", "C"], 11, options={"hidden_money": True})
    rng = _random.Random(11)
    while game.phase != "over":
        p = game.waiting_for()[0]
        game.push(p, game.random_action(p, rng))
    lines = [l for l in english(game.events) if l.startswith("Dividend ") and " paid" in l]
    assert lines[:3] == [f"Dividend {n} paid (amounts hidden: option hidden_money)." for n in (1, 2, 3)]
    assert lines[3].startswith("Dividend 4 paid: A +")
    assert game.public_view()["players"][0]["money"] == game.money["A"]  # shown at the end


def test_refused_build_lists_the_named_company_first():
    """A refused BUILD lists the legal builds of the company the order named first,
    so the player sees the fix for what they meant."""
    from moderator.rules.board import Board as _Board
    from moderator.rules.engine import IllegalAction as _Illegal

    game = Game.new(_Board.default(), ["A", "B", "C"], 3)
    for p in game.waiting_for():
        game.push(p, game.legal_actions(p)[0])
    mover = game.to_move
    held = set(game.track_hands[mover])
    # the last company (in table order) that has a legal build with the cards held
    company = [c for c in COMPANIES if any(t in held or "joker" in held for _, t in game.placements(c))][-1]
    far = next(s for s in sorted(game.board.sections) if s not in {sid for sid, _ in game.placements(company)}
               and company not in game.network.companies_on(s))
    assert company != next(iter(COMPANIES))  # else table order alone would pass the test
    with pytest.raises(_Illegal) as err:
        game.resolve(mover, Build(company, far, None, None, Take("stack")))
    assert (err.value.first, err.value.legal) == (company, [])
    assert err.value.summary == game.legal_summary(mover)
    from moderator.render.legal import legal_lines

    lines = legal_lines(game, mover, summary=err.value.summary, first=err.value.first)
    assert lines[0].startswith(f"build {company} ") and lines[0].endswith("; take stack   (a build and its draw on ONE line)")
    assert lines[1].startswith(f"{company}: ")


# ====================================================================== named refusals
def _raised_codes() -> set[str]:
    """Every code raised in the rules package: the first argument of each
    ``IllegalAction("...")`` in the source of ``moderator/rules/*.py``."""
    import re
    from pathlib import Path

    import moderator.rules as rules

    codes: set[str] = set()
    for path in Path(rules.__file__).parent.glob("*.py"):
        codes |= set(re.findall(r'IllegalAction\(\s*"([^"]*)"', path.read_text()))
    return codes


def test_every_refusal_code_has_a_macro_and_every_macro_is_raised():
    """templates/words/illegal.txt words exactly the codes the engine raises, and
    each code is a snake_case identifier."""
    from moderator.render.words import names

    raised = _raised_codes()
    assert len(raised) > 30
    worded = names("illegal")
    assert raised - worded == set(), "codes without a macro"
    assert worded - raised == set(), "macros never raised"
    for code in raised:
        assert re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", code), code


def test_refusal_carries_code_and_values():
    g = kcc_game()
    e = refused(g, Build("KCC", "DEN-KCY", "plain", take=STACK), player="Bob")
    assert e.code == "not_your_turn" and e.values == {"to_move": "Ann"}
    assert not hasattr(e, "reason")


# ====================================================================== legal summary
def test_legal_summary_groups_builds_by_company_and_section():
    """One structured summary: builds company -> section -> (space type, card), the
    draws and swaps after a build, the shares to invest; no pass while one can build."""
    g = kcc_game()
    hand(g, track=["joker", "plain", "plain", "white"], shares=["MS"])
    s = g.legal_summary("Ann")
    assert s.on_move and s.phase == "play" and s.starts == () and s.redraw == ()
    assert s.builds["KCC"]["DEN-KCY"] == (("black", JOKER), ("plain", "plain"))
    assert list(s.builds) == [c for c in COMPANIES if c in s.builds]
    assert s.takes == tuple(g.share_options("Ann"))
    assert s.swaps[Take("stack")] == ("MS",)
    assert s.invest == ("MS",) and s.passes == ()
    assert str(s.build_actions("KCC")[0]).startswith("build KCC ")
    assert not g.legal_summary("Bob").on_move and g.legal_summary("Bob").builds == {}


def test_legal_summary_passes_when_nothing_else_is_possible():
    g = kcc_game()
    hand(g, track=["white", "white"], shares=[])
    for c in COMPANIES:
        set_box(g, c, 0)
    s = g.legal_summary("Ann")
    assert s.builds == {} and s.takes == () and s.invest == ()
    assert s.passes == (Pass("white"),)
    assert list(g.legal_actions("Ann")) == [Pass("white")]


def test_legal_actions_view():
    """A live view: iterate, ``in`` (by resolve, without listing), count, random."""
    g = kcc_game()
    view = g.legal_actions("Ann")
    listed = list(view)
    assert len(view) == view.count() == len(listed) and view
    assert listed[0] in view and view[0] == listed[0] and view[-1] == listed[-1]
    assert Build("KCC", "ATL-CHI", "plain", take=STACK) not in view
    assert view.random(random.Random(1)) in listed
    assert not g.legal_actions("Bob") and g.legal_actions("Bob") == []


# ====================================================================== fields
def test_fields_are_declared_once():
    """to_dict and copy follow the field declarations: saved fields in declaration
    order; no "own" or "hidden" field in the public view; a copy is independent."""
    from dataclasses import fields

    g = started()
    saved = [f.name for f in fields(Game) if f.metadata.get("save")]
    assert list(g.to_dict()) == saved
    assert saved[:3] == ["phase", "current", "turn"] and saved[-1] == "payouts"
    secret = set(Game.fields_visible("own")) | set(Game.fields_visible("hidden"))
    assert secret == {"track_hands", "share_hands", "initial_choice", "returned", "track_deck", "stack", "history"}
    assert not secret & set(g.public_view())
    c = g.copy()
    assert c == g and c.board is g.board
    c.track_hands["Ann"].append("joker")
    c.placed["DEN-KCY"][0] = "KCC"
    assert c != g and g.placed["DEN-KCY"][0] is None


def _runtime_imports(module: str) -> set[str]:
    """The ``moderator.rules`` modules that ``module`` imports when it runs (the
    imports under ``if TYPE_CHECKING:`` left out)."""
    import ast
    from pathlib import Path

    tree = ast.parse((Path(__file__).parent.parent / "moderator" / "rules" / f"{module}.py").read_text())
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and getattr(node.test, "id", None) == "TYPE_CHECKING" for n in ast.walk(node)}
    return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1
            and id(n) not in typing_only}


def test_the_rules_modules_import_one_way():
    """engine -> legal -> errors, engine -> errors: no cycle (issue 25)."""
    assert {"legal", "errors"} <= _runtime_imports("engine")
    assert "errors" in _runtime_imports("legal") and "engine" not in _runtime_imports("legal")
    assert not {"engine", "legal"} & _runtime_imports("errors")
    from moderator.rules import engine, errors, legal
    assert engine.IllegalAction is errors.IllegalAction and legal.LegalSummary is errors.LegalSummary
