"""Named refusals of the order parser (moderator/orders/parser.py), worded by
templates/words/orders.txt.

Every ``OrderError`` carries a ``code`` (snake_case) and ``values``; its ``reason``
is the macro of that code rendered with those values.  The sentences are exactly
the ones the parser wrote before its refusals were named (tests/orders_golden.yaml,
read by tests/test_orders.py, holds many more of them).
"""
from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import pytest

import moderator.orders as orders
from moderator.orders.parser import NoOrderFound, OrderError, parse_turn
from moderator.rules.board import Board

_CODE_CALLS = {"OrderError", "NoOrderFound", "_why"}
"""The calls whose first argument is a refusal code."""


def _literal_codes(node: ast.expr) -> set[str]:
    """The code(s) a first argument names: a string, or either side of ``A if c else B``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _literal_codes(node.body) | _literal_codes(node.orelse)
    raise AssertionError(f"a refusal code must be a string literal: {ast.unparse(node)}")


def _raised_codes() -> set[str]:
    """Every code raised in ``moderator/orders/*.py``: the first argument of each
    ``OrderError(...)``, ``NoOrderFound(...)`` and ``_why(...)`` (a refusal made
    before its line is known)."""
    codes: set[str] = set()
    for path in Path(orders.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _walk_outside(tree, _PASSING_ON):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in _CODE_CALLS):
                assert node.args, f"{path.name}:{node.lineno}: {node.func.id}() without a code"
                codes |= _literal_codes(node.args[0])
    return codes


_PASSING_ON = {"_refuse", "_rebuild"}
"""Functions that pass on a code named elsewhere (a ``_why``, a pickled error)."""


def _walk_outside(node: ast.AST, skip: set[str]):
    """``ast.walk`` without the bodies of the functions named in ``skip``."""
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef) and child.name in skip:
            continue
        yield from _walk_outside(child, skip)


@pytest.fixture(scope="module")
def board() -> Board:
    return Board.default()


def _refusal(lines: list[str], board: Board) -> OrderError:
    with pytest.raises(OrderError) as info:
        parse_turn(lines, board)
    return info.value


# ---------------------------------------------------------------- codes and macros

def test_every_order_code_has_a_macro_and_every_macro_is_raised():
    """templates/words/orders.txt words exactly the codes the parser raises, and
    each code is a snake_case identifier."""
    from moderator.render.words import names

    raised = _raised_codes()
    assert len(raised) > 50
    worded = names("orders")
    assert raised - worded == set(), "codes without a macro"
    assert worded - raised == set(), "macros never raised"
    for code in raised:
        assert re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", code), code


def test_no_sentence_left_in_the_parser():
    """The parser names its refusals; their words are in the template only."""
    source = (Path(orders.__file__).parent / "parser.py").read_text(encoding="utf-8")
    assert not re.search(r"(OrderError|NoOrderFound)\(\s*f?\"[^\"]*\s", source)
    assert "did you mean" not in source
    assert not re.search(r"\.reason\.|\.reason\b\s*(==|in\b)", source)  # codes are tested, not sentences


# ---------------------------------------------------------------- one case per code

CASES = [
    # code, lines, the exact reason
    ("ambiguous_city", ["build KCC san-DEN"],
     "'san' could be SAT (San Antonio) or SFO (San Francisco); write the city id or its full name"),
    ("as_without_joker", ["build KCC DEN-KCY as black"],
     "say which card you play: 'black' for a black card, or 'joker as black' for a joker"),
    ("build_discards_nothing", ["build KCC DEN-KCY white", "discard white"],
     "a build plays its track card and discards nothing; 'discard' belongs to invest or pass"),
    ("build_needs_company", ["build KCX"],
     "build needs a company first (did you mean KCC?): e.g. 'build KCC DEN-KCY white'"),
    ("build_needs_company", ["bld 7"],
     "build needs a company first: e.g. 'build KCC DEN-KCY white'"),
    ("build_needs_section", ["put up"],
     "build needs a section as CITY-CITY: e.g. 'build KCC DEN-KCY white'"),
    ("build_not_a_card", ["build KCC DEN-KCY foo"],
     "'foo' is not a track card; play one of plain, black-white, black, white or joker"),
    ("build_not_a_card", ["build KCC DEN-KCY don't"],
     "\"don't\" is not a track card; play one of plain, black-white, black, white or joker"),
    ("build_or", ["build KCC DEN-KCY white", "pass"], "a turn is either build or pass, not both"),
    ("card_alone", ["b"],
     "'b' alone is not an order: write 'discard black' after an invest, or 'pass; discard black'"),
    ("card_not_share", ["inv j"],
     "'j' is a track card, not a share; write e.g. 'invest 2 KCC' or 'invest KCC UP'"),
    ("command_alone", ["help draw"], "write the command 'help' on a line by itself"),
    ("company_alone", ["UP"],
     "'UP' alone is not an order: write 'start UP' for the initial investment, 'invest UP', "
     "or 'take UP' after a build"),
    ("company_first", ["build KCX DEN-KCY white"],
     "'KCX' is not a company (did you mean KCC?); write the company first, "
     "e.g. 'build KCC DEN-KCY white'"),
    ("company_not_card", ["build KCC DEN-KCY KCC"],
     "'KCC' is a company; play one of plain, black-white, black, white or joker"),
    ("count_of_what", ["inv 3"], "3 of what? write e.g. 'invest 2 KCC' or 'invest KCC UP'"),
    ("discard_not_a_card", ["discard foo"],
     "'foo' is not a track card; say which track card to discard: plain, black-white, black, "
     "white or joker"),
    ("discard_one_card", ["discard p blk"],
     "discard one track card: plain, black-white, black, white or joker"),
    ("follows_build", ["take 3"],
     "take follows a build: e.g. 'build KCC DEN-KCY white; take stack'"),
    ("invest_or_pass", ["invest KCC", "pass"], "a turn is either invest or pass, not both"),
    ("joker_never_dead", ["redraw wild"],
     "a joker is never dead: redraw plain, black-white, black or white"),
    ("line_too_long", ["x" * 500],
     "this line is too long (500 characters); write one order per line, "
     "e.g. 'build KCC DEN-KCY white'"),
    ("no_order", ["Hi all,", "Thanks, Bob"],
     "no order found: write e.g. 'build KCC DEN-KCY white; take stack' or "
     "'invest 2 KCC; discard plain'"),
    ("no_section_between", ["build KCC DEN-NYC"],
     "there is no section between DEN (Denver) and NYC (New York); sections from DEN go to "
     "ABQ, CHY, KCY, OMA, SLC"),
    ("no_such_place", ["take 7"], "the face-up display has places 1-4, not 7"),
    ("not_a_company", ["invest KCX"],
     "'KCX' is not a company (did you mean KCC?); use an abbreviation like KCC or UP, or a "
     "full name like Kansas City Central"),
    ("not_a_company", ["invest don't"],
     "\"don't\" is not a company; use an abbreviation like KCC or UP, or a full name like "
     "Kansas City Central"),
    ("not_a_section", ["put up nine"],
     "'nine' is not a section; write it as CITY-CITY, e.g. DEN-KCY"),
    ("not_a_share_count", ["start 99"],
     "99 is not a number of shares; the initial investment is one share: e.g. 'start KCC'"),
    ("not_a_track_type", ["build KCC DEN-KCY joker as gold"],
     "'gold' is not a track type; a joker plays as one of plain, black-white, black, white"),
    ("order_too_long", ["invest" + " KCC" * 40],
     "this order is too long (41 words); write one order per line, e.g. 'build KCC DEN-KCY white'"),
    ("one_card", ["build KCC DEN-KCY joker joker"],
     "a build plays one track card: e.g. 'black', 'joker' or 'joker as white'"),
    ("one_city", ["build KCC Kansas"],
     "a section joins two cities: write it as CITY-CITY, e.g. ABQ-KCY"),
    ("one_initial_share", ["start KCC UP"], "the initial investment is one share: e.g. 'start KCC'"),
    ("one_train", ["build 2 KCC DEN-KCY"], "a build places one train: e.g. 'build KCC DEN-KCY white'"),
    ("pass_one_card", ["pass foo"],
     "write 'pass; discard CARD' with one of plain, black-white, black, white or joker"),
    ("pile_is_ambiguous", ["take pile"],
     "'pile' could be the share stack or the UP pile: write 'take stack' or 'take UP'"),
    ("place_of_what", ["take second"],
     "'second' of what? write 'take display 2' for a face-up place, or 'take stack' for the "
     "top card"),
    ("redraw_alone", ["redraw white"], "redraw goes with a build, invest or pass in the same mail"),
    ("redraw_with_start", ["start KCC", "redraw white"],
     "redraw belongs to a turn, not to the initial investment"),
    ("repeated_order", ["pass", "pass"], "a turn has only one pass order"),
    ("same_city", ["build KCC DEN-DEN"],
     "a section joins two different cities, not DEN (Denver) and itself"),
    ("stack_alone", ["stack"], "'stack' alone is not an order: write 'take stack' after a build"),
    ("stack_is_unseen", ["take KCC stack"],
     "the top card of the stack is unseen: write 'take stack', or 'take KCC' for a face-up "
     "KCC share"),
    ("start_alone", ["start KCC", "take stack"],
     "the initial investment mail carries only 'start SHARE', no take order"),
    ("swap_one_share", ["swap MRR KCC"],
     "a swap returns exactly one share; write e.g. 'swap MRR' to return an MRR share and take "
     "a UP share"),
    ("swap_takes_up", ["swap MRR for KCC"],
     "a swap always takes a UP share; write e.g. 'swap MRR' to return an MRR share and take a "
     "UP share"),
    ("take_card", ["take white"],
     "'white' is a track card; say which share to take: 'take stack' (the top card), 'take UP', "
     "a face-up company ('take KCC') or a face-up place ('take display 2')"),
    ("take_not_a_company", ["take KCX"],
     "'KCX' is not a company (did you mean KCC?); say which share to take: 'take stack' (the "
     "top card), 'take UP', a face-up company ('take KCC') or a face-up place ('take display 2')"),
    ("take_one_share", ["take UP 2"],
     "a build takes one share; say which share to take: 'take stack' (the top card), 'take UP', "
     "a face-up company ('take KCC') or a face-up place ('take display 2')"),
    ("too_many_cities", ["build KCC DEN-KCY-CHI"],
     "'DEN-KCY-CHI' is not a section: a section joins two cities, e.g. DEN-KCY"),
    ("two_numbers", ["invest 2 3 KCC"],
     "two numbers in a row (2 3); write e.g. 'invest 2 KCC' or 'invest KCC UP'"),
    ("unclear_multiplier", ["swap x2"],
     "I cannot tell which share 'x2' counts; write e.g. 'swap MRR' to return an MRR share and "
     "take a UP share"),
    ("unknown_city", ["build KCC Denvr-KCY"],
     "'Denvr' is not a city on the board (did you mean DEN (Denver)?); write city ids like DEN "
     "or names like Denver"),
    ("unknown_order", ["biuld KCC DEN-KCY"],
     "I do not know the order 'biuld' (did you mean 'build'?); orders are build, take, swap, "
     "invest, discard, pass and start (commands: help, status, history, rules)"),
    ("unknown_order", ["florp 3"],
     "I do not know the order 'florp'; orders are build, take, swap, invest, discard, pass "
     "and start (commands: help, status, history, rules)"),
    ("up_builds_no_track", ["build UP DEN-KCY white"],
     "Union Pacific (UP) has no trains and builds no track; build for one of WW, MRR, KCC, ESL, "
     "UMR, SFRB, DM, MS, BNL, EPRG"),
    ("verb_first", ["KCC DEN-KCY white"],
     "an order starts with a verb: did you mean 'build KCC DEN-KCY white'?"),
    ("which_build", ["build"], "say which company builds where, e.g. 'build KCC DEN-KCY white'"),
    ("which_card", ["build KCC DEN-KCY as"],
     "say which track card to play, e.g. 'black', 'joker' or 'joker as white'"),
    ("which_company", ["build DEN-KCY black"],
     "say which company builds on DEN-KCY: e.g. 'build KCC DEN-KCY black'"),
    ("which_discard", ["discard"],
     "say which track card to discard: plain, black-white, black, white or joker"),
    ("which_face_up", ["take display"], "say which face-up share: 'take KCC' or 'take display 2'"),
    ("which_invest", ["invest"], "say which shares to invest: e.g. 'invest 2 KCC' or 'invest KCC UP'"),
    ("which_start", ["start"], "say which share is your initial investment: e.g. 'start KCC'"),
    ("which_swap", ["swap"],
     "say which share to return; write e.g. 'swap MRR' to return an MRR share and take a UP share"),
    ("which_take", ["take"],
     "say which share to take: 'take stack' (the top card), 'take UP', a face-up company "
     "('take KCC') or a face-up place ('take display 2')"),
]


@pytest.mark.parametrize("code, lines, reason", CASES, ids=lambda x: x if isinstance(x, str) else None)
def test_refusal_code_and_sentence(code, lines, reason, board):
    exc = _refusal(lines, board)
    assert exc.code == code
    assert exc.reason == reason
    assert str(exc) == reason + (f" (in: {exc.line!r})" if exc.line else "")


def test_cases_cover_every_code_the_default_board_can_raise():
    """Two codes need words the default board cannot give (a section or a build
    read two ways): test_words_of_codes_no_case_reaches covers them."""
    assert {c for c, _, _ in CASES} == _raised_codes() - {"ambiguous_section", "ambiguous_build"}


def test_words_of_codes_no_case_reaches():
    from moderator.render.words import word

    assert word("orders", "ambiguous_section", text="Salt Lake Denver") == (
        "'Salt Lake Denver' can be read as more than one section; write it as CITY-CITY, e.g. DEN-KCY"
    )
    assert word("orders", "ambiguous_build",
                readings=["build KCC DEN-KCY white", "build MRR DEN-KCY white"]) == (
        "this build can be read in more than one way (build KCC DEN-KCY white or build MRR "
        "DEN-KCY white); write the company abbreviation and the section as CITY-CITY"
    )
    assert word("orders", "one_city") == (
        "a section joins two cities: write it as CITY-CITY, e.g. DEN-KCY"
    )


# ---------------------------------------------------------------- values are data

def test_values_are_the_words_and_suggestions(board):
    e = _refusal(["invest KCX"], board)
    assert e.values == {"word": "KCX", "suggestion": "KCC"}
    e = _refusal(["build KCC Denvr-KCY"], board)
    assert e.values == {"text": "Denvr", "suggestion": {"id": "DEN", "name": "Denver"}}
    e = _refusal(["build KCC san-DEN"], board)
    assert e.values == {"text": "san", "cities": [{"id": "SAT", "name": "San Antonio"},
                                                  {"id": "SFO", "name": "San Francisco"}]}
    e = _refusal(["build KCC DEN-NYC"], board)
    assert e.values["near"] == ["ABQ", "CHY", "KCY", "OMA", "SLC"]
    e = _refusal(["biuld KCC DEN-KCY"], board)
    assert e.values == {"word": "biuld", "suggestion": "build"}
    e = _refusal(["swap x2"], board)
    assert e.values == {"word": "x2", "order": "swap"}
    e = _refusal(["build UP DEN-KCY white"], board)
    assert "KCC" in e.values["companies"] and "UP" not in e.values["companies"]


def test_swap_keeps_its_most_telling_refusal(board):
    """A swap read several ways refuses with the reason about the swap itself."""
    assert _refusal(["swap MRR for KCC"], board).code == "swap_takes_up"
    assert _refusal(["swap El Paso and Rio Grande KCC"], board).code == "swap_one_share"


# ---------------------------------------------------------------- the exception

def test_order_error_interface():
    e = OrderError("no_such_place", "take 7", place=7)
    assert (e.code, e.line, e.values) == ("no_such_place", "take 7", {"place": 7})
    assert e.reason == "the face-up display has places 1-4, not 7"
    assert str(e) == "the face-up display has places 1-4, not 7 (in: 'take 7')"
    assert str(OrderError("which_take")) == OrderError("which_take").reason
    assert isinstance(e, ValueError)


def test_no_order_found_is_named():
    e = _refusal(["Hello,", "Cheers, Cy"], Board.default())
    assert isinstance(e, NoOrderFound) and e.code == "no_order" and e.values == {}
    assert e.line == "Hello, / Cheers, Cy"


def test_refusal_is_worded_only_when_asked():
    """Making and raising an OrderError renders nothing: a code without a macro
    fails on ``reason`` (KeyError), and ``str`` still names it for logs."""
    e = OrderError("no_such_code", "x", word="y")
    with pytest.raises(KeyError):
        e.reason
    assert str(e) == "no_such_code {'word': 'y'} (in: 'x')"


def test_order_error_pickles():
    e = pickle.loads(pickle.dumps(NoOrderFound("no_order", "hi")))
    assert type(e) is NoOrderFound and (e.code, e.line, e.values) == ("no_order", "hi", {})
    e = pickle.loads(pickle.dumps(OrderError("no_such_place", "take 7", place=7)))
    assert e.reason == "the face-up display has places 1-4, not 7"
